/*
 * sampled_publish.c — report pieces of the sampled analyses (sampled_publish.h).
 */
#include <math.h>
#include <stdint.h>

#include "sampled_publish.h"

void replay_publish_sampled_config(struct pes_report *r, struct pes_rnode *o,
                                   const struct replay_sampled_config *s,
                                   const struct replay_ci *ci)
{
    pes_r_str(r, o, "mode", s->mode);
    pes_r_u64(r, o, "period_load", s->period_load);
    pes_r_u64(r, o, "period_store", s->period_store);
    /* --samples: the periods above are the caps; per_thread[].period says what ran */
    if (s->samples_target)
        pes_r_u64(r, o, "samples_target", s->samples_target);
    if (s->roi)
        pes_r_str(r, o, "region", "region of interest (pes_roi_begin/end)");
    /* what the stated intervals include: sampling error, and the model error calibrated on bench/corpus */
    pes_r_str(r, o, "interval_bias", ci->calibrated ? "calibrated" : "none");
}

void replay_publish_ci(struct pes_report *r, struct pes_rnode *o, const char *key,
                       const struct replay_ci *ci, enum replay_ci_family f, double p, double n_eff)
{
    if (isnan(p)) {
        pes_r_null(r, o, key);
        return;
    }
    double lo, hi;
    replay_ci90(ci, f, p, n_eff, &lo, &hi);
    struct pes_rnode *a = pes_r_array(r, o, key);
    pes_r_f64(r, a, NULL, lo, "%.6g");
    pes_r_f64(r, a, NULL, hi, "%.6g");
}

/* The non-empty bins of h as {lo, hi, count}, with their share and its 90 %
 * interval (effective sample size n_eff, family f) when ci is given. */
static void publish_rt_bins(struct pes_report *r, struct pes_rnode *parent, const char *key,
                            const double *h, const struct replay_ci *ci, enum replay_ci_family f,
                            double n_eff)
{
    double total = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        total += h[i] > 0 ? h[i] : 0;
    struct pes_rnode *a = pes_r_array(r, parent, key);
    for (size_t i = 0; i < PES_RT_BINS; i++) {
        if (h[i] <= 0)
            continue;
        uint64_t lo, hi;
        pes_rt_bin_range(i, &lo, &hi);
        struct pes_rnode *b = pes_r_object(r, a, NULL);
        pes_r_u64(r, b, "lo", lo);
        pes_r_u64(r, b, "hi", hi);
        pes_r_f64(r, b, "count", h[i], "%.6g");
        if (!ci)
            continue;
        pes_r_f64(r, b, "share", h[i] / total, "%.6g");
        replay_publish_ci(r, b, "share_ci90", ci, f, h[i] / total, n_eff);
    }
}

void replay_publish_rt_histogram(struct pes_report *r, struct pes_rnode *parent, const char *key,
                                 const double *h)
{
    publish_rt_bins(r, parent, key, h, NULL, REPLAY_CI_REUSE_BINS, 0);
}

void replay_publish_rt_histogram_ci(struct pes_report *r, struct pes_rnode *parent, const char *key,
                                    const double *h, const struct replay_ci *ci,
                                    enum replay_ci_family f, double n_eff)
{
    publish_rt_bins(r, parent, key, h, ci, f, n_eff);
}

/* A small selection sort: top is small. */
size_t replay_sampled_top_rows(const struct replay_sampled_site *rows, size_t n_rows, uint32_t top,
                               size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < n_rows && n < top; i++) {
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < n_rows; j++) {
            int taken = 0;
            for (size_t k = 0; k < n; k++)
                taken |= idx[k] == j;
            if (taken)
                continue;
            const struct replay_sampled_site *x = &rows[j];
            if (best == SIZE_MAX) {
                best = j;
                continue;
            }
            const struct replay_sampled_site *y = &rows[best];
            uint64_t cx = x->comm_true + x->comm_false, cy = y->comm_true + y->comm_false;
            if (x->invalidations > y->invalidations ||
                (x->invalidations == y->invalidations &&
                 (cx > cy || (cx == cy && x->samples > y->samples))))
                best = j;
        }
        if (best == SIZE_MAX)
            break;
        idx[n++] = best;
    }
    return n;
}
