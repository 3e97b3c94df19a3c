/*
 * reuse_model.c — SDCM hit rates and runtime from reuse profiles, and their
 * description in the report (reuse_model.h).
 */
#include <string.h>

#include "reuse_model.h"

void replay_work_count(struct pes_work *w, const struct pes_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        w->bytes += b->length[i];
    w->bytes += b->dropped_reads + b->dropped_writes; /* one byte each */
    for (size_t i = 0; i < b->n_bbs; i++) {
        const struct pes_bb *bb = b->bb[i];
        for (int k = 0; k < PES_OP_COUNT; k++)
            w->ops[k] += bb->ops[k];
        w->execs++;
        if (!(bb->flags & PES_BB_MODEL_FACTS))
            continue;
        w->facts_execs++;
        for (int k = 0; k < PES_OP_COUNT; k++) {
            w->instrs[k] += bb->instrs[k];
            w->chain[k] += bb->chain[k];
        }
        /* every thread of a team enters its region's body and calls its
         * barriers: stream 0, the initial thread, counts each episode once */
        if (b->bb_stream[i] == 0) {
            w->forks += bb->forks;
            w->barriers += bb->barriers;
        }
    }
}

void replay_work_merge(struct pes_work *dst, const struct pes_work *src)
{
    dst->bytes += src->bytes;
    for (int k = 0; k < PES_OP_COUNT; k++) {
        dst->ops[k] += src->ops[k];
        dst->instrs[k] += src->instrs[k];
        dst->chain[k] += src->chain[k];
    }
    dst->execs += src->execs;
    dst->facts_execs += src->facts_execs;
    dst->forks += src->forks;
    dst->barriers += src->barriers;
}

int replay_work_has_facts(const struct pes_work *w)
{
    return w->execs > 0 && w->facts_execs == w->execs;
}

void replay_publish_work_facts(struct pes_report *r, struct pes_rnode *trace,
                               const struct pes_work *w)
{
    if (!replay_work_has_facts(w))
        return;
    struct pes_rnode *o = pes_r_object(r, trace, "model_facts");
    struct pes_rnode *in = pes_r_object(r, o, "instrs"), *ch = pes_r_object(r, o, "chain");
    for (int k = 0; k < PES_OP_COUNT; k++) {
        pes_r_f64(r, in, pes_machine_op_key(k), w->instrs[k], "%.0f");
        pes_r_f64(r, ch, pes_machine_op_key(k), w->chain[k], "%.0f");
    }
    pes_r_f64(r, o, "forks", w->forks, "%.0f");
    pes_r_f64(r, o, "barriers", w->barriers, "%.0f");
}

void replay_work_facts_from_report(struct pes_work *w, const struct pes_rnode *trace)
{
    const struct pes_rnode *o = pes_r_get(trace, "model_facts");
    if (!o)
        return;
    const struct pes_rnode *in = pes_r_get(o, "instrs"), *ch = pes_r_get(o, "chain");
    for (int k = 0; k < PES_OP_COUNT; k++) {
        w->instrs[k] = pes_r_get_f(in, pes_machine_op_key(k));
        w->chain[k] = pes_r_get_f(ch, pes_machine_op_key(k));
    }
    w->forks = pes_r_get_f(o, "forks");
    w->barriers = pes_r_get_f(o, "barriers");
    w->execs = w->facts_execs = 1; /* the recorded run's blocks all had them */
}

int replay_model_run(struct replay_model *out, enum pes_runtime_model rm,
                     const struct pes_stream_info *si, const struct pes_work *counted,
                     const struct replay_model_extra *extra, const struct pes_rd_hist *prd,
                     const struct pes_rd_hist *crd, struct pes_error *err)
{
    const struct pes_machine *m = si->machine;
    struct pes_reuse_profile prd_profile, crd_profile;
    if (pes_rd_hist_to_profile(prd, &prd_profile) < 0 ||
        (crd && pes_rd_hist_to_profile(crd, &crd_profile) < 0))
        return pes_error_set(
            err, PES_ERR_ARG, 0,
            "cannot sum the reuse histograms (out of memory, or internal layout mismatch)");
    const struct pes_reuse_profile *per_level[PES_MAX_LEVELS];
    for (uint32_t l = 0; l < m->n_levels; l++)
        per_level[l] = m->level[l].shared && crd ? &crd_profile : &prd_profile;
    if (pes_model_hit_rates(m, per_level, out->hit, err) < 0)
        return -1;
    /* the miss-ratio curve of the level the CRD models (the first shared
     * one), else of the last level from the PRD; up to the largest cache */
    uint32_t lv = m->n_levels - 1;
    for (uint32_t l = 0; crd && l < m->n_levels; l++)
        if (m->level[l].shared) {
            lv = l;
            break;
        }
    int from_crd = crd && m->level[lv].shared;
    uint64_t largest = 0;
    for (uint32_t l = 0; l < m->n_levels; l++)
        if (m->level[l].size / si->line > largest)
            largest = m->level[l].size / si->line;
    if (replay_mrc_compute(&out->mrc, from_crd ? crd : prd, m->level[lv].ways, largest, err) < 0)
        return -1;
    out->mrc.level = lv + 1;
    out->mrc.from_crd = from_crd;
    const struct pes_work *w = si->work ? si->work : counted;
    struct pes_runtime_input ri = {
        .total_mem = (double)w->bytes, .cores = si->n_streams, .model = rm};
    out->runtime_model = rm;
    memcpy(ri.hit, out->hit, sizeof ri.hit);
    memcpy(ri.ops, w->ops, sizeof ri.ops);
    if (extra) {
        out->extra = *extra;
        ri.known |= extra->known & (PES_RUNTIME_KNOW_TLB | PES_RUNTIME_KNOW_PREFETCH);
        ri.tlb_misses = extra->tlb_misses;
        ri.prefetched = extra->prefetched;
    }
    if (replay_work_has_facts(w)) {
        ri.known |= PES_RUNTIME_KNOW_BB_FACTS;
        memcpy(ri.instrs, w->instrs, sizeof ri.instrs);
        memcpy(ri.chain, w->chain, sizeof ri.chain);
        ri.forks = w->forks;
        ri.barriers = w->barriers;
    }
    return pes_model_runtime(m, &ri, &out->runtime, err);
}

int replay_mrc_compute(struct replay_mrc *out, const struct pes_rd_hist *h, uint32_t ways,
                       uint64_t min_lines, struct pes_error *err)
{
    struct pes_reuse_profile p;
    memset(out, 0, sizeof *out);
    out->ways = ways;
    if (h->total == 0)
        return 0;
    if (pes_rd_hist_to_profile(h, &p) < 0)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "the reuse histogram's exact range is below the model's");
    /* the largest finite distance + 1, as a bin bound */
    uint64_t bound = 1;
    for (size_t i = PES_PROFILE_BINS; i-- > 0;)
        if (pes_profile_bin_count(&p, i)) {
            uint64_t lo;
            pes_profile_bin_range(i, &lo, &bound);
            break;
        }
    if (min_lines > bound)
        bound = min_lines;
    double total = (double)h->total;
    for (size_t k = 0; k < REPLAY_MRC_MAX; k++) {
        uint64_t c = UINT64_C(1) << k;
        /* fully associative LRU: a hit iff the distance is below the size
         * (exact: powers of two are bin edges of every histogram) */
        double fa = 1.0 - pes_rd_hist_below(h, c) / total, hits = 0;
        /* SDCM, Eq. 3 over the model's bins (distances uniform inside a
         * log2 bin, as the model's hit rates have them) */
        uint32_t w = ways >= c ? 0 : ways;
        for (size_t i = 0; i < PES_PROFILE_BINS; i++) {
            uint64_t n = pes_profile_bin_count(&p, i), lo, hi;
            if (!n)
                continue;
            pes_profile_bin_range(i, &lo, &hi);
            hits += (double)n * pes_sdcm_bin_hit_prob(lo, hi, c, w);
        }
        out->lines[k] = c;
        out->fully_associative[k] = fa;
        double sdcm = 1.0 - hits / total; /* rounding may leave it a hair outside [0, 1] */
        out->sdcm[k] = sdcm < 0 ? 0 : sdcm > 1 ? 1 : sdcm;
        out->n = k + 1;
        if (c >= bound)
            break;
    }
    return 0;
}

void replay_publish_histogram(struct pes_report *r, struct pes_rnode *parent,
                              const struct pes_rd_hist *h, const struct pes_stream_info *si)
{
    struct pes_rnode *o = pes_r_object(r, parent, "histogram");
    pes_r_u64(r, o, "accesses", h->total);
    pes_r_u64(r, o, "cold", h->cold);
    pes_r_f64(r, o, "mean", pes_rd_hist_mean(h), "%.6g");
    struct pes_rnode *ex = pes_r_array(r, o, "exact");
    for (uint64_t d = 0; d < h->exact_n; d++) {
        if (!h->exact[d])
            continue;
        struct pes_rnode *bin = pes_r_array(r, ex, NULL);
        pes_r_u64(r, bin, NULL, d);
        pes_r_u64(r, bin, NULL, h->exact[d]);
    }
    struct pes_rnode *lg = pes_r_array(r, o, "log2");
    for (int b = 0; b < PES_RD_HIST_LOG2_BINS; b++) {
        if (!h->log2[b])
            continue;
        struct pes_rnode *bin = pes_r_array(r, lg, NULL);
        pes_r_u64(r, bin, NULL, (uint64_t)1 << b);
        pes_r_u64(r, bin, NULL, b < 63 ? (uint64_t)1 << (b + 1) : UINT64_MAX);
        pes_r_u64(r, bin, NULL, h->log2[b]);
    }
    pes_r_flag(
        pes_r_f64(r, o, "cold_share", h->total ? (double)h->cold / (double)h->total : 0.0, NULL),
        PES_R_TEXT_ONLY);
    struct pes_rnode *fa = pes_r_flag(pes_r_array(r, o, "fa_hit_share"), PES_R_TEXT_ONLY);
    for (uint32_t l = 0; l < si->machine->n_levels; l++) {
        uint64_t lines = si->machine->level[l].size / si->line;
        pes_r_f64(r, fa, NULL, h->total ? pes_rd_hist_below(h, lines) / (double)h->total : 0.0,
                  NULL);
    }
}

/* Local hit rate of level l from global (cumulative) rates: hits at l among
 * the accesses that missed every level above. */
static double local_rate(const double global[], uint32_t l)
{
    double above = l ? global[l - 1] : 0.0;
    if (above >= 1.0)
        return 0.0;
    return (global[l] - above) / (1.0 - above);
}

void replay_publish_model(struct pes_report *r, struct pes_rnode *config,
                          const struct replay_model *m, const struct pes_stream_info *si)
{
    uint32_t levels = si->machine->n_levels;
    struct pes_rnode *mo = pes_r_object(r, config, "model");
    struct pes_rnode *hg = pes_r_array(r, mo, "hit_global");
    for (uint32_t l = 0; l < levels; l++)
        pes_r_f64(r, hg, NULL, m->hit[l], "%.6f");
    struct pes_rnode *hl = pes_r_array(r, mo, "hit_local");
    for (uint32_t l = 0; l < levels; l++)
        pes_r_f64(r, hl, NULL, local_rate(m->hit, l), "%.6f");
    const struct pes_runtime *t = &m->runtime;
    struct pes_rnode *rt = pes_r_object(r, mo, "runtime");
    pes_r_f64(r, rt, "delta_avg", t->delta_avg, "%.6g");
    pes_r_f64(r, rt, "beta_avg", t->beta_avg, "%.6g");
    pes_r_f64(r, rt, "mem_cycles", t->mem_cycles, "%.6g");
    pes_r_f64(r, rt, "cpu_cycles", t->cpu_cycles, "%.6g");
    pes_r_f64(r, rt, "total_cycles", t->total_cycles, "%.6g");
    pes_r_f64(r, rt, "mem_seconds", t->mem_seconds, "%.6g");
    pes_r_f64(r, rt, "cpu_seconds", t->cpu_seconds, "%.6g");
    pes_r_f64(r, rt, "total_seconds", t->total_seconds, "%.6g");
    pes_r_str(r, rt, "model", pes_runtime_model_name(m->runtime_model));
    /* How far the machine description's costs can be trusted: calibrated on
     * this host, a preset's published figures, or generic (docs/model.md,
     * "Validation"). No prediction has been checked against a measured run. */
    pes_r_str(r, rt, "validation", pes_machine_validation_name(si->machine->validation));
    /* what each term of the model costs per core, and the largest: why the
     * prediction says what it says (docs/model.md §3) */
    struct pes_rnode *terms = pes_r_object(r, rt, "terms");
    double hz = si->machine->ghz * 1e9;
    for (int k = 0; k < PES_TERM_COUNT; k++) {
        struct pes_rnode *o = pes_r_object(r, terms, pes_runtime_term_name(k));
        pes_r_f64(r, o, "cycles", t->term[k], "%.6g");
        pes_r_f64(r, o, "seconds", t->term[k] / hz, "%.6g");
    }
    pes_r_str(r, rt, "bound", pes_runtime_term_name(t->bounds));
    if (m->extra.known & PES_RUNTIME_KNOW_TLB) {
        pes_r_u64(r, rt, "tlb_lookups", m->extra.tlb_accesses);
        pes_r_f64(r, rt, "tlb_misses", m->extra.tlb_misses, "%.0f");
    }
    if (m->extra.known & PES_RUNTIME_KNOW_PREFETCH)
        pes_r_f64(r, rt, "prefetched", m->extra.prefetched, "%.6g");
    const struct pes_machine_error_band *band = &si->machine->error;
    if (band->runs) { /* what bench/model_vs_host.py measured with this description */
        struct pes_rnode *eb = pes_r_object(r, rt, "error_band");
        pes_r_str(r, eb, "model", pes_runtime_model_name(band->model));
        pes_r_f64(r, eb, "mean", band->mean, "%.4g");
        pes_r_f64(r, eb, "max", band->max, "%.4g");
        pes_r_u64(r, eb, "runs", band->runs);
    }
    const struct replay_mrc *c = &m->mrc;
    if (!c->level || !c->n)
        return;
    struct pes_rnode *mo2 = pes_r_object(r, config, "miss_ratio_curve");
    pes_r_str(r, mo2, "profile", c->from_crd ? "crd" : "prd");
    pes_r_u64(r, mo2, "level", c->level);
    pes_r_u64(r, mo2, "ways", c->ways);
    struct pes_rnode *pts = pes_r_array(r, mo2, "points");
    for (size_t k = 0; k < c->n; k++) {
        struct pes_rnode *o = pes_r_object(r, pts, NULL);
        pes_r_u64(r, o, "size_lines", c->lines[k]);
        pes_r_f64(r, o, "fully_associative", c->fully_associative[k], "%.9g");
        pes_r_f64(r, o, "sdcm", c->sdcm[k], "%.9g");
    }
}
