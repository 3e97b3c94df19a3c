/*
 * mode.h — the mode seam: what the runtime does with a sample. One file per
 * mode in modes/ defines a struct pes_rt_mode and adds one line to
 * pes_rt_modes[] (modes/modes.c); core finds it by its PES_MODE name and
 * calls it only through pes_rt.mode. A hook that is NULL does nothing.
 *
 * Calling contexts: `sample` runs on the sampling thread, in the soft slow
 * path under t->lock or in a PMU overflow handler; `trap` in the SIGTRAP
 * handler (no locks, no allocation, no watched memory); `censor` and
 * `thread_end` where the thread's sampler state is its own (owner, or a
 * stopped thread at process exit).
 */
#ifndef PES_COLLECT_MODE_H
#define PES_COLLECT_MODE_H

#include <stdint.h>

struct pes_event;
struct pes_rt_thread;

struct pes_rt_mode {
    const char *name; /* PES_MODE, --mode, the header's mode= */
    /* Debug-register watchpoints: the SIGTRAP handler is installed at start
     * (start), each thread gets its alternate signal stack before its first
     * watchpoint opens (modes/watch.c). */
    unsigned uses_watchpoints : 1;
    /* A sample publishes watches that the other threads arm themselves at
     * their next access: their countdowns are capped so a lost wake-up costs
     * little (rt_check.c, rt_buffer.c), and a woken thread calls `sync`. */
    unsigned wakes_threads : 1;
    /* --samples counts decided watch outcomes (REUSE, INVALIDATION) rather
     * than samples (rt_adapt.h); a period change first censors the thread's
     * own watches (`censor`). */
    unsigned counts_decided : 1;

    /* Process start-up, before any thread samples. */
    void (*start)(void);
    /* The thread's last act before it stops sampling (owner): its
     * watchpoints closed; after it no trap reaches `trap`. */
    void (*thread_exit)(struct pes_rt_thread *t);
    /* ev: the SAMPLE event just added to t's events. */
    void (*sample)(struct pes_rt_thread *t, const struct pes_event *ev);
    /* Another thread's sample woke t (wakes_threads): re-arm. */
    void (*sync)(struct pes_rt_thread *t);
    /* A watchpoint of register `reg`, armed for generation `gen`, trapped at
     * ip; *disarm (preset 1) says whether the register is disarmed after. */
    void (*trap)(struct pes_rt_thread *t, uint32_t reg, uint32_t gen, uint64_t ip, int *disarm);
    /* --samples, at t's period change: its watches end as WATCH_EXPIRED,
     * censored at `count`. Returns the events added. */
    int (*censor)(struct pes_rt_thread *t, uint64_t count);
    /* t's final counts are known: watches that can no longer be decided end
     * as WATCH_EXPIRED at `final_count`. Returns the events added. */
    int (*thread_end)(struct pes_rt_thread *t, uint64_t final_count);
};

/* Every mode, NULL-terminated (modes/modes.c). */
extern const struct pes_rt_mode *const pes_rt_modes[];

#endif /* PES_COLLECT_MODE_H */
