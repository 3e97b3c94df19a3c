/* profiles.c — PRD per stream, CRD per shared cache; see profiles.h. */
#include "profiles.h"
#include "reuse_distance.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pes_profiles {
    uint32_t n_streams, n_groups;
    unsigned shift;
    uint32_t *group_of;
    struct pes_reuse **prd_eng, **crd_eng;
    struct pes_rd_hist *prd, *crd;
    int per_site;
    /* site id -> row index, open addressing; rows in first-seen order */
    uint32_t *site_keys;        /* id + 1, 0 = empty (ids < 2^32 - 1) */
    uint32_t *site_idx;
    uint64_t site_mask;
    struct pes_site_reuse *rows;
    size_t n_rows, cap_rows;
    uint32_t *flat;                 /* site id -> row + 1 (0 = none) for ids < n_flat */
    uint32_t n_flat;
    /* batch scratch: one lane per engine (streams, then groups) */
    struct lane *lanes;
};

/* One engine's share of a batch: granule keys, their site rows, distances. */
struct lane {
    uint64_t *key, *dist;
    uint32_t *row;
    size_t n, cap;
};

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
    if (!p->group_of || !p->prd_eng || !p->prd || !p->crd_eng || !p->crd)
        goto nomem;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        uint32_t g = opt->group_of ? opt->group_of[s] : 0;
        if (p->n_groups == 0)
            g = PES_PROFILES_NO_GROUP;
        if (g != PES_PROFILES_NO_GROUP && g >= p->n_groups) {
            pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u mapped to unknown group %u", s, g);
            pes_profiles_destroy(p);
            return NULL;
        }
        p->group_of[s] = g;
    }
    struct pes_reuse_options ro = {
        .granule = opt->granule, .expected_keys = opt->expected_keys, .min_window = opt->min_window,
    };
    for (uint32_t s = 0; s < p->n_streams; s++) {
        if (pes_rd_hist_init(&p->prd[s], opt->exact_limit, err) < 0)
            goto fail;
        if (!(p->prd_eng[s] = pes_reuse_create(&ro, err)))
            goto fail;
    }
    for (uint32_t g = 0; g < p->n_groups; g++) {
        if (pes_rd_hist_init(&p->crd[g], opt->exact_limit, err) < 0)
            goto fail;
        if (!(p->crd_eng[g] = pes_reuse_create(&ro, err)))
            goto fail;
    }
    p->shift = pes_reuse_granule_shift(p->prd_eng[0]);
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
    if (p->lanes) {
        for (uint32_t i = 0; i < p->n_streams + p->n_groups; i++) {
            free(p->lanes[i].key);
            free(p->lanes[i].dist);
            free(p->lanes[i].row);
        }
        free(p->lanes);
    }
    free(p);
}

static uint64_t site_hash(uint32_t id, uint64_t mask)
{
    return ((uint64_t)id * UINT64_C(0x9E3779B97F4A7C15) >> 32) & mask;
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
static inline __attribute__((always_inline)) uint32_t site_row_index(struct pes_profiles *p, uint32_t site)
{
    if (site < p->n_flat && p->flat[site])
        return p->flat[site] - 1;
    return site_row_slow(p, site);
}

static uint32_t site_row_slow(struct pes_profiles *p, uint32_t site)
{
    uint32_t id = site;
    if (site == UINT32_MAX)
        site = UINT32_MAX - 1;   /* "unknown site" shares the top id's row */
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
                return row;   /* the flat array is only a shortcut */
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

int pes_profiles_push(struct pes_profiles *p, uint32_t stream, uint64_t addr, uint32_t size,
                      uint32_t site, uint64_t *prd, uint64_t *crd, struct pes_error *err)
{
    if (prd)
        *prd = PES_REUSE_COLD;
    if (crd)
        *crd = PES_REUSE_COLD;
    if (stream >= p->n_streams) {
        pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u out of range (%u streams)", stream, p->n_streams);
        return -1;
    }
    if (size == 0)
        return 0;
    uint64_t first = addr >> p->shift;
    uint64_t last_addr = addr + (size - 1);
    if (last_addr < addr)
        last_addr = UINT64_MAX;   /* range wraps: clamp at the top of the space */
    uint64_t last = last_addr >> p->shift;
    uint32_t g = p->group_of[stream];
    struct pes_site_reuse *row = NULL;
    if (p->per_site && !(row = site_row(p, site))) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "profiles: out of memory");
        return -1;
    }
    for (uint64_t k = first;; k++) {
        uint64_t d;
        if (pes_reuse_push_key(p->prd_eng[stream], k, &d) < 0) {
            if (err)
                *err = *pes_reuse_error(p->prd_eng[stream]);
            return -1;
        }
        pes_rd_hist_add(&p->prd[stream], d);
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
            if (pes_reuse_push_key(p->crd_eng[g], k, &d) < 0) {
                if (err)
                    *err = *pes_reuse_error(p->crd_eng[g]);
                return -1;
            }
            pes_rd_hist_add(&p->crd[g], d);
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

static int lane_grow(struct lane *l)
{
    size_t nc = l->cap ? l->cap * 2 : 4096;
    uint64_t *k = realloc(l->key, nc * sizeof *k);
    if (k)
        l->key = k;
    uint64_t *d = realloc(l->dist, nc * sizeof *d);
    if (d)
        l->dist = d;
    uint32_t *r = realloc(l->row, nc * sizeof *r);
    if (r)
        l->row = r;
    if (!k || !d || !r)
        return -1;
    l->cap = nc;
    return 0;
}

static inline int lane_put(struct lane *l, uint64_t key, uint32_t row)
{
    if (l->n == l->cap && lane_grow(l) < 0)
        return -1;
    l->key[l->n] = key;
    l->row[l->n++] = row;
    return 0;
}

/* Pushes a lane through its engine; prd selects which per-site fields count. */
static int lane_drain(struct pes_profiles *p, struct lane *l, struct pes_reuse *eng, struct pes_rd_hist *h,
                      int prd, struct pes_error *err)
{
    size_t n = l->n;
    l->n = 0;
    if (n == 0)
        return 0;
    if (pes_reuse_push_keys(eng, l->key, n, l->dist) < 0) {
        if (err)
            *err = *pes_reuse_error(eng);
        return -1;
    }
    /* pes_rd_hist_add inlined, with the counters in registers (the exact
     * bins could alias them in memory); the same additions in the same order. */
    const uint64_t *dist = l->dist;
    uint64_t *exact = h->exact, lim = h->exact_limit, cold = 0;
    double sum = h->sum;
    h->total += n;
    if (!p->per_site) {
        for (size_t j = 0; j < n; j++) {
            uint64_t d = dist[j];
            if (d == PES_REUSE_COLD) {
                cold++;
                continue;
            }
            sum += (double)d;
            if (d < lim)
                exact[d]++;
            else
                h->log2[63 - __builtin_clzll(d)]++;
        }
    } else {
        for (size_t j = 0; j < n; j++) {
            uint64_t d = dist[j];
            struct pes_site_reuse *row = &p->rows[l->row[j]];
            if (prd)
                row->accesses++;
            if (d == PES_REUSE_COLD) {
                cold++;
                if (prd)
                    row->prd_cold++;
                else
                    row->crd_cold++;
                continue;
            }
            sum += (double)d;
            if (d < lim)
                exact[d]++;
            else
                h->log2[63 - __builtin_clzll(d)]++;
            if (prd)
                row->prd_sum += (double)d;
            else
                row->crd_sum += (double)d;
        }
    }
    h->cold += cold;
    h->sum = sum;
    return 0;
}

int pes_profiles_push_batch(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                            const uint32_t *size, const uint32_t *site, size_t n, struct pes_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (stream[i] >= p->n_streams) {
            pes_error_set(err, PES_ERR_ARG, 0, "profiles: stream %u out of range (%u streams)", stream[i],
                          p->n_streams);
            return -1;
        }
    }
    uint32_t n_lanes = p->n_streams + p->n_groups;
    if (!p->lanes && !(p->lanes = calloc(n_lanes, sizeof *p->lanes)))
        goto nomem;
    /* Room for one granule per access in every lane, so the common case
     * (an access inside one granule) appends without a capacity check. */
    for (uint32_t l = 0; l < n_lanes; l++)
        while (p->lanes[l].cap - p->lanes[l].n < n)
            if (lane_grow(&p->lanes[l]) < 0)
                goto nomem;
    /* Gather: granules in access order, so each engine sees its own order and
     * site rows are created in first-seen order, as with single pushes. Sums
     * of integer distances are exact in a double, so their order is free. */
    const unsigned shift = p->shift;
    const uint64_t gmask = (UINT64_C(1) << shift) - 1;
    struct lane *lanes = p->lanes, *crd_lanes = p->lanes + p->n_streams;
    for (size_t i = 0; i < n; i++) {
        uint32_t sz = size[i];
        if (sz == 0)
            continue;
        uint32_t s = stream[i];
        uint32_t row = 0;
        if (p->per_site && (row = site_row_index(p, site[i])) == UINT32_MAX)
            goto nomem;
        uint64_t a = addr[i];
        uint32_t g = p->group_of[s];
        if ((a & gmask) + sz - 1 <= gmask) {   /* one granule */
            struct lane *l = &lanes[s];
            l->key[l->n] = a >> shift;
            l->row[l->n++] = row;
            if (g != PES_PROFILES_NO_GROUP) {
                l = &crd_lanes[g];
                l->key[l->n] = a >> shift;
                l->row[l->n++] = row;
            }
            continue;
        }
        uint64_t first = a >> shift;
        uint64_t last_addr = a + (sz - 1);
        if (last_addr < a)
            last_addr = UINT64_MAX;
        uint64_t last = last_addr >> shift;
        for (uint64_t k = first;; k++) {
            if (lane_put(&lanes[s], k, row) < 0)
                goto nomem;
            if (g != PES_PROFILES_NO_GROUP && lane_put(&crd_lanes[g], k, row) < 0)
                goto nomem;
            if (k == last)
                break;
        }
        /* keep the room for one granule per remaining access */
        while (lanes[s].cap - lanes[s].n < n - i)
            if (lane_grow(&lanes[s]) < 0)
                goto nomem;
        while (g != PES_PROFILES_NO_GROUP && crd_lanes[g].cap - crd_lanes[g].n < n - i)
            if (lane_grow(&crd_lanes[g]) < 0)
                goto nomem;
    }
    int rc = 0;
    for (uint32_t s = 0; s < p->n_streams; s++)
        if (lane_drain(p, &p->lanes[s], p->prd_eng[s], &p->prd[s], 1, err) < 0)
            rc = -1;
    for (uint32_t g = 0; g < p->n_groups; g++)
        if (lane_drain(p, &p->lanes[p->n_streams + g], p->crd_eng[g], &p->crd[g], 0, err) < 0)
            rc = -1;
    return rc;
nomem:
    for (uint32_t i = 0; p->lanes && i < n_lanes; i++)
        p->lanes[i].n = 0;
    pes_error_set(err, PES_ERR_NOMEM, 0, "profiles: out of memory");
    return -1;
}

uint32_t pes_profiles_streams(const struct pes_profiles *p) { return p->n_streams; }
uint32_t pes_profiles_groups(const struct pes_profiles *p) { return p->n_groups; }

const struct pes_rd_hist *pes_profiles_prd(const struct pes_profiles *p, uint32_t stream)
{
    return stream < p->n_streams ? &p->prd[stream] : NULL;
}

const struct pes_rd_hist *pes_profiles_crd(const struct pes_profiles *p, uint32_t group)
{
    return group < p->n_groups ? &p->crd[group] : NULL;
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
