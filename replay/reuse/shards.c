/* shards.c — SHARDS approximate reuse-distance histogram; see shards.h. */
#include "shards.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reuse_distance.h"

#define BUF       1024 /* sampled accesses collected before the engine runs */
#define MAX_S_MAX (UINT64_C(1) << 28)

/* ------------------------------------------------------------------ hash */

static inline uint64_t seed_offset(uint64_t seed)
{
    return pes_mix64(seed ^ UINT64_C(0x5348415244530000)); /* "SHARDS" */
}

/* Neighbouring line numbers are spread by the odd multiplier first (as a
 * splitmix64 stream steps its state) so the finaliser never sees inputs that
 * differ in a few low bits only. */
static inline uint64_t line_hash(uint64_t key, uint64_t off)
{
    return pes_mix64(key * UINT64_C(0x9E3779B97F4A7C15) + off) >> 8;
}

uint64_t pes_shards_hash(uint64_t key, uint64_t seed)
{
    return line_hash(key, seed_offset(seed));
}

/* ------------------------------------------------- weighted histogram */

/* Real-valued bins with pes_rd_hist's layout; weights are 1/R per access. */
struct whist {
    uint64_t exact_limit, exact_n;
    double *exact;
    double log2[PES_RD_HIST_LOG2_BINS];
    double cold, total, sum;
};

static int whist_add(struct whist *h, uint64_t d, double w)
{
    h->total += w;
    if (d == PES_REUSE_COLD) {
        h->cold += w;
        return 0;
    }
    h->sum += w * (double)d;
    if (d >= h->exact_limit) {
        h->log2[63 - __builtin_clzll(d)] += w;
        return 0;
    }
    if (d >= h->exact_n) {
        uint64_t n = h->exact_n ? h->exact_n : 16;
        while (n <= d)
            n *= 2;
        if (n > h->exact_limit)
            n = h->exact_limit;
        double *e = realloc(h->exact, n * sizeof *e);
        if (!e)
            return -1;
        for (uint64_t i = h->exact_n; i < n; i++)
            e[i] = 0;
        h->exact = e;
        h->exact_n = n;
    }
    h->exact[d] += w;
    return 0;
}

/* -------------------------------------- LRU stack that can forget a line */

/*
 * Fixed-size mode's engine. Same idea as reuse_distance.c (a mark on the
 * time slot of each line's latest access; distance = marks after the
 * previous access), simplified for a bounded line count: one Fenwick counter
 * per slot, a fixed-size open-addressing map with backward-shift deletion,
 * and a time axis of W >= 2 (s_max + 2) slots renumbered densely when full
 * (O(W) every >= W/2 accesses). Removing a line clears its mark, so it no
 * longer counts in anyone's distance — what the exact engine cannot do.
 */
struct lslot {
    uint64_t key;
    uint32_t time;
    uint32_t used;
};

struct lru {
    struct lslot *map;
    uint64_t mask;   /* map slots - 1 */
    uint32_t *fen;   /* 1-based Fenwick tree over W slots */
    uint64_t *owner; /* owner[t]: line whose latest access is at t */
    uint8_t *marked;
    uint64_t W, now, n;
};

static inline uint64_t lru_index(const struct lru *l, uint64_t key)
{
    return pes_mix64(key) & l->mask;
}

static struct lslot *lru_find(struct lru *l, uint64_t key)
{
    for (uint64_t i = lru_index(l, key);; i = (i + 1) & l->mask) {
        struct lslot *s = &l->map[i];
        if (!s->used)
            return NULL;
        if (s->key == key)
            return s;
    }
}

static void lru_delete_slot(struct lru *l, struct lslot *s)
{
    /* backward shift: move later entries of the probe run into the hole
     * when their home slot is not after it (cyclically) */
    uint64_t hole = (uint64_t)(s - l->map);
    for (uint64_t j = (hole + 1) & l->mask;; j = (j + 1) & l->mask) {
        struct lslot *t = &l->map[j];
        if (!t->used)
            break;
        uint64_t home = lru_index(l, t->key);
        if (((j - home) & l->mask) >= ((j - hole) & l->mask)) {
            l->map[hole] = *t;
            hole = j;
        }
    }
    l->map[hole].used = 0;
}

static inline void fen_add(struct lru *l, uint64_t t, int32_t v)
{
    for (uint64_t i = t + 1; i <= l->W; i += i & (~i + 1))
        l->fen[i] = (uint32_t)((int32_t)l->fen[i] + v);
}

/* marks at times <= t */
static inline uint64_t fen_prefix(const struct lru *l, uint64_t t)
{
    uint64_t s = 0;
    for (uint64_t i = t + 1; i; i &= i - 1)
        s += l->fen[i];
    return s;
}

static int lru_init(struct lru *l, uint64_t s_max)
{
    memset(l, 0, sizeof *l);
    uint64_t m = 16;
    while (m < 2 * (s_max + 2))
        m *= 2;
    l->mask = m - 1;
    l->W = m; /* >= 2 (s_max + 2) too */
    l->map = calloc(m, sizeof *l->map);
    l->fen = calloc(l->W + 1, sizeof *l->fen);
    l->owner = malloc(l->W * sizeof *l->owner);
    l->marked = calloc(l->W, 1);
    return l->map && l->fen && l->owner && l->marked ? 0 : -1;
}

static void lru_free(struct lru *l)
{
    free(l->map);
    free(l->fen);
    free(l->owner);
    free(l->marked);
}

static void lru_compact(struct lru *l)
{
    uint64_t j = 0;
    for (uint64_t t = 0; t < l->now; t++) {
        if (!l->marked[t])
            continue;
        l->marked[t] = 0;
        lru_find(l, l->owner[t])->time = (uint32_t)j;
        l->owner[j] = l->owner[t];
        l->marked[j++] = 1;
    }
    /* linear Fenwick build: j ones at the front */
    for (uint64_t i = 1; i <= l->W; i++)
        l->fen[i] = i <= j;
    for (uint64_t i = 1; i <= l->W; i++) {
        uint64_t p = i + (i & (~i + 1));
        if (p <= l->W)
            l->fen[p] += l->fen[i];
    }
    l->now = j;
}

/* Distance of an access to key (PES_REUSE_COLD for a new line). The caller
 * keeps the live lines below the map's capacity (s_max + 1). */
static uint64_t lru_access(struct lru *l, uint64_t key)
{
    if (l->now == l->W)
        lru_compact(l);
    struct lslot *s = lru_find(l, key);
    uint64_t d;
    if (s) {
        d = l->n - fen_prefix(l, s->time);
        fen_add(l, s->time, -1);
        l->marked[s->time] = 0;
    } else {
        d = PES_REUSE_COLD;
        uint64_t i = lru_index(l, key);
        while (l->map[i].used)
            i = (i + 1) & l->mask;
        s = &l->map[i];
        s->key = key;
        s->used = 1;
        l->n++;
    }
    s->time = (uint32_t)l->now;
    l->owner[l->now] = key;
    l->marked[l->now] = 1;
    fen_add(l, l->now, 1);
    l->now++;
    return d;
}

static void lru_remove(struct lru *l, uint64_t key)
{
    struct lslot *s = lru_find(l, key);
    if (!s)
        return;
    fen_add(l, s->time, -1);
    l->marked[s->time] = 0;
    lru_delete_slot(l, s);
    l->n--;
}

/* ------------------------------------------- max-heap of tracked lines */

struct hent {
    uint64_t h, key;
};

static void heap_push(struct hent *a, uint64_t *n, struct hent e)
{
    uint64_t i = (*n)++;
    while (i) {
        uint64_t p = (i - 1) / 2;
        if (a[p].h >= e.h)
            break;
        a[i] = a[p];
        i = p;
    }
    a[i] = e;
}

static struct hent heap_pop(struct hent *a, uint64_t *n)
{
    struct hent top = a[0], e = a[--*n];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && a[c + 1].h > a[c].h)
            c++;
        if (a[c].h <= e.h)
            break;
        a[i] = a[c];
        i = c;
    }
    if (*n)
        a[i] = e;
    return top;
}

/* ------------------------------------------------------------- object */

struct pes_shards {
    unsigned shift;
    uint64_t off;    /* seed offset */
    uint64_t T;      /* sample iff line_hash < T */
    double inv_rate; /* P / T: weight and distance scale */
    uint64_t s_max;
    int adjust;
    uint64_t accesses, sampled, evictions;
    struct pes_reuse *engine; /* fixed rate */
    struct lru lru;           /* fixed size */
    struct hent *heap;
    uint64_t heap_n;
    struct whist w;
    uint64_t nbuf;
    uint64_t buf[BUF], hbuf[BUF], dist[BUF];
    struct pes_error err;
};

static uint64_t rate_threshold(double rate);

static void set_rate(struct pes_shards *s, uint64_t T)
{
    s->T = T;
    s->inv_rate = (double)PES_SHARDS_MODULUS / (double)T;
}

struct pes_shards *pes_shards_create(const struct pes_shards_options *opt, struct pes_error *err)
{
    struct pes_shards_options o = {0};
    if (opt)
        o = *opt;
    if (!o.granule)
        o.granule = PES_REUSE_DEFAULT_GRANULE;
    if (o.granule & (o.granule - 1)) {
        pes_error_set(err, PES_ERR_ARG, 0, "shards: granule %u is not a power of two", o.granule);
        return NULL;
    }
    if (!(o.rate > 0 && o.rate <= 1)) {
        pes_error_set(err, PES_ERR_ARG, 0, "shards: sampling rate %g is not in (0, 1]", o.rate);
        return NULL;
    }
    if (o.s_max > MAX_S_MAX) {
        pes_error_set(err, PES_ERR_ARG, 0, "shards: s_max %llu too large (max 2^28)",
                      (unsigned long long)o.s_max);
        return NULL;
    }
    if (!o.exact_limit)
        o.exact_limit = PES_RD_HIST_DEFAULT_EXACT;
    struct pes_rd_hist probe;
    if (pes_rd_hist_init(&probe, o.exact_limit, err) < 0)
        return NULL;
    struct pes_shards *s = calloc(1, sizeof *s);
    if (!s) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "shards: out of memory");
        return NULL;
    }
    s->shift = (unsigned)__builtin_ctz(o.granule);
    s->off = seed_offset(o.seed);
    set_rate(s, rate_threshold(o.rate));
    s->s_max = o.s_max;
    s->adjust = !o.no_adjust;
    s->w.exact_limit = probe.exact_limit;
    if (o.s_max) {
        s->heap = malloc((o.s_max + 1) * sizeof *s->heap);
        if (!s->heap || lru_init(&s->lru, o.s_max) < 0)
            goto nomem;
    } else {
        double lines = o.rate * (double)o.expected_lines * 1.1 + 64;
        struct pes_reuse_options ro = {.granule = 1,
                                       .expected_keys = o.expected_lines ? (uint64_t)lines : 0};
        s->engine = pes_reuse_create(&ro, err);
        if (!s->engine) {
            pes_shards_destroy(s);
            return NULL;
        }
    }
    return s;
nomem:
    pes_shards_destroy(s);
    pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "shards: out of memory");
    return NULL;
}

void pes_shards_destroy(struct pes_shards *s)
{
    if (!s)
        return;
    pes_reuse_destroy(s->engine);
    if (s->s_max)
        lru_free(&s->lru);
    free(s->heap);
    free(s->w.exact);
    free(s);
}

static inline uint64_t scaled(const struct pes_shards *s, uint64_t d)
{
    if (d == PES_REUSE_COLD)
        return d;
    double x = nearbyint((double)d * s->inv_rate);
    return x >= 0x1p63 ? UINT64_C(1) << 63 : (uint64_t)x;
}

static int nomem(struct pes_shards *s)
{
    return pes_error_set(&s->err, PES_ERR_NOMEM, 0, "%s", "shards: out of memory");
}

/* Runs the buffered sampled accesses through the engine. */
static int flush(struct pes_shards *s)
{
    uint64_t n = s->nbuf;
    s->nbuf = 0;
    if (!n)
        return 0;
    if (s->engine) {
        if (pes_reuse_push_keys(s->engine, s->buf, n, s->dist) < 0) {
            s->err = *pes_reuse_error(s->engine);
            return -1;
        }
        s->sampled += n;
        for (uint64_t i = 0; i < n; i++)
            if (whist_add(&s->w, scaled(s, s->dist[i]), s->inv_rate) < 0)
                return nomem(s);
        return 0;
    }
    /* Fixed size: T may drop inside the buffer, so each access is checked
     * again against the current T before it counts. */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = s->hbuf[i], key = s->buf[i];
        if (h >= s->T)
            continue;
        s->sampled++;
        uint64_t d = lru_access(&s->lru, key);
        if (whist_add(&s->w, scaled(s, d), s->inv_rate) < 0)
            return nomem(s);
        if (d != PES_REUSE_COLD)
            continue;
        heap_push(s->heap, &s->heap_n, (struct hent){h, key});
        if (s->lru.n <= s->s_max)
            continue;
        /* SHARDS fixed size: drop the line with the largest hash and make
         * its hash the new threshold (also dropping any ties). */
        uint64_t T = s->heap[0].h;
        while (s->heap_n && s->heap[0].h >= T) {
            struct hent e = heap_pop(s->heap, &s->heap_n);
            lru_remove(&s->lru, e.key);
            s->evictions++;
        }
        set_rate(s, T ? T : 1);
    }
    return 0;
}

/* The filter: hash, compare, append the key to the buffer without a branch
 * (a rejected key's slot is overwritten by the next one). Locals keep nbuf
 * and T in registers: stores to buf[] could otherwise alias s->nbuf. */
static inline int filter(struct pes_shards *s, const uint64_t *in, size_t n, unsigned sh)
{
    const uint64_t off = s->off;
    uint64_t *buf = s->buf, *hbuf = s->hbuf;
    s->accesses += n;
    size_t i = 0;
    while (i < n) {
        const uint64_t T = s->T; /* flush may lower it (fixed size) */
        uint64_t nb = s->nbuf;
        for (; i < n && nb < BUF; i++) {
            uint64_t k = in[i] >> sh, h = line_hash(k, off);
            buf[nb] = k;
            hbuf[nb] = h;
            nb += h < T;
        }
        s->nbuf = nb;
        if (flush(s) < 0)
            return -1;
    }
    return 0;
}

int pes_shards_push_keys(struct pes_shards *s, const uint64_t *key, size_t n)
{
    return filter(s, key, n, 0);
}

int pes_shards_push_batch(struct pes_shards *s, const uint64_t *addr, size_t n)
{
    return filter(s, addr, n, s->shift);
}

int pes_shards_push(struct pes_shards *s, uint64_t addr)
{
    return pes_shards_push_batch(s, &addr, 1);
}

int pes_shards_skip(struct pes_shards *s, uint64_t n)
{
    if (s->s_max)
        return pes_error_set(&s->err, PES_ERR_ARG, 0, "%s",
                             "shards: accesses filtered before the estimator need a fixed rate");
    s->accesses += n;
    return 0;
}

/* The threshold of a rate, as pes_shards_create sets it. */
static uint64_t rate_threshold(double rate)
{
    double t = nearbyint(rate * (double)PES_SHARDS_MODULUS);
    return t < 1 ? 1 : (uint64_t)t;
}

int pes_shards_filter_init(struct pes_shards_filter *f, const struct pes_shards_options *o,
                           struct pes_error *err)
{
    uint32_t g = o->granule ? o->granule : PES_REUSE_DEFAULT_GRANULE;
    if ((g & (g - 1)) || !(o->rate > 0 && o->rate <= 1) || o->s_max)
        return pes_error_set(
            err, PES_ERR_ARG, 0, "%s",
            "shards: a record filter needs a fixed rate in (0, 1] and a power-of-two granule");
    f->shift = (unsigned)__builtin_ctz(g);
    f->off = seed_offset(o->seed);
    f->T = rate_threshold(o->rate);
    return 0;
}

/* Branch-free compaction, as in filter(): every record is written to the
 * next free slot, which only advances when the record is kept. */
size_t pes_shards_filter_records(const void *ctx, struct pes_record *rec, size_t n,
                                 uint64_t dropped[2])
{
    const struct pes_shards_filter *f = ctx;
    const uint64_t off = f->off, T = f->T;
    const unsigned sh = f->shift;
    size_t kept = 0;
    uint64_t writes_dropped = 0;
    for (size_t i = 0; i < n; i++) {
        struct pes_record r = rec[i];
        uint64_t keep = line_hash(r.addr >> sh, off) < T;
        rec[kept] = r;
        kept += keep;
        writes_dropped += (r.id == PES_TEXT_WRITE_SITE) & !keep;
    }
    dropped[PES_TEXT_WRITE_SITE] += writes_dropped;
    dropped[PES_TEXT_READ_SITE] += n - kept - writes_dropped;
    return kept;
}

int pes_shards_sampled(const struct pes_shards *s, uint64_t key)
{
    return line_hash(key, s->off) < s->T;
}

void pes_shards_stats(const struct pes_shards *s, struct pes_shards_stats *st)
{
    memset(st, 0, sizeof *st);
    st->accesses = s->accesses;
    st->sampled = s->sampled;
    st->lines = s->engine ? pes_reuse_distinct(s->engine) : s->lru.n;
    st->evictions = s->evictions;
    st->threshold = s->T;
    st->rate = (double)s->T / (double)PES_SHARDS_MODULUS;
    st->effective_rate = s->accesses ? (double)s->sampled / (double)s->accesses : 0;
    st->memory = sizeof *s + s->w.exact_n * sizeof(double);
    if (s->engine)
        st->memory += pes_reuse_memory(s->engine);
    else
        st->memory += (s->lru.mask + 1) * sizeof(struct lslot) +
                      s->lru.W * (sizeof(uint32_t) + sizeof(uint64_t) + 1) +
                      (s->s_max + 1) * sizeof(struct hent);
}

const struct pes_error *pes_shards_error(const struct pes_shards *s)
{
    return &s->err;
}

/* ------------------------------------------------------------- finish */

int pes_shards_finish(const struct pes_shards *s, struct pes_rd_hist *out, struct pes_error *err)
{
    const struct whist *w = &s->w;
    if (pes_rd_hist_init(out, w->exact_limit, err) < 0)
        return -1;
    /* Bins in distance order: exact, log2 (from exact_limit up), cold. */
    unsigned first_log = (unsigned)__builtin_ctzll(w->exact_limit);
    /* distance 0 always has a bin (the adjustment's), even if no exact bin
     * was touched */
    uint64_t n_exact = w->exact_n ? w->exact_n : 1;
    uint64_t nb = n_exact + (PES_RD_HIST_LOG2_BINS - first_log) + 1;
    double *bin = malloc(nb * sizeof *bin);
    uint64_t *dist = malloc(nb * sizeof *dist);
    if (!bin || !dist) {
        free(bin);
        free(dist);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "shards: out of memory");
    }
    uint64_t k = 0;
    for (uint64_t d = 0; d < n_exact; d++, k++) {
        bin[k] = d < w->exact_n ? w->exact[d] : 0;
        dist[k] = d;
    }
    for (unsigned b = first_log; b < PES_RD_HIST_LOG2_BINS; b++, k++) {
        bin[k] = w->log2[b];
        dist[k] = UINT64_C(1) << b;
    }
    bin[k] = w->cold; /* k: index of the last bin */
    dist[k] = PES_REUSE_COLD;
    double sum = w->sum;
    int exact_total = 0;
    if (s->adjust && s->accesses) {
        double diff = (double)s->accesses - w->total;
        if (diff >= 0) {
            bin[0] += diff;
            exact_total = 1;
        } else {
            /* too many sampled: take the excess from the shortest finite
             * distances first, never below zero */
            double need = -diff;
            for (uint64_t i = 0; i < k && need > 0; i++) {
                double take = bin[i] < need ? bin[i] : need;
                bin[i] -= take;
                need -= take;
                sum -= take * (double)dist[i];
            }
            exact_total = need <= 0;
        }
    }
    /* cumulative rounding (see shards.h): bin i gets round(prefix_i) -
     * round(prefix_{i-1}); the last is pinned to N when the total is known
     * to be N, so floating-point drift cannot make it N +- 1 */
    double cum = 0;
    uint64_t prev = 0;
    int rc = 0;
    for (uint64_t i = 0; i <= k && rc == 0; i++) {
        cum += bin[i] > 0 ? bin[i] : 0;
        uint64_t r = (uint64_t)llround(cum);
        if (i == k && exact_total)
            r = s->accesses;
        if (r < prev)
            r = prev;
        if (r > prev && pes_rd_hist_add_n(out, dist[i], r - prev) < 0)
            rc = -1;
        prev = r;
    }
    free(bin);
    free(dist);
    if (rc < 0) {
        pes_rd_hist_free(out);
        pes_rd_hist_clear(out);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "shards: out of memory");
    }
    out->sum = sum > 0 ? sum : 0;
    return 0;
}

/* ---------------------------------------------------------------- MRC */

double pes_shards_miss_ratio(const struct pes_rd_hist *h, uint64_t c)
{
    if (!h->total)
        return 0;
    return 1.0 - pes_rd_hist_below(h, c) / (double)h->total;
}

/* First and last exponent of the grid: 2^lo >= min_lines (at least 1),
 * 2^hi the first power of two >= max_lines (or ref->cold); hi >= lo. */
static void grid_range(const struct pes_rd_hist *ref, uint64_t min_lines, uint64_t max_lines,
                       unsigned *lo, unsigned *hi)
{
    uint64_t m = max_lines ? max_lines : ref->cold;
    unsigned a = 0, b = 0;
    while (a < 63 && (UINT64_C(1) << a) < min_lines)
        a++;
    while (b < 63 && (UINT64_C(1) << b) < m)
        b++;
    *lo = a;
    *hi = b > a ? b : a;
}

unsigned pes_shards_mrc_grid(const struct pes_rd_hist *ref, uint64_t min_lines, uint64_t max_lines)
{
    unsigned lo, hi;
    grid_range(ref, min_lines, max_lines, &lo, &hi);
    return hi - lo + 1;
}

double pes_shards_mrc_mae(const struct pes_rd_hist *ref, const struct pes_rd_hist *est,
                          uint64_t min_lines, uint64_t max_lines)
{
    unsigned lo, hi;
    grid_range(ref, min_lines, max_lines, &lo, &hi);
    double e = 0;
    for (unsigned i = lo; i <= hi; i++) {
        uint64_t c = UINT64_C(1) << i;
        e += fabs(pes_shards_miss_ratio(ref, c) - pes_shards_miss_ratio(est, c));
    }
    return e / (hi - lo + 1);
}
