/* watch.h — debug-register watchpoints of the calling thread (watch.c), which
 * the modes that watch addresses arm (reuse, reuse-shared, comm); the
 * SIGTRAP handler passes each trap of theirs to pes_rt.mode->trap. */
#ifndef PES_RT_WATCH_H
#define PES_RT_WATCH_H

#include "core/core.h"

/* Mode start hook: installs the SIGTRAP handler. */
PES_RT_HIDDEN void pes_rt_watch_install(void);
/* Mode thread_exit hook: closes the thread's watchpoints; no trap after this. */
PES_RT_HIDDEN void pes_rt_watch_thread_exit(struct pes_rt_thread *t);
/* Arms (or re-targets) register i of the calling thread; len 1/2/4/8, addr aligned. */
PES_RT_HIDDEN int pes_rt_watch_arm(struct pes_rt_thread *t, uint32_t i, uint64_t addr, uint32_t len,
                                   int rw, uint32_t gen);
PES_RT_HIDDEN void pes_rt_watch_disarm(struct pes_rt_thread *t, uint32_t i);
/* Largest aligned watch length (8, 4, 2, 1) starting at addr and not beyond size. */
PES_RT_HIDDEN uint32_t pes_rt_watch_len(uint64_t addr, uint32_t size);
/* sig_data encoding: magic | register | generation. */
#define PES_RT_SIGDATA_MAGIC 0x9e5ull
static inline uint64_t pes_rt_sigdata(uint32_t reg, uint32_t gen)
{
    return PES_RT_SIGDATA_MAGIC << 48 | (uint64_t)(reg & 0xff) << 32 | gen;
}

#endif /* PES_RT_WATCH_H */
