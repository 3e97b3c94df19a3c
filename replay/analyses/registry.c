/*
 * registry.c — every pes-replay analysis, in the order each sees a batch.
 * A new analysis is one line here (analysis.h).
 */
#include "analysis.h"

const struct pes_analysis *const pes_analyses[] = {
    &pes_analysis_summary,
    &pes_analysis_reuse,
    &pes_analysis_sim,
    &pes_analysis_approx,
    /* a sampled trace: each publishes its part of the report in this order */
    &pes_analysis_sampled_counts,
    &pes_analysis_sampled_reuse,
    &pes_analysis_sampled_threads,
    &pes_analysis_sampled_comm,
    &pes_analysis_sampled_sites,
    &pes_analysis_sampled_objects,
    &pes_analysis_sampled_c2c,
    &pes_analysis_accuracy,
    &pes_analysis_timing,
    NULL,
};

int pes_analyses_can_part(const struct pes_stream_info *si, const struct pes_knobs *k) {
    for (const struct pes_analysis *const *a = pes_analyses; *a; a++)
        if ((!(*a)->wanted || (*a)->wanted(si, k)) && (!(*a)->part_pack || !(*a)->part_merge)) return 0;
    return 1;
}
