/*
 * model_apply.c — SDCM hit rates (PPT-Multicore Eq. 1–3) and runtime
 * (Eq. 4–8) for every configuration: private levels from the PRD of all
 * streams together (Eq. 3 on the summed histogram is the access-weighted mean
 * of the per-core hit rates), shared levels from the CRD of all shared caches.
 */
#include <stdio.h>
#include <string.h>

#include "histogram.h"
#include "replay.h"

static int sum_crd(const struct replay_config *c, struct pes_rd_hist *out) {
    for (uint32_t g = 0; g < replay_config_groups(c); g++)
        if (pes_rd_hist_merge(out, replay_config_crd(c, g)) < 0) return -1;
    return 0;
}

static int config_model(struct replay_result *res, struct replay_config *cfg, struct pes_error *err) {
    struct pes_rd_hist prd, crd;
    if (pes_rd_hist_init(&prd, 0, err) < 0) return -1;
    if (pes_rd_hist_init(&crd, 0, err) < 0) {
        pes_rd_hist_free(&prd);
        return -1;
    }
    struct pes_reuse_profile prd_profile, crd_profile;
    int rc = -1;
    if (pes_profiles_prd_total(cfg->profiles, &prd) < 0 || sum_crd(cfg, &crd) < 0 ||
        pes_rd_hist_to_profile(&prd, &prd_profile) < 0 || pes_rd_hist_to_profile(&crd, &crd_profile) < 0) {
        err->code = PES_ERR_ARG;
        snprintf(err->message, sizeof err->message,
                 "cannot sum the reuse histograms (out of memory, or internal layout mismatch)");
        goto out;
    }
    const struct pes_reuse_profile *per_level[PES_MAX_LEVELS];
    for (uint32_t l = 0; l < res->machine.n_levels; l++)
        per_level[l] = res->machine.level[l].shared && replay_config_groups(cfg) ? &crd_profile
                                                                                         : &prd_profile;
    if (pes_model_hit_rates(&res->machine, per_level, cfg->hit, err) < 0) goto out;

    struct pes_runtime_input ri = {.total_mem = (double)res->summary.bytes, .cores = cfg->cores};
    memcpy(ri.hit, cfg->hit, sizeof ri.hit);
    memcpy(ri.ops, res->summary.ops, sizeof ri.ops);
    if (pes_model_runtime(&res->machine, &ri, &cfg->runtime, err) < 0) goto out;
    rc = 0;
out:
    pes_rd_hist_free(&prd);
    pes_rd_hist_free(&crd);
    return rc;
}

int replay_apply_model(struct replay_result *res, struct pes_error *err) {
    for (uint32_t i = 0; i < res->n_configs; i++)
        if (config_model(res, &res->config[i], err) < 0) return -1;
    return 0;
}
