/*
 * rt_internal.h — shared state and helpers of libpes-rt (not installed).
 *
 * The runtime is split one concept per file:
 *   rt_env.c          strict parsing of the PES_* environment
 *   rt_host.c         host description for the header (sysfs, /proc)
 *   rt_module_table.c id ranges and table conversion for registered modules
 *   rt_init.c         start-up, header, process exit, fork
 *   rt_thread.c       per-thread state: lazy set-up, thread exit
 *   rt_buffer.c       the slow path: buffer hand-off, time marks, limit
 *   rt_writer.c       the writer thread and its queue
 *   rt_modules.c      __pes_register_module
 *   rt_signals.c      fatal-signal flush
 * Everything here has hidden visibility; only the rt_abi.h symbols are exported.
 */
#ifndef PES_RT_INTERNAL_H
#define PES_RT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pes/rt_abi.h"
#include "pes/trace.h"

#define PES_RT_HIDDEN __attribute__((visibility("hidden")))

/* ------------------------------------------------------------ configuration */

#define PES_RT_DEFAULT_TIME_INTERVAL 1024u
#define PES_RT_DEFAULT_BUFFER_RECORDS 65536u
#define PES_RT_MIN_BUFFER_RECORDS 16u
#define PES_RT_MAX_BUFFER_RECORDS (1u << 26)
#define PES_RT_DEFAULT_ZSTD_LEVEL 1
#define PES_RT_MAX_ZSTD_LEVEL 22

struct pes_rt_config {
    const char *full_output;   /* NULL = no full trace */
    int overwrite;
    uint32_t time_interval;
    uint32_t buffer_records;
    int zstd_level;
    int quiet;
    const char *command;       /* NULL = use /proc/self/cmdline */
};

/* Looks up one variable (getenv in the runtime, a table in tests). */
typedef const char *(*pes_rt_getenv_fn)(const char *name, void *ctx);

/* Fills *c from the environment. Returns 0, or -1 with a one-line message
 * ("PES_TIME_INTERVAL=abc: expected a positive integer") in msg. */
PES_RT_HIDDEN int pes_rt_config_parse(struct pes_rt_config *c, pes_rt_getenv_fn get, void *ctx,
                                      char *msg, size_t msg_size);
/* Strict decimal parse: digits only, no sign or blanks, within [min, max]. */
PES_RT_HIDDEN int pes_rt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

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

/* Command-line quoting (shared with pes-collect): arguments joined by spaces,
 * each quoted for a POSIX shell if needed. malloc'd; NULL on allocation failure. */
char *pes_cmdline_quote(int argc, char *const argv[]);

/* ------------------------------------------------------------ runtime state */

#define PES_RT_NBUF 2          /* buffers per thread: one filling, one being written */
#define PES_RT_SCRATCH 128     /* records of the per-thread scratch buffer (tracing off) */

enum pes_rt_item_type { PES_RT_ITEM_RECORDS, PES_RT_ITEM_THREAD, PES_RT_ITEM_MODULE, PES_RT_ITEM_STOP };

/* A unit of work for the writer thread (FIFO: order in the file = order queued). */
struct pes_rt_item {
    int type;
    int heap;                          /* free() after writing */
    struct pes_rt_item *next;
    uint32_t thread;                   /* RECORDS */
    const struct pes_record *records;  /* RECORDS */
    size_t n;
    struct pes_rt_buf *buf;            /* RECORDS: returned (busy = 0) after writing */
    struct pes_thread info;            /* THREAD */
    struct pes_module *module;         /* MODULE (heap, freed after writing) */
};

struct pes_rt_buf {
    struct pes_record *recs;
    int busy;                          /* queued to the writer; guarded by the queue lock */
    struct pes_rt_item item;
};

struct pes_rt_thread {
    uint32_t index;
    pid_t tid;
    pthread_mutex_t lock;              /* slow path vs exit/signal snapshots */
    struct pes_rt_tls *tls;            /* the thread's __pes_tls */
    struct pes_rt_buf bufs[PES_RT_NBUF];
    int cur;                           /* buffer being filled */
    uint64_t flushed;                  /* records handed to the writer */
    uint64_t next_mark;                /* record count at which the next time mark is due */
    int stopped;                       /* atomic: records are dropped from now on */
    struct pes_rt_thread *next;        /* all threads, newest first */
};

struct pes_rt_state {
    int full;                          /* full tracing active (set once at init) */
    int child;                         /* this process is a fork child: tracing off */
    struct pes_rt_config cfg;
    struct pes_trace_writer *writer;
    pthread_mutex_t threads_lock;
    struct pes_rt_thread *threads;
    uint32_t n_threads;
    int stopping;                      /* atomic: process exit or fatal signal in progress */
};

PES_RT_HIDDEN extern struct pes_rt_state pes_rt;

PES_RT_HIDDEN void pes_rt_init(void);                      /* idempotent */
PES_RT_HIDDEN uint64_t pes_rt_now(void);                   /* CLOCK_MONOTONIC ns */
PES_RT_HIDDEN void pes_rt_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* rt_thread.c */
PES_RT_HIDDEN struct pes_rt_thread *pes_rt_thread_self(void);  /* NULL if none */
PES_RT_HIDDEN struct pes_rt_thread *pes_rt_thread_setup(void); /* NULL if tracing off */
PES_RT_HIDDEN void pes_rt_thread_init_key(void);
PES_RT_HIDDEN void pes_rt_thread_use_scratch(void);
PES_RT_HIDDEN void pes_rt_thread_forget_self(void);

/* rt_buffer.c — call with t->lock held */
PES_RT_HIDDEN int pes_rt_buffer_alloc(struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_buffer_put(struct pes_rt_thread *t, uint64_t addr, uint32_t id,
                                     uint32_t extra);
PES_RT_HIDDEN void pes_rt_buffer_set_limit(struct pes_rt_thread *t);
/* Stops a thread: hands its records up to its cursor to the writer (see
 * docs/collector.md for the race with a still-running owner). `wait_lock` = 0
 * only tries the lock (signal handlers). Returns 0 if flushed or already stopped. */
PES_RT_HIDDEN int pes_rt_buffer_stop(struct pes_rt_thread *t, int wait_lock, int end_record);

/* rt_writer.c */
PES_RT_HIDDEN int pes_rt_writer_start(void);
PES_RT_HIDDEN void pes_rt_writer_push(struct pes_rt_item *it);
/* Non-blocking variant for signal handlers: 0 if queued, -1 if the lock is busy. */
PES_RT_HIDDEN int pes_rt_writer_try_push(struct pes_rt_item *it);
/* Waits until buf is no longer busy (or the writer is gone). Returns 0 if free. */
PES_RT_HIDDEN int pes_rt_writer_wait_free(struct pes_rt_buf *buf);
/* Queues STOP and joins the writer, which writes the footer and closes the file. */
PES_RT_HIDDEN void pes_rt_writer_finish(void);
/* From a signal handler: queue STOP and poll (bounded) until the file is closed. */
PES_RT_HIDDEN void pes_rt_writer_finish_signal(void);
PES_RT_HIDDEN int pes_rt_writer_is_self(void);


/* rt_signals.c */
PES_RT_HIDDEN void pes_rt_signals_install(void);
PES_RT_HIDDEN void pes_rt_signals_restore(void);

/* rt_init.c: flush everything and close (process exit or fatal signal). */
PES_RT_HIDDEN void pes_rt_shutdown(int from_signal);

#endif /* PES_RT_INTERNAL_H */
