/*
 * backend.h — the backend seam: what takes the samples. One file per backend
 * in backends/ defines a struct pes_rt_backend and adds its name to the list
 * in backends/backends.c.
 *
 * Both programs see the same table. pes-collect compiles backends/ with
 * PES_BACKEND_PROBE_ONLY: it has the names, flags and probes (--list-backends,
 * --backend auto), and the runtime hooks are NULL (PES_RT_BACKEND_HOOKS).
 * libpes-rt picks the backend PES_BACKEND names and calls it only through
 * pes_rt.backend; a hook that is NULL does nothing.
 */
#ifndef PES_COLLECT_BACKEND_H
#define PES_COLLECT_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pes_rt_thread;

struct pes_rt_backend {
    const char *name;   /* PES_BACKEND, --backend, the header's backend= */
    const char *jitter; /* the header's period_jitter: how the period varies per sample */
    /* The program counts its loads and stores (built with pes-clang) and
     * core's countdowns pick the samples (rt_sample.c, rt_check.c); else the
     * hardware counts and samples, and programs not built with pes-clang work
     * too (pes-collect preloads the runtime). */
    unsigned program_counts : 1;
    /* Named and probed only: nothing behind it yet (the probe says what it would be). */
    unsigned stub : 1;
    /* Does it work on this machine? 0 with a sentence about what works, or -1
     * with the reason it does not (pes-collect; libpes-rt for a stub). */
    int (*probe)(char *why, size_t why_size);

    /* libpes-rt only. */
    /* Process start-up, before any thread samples: events encoded, overflow
     * handler installed. 0, or -1 with why (the soft sampler is used instead). */
    int (*start)(char *why, size_t why_size);
    /* Owner thread, end of its set-up: its events opened and armed. */
    void (*open)(struct pes_rt_thread *t);
    /* --samples: t's events take t->s.period_load/store, which the backend
     * may round to what the hardware takes (IBS). 0, or -1 if the kernel kept
     * the old period. Async-signal-safe. */
    int (*set_period)(struct pes_rt_thread *t);
    /* t's loads + stores as the backend counted them (own thread, also in a
     * signal handler): the clock of time distances. */
    uint64_t (*count)(const struct pes_rt_thread *t);
    /* Owner thread, before it stops: the samples still pending become events,
     * and t's loads and stores take the final counts. */
    void (*drain)(struct pes_rt_thread *t);
    /* After drain: no overflow signal for t after this. */
    void (*close)(struct pes_rt_thread *t);
};

/* In a backend's initializer: the runtime hooks, left out of pes-collect. */
#ifdef PES_BACKEND_PROBE_ONLY
#define PES_RT_BACKEND_HOOKS(...)
#else
#define PES_RT_BACKEND_HOOKS(...) __VA_ARGS__
#endif

/* Every backend, NULL-terminated, in the order --backend auto prefers them
 * among those of a kind (backends/backends.c). */
extern const struct pes_rt_backend *const pes_rt_backends[];

/* The backend called `name` in list, NULL if none. */
static inline const struct pes_rt_backend *
pes_rt_backend_find(const struct pes_rt_backend *const *list, const char *name)
{
    for (; name && *list; list++)
        if (!strcmp((*list)->name, name))
            return *list;
    return NULL;
}

/* "soft, pebs or ibs": the names of the backends that are not stubs, after
 * `first` ("auto, " or ""). Truncated to size. */
static inline void pes_rt_backend_choices(const struct pes_rt_backend *const *list,
                                          const char *first, char *buf, size_t size)
{
    size_t n = 0, len = strlen(first) < size ? strlen(first) : 0;
    const struct pes_rt_backend *const *b;
    if (!size)
        return;
    memcpy(buf, first, len);
    buf[len] = '\0';
    for (b = list; *b; b++)
        n += !(*b)->stub;
    for (b = list; *b; b++) {
        if ((*b)->stub)
            continue;
        const char *sep = n == 1 ? "" : n == 2 ? " or " : ", ";
        size_t need = strlen((*b)->name) + strlen(sep);
        if (len + need >= size)
            break;
        memcpy(buf + len, (*b)->name, strlen((*b)->name));
        memcpy(buf + len + strlen((*b)->name), sep, strlen(sep));
        len += need;
        buf[len] = '\0';
        n--;
    }
}

/* Debug-register watchpoints (the modes that use them), for pes-collect
 * --list-backends: "available (N per thread)" or why not (backends/pmu.c). */
int pes_pmu_probe_watchpoints(char *why, size_t why_size);
/* How this kernel lets a watchpoint be re-targeted, for --list-backends: opens
 * a disabled sigtrap breakpoint and changes its address, type and sig_data
 * with PERF_EVENT_IOC_MODIFY_ATTRIBUTES, as every arm of modes/watch.c does.
 * PES_PMU_REARM_MODIFY if the kernel takes it, PES_PMU_REARM_REOPEN if it
 * refuses (*refused_errno set), -1 if no breakpoint opens; why says which. */
enum { PES_PMU_REARM_MODIFY = 0, PES_PMU_REARM_REOPEN = 1 };
int pes_pmu_probe_watch_rearm(int *refused_errno, char *why, size_t why_size);
/* errno values of PERF_EVENT_IOC_MODIFY_ATTRIBUTES that say the kernel does
 * not support the change at all (EINVAL, ENOTTY, EOPNOTSUPP: before Linux
 * 5.17 sig_data cannot change), rather than not this one. */
int pes_pmu_rearm_refused(int err);

#endif /* PES_COLLECT_BACKEND_H */
