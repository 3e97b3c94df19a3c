/*
 * pes/model.h — machine descriptions and the analytical cache/runtime model.
 *
 *  - struct pes_machine: a CPU's cache hierarchy, latencies/throughputs and
 *    instruction costs; loaded from presets (model/machines/NAME.machine), from
 *    the host's calibration (pes-calibrate, model/calibrate/), read from the
 *    host's sysfs, or overridden by a cache spec "L1=32K:8,L2=256K:8". It says
 *    how far it can be trusted (enum pes_machine_validation). The cache
 *    simulator (replay) uses the same description.
 *  - SDCM hit rates (PPT-Multicore Eq. 1–3, after Brehob & Enbody) from reuse
 *    profiles; the hierarchy latency/throughput and runtime model (Eq. 4–8).
 *
 * Errors: functions return 0 / -1 and fill struct pes_error (pes/trace.h).
 */
#ifndef PES_MODEL_H
#define PES_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pes/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PES_MAX_LEVELS 4

/* A cost measured at a few thread counts (pes-calibrate), e.g. the cycles of
 * one OpenMP barrier with T threads. n == 0: not measured, and the model term
 * that needs it is off. threads[] ascending, distinct, >= 1. */
#define PES_CURVE_POINTS 16
struct pes_thread_curve {
    uint32_t n;
    uint32_t threads[PES_CURVE_POINTS];
    double value[PES_CURVE_POINTS];
};
/* The value at t threads: linear between measured points, the first point's
 * value below it, and beyond the last point the last point's value (a
 * machine's curve is measured up to its CPUs). NaN when n == 0. */
double pes_thread_curve_at(const struct pes_thread_curve *c, double t);

/* One cache level of the modelled machine. */
struct pes_cache_config {
    uint64_t size;           /* bytes */
    uint32_t ways;           /* associativity; 1 = direct-mapped; 0 = fully associative */
    uint32_t line;           /* bytes */
    uint32_t shared;         /* 0: private per core; 1: shared by the cores of a socket */
    double latency;          /* cycles for a hit at this level (delta_i, Eq. 6) */
    double recip_throughput; /* cycles per line at this level (beta_i, Eq. 7) */
    /* bytes per cycle this level delivers to T active cores together (keys
     * L<i>.bandwidth.<T>; n == 0: not measured) — where a shared level saturates */
    struct pes_thread_curve bandwidth;
};

/* Where a machine description's costs come from, i.e. how far a runtime
 * predicted with it can be trusted (docs/model.md, "Validation"). */
enum pes_machine_validation {
    PES_MACHINE_UNVALIDATED = 0, /* generic costs (the sysfs host, a file that says nothing) */
    PES_MACHINE_PRESET = 1,      /* published figures of a named CPU, not measured here */
    PES_MACHINE_CALIBRATED = 2,  /* measured on the host it describes (pes-calibrate) */
};

/* Which runtime model (docs/model.md §3):
 *  PES_RUNTIME_PPT     PPT-Multicore Eq. 4-8 as the paper writes them: every
 *                      8-byte word pays δ_avg + 7 β_avg, T = T_mem + T_CPU.
 *  PES_RUNTIME_OVERLAP an out-of-order core: loads/stores issue at their
 *                      reciprocal throughputs, each level below L1 delivers the
 *                      lines it serves at its β (cycles per line), the latency of
 *                      those fills is exposed 1/mlp of the time, the other ops
 *                      issue issue_width per cycle (and each class at its own
 *                      β), and memory and compute overlap: T = max(T_mem, T_CPU). */
enum pes_runtime_model { PES_RUNTIME_PPT = 0, PES_RUNTIME_OVERLAP = 1 };
/* "ppt" / "overlap"; NULL for an unknown value */
const char *pes_runtime_model_name(enum pes_runtime_model model);

/* What a measured comparison found of the runtime predicted with this
 * description on its host (bench/model_vs_host.py --record; docs/model.md,
 * "Validation"): |predicted - measured| / measured over `runs` measured runs,
 * for one runtime model. runs == 0: never measured. */
struct pes_machine_error_band {
    enum pes_runtime_model model;
    double mean, max;
    uint32_t runs;
};

struct pes_machine {
    char name[64];
    enum pes_machine_validation validation; /* .machine key "validation" */
    double ghz;                             /* core clock */
    uint32_t sockets;
    uint32_t cores_per_socket;
    uint32_t n_levels; /* data/unified levels, L1 first */
    struct pes_cache_config level[PES_MAX_LEVELS];
    double mem_latency;          /* cycles */
    double mem_recip_throughput; /* cycles per line from DRAM */
    /* Instruction costs for T_CPU (PPT-Multicore Eq. 8), cycles, per enum pes_op_class. */
    double op_latency[PES_OP_COUNT];
    double op_recip_throughput[PES_OP_COUNT];
    /* The overlap runtime model's core (docs/model.md): operations the core
     * issues per cycle, and L1 misses it keeps in flight at once. Optional in
     * a machine file; 0 means the default (PES_DEFAULT_ISSUE_WIDTH / _MLP). */
    double issue_width;
    double mlp;
    /* Terms beyond Eq. 4-8, each measured by pes-calibrate (docs/model.md);
     * 0 / n == 0: not measured, the term is off. Machine-file keys in brackets. */
    struct pes_thread_curve fork_join; /* cycles to enter and leave one OpenMP parallel
                                          region with an empty body [omp.fork_join.<T>] */
    struct pes_thread_curve barrier;   /* cycles of one barrier of a team of T [omp.barrier.<T>] */
    struct pes_thread_curve mem_bandwidth;      /* bytes per cycle from DRAM, T cores streaming
                                              together [mem.bandwidth.<T>] */
    struct pes_thread_curve compute_throughput; /* instructions T threads retire together, in
                                                   units of one thread's, 0 < value <= T: each
                                                   running its own compute loop
                                                   [compute.throughput.<T>] */
    uint32_t tlb_entries;    /* last-level data TLB entries of tlb_page pages [tlb.entries] */
    uint32_t tlb_page;       /* bytes [tlb.page] */
    double tlb_miss_latency; /* cycles of a page walk whose entries are cached [tlb.miss_latency] */
    double prefetch_max_stride;          /* bytes: the largest constant stride the hardware
                                   prefetchers follow [prefetch.max_stride] */
    struct pes_machine_error_band error; /* .machine keys error.model/mean/max/runs */
};
#define PES_DEFAULT_ISSUE_WIDTH 4.0
#define PES_DEFAULT_MLP         10.0
static inline double pes_machine_issue_width(const struct pes_machine *m)
{
    return m->issue_width > 0 ? m->issue_width : PES_DEFAULT_ISSUE_WIDTH;
}
static inline double pes_machine_mlp(const struct pes_machine *m)
{
    return m->mlp > 0 ? m->mlp : PES_DEFAULT_MLP;
}

/* ---------------------------------------------------------------- reuse profiles
 *
 * A histogram of reuse (LRU stack) distances: the number of distinct *lines*
 * touched between two accesses to the same line. Distances are counted in units
 * of one cache level's line size: a caller that models levels with different
 * line sizes must compute one profile per granularity.
 *
 * Distances 0 .. PES_PROFILE_EXACT-1 are counted exactly (exact[d]). Beyond,
 * log2 bins: log2[k - PES_PROFILE_LOG2_FIRST] counts D in [2^k, 2^(k+1)) for
 * k = 10 .. 47; distances >= 2^48 are clamped into the last bin (2^48 lines is
 * far beyond any memory). cold counts first accesses (infinite distance).
 * The replay engine may fill the arrays directly; the functions below are
 * conveniences.
 */
#define PES_PROFILE_EXACT      1024u
#define PES_PROFILE_LOG2_FIRST 10u
#define PES_PROFILE_LOG2_LAST  47u
#define PES_PROFILE_LOG2_BINS  (PES_PROFILE_LOG2_LAST - PES_PROFILE_LOG2_FIRST + 1u)
/* Total number of finite bins: exact ones first, then log2 bins. */
#define PES_PROFILE_BINS  (PES_PROFILE_EXACT + PES_PROFILE_LOG2_BINS)
#define PES_DISTANCE_COLD UINT64_MAX /* pes_profile_add(p, PES_DISTANCE_COLD, n) counts cold */

struct pes_reuse_profile {
    uint64_t exact[PES_PROFILE_EXACT];
    uint64_t log2[PES_PROFILE_LOG2_BINS];
    uint64_t cold;
};

void pes_profile_init(struct pes_reuse_profile *p);
/* Adds count accesses of reuse distance d (PES_DISTANCE_COLD for a first access). */
void pes_profile_add(struct pes_reuse_profile *p, uint64_t d, uint64_t count);
void pes_profile_merge(struct pes_reuse_profile *dst, const struct pes_reuse_profile *src);
/* Index (0 .. PES_PROFILE_BINS-1) of the finite bin holding distance d. */
size_t pes_profile_bin_index(uint64_t d);
/* Bin i covers distances lo .. hi-1 (hi = lo+1 for exact bins). */
void pes_profile_bin_range(size_t i, uint64_t *lo, uint64_t *hi);
uint64_t pes_profile_bin_count(const struct pes_reuse_profile *p, size_t i);
/* All accesses, cold included. */
uint64_t pes_profile_total(const struct pes_reuse_profile *p);
/* Mean finite distance; a log2 bin contributes its arithmetic midpoint (lo+hi-1)/2,
 * i.e. distances assumed uniform inside the bin. 0 if there is no finite distance. */
double pes_profile_mean(const struct pes_reuse_profile *p);

/* ---------------------------------------------------------------- SDCM hit rates
 *
 * P(hit | D) for a cache of `blocks` lines and `ways` ways (PPT-Multicore Eq. 1,
 * Brehob & Enbody's SDCM): P[Binomial(D, A/B) <= A-1]. ways == 1 is Eq. 2
 * ((B-1)/B)^D; ways == 0 means fully associative: hit iff D < B.
 * Inputs must be valid (blocks > 0, ways <= blocks); otherwise returns NaN.
 */
double pes_sdcm_hit_prob(uint64_t d, uint64_t blocks, uint32_t ways);
/* Mean of P(hit | D) over the integers D in [lo, hi) (distances uniform in a bin). */
double pes_sdcm_bin_hit_prob(uint64_t lo, uint64_t hi, uint64_t blocks, uint32_t ways);
/* PPT-Multicore Eq. 3: sum over the profile of P(D) * P(hit|D); cold accesses miss.
 * The profile must be at c->line granularity. An empty profile gives 0. */
int pes_sdcm_hit_rate(const struct pes_reuse_profile *p, const struct pes_cache_config *c,
                      double *hit_rate, struct pes_error *err);
/* Hit rate of every level of m: profile[i] is the profile for level i — a private
 * (PRD) profile for private levels, a concurrent (CRD) one for shared levels —
 * at level i's line granularity (the same pointer may serve several levels).
 * hit[i] is the *global* hit rate (fraction of all accesses that hit in level i or
 * above), as Eq. 3 gives it; made monotone (hit[i] >= hit[i-1]) as inclusive
 * LRU levels are. */
int pes_model_hit_rates(const struct pes_machine *m,
                        const struct pes_reuse_profile *const profile[], double hit[PES_MAX_LEVELS],
                        struct pes_error *err);

/* ---------------------------------------------------------------- runtime (Eq. 4–8) */

/* Eq. 6 / Eq. 7 from global hit rates (see docs/model.md: the paper's P_Li(h)
 * inside the brackets are local rates; we derive them from the global ones). */
int pes_model_averages(const struct pes_machine *m, const double hit[], double *delta_avg,
                       double *beta_avg, struct pes_error *err);

enum pes_cpu_bound { PES_CPU_THROUGHPUT = 0, PES_CPU_LATENCY = 1 };

struct pes_runtime_input {
    double hit[PES_MAX_LEVELS]; /* global hit rates per level (Eq. 3) */
    double total_mem;           /* Eq. 5 total_mem: bytes accessed by the kernel (all threads) */
    double block;               /* Eq. 5 b in bytes; 0 = 8 (a word, as the paper) */
    double ops[PES_OP_COUNT];   /* operation counts of all threads (enum pes_op_class) */
    uint32_t cores;             /* work split evenly over this many cores; 0 = 1 */
    enum pes_cpu_bound bound;   /* Eq. 8 variant (PES_RUNTIME_PPT) */
    enum pes_runtime_model model;
    /* The overlap model's terms beyond issue, fills and exposed latency
     * (docs/model.md §3). Each is on only when its fact is known here (the
     * bit in `known`) and its machine value measured; otherwise the model
     * predicts exactly as without it. */
    uint32_t known; /* PES_RUNTIME_KNOW_* */
    /* BB_FACTS: totals over the executed blocks of struct pes_bb's model facts */
    double instrs[PES_OP_COUNT]; /* instructions of all threads (a vector one once) */
    double chain[PES_OP_COUNT];  /* executions x chain[c]: ops on loop-carried chains */
    double forks;                /* parallel regions entered */
    double barriers;             /* barrier episodes (a team's barrier once, not per thread) */
    /* TLB: accesses of all threads whose private reuse distance in tlb_page
     * pages is >= tlb_entries, or cold (fully associative LRU TLB) */
    double tlb_misses;
    /* PREFETCH: the share (0..1) of the accesses served below L1 made by sites
     * whose stride is constant and at most prefetch_max_stride bytes */
    double prefetched;
};
#define PES_RUNTIME_KNOW_BB_FACTS 1u
#define PES_RUNTIME_KNOW_TLB      2u
#define PES_RUNTIME_KNOW_PREFETCH 4u

/* The overlap model's terms, per core, in cycles (docs/model.md §3):
 *  T_CPU = max(compute, chain), T_mem = max(issue, fill, bandwidth) + exposed + tlb,
 *  total = max(T_mem, T_CPU) + parallel. PES_RUNTIME_PPT: compute = Eq. 8,
 *  fill = Eq. 5, the others 0. */
enum pes_runtime_term {
    PES_TERM_COMPUTE = 0, /* instructions at issue_width per cycle and each class's port */
    PES_TERM_CHAIN,       /* loop-carried dependence chains at their ops' latencies */
    PES_TERM_ISSUE,       /* loads and stores at their ports */
    PES_TERM_FILL,        /* lines each level below L1 delivers at its beta */
    PES_TERM_BANDWIDTH,   /* bytes from DRAM / a level over its bandwidth for T cores */
    PES_TERM_EXPOSED,     /* fill latencies not hidden by mlp or the prefetchers */
    PES_TERM_TLB,         /* page walks, exposed like fills */
    PES_TERM_PARALLEL,    /* fork/join and barriers of the OpenMP runtime */
    PES_TERM_COUNT
};
/* "compute", "chain", ... (the JSON keys); NULL for an unknown term */
const char *pes_runtime_term_name(enum pes_runtime_term t);

struct pes_runtime {
    double delta_avg, beta_avg;                  /* cycles, Eq. 6 and Eq. 7 */
    double mem_cycles, cpu_cycles, total_cycles; /* per core: Eq. 5, Eq. 8, Eq. 4 (ppt);
                                                      T_mem, T_CPU, max + parallel (overlap) */
    double mem_seconds, cpu_seconds, total_seconds;
    double term[PES_TERM_COUNT];  /* per core, cycles */
    enum pes_runtime_term bounds; /* the largest term: what the total mostly is */
};

int pes_model_runtime(const struct pes_machine *m, const struct pes_runtime_input *in,
                      struct pes_runtime *out, struct pes_error *err);

/* ---------------------------------------------------------------- machines */

/* Loads a machine: "host" is this host's calibration if pes-calibrate wrote
 * one (pes_machine_host_calibration_path), else "sysfs"; "sysfs" reads the
 * running CPU's caches from sysfs with generic costs (unvalidated); a bare name
 * ("broadwell") reads NAME.machine from $PES_MACHINES_DIR or else the source
 * tree's model/machines; anything with a '/' or ending in ".machine" is a path. */
int pes_machine_load(const char *name_or_path, struct pes_machine *m, struct pes_error *err);
/* The file pes-calibrate writes for this host and "host" reads:
 * $XDG_CACHE_HOME/pes/HOSTNAME-HASH.machine ($HOME/.cache when XDG_CACHE_HOME
 * is unset or empty), HASH = 8 hex digits of FNV-1a over the CPU's vendor,
 * family, model, stepping and model name (/proc/cpuinfo) and the number of
 * online CPUs, so that a resized VM or a new CPU under the same host name is
 * calibrated again. Fails (PES_ERR_ARG) when neither variable is set. */
int pes_machine_host_calibration_path(char *buf, size_t len, struct pes_error *err);
/* "unvalidated", "preset" or "calibrated" (the .machine and JSON spelling). */
const char *pes_machine_validation_name(enum pes_machine_validation v);
/* Parses the text of a .machine file; source names it in error messages. */
int pes_machine_parse(const char *text, const char *source, struct pes_machine *m,
                      struct pes_error *err);
/* Writes the preset names, comma-separated, into buf (for messages). Returns the count. */
int pes_machine_list_presets(char *buf, size_t len);
/* Cache geometry from sysfs: root is the directory holding cpu0/, cpu1/, ...
 * (NULL = /sys/devices/system/cpu). Latencies and instruction costs are generic
 * defaults (docs/model.md). */
int pes_machine_from_sysfs(const char *root, struct pes_machine *m, struct pes_error *err);
/* Overrides cache levels: "L1=32K:8,L2=256K:8,L3=20M:20:64:shared" —
 * Ln=SIZE[K|M|G]:WAYS[:LINE][:shared|:private]; WAYS 0 or "full" = fully
 * associative. A level one past the last adds a level (generic latencies). */
int pes_machine_apply_cache_spec(struct pes_machine *m, const char *spec, struct pes_error *err);
/* Checks geometry and costs: sizes, power-of-two lines, ways dividing blocks, ... */
int pes_machine_validate(const struct pes_machine *m, struct pes_error *err);
/* Prints m as text in the .machine format (loadable again). */
void pes_machine_print(const struct pes_machine *m, FILE *out);
/* Key name of an op class in .machine files ("int_add", ...). */
const char *pes_machine_op_key(int op);

#ifdef __cplusplus
}
#endif
#endif /* PES_MODEL_H */
