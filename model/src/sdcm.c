/* SDCM hit probabilities (PPT-Multicore Eq. 1–3, after Brehob & Enbody). */
#include <math.h>
#include <gsl/gsl_cdf.h>

#include "internal.h"

/* Exact averaging is used for bins up to this width; wider bins use a midpoint rule. */
#define BIN_EXACT_WIDTH 4096u
/* Sub-intervals of the midpoint rule. P(h|D) is non-increasing in D, so the
 * rule's error is at most (P(lo) - P(hi-1)) / BIN_SUBDIV <= 1/1024 per bin. */
#define BIN_SUBDIV 1024u

double pes_sdcm_hit_prob(uint64_t d, uint64_t blocks, uint32_t ways)
{
    if (blocks == 0 || ways > blocks)
        return NAN;
    if (ways == 0) /* fully associative LRU: exact */
        return d < blocks ? 1.0 : 0.0;
    if (d < ways) /* Binomial(D, .) <= D <= A-1 */
        return 1.0;
    if (ways == blocks) /* one set: p = 1, hit iff D <= A-1 (handled above) */
        return 0.0;
    double B = (double)blocks;
    if (ways == 1) /* Eq. 2, ((B-1)/B)^D without cancellation */
        return exp((double)d * log1p(-1.0 / B));
    double p = (double)ways / B;
    if (d <= UINT32_MAX) /* Eq. 1 */
        return gsl_cdf_binomial_P(ways - 1, p, (unsigned int)d);
    /* gsl_cdf_binomial_P takes n as unsigned int; past 2^32 use the identity it is
     * built on: P[Bin(n,p) <= k] = Q_beta(p; k+1, n-k), with real n. */
    return gsl_cdf_beta_Q(p, (double)ways, (double)(d - ways + 1));
}

double pes_sdcm_bin_hit_prob(uint64_t lo, uint64_t hi, uint64_t blocks, uint32_t ways)
{
    if (blocks == 0 || ways > blocks || hi <= lo)
        return NAN;
    uint64_t w = hi - lo;
    if (ways == 0) { /* fraction of [lo, hi) below B */
        if (blocks <= lo)
            return 0.0;
        uint64_t top = blocks < hi ? blocks : hi;
        return (double)(top - lo) / (double)w;
    }
    if (ways == 1 && ways < blocks) { /* geometric sum of Eq. 2 */
        double lq = log1p(-1.0 / (double)blocks);
        /* sum_{D=lo}^{hi-1} q^D / w = q^lo (1 - q^w) / ((1 - q) w) */
        return exp((double)lo * lq) * -expm1((double)w * lq) / (-expm1(lq) * (double)w);
    }
    double a = pes_sdcm_hit_prob(lo, blocks, ways);
    double b = pes_sdcm_hit_prob(hi - 1, blocks, ways);
    if (a == b) /* monotone: constant over the bin */
        return a;
    double sum = 0;
    if (w <= BIN_EXACT_WIDTH) {
        for (uint64_t d = lo; d < hi; d++)
            sum += pes_sdcm_hit_prob(d, blocks, ways);
        return sum / (double)w;
    }
    uint64_t step = w / BIN_SUBDIV; /* w is a power of two >= 8192 for log2 bins */
    if (step * BIN_SUBDIV != w) {
        /* not a log2 bin: fall back to even steps over real positions */
        for (unsigned j = 0; j < BIN_SUBDIV; j++) {
            double x = (double)lo + ((double)j + 0.5) * (double)w / BIN_SUBDIV;
            sum += pes_sdcm_hit_prob((uint64_t)x, blocks, ways);
        }
        return sum / BIN_SUBDIV;
    }
    for (unsigned j = 0; j < BIN_SUBDIV; j++)
        sum += pes_sdcm_hit_prob(lo + j * step + step / 2, blocks, ways);
    return sum / BIN_SUBDIV;
}

static int check_level(const struct pes_cache_config *c, struct pes_error *err)
{
    if (c->line == 0 || c->size < c->line || c->size % c->line)
        return pes_model_fail(err, PES_ERR_ARG, "cache: size %llu is not a multiple of line %u",
                              (unsigned long long)c->size, c->line);
    uint64_t blocks = c->size / c->line;
    if (c->ways > blocks || (c->ways && blocks % c->ways))
        return pes_model_fail(err, PES_ERR_ARG, "cache: %u ways do not divide %llu blocks", c->ways,
                              (unsigned long long)blocks);
    return 0;
}

int pes_sdcm_hit_rate(const struct pes_reuse_profile *p, const struct pes_cache_config *c,
                      double *hit_rate, struct pes_error *err)
{
    if (!p || !c || !hit_rate)
        return pes_model_fail(err, PES_ERR_ARG, "pes_sdcm_hit_rate: NULL argument");
    if (check_level(c, err))
        return -1;
    uint64_t blocks = c->size / c->line;
    double total = (double)p->cold, hits = 0; /* Eq. 3: cold accesses miss */
    for (size_t i = 0; i < PES_PROFILE_BINS; i++) {
        uint64_t n = pes_profile_bin_count(p, i);
        if (!n)
            continue;
        uint64_t lo, hi;
        pes_profile_bin_range(i, &lo, &hi);
        hits += (double)n * pes_sdcm_bin_hit_prob(lo, hi, blocks, c->ways);
        total += (double)n;
    }
    *hit_rate = total > 0 ? hits / total : 0.0;
    return 0;
}

int pes_model_hit_rates(const struct pes_machine *m,
                        const struct pes_reuse_profile *const profile[], double hit[PES_MAX_LEVELS],
                        struct pes_error *err)
{
    if (!m || !profile || !hit)
        return pes_model_fail(err, PES_ERR_ARG, "pes_model_hit_rates: NULL argument");
    if (pes_machine_validate(m, err))
        return -1;
    for (unsigned i = 0; i < PES_MAX_LEVELS; i++)
        hit[i] = 0;
    for (unsigned i = 0; i < m->n_levels; i++) {
        if (!profile[i])
            return pes_model_fail(err, PES_ERR_ARG, "pes_model_hit_rates: no profile for L%u",
                                  i + 1);
        if (pes_sdcm_hit_rate(profile[i], &m->level[i], &hit[i], err))
            return -1;
        /* Global hit rates of inclusive LRU levels cannot decrease downwards; a CRD
         * profile can make a shared level look worse than the private one above it. */
        if (i > 0 && hit[i] < hit[i - 1])
            hit[i] = hit[i - 1];
    }
    return 0;
}
