/* samples.c — the samples mode: the SAMPLE events themselves, which the core
 * records for every mode (rt_sample.c); nothing is watched. */
#include "modes/modes.h"

const struct pes_rt_mode pes_rt_mode_samples = {
    .name = "samples",
};
