/* histogram.c — reuse-distance histogram; see histogram.h. */
#include "histogram.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t round_pow2(uint64_t x)
{
    uint64_t p = 1;
    while (p < x && p < (UINT64_C(1) << 62))
        p <<= 1;
    return p;
}

int pes_rd_hist_init(struct pes_rd_hist *h, uint64_t exact_limit, struct pes_error *err)
{
    memset(h, 0, sizeof *h);
    if (exact_limit == 0)
        exact_limit = PES_RD_HIST_DEFAULT_EXACT;
    if (exact_limit > (UINT64_C(1) << 28)) {
        if (err) {
            err->code = PES_ERR_ARG;
            err->offset = 0;
            snprintf(err->message, sizeof err->message,
                     "histogram: exact limit %llu too large (max 2^28)",
                     (unsigned long long)exact_limit);
        }
        return -1;
    }
    h->exact_limit = round_pow2(exact_limit);
    return 0;
}

void pes_rd_hist_free(struct pes_rd_hist *h)
{
    free(h->exact);
    h->exact = NULL;
    h->exact_n = 0;
}

void pes_rd_hist_clear(struct pes_rd_hist *h)
{
    if (h->exact_n)
        memset(h->exact, 0, h->exact_n * sizeof *h->exact);
    memset(h->log2, 0, sizeof h->log2);
    h->cold = h->total = 0;
    h->sum = 0;
}

int pes_rd_hist_reserve(struct pes_rd_hist *h, uint64_t d)
{
    if (d < h->exact_n)
        return 0;
    if (d >= h->exact_limit)
        return -1;
    uint64_t n = h->exact_n ? h->exact_n : 16;
    while (n <= d)
        n *= 2;
    if (n > h->exact_limit)
        n = h->exact_limit;
    uint64_t *e = realloc(h->exact, n * sizeof *e);
    if (!e)
        return -1;
    memset(e + h->exact_n, 0, (n - h->exact_n) * sizeof *e);
    h->exact = e;
    h->exact_n = n;
    return 0;
}

int pes_rd_hist_add_n(struct pes_rd_hist *h, uint64_t d, uint64_t n)
{
    if (d != UINT64_MAX && d < h->exact_limit && pes_rd_hist_reserve(h, d) < 0)
        return -1;
    h->total += n;
    if (d == UINT64_MAX) {
        h->cold += n;
        return 0;
    }
    h->sum += (double)d * (double)n;
    if (d < h->exact_limit)
        h->exact[d] += n;
    else
        h->log2[63 - __builtin_clzll(d)] += n;
    return 0;
}

int pes_rd_hist_add(struct pes_rd_hist *h, uint64_t d)
{
    return pes_rd_hist_add_n(h, d, 1);
}

int pes_rd_hist_merge(struct pes_rd_hist *dst, const struct pes_rd_hist *src)
{
    if (dst->exact_limit != src->exact_limit ||
        (src->exact_n && pes_rd_hist_reserve(dst, src->exact_n - 1) < 0))
        return -1;
    for (uint64_t i = 0; i < src->exact_n; i++)
        dst->exact[i] += src->exact[i];
    for (int b = 0; b < PES_RD_HIST_LOG2_BINS; b++)
        dst->log2[b] += src->log2[b];
    dst->cold += src->cold;
    dst->total += src->total;
    dst->sum += src->sum;
    return 0;
}

double pes_rd_hist_below(const struct pes_rd_hist *h, uint64_t c)
{
    double n = 0;
    uint64_t lim = c < h->exact_n ? c : h->exact_n;
    for (uint64_t i = 0; i < lim; i++)
        n += (double)h->exact[i];
    if (c <= h->exact_limit)
        return n;
    for (int b = 0; b < PES_RD_HIST_LOG2_BINS; b++) {
        uint64_t lo = UINT64_C(1) << b;
        if (lo < h->exact_limit)
            continue;
        uint64_t hi = b == 63 ? UINT64_MAX : (UINT64_C(1) << (b + 1));
        if (hi <= c)
            n += (double)h->log2[b];
        else if (lo < c)
            n += (double)h->log2[b] * (double)(c - lo) / (double)(hi - lo);
    }
    return n;
}

double pes_rd_hist_mean(const struct pes_rd_hist *h)
{
    uint64_t finite = h->total - h->cold;
    return finite ? h->sum / (double)finite : 0.0;
}

int pes_rd_hist_to_profile(const struct pes_rd_hist *h, struct pes_reuse_profile *p)
{
    if (h->exact_limit < PES_PROFILE_EXACT)
        return -1;
    memset(p, 0, sizeof *p);
    p->cold = h->cold;
    for (uint64_t d = 0; d < PES_PROFILE_EXACT && d < h->exact_n; d++)
        p->exact[d] = h->exact[d];
    /* our exact counts above the model's exact range fold into its log2 bins */
    for (uint64_t d = PES_PROFILE_EXACT; d < h->exact_n; d++)
        p->log2[63 - __builtin_clzll(d) - PES_PROFILE_LOG2_FIRST] += h->exact[d];
    for (unsigned b = PES_PROFILE_LOG2_FIRST; b < PES_RD_HIST_LOG2_BINS; b++) {
        unsigned k = b > PES_PROFILE_LOG2_LAST ? PES_PROFILE_LOG2_LAST : b;
        p->log2[k - PES_PROFILE_LOG2_FIRST] += h->log2[b];
    }
    return 0;
}
