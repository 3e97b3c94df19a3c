/*
 * registry.c — every pes-replay analysis, in the order each sees a batch
 * and publishes its results. A new analysis is one line here: ENTRY(name)
 * for the `const struct pes_analysis pes_analysis_name` its file defines
 * (analysis.h; docs/replay.md, "Writing an analysis").
 */
#include "analysis.h"

#define PES_REGISTRY(ENTRY)                                                                        \
    ENTRY(summary)                                                                                 \
    ENTRY(reuse)                                                                                   \
    ENTRY(sim)                                                                                     \
    ENTRY(approx)                                                                                  \
    ENTRY(stride)                                                                                  \
    /* a sampled trace: each publishes its part of the report in this order */                     \
    ENTRY(sampled_counts)                                                                          \
    ENTRY(sampled_reuse)                                                                           \
    ENTRY(sampled_threads)                                                                         \
    ENTRY(sampled_comm)                                                                            \
    ENTRY(sampled_sites)                                                                           \
    ENTRY(sampled_objects)                                                                         \
    ENTRY(sampled_c2c)                                                                             \
    ENTRY(sampled_bytes)                                                                           \
    ENTRY(accuracy)                                                                                \
    ENTRY(timing)

#define DECLARE(name) extern const struct pes_analysis pes_analysis_##name;
#define ADDRESS(name) &pes_analysis_##name,

PES_REGISTRY(DECLARE)

const struct pes_analysis *const pes_analyses[] = {PES_REGISTRY(ADDRESS) NULL};

int pes_analyses_can_part(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    for (const struct pes_analysis *const *a = pes_analyses; *a; a++)
        if ((!(*a)->wanted || (*a)->wanted(si, k)) && (!(*a)->part_pack || !(*a)->part_merge))
            return 0;
    return 1;
}
