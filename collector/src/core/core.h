/*
 * core.h — libpes-rt's core (not installed): the runtime state, its threads
 * and what every path through the runtime uses. Core reaches the mode and the
 * backend only through pes_rt.mode and pes_rt.backend (mode.h, backend.h).
 *
 * One concept per file:
 *   rt_init.c         start-up (pes_rt_start), header, process exit, fork
 *   rt_thread.c       per-thread state: lazy set-up, thread exit, entry guard
 *   rt_buffer.c       the slow path: buffer hand-off, time marks, limit
 *   rt_loop.c         loop descriptor chunks of the recording clone (__pes_loop_flush)
 *   rt_check.c        the check path's countdown: __pes_check_due, exact counts from it
 *   rt_sample.c       the soft sampler: countdowns in the limit, exact counts,
 *                     taking a sample, --samples periods, totals
 *   rt_adapt.h        the --samples period schedule (pure)
 *   rt_events.c       per-thread event buffers of the sampled trace
 *   rt_sites.c        id -> load/store weights and site kinds
 *   rt_writer.c       the writer pool: queue, encoder threads, in-order append
 *   rt_modules.c      module registration; code ranges of loaded objects
 *   rt_module_table.c id ranges and table conversion for registered modules
 *   rt_host.c         host description for the header (sysfs, /proc)
 *   rt_signals.c      fatal-signal flush; the runtime's alternate signal stacks
 *   rt_sigwrap.c      sigaction/signal interposer: the application's handlers
 *   rt_roi.c          region of interest (pes/roi.h), --skip, --max-accesses: what is kept
 *   rt_alloc.c        malloc family / operator new interposer: allocation sites, records, stacks
 * Everything here has hidden visibility; only the rt_abi.h symbols are exported.
 */
#ifndef PES_RT_CORE_H
#define PES_RT_CORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "mode.h"
#include "pes/rt_abi.h"
#include "pes/trace.h"

/* Runtime objects that the sampling paths touch (thread state, event buffers,
 * site tables) get cache lines of their own: malloc would place them in lines
 * shared with application data, and a spatial (whole-line) watchpoint on such
 * a line would trap inside the runtime — recursively, inside the SIGTRAP
 * handler. Zeroed; release with free(). */
static inline void *pes_rt_calloc_lines(size_t n, size_t size)
{
    size_t bytes = n * size;
    if (size && bytes / size != n)
        return NULL;
    bytes = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, bytes ? bytes : 64);
    if (p)
        memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* Instrumented code calls __pes_record_slow and __pes_check_due with
 * preserve_most on x86-64 (rt_abi.h): their definitions must save registers
 * accordingly, which only clang's attribute does. */
#if defined(__x86_64__) && !(defined(__has_attribute) && __has_attribute(preserve_most))
#error "libpes-rt must be built with clang on x86-64 (preserve_most slow paths, pes/rt_abi.h)"
#endif

/* ------------------------------------------------------------ host */

/* Reads cache levels of cpu0 below `sysfs_cpu` (normally "/sys/devices/system/cpu").
 * Returns the number of levels filled (0 if none readable). */
PES_RT_HIDDEN uint32_t pes_rt_host_caches(const char *sysfs_cpu, struct pes_cache_level *out,
                                          uint32_t max);
/* Counts CPUs in a sysfs cpu list ("0-3,8,10-11"); -1 if malformed. */
PES_RT_HIDDEN int pes_rt_cpulist_count(const char *list);
/* Parses a sysfs size ("32K", "8192K", "16M", "512"); -1 if malformed. */
PES_RT_HIDDEN int pes_rt_parse_size(const char *s, uint64_t *out);
/* Distinct physical_package_id values of online CPUs (>= 1). */
PES_RT_HIDDEN uint32_t pes_rt_host_sockets(const char *sysfs_cpu);
/* "model name" of the first CPU in a cpuinfo file; malloc'd, NULL if absent. */
PES_RT_HIDDEN char *pes_rt_host_cpu_model(const char *cpuinfo_path);

/* ------------------------------------------------------------ modules */

/* Next free id; ranges are consecutive from 0. Returns -1 (and leaves *next)
 * if the module's range would reach the control ids. */
PES_RT_HIDDEN int pes_rt_assign_range(uint32_t *next, uint32_t n_sites, uint32_t n_bbs,
                                      uint32_t *base);
/* Converts a registered module into writer tables (strtab offsets → strings,
 * local → global ids). Bad offsets become "". Returns a single malloc'd block
 * (free() it), NULL on allocation failure. */
PES_RT_HIDDEN struct pes_module *pes_rt_module_convert(const struct pes_rt_module *m,
                                                       uint32_t id_base);

/* The executable PT_LOAD segment of the loaded object whose code holds `fn`
 * (libc, the dynamic loader, the runtime itself). Reads the loader's list
 * (dl_iterate_phdr): call at start-up, not in a handler. */
struct pes_rt_code_range {
    uint64_t lo, hi;
};
PES_RT_HIDDEN struct pes_rt_code_range pes_rt_code_range_of(const void *fn);
static inline int pes_rt_code_range_has(const struct pes_rt_code_range *r, uint64_t ip)
{
    return ip >= r->lo && ip < r->hi;
}
/* __pes_register_module once the runtime has started (start/rt_start.c). */
PES_RT_HIDDEN void pes_rt_modules_register(struct pes_rt_module *m);

/* ------------------------------------------------------------ runtime state */

#define PES_RT_NBUF           2   /* buffers per thread: one filling, one being written */
#define PES_RT_SCRATCH        128 /* records of the per-thread scratch buffer (tracing off) */
#define PES_RT_SAMPLE_SCRATCH 512 /* sampling without a full trace: 8 KiB, stays in L1 */

enum pes_rt_item_type {
    PES_RT_ITEM_RECORDS,
    PES_RT_ITEM_THREAD,
    PES_RT_ITEM_MODULE,
    PES_RT_ITEM_STOP,
    PES_RT_ITEM_EVENTS,
    PES_RT_ITEM_MAPS,
    PES_RT_ITEM_ALLOC_SITES
};

/* A unit of work for the writer pool (order in the file = order queued). */
struct pes_rt_item {
    int type;
    int heap; /* free() after encoding */
    struct pes_rt_item *next;
    uint64_t seq;                     /* queue position, set when queued */
    uint32_t thread;                  /* RECORDS */
    const struct pes_record *records; /* RECORDS */
    size_t n;
    struct pes_rt_buf *buf;         /* RECORDS/EVENTS: returned (busy = 0) once encoded */
    struct pes_thread info;         /* THREAD */
    struct pes_module *module;      /* MODULE (heap, freed after encoding) */
    const struct pes_event *events; /* EVENTS (in buf) */
    struct pes_mapping *maps;       /* MAPS (heap, freed after encoding, with its strings) */
    const struct pes_alloc_site *alloc_sites; /* ALLOC_SITES (n; static, never freed) */
};

struct pes_rt_buf {
    struct pes_record *recs;
    int busy; /* queued, not encoded yet; guarded by the queue lock */
    struct pes_rt_item item;
};

/* ------------------------------------------------------------ sampling */

#define PES_RT_EVCAP    512                /* events per event buffer */
#define PES_RT_EV_FLUSH (PES_RT_EVCAP / 2) /* the slow path flushes above this: room for traps */

/* A watchpoint as one thread has it armed (modes/watch.c). */
struct pes_rt_wp {
    int fd; /* -1 = not opened yet */
    int armed;
    uint64_t addr;
    uint32_t len;
    int rw;       /* 1 = RW, 0 = W */
    uint32_t gen; /* slot generation it was armed for */
};

/* One perf event of a thread sampled through the PMU (backends/perf.c). `base` is
 * set last and cleared first: the overflow handler reads nothing else unless
 * it is non-NULL. */
struct pes_rt_pmu_ring {
    int fd;     /* -1 = none */
    int stores; /* PEBS store event (IBS: from the raw sample) */
    void *base; /* user page + data area (atomic) */
    size_t len;
};

/* Per-thread sampler state (rt_sample.c). Only the owner writes it, except the
 * atomics `loads`, `stores` (read by others) and `wake` (set by others). */
struct pes_rt_sampler {
    struct pes_record *scan;    /* first record of the current buffer not yet classified */
    struct pes_record *scratch; /* the thread's scratch buffer (no TLS lookup in the slow path) */
    uint64_t cd_load, cd_store; /* accesses of that type until the next sample (>= 1) */
    uint64_t rng;
    uint64_t loads, stores; /* exact counts up to `scan` and the last countdown sync (atomic) */
    int64_t cd_init;        /* check-path countdown as last set (atomic; rt_check.c) */
    int64_t cd_at_fold;     /* the countdown when last folded or armed (owner only) */
    uint64_t seg_end;       /* count at the end of the segment that entered recording */
    int switched;           /* recording because a sample falls in the current segment */
    uint64_t sample_phase;  /* count of the last sample, at its segment's end if switched */
    uint64_t samples;
    uint64_t period_load, period_store; /* in effect (the cap unless --samples, rt_adapt.h) */
    uint32_t adapt_level; /* --samples: level of the schedule, 0..PES_RT_ADAPT_LEVELS */
    uint64_t adapt_mark;  /* the counter when the thread entered its level */
    int adapt_started;    /* its first PERIOD event is written */
    uint64_t decided;     /* atomic: REUSE + INVALIDATION events owned by this thread */
    int wake;             /* atomic: re-check the global watch slots at the next access */
    uint32_t socket;
    volatile int in_runtime; /* traps while set come from the runtime itself: ignored */
    uint32_t seen_gen;       /* global watch generation last synchronised */
    struct pes_rt_wp wp[PES_RT_MAX_DEBUG_REGISTERS];
    struct pes_rt_buf ev[PES_RT_NBUF]; /* event buffers (recs unused; events in evs) */
    struct pes_event *evs[PES_RT_NBUF];
    int ev_cur;
    size_t ev_n;                          /* events in the current buffer (handler and owner) */
    uint64_t lost;                        /* events dropped: buffer full in a handler */
    uint64_t nested_loads, nested_stores; /* atomic: a signal handler's, not yet counted */
    uint64_t traps, ignored_traps;
    /* the comm mode's (modes/comm.c) */
    uint64_t prev_sample_ns, cur_sample_ns, t_prev, wp_armed_ns;
    uint32_t wp_publisher;
    uint64_t wp_m2;
    uint32_t wp_d2;
    void *altstack;                /* the runtime's alternate signal stack (rt_signals.c) */
    struct pes_rt_pmu_ring pmu[2]; /* backends/perf.c's: pebs: load, store; ibs: ops */
};

/* A thread's full-trace gate (rt_roi.c), under its lock. */
struct pes_rt_gate {
    struct pes_record *done;   /* records of the current buffer below it have passed */
    struct pes_record *toggle; /* another thread switched the region here (NULL: not) */
    int toggle_open;           /* ... to this state */
    int open;                  /* the region as it applies from `done` on */
    uint64_t accesses;         /* accesses inside the region so far (--skip) */
    uint64_t kept;             /* of them, kept (--max-accesses) */
};

struct pes_rt_thread {
    uint32_t index;
    pid_t tid;
    pthread_mutex_t lock;   /* slow path vs exit/signal snapshots */
    struct pes_rt_tls *tls; /* the thread's __pes_tls */
    struct pes_rt_buf bufs[PES_RT_NBUF];
    int cur;            /* buffer being filled */
    uint64_t flushed;   /* records handed to the writer (expanded: as a reader counts them) */
    uint64_t next_mark; /* record count at which the next time mark is due */
    /* Records the current buffer's loop descriptor groups stand for beyond
     * the slots they take (rt_loop.c): the buffer holds cursor - start +
     * loop_extra records as readers count them, never more than its capacity. */
    uint64_t loop_extra;
    int stopped;     /* atomic: records are dropped from now on */
    int live;        /* under threads_lock: its TLS still exists */
    int tls_readers; /* atomic: other threads reading its TLS without the lock */
    /* Records of signal handlers that ran while this thread was in the
     * runtime (full traces): written by the handler, moved to the buffer by
     * the interrupted slow path when it is done (rt_buffer.c). */
    struct pes_record *reserve;
    uint32_t n_reserve;     /* atomic (handler vs owner) */
    uint64_t lost_nested;   /* atomic: handler accesses neither recorded nor reserved */
    uint64_t lost_reported; /* of those, already written as PES_ID_LOST records */
    struct pes_rt_sampler s;
    struct pes_rt_gate gate;
    int stack_pending;                  /* owner: its stack is not recorded yet (rt_alloc.c) */
    struct pes_rt_thread *next;         /* all threads, newest first */
    struct pes_rt_thread *retired_next; /* ended, event buffers to reuse (rt_events.c) */
};

struct pes_rt_state {
    int full;                         /* full tracing active (set once at init) */
    int sampling;                     /* sampled trace active (set once at init) */
    int descriptors;                  /* loops may write descriptors: a full trace without sampling
                        or --skip/--max-accesses/region (set once at init; rt_loop.c) */
    struct pes_trace_writer *swriter; /* the sampled trace */
    int child;                        /* this process is a fork child: tracing off */
    struct pes_collect_settings cfg;  /* pes/settings.h */
    struct pes_trace_writer *writer;
    pthread_mutex_t threads_lock;
    struct pes_rt_thread *threads;
    uint32_t n_threads;
    int stopping; /* atomic: process exit or fatal signal in progress */
    /* sampling: the PES_MODE one, and what takes the samples (set once at init) */
    const struct pes_rt_mode *mode;
    const struct pes_rt_backend *backend;
};

PES_RT_HIDDEN extern struct pes_rt_state pes_rt;

/* Start-up (start/rt_start.c, once): the configuration, the mode and backend
 * of the given tables, the trace files, the writer pool. */
PES_RT_HIDDEN void pes_rt_start(const struct pes_rt_mode *const *modes,
                                const struct pes_rt_backend *const *backends);
PES_RT_HIDDEN uint64_t pes_rt_now(void); /* CLOCK_MONOTONIC ns */
PES_RT_HIDDEN void pes_rt_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* rt_thread.c */
PES_RT_HIDDEN struct pes_rt_thread *pes_rt_thread_self(void);  /* NULL if none */
PES_RT_HIDDEN struct pes_rt_thread *pes_rt_thread_setup(void); /* NULL if tracing off */
PES_RT_HIDDEN void pes_rt_thread_init_key(void);
PES_RT_HIDDEN void pes_rt_thread_use_scratch(void);
PES_RT_HIDDEN void pes_rt_thread_forget_self(void);
PES_RT_HIDDEN struct pes_record *pes_rt_thread_scratch(void);
/* Entry guard of the runtime's entry points (slow path, check path, module
 * registration, thread and process exit): pes_rt_enter fails if this thread
 * is already in the runtime — a signal handler interrupted it there, and must
 * not take the locks the interrupted code holds. While entered, cancellation
 * is disabled (no cancellation point is reached with a lock held) and the
 * runtime's own termination-signal handler only notes its signal, which
 * pes_rt_leave then handles. */
PES_RT_HIDDEN int pes_rt_enter(void); /* 0 entered, -1 already in the runtime */
PES_RT_HIDDEN void pes_rt_leave(void);
/* The same without changing the cancel state, for paths without cancellation
 * points (the allocator interposer). */
PES_RT_HIDDEN int pes_rt_enter_quick(void);
PES_RT_HIDDEN void pes_rt_leave_quick(void);
/* pes_rt_thread_setup is running on this thread. */
PES_RT_HIDDEN int pes_rt_thread_setting_up(void);
PES_RT_HIDDEN int pes_rt_in_runtime(void);
PES_RT_HIDDEN void pes_rt_defer_signal(int sig);
/* A termination signal waits for this thread to leave the runtime: the
 * runtime's waits end early (then the signal takes its course). */
PES_RT_HIDDEN int pes_rt_signal_pending(void);
/* rt_sigwrap.c: an application signal handler is running on this thread (its
 * records are kept aside like those of a handler inside the runtime). */
PES_RT_HIDDEN int pes_rt_in_app_handler(void);
/* close(2) and read(2) without glibc's cancellation points, for calls that
 * may run with a lock held: glibc 2.36 acts in a cancellation point on an
 * asynchronous cancel sent just before pes_rt_enter disabled cancellation. */
static inline void pes_rt_close(int fd)
{
    syscall(SYS_close, fd);
}
static inline long pes_rt_read(int fd, void *buf, size_t n)
{
    return syscall(SYS_read, fd, buf, n);
}
#include <signal.h>
PES_RT_HIDDEN int pes_rt_real_sigaction(int sig, const struct sigaction *act,
                                        struct sigaction *old);
/* The PMU backends' overflow signal: never wrapped, the backend's handler
 * keeps its own records out of the stream. */
PES_RT_HIDDEN void pes_rt_sigwrap_reserve(int sig);
/* Records signal handlers may leave for the interrupted slow path of their
 * thread: enough for a handler that writes a few arrays while the thread
 * waits for a buffer (1 MiB of address space, touched only when used). */
#define PES_RT_RESERVE 65536u
PES_RT_HIDDEN void pes_rt_reserve_free(struct pes_rt_thread *t);

/* rt_check.c: the check path (rt_abi.h). Countdown values: (room << 24) | the
 * stores field; PES_RT_CD_OFF never runs out in practice. */
#define PES_RT_CD_OFF            ((int64_t)1 << 61)
#define PES_RT_CD_MAX_ROOM       ((uint64_t)1 << 23) /* keeps the stores field exact */
#define PES_RT_CD_WAKE_ROOM      16384u              /* waking modes: bounds a lost wake-up */
#define PES_RT_RECORD_SHARE      64u                 /* records' share of the room (rt_buffer.c) */
#define PES_RT_RECORD_SHARE_FROM 1024u               /* ... while the room is at least this */
/* Decoded drop of a countdown: loads and stores the check path counted. */
struct pes_rt_drop {
    uint64_t loads, stores;
};
#define PES_RT_CD_STORES_MASK ((1ull << PES_RT_WEIGHT_SHIFT) - 1)
#define PES_RT_CD_KICK        (1ull << 63)
/* The countdown armed for `room` loads + stores: non-negative until more ran
 * (while fewer than 2^24 stores ran). */
static inline int64_t pes_rt_check_pack(uint64_t room)
{
    return (int64_t)(room << PES_RT_WEIGHT_SHIFT | PES_RT_CD_STORES_MASK);
}
/* armed value - current value, without a wake-up kick: sum of the weights
 * subtracted since (a kick adds 2^63; the counted part stays below 2^62). */
static inline uint64_t pes_rt_check_drop(int64_t armed, int64_t now)
{
    uint64_t drop = (uint64_t)armed - (uint64_t)now;
    return drop >= (1ull << 62) ? drop - PES_RT_CD_KICK : drop;
}
static inline struct pes_rt_drop pes_rt_check_decode(uint64_t drop)
{
    struct pes_rt_drop d;
    d.stores = drop & PES_RT_CD_STORES_MASK;
    uint64_t accesses = drop >> PES_RT_WEIGHT_SHIFT;
    d.loads = accesses >= d.stores ? accesses - d.stores : 0;
    return d;
}
/* What the thread's own check path counted since its last sync. */
PES_RT_HIDDEN struct pes_rt_drop pes_rt_check_pending(const struct pes_rt_thread *t);
/* The same for another thread (racy by design; lock-free, safe in a signal
 * handler: the thread's TLS is not freed meanwhile, see pes_rt_thread exit). */
PES_RT_HIDDEN struct pes_rt_drop pes_rt_check_pending_other(struct pes_rt_thread *t);
/* Owner: moves the pending counts (less `unspent`, a segment not yet executed)
 * into loads/stores and the sample countdowns. */
PES_RT_HIDDEN void pes_rt_check_fold(struct pes_rt_thread *t, int64_t unspent);
/* Owner: sets the countdown so the check path runs `room` loads+stores before
 * it calls again; `spent` = weight already counted as consumed (a segment
 * about to run). */
PES_RT_HIDDEN void pes_rt_check_arm(struct pes_rt_thread *t, uint64_t room, int64_t spent);
/* Another thread asks t to enter the runtime at its next segment (wake-up). */
PES_RT_HIDDEN void pes_rt_check_kick(struct pes_rt_thread *t);

/* rt_buffer.c — call with t->lock held */
PES_RT_HIDDEN int pes_rt_buffer_alloc(struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_buffer_set_limit(struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_buffer_set_limit_ahead(struct pes_rt_thread *t, struct pes_rt_drop ahead,
                                                 int64_t spent);
/* Stops a thread: hands its records up to its cursor to the writer (see
 * docs/collector.md for the race with a still-running owner). `wait_lock` = 0
 * only tries the lock (signal handlers). Returns 0 if flushed or already stopped. */
PES_RT_HIDDEN int pes_rt_buffer_stop(struct pes_rt_thread *t, int wait_lock, int end_record);
/* Owner thread, inside the runtime, not under t->lock: appends k control
 * records at the thread's place in its record order (rt_alloc.c). */
PES_RT_HIDDEN void pes_rt_buffer_put_control(struct pes_rt_thread *t, const struct pes_record *r,
                                             unsigned k);
/* What rt_loop.c's descriptor chunks share with the slow path (rt_buffer.c).
 * Under t->lock but the first two; -1: the thread was stopped meanwhile. */
/* A signal handler's record (the thread may be inside the runtime). */
PES_RT_HIDDEN void pes_rt_buffer_nested(struct pes_rt_thread *t, uint64_t addr, uint32_t id,
                                        uint32_t extra);
/* The slow path of one record, under the entry guard, not under t->lock. */
PES_RT_HIDDEN void pes_rt_buffer_record(struct pes_rt_thread *t, uint64_t addr, uint32_t id,
                                        uint32_t extra, uint64_t ip);
/* The thread's records so far, as readers count them (descriptors expanded). */
PES_RT_HIDDEN uint64_t pes_rt_buffer_count(const struct pes_rt_thread *t);
/* Ends the entry guard of a slow path (in_runtime = 0, after its stores). */
PES_RT_HIDDEN void pes_rt_buffer_leave(struct pes_rt_thread *t);
/* Leaves a slow path that holds t->lock: the limit opens again, or a thread
 * stopped meanwhile (stopped != 0) goes to the scratch buffer, so that its
 * next records are dropped; then the lock and the entry guard end. */
PES_RT_HIDDEN void pes_rt_buffer_unlock(struct pes_rt_thread *t, int stopped);
/* Handlers' records waiting in the reserve, and the count of lost ones, into the buffer. */
PES_RT_HIDDEN int pes_rt_buffer_drain(struct pes_rt_thread *t);
/* A time mark if one is due before the next `ahead` + 1 records (ahead <= 1). */
PES_RT_HIDDEN int pes_rt_buffer_mark_due(struct pes_rt_thread *t, unsigned ahead);
/* Room in the current buffer, in records as readers count them (>= 1): the
 * next buffer if the current one is full. */
PES_RT_HIDDEN int pes_rt_buffer_room(struct pes_rt_thread *t, uint64_t *room);
/* The writer's largest ACCESS block (trace/src: PES_MAX_BLOCK_RECORDS): a
 * buffer larger than this becomes several blocks, cut at its multiples. */
#define PES_RT_BLOCK_RECORDS (1u << 20)

/* True if the runtime keeps per-thread state (full tracing or sampling). */
static inline int pes_rt_active(void)
{
    return __atomic_load_n(&pes_rt.full, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&pes_rt.sampling, __ATOMIC_ACQUIRE);
}

/* Random numbers: splitmix64 to seed, xorshift64* to draw (no locks, no libc state). */
static inline uint64_t pes_rt_splitmix(uint64_t *x)
{
    return pes_splitmix64(x);
}
static inline uint64_t pes_rt_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}
/* Uniform in [0, n) (n > 0); the bias of a 64-bit modulo is negligible here. */
static inline uint64_t pes_rt_rand_below(uint64_t *s, uint64_t n)
{
    return pes_rt_rand(s) % n;
}

/* Next period: `period` with its low bits randomised (like IBS) so samples do
 * not alias with loop strides: uniform in [period - period/8, period + period/8]. */
static inline uint64_t pes_rt_next_period(uint64_t *rng, uint64_t period)
{
    uint64_t j = period / 8;
    if (!j)
        return period;
    return period - j + pes_rt_rand_below(rng, 2 * j + 1);
}

/* rt_sites.c: kind and size of every site id, readable without locks. */
struct pes_rt_site_info {
    uint8_t kind; /* 0 = not a site */
    uint8_t flags;
    uint16_t size; /* 0 = variable (extra) */
};
PES_RT_HIDDEN void pes_rt_sites_add(const struct pes_rt_module *m, uint32_t base);
/* id -> 1 (reads) + 1 << 16 (writes), for ids below PES_RT_WEIGHT_IDS; entry
 * PES_RT_WEIGHT_IDS is 0 and stands for every other id (control records). NULL
 * if the table could not be reserved or an id beyond it was registered. */
#define PES_RT_WEIGHT_IDS (1u << 28)
PES_RT_HIDDEN extern const uint32_t *pes_rt_site_weights;
static inline uint32_t pes_rt_weight_index(uint32_t id)
{
    return id < PES_RT_WEIGHT_IDS ? id : PES_RT_WEIGHT_IDS; /* a cmov, not a branch */
}
PES_RT_HIDDEN struct pes_rt_site_info pes_rt_sites_get(uint32_t id);
/* Loads + (stores << 16) of one record of id (0 for control records). */
static inline uint32_t pes_rt_site_weight(uint32_t id)
{
    const uint32_t *w = __atomic_load_n(&pes_rt_site_weights, __ATOMIC_ACQUIRE);
    if (w)
        return w[pes_rt_weight_index(id)];
    uint8_t kind = pes_rt_sites_get(id).kind;
    return (pes_kind_reads(kind) ? 1u : 0u) + (pes_kind_writes(kind) ? 1u << 16 : 0u);
}

/* rt_sample.c */
PES_RT_HIDDEN void pes_rt_sample_thread_init(struct pes_rt_thread *t);
/* Slow path, before the record is stored: classify the records since the last call. */
PES_RT_HIDDEN void pes_rt_sample_scan(struct pes_rt_thread *t);
/* Slow path, the current access (already executed): counts and countdowns,
 * owner-only state, no lock. Returns non-zero if a sample is due. */
PES_RT_HIDDEN int pes_rt_sample_count(struct pes_rt_thread *t, uint32_t id);
/* Under the thread's lock: re-arm if woken, then take the sample if `hit`. */
PES_RT_HIDDEN void pes_rt_sample_take(struct pes_rt_thread *t, uint64_t addr, uint32_t id,
                                      uint32_t extra, uint64_t ip, int hit);
/* Records the inline path may still store before the next sample (>= 0),
 * after `ahead` more loads and stores (a segment about to run, none expiring). */
PES_RT_HIDDEN uint64_t pes_rt_sample_room_after(const struct pes_rt_thread *t,
                                                struct pes_rt_drop ahead);
/* The thread's exact load+store count, including unclassified records below its
 * cursor and what its check path counted (own thread, also from a signal
 * handler). In the check path the count runs to the end of the current segment. */
PES_RT_HIDDEN uint64_t pes_rt_sample_count_self(const struct pes_rt_thread *t);
/* Count at the access a watchpoint trap just caught (own thread, handler): in
 * the recording path the exact count of that access; in the check path the
 * count at the end of its segment, and *segment_end is set. */
PES_RT_HIDDEN uint64_t pes_rt_sample_now(const struct pes_rt_thread *t, int *segment_end);
/* Final counts into a PES_EV_TOTALS event and flush (owner or stopped thread). */
PES_RT_HIDDEN void pes_rt_sample_finish(struct pes_rt_thread *t, int from_signal);
/* Asks thread t to re-synchronise its watchpoints at its next instrumented access. */
PES_RT_HIDDEN void pes_rt_sample_wake(struct pes_rt_thread *t);

/* rt_events.c */
/* The thread's event buffers and scratch records: an ended thread's, once the
 * writer has given its events back, else new ones (not zeroed: events are
 * written before they are read, and untouched pages cost nothing). 0 or -1. */
PES_RT_HIDDEN int pes_rt_events_alloc(struct pes_rt_thread *t);
/* Thread exit, after its last flush and its last trap: its buffers go to
 * the next thread set up (pes_rt_events_alloc). */
PES_RT_HIDDEN void pes_rt_events_retire(struct pes_rt_thread *t);
/* Appends one event (owner thread, slow path or trap handler). 0, or -1 if full (lost). */
PES_RT_HIDDEN int pes_rt_events_add(struct pes_rt_thread *t, const struct pes_event *e);
/* Hands the current events to the writer (not from a signal handler unless from_signal). */
PES_RT_HIDDEN void pes_rt_events_flush(struct pes_rt_thread *t, int from_signal);
PES_RT_HIDDEN void pes_rt_event_init(struct pes_event *e, uint8_t kind,
                                     const struct pes_rt_thread *t);

/* The backend samples in hardware (pebs, ibs): core's countdowns and check
 * path only count while the program counts (soft; backend.h). */
static inline int pes_rt_hardware_samples(void)
{
    const struct pes_rt_backend *b = __atomic_load_n(&pes_rt.backend, __ATOMIC_ACQUIRE);
    return b && !b->program_counts;
}
/* rt_sample.c: record a SAMPLE event and run the mode's sample hook (owner
 * thread; the soft slow path under t->lock, or the PMU overflow handler). */
PES_RT_HIDDEN void pes_rt_sample_record(struct pes_rt_thread *t, struct pes_event *ev);
/* Owner thread, before it stops: the backend's pending samples become events,
 * then its events are closed (no overflow signal after this). */
PES_RT_HIDDEN void pes_rt_sample_backend_stop(struct pes_rt_thread *t);

/* rt_writer.c */
/* Starts the encoder threads (PES_WRITERS, else pes_rt_writers_for_cpus of the
 * affinity mask). 0, or -1 if none could be started. */
PES_RT_HIDDEN int pes_rt_writer_start(void);
PES_RT_HIDDEN void pes_rt_writer_push(struct pes_rt_item *it);
/* The same without waking an encoder: the next push (or STOP) wakes one, which
 * takes the queue in order. For items that can wait (a THREAD block): a
 * thread's set-up does not pay for a wake-up and a context switch. */
PES_RT_HIDDEN void pes_rt_writer_push_quiet(struct pes_rt_item *it);
/* buf is back from the writer (not queued, or encoded); does not wait. */
PES_RT_HIDDEN int pes_rt_writer_is_free(const struct pes_rt_buf *buf);
/* Non-blocking variant for signal handlers: 0 if queued, -1 if the lock is busy. */
PES_RT_HIDDEN int pes_rt_writer_try_push(struct pes_rt_item *it);
/* Waits until buf is encoded and back (or the writer is gone). Returns 0 if
 * free, -1 if busy and the writer is gone, PES_RT_WAIT_INTERRUPTED if a
 * termination signal is pending on this thread (pes_rt_signal_pending): the
 * buffer may still be read, and the process is about to end. */
#define PES_RT_WAIT_INTERRUPTED (-2)
PES_RT_HIDDEN int pes_rt_writer_wait_free(struct pes_rt_buf *buf);
/* From a signal handler: every wait of the runtime re-checks its condition and
 * pes_rt_signal_pending (async-signal-safe). */
PES_RT_HIDDEN void pes_rt_writer_interrupt(void);
/* Queues STOP and joins the pool; the item before STOP is the last one written,
 * then the footer, and the file is closed. */
PES_RT_HIDDEN void pes_rt_writer_finish(void);
/* From a signal handler: queue STOP and poll until the file is closed, at most
 * wait_ms milliseconds. */
PES_RT_HIDDEN void pes_rt_writer_finish_signal(unsigned wait_ms);
/* True in a writer-pool thread. */
PES_RT_HIDDEN int pes_rt_writer_is_self(void);

/* Per-thread flags the allocator interposer reads on every call, without a
 * function call (rt_thread.c, rt_writer.c, rt_sigwrap.c own them). */
#define PES_RT_TLS_IE __thread __attribute__((tls_model("initial-exec"), visibility("hidden")))
extern PES_RT_TLS_IE struct pes_rt_thread *pes_rt_self_tls; /* pes_rt_thread_self() */
extern PES_RT_TLS_IE int pes_rt_entered_tls;                /* pes_rt_in_runtime() */
extern PES_RT_TLS_IE int pes_rt_in_setup_tls;               /* pes_rt_thread_setting_up() */
extern PES_RT_TLS_IE int pes_rt_in_pool_tls;                /* pes_rt_writer_is_self() */
extern PES_RT_TLS_IE int pes_rt_handler_depth_tls;          /* pes_rt_in_app_handler() may be 1 */

/* rt_alloc.c: the malloc family and operator new interposed; thread stacks. */
/* Maps the tables (before tracing starts; 0, or -1: allocations not recorded);
 * `sampled`: a sampled trace is written, its blocks go to the live table. */
PES_RT_HIDDEN int pes_rt_alloc_init(int sampled);
/* Before an event naming ev->addr is added to t's events (its own thread,
 * also in a signal handler), for the live heap block holding that address
 * (sampled traces): a SAMPLE gets the block's site, size and offset; another
 * event gets the block's ALLOC event before it, if t's events lack it. */
PES_RT_HIDDEN void pes_rt_alloc_announce(struct pes_rt_thread *t, struct pes_event *ev);
/* Owner thread, from its own code (not from inside libc), not under t->lock:
 * if the thread's stack is not recorded yet, ALLOC/ALLOC_SIZE of it (site
 * PES_ALLOC_SITE_STACK) in its records, or a PES_EV_ALLOC event. */
PES_RT_HIDDEN void pes_rt_alloc_stack(struct pes_rt_thread *t);
static inline void pes_rt_alloc_stack_due(struct pes_rt_thread *t)
{
    if (__builtin_expect(t->stack_pending, 0))
        pes_rt_alloc_stack(t);
}
/* glibc's allocator itself (no interposer, no recording). */
void *__libc_malloc(size_t size);
void __libc_free(void *p);

/* rt_stack.c: the call stacks of samples (pes_event.stack). */
/* Maps the tables (start-up, sampled trace; 0, or -1: samples get no stacks). */
PES_RT_HIDDEN int pes_rt_stack_init(void);
/* The id of the stack ips[0..depth) (at most PES_ALLOC_MAX_DEPTH used),
 * queueing its ALLOC_SITES entry the first time; PES_STACK_NONE if it
 * cannot have one. from_signal: an overflow handler (never waits). */
PES_RT_HIDDEN uint32_t pes_rt_stack_intern(const uint64_t *ips, uint32_t depth, int from_signal);
/* The stack of the sampled access at ip0 (a return address into the
 * program) unwound from here, the caller's frames up to ip0 skipped;
 * the owner thread, not a signal handler. */
PES_RT_HIDDEN uint32_t pes_rt_stack_here(uint64_t ip0);

/* rt_signals.c */
PES_RT_HIDDEN void pes_rt_signals_install(void);
PES_RT_HIDDEN void pes_rt_signals_restore(void);
/* A termination signal that arrived while this thread was in the runtime. */
PES_RT_HIDDEN void pes_rt_signals_deliver_deferred(int sig);
/* The calling thread's alternate signal stack for the runtime's handlers
 * (watchpoint traps, PMU overflows), whose frames must stay off the
 * program's stack: the application's own if it has one, else one of the
 * runtime's (owner thread; idempotent). Released at thread exit. */
PES_RT_HIDDEN void pes_rt_altstack_setup(struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_altstack_release(struct pes_rt_thread *t);

/* rt_roi.c */
PES_RT_HIDDEN void pes_rt_roi_init(void);        /* after the configuration is read */
PES_RT_HIDDEN const char *pes_rt_roi_mode(void); /* none | markers | ignored */
PES_RT_HIDDEN int pes_rt_roi_open(void);         /* recording allowed now (no markers: 1) */
PES_RT_HIDDEN void pes_rt_gate_thread_init(struct pes_rt_thread *t);
/* Under t->lock: the records written since the last pass through the gate,
 * compacted in place (no-op without region, skip or max). */
PES_RT_HIDDEN void pes_rt_gate_run(struct pes_rt_thread *t);
/* Full trace without sampling, with a region, skip or max: threads whose
 * records would all be dropped may run their check clones (idle). */
/* A region, --skip or --max-accesses may drop records: the gate passes them
 * one by one, so loops do not write descriptors (set at pes_rt_roi_init). */
PES_RT_HIDDEN int pes_rt_gate_configured(void);
PES_RT_HIDDEN int pes_rt_gate_enabled(void);
PES_RT_HIDDEN int pes_rt_gate_idle(const struct pes_rt_thread *t); /* under t->lock */
PES_RT_HIDDEN void pes_rt_gate_settle(struct pes_rt_thread *t);    /* owner, under t->lock */

/* rt_init.c: flush everything and close: at process exit (0), at a fatal
 * signal (PES_RT_STOP_FAULT: waits up to 5 s for the writers) or a
 * termination request (PES_RT_STOP_TERM: the process ends within a second
 * whatever the writers do, so the trace may lack its end). */
#define PES_RT_STOP_FAULT 1
#define PES_RT_STOP_TERM  2
PES_RT_HIDDEN void pes_rt_shutdown(int from_signal);

#endif /* PES_RT_CORE_H */
