/*
 * pes/trace.h — the pes trace format: writer and reader.
 *
 * A trace file is a valid zstd stream made of independently decodable frames.
 * Each frame decompresses to exactly one *block*: a fixed block header followed
 * by a payload whose layout depends on the block type (docs/trace-format.md is
 * the normative description; this header is the API).
 *
 *   HEADER   first block: magic, version, trace kind, command line, host, config
 *   MODULE   a site table and a basic-block table of one instrumented module
 *   THREAD   a thread starts (index, tid, cpu, parent, start time)
 *   ACCESS   full-trace records of one thread (column-transposed, predicted)
 *   EVENTS   sampled records of one thread (use/reuse/invalidation/comm/lost)
 *   MAPS     executable mappings (for symbolizing raw IPs with libdw)
 *   ALLOC_SITES  heap allocation sites: id, allocator kind, short call stack;
 *                from version 3 also the call stacks that sampled events name
 *   FOOTER   last block: per-thread totals, end time; absent if truncated
 *
 * Ids: one 32-bit id space per trace. Instrumented modules get consecutive
 * ranges; inside a module's range, site ids come first, then basic-block ids.
 * Ids >= PES_ID_CONTROL_FIRST are control records (time, region markers).
 *
 * Thread-safety: a writer, an encoder or a reader must be used by one thread
 * at a time; different objects are independent. To spread the compression of
 * blocks over threads, give each thread its own pes_trace_encoder and append
 * the bytes they make to one writer in the order the file should have
 * (pes_trace_writer_append); the runtime's writer pool does this.
 * Errors: functions return NULL / negative and fill struct pes_error; nothing
 * here prints, exits or aborts.
 */
#ifndef PES_TRACE_H
#define PES_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PES_TRACE_MAGIC          "PESB" /* first 4 bytes of every block */
#define PES_TRACE_VERSION        4u     /* bumped on any incompatible change; writers write it */
#define PES_TRACE_VERSION_OLDEST 1u     /* readers read versions OLDEST .. PES_TRACE_VERSION */

/* ---------------------------------------------------------------- errors */

struct pes_error {
    int code;          /* 0 = ok, else one of enum pes_error_code */
    uint64_t offset;   /* byte offset in the file where it went wrong */
    char message[256]; /* one line, names the file and what was expected */
};

/* Fills *err (when err is not NULL) and returns -1, so that a library
 * function can `return pes_error_set(err, PES_ERR_ARG, 0, "...", ...);`.
 * Every pes library reports errors through this one helper. */
int pes_error_set(struct pes_error *err, int code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

enum pes_error_code {
    PES_OK = 0,
    PES_ERR_IO = 1,        /* open/read/write failed (errno in message) */
    PES_ERR_FORMAT = 2,    /* not a pes trace, or corrupt content */
    PES_ERR_VERSION = 3,   /* newer/unknown format version */
    PES_ERR_TRUNCATED = 4, /* file ends inside a frame (reader: a warning) */
    PES_ERR_NOMEM = 5,
    PES_ERR_ARG = 6, /* bad argument from the caller */
};

/* ---------------------------------------------------------------- ids */

#define PES_ID_CONTROL_FIRST 0xFFFFFF00u
enum pes_control_id {
    PES_ID_TIME = 0xFFFFFF00u,         /* addr = timestamp (ticks) */
    PES_ID_REGION_BEGIN = 0xFFFFFF01u, /* OpenMP parallel region entered; addr = region id */
    PES_ID_REGION_END = 0xFFFFFF02u,   /* extra = 0 */
    PES_ID_THREAD_END = 0xFFFFFF03u,   /* addr = timestamp */
    PES_ID_LOST = 0xFFFFFF04u,         /* addr = accesses of this thread not recorded since
                                           its previous LOST record (signal handlers) */
    PES_ID_ALLOC = 0xFFFFFF05u,        /* a block was allocated: addr = its first byte,
                                           extra = allocation-site id (ALLOC_SITES block), or
                                           PES_ALLOC_SITE_STACK for a thread's stack */
    PES_ID_ALLOC_SIZE = 0xFFFFFF06u,   /* follows its ALLOC in the thread's record order (maybe
                                           in the thread's next ACCESS block): addr = size in
                                           bytes, extra = 0 */
    PES_ID_FREE = 0xFFFFFF07u,         /* addr = first byte of the freed block; realloc is
                                           FREE(old) then ALLOC/ALLOC_SIZE(new) */
    PES_ID_LOOP = 0xFFFFFF08u,         /* (version 2) a loop descriptor: stands for addr
                                           records; extra = m | phase << 16; followed by m
                                           template records and m LOOP_STEP records */
    PES_ID_LOOP_STEP = 0xFFFFFF09u,    /* addr = the step (two's complement) of the template
                                           record with the same position; extra = 0, or
                                           (version 3) PES_LOOP_STEP_IRREGULAR */
    PES_ID_CALL = 0xFFFFFF0Au,         /* (version 3) a call edge, below; addr = the caller's
                                           stack pointer at the call, extra = the call site */
    PES_ID_RETURN = 0xFFFFFF0Bu,       /* (version 3) the call returned or unwound to its
                                           caller: addr = the same stack pointer, extra = 0 */
};

/*
 * Call edges (version 3): the recording clone of an instrumented function
 * brackets each call that can reach instrumented code (not intrinsics, not
 * library functions that take no function pointer) with
 *
 *   {sp, PES_ID_CALL, call_site}  before the call
 *   {sp, PES_ID_RETURN, 0}        after it returns, and where an invoke unwinds
 *
 * call_site is a site of kind PES_KIND_CALL (the call's file, line, function);
 * sp is the caller's stack pointer, the same value in both records. A
 * thread's call path at a record is the sequence of call sites of the CALLs
 * not yet matched by a RETURN. A longjmp or an exception that skips frames
 * leaves CALLs unmatched; readers repair the stack from sp (stacks grow down):
 * a CALL with stack pointer sp first drops every open frame whose stack
 * pointer is at or below sp (one at sp is a call its caller left by a
 * longjmp: a frame makes one call at a time); a RETURN first drops every open
 * frame whose stack pointer is below sp, then closes the frame whose stack
 * pointer equals sp (none open: the RETURN is ignored; a landing pad shared
 * with a call without edge writes one). Frames entered before the thread's
 * recording began (main's caller, an OpenMP worker's runtime frames, calls
 * made before the thread's first access) have no CALL: a path starts at the
 * outermost recorded call. CALL and RETURN count as records (time marks,
 * block and footer counts), never as accesses.
 */

/*
 * Loop descriptors (regular section descriptors, after METRIC, Marathe et al.):
 * the records of R consecutive accesses and block entries of a loop whose every
 * record's address is affine in the iteration, stored as
 *
 *   {R, PES_ID_LOOP, m | phase << 16}          1 <= m <= PES_LOOP_MAX_RECORDS, phase < m
 *   {a_0, id_0, x_0} ... {a_m-1, id_m-1, x_m-1}  templates: ids are sites or blocks
 *   {s_0, PES_ID_LOOP_STEP, 0} ... {s_m-1, PES_ID_LOOP_STEP, 0}
 *
 * all in one ACCESS block. It expands to the records q = 0 .. R-1, with
 * u = phase + q, j = u % m, i = u / m:   {a_j + i * s_j, id_j, x_j}
 * (addresses modulo 2^64). Readers expand them (pes_trace_reader_next and
 * _block_at hand out expanded records; pes_trace_reader_set_raw shows the
 * stored ones); every count of records (block header, index, footer) counts
 * expanded records, so a trace and its twin recorded with --no-descriptors
 * agree on all of them. A group stands for at most 2^20 records (one block).
 *
 * Mixed bodies (version 3): a template whose step record has extra
 * PES_LOOP_STEP_IRREGULAR (step 0; its address that of its first record in
 * the group, 0 if none) is irregular: its
 * records' addresses are not affine (an indirect a[idx[i]], a pointer
 * chase): the K records of the group that fall on irregular positions
 * (pes_trace_loop_times summed over them) follow the steps as they are, in
 * expansion order, each with its template's id and extra. So the predictor
 * of the ACCESS codec sees each site's addresses in a row as without
 * descriptors. The group is 1 + 2m + K stored records (pes_trace_loop_size).
 */
#define PES_LOOP_MAX_RECORDS    64u
#define PES_LOOP_STEP_IRREGULAR 1u

/* ---------------------------------------------------------------- allocation sites */

/* The site id of a thread's stack (ALLOC record extra, PES_EV_ALLOC site):
 * addr = lowest address of the stack, size from pthread_getattr_np. */
#define PES_ALLOC_SITE_STACK 0xFFFFFFFFu
#define PES_ALLOC_MAX_DEPTH  8u /* ips per allocation site */

enum pes_alloc_kind {
    PES_ALLOC_MALLOC = 1,
    PES_ALLOC_CALLOC = 2,
    PES_ALLOC_REALLOC = 3,
    PES_ALLOC_ALIGNED = 4,   /* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
    PES_ALLOC_NEW = 5,       /* C++ operator new / new[] */
    PES_ALLOC_CALLSTACK = 6, /* (version 3) not an allocation: the call stack of sampled
                                events (pes_event.stack, below) */
};

/* A sampled event's call stack (pes_event.stack): the id of an ALLOC_SITES
 * entry of kind PES_ALLOC_CALLSTACK, whose ips[0] is the ip of the sampled
 * access (the event's ip) and ips[1..depth-1] the return addresses of its
 * callers, innermost first, as far as the unwinder or the PMU's callchain
 * went (at most PES_ALLOC_MAX_DEPTH). PES_STACK_NONE (and 0, what a
 * zero-initialized event holds; no entry has id 0 or PES_STACK_NONE): none,
 * as in every event of a version-1 or -2 file. */
#define PES_STACK_NONE 0xFFFFFFFFu
static inline int pes_stack_known(uint32_t stack)
{
    return stack != PES_STACK_NONE && stack != 0;
}

/* A heap allocation site (ALLOC_SITES block): ips[0] is the return address of
 * the program's call into the allocator (frames of operator new and of the
 * runtime skipped), ips[1..depth-1] its callers. Symbolized through MAPS. */
struct pes_alloc_site {
    uint32_t id;    /* any value but PES_ALLOC_SITE_STACK */
    uint32_t kind;  /* enum pes_alloc_kind */
    uint32_t depth; /* 1 .. PES_ALLOC_MAX_DEPTH */
    const uint64_t *ips;
};

/* ---------------------------------------------------------------- tables */

enum pes_access_kind {
    PES_KIND_LOAD = 1,
    PES_KIND_STORE = 2,
    PES_KIND_RMW = 3,      /* atomicrmw: reads and writes */
    PES_KIND_CMPXCHG = 4,  /* reads, writes if it succeeds (counted as RW) */
    PES_KIND_COPY_SRC = 5, /* memcpy/memmove source range; length in extra */
    PES_KIND_COPY_DST = 6, /* memcpy/memmove destination range */
    PES_KIND_SET_DST = 7,  /* memset range */
    PES_KIND_GATHER = 8,   /* one record per active lane; lane in extra */
    PES_KIND_SCATTER = 9,
    PES_KIND_CALL = 10, /* (version 3) not an access: a call site named by PES_ID_CALL records;
                           size 0, bb = the block holding the call */
};

enum pes_site_flags {
    PES_SITE_SHARED = 1u << 0, /* through a pointer argument of an OpenMP outlined region */
    PES_SITE_VECTOR = 1u << 1, /* vector access (size = whole vector) */
    PES_SITE_MASKED = 1u << 2, /* masked load/store: recorded as whole range (documented) */
    PES_SITE_VOLATILE = 1u << 3,
    PES_SITE_ATOMIC = 1u << 4,
};

static inline int pes_kind_reads(uint8_t kind)
{
    return kind == PES_KIND_LOAD || kind == PES_KIND_RMW || kind == PES_KIND_CMPXCHG ||
           kind == PES_KIND_COPY_SRC || kind == PES_KIND_GATHER;
}
static inline int pes_kind_writes(uint8_t kind)
{
    return kind == PES_KIND_STORE || kind == PES_KIND_RMW || kind == PES_KIND_CMPXCHG ||
           kind == PES_KIND_COPY_DST || kind == PES_KIND_SET_DST || kind == PES_KIND_SCATTER;
}

/* A static memory-access site (one instruction in the IR). */
struct pes_site {
    uint32_t id;   /* global id */
    uint32_t bb;   /* global id of the basic block holding it */
    uint8_t kind;  /* enum pes_access_kind */
    uint8_t flags; /* enum pes_site_flags */
    uint16_t column;
    uint32_t size;    /* bytes per record; 0 = variable, length in record.extra */
    uint32_t line;    /* 0 = unknown (no debug info) */
    const char *file; /* "" if unknown; owned by the reader / caller */
    const char *function;
};

/* Static operation counts of one basic block (what PPT-Multicore took from Byfl). */
enum pes_op_class {
    PES_OP_INT_ADD,
    PES_OP_INT_MUL,
    PES_OP_INT_DIV,
    PES_OP_FP_ADD,
    PES_OP_FP_MUL,
    PES_OP_FP_DIV,
    PES_OP_LOAD,
    PES_OP_STORE,
    PES_OP_BRANCH,
    PES_OP_CALL,
    PES_OP_OTHER,
    PES_OP_COUNT
};

struct pes_bb {
    uint32_t id;      /* global id */
    uint32_t n_sites; /* sites in this block, call sites included */
    uint32_t ops[PES_OP_COUNT];
    uint32_t flags; /* PES_BB_PARALLEL: inside an OpenMP outlined region */
    const char *function;
    const char *label; /* IR label, e.g. "for.body" or "bb12" */
    /* What the runtime model needs beyond op counts (docs/model.md), filled by
     * the pass when flags has PES_BB_MODEL_FACTS (format version 4; older
     * traces: all zero and the flag clear, i.e. unknown, not none):
     *   forks     OpenMP parallel regions this block enters: 1 in the entry
     *             block of a region's outlined body (the microtask passed to
     *             __kmpc_fork_call, __kmpc_fork_teams), which each thread of
     *             the team runs once per region, else 0 (format-4 traces of
     *             earlier passes: 1 per fork call in the forking block);
     *   barriers  barrier calls in this block (__kmpc_barrier, __kmpc_cancel_barrier;
 *             also __kmpc_reduce, a blocking reduction: docs/llvm-pass.md);
     *   instrs[c] instructions of class c: a vector instruction counts once
     *             (ops[c] counts its lanes);
     *   chain[c]  ops of class c on the longest loop-carried dependence chain
     *             that one execution of this block closes: nonzero only in a
     *             loop's latch (the block holding the back edge, executed once per
     *             iteration), so an iteration costs at least
     *             sum_c chain[c] x latency[c] cycles. */
    uint32_t forks;
    uint32_t barriers;
    uint32_t instrs[PES_OP_COUNT];
    uint32_t chain[PES_OP_COUNT];
};
#define PES_BB_PARALLEL    1u
#define PES_BB_MODEL_FACTS 2u /* forks, barriers, instrs and chain are filled */

/* One module's tables (written as a MODULE block). Ids are global. */
struct pes_module {
    uint32_t id_base; /* first id of this module's range */
    uint32_t n_sites; /* ids id_base .. id_base+n_sites-1 */
    uint32_t n_bbs;   /* ids id_base+n_sites .. +n_bbs-1 */
    const char *name; /* source file of the translation unit */
    const struct pes_site *sites;
    const struct pes_bb *bbs;
};

/* ---------------------------------------------------------------- header */

enum pes_trace_kind { PES_TRACE_FULL = 1, PES_TRACE_SAMPLED = 2 };

struct pes_cache_level {
    uint8_t level; /* 1, 2, 3 */
    uint8_t type;  /* 'D' data, 'I' instruction, 'U' unified */
    uint16_t ways;
    uint32_t line_size;
    uint64_t size;      /* bytes */
    uint32_t shared_by; /* number of logical CPUs sharing one instance */
};

#define PES_MAX_CACHE_LEVELS 8
struct pes_trace_info {
    uint32_t version;    /* PES_TRACE_VERSION when read */
    uint32_t kind;       /* enum pes_trace_kind */
    const char *command; /* command line, arguments separated by spaces (quoted if needed) */
    const char *hostname;
    const char *cpu_model; /* /proc/cpuinfo "model name" */
    uint32_t n_cpus;
    uint32_t n_sockets;
    uint32_t n_cache_levels;
    struct pes_cache_level caches[PES_MAX_CACHE_LEVELS];
    uint64_t ticks_per_second; /* timestamp unit (TSC or ns clock), 0 if unknown */
    uint64_t start_ticks;
    uint64_t pid;
    const char *config; /* collector settings, "key=value" lines (backend, periods, ...) */
};

/* ---------------------------------------------------------------- threads */

struct pes_thread {
    uint32_t index;  /* dense 0..n-1 in order of first appearance */
    uint32_t parent; /* index of creating thread, UINT32_MAX if unknown/main */
    uint64_t tid;    /* kernel tid */
    int32_t cpu;     /* CPU at thread start, -1 unknown */
    int32_t socket;  /* -1 unknown */
    uint64_t start_ticks;
};

/* ---------------------------------------------------------------- full-trace records */

/*
 * One record of a full trace: exactly what instrumented code writes inline.
 *   id < n_sites-of-module range   : a memory access at a site, addr = data address,
 *                                    extra = length (variable-size sites) or lane
 *   id in a module's BB range      : basic-block entry, addr = 0
 *   id >= PES_ID_CONTROL_FIRST     : enum pes_control_id
 */
struct pes_record {
    uint64_t addr;
    uint32_t id;
    uint32_t extra;
};

/* How many of a group's R records fall on position j (0 .. m-1), the group
 * starting at position phase. */
uint64_t pes_trace_loop_times(uint64_t R, uint32_t m, uint32_t phase, uint32_t j);
/* The stored records of a group whose LOOP record is g[0], as readers and
 * encoders have checked it: 1 + 2m + its irregular records. */
size_t pes_trace_loop_size(const struct pes_record *g);

/* ---------------------------------------------------------------- sampled events */

enum pes_event_kind {
    PES_EV_SAMPLE = 1,        /* a sampled access (use) */
    PES_EV_REUSE = 2,         /* the watched address was reused: distance = time distance */
    PES_EV_INVALIDATION = 3,  /* another thread wrote it before reuse */
    PES_EV_COMM = 4,          /* communication (ComDetective): flags say true/false sharing */
    PES_EV_LOST = 5,          /* aux = number of lost samples/records (kernel or buffer) */
    PES_EV_THROTTLE = 6,      /* PMU throttled; aux = count */
    PES_EV_DROPPED = 7,       /* non-memory / invalid samples dropped; aux = count */
    PES_EV_TOTALS = 8,        /* final per-thread counts: loads, stores */
    PES_EV_WATCH_EXPIRED = 9, /* watchpoint replaced before it fired */
    PES_EV_ALLOC = 10,        /* heap block (or thread stack) allocated: addr = first byte,
                                 aux = size, site = allocation-site id or PES_ALLOC_SITE_STACK */
    PES_EV_FREE = 11,         /* heap block freed: addr = first byte, site = UINT32_MAX */
    PES_EV_PERIOD = 12,       /* --samples: the thread's sampling period from `time` on:
                                 aux = load period, distance = store period, size = level,
                                 addr = the schedule's counter (decided outcomes or samples) */
};

enum pes_event_flags {
    PES_EVF_WRITE = 1u << 0,        /* the sampled (or trapping) access was a write */
    PES_EVF_TRAP_WRITE = 1u << 1,   /* the trapping access was a write */
    PES_EVF_SPATIAL = 1u << 2,      /* reuse of the same cache line, not the same address */
    PES_EVF_SHARED_CACHE = 1u << 3, /* shared-cache (socket) mode */
    PES_EVF_TRUE_SHARING = 1u << 4,
    PES_EVF_FALSE_SHARING = 1u << 5,
    PES_EVF_HEAP_BLOCK = 1u << 6, /* sample in a heap block: other_thread = its allocation site,
                                       aux = its size, distance = the offset of addr in it */
};

struct pes_event {
    uint8_t kind;          /* enum pes_event_kind */
    uint8_t flags;         /* enum pes_event_flags */
    uint16_t size;         /* access size in bytes */
    uint32_t thread;       /* thread index that took the sample / owns the event */
    uint32_t other_thread; /* thread whose access trapped (reuse/inval/comm), else UINT32_MAX */
    uint32_t site;         /* site id, UINT32_MAX if from uninstrumented code (use ip) */
    uint64_t addr;
    uint64_t ip;
    uint64_t time;     /* ticks */
    uint64_t loads;    /* the thread's load count at the event */
    uint64_t stores;   /* the thread's store count at the event */
    uint64_t distance; /* reuse: time distance in accesses; else 0 */
    uint64_t aux;      /* kind-specific (counts for LOST/DROPPED/THROTTLE) */
    uint32_t stack;    /* (version 3) the call stack of a sample, above; PES_STACK_NONE */
};

/* Executable mapping of the profiled process (for IP symbolization). */
struct pes_mapping {
    uint64_t start, end, file_offset;
    const char *path;
};

/* Per-thread totals in the footer. */
struct pes_thread_totals {
    uint32_t thread;
    uint64_t records; /* full: records written; sampled: events */
    uint64_t loads, stores;
    uint64_t samples, lost;
    uint64_t end_ticks;
};

/* ---------------------------------------------------------------- writer */

struct pes_trace_writer;

struct pes_writer_options {
    int zstd_level; /* 0 = default (1: fast, the runtime's hot choice) */
};

/* Creates PATH (fails if it exists unless `overwrite`), writes the HEADER block. */
struct pes_trace_writer *pes_trace_writer_open(const char *path, int overwrite,
                                               const struct pes_trace_info *info,
                                               const struct pes_writer_options *opt,
                                               struct pes_error *err);
int pes_trace_writer_module(struct pes_trace_writer *w, const struct pes_module *m,
                            struct pes_error *err);
int pes_trace_writer_thread(struct pes_trace_writer *w, const struct pes_thread *t,
                            struct pes_error *err);
/* Encodes n records of one thread into one ACCESS block (one zstd frame), or
 * several of at most 2^20 records; loop descriptor groups as for
 * pes_trace_encoder_records. */
int pes_trace_writer_records(struct pes_trace_writer *w, uint32_t thread,
                             const struct pes_record *recs, size_t n, struct pes_error *err);
/* Writes n sampled events of one thread as one EVENTS block. */
int pes_trace_writer_events(struct pes_trace_writer *w, uint32_t thread, const struct pes_event *ev,
                            size_t n, struct pes_error *err);
int pes_trace_writer_mappings(struct pes_trace_writer *w, const struct pes_mapping *m, size_t n,
                              struct pes_error *err);
/* Writes n allocation sites as one ALLOC_SITES block (thread 0). Each site's
 * id must come in such a block before any record or event naming it. */
int pes_trace_writer_alloc_sites(struct pes_trace_writer *w, const struct pes_alloc_site *s,
                                 size_t n, struct pes_error *err);
/* Writes the FOOTER (if totals != NULL), flushes and closes. Always frees w. */
int pes_trace_writer_close(struct pes_trace_writer *w, const struct pes_thread_totals *totals,
                           size_t n_totals, uint64_t end_ticks, struct pes_error *err);
/* Bytes written so far (compressed). */
uint64_t pes_trace_writer_bytes(const struct pes_trace_writer *w);

/* Appends blocks made by a pes_trace_encoder (the bytes of one or more
 * pes_trace_encoder_output results, concatenated), exactly as given. Only whole
 * blocks are accepted, and no HEADER or FOOTER (open and close write those):
 * otherwise PES_ERR_ARG and nothing is written. The byte count, and the
 * failure state after a short write (later calls fail with PES_ERR_IO), are
 * those of the other writer calls. */
int pes_trace_writer_append(struct pes_trace_writer *w, const void *bytes, size_t size,
                            struct pes_error *err);

/* ---------------------------------------------------------------- encoder */

/*
 * An encoder makes the bytes of blocks without writing them: for each block
 * its skippable index frame, then its data frame, exactly what the writer_*
 * call with the same arguments appends. It owns a zstd context and the codec
 * scratch, so threads that each have one can compress blocks concurrently.
 *
 * The bytes depend only on the call's arguments and the zstd level, never on
 * what the encoder encoded before (the codecs' predictors restart at every
 * block, docs/trace-format.md §3): any encoder with the same level gives the
 * same bytes, so a file assembled in a fixed order from blocks encoded in any
 * order, by any encoders, is byte-identical to one written by a single writer.
 *
 * Each call replaces the output; it stays valid until the next call on the
 * encoder or pes_trace_encoder_free. On error the output is empty.
 */
struct pes_trace_encoder;

/* opt->zstd_level as for pes_trace_writer_open (NULL or 0: level 1). */
struct pes_trace_encoder *pes_trace_encoder_new(const struct pes_writer_options *opt,
                                                struct pes_error *err);
void pes_trace_encoder_free(struct pes_trace_encoder *e);
/* Same checks and splitting as the pes_trace_writer_* call of the same name:
 * more than 2^20 records or events make several blocks, one after the other.
 * Records may hold loop descriptor groups (PES_ID_LOOP, above): each must be
 * whole, with 1 <= m <= PES_LOOP_MAX_RECORDS, phase < m, R >= 1, templates
 * that are not control ids, m LOOP_STEP records with extra 0 or
 * PES_LOOP_STEP_IRREGULAR (then step and template address 0) and the group's
 * irregular records (their templates' ids and extras), else
 * PES_ERR_ARG naming the record. A block holds at most 2^20 expanded and
 * 2^20 stored records and is never cut inside a group, so a group of more
 * than 2^20 records is PES_ERR_ARG too; a block's count is its expanded
 * records. */
int pes_trace_encoder_module(struct pes_trace_encoder *e, const struct pes_module *m,
                             struct pes_error *err);
int pes_trace_encoder_thread(struct pes_trace_encoder *e, const struct pes_thread *t,
                             struct pes_error *err);
int pes_trace_encoder_records(struct pes_trace_encoder *e, uint32_t thread,
                              const struct pes_record *recs, size_t n, struct pes_error *err);
int pes_trace_encoder_events(struct pes_trace_encoder *e, uint32_t thread,
                             const struct pes_event *ev, size_t n, struct pes_error *err);
int pes_trace_encoder_mappings(struct pes_trace_encoder *e, const struct pes_mapping *m, size_t n,
                               struct pes_error *err);
/* One ALLOC_SITES block; PES_ERR_ARG for a depth outside 1..8, a kind outside
 * enum pes_alloc_kind, the id PES_ALLOC_SITE_STACK (or 0 for a
 * PES_ALLOC_CALLSTACK entry) or more than 2^21 sites. */
int pes_trace_encoder_alloc_sites(struct pes_trace_encoder *enc, const struct pes_alloc_site *s,
                                  size_t n, struct pes_error *err);
/* The bytes made by the last call (*size = 0 and NULL if none). */
const void *pes_trace_encoder_output(const struct pes_trace_encoder *e, size_t *size);

/* ---------------------------------------------------------------- reader */

struct pes_trace_reader;

enum pes_block_type {
    PES_BLOCK_HEADER = 1,
    PES_BLOCK_MODULE = 2,
    PES_BLOCK_THREAD = 3,
    PES_BLOCK_ACCESS = 4,
    PES_BLOCK_EVENTS = 5,
    PES_BLOCK_MAPS = 6,
    PES_BLOCK_FOOTER = 7,
    PES_BLOCK_ALLOC_SITES = 8, /* compatible extension of version 1 (docs/trace-format.md) */
};

/* One decoded block. Pointers stay valid until the next call on the reader. */
struct pes_block {
    uint32_t type;                          /* enum pes_block_type */
    uint32_t thread;                        /* ACCESS/EVENTS: thread index */
    uint64_t file_offset;                   /* where its frame starts */
    size_t n;                               /* number of records/events/mappings/totals */
    const struct pes_record *records;       /* ACCESS */
    const struct pes_event *events;         /* EVENTS */
    const struct pes_mapping *mappings;     /* MAPS */
    const struct pes_thread *thread_info;   /* THREAD */
    const struct pes_module *module;        /* MODULE (also merged into the reader's tables) */
    const struct pes_thread_totals *totals; /* FOOTER */
    const struct pes_alloc_site
        *alloc_sites;   /* ALLOC_SITES (also merged into the reader's table) */
    uint64_t end_ticks; /* FOOTER */
    uint64_t count;     /* the block header's count: n, except for an ACCESS block read raw
                           (pes_trace_reader_set_raw), where n counts the stored records and
                           count the records they stand for */
};

/* Opens PATH and reads its HEADER. "-" is not accepted (the reader seeks). */
struct pes_trace_reader *pes_trace_reader_open(const char *path, struct pes_error *err);
/* Same, from memory (used by the fuzzer and tests); the buffer is copied. */
struct pes_trace_reader *pes_trace_reader_open_memory(const void *data, size_t size,
                                                      const char *name, struct pes_error *err);
const struct pes_trace_info *pes_trace_reader_info(const struct pes_trace_reader *r);

/* Next block. Returns 1 with *out filled, 0 at the end, -1 on error (err filled).
 * The HEADER block is consumed by _open: the first call returns the block after it.
 * A file that ends inside a frame returns 0 and sets pes_trace_reader_truncated(). */
int pes_trace_reader_next(struct pes_trace_reader *r, struct pes_block *out, struct pes_error *err);
/* After the end of _next, or after _index / _load_tables: non-zero if the file
 * was cut inside a frame (or had no footer); the message says at which offset,
 * for a warning. */
int pes_trace_reader_truncated(const struct pes_trace_reader *r, const char **message);
/* Known when _truncated is: the number of complete blocks of a type this reader
 * does not know (a newer writer's compatible extension, docs/trace-format.md §5),
 * which _next skips and _index lists. Their content is unread: worth a warning,
 * and *message (when not NULL) says so in one line naming the file ("" if none). */
uint64_t pes_trace_reader_skipped(struct pes_trace_reader *r, const char **message);

/* Block index: every block's frame is preceded by a small zstd *skippable* frame
 * (ignored by zstdcat) naming its type, thread, count and frame size, so a reader
 * can list blocks without decompressing them and decode them in any order
 * (per-thread merging, parallel replay). */
struct pes_block_ref {
    uint64_t offset; /* file offset of the block's skippable index frame */
    uint32_t type;
    uint32_t thread;
    uint32_t count;
    uint32_t frame_size; /* compressed size of the data frame that follows */
};
/* Lists all complete blocks. *refs is malloc'd; free() it. Applies the same
 * structural checks as _next (docs/trace-format.md §6: block order, nothing
 * after the FOOTER, index frame vs. block header and frame size, footer
 * record counts; decompressing only each block's header) and sets
 * pes_trace_reader_truncated() for a cut-off file, so random-access readers
 * reach the same verdict as sequential ones. */
int pes_trace_reader_index(struct pes_trace_reader *r, struct pes_block_ref **refs, size_t *n,
                           struct pes_error *err);
/* Decodes the block at ref (from pes_trace_reader_index). Same validity rules as _next;
 * for an ACCESS or EVENTS block it first loads the tables (_load_tables) if they
 * were not, since records are checked against the MODULE blocks before them. */
int pes_trace_reader_block_at(struct pes_trace_reader *r, const struct pes_block_ref *ref,
                              struct pes_block *out, struct pes_error *err);

/* raw non-zero: from now on _next and _block_at hand out the records of ACCESS
 * blocks as stored, loop descriptor groups unexpanded (pes-dump shows them);
 * 0 (the default): expanded. Groups are checked either way. */
void pes_trace_reader_set_raw(struct pes_trace_reader *r, int raw);

/* Tables merged from all MODULE blocks read so far (NULL if id unknown). */
const struct pes_site *pes_trace_reader_site(const struct pes_trace_reader *r, uint32_t id);
const struct pes_bb *pes_trace_reader_bb(const struct pes_trace_reader *r, uint32_t id);
/* The allocation site with this id from the ALLOC_SITES blocks read so far, or
 * NULL; also a sampled event's call stack (kind PES_ALLOC_CALLSTACK). */
const struct pes_alloc_site *pes_trace_reader_alloc_site(const struct pes_trace_reader *r,
                                                         uint32_t id);
/* Threads announced so far. */
size_t pes_trace_reader_thread_count(const struct pes_trace_reader *r);
const struct pes_thread *pes_trace_reader_thread(const struct pes_trace_reader *r, uint32_t index);
/* Reads ahead through the whole file once so every table is known (then rewinds):
 * the index scan's checks, then every block but the records (ACCESS blocks of a
 * full trace, EVENTS blocks of a sampled one) decoded, so their checksums and
 * payloads are verified too. */
int pes_trace_reader_load_tables(struct pes_trace_reader *r, struct pes_error *err);
void pes_trace_reader_close(struct pes_trace_reader *r);

/* ---------------------------------------------------------------- plain-text traces */

/*
 * Plain-text address trace, as PARDA and libCacheSim read: one access per line,
 * "ADDR" or "ADDR R|W" or "R|W ADDR", ADDR in hex (0x optional); '#' starts a comment.
 * Each access becomes a pes_record with id = PES_TEXT_READ_SITE or PES_TEXT_WRITE_SITE
 * in a synthetic one-thread trace.
 */
#define PES_TEXT_READ_SITE  0u
#define PES_TEXT_WRITE_SITE 1u
/* Longest line accepted, in bytes without the newline: the reader holds one
 * line of this size, whatever the input (a longer line is an error). */
#define PES_TEXT_MAX_LINE 4096u
/* Input formats (docs/trace-format.md §9). */
enum pes_text_format {
    PES_TEXT_FORMAT_AUTO = 0, /* decided from the first bytes read */
    PES_TEXT_FORMAT_ADDR,     /* one access per line (PARDA, libCacheSim) */
    PES_TEXT_FORMAT_LACKEY,   /* valgrind --tool=lackey --trace-mem=yes */
    PES_TEXT_FORMAT_BINARY64, /* little-endian 64-bit addresses, each a load */
};
const char *pes_text_format_name(enum pes_text_format format); /* "auto", "addr", ... */
int pes_text_format_parse(const char *name);                   /* the format, -1 if unknown */
struct pes_text_reader;
/* path "-" reads standard input. _open is _open_as(path, PES_TEXT_FORMAT_AUTO). */
struct pes_text_reader *pes_text_reader_open(const char *path, struct pes_error *err);
struct pes_text_reader *pes_text_reader_open_as(const char *path, enum pes_text_format format,
                                                struct pes_error *err);
/* The format read: AUTO is decided when the reader is opened. */
enum pes_text_format pes_text_reader_format(const struct pes_text_reader *t);
/* After the last read: a message if the input ended inside a record (binary64:
 * a partial last address, which is not read), else NULL. */
const char *pes_text_reader_truncation(const struct pes_text_reader *t);
/* The addr format from memory (the fuzzer, tests); the buffer is copied, name is for messages. */
struct pes_text_reader *pes_text_reader_open_memory(const void *data, size_t size, const char *name,
                                                    struct pes_error *err);
/* Reads up to max records; returns count (0 at end) or -1 on a malformed or
 * too long line (err names the line). The records of the call that reaches a
 * bad line are not returned; after -1 every call returns -1 with that error. */
long pes_text_reader_read(struct pes_text_reader *t, struct pes_record *out, size_t max,
                          struct pes_error *err);
/* Parses with n threads (1..PES_TEXT_MAX_THREADS; 1, the default, parses on
 * the calling thread). With n > 1, n workers take turns reading the next 1 MiB
 * block of the file, cut after its last newline, and parse their blocks at
 * the same time; _read hands the records out in file order, and the records
 * and the errors (line numbers included) are those of the calling-thread
 * reader. At most 2n blocks are in memory. Call it before the first _read;
 * standard input, _open_memory readers and binary64 (already faster than the
 * copy parallel blocks would add) stay on the calling thread (0 is returned). -1 (err) if n is out of range, after a read, or if
 * the threads cannot be started. The reader itself is still used by one
 * thread at a time: the workers are its own. */
#define PES_TEXT_MAX_THREADS 64u
/* Reads only the bytes [begin, end) of the file (end past the file: to its
 * end), as if they were the whole input, for readers that each take one part
 * of a file (pes-replay-mpi); begin should be a line start (binary64: a
 * multiple of 8), as pes_text_part gives. Errors still name the line of the
 * whole file: the lines before begin are counted when an error needs them.
 * Call it before the first _read and before _set_threads; not for standard
 * input or _open_memory readers. 0, or -1 (err). */
int pes_text_reader_set_range(struct pes_text_reader *t, uint64_t begin, uint64_t end,
                              struct pes_error *err);
/* Part k of n of the file at path, in the given format (not AUTO): about a
 * n-th of its bytes, cut at line starts (binary64: at addresses), so that
 * parts 0 .. n-1 in order are the file and each reads with _set_range exactly
 * the records the whole file has there. A part may be empty. 0, or -1 (err). */
int pes_text_part(const char *path, enum pes_text_format format, unsigned k, unsigned n,
                  uint64_t *begin, uint64_t *end, struct pes_error *err);
int pes_text_reader_set_threads(struct pes_text_reader *t, unsigned n, struct pes_error *err);
/* The threads parsing: 1 on the calling thread, else the workers started. */
unsigned pes_text_reader_threads(const struct pes_text_reader *t);
/* A filter on the records before they are handed out, for a consumer that
 * needs only some of them (pes-replay's SHARDS sampling keeps a fixed set of
 * lines): it runs where the records are parsed, on the parsing threads with
 * set_threads, so a dropped record is never copied or handed over. keep
 * moves the records to keep to the front of rec[0..n), in order, adds the
 * ones it drops to dropped[id] (id PES_TEXT_READ_SITE or _WRITE_SITE) and
 * returns how many it kept; it is called from several threads at once. Set
 * before set_threads and the first read (-1, err, after them); NULL removes it. */
struct pes_text_filter {
    size_t (*keep)(const void *ctx, struct pes_record *rec, size_t n, uint64_t dropped[2]);
    const void *ctx;
};
int pes_text_reader_set_filter(struct pes_text_reader *t, const struct pes_text_filter *f,
                               struct pes_error *err);
/* Adds the records the filter has dropped so far, by id, to dropped[0] and
 * dropped[1] (with parsing threads, a block's all at once, when _read
 * reaches the block). */
void pes_text_reader_dropped(const struct pes_text_reader *t, uint64_t dropped[2]);
void pes_text_reader_close(struct pes_text_reader *t);

/* ---------------------------------------------------------------- printing */

/*
 * Terminal-safe text for strings that come from a trace or an input file
 * (file names, function names, command lines, text-trace lines): copies src
 * to dst with every byte a terminal could act on written as \xHH — C0
 * controls (tab and newline too), DEL, C1 controls (U+0080..U+009F as UTF-8)
 * and bytes that are not valid UTF-8 — and a backslash as \\; other UTF-8
 * passes unchanged. Like snprintf: writes at most size bytes with the NUL and
 * returns the length of the whole result, so pes_escape_text(NULL, 0, s) + 1
 * bytes hold it (at most 4 * strlen(s) + 1). src NULL is "".
 */
size_t pes_escape_text(char *dst, size_t size, const char *src);
/* The same into a buffer of the calling thread's, for printing: one of a ring
 * of four, valid until the fourth call after this one (so up to four in one
 * printf). "(out of memory)" if it cannot be allocated. */
const char *pes_escape_text_tmp(const char *src);

/* s as a JSON string literal, quotes included: '"' and '\\' escaped, \n and
 * \t by name, other C0 controls as \u00XX; other bytes (UTF-8) as they are.
 * s NULL is "". */
void pes_json_string(FILE *out, const char *s);

/* ---------------------------------------------------------------- parsing */

/* A whole string as an unsigned number in `base` (10, or 0: C's 0x / 0
 * prefixes): it must start with a digit (no sign, no blank) and hold nothing
 * else; 0, or -1 if not (or above UINT64_MAX). The one number parser of the
 * command lines and text headers. */
int pes_parse_u64(const char *s, int base, uint64_t *out);

/* ---------------------------------------------------------------- hashing */

/* Fibonacci hashing: key times 2^64 / phi, its top `bits` bits (1..64). The
 * index function of the hand-written hot-path tables (reuse engines, MESI
 * directory, ReuseTracker truth, site and BB tables). */
static inline uint64_t pes_hash_fib(uint64_t key, unsigned bits)
{
    return (key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits);
}

/* splitmix64's output function: a bijection on 64 bits whose every output
 * bit depends on every input bit. */
static inline uint64_t pes_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The next number of the splitmix64 sequence whose state is *s. */
static inline uint64_t pes_splitmix64(uint64_t *s)
{
    return pes_mix64(*s += UINT64_C(0x9E3779B97F4A7C15));
}

/* Human-readable names (static strings). */
const char *pes_access_kind_name(uint8_t kind);
const char *pes_event_kind_name(uint8_t kind);
const char *pes_block_type_name(uint32_t type);
const char *pes_op_class_name(int op);
const char *pes_alloc_kind_name(uint32_t kind); /* "malloc", "calloc", ..., "new" */

#ifdef __cplusplus
}
#endif
#endif /* PES_TRACE_H */
