/*
 * survival.c — Kaplan–Meier / Aalen–Johansen masses of right-censored
 * observations and the Wilson interval (survival.h; derivation in
 * docs/accuracy.md, "Censored watches").
 */
#include <math.h>
#include <stdlib.h>

#include "survival.h"

struct ref {
    double time;
    int decided;
    size_t i;
};

/* by time; at equal times decided before censored (the usual KM convention:
 * a censored observation at t is still at risk at t) */
static int by_time(const void *pa, const void *pb)
{
    const struct ref *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->decided != b->decided)
        return b->decided - a->decided;
    return (a->i > b->i) - (a->i < b->i);
}

int pes_surv_km(const struct pes_surv_obs *o, size_t n, double *mass, struct pes_surv_result *r)
{
    r->residual = 1;
    r->last_time = 0;
    r->total = 0;
    if (!n)
        return 0;
    struct ref *x = malloc(n * sizeof *x);
    if (!x)
        return -1;
    double at_risk = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = (struct ref){o[i].time, o[i].kind != PES_SURV_CENSORED, i};
        at_risk += o[i].weight;
        mass[i] = 0;
        if (i == 0 || o[i].time > r->last_time)
            r->last_time = o[i].time;
    }
    r->total = at_risk;
    qsort(x, n, sizeof *x, by_time);
    double surv = 1; /* S(t-): no outcome before t */
    for (size_t k = 0; k < n;) {
        size_t end = k;
        double decided = 0, leaving = 0;
        while (end < n && x[end].time == x[k].time) {
            const struct pes_surv_obs *p = &o[x[end].i];
            if (x[end].decided)
                decided += p->weight;
            leaving += p->weight;
            end++;
        }
        if (decided > 0 && at_risk > 0) {
            /* hazard decided / at_risk, shared by the outcomes in proportion
             * to their weights: each gets S(t-) w / R(t) */
            for (size_t j = k; j < end; j++)
                if (x[j].decided)
                    mass[x[j].i] = surv * o[x[j].i].weight / at_risk;
            surv *= 1 - decided / at_risk;
        }
        at_risk -= leaving;
        k = end;
    }
    if (surv < 0)
        surv = 0;
    r->residual = surv;
    free(x);
    return 0;
}

double pes_surv_kish_sums(double sum_w, double sum_w2)
{
    return sum_w2 > 0 ? sum_w * sum_w / sum_w2 : 0;
}

double pes_surv_kish(const double *w, size_t n)
{
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s += w[i];
        s2 += w[i] * w[i];
    }
    return pes_surv_kish_sums(s, s2);
}

void pes_surv_wilson(double p, double n_eff, double z, double *lo, double *hi)
{
    if (!(n_eff > 0) || isnan(p)) {
        *lo = 0;
        *hi = 1;
        return;
    }
    if (p < 0)
        p = 0;
    if (p > 1)
        p = 1;
    double z2n = z * z / n_eff;
    double centre = (p + z2n / 2) / (1 + z2n);
    double half = z / (1 + z2n) * sqrt(p * (1 - p) / n_eff + z2n / (4 * n_eff));
    *lo = centre - half < 0 ? 0 : centre - half;
    *hi = centre + half > 1 ? 1 : centre + half;
    /* the estimate itself is always inside (rounding at p = 0 or 1) */
    if (*lo > p)
        *lo = p;
    if (*hi < p)
        *hi = p;
}
