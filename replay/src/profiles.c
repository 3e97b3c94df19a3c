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

static struct pes_site_reuse *site_row(struct pes_profiles *p, uint32_t site)
{
    if (site == UINT32_MAX)
        site = UINT32_MAX - 1;   /* "unknown site" shares the top id's row */
    uint64_t i = site_hash(site, p->site_mask);
    while (p->site_keys[i]) {
        if (p->site_keys[i] == site + 1)
            return &p->rows[p->site_idx[i]];
        i = (i + 1) & p->site_mask;
    }
    if ((p->n_rows + 1) * 2 > p->site_mask + 1) {
        if (site_grow(p) < 0)
            return NULL;
        i = site_hash(site, p->site_mask);
        while (p->site_keys[i])
            i = (i + 1) & p->site_mask;
    }
    if (p->n_rows == p->cap_rows) {
        size_t nc = p->cap_rows ? p->cap_rows * 2 : 64;
        struct pes_site_reuse *r = realloc(p->rows, nc * sizeof *r);
        if (!r)
            return NULL;
        p->rows = r;
        p->cap_rows = nc;
    }
    p->site_keys[i] = site + 1;
    p->site_idx[i] = (uint32_t)p->n_rows;
    struct pes_site_reuse *row = &p->rows[p->n_rows++];
    memset(row, 0, sizeof *row);
    row->site = site;
    return row;
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
