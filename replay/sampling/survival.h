/*
 * survival.h — right-censored reuse times and stated uncertainty for the
 * sampled analyses (docs/accuracy.md, "Censored watches" and "Stated
 * uncertainty").
 *
 * A watch that ends before its reuse (replaced by the reservoir, or its
 * thread ended) says only that the reuse time is longer than what the watch
 * survived. pes_surv_km turns decided and censored observations into the
 * probability mass of each decided one: Kaplan–Meier for "some outcome", split
 * between the competing outcomes (reuse, invalidation) as Aalen–Johansen does.
 * The mass of a decided observation equals its inverse-probability-of-
 * censoring weight 1 / Ĝ(t−) divided by the number of observations, so the
 * masses can be summed per bin like weighted counts.
 *
 * pes_surv_wilson: the Wilson score interval of a proportion, with Kish's
 * effective sample size (pes_surv_kish) in place of n where the observations
 * are weighted.
 */
#ifndef PES_REPLAY_SURVIVAL_H
#define PES_REPLAY_SURVIVAL_H

#include <stddef.h>

enum pes_surv_kind {
    PES_SURV_CENSORED = 0,     /* survived `time`: the outcome lies beyond it */
    PES_SURV_REUSE = 1,        /* decided at `time` */
    PES_SURV_INVALIDATION = 2, /* decided at `time` (a competing outcome) */
};

struct pes_surv_obs {
    double time;   /* decided: the outcome's time; censored: the outcome is > time */
    double weight; /* case weight (1 = one sampled use), > 0 */
    int kind;      /* enum pes_surv_kind */
};

struct pes_surv_result {
    double residual;  /* mass of outcomes beyond last_time (never decided in view) */
    double last_time; /* the largest time observed (decided or censored) */
    double total;     /* sum of the weights */
};

/* mass[i] (n entries): observation i's share of the population's
 * probability (censored: 0); the masses sum to 1 - r->residual. Ties: decided
 * before censored at the same time (a watch censored at t was at risk at t).
 * Without censored observations mass[i] = weight[i] / total. 0, or -1 when
 * out of memory. */
int pes_surv_km(const struct pes_surv_obs *o, size_t n, double *mass, struct pes_surv_result *r);

/* Kish's effective sample size (sum w)^2 / sum w^2 of n weights (0 if none). */
double pes_surv_kish(const double *w, size_t n);
/* The same from running sums. */
double pes_surv_kish_sums(double sum_w, double sum_w2);

/* Wilson score interval [lo, hi] for a proportion p from n_eff observations
 * at normal quantile z (PES_SURV_Z90: two-sided 90 %). n_eff <= 0: [0, 1]. */
void pes_surv_wilson(double p, double n_eff, double z, double *lo, double *hi);

#define PES_SURV_Z90 1.6448536269514722

#endif /* PES_REPLAY_SURVIVAL_H */
