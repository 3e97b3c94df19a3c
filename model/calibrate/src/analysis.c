/*
 * analysis.c — what the measurements mean (pes/calibrate.h): statistics of
 * repeats, plateaus and steps of a latency-vs-working-set curve, and level
 * latencies fitted to it. No clock here: the tests feed synthetic curves.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pes/calibrate.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pes_calib_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double pes_calib_min(const double *v, size_t n)
{
    double m = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double pes_calib_spread(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double lo = v[0], hi = v[0], tmp[64];
    size_t k = n < 64 ? n : 64;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    memcpy(tmp, v, k * sizeof v[0]);
    double med = pes_calib_median(tmp, k);
    return med > 0 ? 100.0 * (hi - lo) / med : NAN;
}

/* Median of the cycles of points first..last. */
static double run_median(const struct pes_calib_point *pt, size_t first, size_t last)
{
    double tmp[256];
    size_t k = 0;
    for (size_t i = first; i <= last && k < 256; i++)
        tmp[k++] = pt[i].cycles;
    return pes_calib_median(tmp, k);
}

static int close_to(double a, double b, double tol)
{
    return fabs(a / b - 1.0) <= tol;
}

int pes_calib_plateaus(const struct pes_calib_point *pt, size_t n, double tolerance,
                       struct pes_calib_plateau *out, size_t max, struct pes_error *err)
{
    if (!pt || !out || n < 2 || n > 256)
        return pes_error_set(err, PES_ERR_ARG, 0, "latency curve: %zu points (2..256 needed)", n);
    if (!(tolerance > 0 && tolerance < 1))
        return pes_error_set(err, PES_ERR_ARG, 0, "latency curve: tolerance %g not in (0,1)",
                             tolerance);
    for (size_t i = 0; i < n; i++) {
        if (!(pt[i].cycles > 0) || !isfinite(pt[i].cycles) || !(pt[i].size > 0))
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "latency curve: point %zu (%g bytes, %g cycles) is not positive",
                                 i, pt[i].size, pt[i].cycles);
        if (i && !(pt[i].size > pt[i - 1].size))
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "latency curve: working sets not increasing at point %zu", i);
    }
    /* maximal runs within the tolerance of their running median */
    size_t np = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && close_to(pt[j].cycles, run_median(pt, i, j - 1), tolerance))
            j++;
        if (j - i >= 2) {
            if (np == max)
                break;
            out[np++] = (struct pes_calib_plateau){.first = i, .last = j - 1};
            i = j;
        } else {
            i++; /* a point of a transition */
        }
    }
    /* merge neighbours of one level: an outlier split a plateau, or latency
     * drifts within a level (TLB reach, DRAM pages) — by less than twice the
     * tolerance, where successive cache levels differ by 2x or more */
    for (size_t k = 0; k < np; k++)
        out[k].cycles = run_median(pt, out[k].first, out[k].last);
    size_t m = 0;
    for (size_t k = 0; k < np; k++) {
        if (m && close_to(out[k].cycles, out[m - 1].cycles, 2 * tolerance)) {
            out[m - 1].last = out[k].last;
            out[m - 1].cycles = run_median(pt, out[m - 1].first, out[m - 1].last);
        } else {
            out[m++] = out[k];
        }
    }
    for (size_t k = 0; k < m; k++) {
        out[k].lo = pt[out[k].first].size;
        out[k].hi = pt[out[k].last].size;
    }
    return (int)m;
}

double pes_calib_boundary(const struct pes_calib_point *pt, size_t n,
                          const struct pes_calib_plateau *lower,
                          const struct pes_calib_plateau *upper)
{
    if (!pt || !lower || !upper || lower->last >= n || upper->first >= n ||
        upper->first <= lower->last)
        return 0;
    double g = sqrt(lower->cycles * upper->cycles);
    for (size_t j = lower->last; j < upper->first; j++) {
        double a = pt[j].cycles, b = pt[j + 1].cycles;
        if (a <= g && g <= b && b > a) {
            double f = (log(g) - log(a)) / (log(b) - log(a));
            return exp(log(pt[j].size) + f * (log(pt[j + 1].size) - log(pt[j].size)));
        }
    }
    return sqrt(pt[lower->last].size * pt[upper->first].size);
}

int pes_calib_fit_levels(const struct pes_calib_point *pt, size_t n, const uint64_t *size,
                         uint32_t n_levels, double tolerance, struct pes_calib_fit *fit,
                         struct pes_error *err)
{
    if (!fit || !size || n_levels < 1 || n_levels > PES_MAX_LEVELS)
        return pes_error_set(err, PES_ERR_ARG, 0, "fit: %u cache levels (1..%d)", n_levels,
                             PES_MAX_LEVELS);
    memset(fit, 0, sizeof *fit);
    int np = pes_calib_plateaus(pt, n, tolerance, fit->plateaus, 16, err);
    if (np < 0)
        return -1;
    fit->n_plateaus = np;
    if (np < 2)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "latency curve: %d plateau%s from %g to %g bytes; a cache and memory "
                             "need two (is the largest working set beyond the last cache?)",
                             np, np == 1 ? "" : "s", pt[0].size, pt[n - 1].size);
    const struct pes_calib_plateau *P = fit->plateaus;
    fit->n_levels = n_levels;
    fit->mem_latency = P[np - 1].cycles;
    int prev = -1;
    for (uint32_t i = 0; i < n_levels; i++) {
        double w = (double)size[i] / 2.0;
        int k = 0, geo = 0;
        for (int q = 0; q < np; q++)
            if (P[q].lo <= w)
                geo = q; /* holds w, or is the last one before it */
        /* L1 is where its size says. Every other level is a step after the
         * one above and at most where its size says (a cache shared with
         * other tenants ends early, and what follows is partly memory):
         * of those plateaus the widest, as a level spans its working sets
         * and a transition that levels off for two points does not. */
        if (i == 0) {
            k = geo;
        } else {
            int last = geo < np - 2 ? geo : np - 2;
            k = prev + 1;
            for (int q = prev + 2; q <= last; q++)
                if (P[q].last - P[q].first > P[k].last - P[k].first)
                    k = q;
        }
        if (k != geo)
            fit->mismatch[i] = 1;
        if (k > np - 2) { /* past every cache: smaller than said, or no step */
            k = np - 2 > prev ? np - 2 : prev;
            fit->mismatch[i] = 1;
        }
        if (k < 0)
            k = 0;
        fit->plateau[i] = k;
        fit->latency[i] = P[k].cycles;
        fit->capacity[i] = pes_calib_boundary(pt, n, &P[k], &P[k + 1]);
        double c = fit->capacity[i];
        if (c > 0 && (c > 2.0 * (double)size[i] || c < 0.5 * (double)size[i]))
            fit->mismatch[i] = 1;
        prev = k;
    }
    return 0;
}

/* Median of the cycles of points [lo, hi). */
static double span_median(const struct pes_calib_point *pt, size_t lo, size_t hi)
{
    double tmp[3];
    size_t k = 0;
    for (size_t i = lo; i < hi && k < 3; i++)
        tmp[k++] = pt[i].cycles;
    return pes_calib_median(tmp, k);
}

int pes_calib_main_step(const struct pes_calib_point *pt, size_t n, double frac, double hint,
                        struct pes_calib_step *out, struct pes_error *err)
{
    if (!pt || !out || n < 4 || !(frac > 0 && frac < 1))
        return pes_error_set(err, PES_ERR_ARG, 0, "step: %zu points (4 or more needed)", n);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(pt[i].cycles) || !(pt[i].size > 0) || (i && !(pt[i].size > pt[i - 1].size)))
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "step: point %zu (%g, %g) not finite or not increasing", i,
                                 pt[i].size, pt[i].cycles);
    /* the rise at every split. With a hint: the highest rise at a split
     * within 2x of it (the CPU says where the step is; the sweep says how
     * high, and whether there is one). Without: the first local maximum
     * (the first split of a run of equal rises) at least a quarter as high
     * as the highest (a TLB's reach comes after a first-level TLB's smaller
     * step and before the later rise where the page walk's own entries
     * leave the caches) */
    double J[256];
    if (n > 256)
        return pes_error_set(err, PES_ERR_ARG, 0, "step: %zu points (256 at most)", n);
    double top = -INFINITY;
    for (size_t k = 2; k + 2 <= n; k++) {
        J[k] = span_median(pt, k, k + 3 < n ? k + 3 : n) - span_median(pt, k >= 3 ? k - 3 : 0, k);
        double at = sqrt(pt[k - 1].size * pt[k].size);
        if (!(hint > 0) || (at >= hint / 2 && at <= hint * 2))
            top = J[k] > top ? J[k] : top;
    }
    if (!(top > 0))
        return pes_error_set(err, PES_ERR_ARG, 0, "step: the curve does not rise%s",
                             hint > 0 ? " near the hint" : "");
    size_t best = 0;
    for (size_t k = 2; k + 2 <= n && !best; k++) {
        double at = sqrt(pt[k - 1].size * pt[k].size);
        if (hint > 0)
            best = at >= hint / 2 && at <= hint * 2 && J[k] == top ? k : 0;
        else if (J[k] >= 0.25 * top && (k + 3 > n || J[k] >= J[k + 1]) &&
                 (k == 2 || J[k] > J[k - 1]))
            best = k;
    }
    out->below = span_median(pt, best >= 3 ? best - 3 : 0, best);
    out->above = span_median(pt, best, best + 3 < n ? best + 3 : n);
    double jump = out->above - out->below;
    out->index = best;
    double g = out->below + frac * jump;
    size_t lo = best >= 3 ? best - 3 : 0, hi = best + 2 < n - 1 ? best + 2 : n - 1;
    out->at = sqrt(pt[best - 1].size * pt[best].size);
    for (size_t j = lo; j < hi; j++) {
        double a = pt[j].cycles, b = pt[j + 1].cycles;
        if (a <= g && g < b) {
            double f = (g - a) / (b - a);
            out->at = exp(log(pt[j].size) + f * (log(pt[j + 1].size) - log(pt[j].size)));
            break;
        }
    }
    return 0;
}

double pes_calib_mlp(const double *k, const double *t, size_t n, double *knee)
{
    if (!k || !t || n < 1 || k[0] != 1)
        return NAN;
    double lo = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0) || !isfinite(t[i]) || (i && !(k[i] > k[i - 1])))
            return NAN;
        lo = t[i] < lo ? t[i] : lo;
    }
    if (knee)
        for (size_t i = 0; i < n; i++)
            if (t[i] <= 1.1 * lo) {
                *knee = k[i];
                break;
            }
    return t[0] / lo;
}

double pes_calib_prefetch_stride(const double *stride, const double *cycles, size_t n,
                                 double random)
{
    if (!stride || !cycles || n < 1 || !(cycles[0] > 0) || !(random >= 1.5 * cycles[0]) ||
        !isfinite(random))
        return 0;
    double limit = sqrt(cycles[0] * random), best = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(cycles[i] < limit) || (i && !(stride[i] > stride[i - 1])))
            break;
        best = stride[i];
    }
    return best;
}

uint64_t pes_calib_round_size(double bytes, uint32_t ways, uint32_t line)
{
    double set_bytes = (double)(ways ? ways : 1) * (line ? line : 64);
    double sets = bytes / set_bytes;
    if (!(sets >= 1))
        sets = 1;
    double p = pow(2.0, round(log2(sets)));
    return (uint64_t)p * (uint64_t)set_bytes;
}
