/*
 * compare.c — accuracy metrics (see compare.h).
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double pes_cmp_similarity(const double *a, const double *b, size_t n)
{
    double sa = 0, sb = 0;
    for (size_t i = 0; i < n; i++) {
        sa += a[i];
        sb += b[i];
    }
    if (sa <= 0 && sb <= 0)
        return 1;
    if (sa <= 0 || sb <= 0)
        return 0;
    double l1 = 0;
    for (size_t i = 0; i < n; i++)
        l1 += fabs(a[i] / sa - b[i] / sb);
    double s = 1 - l1 / 2;
    return s < 0 ? 0 : s;
}

static int by_value_desc(const void *pa, const void *pb)
{
    const struct pes_cmp_site *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

/* The top k entries with value > 0, sorted (a fresh array, *n set). */
static struct pes_cmp_site *top(const struct pes_cmp_site *t, size_t n, size_t k, size_t *out_n)
{
    struct pes_cmp_site *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].value > 0)
            c[m++] = t[i];
    qsort(c, m, sizeof *c, by_value_desc);
    *out_n = m < k ? m : k;
    return c;
}

/* Truth of a key (0 if absent): a linear scan keeps it simple; tables hold
 * at most a few thousand sites and this runs k times. */
static double truth_of(const struct pes_cmp_site *t, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].key == key)
            return t[i].value;
    return 0;
}

int pes_cmp_topk(const struct pes_cmp_site *full, size_t n_full, const struct pes_cmp_site *sampled,
                 size_t n_sampled, size_t k, struct pes_cmp_topk *out, struct pes_error *err)
{
    memset(out, 0, sizeof *out);
    size_t nf, ns;
    struct pes_cmp_site *tf = top(full, n_full, k, &nf), *ts = top(sampled, n_sampled, k, &ns);
    if (!tf || !ts) {
        free(tf);
        free(ts);
        if (err) {
            err->code = PES_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "compare: out of memory");
        }
        return -1;
    }
    for (size_t i = 0; i < nf; i++)
        out->v1 += tf[i].value;
    for (size_t i = 0; i < ns; i++) {
        double v = truth_of(full, n_full, ts[i].key);
        out->v2 += v > 0 ? v : 0;
        if (!(v > 0))
            out->false_positives++;
    }
    out->n_full = (uint32_t)nf;
    out->n_sampled = (uint32_t)ns;
    out->coverage = out->v1 > 0 ? out->v2 / out->v1 : NAN;
    free(tf);
    free(ts);
    return 0;
}

void pes_cmp_matrix(const double *truth, const double *est, size_t cells,
                    struct pes_cmp_matrix *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < cells; i++) {
        out->total_true += truth[i];
        out->total_est += est[i];
    }
    /* nothing on both sides agrees exactly; an estimate of 0 against a
     * positive truth is -100 % and every cell off (similarity 0) */
    out->volume_error = out->total_true > 0  ? (out->total_est - out->total_true) / out->total_true
                        : out->total_est > 0 ? NAN
                                             : 0;
    out->cell_error = out->total_true > 0  ? 1 - pes_cmp_similarity(truth, est, cells)
                      : out->total_est > 0 ? NAN
                                           : 0;
}

double pes_cmp_fraction_error(double est_part, double est_total, double true_part,
                              double true_total)
{
    if (!(est_total > 0) || !(true_total > 0))
        return NAN;
    return est_part / est_total - true_part / true_total;
}
