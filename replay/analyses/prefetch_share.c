/*
 * prefetch_share.c — line changes per (stream, site) and how many of them
 * follow a constant stride within the prefetchers' reach (prefetch_share.h).
 */
#include <stdlib.h>
#include <string.h>

#include "prefetch_share.h"

/* A later part's walk waits for the state the part before left (wait 1:
 * every access so far repeated `first`; wait 2: `jump` was the first other
 * address, and from there on the walk is the part's own). */
struct walk {
    uint64_t key; /* (stream << 32 | site) + 1; 0: free */
    uint64_t last;
    int64_t step; /* the step that led to last; 0 before the second access */
    uint64_t first, jump;
    uint32_t wait;
};

struct replay_prefetch {
    uint32_t line_shift;
    double max_stride;
    int later; /* a part after the first (replay_prefetch_set_later) */
    struct walk *slot;
    uint64_t cap, n;
    uint64_t changes, prefetchable;
};

/* What a walk of a later part brings (replay_prefetch_pack). */
struct walk_packed {
    uint64_t key, first, jump, last;
    int64_t step;
    uint64_t wait;
};

struct replay_prefetch *replay_prefetch_create(uint32_t line, double max_stride)
{
    struct replay_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    while ((1u << p->line_shift) < line)
        p->line_shift++;
    p->max_stride = max_stride;
    p->cap = 1024;
    if (!(p->slot = calloc(p->cap, sizeof *p->slot))) {
        free(p);
        return NULL;
    }
    return p;
}

void replay_prefetch_destroy(struct replay_prefetch *p)
{
    if (p)
        free(p->slot);
    free(p);
}

static uint64_t home(uint64_t key, uint64_t cap)
{
    return (key * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

static int grow(struct replay_prefetch *p)
{
    uint64_t cap = 2 * p->cap;
    struct walk *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (uint64_t i = 0; i < p->cap; i++) {
        if (!p->slot[i].key)
            continue;
        uint64_t j = home(p->slot[i].key, cap);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = p->slot[i];
    }
    free(p->slot);
    p->slot = s;
    p->cap = cap;
    return 0;
}

/* The walk of key, inserted (key 0) if new; NULL without memory. */
static struct walk *walk_of(struct replay_prefetch *p, uint64_t key)
{
    if ((p->n + 1) * 2 > p->cap && grow(p) < 0)
        return NULL;
    uint64_t j = home(key, p->cap);
    while (p->slot[j].key && p->slot[j].key != key)
        j = (j + 1) & (p->cap - 1);
    return &p->slot[j];
}

/* One access of a walk whose state is known. */
static void known_access(struct replay_prefetch *p, struct walk *w, uint64_t key, uint64_t a)
{
    if (!w->key) { /* the site's first access in this stream: a change from nowhere */
        *w = (struct walk){.key = key, .last = a};
        p->n++;
        p->changes++;
        return;
    }
    int64_t step = (int64_t)(a - w->last);
    if (a >> p->line_shift != w->last >> p->line_shift) {
        p->changes++;
        double reach = step < 0 ? -(double)step : (double)step;
        p->prefetchable += step == w->step && reach <= p->max_stride;
    }
    if (step) /* a repeat (the store after its load) does not move the walk */
        w->step = step;
    w->last = a;
}

int replay_prefetch_batch(struct replay_prefetch *p, const struct pes_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (!b->size[i])
            continue;
        uint64_t key = ((uint64_t)b->stream[i] << 32 | b->site[i]) + 1, a = b->addr[i];
        struct walk *w = walk_of(p, key);
        if (!w)
            return -1;
        if (p->later && !w->key) { /* its step from the part before is not known here */
            *w = (struct walk){.key = key, .last = a, .first = a, .wait = 1};
            p->n++;
        } else if (w->wait == 1) { /* only repeats so far: the first other address waits too */
            if (a != w->last) {
                w->wait = 2;
                w->jump = a;
                w->step = (int64_t)(a - w->last);
                w->last = a;
            }
        } else
            known_access(p, w, key, a);
    }
    return 0;
}

void replay_prefetch_set_later(struct replay_prefetch *p)
{
    p->later = 1;
}

size_t replay_prefetch_pack(const struct replay_prefetch *p, void *buf, size_t cap)
{
    size_t need = 2 * sizeof(uint64_t) + p->n * sizeof(struct walk_packed);
    if (!buf || cap < need)
        return need;
    unsigned char *o = buf;
    uint64_t head[2] = {p->changes, p->prefetchable};
    memcpy(o, head, sizeof head);
    o += sizeof head;
    for (uint64_t i = 0; i < p->cap; i++) {
        const struct walk *w = &p->slot[i];
        if (!w->key)
            continue;
        struct walk_packed wp = {w->key, w->first, w->jump, w->last, w->step, w->wait};
        memcpy(o, &wp, sizeof wp);
        o += sizeof wp;
    }
    return need;
}

int replay_prefetch_merge(struct replay_prefetch *p, const void *buf, size_t len)
{
    uint64_t head[2];
    if (p->later || len < sizeof head || (len - sizeof head) % sizeof(struct walk_packed))
        return -1;
    memcpy(head, buf, sizeof head);
    const unsigned char *in = (const unsigned char *)buf + sizeof head;
    size_t n = (len - sizeof head) / sizeof(struct walk_packed);
    for (size_t i = 0; i < n; i++) { /* all checked first: a bad part changes nothing */
        struct walk_packed wp;
        memcpy(&wp, in + i * sizeof wp, sizeof wp);
        if (!wp.key || wp.wait < 1 || wp.wait > 2)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct walk_packed wp;
        memcpy(&wp, in + i * sizeof wp, sizeof wp);
        /* the accesses that waited, against the state the earlier parts left;
         * the repeats between them change nothing */
        struct walk *w = walk_of(p, wp.key);
        if (!w)
            return -1;
        known_access(p, w, wp.key, wp.first);
        if (wp.wait == 2) {
            known_access(p, w, wp.key, wp.jump);
            w->last = wp.last;
            w->step = wp.step;
        }
    }
    p->changes += head[0];
    p->prefetchable += head[1];
    return 0;
}

double replay_prefetch_share(const struct replay_prefetch *p)
{
    return p->changes ? (double)p->prefetchable / (double)p->changes : 0.0;
}

void replay_prefetch_counts(const struct replay_prefetch *p, uint64_t *changes,
                            uint64_t *prefetchable)
{
    *changes = p->changes;
    *prefetchable = p->prefetchable;
}
