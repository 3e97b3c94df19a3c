/* backends.c — every backend: adding one is a file that defines
 * pes_rt_backend_NAME (backend.h) and its name in the list below. The
 * order is --backend auto's among the hardware backends (the program-counted
 * one, soft, comes after them: it needs pes-clang) and --list-backends'. */
#include "backend.h"
#include "config.h"

#define PES_RT_BACKEND_NAMES(X) X(soft) X(pebs) X(ibs) X(spe)

#define PES_RT_BACKEND_DECLARE(n) PES_RT_HIDDEN extern const struct pes_rt_backend pes_rt_backend_##n;
PES_RT_BACKEND_NAMES(PES_RT_BACKEND_DECLARE)

#define PES_RT_BACKEND_ENTRY(n) &pes_rt_backend_##n,
const struct pes_rt_backend *const pes_rt_backends[] = {PES_RT_BACKEND_NAMES(PES_RT_BACKEND_ENTRY) NULL};
