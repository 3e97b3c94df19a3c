/* modes.c — every mode: adding one is a file that defines pes_rt_mode_NAME
 * (mode.h) and its name in PES_RT_MODE_NAMES (modes.h). */
#include "modes/modes.h"

#define PES_RT_MODE_ENTRY(n) &pes_rt_mode_##n,
const struct pes_rt_mode *const pes_rt_modes[] = {PES_RT_MODE_NAMES(PES_RT_MODE_ENTRY) NULL};
