/*
 * time_to_stack.c — Shen et al. (POPL'07) time -> stack distance conversion.
 * See time_to_stack.h and docs/accuracy.md for the formulas.
 */
#include "time_to_stack.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pes_t2s {
    size_t n;              /* distinct distances */
    uint64_t *x;           /* ascending */
    double *w;             /* weight of each distance */
    double *cum_w;         /* [n+1] prefix sums of w */
    double *cum_wx;        /* [n+1] prefix sums of w * (x + 1) */
    double never, total;   /* total = reuses + never */
    double others;         /* N - 1 */
};

struct pair {
    uint64_t x;
    double w;
};

static int cmp_pair(const void *a, const void *b) {
    uint64_t x = ((const struct pair *)a)->x, y = ((const struct pair *)b)->x;
    return (x > y) - (x < y);
}

static int fail(struct pes_error *err, int code, const char *what) {
    if (err) {
        err->code = code;
        err->offset = 0;
        snprintf(err->message, sizeof err->message, "time-to-stack: %s", what);
    }
    return -1;
}

double pes_t2s_estimate_distinct(double accesses, double reused, double never) {
    if (reused + never <= 0 || accesses <= 0) return 0;
    double n = accesses * never / (reused + never);
    return n < 1 ? 1 : n;
}

double pes_t2s_estimate_distinct_kac(const uint64_t *distance, const double *weight, size_t n) {
    double sw = 0, sx = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weight ? weight[i] : 1.0;
        sw += w;
        sx += w * ((double)distance[i] + 1.0);
    }
    return sw > 0 ? sx / sw : 0;
}

double pes_t2s_never_weight(double n_distinct, double accesses, double reused) {
    if (!(accesses > n_distinct) || !(n_distinct > 0)) return reused > 0 ? reused : 1;
    return reused * n_distinct / (accesses - n_distinct);
}

void pes_t2s_destroy(struct pes_t2s *c) {
    if (!c) return;
    free(c->x);
    free(c->w);
    free(c->cum_w);
    free(c->cum_wx);
    free(c);
}

struct pes_t2s *pes_t2s_create(const struct pes_t2s_input *in, struct pes_error *err) {
    if (!in || (in->n && !in->distance) || !(in->n_distinct > 0) || !(in->never >= 0)) {
        fail(err, PES_ERR_ARG, "needs reuses, never >= 0 and a number of distinct data > 0");
        return NULL;
    }
    struct pes_t2s *c = calloc(1, sizeof *c);
    struct pair *p = malloc((in->n ? in->n : 1) * sizeof *p);
    if (!c || !p) goto nomem;
    for (size_t i = 0; i < in->n; i++) {
        double w = in->weight ? in->weight[i] : 1.0;
        if (!(w >= 0)) {
            free(p);
            pes_t2s_destroy(c);
            fail(err, PES_ERR_ARG, "negative reuse weight");
            return NULL;
        }
        p[i] = (struct pair){in->distance[i], w};
    }
    qsort(p, in->n, sizeof *p, cmp_pair);
    size_t m = 0;   /* merge equal distances */
    for (size_t i = 0; i < in->n; i++) {
        if (m && p[m - 1].x == p[i].x) p[m - 1].w += p[i].w;
        else p[m++] = p[i];
    }
    c->n = m;
    c->x = malloc((m ? m : 1) * sizeof *c->x);
    c->w = malloc((m ? m : 1) * sizeof *c->w);
    c->cum_w = malloc((m + 1) * sizeof *c->cum_w);
    c->cum_wx = malloc((m + 1) * sizeof *c->cum_wx);
    if (!c->x || !c->w || !c->cum_w || !c->cum_wx) goto nomem;
    c->cum_w[0] = c->cum_wx[0] = 0;
    for (size_t i = 0; i < m; i++) {
        c->x[i] = p[i].x;
        c->w[i] = p[i].w;
        c->cum_w[i + 1] = c->cum_w[i] + p[i].w;
        c->cum_wx[i + 1] = c->cum_wx[i] + p[i].w * ((double)p[i].x + 1.0);
    }
    free(p);
    c->never = in->never;
    c->total = c->cum_w[m] + in->never;
    c->others = in->n_distinct > 1 ? floor(in->n_distinct - 1 + 0.5) : 0;
    if (c->others > 0x1p62) c->others = 0x1p62;   /* stack distances stay uint64 (corrupt input) */
    return c;
nomem:
    free(p);
    pes_t2s_destroy(c);
    fail(err, PES_ERR_NOMEM, "out of memory");
    return NULL;
}

/* D(t) = E[min(X + 1, t)]: position k (1..t) of a window holds a datum not
 * seen earlier in the window iff its time distance is >= k - 1. */
double pes_t2s_footprint(const struct pes_t2s *c, uint64_t t) {
    if (c->total <= 0) return 0;
    /* first index with x + 1 >= t */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)c->x[mid] + 1.0 >= (double)t) hi = mid;
        else lo = mid + 1;
    }
    double above = c->cum_w[c->n] - c->cum_w[lo] + c->never;
    return (c->cum_wx[lo] + (double)t * above) / c->total;
}

static double prob(const struct pes_t2s *c, uint64_t t) {
    if (c->others <= 0) return 0;
    double p = pes_t2s_footprint(c, t) / c->others;
    return p > 1 ? 1 : p;
}

double pes_t2s_expected(const struct pes_t2s *c, uint64_t t) { return c->others * prob(c, t); }

/* P(K <= k) for K ~ Binomial(n, p), 0 < p < 1; n may exceed 2^32 (hence the
 * incomplete-beta identity instead of gsl_cdf_binomial_P). */
static double binom_cdf(double k, double n, double p) {
    if (k < 0) return 0;
    if (k >= n) return 1;
    double q = gsl_cdf_beta_Q(p, k + 1, n - k);
    return q == q ? q : 0;   /* NaN from a failed evaluation: no mass below k */
}

/* Spreads weight w over the bins of Binomial(n, p). */
static void add_binomial(struct pes_t2s_hist *out, double n, double p, double w) {
    if (n <= 0 || p <= 0) {
        out->bin[0] += w;
        return;
    }
    if (p >= 1) {
        out->bin[pes_rt_bin((uint64_t)n)] += w;
        return;
    }
    double mean = n * p, sd = sqrt(n * p * (1 - p));
    double klo = floor(mean - 12 * sd - 1), khi = ceil(mean + 12 * sd + 1);
    if (klo < 0) klo = 0;
    if (khi > n) khi = n;
    size_t b0 = pes_rt_bin((uint64_t)klo), b1 = pes_rt_bin((uint64_t)khi);
    double prev = 0;   /* mass below klo (< 1e-30) goes to the first bin */
    for (size_t b = b0; b <= b1; b++) {
        uint64_t lo, hi;
        pes_rt_bin_range(b, &lo, &hi);
        double cdf = b == b1 ? 1.0 : binom_cdf((double)hi - 1, n, p);
        if (cdf < prev) cdf = prev;   /* monotone even if an evaluation failed */
        out->bin[b] += w * (cdf - prev);
        prev = cdf;
    }
}

int pes_t2s_convert(const struct pes_t2s *c, struct pes_t2s_hist *out, struct pes_error *err) {
    if (!c || !out) return fail(err, PES_ERR_ARG, "NULL argument");
    /* GSL's default handler aborts on a numerical failure; a library must not
     * (binom_cdf maps a failed evaluation to 0) */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    for (size_t i = 0; i < c->n; i++)
        if (c->w[i] > 0) add_binomial(out, c->others, prob(c, c->x[i]), c->w[i]);
    gsl_set_error_handler(old);
    return 0;
}
