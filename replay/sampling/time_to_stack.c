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
    size_t n;            /* distinct distances */
    uint64_t *x;         /* ascending */
    double *w;           /* weight of each distance */
    double *cum_w;       /* [n+1] prefix sums of w */
    double *cum_wx;      /* [n+1] prefix sums of w * (x + 1) */
    double *cum_s2;      /* [n+1] sum over k <= x[i-1] of S(k)^2 (phased spread) */
    double never, total; /* total = reuses + never */
    double others;       /* N - 1 */
};

struct pair {
    uint64_t x;
    double w;
};

static int cmp_pair(const void *a, const void *b)
{
    uint64_t x = ((const struct pair *)a)->x, y = ((const struct pair *)b)->x;
    return (x > y) - (x < y);
}

static int fail(struct pes_error *err, int code, const char *what)
{
    if (err) {
        err->code = code;
        err->offset = 0;
        snprintf(err->message, sizeof err->message, "time-to-stack: %s", what);
    }
    return -1;
}

double pes_t2s_estimate_distinct(double accesses, double reused, double never)
{
    if (reused + never <= 0 || accesses <= 0)
        return 0;
    double n = accesses * never / (reused + never);
    return n < 1 ? 1 : n;
}

double pes_t2s_estimate_distinct_kac(const uint64_t *distance, const double *weight, size_t n)
{
    double sw = 0, sx = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weight ? weight[i] : 1.0;
        sw += w;
        sx += w * ((double)distance[i] + 1.0);
    }
    return sw > 0 ? sx / sw : 0;
}

double pes_t2s_never_weight(double n_distinct, double accesses, double reused)
{
    if (!(accesses > n_distinct) || !(n_distinct > 0))
        return reused > 0 ? reused : 1;
    return reused * n_distinct / (accesses - n_distinct);
}

void pes_t2s_destroy(struct pes_t2s *c)
{
    if (!c)
        return;
    free(c->x);
    free(c->w);
    free(c->cum_w);
    free(c->cum_wx);
    free(c->cum_s2);
    free(c);
}

struct pes_t2s *pes_t2s_create(const struct pes_t2s_input *in, struct pes_error *err)
{
    if (!in || (in->n && !in->distance) || !(in->n_distinct > 0) || !(in->never >= 0)) {
        fail(err, PES_ERR_ARG, "needs reuses, never >= 0 and a number of distinct data > 0");
        return NULL;
    }
    struct pes_t2s *c = calloc(1, sizeof *c);
    struct pair *p = malloc((in->n ? in->n : 1) * sizeof *p);
    if (!c || !p)
        goto nomem;
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
    size_t m = 0; /* merge equal distances */
    for (size_t i = 0; i < in->n; i++) {
        if (m && p[m - 1].x == p[i].x)
            p[m - 1].w += p[i].w;
        else
            p[m++] = p[i];
    }
    c->n = m;
    c->x = malloc((m ? m : 1) * sizeof *c->x);
    c->w = malloc((m ? m : 1) * sizeof *c->w);
    c->cum_w = malloc((m + 1) * sizeof *c->cum_w);
    c->cum_wx = malloc((m + 1) * sizeof *c->cum_wx);
    c->cum_s2 = malloc((m + 1) * sizeof *c->cum_s2);
    if (!c->x || !c->w || !c->cum_w || !c->cum_wx || !c->cum_s2)
        goto nomem;
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
    /* S(k) = P(X >= k) is constant on (x[i-1], x[i]] (x[-1] = -1), where
     * it is (weight of distances >= x[i] + never) / total */
    c->cum_s2[0] = 0;
    for (size_t i = 0; i < m; i++) {
        double s = c->total > 0 ? (c->total - c->cum_w[i]) / c->total : 0;
        double len = i ? (double)(c->x[i] - c->x[i - 1]) : (double)c->x[0] + 1.0;
        c->cum_s2[i + 1] = c->cum_s2[i] + len * s * s;
    }
    c->others = in->n_distinct > 1 ? floor(in->n_distinct - 1 + 0.5) : 0;
    if (c->others > 0x1p62)
        c->others = 0x1p62; /* stack distances stay uint64 (corrupt input) */
    return c;
nomem:
    free(p);
    pes_t2s_destroy(c);
    fail(err, PES_ERR_NOMEM, "out of memory");
    return NULL;
}

/* D(t) = E[min(X + 1, t)]: position k (1..t) of a window holds a datum not
 * seen earlier in the window iff its time distance is >= k - 1. */
double pes_t2s_footprint(const struct pes_t2s *c, uint64_t t)
{
    if (c->total <= 0)
        return 0;
    /* first index with x + 1 >= t */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)c->x[mid] + 1.0 >= (double)t)
            hi = mid;
        else
            lo = mid + 1;
    }
    double above = c->cum_w[c->n] - c->cum_w[lo] + c->never;
    return (c->cum_wx[lo] + (double)t * above) / c->total;
}

/* D(m) and G(m) = sum over k < m of S(k)^2, S(k) = P(X >= k) (the phased
 * model's mean and spread, below). */
static void footprint_sums(const struct pes_t2s *c, double m, double *d, double *g)
{
    *d = *g = 0;
    if (c->total <= 0 || m <= 0)
        return;
    size_t lo = 0, hi = c->n; /* first index with x + 1 >= m */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)c->x[mid] + 1.0 >= m)
            hi = mid;
        else
            lo = mid + 1;
    }
    double s = (c->total - c->cum_w[lo]) / c->total;
    double part = lo ? m - 1.0 - (double)c->x[lo - 1] : m;
    *d = c->cum_wx[lo] / c->total + m * s;
    *g = c->cum_s2[lo] + part * s * s;
}

static double prob(const struct pes_t2s *c, uint64_t t)
{
    if (c->others <= 0)
        return 0;
    double p = pes_t2s_footprint(c, t) / c->others;
    return p > 1 ? 1 : p;
}

double pes_t2s_expected(const struct pes_t2s *c, uint64_t t)
{
    return c->others * prob(c, t);
}

/* P(K <= k) for K ~ Binomial(n, p), 0 < p < 1; n may exceed 2^32 (hence the
 * incomplete-beta identity instead of gsl_cdf_binomial_P). */
static double binom_cdf(double k, double n, double p)
{
    if (k < 0)
        return 0;
    if (k >= n)
        return 1;
    double q = gsl_cdf_beta_Q(p, k + 1, n - k);
    return q == q ? q : 0; /* NaN from a failed evaluation: no mass below k */
}

/* Spreads weight w over the bins of Binomial(n, p). */
static void add_binomial(struct pes_t2s_hist *out, double n, double p, double w)
{
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
    if (klo < 0)
        klo = 0;
    if (khi > n)
        khi = n;
    size_t b0 = pes_rt_bin((uint64_t)klo), b1 = pes_rt_bin((uint64_t)khi);
    double prev = 0; /* mass below klo (< 1e-30) goes to the first bin */
    for (size_t b = b0; b <= b1; b++) {
        uint64_t lo, hi;
        pes_rt_bin_range(b, &lo, &hi);
        double cdf = b == b1 ? 1.0 : binom_cdf((double)hi - 1, n, p);
        if (cdf < prev)
            cdf = prev; /* monotone even if an evaluation failed */
        out->bin[b] += w * (cdf - prev);
        prev = cdf;
    }
}

int pes_t2s_convert(const struct pes_t2s *c, struct pes_t2s_hist *out, struct pes_error *err)
{
    if (!c || !out)
        return fail(err, PES_ERR_ARG, "NULL argument");
    /* GSL's default handler aborts on a numerical failure; a library must not
     * (binom_cdf maps a failed evaluation to 0) */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    for (size_t i = 0; i < c->n; i++)
        if (c->w[i] > 0)
            add_binomial(out, c->others, prob(c, c->x[i]), c->w[i]);
    gsl_set_error_handler(old);
    return 0;
}

/* ------------------------------------------------------------ phased model */

struct use {
    uint64_t pos, x;
    double w;
};

static int cmp_use(const void *a, const void *b)
{
    const struct use *u = a, *v = b;
    if (u->pos != v->pos)
        return (u->pos > v->pos) - (u->pos < v->pos);
    return (u->x > v->x) - (u->x < v->x);
}

size_t pes_t2s_phased_windows(size_t n, size_t window_min)
{
    size_t w = window_min ? n / window_min : 1;
    if (w > PES_T2S_MAX_WINDOWS)
        w = PES_T2S_MAX_WINDOWS; /* a reuse walks the windows it spans */
    return w ? w : 1;
}

/* Leave-one-out ranked probability score of windows of `window_min`: each
 * reuse's time-distance bin against the distribution of the OTHER reuses of
 * its window (cumulative over bins, squared error), weighted sum over the
 * reuses. NaN when out of memory. */
static double loo_score(const struct use *u, size_t n, size_t window_min, const double *all,
                        double all_w)
{
    size_t nw = pes_t2s_phased_windows(n, window_min);
    double score = 0, *cnt = malloc(PES_RT_BINS * sizeof *cnt);
    if (!cnt)
        return NAN;
    for (size_t k = 0; k < nw; k++) {
        size_t a = k * n / nw, b = (k + 1) * n / nw;
        double tot = 0;
        memset(cnt, 0, PES_RT_BINS * sizeof *cnt);
        for (size_t i = a; i < b; i++) {
            cnt[pes_rt_bin(u[i].x)] += u[i].w;
            tot += u[i].w;
        }
        for (size_t i = a; i < b; i++) {
            if (!(u[i].w > 0))
                continue;
            size_t bi = pes_rt_bin(u[i].x);
            /* the window without this reuse; the whole stream's if nothing is left */
            const double *c = cnt;
            double rest = tot - u[i].w;
            if (!(rest > 1e-12 * tot))
                c = all, rest = all_w - u[i].w;
            if (!(rest > 0))
                continue;
            double cum = 0, s = 0;
            for (size_t q = 0; q < PES_RT_BINS; q++) {
                cum += c[q] - (q == bi ? u[i].w : 0);
                double f = cum / rest - (q >= bi ? 1.0 : 0.0);
                s += f * f;
            }
            score += u[i].w * s;
        }
    }
    free(cnt);
    return score;
}

/* Window size from the data (docs/accuracy.md): the candidate (2, 4, 8, ...
 * reuses per window, or one window) whose windows best predict each reuse's
 * own time distance from the others' (loo_score); ties keep the larger
 * windows, so a stationary stream keeps one. u sorted by position. */
static size_t choose_window(const struct use *u, size_t n)
{
    double all[PES_RT_BINS] = {0}, all_w = 0;
    for (size_t i = 0; i < n; i++) {
        all[pes_rt_bin(u[i].x)] += u[i].w;
        all_w += u[i].w;
    }
    size_t best = n ? n : 1;
    if (!n || u[0].pos == u[n - 1].pos)
        return best; /* no positions: one window */
    double best_score = loo_score(u, n, best, all, all_w);
    size_t cand[64], nc = 0;
    size_t m = 2;
    while (n / m > PES_T2S_MAX_WINDOWS)
        m *= 2;
    for (; m < n && nc < 64; m *= 2)
        cand[nc++] = m;
    while (nc-- > 0) { /* from the largest down */
        double sc = loo_score(u, n, cand[nc], all, all_w);
        if (sc < best_score * (1 - 1e-9))
            best = cand[nc], best_score = sc;
    }
    return best;
}

/*
 * One reuse: use at position u, reuse at u + t + 1; the accesses between are
 * u + j, j = 1..t. Access u + j holds a datum not accessed again before the
 * reuse iff its forward time distance is >= t - j, so the stack distance is
 * K = sum_j [X(u+j) >= t - j]. With S_w(k) = P(X >= k) among the uses of the
 * window w that holds u + j, the j in w's part [a, b] contribute
 * sum_{k=t-b}^{t-a} S_w(k) = D_w(t-a+1) - D_w(t-b) to the mean and, as
 * independent indicators, that minus G_w(t-a+1) - G_w(t-b) to the variance.
 * `self` is the window holding the use itself, whose estimate leaves this
 * reuse out (its own X = t is the condition, not an observation of what lies
 * between).
 */
struct window {
    struct pes_t2s *c;
    uint64_t from; /* first position of the window; the next window's from ends it */
};

static void piece(const struct window *w, int leave_out, uint64_t t, double wi, double m_hi,
                  double m_lo, double *mean, double *var)
{
    double dh, gh, dl, gl;
    footprint_sums(w->c, m_hi, &dh, &gh);
    footprint_sums(w->c, m_lo, &dl, &gl);
    double T = w->c->total;
    if (leave_out && T - wi > 0 && wi > 0) {
        /* S without this reuse: (T S(k) - wi [t >= k]) / (T - wi) */
        double r = T - wi, sh = m_hi < (double)t + 1 ? m_hi : (double)t + 1,
               sl = m_lo < (double)t + 1 ? m_lo : (double)t + 1;
        double dsh, gsh, dsl, gsl; /* D up to min(m, t + 1): sum of S(k) where [t >= k] */
        footprint_sums(w->c, sh, &dsh, &gsh);
        footprint_sums(w->c, sl, &dsl, &gsl);
        double nd = (T * (dh - dl) - wi * (sh - sl)) / r;
        double ng = (T * T * (gh - gl) - 2 * T * wi * (dsh - dsl) + wi * wi * (sh - sl)) / (r * r);
        *mean += nd;
        *var += nd - ng;
        return;
    }
    *mean += dh - dl;
    *var += (dh - dl) - (gh - gl);
}

size_t pes_t2s_phased_choose(const struct pes_t2s_phased_input *in)
{
    if (!in || !in->n || !in->distance || !in->position)
        return 1;
    struct use *u = malloc(in->n * sizeof *u);
    if (!u)
        return in->n;
    for (size_t i = 0; i < in->n; i++)
        u[i] = (struct use){in->position[i], in->distance[i], in->weight ? in->weight[i] : 1.0};
    qsort(u, in->n, sizeof *u, cmp_use);
    size_t m = choose_window(u, in->n);
    free(u);
    return m;
}

int pes_t2s_convert_phased(const struct pes_t2s_phased_input *in, struct pes_t2s_hist *out,
                           struct pes_error *err)
{
    if (!in || !out || (in->n && (!in->distance || !in->position)) || !(in->n_distinct > 0) ||
        !(in->never >= 0))
        return fail(err, PES_ERR_ARG,
                    "needs reuses with positions, never >= 0 and a number of distinct data > 0");
    if (!in->n)
        return 0;
    struct use *u = malloc(in->n * sizeof *u);
    uint64_t *xs = malloc(in->n * sizeof *xs);
    double *ws = malloc(in->n * sizeof *ws);
    size_t nw = pes_t2s_phased_windows(in->n, in->window_min);
    struct window *win = NULL;
    int rc = -1;
    if (!u || !xs || !ws) {
        fail(err, PES_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < in->n; i++) {
        double w = in->weight ? in->weight[i] : 1.0;
        if (!(w >= 0)) {
            fail(err, PES_ERR_ARG, "negative reuse weight");
            goto done;
        }
        u[i] = (struct use){in->position[i], in->distance[i], w};
    }
    qsort(u, in->n, sizeof *u, cmp_use);
    if (!in->window_min)
        nw = pes_t2s_phased_windows(in->n, choose_window(u, in->n));
    if (u[0].pos == u[in->n - 1].pos)
        nw = 1; /* no positions (a trace without counts): one window */
    if (!(win = calloc(nw, sizeof *win))) {
        fail(err, PES_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* windows: nw runs of consecutive uses (by position) of equal count; a
     * window's positions reach from midway after the previous window's last
     * use to midway before the next window's first. The never-reused
     * weight goes to the last window: a use never reused is its datum's
     * last access, and in a stream that returns to its data those gather
     * at the end (spread evenly, they would add never/total of every
     * position to every long interval) */
    for (size_t k = 0; k < nw; k++) {
        size_t a = k * in->n / nw, b = (k + 1) * in->n / nw;
        for (size_t i = a; i < b; i++) {
            xs[i - a] = u[i].x;
            ws[i - a] = u[i].w;
        }
        struct pes_t2s_input wi = {.distance = xs,
                                   .weight = ws,
                                   .n = b - a,
                                   .never = k + 1 == nw ? in->never : 0,
                                   .n_distinct = in->n_distinct};
        if (!(win[k].c = pes_t2s_create(&wi, err)))
            goto done;
        win[k].from = k ? u[a - 1].pos + (u[a].pos - u[a - 1].pos) / 2 + 1 : 0;
    }
    double others = win[0].c->others;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    size_t self = 0; /* window of the current use (uses are sorted by position) */
    for (size_t i = 0; i < in->n; i++) {
        if (!(u[i].w > 0))
            continue;
        while (self + 1 < nw && i >= (self + 1) * in->n / nw)
            self++;
        uint64_t t = u[i].x;
        double mean = 0, var = 0;
        /* walk the windows covering positions pos + 1 .. pos + t */
        for (size_t k = self; k < nw && t > 0; k++) {
            uint64_t from = win[k].from,
                     to = k + 1 < nw ? win[k + 1].from : UINT64_MAX; /* [from, to) */
            uint64_t first = u[i].pos + 1, last = u[i].pos + t;      /* j = 1..t */
            if (last < u[i].pos)
                last = UINT64_MAX - 1; /* overflow on corrupt input */
            if (to <= first)
                continue;
            if (from > last)
                break;
            double ja = (double)(from > first ? from - u[i].pos : 1);
            double jb = (double)(to - 1 < last ? to - 1 - u[i].pos : t);
            piece(&win[k], k == self, t, u[i].w, (double)t - ja + 1, (double)t - jb, &mean, &var);
        }
        if (mean < 0)
            mean = 0;
        /* no cap at N - 1: the windows' sums count the data between use
         * and reuse directly, while N-hat (Kac: the mean return time) falls
         * far short of N when phases differ (a thread of phase-local sweeps
         * has a mean return time of about one sweep); where the mean exceeds
         * it, the data are at least the mean */
        double n_other = others > ceil(mean) ? others : ceil(mean);
        if (n_other <= 0) {
            out->bin[0] += u[i].w;
            continue;
        }
        /* the smaller of the two spreads: independent indicators along the
         * interval, or Shen's binomial over the other data (both ignore the
         * negative dependence of the truth's indicators) */
        double shen = mean * (1 - mean / n_other);
        if (var > shen)
            var = shen;
        if (var <= 1e-9 * (mean > 1 ? mean : 1)) {
            out->bin[pes_rt_bin((uint64_t)floor(mean + 0.5))] += u[i].w;
            continue;
        }
        /* Binomial(n, p) with this mean and variance: p = 1 - var / mean */
        double p = 1 - var / mean, n = floor(mean / p + 0.5);
        if (n < ceil(mean))
            n = ceil(mean);
        if (n > n_other)
            n = n_other;
        add_binomial(out, n, mean / n, u[i].w);
    }
    gsl_set_error_handler(old);
    rc = 0;
done:
    for (size_t k = 0; win && k < nw; k++)
        pes_t2s_destroy(win[k].c);
    free(win);
    free(u);
    free(xs);
    free(ws);
    return rc;
}
