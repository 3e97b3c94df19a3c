/* modes.h — the modes (mode.h), each defined in its own file and listed in
 * pes_rt_modes[] (modes.c):
 *   samples.c     the SAMPLE events only
 *   reuse.c       ReuseTracker: reuse (intra-thread) and reuse-shared
 *   comm.c        ComDetective's BulletinBoard: comm
 * and what they build on:
 *   watch.c       debug-register watchpoints and the SIGTRAP handler (watch.h)
 *   reservoir.c   ReuseTracker's slot choice (reservoir.h, pure) */
#ifndef PES_RT_MODES_H
#define PES_RT_MODES_H

#include "core/core.h"

#define PES_RT_MODE_NAMES(X)   X(samples) X(reuse) X(reuse_shared) X(comm)
#define PES_RT_MODE_DECLARE(n) PES_RT_HIDDEN extern const struct pes_rt_mode pes_rt_mode_##n;
PES_RT_MODE_NAMES(PES_RT_MODE_DECLARE)

#endif /* PES_RT_MODES_H */
