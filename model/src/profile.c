/* Reuse profile: exact counts for small distances, log2 bins beyond (model.h). */
#include <string.h>

#include "pes/model.h"

void pes_profile_init(struct pes_reuse_profile *p)
{
    memset(p, 0, sizeof *p);
}

size_t pes_profile_bin_index(uint64_t d)
{
    if (d < PES_PROFILE_EXACT)
        return (size_t)d;
    unsigned k = 63u - (unsigned)__builtin_clzll(d); /* floor(log2 d), >= 10 */
    if (k > PES_PROFILE_LOG2_LAST)
        k = PES_PROFILE_LOG2_LAST; /* clamp: >= 2^48 lines */
    return PES_PROFILE_EXACT + (k - PES_PROFILE_LOG2_FIRST);
}

void pes_profile_bin_range(size_t i, uint64_t *lo, uint64_t *hi)
{
    if (i < PES_PROFILE_EXACT) {
        *lo = i;
        *hi = i + 1;
        return;
    }
    unsigned k = PES_PROFILE_LOG2_FIRST + (unsigned)(i - PES_PROFILE_EXACT);
    *lo = 1ull << k;
    *hi = 1ull << (k + 1);
}

uint64_t pes_profile_bin_count(const struct pes_reuse_profile *p, size_t i)
{
    if (i < PES_PROFILE_EXACT)
        return p->exact[i];
    if (i < PES_PROFILE_BINS)
        return p->log2[i - PES_PROFILE_EXACT];
    return 0;
}

void pes_profile_add(struct pes_reuse_profile *p, uint64_t d, uint64_t count)
{
    if (d == PES_DISTANCE_COLD) {
        p->cold += count;
        return;
    }
    size_t i = pes_profile_bin_index(d);
    if (i < PES_PROFILE_EXACT)
        p->exact[i] += count;
    else
        p->log2[i - PES_PROFILE_EXACT] += count;
}

void pes_profile_merge(struct pes_reuse_profile *dst, const struct pes_reuse_profile *src)
{
    for (size_t i = 0; i < PES_PROFILE_EXACT; i++)
        dst->exact[i] += src->exact[i];
    for (size_t i = 0; i < PES_PROFILE_LOG2_BINS; i++)
        dst->log2[i] += src->log2[i];
    dst->cold += src->cold;
}

uint64_t pes_profile_total(const struct pes_reuse_profile *p)
{
    uint64_t t = p->cold;
    for (size_t i = 0; i < PES_PROFILE_BINS; i++)
        t += pes_profile_bin_count(p, i);
    return t;
}

double pes_profile_mean(const struct pes_reuse_profile *p)
{
    double sum = 0, n = 0;
    for (size_t i = 0; i < PES_PROFILE_BINS; i++) {
        uint64_t c = pes_profile_bin_count(p, i);
        if (!c)
            continue;
        uint64_t lo, hi;
        pes_profile_bin_range(i, &lo, &hi);
        /* uniform inside the bin: mean of lo .. hi-1 */
        sum += (double)c * (((double)lo + (double)(hi - 1)) / 2.0);
        n += (double)c;
    }
    return n > 0 ? sum / n : 0.0;
}
