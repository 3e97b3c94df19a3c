/*
 * rt_adapt.h — the adaptive sampling period of `pes-collect --samples N`
 * (docs/accuracy.md, "Enough samples by design"). Pure functions: the soft
 * sampler and the PEBS/IBS backends share them, the unit test drives them
 * with synthetic counts.
 *
 * A thread starts at level 0, period cap >> PES_RT_ADAPT_LEVELS, and moves up
 * one level (the period doubles) each time it has gathered N more decided
 * outcomes (or, in modes without watches, N more samples) since it entered
 * its level; at level PES_RT_ADAPT_LEVELS the period is the cap (--period)
 * and stays there. The counter never decreases, so a thread that finishes
 * level 0 ends with at least N.
 */
#ifndef PES_RT_ADAPT_H
#define PES_RT_ADAPT_H

#include <stdint.h>

#define PES_RT_ADAPT_LEVELS 6u /* the first period is the cap / 64 */

/* The period of one access type at `level` (0..PES_RT_ADAPT_LEVELS) for the
 * cap `cap` (0 = that type is not sampled: 0). Never 0 otherwise. */
static inline uint64_t pes_rt_adapt_period(uint64_t cap, uint32_t level)
{
    if (!cap)
        return 0;
    uint32_t shift = level >= PES_RT_ADAPT_LEVELS ? 0 : PES_RT_ADAPT_LEVELS - level;
    uint64_t p = cap >> shift;
    return p ? p : 1;
}

/* The level after a thread at `level`, which entered it when its counter
 * (decided outcomes or samples) was `mark`, has counted `count`, with target
 * N = `target` (0: not adaptive, the level stays). Moves at most one level
 * per call. */
static inline uint32_t pes_rt_adapt_next(uint32_t level, uint64_t mark, uint64_t count,
                                         uint64_t target)
{
    if (!target || level >= PES_RT_ADAPT_LEVELS)
        return level;
    return count >= mark && count - mark >= target ? level + 1 : level;
}

#endif /* PES_RT_ADAPT_H */
