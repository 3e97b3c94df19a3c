/* profiles.c — PRD per stream, CRD per shared cache; see profiles.h. */
#include "profiles.h"
#include "parda.h"
#include "reuse_distance.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pes_profiles {
    uint32_t n_streams, n_groups;
    unsigned shift;
    uint32_t *group_of;
    struct pes_reuse_options ro; /* engines are made on a stream's first access */
    struct pes_reuse **prd_eng, **crd_eng;
    struct pes_rd_hist *prd, *crd;
    uint8_t *ended; /* [n_streams] pes_profiles_end_stream was called */
    int per_site;
    /* site id -> row index, open addressing; rows in first-seen order */
    uint32_t *site_keys; /* id + 1, 0 = empty (ids < 2^32 - 1) */
    uint32_t *site_idx;
    uint64_t site_mask;
    struct pes_site_reuse *rows;
    size_t n_rows, cap_rows;
    uint32_t *flat; /* site id -> row + 1 (0 = none) for ids < n_flat */
    uint32_t n_flat;
    struct scratch *scratch; /* pes_profiles_push_batch */
    int one_group;           /* every stream in group 0 of exactly one */
    /* A group with a single stream has that stream's PRD as its CRD (the same
     * granules in the same order), so it gets no engine of its own. */
    uint32_t *alias;       /* [n_groups] its only stream, or UINT32_MAX */
    uint32_t *alias_group; /* [n_streams] group it stands for, or NO_GROUP */
    uint32_t n_crd_lanes;  /* groups with an engine of their own */
    /* threads > 1: lanes are streams 0..n_streams-1, then groups */
    struct pes_parda *pool;
    int failed; /* a worker failed; err kept for pes_profiles_sync */
    struct pes_error pool_err;
    uint64_t exact_limit; /* of every histogram (normalised) */
    struct split *split;  /* pes_profiles_split with ranks > 1, else NULL */
};

/*
 * A split over processes (profiles.h). Every process counts the accesses
 * pushed (pos) to know the window; rank 0 pushes its own windows into its
 * engines and absorbs the others' in window order, the others summarise
 * their windows lane by lane (parda.h local passes) and send them.
 *
 * Tags: the summaries of a window carry window tags (0, 1, ... in first use
 * within the window), and the message their site ids, because row indices
 * are numbered per process. Rank 0 makes a row for every access it sees,
 * its own windows or not, so its rows come in the same first-seen order as
 * without a split.
 */
struct split {
    struct pes_profiles_split o;
    uint64_t pos; /* accesses pushed so far (all windows) */
    int over;     /* pes_profiles_sync ended the stream */
    /* rank 0 */
    uint64_t next_absorb; /* first window not yet in the engines */
    struct pending_end {
        uint32_t stream;
        uint64_t window;
    } *ends; /* engines to free once absorbed */
    size_t n_ends, cap_ends;
    /* rank > 0: the current window's local passes */
    struct pes_parda_summarizer *z; /* [lanes] */
    struct pes_parda_summary *sum;  /* [lanes] */
    uint64_t *expect;               /* [lanes] distinct keys last time: sizing */
    uint32_t *open;                 /* lanes begun in this window, in order */
    uint32_t n_open;
    uint8_t *is_open;     /* [lanes] */
    uint32_t *tag_of_row; /* [cap_rows] window tag + 1, 0 = none yet */
    size_t cap_tag_of_row;
    uint32_t *row_of_tag; /* window tag -> row */
    uint32_t n_tags, cap_tags;
};

/*
 * Batch scratch, shared by all engines, so its size does not depend on the
 * number of streams: the granules of a batch in access order with their
 * stream, then grouped by stream (a stable counting sort) so each engine gets
 * its own granules in one run; the same for the shared caches' groups unless
 * every stream is in group 0, whose engine then takes the gathered order as
 * it is. Drained whenever SCRATCH_GRANULES are gathered, so a long range or a
 * large batch never needs more.
 */
#define SCRATCH_GRANULES 65536
struct scratch {
    uint64_t key[SCRATCH_GRANULES];
    uint32_t row[SCRATCH_GRANULES], stream[SCRATCH_GRANULES];
    uint64_t sorted_key[SCRATCH_GRANULES], dist[SCRATCH_GRANULES];
    uint32_t sorted_row[SCRATCH_GRANULES];
    size_t n;
    uint32_t *count;   /* [streams + groups] granules per lane, then run ends */
    uint32_t *touched; /* lanes with granules, in first-touch order */
    uint32_t n_touched;
};

static int split_create(struct pes_profiles *p, const struct pes_profiles_split *o,
                        struct pes_error *err);
static void split_destroy(struct pes_profiles *p);
static int split_push(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                      const uint32_t *size, const uint32_t *site, size_t n, struct pes_error *err);
static int split_feed(struct pes_profiles *p, uint32_t lane, const uint64_t *key,
                      const uint32_t *tags, size_t n, struct pes_error *err);
static uint32_t split_tag(struct pes_profiles *p, uint32_t row);
static int split_end_stream(struct pes_profiles *p, uint32_t stream, struct pes_error *err);
static int split_sync(struct pes_profiles *p, struct pes_error *err);

struct pes_profiles *pes_profiles_create(const struct pes_profiles_options *opt,
                                         struct pes_error *err)
{
    if (!opt || opt->n_streams == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "profiles: need at least one stream");
        return NULL;
    }
    struct pes_profiles *p = calloc(1, sizeof *p);
    if (!p)
        goto nomem;
    p->n_streams = opt->n_streams;
    p->n_groups = opt->n_groups;
    p->per_site = opt->per_site;
    p->group_of = malloc(p->n_streams * sizeof *p->group_of);
    p->prd_eng = calloc(p->n_streams, sizeof *p->prd_eng);
    p->prd = calloc(p->n_streams, sizeof *p->prd);
    p->crd_eng = calloc(p->n_groups + 1, sizeof *p->crd_eng);
    p->crd = calloc(p->n_groups + 1, sizeof *p->crd);
    p->ended = calloc(p->n_streams, 1);
    p->alias = malloc((p->n_groups + 1) * sizeof *p->alias);
    p->alias_group = malloc(p->n_streams * sizeof *p->alias_group);
    if (!p->group_of || !p->prd_eng || !p->prd || !p->crd_eng || !p->crd || !p->ended ||
        !p->alias || !p->alias_group)
        goto nomem;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        uint32_t g = opt->group_of ? opt->group_of[s] : 0;
        if (p->n_groups == 0)
            g = PES_PROFILES_NO_GROUP;
        if (g != PES_PROFILES_NO_GROUP && g >= p->n_groups) {
            pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u mapped to unknown group %u", s,
                          g);
            pes_profiles_destroy(p);
            return NULL;
        }
        p->group_of[s] = g;
    }
    p->one_group = p->n_groups == 1;
    for (uint32_t s = 0; s < p->n_streams; s++)
        if (p->group_of[s] != 0)
            p->one_group = 0;
    /* groups of one stream: alias[g] ends as that stream; UINT32_MAX - 1 marks
     * a second member */
    for (uint32_t g = 0; g < p->n_groups; g++)
        p->alias[g] = UINT32_MAX;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        uint32_t g = p->group_of[s];
        p->alias_group[s] = PES_PROFILES_NO_GROUP;
        if (g != PES_PROFILES_NO_GROUP)
            p->alias[g] = p->alias[g] == UINT32_MAX ? s : UINT32_MAX - 1;
    }
    for (uint32_t g = 0; g < p->n_groups; g++) {
        if (p->alias[g] == UINT32_MAX - 1)
            p->alias[g] = UINT32_MAX;
        if (p->alias[g] != UINT32_MAX)
            p->alias_group[p->alias[g]] = g;
        else
            p->n_crd_lanes++;
    }
    if (p->one_group && p->alias[0] != UINT32_MAX)
        p->one_group = 0;
    p->ro = (struct pes_reuse_options){
        .granule = opt->granule,
        .expected_keys = opt->expected_keys,
        .min_window = opt->min_window,
    };
    uint32_t threads = opt->threads;
    if (opt->split && opt->split->ranks > 1) {
        if (split_create(p, opt->split, err) < 0)
            goto fail;
        threads = 1; /* window summaries and absorption run on the caller's thread */
    }
    /* stream engines come with their first access; this one checks the options */
    struct pes_reuse *probe = pes_reuse_create(&p->ro, err);
    if (!probe)
        goto fail;
    p->shift = pes_reuse_granule_shift(probe);
    pes_reuse_destroy(probe);
    for (uint32_t s = 0; s < p->n_streams; s++)
        if (pes_rd_hist_init(&p->prd[s], opt->exact_limit, err) < 0)
            goto fail;
    for (uint32_t g = 0; g < p->n_groups; g++) {
        if (pes_rd_hist_init(&p->crd[g], opt->exact_limit, err) < 0)
            goto fail;
        if (p->alias[g] == UINT32_MAX && threads <= 1 &&
            !(p->crd_eng[g] = pes_reuse_create(&p->ro, err)))
            goto fail;
    }
    p->exact_limit = p->prd[0].exact_limit;
    if (threads > 1) {
        struct pes_parda_options po = {
            .threads = threads,
            .n_lanes = p->n_streams + p->n_groups,
            .engine = p->ro,
            .exact_limit = opt->exact_limit,
            .tagged = p->per_site,
            .chunk_fixed = opt->chunk,
        };
        if (!(p->pool = pes_parda_create(&po, err)))
            goto fail;
    }
    if (p->per_site) {
        p->site_mask = 255;
        p->site_keys = calloc(p->site_mask + 1, sizeof *p->site_keys);
        p->site_idx = calloc(p->site_mask + 1, sizeof *p->site_idx);
        if (!p->site_keys || !p->site_idx)
            goto nomem;
    }
    return p;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "profiles: out of memory");
fail:
    pes_profiles_destroy(p);
    return NULL;
}

void pes_profiles_destroy(struct pes_profiles *p)
{
    if (!p)
        return;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        if (p->prd_eng)
            pes_reuse_destroy(p->prd_eng[s]);
        if (p->prd)
            pes_rd_hist_free(&p->prd[s]);
    }
    for (uint32_t g = 0; g < p->n_groups; g++) {
        if (p->crd_eng)
            pes_reuse_destroy(p->crd_eng[g]);
        if (p->crd)
            pes_rd_hist_free(&p->crd[g]);
    }
    free(p->prd_eng);
    free(p->crd_eng);
    free(p->prd);
    free(p->crd);
    free(p->group_of);
    free(p->site_keys);
    free(p->site_idx);
    free(p->rows);
    free(p->flat);
    free(p->ended);
    free(p->alias);
    free(p->alias_group);
    pes_parda_destroy(p->pool);
    if (p->scratch) {
        free(p->scratch->count);
        free(p->scratch->touched);
        free(p->scratch);
    }
    split_destroy(p);
    free(p);
}

static uint64_t site_hash(uint32_t id, uint64_t mask)
{
    return pes_hash_fib(id, 32) & mask;
}

static int site_grow(struct pes_profiles *p)
{
    uint64_t nmask = p->site_mask * 2 + 1;
    uint32_t *keys = calloc(nmask + 1, sizeof *keys);
    uint32_t *idx = calloc(nmask + 1, sizeof *idx);
    if (!keys || !idx) {
        free(keys);
        free(idx);
        return -1;
    }
    for (uint64_t i = 0; i <= p->site_mask; i++) {
        if (!p->site_keys[i])
            continue;
        uint64_t j = site_hash(p->site_keys[i] - 1, nmask);
        while (keys[j])
            j = (j + 1) & nmask;
        keys[j] = p->site_keys[i];
        idx[j] = p->site_idx[i];
    }
    free(p->site_keys);
    free(p->site_idx);
    p->site_keys = keys;
    p->site_idx = idx;
    p->site_mask = nmask;
    return 0;
}

/* Site ids are small and dense (module id bases); below this a flat array
 * replaces the hash probe on the hot path. */
#define FLAT_SITES (UINT32_C(1) << 20)

static uint32_t site_row_slow(struct pes_profiles *p, uint32_t site);

/* Row index of a site, created on first sight; UINT32_MAX = out of memory. */
static inline __attribute__((always_inline)) uint32_t site_row_index(struct pes_profiles *p,
                                                                     uint32_t site)
{
    if (site < p->n_flat && p->flat[site])
        return p->flat[site] - 1;
    return site_row_slow(p, site);
}

static uint32_t site_row_slow(struct pes_profiles *p, uint32_t site)
{
    uint32_t id = site;
    if (site == UINT32_MAX)
        site = UINT32_MAX - 1; /* "unknown site" shares the top id's row */
    uint64_t i = site_hash(site, p->site_mask);
    uint32_t row = UINT32_MAX;
    while (p->site_keys[i]) {
        if (p->site_keys[i] == site + 1) {
            row = p->site_idx[i];
            goto found;
        }
        i = (i + 1) & p->site_mask;
    }
    if ((p->n_rows + 1) * 2 > p->site_mask + 1) {
        if (site_grow(p) < 0)
            return UINT32_MAX;
        i = site_hash(site, p->site_mask);
        while (p->site_keys[i])
            i = (i + 1) & p->site_mask;
    }
    if (p->n_rows == p->cap_rows) {
        size_t nc = p->cap_rows ? p->cap_rows * 2 : 64;
        struct pes_site_reuse *r = realloc(p->rows, nc * sizeof *r);
        if (!r)
            return UINT32_MAX;
        p->rows = r;
        p->cap_rows = nc;
    }
    p->site_keys[i] = site + 1;
    p->site_idx[i] = (uint32_t)p->n_rows;
    struct pes_site_reuse *r = &p->rows[p->n_rows++];
    memset(r, 0, sizeof *r);
    r->site = site;
    row = (uint32_t)(p->n_rows - 1);
found:
    if (id < FLAT_SITES) {
        if (id >= p->n_flat) {
            uint32_t nf = p->n_flat ? p->n_flat : 256;
            while (nf <= id)
                nf *= 2;
            uint32_t *f = realloc(p->flat, (size_t)nf * sizeof *f);
            if (!f)
                return row; /* the flat array is only a shortcut */
            memset(f + p->n_flat, 0, (size_t)(nf - p->n_flat) * sizeof *f);
            p->flat = f;
            p->n_flat = nf;
        }
        p->flat[id] = row + 1;
    }
    return row;
}

static struct pes_site_reuse *site_row(struct pes_profiles *p, uint32_t site)
{
    uint32_t r = site_row_index(p, site);
    return r == UINT32_MAX ? NULL : &p->rows[r];
}

/* The stream's engine, made on its first access; NULL with err filled. */
static struct pes_reuse *stream_engine(struct pes_profiles *p, uint32_t stream,
                                       struct pes_error *err)
{
    if (!p->prd_eng[stream])
        p->prd_eng[stream] = pes_reuse_create(&p->ro, err);
    return p->prd_eng[stream];
}

static int check_stream(const struct pes_profiles *p, uint32_t stream, struct pes_error *err)
{
    if (stream >= p->n_streams)
        return pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u out of range (%u streams)",
                             stream, p->n_streams);
    if (p->ended[stream])
        return pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u has ended", stream);
    return 0;
}

static int hist_nomem(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "profiles: out of memory");
}

static int pool_failed(struct pes_profiles *p, struct pes_error *err)
{
    if (!p->failed && err)
        p->pool_err = *err;
    p->failed = 1;
    return -1;
}

/* pes_profiles_push with distances wanted and threads: each granule waits for
 * its lanes' queued work and is pushed on this thread (slow; batches are the
 * threaded path). The per-site counts are kept by the lanes (tags). */
static int push_sync(struct pes_profiles *p, uint32_t stream, uint64_t first, uint64_t last,
                     uint32_t site, uint64_t *prd, uint64_t *crd, struct pes_error *err)
{
    uint32_t row = PES_PARDA_NO_TAG;
    if (p->per_site && (row = site_row_index(p, site)) == UINT32_MAX)
        return hist_nomem(err);
    uint32_t g = p->group_of[stream];
    for (uint64_t k = first;; k++) {
        uint64_t d, dc = PES_REUSE_COLD;
        if (pes_parda_push_sync(p->pool, stream, &k, &row, 1, &d, err) < 0)
            return pool_failed(p, err);
        if (g != PES_PROFILES_NO_GROUP && p->alias[g] != UINT32_MAX)
            dc = d;
        else if (g != PES_PROFILES_NO_GROUP &&
                 pes_parda_push_sync(p->pool, p->n_streams + g, &k, &row, 1, &dc, err) < 0)
            return pool_failed(p, err);
        if (k == first) {
            if (prd)
                *prd = d;
            if (crd)
                *crd = dc;
        }
        if (k == last)
            break;
    }
    return 0;
}

int pes_profiles_push(struct pes_profiles *p, uint32_t stream, uint64_t addr, uint32_t size,
                      uint32_t site, uint64_t *prd, uint64_t *crd, struct pes_error *err)
{
    if (prd)
        *prd = PES_REUSE_COLD;
    if (crd)
        *crd = PES_REUSE_COLD;
    if (check_stream(p, stream, err) < 0)
        return -1;
    if (p->split) {
        if (prd || crd)
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "profiles: distances of single accesses are not known in a split");
        return pes_profiles_push_batch(p, &stream, &addr, &size, &site, 1, err);
    }
    if (size == 0)
        return 0;
    uint64_t first = addr >> p->shift;
    uint64_t last_addr = addr + (size - 1);
    if (last_addr < addr)
        last_addr = UINT64_MAX; /* range wraps: clamp at the top of the space */
    uint64_t last = last_addr >> p->shift;
    uint32_t g = p->group_of[stream];
    if (p->pool) {
        if (!prd && !crd)
            return pes_profiles_push_batch(p, &stream, &addr, &size, &site, 1, err);
        return push_sync(p, stream, first, last, site, prd, crd, err);
    }
    struct pes_site_reuse *row = NULL;
    if (p->per_site && !(row = site_row(p, site)))
        return hist_nomem(err);
    struct pes_reuse *eng = stream_engine(p, stream, err);
    if (!eng)
        return -1;
    for (uint64_t k = first;; k++) {
        uint64_t d;
        if (pes_reuse_push_key(eng, k, &d) < 0) {
            if (err)
                *err = *pes_reuse_error(eng);
            return -1;
        }
        if (pes_rd_hist_add(&p->prd[stream], d) < 0)
            return hist_nomem(err);
        if (prd && k == first)
            *prd = d;
        if (row) {
            row->accesses++;
            if (d == PES_REUSE_COLD)
                row->prd_cold++;
            else
                row->prd_sum += (double)d;
        }
        if (g != PES_PROFILES_NO_GROUP) {
            /* a group of this stream alone: its CRD is this stream's PRD (d) */
            if (p->alias[g] == UINT32_MAX) {
                if (pes_reuse_push_key(p->crd_eng[g], k, &d) < 0) {
                    if (err)
                        *err = *pes_reuse_error(p->crd_eng[g]);
                    return -1;
                }
                if (pes_rd_hist_add(&p->crd[g], d) < 0)
                    return hist_nomem(err);
            }
            if (crd && k == first)
                *crd = d;
            if (row) {
                if (d == PES_REUSE_COLD)
                    row->crd_cold++;
                else
                    row->crd_sum += (double)d;
            }
        }
        if (k == last)
            break;
    }
    return 0;
}

int pes_profiles_end_stream(struct pes_profiles *p, uint32_t stream, struct pes_error *err)
{
    if (stream >= p->n_streams)
        return pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u out of range (%u streams)",
                             stream, p->n_streams);
    if (p->split)
        return split_end_stream(p, stream, err);
    pes_reuse_destroy(p->prd_eng[stream]);
    p->prd_eng[stream] = NULL;
    if (p->pool && !p->ended[stream] && pes_parda_end_lane(p->pool, stream, err) < 0) {
        p->ended[stream] = 1;
        return pool_failed(p, err);
    }
    p->ended[stream] = 1;
    return 0;
}

/* A lane's per-tag counts into a site row: a PRD lane's as PRD figures, a CRD
 * lane's (or a PRD lane that is also its group's CRD) as CRD figures. */
static void add_tag_counts(struct pes_site_reuse *row, const struct pes_parda_tag_count *tc,
                           int prd, int both)
{
    if (prd) {
        row->accesses += tc->accesses;
        row->prd_cold += tc->cold;
        row->prd_sum += (double)tc->sum;
    }
    if (!prd || both) {
        row->crd_cold += tc->cold;
        row->crd_sum += (double)tc->sum;
    }
}

/* threads: the lanes' counts into the histograms and rows (from scratch, so
 * it can run after every sync). Distance sums are integers, exact in a double
 * below 2^53, so adding them per lane gives the sequential values. */
static int collect(struct pes_profiles *p, struct pes_error *err)
{
    for (uint32_t l = 0; l < p->n_streams + p->n_groups; l++) {
        int prd = l < p->n_streams;
        if (!prd && p->alias[l - p->n_streams] != UINT32_MAX)
            continue;
        struct pes_rd_hist *h = prd ? &p->prd[l] : &p->crd[l - p->n_streams];
        pes_rd_hist_clear(h);
        if (pes_rd_hist_merge(h, &pes_parda_result(p->pool, l)->hist) < 0)
            return hist_nomem(err);
    }
    if (!p->per_site)
        return 0;
    for (size_t r = 0; r < p->n_rows; r++) {
        struct pes_site_reuse *row = &p->rows[r];
        row->accesses = row->prd_cold = row->crd_cold = 0;
        row->prd_sum = row->crd_sum = 0;
    }
    for (uint32_t l = 0; l < p->n_streams + p->n_groups; l++) {
        const struct pes_parda_counts *c = pes_parda_result(p->pool, l);
        int prd = l < p->n_streams, both = prd && p->alias_group[l] != PES_PROFILES_NO_GROUP;
        for (uint32_t t = 0; t < c->n_tags && t < p->n_rows; t++) {
            add_tag_counts(&p->rows[t], &c->tag[t], prd, both);
        }
    }
    return 0;
}

int pes_profiles_sync(struct pes_profiles *p, struct pes_error *err)
{
    if (p->failed) {
        if (err)
            *err = p->pool_err;
        return -1;
    }
    if (p->split)
        return split_sync(p, err);
    if (!p->pool)
        return 0;
    if (pes_parda_sync(p->pool, err) < 0)
        return pool_failed(p, err);
    return collect(p, err);
}

void pes_profiles_finish(struct pes_profiles *p)
{
    if (p->pool) {
        struct pes_error e = {0};
        if (pes_parda_finish(p->pool, &e) < 0 || collect(p, &e) < 0)
            pool_failed(p, &e);
        pes_parda_destroy(p->pool);
        p->pool = NULL;
    }
    for (uint32_t s = 0; s < p->n_streams; s++) {
        pes_reuse_destroy(p->prd_eng[s]);
        p->prd_eng[s] = NULL;
        p->ended[s] = 1;
    }
    split_destroy(p);
    for (uint32_t g = 0; g < p->n_groups; g++) {
        pes_reuse_destroy(p->crd_eng[g]);
        p->crd_eng[g] = NULL;
    }
    if (p->scratch) {
        free(p->scratch->count);
        free(p->scratch->touched);
        free(p->scratch);
        p->scratch = NULL;
    }
}

/* Pushes one lane's run of granules through its engine; prd selects which
 * per-site fields count. */
static int lane_drain(struct pes_profiles *p, uint32_t lane, const uint64_t *key, uint64_t *dist,
                      const uint32_t *rows, size_t n, struct pes_error *err)
{
    int prd = lane < p->n_streams;
    if (p->split && p->split->o.rank != 0)
        return split_feed(p, lane, key, p->per_site ? rows : NULL, n, err);
    if (p->pool) {
        if (pes_parda_push(p->pool, lane, key, p->per_site ? rows : NULL, n, err) < 0)
            return pool_failed(p, err);
        return 0;
    }
    int both = prd && p->alias_group[lane] != PES_PROFILES_NO_GROUP; /* also the group's CRD */
    struct pes_reuse *eng = prd ? stream_engine(p, lane, err) : p->crd_eng[lane - p->n_streams];
    struct pes_rd_hist *h = prd ? &p->prd[lane] : &p->crd[lane - p->n_streams];
    if (!eng)
        return -1;
    if (pes_reuse_push_keys(eng, key, n, dist) < 0) {
        if (err)
            *err = *pes_reuse_error(eng);
        return -1;
    }
    /* pes_rd_hist_add inlined, with the counters in registers (the exact
     * bins could alias them in memory); the same additions in the same order. */
    uint64_t *exact = h->exact, have = h->exact_n, lim = h->exact_limit, cold = 0;
    double sum = h->sum;
    h->total += n;
    for (size_t j = 0; j < n; j++) {
        uint64_t d = dist[j];
        struct pes_site_reuse *row = p->per_site ? &p->rows[rows[j]] : NULL;
        if (row && prd)
            row->accesses++;
        if (d == PES_REUSE_COLD) {
            cold++;
            if (row && prd)
                row->prd_cold++;
            if (row && (!prd || both))
                row->crd_cold++;
            continue;
        }
        sum += (double)d;
        if (d < have) {
            exact[d]++;
        } else if (d < lim) {
            if (pes_rd_hist_reserve(h, d) < 0) {
                h->cold += cold;
                h->sum = sum;
                return hist_nomem(err);
            }
            exact = h->exact;
            have = h->exact_n;
            exact[d]++;
        } else {
            h->log2[63 - __builtin_clzll(d)]++;
        }
        if (row && prd)
            row->prd_sum += (double)d;
        if (row && (!prd || both))
            row->crd_sum += (double)d;
    }
    h->cold += cold;
    h->sum = sum;
    return 0;
}

/* The lane (engine) of gathered granule j: its stream's PRD, or with
 * by_group its stream's shared-cache group (UINT32_MAX: none). */
static inline uint32_t lane_of(const struct pes_profiles *p, const struct scratch *sc, size_t j,
                               int by_group)
{
    uint32_t s = sc->stream[j];
    if (!by_group)
        return s;
    uint32_t g = p->group_of[s];
    return g == PES_PROFILES_NO_GROUP || p->alias[g] != UINT32_MAX ? UINT32_MAX : p->n_streams + g;
}

/* Drains the gathered granules into the stream engines (by_group 0) or the
 * group engines (1). With one lane, in place; otherwise a stable counting
 * sort makes one run per lane, in access order. */
static int drain_lanes(struct pes_profiles *p, int by_group, struct pes_error *err)
{
    struct scratch *sc = p->scratch;
    if (by_group) {
        sc->n_touched = 0;
        for (size_t j = 0; j < sc->n; j++) {
            uint32_t l = lane_of(p, sc, j, 1);
            if (l != UINT32_MAX && sc->count[l]++ == 0)
                sc->touched[sc->n_touched++] = l;
        }
    }
    int rc = 0;
    if (sc->n_touched == 1 && sc->count[sc->touched[0]] == sc->n) {
        uint32_t l = sc->touched[0];
        sc->count[l] = 0;
        return lane_drain(p, l, sc->key, sc->dist, sc->row, sc->n, err);
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < sc->n_touched; i++) {
        uint32_t l = sc->touched[i], c = sc->count[l];
        sc->count[l] = at;
        at += c;
    }
    for (size_t j = 0; j < sc->n; j++) {
        uint32_t l = lane_of(p, sc, j, by_group);
        if (l == UINT32_MAX)
            continue;
        uint32_t to = sc->count[l]++;
        sc->sorted_key[to] = sc->key[j];
        sc->sorted_row[to] = sc->row[j];
    }
    uint32_t from = 0;
    for (uint32_t i = 0; i < sc->n_touched; i++) {
        uint32_t l = sc->touched[i], end = sc->count[l];
        sc->count[l] = 0;
        if (rc == 0 && lane_drain(p, l, sc->sorted_key + from, sc->dist + from,
                                  sc->sorted_row + from, end - from, err) < 0)
            rc = -1;
        from = end;
    }
    return rc;
}

/* Drains everything gathered: the PRD engines, then the CRD engines. */
static int scratch_drain(struct pes_profiles *p, struct pes_error *err)
{
    struct scratch *sc = p->scratch;
    int rc = drain_lanes(p, 0, err);
    if (rc == 0 && p->one_group)
        rc = lane_drain(p, p->n_streams, sc->key, sc->dist, sc->row, sc->n, err);
    else if (rc == 0 && p->n_crd_lanes)
        rc = drain_lanes(p, 1, err);
    sc->n = 0;
    sc->n_touched = 0;
    return rc;
}

/* One granule of stream s, gathered in access order. */
static inline void scratch_put(struct scratch *sc, uint32_t s, uint64_t key, uint32_t row)
{
    if (sc->count[s]++ == 0)
        sc->touched[sc->n_touched++] = s;
    sc->key[sc->n] = key;
    sc->row[sc->n] = row;
    sc->stream[sc->n++] = s;
}

/* Gathers n accesses into the scratch and drains it into the engines (or,
 * on a split's rank > 0, the window's local passes). */
static int gather(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                  const uint32_t *size, const uint32_t *site, size_t n, struct pes_error *err);

int pes_profiles_push_batch(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                            const uint32_t *size, const uint32_t *site, size_t n,
                            struct pes_error *err)
{
    const uint32_t n_streams = p->n_streams;
    const uint8_t *ended = p->ended;
    uint8_t bad = 0; /* one branch per batch: the error path finds the access */
    for (size_t i = 0; i < n; i++)
        bad |= (uint8_t)(stream[i] >= n_streams || ended[stream[i] < n_streams ? stream[i] : 0]);
    for (size_t i = 0; bad && i < n; i++)
        if (check_stream(p, stream[i], err) < 0)
            return -1;
    uint32_t n_lanes = p->n_streams + p->n_groups;
    if (!p->scratch) {
        if (!(p->scratch = malloc(sizeof *p->scratch)))
            return hist_nomem(err);
        p->scratch->count = calloc(n_lanes, sizeof *p->scratch->count);
        p->scratch->touched = malloc(n_lanes * sizeof *p->scratch->touched);
        p->scratch->n = 0;
        p->scratch->n_touched = 0;
        if (!p->scratch->count || !p->scratch->touched) {
            free(p->scratch->count);
            free(p->scratch->touched);
            free(p->scratch);
            p->scratch = NULL;
            return hist_nomem(err);
        }
    }
    return p->split ? split_push(p, stream, addr, size, site, n, err)
                    : gather(p, stream, addr, size, site, n, err);
}

/* gather for one stream whose shared cache is itself or absent (a text
 * trace, a one-thread run): the granules go to one lane in access order, so
 * the per-granule lane bookkeeping and stream column are not needed; the
 * drain sees the one lane it would have counted. */
static int gather_one(struct pes_profiles *p, const uint64_t *addr, const uint32_t *size,
                      const uint32_t *site, size_t n, struct pes_error *err)
{
    struct scratch *sc = p->scratch;
    const unsigned shift = p->shift;
    const uint64_t gmask = (UINT64_C(1) << shift) - 1;
    uint64_t *key = sc->key;
    uint32_t *rows = sc->row;
    size_t m = sc->n;
    /* in locals: the stores to key[] and rows[] could alias p's fields */
    const int per_site = p->per_site;
    uint32_t last_site = UINT32_MAX, last_row = 0; /* loops repeat their sites */
    for (size_t i = 0; i < n; i++) {
        uint32_t sz = size[i];
        if (sz == 0)
            continue;
        uint32_t row = 0;
        if (per_site) {
            if (site[i] != last_site || last_site == UINT32_MAX) {
                if ((last_row = site_row_index(p, site[i])) == UINT32_MAX) {
                    sc->n = 0;
                    return hist_nomem(err);
                }
                last_site = site[i];
            }
            row = last_row;
        }
        uint64_t a = addr[i];
        uint64_t first = a >> shift, last = first;
        if ((a & gmask) + sz - 1 > gmask) { /* more than one granule */
            uint64_t last_addr = a + (sz - 1);
            last = (last_addr < a ? UINT64_MAX : last_addr) >> shift;
        }
        for (uint64_t k = first;; k++) {
            key[m] = k;
            rows[m++] = row;
            if (m == SCRATCH_GRANULES) {
                sc->n = m;
                sc->count[0] = (uint32_t)m;
                sc->touched[0] = 0;
                sc->n_touched = 1;
                if (scratch_drain(p, err) < 0)
                    return -1;
                m = 0;
            }
            if (k == last)
                break;
        }
    }
    sc->n = m;
    sc->count[0] = (uint32_t)m;
    sc->touched[0] = 0;
    sc->n_touched = m ? 1 : 0;
    return scratch_drain(p, err);
}

static int gather(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                  const uint32_t *size, const uint32_t *site, size_t n, struct pes_error *err)
{
    if (p->n_streams == 1 && !p->split && (p->one_group || !p->n_crd_lanes))
        return gather_one(p, addr, size, site, n, err);
    /* Gather: granules in access order, so each engine sees its own order and
     * site rows are created in first-seen order, as with single pushes. Sums
     * of integer distances are exact in a double, so their order is free. */
    struct scratch *sc = p->scratch;
    const unsigned shift = p->shift;
    const uint64_t gmask = (UINT64_C(1) << shift) - 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t sz = size[i];
        if (sz == 0)
            continue;
        uint32_t s = stream[i];
        uint32_t row = 0;
        if (p->per_site && (row = site_row_index(p, site[i])) == UINT32_MAX)
            goto nomem;
        if (p->per_site && p->split && p->split->o.rank != 0 &&
            (row = split_tag(p, row)) == UINT32_MAX)
            goto nomem;
        uint64_t a = addr[i];
        uint64_t first = a >> shift, last = first;
        if ((a & gmask) + sz - 1 > gmask) { /* more than one granule */
            uint64_t last_addr = a + (sz - 1);
            if (last_addr < a)
                last_addr = UINT64_MAX;
            last = last_addr >> shift;
        }
        for (uint64_t k = first;; k++) {
            scratch_put(sc, s, k, row);
            if (sc->n == SCRATCH_GRANULES && scratch_drain(p, err) < 0)
                return -1;
            if (k == last)
                break;
        }
    }
    return scratch_drain(p, err);
nomem:
    for (uint32_t i = 0; i < sc->n_touched; i++)
        sc->count[sc->touched[i]] = 0;
    sc->n = 0;
    sc->n_touched = 0;
    return hist_nomem(err);
}

uint32_t pes_profiles_streams(const struct pes_profiles *p)
{
    return p->n_streams;
}
uint32_t pes_profiles_groups(const struct pes_profiles *p)
{
    return p->n_groups;
}

const struct pes_rd_hist *pes_profiles_prd(const struct pes_profiles *p, uint32_t stream)
{
    return stream < p->n_streams ? &p->prd[stream] : NULL;
}

const struct pes_rd_hist *pes_profiles_crd(const struct pes_profiles *p, uint32_t group)
{
    if (group >= p->n_groups)
        return NULL;
    return p->alias[group] != UINT32_MAX ? &p->prd[p->alias[group]] : &p->crd[group];
}

int pes_profiles_prd_total(const struct pes_profiles *p, struct pes_rd_hist *out)
{
    for (uint32_t s = 0; s < p->n_streams; s++)
        if (pes_rd_hist_merge(out, &p->prd[s]) < 0)
            return -1;
    return 0;
}

const struct pes_site_reuse *pes_profiles_sites(const struct pes_profiles *p, size_t *n)
{
    *n = p->n_rows;
    return p->rows;
}

/* ------------------------------------------------------------ split */

#define WINDOW_MAGIC UINT64_C(0x314e4957534f5250) /* "PROSWIN1" read little-endian */

static int split_nomem(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "profiles: out of memory (window summaries)");
}

static int split_create(struct pes_profiles *p, const struct pes_profiles_split *o,
                        struct pes_error *err)
{
    if (o->rank >= o->ranks || o->window == 0 || (o->rank == 0 && !o->recv) ||
        (o->rank != 0 && !o->send))
        return pes_error_set(
            err, PES_ERR_ARG, 0,
            "profiles: bad split (rank %u of %u, window %llu, or a missing send/recv)", o->rank,
            o->ranks, (unsigned long long)o->window);
    struct split *sp = calloc(1, sizeof *sp);
    if (!sp)
        return split_nomem(err);
    p->split = sp;
    sp->o = *o;
    uint32_t lanes = p->n_streams + p->n_groups;
    if (o->rank != 0) {
        sp->z = calloc(lanes, sizeof *sp->z);
        sp->sum = calloc(lanes, sizeof *sp->sum);
        sp->expect = calloc(lanes, sizeof *sp->expect);
        sp->open = malloc(lanes * sizeof *sp->open);
        sp->is_open = calloc(lanes, 1);
        if (!sp->z || !sp->sum || !sp->expect || !sp->open || !sp->is_open)
            return split_nomem(err);
    }
    return 0;
}

/* Drops the local passes of the current window (rank > 0). */
static void split_drop_window(struct split *sp)
{
    for (uint32_t i = 0; i < sp->n_open; i++) {
        uint32_t l = sp->open[i];
        if (sp->z[l].e)
            pes_parda_summarizer_abort(&sp->z[l]);
        pes_parda_summary_free(&sp->sum[l]);
        sp->is_open[l] = 0;
    }
    sp->n_open = 0;
    for (uint32_t t = 0; t < sp->n_tags; t++)
        sp->tag_of_row[sp->row_of_tag[t]] = 0;
    sp->n_tags = 0;
}

static void split_destroy(struct pes_profiles *p)
{
    struct split *sp = p->split;
    if (!sp)
        return;
    if (sp->open)
        split_drop_window(sp);
    free(sp->z);
    free(sp->sum);
    free(sp->expect);
    free(sp->open);
    free(sp->is_open);
    free(sp->tag_of_row);
    free(sp->row_of_tag);
    free(sp->ends);
    free(sp);
    p->split = NULL;
}

/* rank > 0: the window tag of a site row, made on its first use in the
 * window; UINT32_MAX = out of memory. */
static uint32_t split_tag(struct pes_profiles *p, uint32_t row)
{
    struct split *sp = p->split;
    if (row >= sp->cap_tag_of_row) {
        size_t nc = sp->cap_tag_of_row ? sp->cap_tag_of_row : 256;
        while (nc <= row)
            nc *= 2;
        uint32_t *t = realloc(sp->tag_of_row, nc * sizeof *t);
        if (!t)
            return UINT32_MAX;
        memset(t + sp->cap_tag_of_row, 0, (nc - sp->cap_tag_of_row) * sizeof *t);
        sp->tag_of_row = t;
        sp->cap_tag_of_row = nc;
    }
    if (sp->tag_of_row[row])
        return sp->tag_of_row[row] - 1;
    if (sp->n_tags == sp->cap_tags) {
        uint32_t nc = sp->cap_tags ? sp->cap_tags * 2 : 256;
        uint32_t *r = realloc(sp->row_of_tag, (size_t)nc * sizeof *r);
        if (!r)
            return UINT32_MAX;
        sp->row_of_tag = r;
        sp->cap_tags = nc;
    }
    sp->row_of_tag[sp->n_tags] = row;
    sp->tag_of_row[row] = ++sp->n_tags;
    return sp->n_tags - 1;
}

/* rank > 0: a lane's granules of the current window into its local pass. */
static int split_feed(struct pes_profiles *p, uint32_t lane, const uint64_t *key,
                      const uint32_t *tags, size_t n, struct pes_error *err)
{
    struct split *sp = p->split;
    if (!sp->is_open[lane]) {
        if (pes_parda_summarizer_begin(&sp->z[lane], &sp->sum[lane], &p->ro, sp->expect[lane],
                                       p->exact_limit, err) < 0)
            return -1;
        sp->is_open[lane] = 1;
        sp->open[sp->n_open++] = lane;
    }
    return pes_parda_summarizer_feed(&sp->z[lane], key, tags, n, err);
}

/* Message of a window (rank > 0), host order:
 *   magic u64, window u64, lanes u32 (streams + groups), n_tags u32,
 *   n_present u32, 0 u32, site[n_tags] u32,
 *   n_present x { lane u32, 0 u32, bytes u64, pes_parda_summary_pack }. */
static int split_send_window(struct pes_profiles *p, uint64_t w, struct pes_error *err)
{
    struct split *sp = p->split;
    int rc = -1;
    unsigned char *buf = NULL;
    size_t len = 8 + 8 + 4 * 4 + (size_t)sp->n_tags * 4;
    for (uint32_t i = 0; i < sp->n_open; i++) {
        uint32_t l = sp->open[i];
        if (pes_parda_summarizer_end(&sp->z[l], err) < 0)
            goto out;
        sp->expect[l] = sp->sum[l].n_distinct;
        len += 16 + pes_parda_summary_packed_size(&sp->sum[l]);
    }
    if (!(buf = malloc(len))) {
        split_nomem(err);
        goto out;
    }
    unsigned char *at = buf;
    uint32_t head[4] = {p->n_streams + p->n_groups, sp->n_tags, sp->n_open, 0};
    memcpy(at, &(uint64_t){WINDOW_MAGIC}, 8);
    memcpy(at + 8, &w, 8);
    memcpy(at + 16, head, sizeof head);
    at += 32;
    for (uint32_t t = 0; t < sp->n_tags; t++, at += 4)
        memcpy(at, &p->rows[sp->row_of_tag[t]].site, 4);
    for (uint32_t i = 0; i < sp->n_open; i++) {
        uint32_t l = sp->open[i];
        uint64_t bytes = pes_parda_summary_packed_size(&sp->sum[l]);
        uint32_t lane[2] = {l, 0};
        memcpy(at, lane, 8);
        memcpy(at + 8, &bytes, 8);
        at += 16;
        at += pes_parda_summary_pack(&sp->sum[l], at, (size_t)bytes);
    }
    rc = sp->o.send(sp->o.ctx, w, buf, len, err);
    buf = NULL;
out:
    free(buf);
    split_drop_window(sp);
    return rc;
}

/* A window's counts of one lane into its histogram and the site rows
 * (row[t]: the row of window tag t). */
static int split_count(struct pes_profiles *p, uint32_t lane, const struct pes_parda_counts *c,
                       const uint32_t *row, uint32_t n_tags, struct pes_error *err)
{
    int prd = lane < p->n_streams, both = prd && p->alias_group[lane] != PES_PROFILES_NO_GROUP;
    if (pes_rd_hist_merge(prd ? &p->prd[lane] : &p->crd[lane - p->n_streams], &c->hist) < 0)
        return hist_nomem(err);
    if (!p->per_site)
        return 0;
    if (c->n_tags > n_tags)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "profiles: window summary with an unknown tag");
    for (uint32_t t = 0; t < c->n_tags; t++) {
        add_tag_counts(&p->rows[row[t]], &c->tag[t], prd, both);
    }
    return 0;
}

/* rank 0: resolves window w's message against the engines (every earlier
 * window is in them); `last`: no window follows, so the engines need not be
 * brought up to date (one push per distinct granule instead of two). */
static int split_absorb(struct pes_profiles *p, uint64_t w, const unsigned char *buf, size_t len,
                        int last, struct pes_error *err)
{
    const uint32_t lanes = p->n_streams + p->n_groups;
    uint64_t magic, win;
    uint32_t head[4];
    if (len < 32)
        goto bad;
    memcpy(&magic, buf, 8);
    memcpy(&win, buf + 8, 8);
    memcpy(head, buf + 16, sizeof head);
    if (magic != WINDOW_MAGIC || win != w || head[0] != lanes || (!p->per_site && head[1]))
        return pes_error_set(
            err, PES_ERR_FORMAT, 0,
            "profiles: window %llu: a message of another window or another stream layout",
            (unsigned long long)w);
    uint32_t n_tags = head[1], n_present = head[2];
    const unsigned char *at = buf + 32, *end = buf + len;
    if ((size_t)(end - at) / 4 < n_tags)
        goto bad;
    uint32_t *row = malloc((n_tags ? n_tags : 1) * sizeof *row);
    if (!row)
        return split_nomem(err);
    int rc = -1;
    for (uint32_t t = 0; t < n_tags; t++, at += 4) {
        uint32_t site;
        memcpy(&site, at, 4);
        if ((row[t] = site_row_index(p, site)) == UINT32_MAX) {
            hist_nomem(err);
            goto out;
        }
    }
    for (uint32_t i = 0; i < n_present; i++) {
        uint32_t lane[2];
        uint64_t bytes;
        if (end - at < 16) {
            pes_error_set(err, PES_ERR_FORMAT, 0, "profiles: window %llu: message truncated",
                          (unsigned long long)w);
            goto out;
        }
        memcpy(lane, at, 8);
        memcpy(&bytes, at + 8, 8);
        at += 16;
        uint32_t l = lane[0];
        if (l >= lanes || (l >= p->n_streams && p->alias[l - p->n_streams] != UINT32_MAX) ||
            bytes > (uint64_t)(end - at)) {
            pes_error_set(err, PES_ERR_FORMAT, 0, "profiles: window %llu: bad lane %u or length",
                          (unsigned long long)w, l);
            goto out;
        }
        struct pes_parda_summary s;
        if (pes_parda_summary_unpack(&s, at, (size_t)bytes, err) < 0)
            goto out;
        at += bytes;
        int ok = s.local.n_tags <= n_tags && (!p->per_site || s.pending_tag || !s.n_distinct);
        for (uint64_t k = 0; ok && s.pending_tag && k < s.n_distinct; k++)
            ok = s.pending_tag[k] < n_tags;
        struct pes_parda_counts c;
        struct pes_reuse *g =
            l < p->n_streams ? stream_engine(p, l, err) : p->crd_eng[l - p->n_streams];
        int step = -1;
        if (!ok)
            pes_error_set(err, PES_ERR_FORMAT, 0, "profiles: window %llu: bad tags in lane %u",
                          (unsigned long long)w, l);
        else if (g && pes_parda_counts_init(&c, p->exact_limit, err) == 0) {
            if (pes_parda_resolve(g, &s, last, &c, err) == 0)
                step = split_count(p, l, &c, row, n_tags, err);
            pes_parda_counts_free(&c);
        }
        pes_parda_summary_free(&s);
        if (step < 0)
            goto out;
    }
    if (at != end) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "profiles: window %llu: trailing bytes",
                      (unsigned long long)w);
        goto out;
    }
    rc = 0;
out:
    free(row);
    return rc;
bad:
    return pes_error_set(err, PES_ERR_FORMAT, 0, "profiles: window %llu: message truncated",
                         (unsigned long long)w);
}

/* rank 0: every window below `upto` into the engines, then the engines of
 * streams that ended within them go. `end`: upto is the number of windows. */
static int split_absorb_through(struct pes_profiles *p, uint64_t upto, int end,
                                struct pes_error *err)
{
    struct split *sp = p->split;
    for (; sp->next_absorb < upto; sp->next_absorb++) {
        uint64_t w = sp->next_absorb;
        uint32_t from = (uint32_t)(w % sp->o.ranks);
        if (from == 0)
            continue; /* its own windows went straight in */
        void *buf = NULL;
        size_t len = 0;
        int got = sp->o.recv(sp->o.ctx, w, from, &buf, &len, err);
        if (got < 0)
            return -1;
        if (got > 0)
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "profiles: window %llu of process %u never came",
                                 (unsigned long long)w, from);
        int rc = split_absorb(p, w, buf, len, end && w + 1 == upto, err);
        free(buf);
        if (rc < 0)
            return -1;
    }
    size_t k = 0;
    for (; k < sp->n_ends && sp->ends[k].window < sp->next_absorb; k++) {
        pes_reuse_destroy(p->prd_eng[sp->ends[k].stream]);
        p->prd_eng[sp->ends[k].stream] = NULL;
    }
    if (k) {
        memmove(sp->ends, sp->ends + k, (sp->n_ends - k) * sizeof *sp->ends);
        sp->n_ends -= k;
    }
    return 0;
}

static int split_push(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                      const uint32_t *size, const uint32_t *site, size_t n, struct pes_error *err)
{
    struct split *sp = p->split;
    const uint64_t W = sp->o.window;
    if (sp->over)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "profiles: accesses pushed after the end of a split stream");
    for (size_t i = 0; i < n;) {
        uint64_t w = sp->pos / W, end = (w + 1) * W;
        size_t m = end - sp->pos < n - i ? (size_t)(end - sp->pos) : n - i;
        int own = sp->o.parts || w % sp->o.ranks == sp->o.rank;
        if (own && sp->o.rank == 0 && sp->o.parts) {
            if (gather(p, stream + i, addr + i, size + i, site + i, m, err) < 0)
                return -1;
        } else if (own && sp->o.rank == 0) {
            if (sp->pos == w * W) {
                if (split_absorb_through(p, w, 0, err) < 0)
                    return -1;
                sp->next_absorb = w + 1;
            }
            if (gather(p, stream + i, addr + i, size + i, site + i, m, err) < 0)
                return -1;
        } else if (own) {
            if (gather(p, stream + i, addr + i, size + i, site + i, m, err) < 0)
                return -1;
        } else if (sp->o.rank == 0 && p->per_site) {
            /* rows in first-seen order, as without a split */
            for (size_t j = i; j < i + m; j++)
                if (size[j] && site_row_index(p, site[j]) == UINT32_MAX)
                    return hist_nomem(err);
        }
        sp->pos += m;
        i += m;
        if (own && sp->o.rank != 0 && sp->pos == end && split_send_window(p, w, err) < 0)
            return -1;
    }
    return 0;
}

static int split_end_stream(struct pes_profiles *p, uint32_t stream, struct pes_error *err)
{
    struct split *sp = p->split;
    p->ended[stream] = 1;
    if (sp->o.rank != 0)
        return 0;
    /* parts: a stream that ends in process 0's part has no accesses in the
     * others' (its engine goes now; those of the others' go at the end) */
    if (sp->o.parts) {
        pes_reuse_destroy(p->prd_eng[stream]);
        p->prd_eng[stream] = NULL;
        return 0;
    }
    /* rank 0: its engine waits for the windows it has not absorbed yet (it
     * may not even exist before them) */
    uint64_t w = sp->pos ? (sp->pos - 1) / sp->o.window : 0;
    if (w < sp->next_absorb) {
        pes_reuse_destroy(p->prd_eng[stream]);
        p->prd_eng[stream] = NULL;
        return 0;
    }
    if (sp->n_ends == sp->cap_ends) {
        size_t nc = sp->cap_ends ? sp->cap_ends * 2 : 16;
        struct pending_end *e = realloc(sp->ends, nc * sizeof *e);
        if (!e)
            return split_nomem(err);
        sp->ends = e;
        sp->cap_ends = nc;
    }
    sp->ends[sp->n_ends++] = (struct pending_end){stream, w};
    return 0;
}

/* rank 0 with parts: the windows of processes 1, 2, ... in order. Each is
 * received before the one ahead of it is resolved, so that the very last
 * window of the stream is known as such (it need not update the engines). */
static int split_absorb_parts(struct pes_profiles *p, struct pes_error *err)
{
    struct split *sp = p->split;
    void *cur = NULL, *next = NULL;
    size_t cur_len = 0, next_len = 0;
    uint64_t cur_w = 0;
    int rc = 0, have = 0;
    for (uint32_t from = 1; from < sp->o.ranks && rc == 0; from++)
        for (uint64_t w = 0;; w++) {
            rc = sp->o.recv(sp->o.ctx, w, from, &next, &next_len, err);
            if (rc < 0)
                break;
            if (rc == 1) { /* from's part is over */
                rc = 0;
                break;
            }
            if (have && (rc = split_absorb(p, cur_w, cur, cur_len, 0, err)) < 0)
                break;
            free(cur);
            cur = next, cur_len = next_len, cur_w = w, have = 1;
            next = NULL;
        }
    if (rc == 0 && have)
        rc = split_absorb(p, cur_w, cur, cur_len, 1, err);
    free(cur);
    free(next);
    return rc;
}

static int split_sync(struct pes_profiles *p, struct pes_error *err)
{
    struct split *sp = p->split;
    if (sp->over)
        return 0;
    sp->over = 1;
    const uint64_t W = sp->o.window, w = sp->pos / W;
    if (sp->o.rank == 0 && sp->o.parts)
        return split_absorb_parts(p, err);
    if (sp->o.rank == 0)
        return split_absorb_through(p, (sp->pos + W - 1) / W, 1, err);
    if (sp->pos % W && (sp->o.parts || w % sp->o.ranks == sp->o.rank))
        return split_send_window(p, w, err);
    return 0;
}
