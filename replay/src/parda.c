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

#define BLOCK 2048   /* keys per engine call (distances on the stack) */

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

int pes_parda_summarize(struct pes_parda_summary *s, const uint64_t *key, const uint32_t *tag, size_t n,
                        const struct pes_reuse_options *ro, uint64_t exact_limit, struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    s->length = n;
    if (pes_parda_counts_init(&s->local, exact_limit, err) < 0)
        return -1;
    struct pes_reuse_options o = ro ? *ro : (struct pes_reuse_options){ 0 };
    o.granule = 1;   /* keys as they are */
    if (o.expected_keys > n)
        o.expected_keys = n;
    struct pes_reuse *e = pes_reuse_create(&o, err);
    if (!e)
        goto fail;
    /* pending arrays grow with the distinct keys seen (not the chunk length) */
    size_t cap = 0;
    uint64_t dist[BLOCK];
    for (size_t i = 0; i < n; i += BLOCK) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        if (pes_reuse_push_keys(e, key + i, m, dist) < 0) {
            engine_error(e, err);
            goto fail;
        }
        const uint32_t *tg = tag ? tag + i : NULL;
        for (size_t j = 0; j < m; j++) {
            if (dist[j] != PES_REUSE_COLD)
                continue;
            if (s->n_distinct == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                uint64_t *pk = realloc(s->pending_key, nc * sizeof *pk);
                if (pk)
                    s->pending_key = pk;
                uint32_t *pt = NULL;
                if (tag && (pt = realloc(s->pending_tag, nc * sizeof *pt)))
                    s->pending_tag = pt;
                if (!pk || (tag && !pt)) {
                    nomem(err, "pending keys");
                    goto fail;
                }
                cap = nc;
            }
            s->pending_key[s->n_distinct] = key[i + j];
            if (tag)
                s->pending_tag[s->n_distinct] = tg[j];
            s->n_distinct++;
        }
        /* the pending accesses count as accesses of their tag (count() skips
         * their distance: it is not known yet) */
        uint64_t *d = dist;
        struct pes_parda_counts *c = &s->local;
        struct pes_rd_hist *h = &c->hist;
        uint64_t finite = 0;
        for (size_t j = 0; j < m; j++) {
            if (tg && tg[j] != PES_PARDA_NO_TAG) {
                if (tg[j] >= c->n_tags && tags_reserve(c, tg[j] + 1) < 0) {
                    nomem(err, "tag counts");
                    goto fail;
                }
                c->tag[tg[j]].accesses++;
                if (d[j] != PES_REUSE_COLD)
                    c->tag[tg[j]].sum += d[j];
            }
            if (d[j] == PES_REUSE_COLD)
                continue;
            finite++;
            uint64_t x = d[j];
            h->sum += (double)x;
            if (x < h->exact_limit) {
                if (x >= h->exact_n && pes_rd_hist_reserve(h, x) < 0) {
                    nomem(err, "histogram");
                    goto fail;
                }
                h->exact[x]++;
            } else {
                h->log2[63 - __builtin_clzll(x)]++;
            }
        }
        h->total += finite;
    }
    s->recency = malloc((s->n_distinct ? s->n_distinct : 1) * sizeof *s->recency);
    if (!s->recency || pes_reuse_keys_by_recency(e, s->recency) < 0) {
        nomem(err, "recency list");
        goto fail;
    }
    pes_reuse_destroy(e);
    return 0;
fail:
    pes_reuse_destroy(e);
    pes_parda_summary_free(s);
    return -1;
}

int pes_parda_resolve(struct pes_reuse *g, const struct pes_parda_summary *s, int last,
                      struct pes_parda_counts *out, struct pes_error *err)
{
    if (pes_parda_counts_merge(out, &s->local) < 0)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: cannot merge a chunk's counts (exact limits differ or out of memory)");
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

#define PACK_MAGIC UINT64_C(0x3141445241505345)   /* "ESPARDA1" read little-endian */
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
static void put64(struct cursor *c, uint64_t v) { put(c, &v, 8); }
static void put32(struct cursor *c, uint32_t v) { put(c, &v, 4); }

size_t pes_parda_summary_pack(const struct pes_parda_summary *s, void *buf, size_t cap)
{
    size_t size = pes_parda_summary_packed_size(s);
    if (cap < size)
        return 0;
    const struct pes_rd_hist *h = &s->local.hist;
    struct cursor c = { .w = buf };
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

int pes_parda_summary_unpack(struct pes_parda_summary *s, const void *buf, size_t len, struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    struct cursor c = { .r = buf, .left = len };
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
        return pes_error_set(err, PES_ERR_FORMAT, 0, "parda: bad histogram layout in a chunk summary");
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
        if (get(&c, &t, 4) || get(&c, &tc.accesses, 8) || get(&c, &tc.cold, 8) || get(&c, &tc.sum, 8))
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
    if (get(&c, s->pending_key, bytes) || ((flags & 1u) && get(&c, s->pending_tag, (size_t)n * 4)) ||
        get(&c, s->recency, bytes))
        goto trunc;
    if (c.left)
        goto trunc;
    return 0;
trunc:
    pes_parda_summary_free(s);
    return pes_error_set(err, PES_ERR_FORMAT, len - c.left, "parda: chunk summary truncated or too long");
oom:
    pes_parda_summary_free(s);
    return nomem(err, "unpacking a summary");
}

/* -------------------------------------------------------------- pool */

/* Chunks of lanes too small to be worth splitting: short, so many lanes
 * buffer little and their engines get work early. */
#define SMALL_CHUNK 65536u

enum { C_READY, C_LOCAL, C_SUMMARY, C_HEAD };

struct chunk {
    struct chunk *next;
    uint64_t seq;               /* submission order, over all lanes */
    uint64_t index;             /* in its lane */
    int state;
    int split_ok;               /* long enough for a local pass to pay off */
    uint64_t *key;
    uint32_t *tag;
    size_t n, cap;
    uint64_t expect;            /* distinct keys expected (engine sizing) */
    struct pes_parda_summary sum;
};

/* Distinct-key estimate of a lane on the producer's side (chunk sizing):
 * keys whose hash has `level` leading zero bits are kept in a small set; the
 * estimate is the set size times 2^level (adaptive sampling). */
#define EST_MAX 4096u
struct estimate {
    uint64_t set[2 * EST_MAX];  /* hashes | 1, 0 = empty */
    uint32_t n;
    unsigned level;
};

struct lane {
    /* shared, under pp->mu */
    struct chunk *head, *tail;  /* submitted, in order; head resolves next */
    int busy;                   /* a worker (or push_sync) owns g and res */
    int ended;
    struct pes_reuse *g;
    struct pes_parda_counts res;
    /* producer only */
    struct chunk *open;
    uint64_t pushed;
    uint64_t chunks;
    struct estimate *est;
};

struct pes_parda {
    struct pes_parda_options o;
    uint32_t n_lanes;
    struct lane *lanes;
    pthread_t *threads;
    uint32_t n_threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    int stop, failed, finished;
    struct pes_error err;
    uint64_t seq, in_flight, unit;
    struct chunk *free_chunks;
    uint32_t n_free;
    struct pes_parda_stats stats;
    uint64_t pushed;            /* producer only */
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static void est_insert(struct estimate *e, uint64_t h)
{
    uint64_t m = 2 * EST_MAX - 1, i = h & m;
    while (e->set[i]) {
        if (e->set[i] == h)
            return;
        i = (i + 1) & m;
    }
    e->set[i] = h;
    e->n++;
}

static void est_add(struct estimate *e, const uint64_t *key, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(key[i]) | 1;
        if (e->level && (h >> (64 - e->level)))
            continue;
        est_insert(e, h);
        while (e->n > EST_MAX) {   /* halve the sampling rate */
            uint64_t old[2 * EST_MAX];
            memcpy(old, e->set, sizeof old);
            memset(e->set, 0, sizeof e->set);
            e->n = 0;
            e->level++;
            for (uint32_t j = 0; j < 2 * EST_MAX; j++)
                if (old[j] && !(old[j] >> (64 - e->level)))
                    est_insert(e, old[j]);
        }
    }
}

static uint64_t est_value(const struct estimate *e) { return (uint64_t)e->n << e->level; }

static void chunk_free(struct chunk *c)
{
    if (!c)
        return;
    free(c->key);
    free(c->tag);
    pes_parda_summary_free(&c->sum);
    free(c);
}

static void set_failed(struct pes_parda *pp, const struct pes_error *e)
{
    if (!pp->failed && e)
        pp->err = *e;
    pp->failed = 1;
}

/* Under mu: a chunk back to the free list (buffers kept) or freed. */
static void chunk_recycle(struct pes_parda *pp, struct chunk *c)
{
    pes_parda_summary_free(&c->sum);
    if (pp->n_free < pp->n_threads + 2) {
        c->n = 0;
        c->next = pp->free_chunks;
        pp->free_chunks = c;
        pp->n_free++;
    } else {
        chunk_free(c);
    }
}

struct task {
    struct lane *lane;
    struct chunk *c;
    int head;                   /* resolve / push direct, else local pass */
    int last;
    int skip;                   /* after a failure: only the bookkeeping */
};

/* Under mu: the next piece of work. Head work first (it holds up its lane and
 * frees memory), oldest chunk first; otherwise a local pass of the oldest
 * long chunk that waits behind its lane's head. */
static int pick(struct pes_parda *pp, struct task *t)
{
    struct lane *best = NULL;
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        struct lane *l = &pp->lanes[i];
        if (!l->busy && l->head &&
            ((l->head->state == C_READY && !(pp->o.chunk_fixed && l->head->index > 0)) ||
             l->head->state == C_SUMMARY) &&
            (!best || l->head->seq < best->head->seq))
            best = l;
    }
    if (best) {
        struct chunk *c = best->head;
        best->busy = 1;
        *t = (struct task){ .lane = best, .c = c, .head = 1, .skip = pp->failed,
                            .last = best->ended && !c->next };
        if (c->state == C_READY)
            pp->stats.chunks_direct++;
        c->state = C_HEAD;
        return 1;
    }
    struct chunk *cand = NULL;
    struct lane *cl = NULL;
    for (uint32_t i = 0; i < pp->n_lanes; i++) {
        struct lane *l = &pp->lanes[i];
        /* a ready head only gets here when chunk_fixed forces the split */
        for (struct chunk *c = l->head; c; c = c->next)
            if (c->state == C_READY && c->split_ok) {
                if (!cand || c->seq < cand->seq) {
                    cand = c;
                    cl = l;
                }
                break;
            }
    }
    if (!cand)
        return 0;
    cand->state = C_LOCAL;
    pp->stats.chunks_split++;
    *t = (struct task){ .lane = cl, .c = cand, .head = 0, .skip = pp->failed };
    return 1;
}

/* Without mu: the work itself. Only the task's owner touches l->g, l->res
 * (head) or the chunk (local pass). */
static int run(struct pes_parda *pp, struct task *t, struct pes_error *err)
{
    if (t->skip)
        return 0;
    struct lane *l = t->lane;
    struct chunk *c = t->c;
    if (!t->head) {
        struct pes_reuse_options ro = pp->o.engine;
        ro.expected_keys = c->expect;
        return pes_parda_summarize(&c->sum, c->key, c->tag, c->n, &ro, pp->o.exact_limit, err);
    }
    if (!l->g) {
        struct pes_reuse_options ro = pp->o.engine;
        ro.granule = 1;
        if (!ro.expected_keys)
            ro.expected_keys = c->expect;
        if (!(l->g = pes_reuse_create(&ro, err)))
            return -1;
    }
    if (c->state == C_HEAD && c->sum.recency)
        return pes_parda_resolve(l->g, &c->sum, t->last, &l->res, err);
    return pes_parda_push_direct(l->g, c->key, c->tag, c->n, &l->res, err);
}

/* Under mu: after run(). Returns an engine to destroy outside the lock. */
static struct pes_reuse *complete(struct pes_parda *pp, struct task *t, int rc, const struct pes_error *e)
{
    struct lane *l = t->lane;
    struct chunk *c = t->c;
    struct pes_reuse *drop = NULL;
    if (rc < 0)
        set_failed(pp, e);
    if (!t->head) {
        c->state = C_SUMMARY;
        /* the keys are in the summary now; the buffers can serve a new chunk
         * (the chunk stays counted in flight until it is resolved) */
        if (pp->n_free < pp->n_threads + 2 && !t->skip && rc == 0) {
            struct chunk *spare = calloc(1, sizeof *spare);
            if (spare) {
                spare->key = c->key;
                spare->tag = c->tag;
                spare->cap = c->cap;
                c->key = NULL;
                c->tag = NULL;
                c->cap = 0;
                spare->next = pp->free_chunks;
                pp->free_chunks = spare;
                pp->n_free++;
            }
        }
        return NULL;
    }
    if (c->sum.recency)
        pp->stats.resolve_pushes += c->sum.n_distinct * (t->last ? 1 : 2);
    l->head = c->next;
    if (!l->head)
        l->tail = NULL;
    l->busy = 0;
    pp->in_flight -= c->n ? c->n : c->sum.length;
    chunk_recycle(pp, c);
    if (l->ended && !l->head) {
        drop = l->g;
        l->g = NULL;
    }
    return drop;
}

static void *worker_main(void *arg)
{
    struct pes_parda *pp = arg;
    pthread_mutex_lock(&pp->mu);
    for (;;) {
        struct task t;
        if (pick(pp, &t)) {
            pthread_mutex_unlock(&pp->mu);
            struct pes_error e = { 0 };
            int rc = run(pp, &t, &e);
            pthread_mutex_lock(&pp->mu);
            struct pes_reuse *drop = complete(pp, &t, rc, &e);
            pthread_cond_broadcast(&pp->done_cv);
            pthread_cond_broadcast(&pp->work_cv);
            if (drop) {
                pthread_mutex_unlock(&pp->mu);
                pes_reuse_destroy(drop);
                pthread_mutex_lock(&pp->mu);
            }
            continue;
        }
        if (pp->stop)
            break;
        pthread_cond_wait(&pp->work_cv, &pp->mu);
    }
    pthread_mutex_unlock(&pp->mu);
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
        pp->o.chunk_min = UINT64_C(2) << 20;
    if (!pp->o.chunk_max)
        pp->o.chunk_max = UINT64_C(8) << 20;
    if (pp->o.chunk_max < pp->o.chunk_min)
        pp->o.chunk_max = pp->o.chunk_min;
    if (!pp->o.chunk_factor)
        pp->o.chunk_factor = 8;
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
        pp->failed = 1;   /* queued work is dropped, not done */
        pthread_mutex_unlock(&pp->mu);
        stop_workers(pp);
    }
    if (pp->lanes) {
        for (uint32_t i = 0; i < pp->n_lanes; i++) {
            struct lane *l = &pp->lanes[i];
            for (struct chunk *c = l->head, *nx; c; c = nx) {
                nx = c->next;
                chunk_free(c);
            }
            chunk_free(l->open);
            pes_reuse_destroy(l->g);
            pes_parda_counts_free(&l->res);
            free(l->est);
        }
    }
    for (struct chunk *c = pp->free_chunks, *nx; c; c = nx) {
        nx = c->next;
        chunk_free(c);
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
    if (err)
        *err = pp->err;
    return -1;
}

/* Producer: the chunk length lane l aims at now, and whether such a chunk is
 * worth a local pass. A lane with a small share of the accesses gets short
 * chunks (other lanes keep the threads busy); a dominant one gets chunks
 * several times longer than its distinct keys, so resolution (2 pushes per
 * distinct key) stays a small fraction of the local passes. */
static uint64_t lane_target(const struct pes_parda *pp, const struct lane *l, int *split_ok)
{
    *split_ok = 0;
    if (pp->o.chunk_fixed) {
        *split_ok = 1;
        return pp->o.chunk_fixed;
    }
    if (pp->o.threads < 2 || l->pushed * 2 * pp->o.threads < pp->pushed)
        return SMALL_CHUNK;
    uint64_t want = est_value(l->est) * pp->o.chunk_factor;
    if (want < pp->o.chunk_min)
        want = pp->o.chunk_min;
    if (want > pp->o.chunk_max)
        want = pp->o.chunk_max;
    *split_ok = 1;
    return want;
}

/* Producer: the lane's open chunk joins its queue. */
static int submit(struct pes_parda *pp, struct lane *l, struct pes_error *err)
{
    struct chunk *c = l->open;
    if (!c || c->n == 0)
        return 0;
    l->open = NULL;
    int split_ok;
    lane_target(pp, l, &split_ok);
    c->split_ok = split_ok && (pp->o.chunk_fixed || c->n >= pp->o.chunk_min / 2);
    c->expect = l->est ? est_value(l->est) : 0;
    c->index = l->chunks++;
    c->state = C_READY;
    c->next = NULL;
    pthread_mutex_lock(&pp->mu);
    if (c->n > pp->unit)
        pp->unit = c->n;
    uint64_t budget = (uint64_t)(pp->o.threads + 2) * pp->unit;
    while (pp->in_flight && pp->in_flight + c->n > budget && !pp->failed)
        pthread_cond_wait(&pp->done_cv, &pp->mu);
    c->seq = pp->seq++;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    pp->in_flight += c->n;
    pthread_cond_signal(&pp->work_cv);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    return failed ? fail_copy(pp, err) : 0;
}

static int check_lane(struct pes_parda *pp, uint32_t lane, struct pes_error *err)
{
    if (lane >= pp->n_lanes)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u out of range (%u lanes)", lane, pp->n_lanes);
    if (pp->lanes[lane].ended || pp->finished)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u has ended", lane);
    return 0;
}

int pes_parda_push(struct pes_parda *pp, uint32_t lane, const uint64_t *key, const uint32_t *tag, size_t n,
                   struct pes_error *err)
{
    if (check_lane(pp, lane, err) < 0)
        return -1;
    struct lane *l = &pp->lanes[lane];
    if (!l->est && !(l->est = calloc(1, sizeof *l->est)))
        return nomem(err, "estimate");
    est_add(l->est, key, n);
    l->pushed += n;
    pp->pushed += n;
    while (n) {
        int split_ok;
        uint64_t target = lane_target(pp, l, &split_ok);
        struct chunk *c = l->open;
        if (!c) {
            pthread_mutex_lock(&pp->mu);
            if ((c = pp->free_chunks)) {
                pp->free_chunks = c->next;
                pp->n_free--;
            }
            pthread_mutex_unlock(&pp->mu);
            if (!c && !(c = calloc(1, sizeof *c)))
                return nomem(err, "chunk");
            c->n = 0;
            l->open = c;
        }
        if (c->n >= target) {
            if (submit(pp, l, err) < 0)
                return -1;
            continue;
        }
        size_t m = target - c->n < n ? (size_t)(target - c->n) : n;
        if (c->n + m > c->cap) {
            size_t cap = c->cap ? c->cap : 4096;
            while (cap < c->n + m)
                cap *= 2;
            uint64_t *k = realloc(c->key, cap * sizeof *k);
            if (k)
                c->key = k;
            uint32_t *tg = NULL;
            if (pp->o.tagged && (tg = realloc(c->tag, cap * sizeof *tg)))
                c->tag = tg;
            if (!k || (pp->o.tagged && !tg))
                return nomem(err, "chunk");
            c->cap = cap;
        }
        memcpy(c->key + c->n, key, m * sizeof *key);
        if (pp->o.tagged)
            memcpy(c->tag + c->n, tag, m * sizeof *tag);
        c->n += m;
        key += m;
        if (pp->o.tagged)
            tag += m;
        n -= m;
        if (c->n >= target && submit(pp, l, err) < 0)
            return -1;
    }
    pthread_mutex_lock(&pp->mu);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    return failed ? fail_copy(pp, err) : 0;
}

/* Under mu: waits until the lane has nothing queued and nobody owns it. */
static void wait_lane_idle(struct pes_parda *pp, struct lane *l)
{
    while (l->head || l->busy)
        pthread_cond_wait(&pp->done_cv, &pp->mu);
}

int pes_parda_push_sync(struct pes_parda *pp, uint32_t lane, const uint64_t *key, const uint32_t *tag,
                        size_t n, uint64_t *dist, struct pes_error *err)
{
    if (check_lane(pp, lane, err) < 0)
        return -1;
    struct lane *l = &pp->lanes[lane];
    if (submit(pp, l, err) < 0)
        return -1;
    pthread_mutex_lock(&pp->mu);
    wait_lane_idle(pp, l);
    int failed = pp->failed;
    pthread_mutex_unlock(&pp->mu);
    if (failed)
        return fail_copy(pp, err);
    /* nothing queued and only this thread submits: the lane is ours */
    if (!l->g) {
        struct pes_reuse_options ro = pp->o.engine;
        if (!(l->g = pes_reuse_create(&ro, err)))
            return -1;
    }
    if (!l->est && !(l->est = calloc(1, sizeof *l->est)))
        return nomem(err, "estimate");
    est_add(l->est, key, n);
    l->pushed += n;
    pp->pushed += n;
    if (pes_reuse_push_keys(l->g, key, n, dist) < 0)
        return engine_error(l->g, err);
    return count(&l->res, dist, pp->o.tagged ? tag : NULL, n, 1, err);
}

int pes_parda_end_lane(struct pes_parda *pp, uint32_t lane, struct pes_error *err)
{
    if (lane >= pp->n_lanes)
        return pes_error_set(err, PES_ERR_ARG, 0, "parda: lane %u out of range (%u lanes)", lane, pp->n_lanes);
    struct lane *l = &pp->lanes[lane];
    if (l->ended)
        return 0;
    int rc = submit(pp, l, err);
    chunk_free(l->open);
    l->open = NULL;
    free(l->est);
    l->est = NULL;
    struct pes_reuse *drop = NULL;
    pthread_mutex_lock(&pp->mu);
    l->ended = 1;
    if (!l->head && !l->busy) {
        drop = l->g;
        l->g = NULL;
    }
    pthread_mutex_unlock(&pp->mu);
    pes_reuse_destroy(drop);
    return rc;
}

int pes_parda_sync(struct pes_parda *pp, struct pes_error *err)
{
    for (uint32_t i = 0; i < pp->n_lanes; i++)
        if (submit(pp, &pp->lanes[i], err) < 0)
            return -1;
    pthread_mutex_lock(&pp->mu);
    while (pp->in_flight && !(pp->failed && pp->n_threads == 0))
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
    for (struct chunk *c = pp->free_chunks, *nx; c; c = nx) {
        nx = c->next;
        chunk_free(c);
    }
    pp->free_chunks = NULL;
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
