/*
 * results.c — views of a configuration's results that hide where they are
 * kept (recorded threads keep CRDs in a profile set of their own), and
 * freeing them.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

void replay_result_free(struct replay_result *res) {
    for (uint32_t i = 0; i < res->n_configs; i++) {
        pes_profiles_destroy(res->config[i].profiles);
        pes_profiles_destroy(res->config[i].crd);
        if (res->config[i].sim.sim) pes_sim_destroy(res->config[i].sim.sim);
    }
    res->n_configs = 0;
}

uint32_t replay_config_groups(const struct replay_config *c) {
    return c->crd ? pes_profiles_streams(c->crd) : pes_profiles_groups(c->profiles);
}

const struct pes_rd_hist *replay_config_crd(const struct replay_config *c, uint32_t group) {
    return c->crd ? pes_profiles_prd(c->crd, group) : pes_profiles_crd(c->profiles, group);
}

static int by_accesses_desc(const void *a, const void *b) {
    const struct replay_site_reuse *x = a, *y = b;
    if (x->accesses != y->accesses) return x->accesses < y->accesses ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

static int by_site(const void *a, const void *b) {
    const struct pes_site_reuse *x = a, *y = b;
    return x->site < y->site ? -1 : x->site > y->site;
}

struct replay_site_reuse *replay_config_site_reuse(const struct replay_config *c, size_t *n) {
    size_t np = 0, nc = 0;
    const struct pes_site_reuse *p = pes_profiles_sites(c->profiles, &np);
    const struct pes_site_reuse *q = c->crd ? pes_profiles_sites(c->crd, &nc) : NULL;
    struct replay_site_reuse *rows = calloc(np ? np : 1, sizeof *rows);
    struct pes_site_reuse *crd = nc ? malloc(nc * sizeof *crd) : NULL;
    *n = 0;
    if (!rows || (nc && !crd)) {
        free(rows);
        free(crd);
        return NULL;
    }
    if (nc) {   /* recorded threads: CRD rows live in the shared-cache profile set */
        memcpy(crd, q, nc * sizeof *crd);
        qsort(crd, nc, sizeof *crd, by_site);
    }
    for (size_t i = 0; i < np; i++) {
        const struct pes_site_reuse *r = &p[i];
        struct replay_site_reuse *o = &rows[i];
        o->site = r->site;
        o->accesses = r->accesses;
        o->prd_cold = r->prd_cold;
        o->prd_mean = r->accesses > r->prd_cold ? r->prd_sum / (double)(r->accesses - r->prd_cold) : 0.0;
        const struct pes_site_reuse *cr = r;
        if (nc) {
            struct pes_site_reuse key = {.site = r->site};
            cr = bsearch(&key, crd, nc, sizeof *crd, by_site);
        }
        if (cr) {
            uint64_t cold = nc ? cr->prd_cold : cr->crd_cold;
            double sum = nc ? cr->prd_sum : cr->crd_sum;
            o->crd_cold = cold;
            o->crd_mean = cr->accesses > cold ? sum / (double)(cr->accesses - cold) : 0.0;
        }
    }
    free(crd);
    qsort(rows, np, sizeof *rows, by_accesses_desc);
    *n = np;
    return rows;
}
