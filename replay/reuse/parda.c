/* parda.c — chunked parallel exact reuse distances; see parda.h.
 *
 * Why resolution is exact (the PARDA argument, in our terms). The distance of
 * an access to k at time i is the number of distinct keys touched strictly
 * between k's previous access t and i. It depends only on the LRU stack
 * (keys ordered by last access) just before i, as the depth of k in it.
 *
 * Let chunk p cover times [s, e) and let G be an engine whose stack equals the
 * true stack at time s (how it got there does not matter: an engine's answers
 * depend only on the order of its keys' latest pushes).
 *  - A reuse inside the chunk (t >= s): every key touched in (t, i) is inside
 *    the chunk, so the chunk's own engine gives the true distance.
 *  - The chunk's first access to k, the j-th distinct key k_j of the chunk:
 *    the keys touched in [s, i) are exactly k_1 .. k_{j-1} (each was first
 *    touched before i, and nothing else was touched). The true stack at i is
 *    the stack at s with k_1 .. k_{j-1} moved to the top in that order, which
 *    is what G holds after pushing the pending keys k_1 .. k_{j-1}. So the push
 *    of k_j into G returns its true distance (cold if G never saw it).
 *  - After all pending pushes, the chunk's keys sit on top of G in first-access
 *    order, above the untouched keys in their order at s. The true stack at e
 *    has the chunk's keys on top in last-access order, the untouched keys below
 *    in the same order. Pushing the chunk's keys oldest-last-access first moves
 *    them to the top in exactly that order and leaves the rest alone, so G then
 *    equals the true stack at e: the invariant holds for chunk p + 1.
 */
#include "parda.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_account.h"

#define BLOCK 2048 /* keys per engine call (distances on the stack) */

/* ------------------------------------------------------------ counts */

int pes_parda_counts_init(struct pes_parda_counts *c, uint64_t exact_limit, struct pes_error *err)
{
    memset(c, 0, sizeof *c);
    return pes_rd_hist_init(&c->hist, exact_limit, err);
}

void pes_parda_counts_free(struct pes_parda_counts *c)
{
    pes_rd_hist_free(&c->hist);
    free(c->tag);
    c->tag = NULL;
    c->n_tags = c->cap_tags = 0;
}

static int tags_reserve(struct pes_parda_counts *c, uint32_t n)
{
    if (n <= c->n_tags)
        return 0;
    if (n > c->cap_tags) {
        uint32_t cap = c->cap_tags ? c->cap_tags : 64;
        while (cap < n)
            cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
        struct pes_parda_tag_count *t = realloc(c->tag, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        c->tag = t;
        c->cap_tags = cap;
    }
    memset(c->tag + c->n_tags, 0, (size_t)(n - c->n_tags) * sizeof *c->tag);
    c->n_tags = n;
    return 0;
}

int pes_parda_counts_merge(struct pes_parda_counts *dst, const struct pes_parda_counts *src)
{
    if (dst->hist.exact_limit != src->hist.exact_limit || tags_reserve(dst, src->n_tags) < 0 ||
        pes_rd_hist_merge(&dst->hist, &src->hist) < 0)
        return -1;
    for (uint32_t t = 0; t < src->n_tags; t++) {
        dst->tag[t].accesses += src->tag[t].accesses;
        dst->tag[t].cold += src->tag[t].cold;
        dst->tag[t].sum += src->tag[t].sum;
    }
    return 0;
}

static int nomem(struct pes_error *err, const char *what)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "parda: out of memory (%s)", what);
}

/* Adds n distances to c; with tags, per tag too (accesses only if
 * count_accesses: a resolved pending access was counted by its local pass). */
static int count(struct pes_parda_counts *c, const uint64_t *dist, const uint32_t *tag, size_t n,
                 int count_accesses, struct pes_error *err)
{
    struct pes_rd_hist *h = &c->hist;
    uint64_t *exact = h->exact, have = h->exact_n, lim = h->exact_limit, cold = 0;
    double sum = h->sum;
    h->total += n;
    for (size_t j = 0; j < n; j++) {
        uint64_t d = dist[j];
        struct pes_parda_tag_count *tc = NULL;
        if (tag && tag[j] != PES_PARDA_NO_TAG) {
            if (tag[j] >= c->n_tags && tags_reserve(c, tag[j] + 1) < 0)
                goto fail;
            tc = &c->tag[tag[j]];
            tc->accesses += (uint64_t)count_accesses;
        }
        if (d == PES_REUSE_COLD) {
            cold++;
            if (tc)
                tc->cold++;
            continue;
        }
        sum += (double)d;
        if (tc)
            tc->sum += d;
        if (d < have) {
            exact[d]++;
        } else if (d < lim) {
            if (pes_rd_hist_reserve(h, d) < 0)
                goto fail;
            exact = h->exact;
            have = h->exact_n;
            exact[d]++;
        } else {
            h->log2[63 - __builtin_clzll(d)]++;
        }
    }
    h->cold += cold;
    h->sum = sum;
    return 0;
fail:
    h->cold += cold;
    h->sum = sum;
    return nomem(err, "histogram");
}

static int engine_error(const struct pes_reuse *g, struct pes_error *err)
{
    if (err)
        *err = *pes_reuse_error(g);
    return -1;
}

int pes_parda_push_direct(struct pes_reuse *g, const uint64_t *key, const uint32_t *tag, size_t n,
                          struct pes_parda_counts *out, struct pes_error *err)
{
    uint64_t dist[BLOCK];
    for (size_t i = 0; i < n; i += BLOCK) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        if (pes_reuse_push_keys(g, key + i, m, dist) < 0)
            return engine_error(g, err);
        if (count(out, dist, tag ? tag + i : NULL, m, 1, err) < 0)
            return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- summary */

void pes_parda_summary_free(struct pes_parda_summary *s)
{
    pes_parda_counts_free(&s->local);
    free(s->pending_key);
    free(s->pending_tag);
    free(s->recency);
    memset(s, 0, sizeof *s);
}

/* A local pass fed piece by piece (parda.h; the pool extends a chunk while
 * its keys arrive, profiles.c fills an MPI window). */
int pes_parda_summarizer_begin(struct pes_parda_summarizer *z, struct pes_parda_summary *s,
                               const struct pes_reuse_options *ro, uint64_t expected,
                               uint64_t exact_limit, struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    z->s = s;
    z->cap = 0;
    z->e = NULL;
    if (pes_parda_counts_init(&s->local, exact_limit, err) < 0)
        return -1;
    struct pes_reuse_options o = ro ? *ro : (struct pes_reuse_options){0};
    o.granule = 1; /* keys as they are */
    o.expected_keys = expected;
    if (!(z->e = pes_reuse_create(&o, err))) {
        pes_parda_summary_free(s);
        return -1;
    }
    return 0;
}

void pes_parda_summarizer_abort(struct pes_parda_summarizer *z)
{
    pes_reuse_destroy(z->e);
    z->e = NULL;
    pes_parda_summary_free(z->s);
}

int pes_parda_summarizer_feed(struct pes_parda_summarizer *z, const uint64_t *key,
                              const uint32_t *tag, size_t n, struct pes_error *err)
{
    struct pes_parda_summary *s = z->s;
    struct pes_parda_counts *c = &s->local;
    struct pes_rd_hist *h = &c->hist;
    uint64_t dist[BLOCK];
    s->length += n;
    for (size_t i = 0; i < n; i += BLOCK) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        if (pes_reuse_push_keys(z->e, key + i, m, dist) < 0)
            return engine_error(z->e, err);
        const uint32_t *tg = tag ? tag + i : NULL;
        uint64_t finite = 0;
        for (size_t j = 0; j < m; j++) {
            uint64_t d = dist[j];
            if (tg && tg[j] != PES_PARDA_NO_TAG) {
                if (tg[j] >= c->n_tags && tags_reserve(c, tg[j] + 1) < 0)
                    return nomem(err, "tag counts");
                c->tag[tg[j]].accesses++; /* pending ones too: their distance comes later */
                if (d != PES_REUSE_COLD)
                    c->tag[tg[j]].sum += d;
            }
            if (d == PES_REUSE_COLD) {
                /* pending arrays grow with the distinct keys, not the chunk */
                if (s->n_distinct == z->cap) {
                    size_t nc = z->cap ? z->cap * 2 : 1024;
                    uint64_t *pk = realloc(s->pending_key, nc * sizeof *pk);
                    if (pk)
                        s->pending_key = pk;
                    uint32_t *pt = NULL;
                    if (tag && (pt = realloc(s->pending_tag, nc * sizeof *pt)))
                        s->pending_tag = pt;
                    if (!pk || (tag && !pt))
                        return nomem(err, "pending keys");
                    z->cap = nc;
                }
                s->pending_key[s->n_distinct] = key[i + j];
                if (tag)
                    s->pending_tag[s->n_distinct] = tg[j];
                s->n_distinct++;
                continue;
            }
            finite++;
            h->sum += (double)d;
            if (d < h->exact_limit) {
                if (d >= h->exact_n && pes_rd_hist_reserve(h, d) < 0)
                    return nomem(err, "histogram");
                h->exact[d]++;
            } else {
                h->log2[63 - __builtin_clzll(d)]++;
            }
        }
        h->total += finite;
    }
    return 0;
}

int pes_parda_summarizer_end(struct pes_parda_summarizer *z, struct pes_error *err)
{
    struct pes_parda_summary *s = z->s;
    s->recency = malloc((s->n_distinct ? s->n_distinct : 1) * sizeof *s->recency);
    if (!s->recency || pes_reuse_keys_by_recency(z->e, s->recency) < 0) {
        pes_parda_summarizer_abort(z);
        return nomem(err, "recency list");
    }
    pes_reuse_destroy(z->e);
    z->e = NULL;
    return 0;
}

int pes_parda_summarize(struct pes_parda_summary *s, const uint64_t *key, const uint32_t *tag,
                        size_t n, const struct pes_reuse_options *ro, uint64_t exact_limit,
                        struct pes_error *err)
{
    struct pes_parda_summarizer z;
    uint64_t expected = ro && ro->expected_keys < n ? ro->expected_keys : n;
    if (pes_parda_summarizer_begin(&z, s, ro, ro ? expected : 0, exact_limit, err) < 0)
        return -1;
    if (pes_parda_summarizer_feed(&z, key, tag, n, err) < 0) {
        pes_parda_summarizer_abort(&z);
        return -1;
    }
    return pes_parda_summarizer_end(&z, err);
}

int pes_parda_resolve(struct pes_reuse *g, const struct pes_parda_summary *s, int last,
                      struct pes_parda_counts *out, struct pes_error *err)
{
    if (pes_parda_counts_merge(out, &s->local) < 0)
        return pes_error_set(
            err, PES_ERR_ARG, 0,
            "parda: cannot merge a chunk's counts (exact limits differ or out of memory)");
    uint64_t dist[BLOCK];
    for (uint64_t i = 0; i < s->n_distinct; i += BLOCK) {
        size_t m = s->n_distinct - i < BLOCK ? (size_t)(s->n_distinct - i) : BLOCK;
        if (pes_reuse_push_keys(g, s->pending_key + i, m, dist) < 0)
            return engine_error(g, err);
        if (count(out, dist, s->pending_tag ? s->pending_tag + i : NULL, m, 0, err) < 0)
            return -1;
    }
    if (last)
        return 0;
    for (uint64_t i = 0; i < s->n_distinct; i += BLOCK) {
        size_t m = s->n_distinct - i < BLOCK ? (size_t)(s->n_distinct - i) : BLOCK;
        if (pes_reuse_push_keys(g, s->recency + i, m, dist) < 0)
            return engine_error(g, err);
    }
    return 0;
}

/* ------------------------------------------------------ pack / unpack */

#define PACK_MAGIC   UINT64_C(0x3141445241505345) /* "ESPARDA1" read little-endian */
#define PACK_VERSION 1u

/* Layout (host order, no padding): magic u64, version u32, flags u32 (bit 0:
 * tagged), index, length, exact_limit, exact_n, n_distinct u64, n_tag_rows u32;
 * exact[exact_n], log2[64], cold, total u64, sum f64; n_tag_rows x {tag u32,
 * accesses, cold, sum u64} (non-zero tags only); pending_key[n], pending_tag[n]
 * (tagged), recency[n]. */
static size_t tag_rows(const struct pes_parda_summary *s)
{
    size_t r = 0;
    for (uint32_t t = 0; t < s->local.n_tags; t++)
        if (s->local.tag[t].accesses || s->local.tag[t].cold || s->local.tag[t].sum)
            r++;
    return r;
}

size_t pes_parda_summary_packed_size(const struct pes_parda_summary *s)
{
    const struct pes_rd_hist *h = &s->local.hist;
    size_t n = (size_t)s->n_distinct;
    return 8 + 4 + 4 + 5 * 8 + 4 + (size_t)h->exact_n * 8 + PES_RD_HIST_LOG2_BINS * 8 + 3 * 8 +
           tag_rows(s) * (4 + 3 * 8) + n * 8 + (s->pending_tag ? n * 4 : 0) + n * 8;
}

struct cursor {
    unsigned char *w;
    const unsigned char *r;
    size_t left;
};

static void put(struct cursor *c, const void *p, size_t n)
{
    memcpy(c->w, p, n);
    c->w += n;
}
static void put64(struct cursor *c, uint64_t v)
{
    put(c, &v, 8);
}
static void put32(struct cursor *c, uint32_t v)
{
    put(c, &v, 4);
}

size_t pes_parda_summary_pack(const struct pes_parda_summary *s, void *buf, size_t cap)
{
    size_t size = pes_parda_summary_packed_size(s);
    if (cap < size)
        return 0;
    const struct pes_rd_hist *h = &s->local.hist;
    struct cursor c = {.w = buf};
    put64(&c, PACK_MAGIC);
    put32(&c, PACK_VERSION);
    put32(&c, s->pending_tag ? 1u : 0u);
    put64(&c, s->index);
    put64(&c, s->length);
    put64(&c, h->exact_limit);
    put64(&c, h->exact_n);
    put64(&c, s->n_distinct);
    put32(&c, (uint32_t)tag_rows(s));
    if (h->exact_n)
        put(&c, h->exact, (size_t)h->exact_n * 8);
    put(&c, h->log2, sizeof h->log2);
    put64(&c, h->cold);
    put64(&c, h->total);
    put(&c, &h->sum, 8);
    for (uint32_t t = 0; t < s->local.n_tags; t++) {
        const struct pes_parda_tag_count *tc = &s->local.tag[t];
        if (!tc->accesses && !tc->cold && !tc->sum)
            continue;
        put32(&c, t);
        put64(&c, tc->accesses);
        put64(&c, tc->cold);
        put64(&c, tc->sum);
    }
    size_t n = (size_t)s->n_distinct;
    if (n) {
        put(&c, s->pending_key, n * 8);
        if (s->pending_tag)
            put(&c, s->pending_tag, n * 4);
        put(&c, s->recency, n * 8);
    }
    return size;
}

static int get(struct cursor *c, void *p, size_t n)
{
    if (c->left < n)
        return -1;
    memcpy(p, c->r, n);
    c->r += n;
    c->left -= n;
    return 0;
}

int pes_parda_summary_unpack(struct pes_parda_summary *s, const void *buf, size_t len,
                             struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    struct cursor c = {.r = buf, .left = len};
    uint64_t magic, exact_limit, exact_n, n;
    uint32_t version, flags, rows;
    if (get(&c, &magic, 8) || get(&c, &version, 4) || get(&c, &flags, 4))
        goto trunc;
    if (magic != PACK_MAGIC || version != PACK_VERSION || (flags & ~1u))
        return pes_error_set(err, PES_ERR_FORMAT, 0, "parda: not a chunk summary (magic/version)");
    if (get(&c, &s->index, 8) || get(&c, &s->length, 8) || get(&c, &exact_limit, 8) ||
        get(&c, &exact_n, 8) || get(&c, &n, 8) || get(&c, &rows, 4))
        goto trunc;
    if (pes_parda_counts_init(&s->local, exact_limit, err) < 0)
        return -1;
    struct pes_rd_hist *h = &s->local.hist;
    if (h->exact_limit != exact_limit || exact_n > exact_limit) {
        pes_parda_summary_free(s);
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "parda: bad histogram layout in a chunk summary");
    }
    /* every count below is bounded by the bytes left, so no size overflows */
    if (exact_n > c.left / 8 || n > c.left / 8 || rows > c.left / 28)
        goto trunc;
    if (exact_n && pes_rd_hist_reserve(h, exact_n - 1) < 0)
        goto oom;
    if ((exact_n && get(&c, h->exact, (size_t)exact_n * 8)) || get(&c, h->log2, sizeof h->log2) ||
        get(&c, &h->cold, 8) || get(&c, &h->total, 8) || get(&c, &h->sum, 8))
        goto trunc;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t t;
        struct pes_parda_tag_count tc;
        if (get(&c, &t, 4) || get(&c, &tc.accesses, 8) || get(&c, &tc.cold, 8) ||
            get(&c, &tc.sum, 8))
            goto trunc;
        if (t == PES_PARDA_NO_TAG) {
            pes_parda_summary_free(s);
            return pes_error_set(err, PES_ERR_FORMAT, 0, "parda: bad tag in a chunk summary");
        }
        if (tags_reserve(&s->local, t + 1) < 0)
            goto oom;
        s->local.tag[t] = tc;
    }
    s->n_distinct = n;
    size_t bytes = (size_t)n * 8;
    s->pending_key = malloc(bytes ? bytes : 1);
    s->recency = malloc(bytes ? bytes : 1);
    if ((flags & 1u) && !(s->pending_tag = malloc(n ? (size_t)n * 4 : 1)))
        goto oom;
    if (!s->pending_key || !s->recency)
        goto oom;
    if (get(&c, s->pending_key, bytes) ||
        ((flags & 1u) && get(&c, s->pending_tag, (size_t)n * 4)) || get(&c, s->recency, bytes))
        goto trunc;
    if (c.left)
        goto trunc;
    return 0;
trunc:
    pes_parda_summary_free(s);
    return pes_error_set(err, PES_ERR_FORMAT, len - c.left,
                         "parda: chunk summary truncated or too long");
oom:
    pes_parda_summary_free(s);
    return nomem(err, "unpacking a summary");
}

/* -------------------------------------------------------------- pool */

/*
 * Scheduling. The producer queues each lane's keys in slices. The worker that
 * owns a lane's engine G (one at a time) pushes the slices at the head of the
 * queue straight into G, as they come. A worker with nothing else to do may
 * *claim* a slice further back and start a chunk there: it runs the local
 * pass over that slice and keeps extending the chunk with the slices that
 * follow, as they arrive, until G's owner reaches the chunk (or another
 * claim follows it); the chunk is then summarised and resolved in its place.
 *
 * So a chunk is as long as the stretch G's owner had to do before reaching
 * it, and resolution (2 pushes per distinct key) is paid once per such
 * stretch. A claim is made only where that stretch is several times longer
 * than G's distinct keys (chunk_factor), or, once the lane has ended, at the
 * middle of what is left (so both halves finish together; the last chunk's
 * resolution is 1 push per distinct key). A lane with a small share of the
 * accesses is never split: other lanes keep the threads busy.
 */

#define SLICE 65536u /* accesses per queued slice (default) */

enum { I_SLICE, I_CHUNK };

struct item {
    struct item *next;
    int kind;
    /* slice */
    int direct;     /* being pushed into G */
    uint64_t index; /* slice number in its lane */
    uint64_t *key;
    uint32_t *tag;
    size_t n, cap;
    /* chunk */
    int stop;     /* G's owner has reached it: stop extending */
    int done;     /* summarised (or failed) */
    uint64_t len; /* accesses taken so far (under mu; sum.length
                                   belongs to the worker growing it) */
    struct pes_parda_summary sum;
    struct pes_parda_summarizer z;
};

struct lane {
    /* shared, under pp->mu */
    struct item *head, *tail; /* in stream order; head is next for G */
    struct item *last_chunk;  /* newest chunk in the queue, or NULL */
    int busy;                 /* G and res are owned by a worker (or push_sync) */
    int ended;
    int dominant;      /* the producer's view of the lane's share */
    uint64_t distinct; /* G's distinct keys, for chunk sizing */
    struct pes_reuse *g;
    struct pes_parda_counts res;
    /* producer only */
    struct item *open;
    uint64_t pushed, slices;
};

struct pes_parda {
    struct pes_parda_options o;
    uint32_t n_lanes;
    struct lane *lanes;
    pthread_t *threads;
    uint32_t n_threads;
    uint32_t n_started; /* workers numbered as they start (--stats) */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    int stop, failed, finished;
    struct pes_error err;
    uint64_t in_flight;  /* accesses in queued slices */
    uint64_t max_target; /* longest chunk aimed at by a dominant lane */
    struct item *free_items;
    uint32_t n_free;
    struct pes_parda_stats stats;
    uint64_t pushed; /* producer only */
};

static void item_free(struct item *it)
{
    if (!it)
        return;
    free(it->key);
    free(it->tag);
    if (it->z.e)
        pes_parda_summarizer_abort(&it->z);
    pes_parda_summary_free(&it->sum);
    free(it);
}

/* Under mu: a slice's buffers back to the free list, or freed. */
static void item_recycle(struct pes_parda *pp, struct item *it)
{
    if (it->kind == I_SLICE && it->key && pp->n_free < 2 * pp->o.threads + 4) {
        it->next = pp->free_items;
        pp->free_items = it;
        pp->n_free++;
        return;
    }
    item_free(it);
}

static void set_failed(struct pes_parda *pp, const struct pes_error *e)
{
    if (!pp->failed && e)
        pp->err = *e;
    pp->failed = 1;
}

static uint64_t lane_target(const struct pes_parda *pp, const struct lane *l)
{
    uint64_t t = l->distinct * pp->o.chunk_factor;
    if (t < pp->o.chunk_min)
        t = pp->o.chunk_min;
    return t > pp->o.chunk_max ? pp->o.chunk_max : t;
}

enum { T_DIRECT, T_RESOLVE, T_CHUNK };

struct task {
    int kind;
    struct lane *lane;
    struct item *it;    /* head slice, head chunk, or a new chunk */
    struct item *first; /* T_CHUNK: the claimed slice */
    int last;
    int skip; /* after a failure: bookkeeping only */
};

/* Under mu: is there head work a waiting chunk should give way to? */
static int head_work(const struct pes_parda *pp)
{
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        const struct lane *l = &pp->lanes[i];
        if (!l->busy && l->head && (l->head->kind == I_SLICE ? !l->head->direct : l->head->done))
            return 1;
    }
    return 0;
}

/* Under mu: turns slice `at` (prev: its predecessor or NULL) of lane l into a
 * new chunk, which takes its place in the queue. */
static int claim(struct pes_parda *pp, struct lane *l, struct item *prev, struct item *at,
                 struct task *t)
{
    struct item *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    c->kind = I_CHUNK;
    c->next = at->next;
    if (prev)
        prev->next = c;
    else
        l->head = c;
    if (l->tail == at)
        l->tail = c;
    l->last_chunk = c;
    at->next = NULL;
    pp->in_flight -= at->n;
    c->len = at->n;
    pp->stats.chunks_split++;
    *t = (struct task){.kind = T_CHUNK, .lane = l, .it = c, .first = at, .skip = pp->failed};
    pthread_cond_broadcast(&pp->done_cv);
    return 1;
}

/* Under mu: the next piece of work, head work first. */
static int pick(struct pes_parda *pp, struct task *t)
{
    int forced = pp->o.chunk_fixed != 0;
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        struct lane *l = &pp->lanes[i];
        struct item *h = l->head;
        if (l->busy || !h)
            continue;
        if (h->kind == I_SLICE && !(forced && h->index > 0)) {
            h->direct = 1;
            l->busy = 1;
            pp->stats.chunks_direct++;
            *t = (struct task){.kind = T_DIRECT, .lane = l, .it = h, .skip = pp->failed};
            return 1;
        }
        if (h->kind == I_CHUNK && h->done) {
            l->busy = 1;
            *t = (struct task){.kind = T_RESOLVE,
                               .lane = l,
                               .it = h,
                               .skip = pp->failed,
                               .last = l->ended && !h->next};
            return 1;
        }
        if (h->kind == I_CHUNK && !h->stop) {
            h->stop = 1; /* G's owner caught up: the chunk ends here */
            pthread_cond_broadcast(&pp->work_cv);
        }
    }
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        struct lane *l = &pp->lanes[i];
        if (!forced && (pp->o.threads < 2 || !l->dominant))
            continue;
        /* the unclaimed slices: after the newest chunk, past the slice G's
         * owner is on */
        struct item *prev = l->last_chunk, *from = prev ? prev->next : l->head;
        while (from && from->kind == I_SLICE && from->direct) {
            prev = from;
            from = from->next;
        }
        if (!from)
            continue;
        if (forced) {
            if (from->index > 0)
                return claim(pp, l, prev, from, t);
            continue;
        }
        uint64_t gap = 0;
        for (struct item *it = from; it; it = it->next)
            gap += it->n;
        uint64_t target = lane_target(pp, l);
        struct item *lc = l->last_chunk;
        if (lc && !lc->done && !lc->stop) {
            /* a chunk is growing: a new one may follow once it is long */
            if (lc->len >= target)
                return claim(pp, l, prev, from, t);
            continue;
        }
        if (l->ended) {
            /* split what is left in two, if the half saved beats resolving */
            if (gap / 2 < 2 * l->distinct || gap / 2 < 2 * pp->o.slice)
                continue;
            uint64_t acc = 0;
            struct item *it = from;
            while (it->next && acc + it->n < gap / 2) {
                acc += it->n;
                prev = it;
                it = it->next;
            }
            return claim(pp, l, prev, it, t);
        }
        if (gap >= target) {
            while (from->next) { /* the newest slice: G's owner has the rest */
                prev = from;
                from = from->next;
            }
            return claim(pp, l, prev, from, t);
        }
    }
    return 0;
}

static int ensure_g(struct pes_parda *pp, struct lane *l, struct pes_error *err)
{
    if (l->g)
        return 0;
    struct pes_reuse_options ro = pp->o.engine;
    l->g = pes_reuse_create(&ro, err);
    return l->g ? 0 : -1;
}

/* Worker, T_CHUNK: the local pass, extended while slices follow; called and
 * returns with mu held. */
static void grow_chunk(struct pes_parda *pp, struct task *t)
{
    struct lane *l = t->lane;
    struct item *c = t->it, *sl = t->first;
    struct pes_error e = {0};
    int ok = !t->skip;
    uint64_t expected = l->distinct;
    pthread_mutex_unlock(&pp->mu);
    if (ok && pes_parda_summarizer_begin(&c->z, &c->sum, &pp->o.engine, expected, pp->o.exact_limit,
                                         &e) < 0)
        ok = 0;
    for (;;) {
        if (ok && pes_parda_summarizer_feed(&c->z, sl->key, sl->tag, sl->n, &e) < 0)
            ok = 0;
        pthread_mutex_lock(&pp->mu);
        item_recycle(pp, sl);
        sl = NULL;
        if (!ok)
            set_failed(pp, &e);
        for (;;) {
            struct item *nx = c->next;
            int stop = c->stop || pp->failed || l->head == c ||
                       (pp->o.chunk_fixed && c->len >= pp->o.chunk_fixed);
            if (!stop && nx && nx->kind == I_SLICE) {
                c->next = nx->next;
                if (l->tail == nx)
                    l->tail = c;
                nx->next = NULL;
                pp->in_flight -= nx->n;
                c->len += nx->n;
                pthread_cond_broadcast(&pp->done_cv);
                sl = nx;
                break;
            }
            if (stop || nx || l->ended || pp->o.chunk_fixed || head_work(pp))
                break;
            pthread_cond_wait(&pp->work_cv, &pp->mu);
        }
        if (!sl)
            break;
        pthread_mutex_unlock(&pp->mu);
        ok = ok && !t->skip;
    }
    pthread_mutex_unlock(&pp->mu);
    if (ok && pes_parda_summarizer_end(&c->z, &e) < 0)
        ok = 0;
    if (!ok && c->z.e)
        pes_parda_summarizer_abort(&c->z);
    pthread_mutex_lock(&pp->mu);
    if (!ok && !t->skip)
        set_failed(pp, &e);
    c->done = 1;
    pthread_cond_broadcast(&pp->work_cv);
}

/* Worker, head work (T_DIRECT, T_RESOLVE), without mu. */
static int run_head(struct pes_parda *pp, struct task *t, struct pes_error *err)
{
    struct lane *l = t->lane;
    if (t->skip || ensure_g(pp, l, err) < 0)
        return t->skip ? 0 : -1;
    if (t->kind == T_RESOLVE) {
        if (!t->it->sum.recency) /* its local pass failed; already reported */
            return 0;
        return pes_parda_resolve(l->g, &t->it->sum, t->last, &l->res, err);
    }
    return pes_parda_push_direct(l->g, t->it->key, t->it->tag, t->it->n, &l->res, err);
}

/* Under mu, after run_head. Returns an engine to destroy outside the lock. */
static struct pes_reuse *head_done(struct pes_parda *pp, struct task *t, int rc,
                                   const struct pes_error *e)
{
    struct lane *l = t->lane;
    struct item *it = t->it;
    if (rc < 0)
        set_failed(pp, e);
    if (t->kind == T_RESOLVE && it->sum.recency)
        pp->stats.resolve_pushes += it->sum.n_distinct * (t->last ? 1 : 2);
    if (t->kind == T_DIRECT)
        pp->in_flight -= it->n;
    l->head = it->next;
    if (!l->head)
        l->tail = NULL;
    if (l->last_chunk == it)
        l->last_chunk = NULL;
    if (l->g)
        l->distinct = pes_reuse_distinct(l->g);
    l->busy = 0;
    item_recycle(pp, it);
    struct pes_reuse *drop = NULL;
    if (l->ended && !l->head) {
        drop = l->g;
        l->g = NULL;
    }
    return drop;
}

static void *worker_main(void *arg)
{
    struct pes_parda *pp = arg;
    /* --stats: a resolution is sequential in its lane, the rest divides */
    int st_direct = pes_cpu_stage("reuse engines", PES_CPU_BY_THREAD),
        st_chunk = pes_cpu_stage("reuse chunks", PES_CPU_BY_THREAD),
        st_resolve = pes_cpu_stage("reuse resolution", PES_CPU_SERIAL),
        st_idle = pes_cpu_stage("reuse worker waits", PES_CPU_BY_THREAD);
    pthread_mutex_lock(&pp->mu);
    pes_cpu_thread_begin("reuse worker", pp->n_started++, 0, st_idle);
    for (;;) {
        struct task t;
        if (!pick(pp, &t)) {
            if (pp->stop)
                break;
            pes_cpu_switch(st_idle);
            pthread_cond_wait(&pp->work_cv, &pp->mu);
            continue;
        }
        if (t.kind == T_CHUNK) {
            pes_cpu_switch(st_chunk);
            grow_chunk(pp, &t);
        } else {
            pthread_mutex_unlock(&pp->mu);
            pes_cpu_switch(t.kind == T_RESOLVE ? st_resolve : st_direct);
            struct pes_error e = {0};
            int rc = run_head(pp, &t, &e);
            pthread_mutex_lock(&pp->mu);
            struct pes_reuse *drop = head_done(pp, &t, rc, &e);
            if (drop) {
                pthread_mutex_unlock(&pp->mu);
                pes_reuse_destroy(drop);
                pthread_mutex_lock(&pp->mu);
            }
        }
        pthread_cond_broadcast(&pp->done_cv);
        pthread_cond_broadcast(&pp->work_cv);
    }
    pthread_mutex_unlock(&pp->mu);
    pes_cpu_thread_end();
    return NULL;
}

static void stop_workers(struct pes_parda *pp)
{
    pthread_mutex_lock(&pp->mu);
    pp->stop = 1;
    pthread_cond_broadcast(&pp->work_cv);
    pthread_mutex_unlock(&pp->mu);
    for (uint32_t i = 0; i < pp->n_threads; i++)
        pthread_join(pp->threads[i], NULL);
    pp->n_threads = 0;
}

struct pes_parda *pes_parda_create(const struct pes_parda_options *o, struct pes_error *err)
{
    if (!o || o->threads == 0 || o->n_lanes == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "parda: need at least one thread and one lane");
        return NULL;
    }
    struct pes_parda *pp = calloc(1, sizeof *pp);
    if (!pp) {
        nomem(err, "pool");
        return NULL;
    }
    pp->o = *o;
    if (!pp->o.chunk_min)
        pp->o.chunk_min = UINT64_C(4) << 20;
    if (!pp->o.chunk_max)
        pp->o.chunk_max = UINT64_C(16) << 20;
    if (pp->o.chunk_max < pp->o.chunk_min)
        pp->o.chunk_max = pp->o.chunk_min;
    if (!pp->o.chunk_factor)
        pp->o.chunk_factor = 16;
    if (!pp->o.slice)
        pp->o.slice =
            pp->o.chunk_fixed && pp->o.chunk_fixed < SLICE ? (uint32_t)pp->o.chunk_fixed : SLICE;
    pp->o.engine.granule = 1;
    pp->n_lanes = o->n_lanes;
    pthread_mutex_init(&pp->mu, NULL);
    pthread_cond_init(&pp->work_cv, NULL);
    pthread_cond_init(&pp->done_cv, NULL);
    pp->lanes = calloc(o->n_lanes, sizeof *pp->lanes);
    pp->threads = calloc(o->threads, sizeof *pp->threads);
    if (!pp->lanes || !pp->threads) {
        nomem(err, "pool");
        goto fail;
    }
    /* the engine options are checked once here */
    struct pes_reuse *probe = pes_reuse_create(&pp->o.engine, err);
    if (!probe)
        goto fail;
    pes_reuse_destroy(probe);
    for (uint32_t i = 0; i < o->n_lanes; i++)
        if (pes_parda_counts_init(&pp->lanes[i].res, o->exact_limit, err) < 0)
            goto fail;
    for (uint32_t i = 0; i < o->threads; i++) {
        if (pthread_create(&pp->threads[i], NULL, worker_main, pp) != 0) {
            pes_error_set(err, PES_ERR_NOMEM, 0, "parda: cannot start worker thread %u", i);
            goto fail;
        }
        pp->n_threads++;
    }
    return pp;
fail:
    pes_parda_destroy(pp);
    return NULL;
}

void pes_parda_destroy(struct pes_parda *pp)
{
    if (!pp)
        return;
    if (pp->n_threads) {
        pthread_mutex_lock(&pp->mu);
        pp->failed = 1; /* queued work is dropped, not done */
        pthread_mutex_unlock(&pp->mu);
        stop_workers(pp);
    }
    if (pp->lanes) {
        for (uint32_t i = 0; i < pp->n_lanes; i++) {
            struct lane *l = &pp->lanes[i];
            for (struct item *it = l->head, *nx; it; it = nx) {
                nx = it->next;
                item_free(it);
            }
            item_free(l->open);
            pes_reuse_destroy(l->g);
            pes_parda_counts_free(&l->res);
        }
    }
    for (struct item *it = pp->free_items, *nx; it; it = nx) {
        nx = it->next;
        item_free(it);
    }
    free(pp->lanes);
    free(pp->threads);
    pthread_mutex_destroy(&pp->mu);
    pthread_cond_destroy(&pp->work_cv);
    pthread_cond_destroy(&pp->done_cv);
    free(pp);
}

static int fail_copy(struct pes_parda *pp, struct pes_error *err)
{
    pthread_mutex_lock(&pp->mu);
    if (err)
        *err = pp->err;
    pthread_mutex_unlock(&pp->mu);
    return -1;
}

/* Producer: the lane's open slice joins its queue (waiting while the budget
 * is used up). */
static int submit(struct pes_parda *pp, struct lane *l, struct pes_error *err)
{
    struct item *it = l->open;
    if (!it || it->n == 0)
        return 0;
    l->open = NULL;
    it->kind = I_SLICE;
    it->direct = 0;
    it->next = NULL;
    it->index = l->slices++;
    /* a lane with under half its fair share of the accesses is not split */
    int dominant = l->pushed * 2 * pp->o.threads >= pp->pushed;
    pthread_mutex_lock(&pp->mu);
    if (dominant && pp->o.threads > 1 && lane_target(pp, l) > pp->max_target)
        pp->max_target = lane_target(pp, l);
    /* The producer may run ahead by a chunk and a half (a claim needs a long
     * stretch queued before it) plus a few slices per thread. */
    uint64_t budget = pp->max_target / 2 * 3 + (uint64_t)4 * pp->o.threads * pp->o.slice;
    while (pp->in_flight && pp->in_flight + it->n > budget && !pp->failed)
        pthread_cond_wait(&pp->done_cv, &pp->mu);
    l->dominant = dominant;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    pp->in_flight += it->n;
    pthread_cond_broadcast(&pp->work_cv);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    return failed ? fail_copy(pp, err) : 0;
}

static int check_lane(struct pes_parda *pp, uint32_t lane, struct pes_error *err)
{
    if (lane >= pp->n_lanes)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u out of range (%u lanes)", lane,
                             pp->n_lanes);
    if (pp->lanes[lane].ended || pp->finished)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u has ended", lane);
    return 0;
}

int pes_parda_push(struct pes_parda *pp, uint32_t lane, const uint64_t *key, const uint32_t *tag,
                   size_t n, struct pes_error *err)
{
    if (check_lane(pp, lane, err) < 0)
        return -1;
    struct lane *l = &pp->lanes[lane];
    const size_t slice = pp->o.slice;
    l->pushed += n;
    pp->pushed += n;
    while (n) {
        struct item *it = l->open;
        if (!it) {
            pthread_mutex_lock(&pp->mu);
            if ((it = pp->free_items)) {
                pp->free_items = it->next;
                pp->n_free--;
            }
            pthread_mutex_unlock(&pp->mu);
            if (!it && !(it = calloc(1, sizeof *it)))
                return nomem(err, "slice");
            it->n = 0;
            l->open = it;
        }
        /* An open slice grows as keys come: thousands of short-lived
         * threads (lanes) must not each hold a whole slice. */
        if (it->cap < slice && it->n + n > it->cap) {
            size_t cap = it->cap ? it->cap : 64;
            while (cap < it->n + n && cap < slice)
                cap *= 2;
            if (cap > slice)
                cap = slice;
            uint64_t *k = realloc(it->key, cap * sizeof *k);
            if (k)
                it->key = k;
            uint32_t *tg = NULL;
            if (pp->o.tagged && k && (tg = realloc(it->tag, cap * sizeof *tg)))
                it->tag = tg;
            if (!k || (pp->o.tagged && !tg))
                return nomem(err, "slice");
            it->cap = cap;
        }
        size_t m = slice - it->n < n ? slice - it->n : n;
        memcpy(it->key + it->n, key, m * sizeof *key);
        if (pp->o.tagged) {
            memcpy(it->tag + it->n, tag, m * sizeof *tag);
            tag += m;
        }
        it->n += m;
        key += m;
        n -= m;
        if (it->n == slice && submit(pp, l, err) < 0)
            return -1;
    }
    pthread_mutex_lock(&pp->mu);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    return failed ? fail_copy(pp, err) : 0;
}

int pes_parda_push_sync(struct pes_parda *pp, uint32_t lane, const uint64_t *key,
                        const uint32_t *tag, size_t n, uint64_t *dist, struct pes_error *err)
{
    if (check_lane(pp, lane, err) < 0)
        return -1;
    struct lane *l = &pp->lanes[lane];
    if (submit(pp, l, err) < 0)
        return -1;
    pthread_mutex_lock(&pp->mu);
    while (l->head || l->busy)
        pthread_cond_wait(&pp->done_cv, &pp->mu);
    int failed = pp->failed;
    l->busy = !failed; /* nothing queued and only this thread submits */
    pthread_mutex_unlock(&pp->mu);
    if (failed)
        return fail_copy(pp, err);
    l->pushed += n;
    pp->pushed += n;
    int rc = ensure_g(pp, l, err);
    if (rc == 0 && pes_reuse_push_keys(l->g, key, n, dist) < 0)
        rc = engine_error(l->g, err);
    if (rc == 0)
        rc = count(&l->res, dist, pp->o.tagged ? tag : NULL, n, 1, err);
    pthread_mutex_lock(&pp->mu);
    if (l->g)
        l->distinct = pes_reuse_distinct(l->g);
    l->busy = 0;
    pthread_mutex_unlock(&pp->mu);
    return rc;
}

int pes_parda_end_lane(struct pes_parda *pp, uint32_t lane, struct pes_error *err)
{
    if (lane >= pp->n_lanes)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u out of range (%u lanes)", lane,
                             pp->n_lanes);
    struct lane *l = &pp->lanes[lane];
    if (l->ended)
        return 0;
    int rc = submit(pp, l, err);
    item_free(l->open);
    l->open = NULL;
    struct pes_reuse *drop = NULL;
    pthread_mutex_lock(&pp->mu);
    l->ended = 1;
    if (!l->head && !l->busy) {
        drop = l->g;
        l->g = NULL;
    }
    pthread_cond_broadcast(&pp->work_cv); /* a growing chunk gets no more */
    pthread_mutex_unlock(&pp->mu);
    pes_reuse_destroy(drop);
    return rc;
}

/* Under mu: every lane's queue is empty and nobody works on one. */
static int all_idle(const struct pes_parda *pp)
{
    for (uint32_t i = 0; i < pp->n_lanes; i++)
        if (pp->lanes[i].head || pp->lanes[i].busy)
            return 0;
    return 1;
}

int pes_parda_sync(struct pes_parda *pp, struct pes_error *err)
{
    for (uint32_t i = 0; i < pp->n_lanes; i++)
        if (!pp->lanes[i].ended && submit(pp, &pp->lanes[i], err) < 0)
            return -1;
    pthread_mutex_lock(&pp->mu);
    pthread_cond_broadcast(&pp->work_cv);
    while (!all_idle(pp) && pp->n_threads)
        pthread_cond_wait(&pp->done_cv, &pp->mu);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    return failed ? fail_copy(pp, err) : 0;
}

int pes_parda_finish(struct pes_parda *pp, struct pes_error *err)
{
    if (pp->finished)
        return pp->failed ? fail_copy(pp, err) : 0;
    int rc = 0;
    for (uint32_t i = 0; i < pp->n_lanes; i++)
        if (pes_parda_end_lane(pp, i, err) < 0)
            rc = -1;
    if (pes_parda_sync(pp, err) < 0)
        rc = -1;
    stop_workers(pp);
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        pes_reuse_destroy(pp->lanes[i].g);
        pp->lanes[i].g = NULL;
    }
    for (struct item *it = pp->free_items, *nx; it; it = nx) {
        nx = it->next;
        item_free(it);
    }
    pp->free_items = NULL;
    pp->n_free = 0;
    pp->finished = 1;
    return rc;
}

const struct pes_parda_counts *pes_parda_result(const struct pes_parda *pp, uint32_t lane)
{
    return lane < pp->n_lanes ? &pp->lanes[lane].res : NULL;
}

void pes_parda_get_stats(const struct pes_parda *pp, struct pes_parda_stats *st)
{
    pthread_mutex_lock((pthread_mutex_t *)&pp->mu);
    *st = pp->stats;
    pthread_mutex_unlock((pthread_mutex_t *)&pp->mu);
}
