/*
 * prefetch_share.c — line changes per (stream, site) and how many of them
 * follow a constant stride within the prefetchers' reach (prefetch_share.h).
 */
#include <stdlib.h>

#include "prefetch_share.h"

struct walk {
    uint64_t key; /* (stream << 32 | site) + 1; 0: free */
    uint64_t last;
    int64_t step; /* the step that led to last; 0 before the second access */
};

struct replay_prefetch {
    uint32_t line_shift;
    double max_stride;
    struct walk *slot;
    uint64_t cap, n;
    uint64_t changes, prefetchable;
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

int replay_prefetch_batch(struct replay_prefetch *p, const struct pes_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (!b->size[i])
            continue;
        if ((p->n + 1) * 2 > p->cap && grow(p) < 0)
            return -1;
        uint64_t key = ((uint64_t)b->stream[i] << 32 | b->site[i]) + 1, a = b->addr[i];
        uint64_t j = home(key, p->cap);
        while (p->slot[j].key && p->slot[j].key != key)
            j = (j + 1) & (p->cap - 1);
        struct walk *w = &p->slot[j];
        if (!w->key) { /* the site's first access in this stream: a change from nowhere */
            *w = (struct walk){.key = key, .last = a};
            p->n++;
            p->changes++;
            continue;
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
