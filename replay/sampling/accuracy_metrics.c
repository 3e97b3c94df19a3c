/*
 * accuracy_metrics.c — a sampled result against the ground truth of the same
 * execution (metrics of compare.h; which truth each sampled quantity is held
 * against is listed in docs/accuracy.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampled.h"

static double hist_s(const double *sampled, const uint64_t *truth)
{
    double t[PES_RT_BINS], any = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++) {
        t[i] = (double)truth[i];
        any += sampled[i];
    }
    return any > 0 ? pes_cmp_similarity(sampled, t, PES_RT_BINS) : NAN;
}

/* Does the stated 90 % interval of proportion p (n_eff observations, family
 * f) hold truth? A miss keeps how far outside the truth lay. */
static void check(struct replay_coverage *c, const struct replay_sampled *s,
                  enum replay_ci_family f, double p, double n_eff, double truth)
{
    if (isnan(p) || isnan(truth))
        return;
    double lo, hi;
    replay_interval90(s, f, p, n_eff, &lo, &hi);
    c->checked++;
    /* a relative 1e-9 slack: the truth may sit exactly on a bound */
    double outside = truth < lo - 1e-9 ? lo - truth : truth > hi + 1e-9 ? truth - hi : 0;
    if (outside == 0) {
        c->covered++;
    } else if (c->n_outside < REPLAY_OUTSIDE_MAX) {
        c->outside_by[c->n_outside++] = (float)outside;
    } else { /* full: keep the largest (the calibration reads the far tail) */
        uint32_t m = 0;
        for (uint32_t i = 1; i < REPLAY_OUTSIDE_MAX; i++)
            if (c->outside_by[i] < c->outside_by[m])
                m = i;
        if (outside > c->outside_by[m])
            c->outside_by[m] = (float)outside;
    }
}

/* Every bin where either histogram has mass, as shares of their totals. */
static void check_hist(struct replay_coverage *c, const struct replay_sampled *s,
                       enum replay_ci_family f, const double *sampled, const double *truth,
                       double n_eff)
{
    double ts = 0, tt = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++) {
        ts += sampled[i];
        tt += truth[i];
    }
    if (ts <= 0 || tt <= 0)
        return;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        if (sampled[i] > 0 || truth[i] > 0)
            check(c, s, f, sampled[i] / ts, n_eff, truth[i] / tt);
}

static double ratio(double part, double rest)
{
    return part + rest > 0 ? part / (part + rest) : NAN;
}

/* Site table of the truth: value(site) for ids 0..max_site-1 and the pooled id. */
typedef double (*site_value_fn)(const struct replay_truth *t, int scope, uint32_t site);

static double rt_invalidations(const struct replay_truth *t, int scope, uint32_t site)
{
    const struct pes_rt_counts *c = pes_rt_site(t->rt, (enum pes_rt_scope)scope, site);
    return c ? (double)c->invalidations : 0;
}

static double sim_coherence(const struct replay_truth *t, int scope, uint32_t site)
{
    (void)scope;
    const struct pes_sim_stats *s = pes_sim_site(t->sim, site);
    return s ? (double)(s->coh_true + s->coh_false) : 0;
}

static int by_key(const void *pa, const void *pb)
{
    uint64_t a = ((const struct pes_cmp_site *)pa)->key, b = ((const struct pes_cmp_site *)pb)->key;
    return (a > b) - (a < b);
}

/* Sums entries of equal key in place (sites of one source line); returns the new count. */
static size_t merge_keys(struct pes_cmp_site *t, size_t n)
{
    qsort(t, n, sizeof *t, by_key);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && t[m - 1].key == t[i].key)
            t[m - 1].value += t[i].value;
        else
            t[m++] = t[i];
    }
    return m;
}

/* Marathe's top-k over source lines: truth per line from fn, sampled per line
 * from INVALIDATION events (weights are not per site: raw counts rank). */
static int topk(const struct replay_sampled *s, const struct replay_truth *t, int scope,
                site_value_fn fn, uint32_t k, struct pes_cmp_topk *out, struct pes_error *err)
{
    size_t nf = (size_t)t->max_site + 1;
    struct pes_cmp_site *full = calloc(nf, sizeof *full),
                        *smp = calloc(s->n_sites ? s->n_sites : 1, sizeof *smp);
    int rc = -1;
    if (!full || !smp) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < t->max_site; i++)
        full[i] = (struct pes_cmp_site){t->site_key[i], fn(t, scope, i)};
    full[t->max_site] = (struct pes_cmp_site){t->site_key[t->max_site], fn(t, scope, UINT32_MAX)};
    for (size_t i = 0; i < s->n_sites; i++)
        smp[i] = (struct pes_cmp_site){s->sites[i].line_key, (double)s->sites[i].invalidations};
    rc = pes_cmp_topk(full, merge_keys(full, nf), smp, merge_keys(smp, s->n_sites), k, out, err);
out:
    free(full);
    free(smp);
    return rc;
}

static void why(struct replay_accuracy *a, const char *key, double v, const char *reason)
{
    const unsigned cap = sizeof a->not_estimated / sizeof a->not_estimated[0];
    if (isnan(v) && a->n_not_estimated < cap)
        a->not_estimated[a->n_not_estimated++] = (struct replay_not_estimated){key, reason};
}

/* The reason behind every NaN metric: what the mode records, what the
 * samples held, what the full trace held (the first that applies). */
static void explain(struct replay_accuracy *a, const struct replay_sampled *s)
{
    int reuse = strncmp(s->mode, "reuse", 5) == 0, comm = strcmp(s->mode, "comm") == 0;
    int shared_mode = strcmp(s->mode, "reuse-shared") == 0;
    const char *no_watch = "this mode arms no reuse watches (reuse or reuse-shared mode does)";
    const char *no_decided = "no sampled use was decided (reuse or invalidation) in this run";
    const char *hist = !reuse        ? no_watch
                       : !a->decided ? no_decided
                                     : "the full trace has no reuse of this kind";
    why(a, "s_intra", a->s_intra,
        shared_mode ? "reuse-shared mode watches shared-cache reuses (s_shared)" : hist);
    why(a, "s_shared", a->s_shared,
        reuse && !shared_mode
            ? "reuse mode watches a thread's own reuses (s_intra); reuse-shared watches shared ones"
            : hist);
    why(a, "s_stack", a->s_stack,
        !reuse || shared_mode ? "the stack conversion needs reuse mode's intra-thread histogram"
        : s->spatial          ? "the stack conversion needs address (temporal) granularity"
                              : hist);
    const char *inval_s = !reuse ? no_watch : no_decided;
    const char *inval_t = "the full trace has no reuse or invalidation of the watched kind";
    why(a, "inval_ratio_sampled", a->inval_ratio_sampled, inval_s);
    why(a, "inval_ratio_true", a->inval_ratio_true, inval_t);
    why(a, "inval_ratio_error", a->inval_ratio_error,
        isnan(a->inval_ratio_sampled) ? inval_s : inval_t);
    const char *no_comm = "this mode records no communication (comm mode does)";
    const char *no_transfer = "the full trace has no line transfer between threads";
    const char *no_shared = "the samples found no line shared by two threads (the volume is 0, its "
                            "limit comm_volume_limit)";
    int compared = comm || s->comm_events; /* the communication metrics were computed */
    why(a, "comm_volume_error", a->comm.volume_error, compared ? no_transfer : no_comm);
    why(a, "comm_cell_error", a->comm.cell_error, compared ? no_transfer : no_comm);
    why(a, "false_fraction_sampled", a->false_fraction_sampled, compared ? no_shared : no_comm);
    why(a, "false_fraction_true", a->false_fraction_true, compared ? no_transfer : no_comm);
    why(a, "split_error", a->split_error,
        !compared                          ? no_comm
        : isnan(a->false_fraction_sampled) ? no_shared
                                           : no_transfer);
    const char *top =
        !reuse ? "only the reuse modes watch for invalidations" : "the full trace has none to rank";
    why(a, "top_invalidations.coverage", a->top_invalidations.coverage, top);
    why(a, "top_coherence.coverage", a->top_coherence.coverage, top);
}

void replay_execution_of(struct replay_execution *x, const struct pes_trace_info *h)
{
    x->pid = h->pid;
    x->start_ticks = h->start_ticks;
    x->ticks_per_second = h->ticks_per_second;
    snprintf(x->command, sizeof x->command, "%s", h->command ? h->command : "");
    snprintf(x->hostname, sizeof x->hostname, "%s", h->hostname ? h->hostname : "");
}

/* pes-collect --full --mode opens the two traces one after the other in the
 * same process: same pid, host and command, start times a moment apart. */
int replay_same_execution(const struct replay_execution *a, const struct replay_execution *b)
{
    uint64_t gap = a->start_ticks > b->start_ticks ? a->start_ticks - b->start_ticks
                                                   : b->start_ticks - a->start_ticks;
    uint64_t tps = a->ticks_per_second ? a->ticks_per_second : 1000000000u;
    return a->pid && a->pid == b->pid && strcmp(a->hostname, b->hostname) == 0 &&
           strcmp(a->command, b->command) == 0 && gap < tps;
}

int replay_accuracy_compute(const struct replay_sampled *s, const struct replay_truth *t,
                            uint32_t top_k, struct replay_accuracy *a, struct pes_error *err)
{
    memset(a, 0, sizeof *a);
    a->same_execution = replay_same_execution(&s->exec, &t->exec);
    a->top_k = top_k;
    a->samples = s->samples;
    const struct pes_rt_stats *intra = pes_rt_totals(t->rt, PES_RT_INTRA);
    const struct pes_rt_stats *shared = pes_rt_totals(t->rt, PES_RT_SHARED);
    /* line-granularity collection (granularity=spatial) is held against rt_truth's line reuses */
    if (s->spatial) {
        a->s_intra = hist_s(s->spatial_hist[0], intra->line.bin);
        a->s_shared = hist_s(s->spatial_hist[1], shared->line.bin);
    } else {
        a->s_intra = hist_s(s->temporal[0], intra->temporal.bin);
        a->s_shared = hist_s(s->temporal[1], shared->temporal.bin);
    }
    double any = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        any += s->stack[i];
    a->s_stack = any > 0 ? pes_cmp_similarity(s->stack, t->stack, PES_RT_BINS) : NAN;

    int scope = strcmp(s->mode, "reuse-shared") == 0 ? 1 : 0;
    const struct pes_rt_stats *st = scope ? shared : intra;
    a->decided = s->reuses[scope] + s->invalidations[scope];
    /* weighted outcomes carry less information than as many equal ones: the
     * sampling tolerance of a histogram uses Kish's effective sample size */
    a->effective_reuses =
        s->reuse_weight_sq[scope] > 0
            ? s->reuse_weight[scope] * s->reuse_weight[scope] / s->reuse_weight_sq[scope]
            : 0;
    a->inval_ratio_sampled = ratio(s->inval_weight[scope], s->reuse_weight[scope]);
    a->inval_ratio_true = s->spatial
                              ? ratio((double)st->n.line_invalidations, (double)st->n.line_reuses)
                              : ratio((double)st->n.invalidations, (double)st->n.reuses);
    a->inval_ratio_error = a->inval_ratio_sampled - a->inval_ratio_true;
    a->inval_ratio_neff = s->decided_neff[scope];
    if (strncmp(s->mode, "reuse", 5) == 0)
        check(&a->cov_inval, s, REPLAY_CI_INVAL_RATIO, a->inval_ratio_sampled, a->inval_ratio_neff,
              a->inval_ratio_true);
    {
        double exact[PES_RT_BINS];
        const uint64_t *bins = s->spatial ? st->line.bin : st->temporal.bin;
        for (size_t i = 0; i < PES_RT_BINS; i++)
            exact[i] = (double)bins[i];
        check_hist(&a->cov_intra, s, REPLAY_CI_REUSE_BINS,
                   s->spatial ? s->spatial_hist[scope] : s->temporal[scope], exact,
                   s->hist_neff[scope][s->spatial ? 1 : 0]);
        if (scope == 0 && !s->spatial)
            check_hist(&a->cov_stack, s, REPLAY_CI_STACK_BINS, s->stack, t->stack,
                       s->hist_neff[0][0]);
    }

    uint32_t n = t->n_threads;
    size_t cells = (size_t)n * n;
    uint64_t *tt = calloc(cells, sizeof *tt), *tf = calloc(cells, sizeof *tf);
    double *truth = calloc(cells, sizeof *truth), *est = calloc(cells, sizeof *est);
    if (!tt || !tf || !truth || !est) {
        free(tt), free(tf), free(truth), free(est);
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return -1;
    }
    pes_sim_comm_symmetric(t->sim, PES_SIM_COMM_TRUE, 0, tt);
    pes_sim_comm_symmetric(t->sim, PES_SIM_COMM_FALSE, 0, tf);
    double true_false = 0, true_all = 0, est_false = 0, est_all = 0;
    uint32_t ns = s->n_threads < n ? s->n_threads : n;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            size_t c = (size_t)i * n + j;
            truth[c] = (double)(tt[c] + tf[c]);
            true_false += (double)tf[c];
            true_all += truth[c];
            if (i < ns && j < ns) {
                size_t sc = (size_t)i * s->n_threads + j;
                est[c] = s->comm_true[sc] + s->comm_false[sc];
                est_false += s->comm_false[sc];
                est_all += est[c];
            }
        }
    /* comm mode states a volume even when it saw nothing (0, with its
     * detection limit): the run counts as -100 % instead of dropping out */
    if (s->comm_events || strcmp(s->mode, "comm") == 0) {
        pes_cmp_matrix(truth, est, cells, &a->comm);
        if (!(est_all > 0) && s->comm_volume_limit > 0) {
            a->cov_volume.checked++;
            a->cov_volume.covered +=
                a->comm.total_true <= 2 * s->comm_volume_limit; /* symmetric: 2 per transfer */
        }
        a->false_fraction_sampled = est_all > 0 ? est_false / est_all : NAN;
        a->false_fraction_true = true_all > 0 ? true_false / true_all : NAN;
        a->split_error = pes_cmp_fraction_error(est_false, est_all, true_false, true_all);
        check(&a->cov_false, s, REPLAY_CI_FALSE_FRACTION, a->false_fraction_sampled, s->comm_neff,
              a->false_fraction_true);
        /* thread pairs: (i, j) with i < j, as shares of the volume (each
         * transfer is in two cells of these symmetric matrices) */
        for (uint32_t i = 0; est_all > 0 && true_all > 0 && i < n; i++)
            for (uint32_t j = i + 1; j < n; j++) {
                size_t c = (size_t)i * n + j;
                if (est[c] > 0 || truth[c] > 0)
                    check(&a->cov_pairs, s, REPLAY_CI_COMM_PAIRS, 2 * est[c] / est_all,
                          s->comm_neff, 2 * truth[c] / true_all);
            }
    } else {
        a->comm.volume_error = a->comm.cell_error = NAN;
        a->comm.total_true = true_all;
        a->false_fraction_sampled = a->false_fraction_true = a->split_error = NAN;
    }
    free(tt), free(tf), free(truth), free(est);

    /* only the reuse modes watch for invalidations */
    if (strncmp(s->mode, "reuse", 5) != 0) {
        a->top_invalidations.coverage = a->top_coherence.coverage = NAN;
    } else {
        if (topk(s, t, scope, rt_invalidations, top_k, &a->top_invalidations, err) < 0)
            return -1;
        if (topk(s, t, scope, sim_coherence, top_k, &a->top_coherence, err) < 0)
            return -1;
    }
    explain(a, s);
    return 0;
}
