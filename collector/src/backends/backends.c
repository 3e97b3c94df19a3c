/* backends.c — every backend: adding one is a file that defines
 * pes_rt_backend_NAME (backend.h) and its name in the list below. The
 * order is --backend auto's among the hardware backends (the program-counted
 * one, soft, comes after them: it needs pes-clang) and --list-backends'.
 *
 *   soft.c           the program counts (pes-clang); core's countdowns sample
 *   pebs.c, ibs.c    Intel PEBS, AMD IBS: their events; the rest is perf.c's
 *   spe.c            ARM SPE: a probe that says it is not implemented
 *   perf.c           per-thread perf events, rings, overflow handler (perf.h)
 *   pmu.c            encoding (libpfm4), probing, ring parsing; no process
 *                    state, so pes-collect and the tests use it too (pmu.h)
 *   rt_pmu_thread.c  pthread_create wrapper: PMU set-up in threads of
 *                    programs not built with pes-clang */
#include "backend.h"
#include "config.h"

#define PES_RT_BACKEND_NAMES(X) X(soft) X(pebs) X(ibs) X(spe)

#define PES_RT_BACKEND_DECLARE(n)                                                                  \
    PES_RT_HIDDEN extern const struct pes_rt_backend pes_rt_backend_##n;
PES_RT_BACKEND_NAMES(PES_RT_BACKEND_DECLARE)

#define PES_RT_BACKEND_ENTRY(n) &pes_rt_backend_##n,
const struct pes_rt_backend *const pes_rt_backends[] = {PES_RT_BACKEND_NAMES(PES_RT_BACKEND_ENTRY)
                                                            NULL};
