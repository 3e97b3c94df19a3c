/* reservoir.h — ReuseTracker Alg. 2's slot choice (reservoir.c): which watch
 * slot a new sample takes. Pure; unit-tested. */
#ifndef PES_RT_RESERVOIR_H
#define PES_RT_RESERVOIR_H

#include <stdint.h>

#include "config.h"

struct pes_rt_reservoir_slot {
    int active;
    uint64_t samples; /* AllowReplacement's counter; 1 when inactive */
};
/* Picks the slot for a new sample, inactive slots first, each slot accepting
 * with probability 1/samples (then samples++). Returns the slot or -1 (dropped). */
PES_RT_HIDDEN int pes_rt_reservoir_pick(struct pes_rt_reservoir_slot *slots, uint32_t n,
                                        uint64_t *rng);
/* A trap decided the slot (Alg. 3 lines 10-11). */
PES_RT_HIDDEN void pes_rt_reservoir_release(struct pes_rt_reservoir_slot *slot);

#endif /* PES_RT_RESERVOIR_H */
