/*
 * assumptions.c — naming why the model (SDCM) and the simulation disagree,
 * where the reason lies outside SDCM's assumptions (assumptions.h).
 *
 * SDCM's P(hit | D) = P[Binomial(D, A/B) <= A-1] is exact in expectation
 * when the D distinct lines between two uses of a line sit in the sets at
 * random (docs/model.md §2). Two access patterns break that assumption, and
 * a level is named for one of them only where its simulated local hit rate
 * is more than REPORT_DISAGREE_PP from the model's (the report's warning):
 *
 *  - set conflicts ("set_conflicts"): at least REPORT_CONFLICT_SHARE of the
 *    level's simulated misses are conflict misses (a fully associative LRU
 *    cache of the same size would have hit) and the simulation hits less
 *    than the model. Power-of-two leading dimensions do this: a column walk
 *    over rows 2^k bytes apart maps every row to the same few sets, far
 *    from a random placement. The site with most of them, its stride and
 *    the sets that stride can reach are the evidence.
 *  - a cyclic reuse at the capacity ("cyclic_at_capacity"): lines that sit
 *    in the sets evenly (consecutive lines, set = line mod S) make an LRU
 *    cache hit iff D < B, a step; SDCM replaces the step by a slope whose
 *    width is the binomial's spread (about sqrt(A) lines per set). The band
 *    [lo, hi) of pes_assumptions_band is where the two differ by more than
 *    PES_ASSUMPTIONS_BAND_EDGE = 5 % per reuse: 1 - P(hit | D) > 5 % below B
 *    and P(hit | D) > 5 % from B on. Outside it, reuses of an even placement
 *    cannot move the hit rate by more than 5 pp together, the report's own
 *    threshold; so the rule sums, over the profile's reuses in the band,
 *    step(D) - P(hit | D) (distances uniform inside a log2 bin, as the model
 *    has them), per access reaching the level, and names the level when that
 *    shift alone exceeds REPORT_DISAGREE_PP in the direction the simulation
 *    moved. For the haswell L1 (512 lines, 8 ways) the band is 257..838
 *    lines: a walk over exactly 512 lines, again and again, hits on every
 *    reuse in the simulation and on fewer than half in SDCM; over 576 lines,
 *    on none against about a third (e2e.replay_sdcm_assumptions).
 *
 *  - a level above named ("level_above"): a level's accesses are the misses
 *    of the level above it, and where that level is outside SDCM's
 *    assumptions those misses differ between the model and the simulation,
 *    so the local hit rates below differ too, whatever this level's own
 *    profile does. A disagreeing level with no reason of its own names the
 *    nearest level above that has one ("above").
 *
 * Above the histogram's exact range (1,024 lines) the profile knows a
 * distance only to its power-of-two bin; the rule then spreads the bin evenly
 * as the model does, and says so ("binned"): a band fed mostly by bins is
 * the model's own approximation at work, not necessarily a cyclic walk.
 *
 * The profile of a level is the one the model used: the CRD summed over the
 * configuration's groups for a shared level, else the PRD summed over its
 * streams.
 */
#include "assumptions.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pes/model.h"
#include "report_util.h"

void pes_assumptions_band(uint64_t blocks, uint32_t ways, uint64_t *lo, uint64_t *hi)
{
    *lo = *hi = blocks;
    if (ways == 0 || ways >= blocks)
        return; /* fully associative: SDCM is the step itself */
    /* P(hit | D) is non-increasing in D: bisect for the first D below each edge */
    const double edge[2] = {1.0 - PES_ASSUMPTIONS_BAND_EDGE, PES_ASSUMPTIONS_BAND_EDGE};
    uint64_t *out[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        uint64_t a = 0, b = 64 * blocks; /* P(hit | 64 B) < 1e-9 for every A < B */
        while (a < b) {
            uint64_t m = a + (b - a) / 2;
            double p = pes_sdcm_hit_prob(m, blocks, ways);
            if (k == 0 ? p < edge[k] : p <= edge[k])
                b = m;
            else
                a = m + 1;
        }
        *out[k] = a;
    }
    if (*lo > blocks) /* cannot be (P(hit | D) < 1 from D = A on), but keep lo <= B <= hi */
        *lo = blocks;
    if (*hi < blocks)
        *hi = blocks;
}

/* The reuses of a profile inside a level's band: their count and their
 * summed step(D) - P(hit | D). */
struct band_sum {
    double mass, shift;
    double binned; /* of mass, from log2 bins (distances known to a power of two) */
};

static void add_part(struct band_sum *s, double n, uint64_t lo, uint64_t hi, uint64_t a, uint64_t b,
                     uint64_t blocks, uint32_t ways, int below, int binned)
{
    if (a < lo)
        a = lo;
    if (b > hi)
        b = hi;
    if (a >= b)
        return;
    double w = n * (double)(b - a) / (double)(hi - lo);
    double p = pes_sdcm_bin_hit_prob(a, b, blocks, ways);
    s->mass += w;
    s->binned += binned ? w : 0;
    s->shift += below ? w * (1.0 - p) : -w * p;
}

/* One histogram ("exact": [d, n] pairs, "log2": [lo, hi, n] triples). */
static void add_histogram(struct band_sum *s, const struct pes_rnode *h, uint64_t blocks,
                          uint32_t ways, uint64_t lo, uint64_t hi)
{
    const struct pes_rnode *ex = pes_r_get(h, "exact"), *lg = pes_r_get(h, "log2");
    for (size_t i = 0; i < pes_r_count(ex); i++) {
        const struct pes_rnode *bin = pes_r_at(ex, i);
        uint64_t d = pes_r_u(pes_r_at(bin, 0));
        double n = pes_r_f(pes_r_at(bin, 1));
        add_part(s, n, d, d + 1, lo, blocks, blocks, ways, 1, 0);
        add_part(s, n, d, d + 1, blocks, hi, blocks, ways, 0, 0);
    }
    for (size_t i = 0; i < pes_r_count(lg); i++) {
        const struct pes_rnode *bin = pes_r_at(lg, i);
        uint64_t a = pes_r_u(pes_r_at(bin, 0)), b = pes_r_u(pes_r_at(bin, 1));
        double n = pes_r_f(pes_r_at(bin, 2));
        if (b <= a)
            continue;
        add_part(s, n, a, b, lo, blocks, blocks, ways, 1, b - a > 1);
        add_part(s, n, a, b, blocks, hi, blocks, ways, 0, b - a > 1);
    }
}

/* The band sums of the profile the model used for a level. */
static struct band_sum level_band(const struct pes_rnode *c, int shared, uint64_t blocks,
                                  uint32_t ways, uint64_t lo, uint64_t hi)
{
    struct band_sum s = {0, 0, 0};
    const struct pes_rnode *crd = pes_r_get(c, "crd");
    const struct pes_rnode *list = shared && pes_r_count(crd) ? crd : pes_r_get(c, "prd");
    for (size_t i = 0; i < pes_r_count(list); i++)
        add_histogram(&s, pes_r_get(pes_r_at(list, i), "histogram"), blocks, ways, lo, hi);
    return s;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* Where a level's conflict misses concentrate: the all_sites row with the
 * most (text-only rows of a simulation), its stride (site_strides) and the
 * sets that stride reaches (set = line mod sets: a step of k lines visits
 * sets / gcd(k, sets) of them). */
static void conflict_site(struct pes_report *r, struct pes_rnode *o, const struct pes_rnode *c,
                          size_t l, const struct pes_rnode *geometry)
{
    const struct pes_rnode *top = report_top_conflict_site(pes_r_get(c, "simulation"), l);
    if (!top)
        return;
    char where[512];
    if (pes_r_get_u(top, "line") && *pes_r_get_s(top, "file"))
        snprintf(where, sizeof where, "%s:%" PRIu64 " %s", base_name(pes_r_get_s(top, "file")),
                 pes_r_get_u(top, "line"), pes_r_get_s(top, "function"));
    else
        snprintf(where, sizeof where, "site %" PRIu64 " %s", pes_r_get_u(top, "site"),
                 pes_r_get_s(top, "function"));
    pes_r_str(r, o, "site", where);
    pes_r_f64(r, o, "site_conflict_misses", pes_r_f(pes_r_at(pes_r_get(top, "conflict"), l)),
              "%.0f");
    const struct pes_rnode *strides = pes_r_get(c, "site_strides"), *sr = NULL;
    for (size_t i = 0; i < pes_r_count(strides) && !sr; i++)
        if (pes_r_get_u(pes_r_at(strides, i), "site") == pes_r_get_u(top, "site"))
            sr = pes_r_at(strides, i);
    uint64_t stride = pes_r_get_u(sr, "min_stride");
    uint64_t ways = pes_r_get_u(geometry, "ways"), line = pes_r_get_u(geometry, "line");
    uint64_t sets = ways && line ? pes_r_get_u(geometry, "size") / (ways * line) : 0;
    if (!stride || !line || stride % line || sets < 2)
        return;
    uint64_t k = (stride / line) % sets;
    pes_r_u64(r, o, "stride_bytes", stride);
    pes_r_u64(r, o, "sets_reached", k ? sets / gcd(k, sets) : 1);
    pes_r_u64(r, o, "sets", sets);
}

static struct pes_rnode *entry(struct pes_report *r, struct pes_rnode **list,
                               struct pes_rnode *config, size_t l, const char *reason, double model,
                               double sim)
{
    if (!*list)
        *list = pes_r_array(r, config, "model_assumptions");
    struct pes_rnode *o = pes_r_object(r, *list, NULL);
    pes_r_u64(r, o, "level", l + 1);
    pes_r_str(r, o, "reason", reason);
    pes_r_f64(r, o, "model", model, "%.6f");
    pes_r_f64(r, o, "simulation", sim, "%.6f");
    return o;
}

/* The reasons of level l's own (set conflicts, a cyclic reuse at the
 * capacity) for a disagreement: their entries, and whether there is one. */
static int own_reasons(struct pes_report *r, struct pes_rnode **list, struct pes_rnode *config,
                       const struct pes_rnode *c, size_t l, const struct pes_rnode *g, double model,
                       double sim, double reaching, double hits)
{
    int named = 0;
    const struct pes_rnode *lv = pes_r_at(pes_r_get(pes_r_get(c, "simulation"), "levels"), l);
    double misses = reaching - hits, conflict = pes_r_get_f(lv, "conflict");
    if (sim < model && misses > 0 && conflict >= REPORT_CONFLICT_SHARE * misses) {
        struct pes_rnode *o = entry(r, list, config, l, "set_conflicts", model, sim);
        pes_r_f64(r, o, "conflict_share", conflict / misses, "%.6f");
        conflict_site(r, o, c, l, g);
        named = 1;
    }
    uint64_t line = pes_r_get_u(g, "line"), ways = pes_r_get_u(g, "ways");
    uint64_t blocks = line ? pes_r_get_u(g, "size") / line : 0;
    if (!blocks || ways > UINT32_MAX)
        return named;
    uint64_t lo, hi;
    pes_assumptions_band(blocks, (uint32_t)ways, &lo, &hi);
    if (lo >= hi)
        return named;
    struct band_sum b =
        level_band(c, pes_r_get_u(g, "shared") != 0, blocks, (uint32_t)ways, lo, hi);
    double shift = b.shift / reaching;
    if (100.0 * fabs(shift) <= REPORT_DISAGREE_PP || (shift > 0) != (sim > model))
        return named;
    struct pes_rnode *o = entry(r, list, config, l, "cyclic_at_capacity", model, sim);
    pes_r_u64(r, o, "capacity_lines", blocks);
    struct pes_rnode *band = pes_r_array(r, o, "band_lines");
    pes_r_u64(r, band, NULL, lo);
    pes_r_u64(r, band, NULL, hi - 1);
    pes_r_f64(r, o, "band_share", b.mass / reaching, "%.6f");
    pes_r_f64(r, o, "band_shift", shift, "%.6f");
    /* most of it from log2 bins: the distances are known only to their
     * power of two, spread evenly over the bin as the model spreads them */
    pes_r_bool(r, o, "binned", b.binned > 0.5 * b.mass);
    return 1;
}

static void check_config(struct pes_report *r, struct pes_rnode *config,
                         const struct pes_rnode *geometry)
{
    const struct pes_rnode *c = config;
    const struct pes_rnode *local = pes_r_get(pes_r_get(c, "model"), "hit_local");
    const struct pes_rnode *levels = pes_r_get(pes_r_get(c, "simulation"), "levels");
    struct pes_rnode *list = NULL;
    size_t named_above = 0; /* the nearest level above with a reason of its own (1-based), or 0 */
    for (size_t l = 0; local && l < pes_r_count(levels) && l < pes_r_count(local); l++) {
        const struct pes_rnode *lv = pes_r_at(levels, l), *g = pes_r_at(geometry, l);
        double reaching = pes_r_get_f(lv, "accesses"), hits = pes_r_get_f(lv, "hits");
        if (!(reaching > 0))
            continue;
        double sim = hits / reaching, model = pes_r_f(pes_r_at(local, l));
        if (100.0 * fabs(sim - model) <= REPORT_DISAGREE_PP)
            continue; /* the same test as the report's warning (report_util.c) */
        int own = own_reasons(r, &list, config, c, l, g, model, sim, reaching, hits);
        if (own)
            named_above = l + 1;
        else if (named_above) {
            struct pes_rnode *o = entry(r, &list, config, l, "level_above", model, sim);
            pes_r_u64(r, o, "above", named_above);
        }
    }
}

void pes_assumptions_add(struct pes_report *r)
{
    /* the configurations were built by this run; the tree's readers are
     * const, its nodes are not */
    struct pes_rnode *configs = (struct pes_rnode *)pes_r_get(pes_report_root(r), "configs");
    const struct pes_rnode *geometry =
        pes_r_get(pes_r_get(pes_report_tree(r), "machine"), "levels");
    for (size_t i = 0; i < pes_r_count(configs); i++)
        check_config(r, (struct pes_rnode *)pes_r_at(configs, i), geometry);
}
