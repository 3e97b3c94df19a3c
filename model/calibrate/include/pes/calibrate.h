/*
 * pes/calibrate.h — measuring this host for the runtime model (pes-calibrate).
 *
 * What PPT-Multicore's Eq. 4–8 need of a machine, found on the machine itself:
 *  - topology: cache geometry and sharing from hwloc (this machine, or an hwloc
 *    XML file), with checks that flag values no real CPU has (a VM reporting
 *    its host's whole L3 as shared by its two vCPUs);
 *  - analysis: level latencies and capacities from a latency-vs-working-set
 *    curve, robust statistics of repeats — pure functions, tested on synthetic
 *    curves whose answer is known;
 *  - probes: the measurements themselves (pointer chasing, streaming reads,
 *    dependent and independent instruction chains, the core clock) — timed,
 *    so never asserted on in tests;
 *  - writing the result as a .machine file (pes/model.h reads it) whose
 *    comments name the method, date and spread of every figure.
 * Measurement is split from analysis so that the analysis can be checked
 * without a clock. Errors: functions return 0 / -1 and fill struct pes_error.
 * docs/model.md, "Calibration", explains what is measured and why.
 */
#ifndef PES_CALIBRATE_H
#define PES_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pes/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- topology (hwloc) */

#define PES_CALIB_MAX_WARNINGS 8

/* One data or unified cache level above the PU the measurements run on. */
struct pes_calib_cache {
    uint32_t level;  /* 1 = L1 */
    uint64_t size;   /* bytes, as hwloc reports it */
    uint32_t ways;   /* 0 = fully associative (hwloc -1); unknown ways are flagged */
    uint32_t line;   /* bytes */
    uint32_t pus;    /* hardware threads sharing one instance */
    uint32_t cores;  /* cores sharing one instance */
    int implausible; /* a warning names why; the measured capacity should replace size */
};

struct pes_calib_topology {
    char cpu_model[128]; /* hwloc's CPUModel of the first package ("" if none) */
    char hostname[64];   /* hwloc's HostName ("" if none) */
    uint32_t packages;   /* with an allowed PU (hwloc honours cgroup cpusets) */
    uint32_t cores;      /* allowed cores in the machine */
    uint32_t pus;        /* allowed PUs in the machine */
    uint32_t smt;        /* PUs per core of the first core */
    uint32_t cores_per_package;
    uint32_t n_levels;
    struct pes_calib_cache level[PES_MAX_LEVELS];
    uint32_t n_warnings;
    char warning[PES_CALIB_MAX_WARNINGS][192];
};

/* Reads the topology of this machine (xml_path NULL) or of an hwloc XML export
 * (lstopo FILE.xml): the data/unified caches above the first allowed PU,
 * levels 1..n. Values no CPU has are kept and flagged (warning[], and
 * level[].implausible): an L1 outside 4 KiB..256 KiB, a level not larger than
 * the one above, more than 32 MiB of a cache per core sharing it, unknown
 * associativity, a line that is not a power of two between 16 and 1024. */
int pes_calib_topology_load(const char *xml_path, struct pes_calib_topology *t,
                            struct pes_error *err);
/* Prints what hwloc says, one cache per line, and the warnings. */
void pes_calib_topology_print(const struct pes_calib_topology *t, FILE *out);

/* ---------------------------------------------------------------- analysis */

/* Robust statistics of n >= 1 repeats (v is reordered). */
double pes_calib_median(double *v, size_t n);
double pes_calib_min(const double *v, size_t n);
/* (max - min) / median of n values in percent: the spread of repeats. */
double pes_calib_spread(const double *v, size_t n);

/* One point of a latency curve: cycles per access of a pointer chase over a
 * working set of `size` bytes. */
struct pes_calib_point {
    double size;
    double cycles;
};

/* A run of points at the same latency (within the tolerance). */
struct pes_calib_plateau {
    double cycles;      /* median of its points */
    double lo, hi;      /* working sets of its first and last point (bytes) */
    size_t first, last; /* indices of its first and last point */
};

/* Splits a curve (n points by increasing size, cycles > 0) into plateaus:
 * maximal runs of consecutive points whose latency stays within `tolerance`
 * (relative, e.g. 0.15) of the run's running median, at least two points
 * each; the points between plateaus are the transitions. Adjacent plateaus
 * within twice the tolerance of each other are merged (one level split by an
 * outlier, or drifting: cache levels differ by 2x or more). Returns their
 * number (at most max), or -1 with err for a bad curve. */
int pes_calib_plateaus(const struct pes_calib_point *pt, size_t n, double tolerance,
                       struct pes_calib_plateau *out, size_t max, struct pes_error *err);
/* The working set where the curve crosses the geometric mean of two
 * successive plateaus' latencies (log-log interpolation between the points
 * around the crossing): the capacity of the cache the lower plateau is. */
double pes_calib_boundary(const struct pes_calib_point *pt, size_t n,
                          const struct pes_calib_plateau *lower,
                          const struct pes_calib_plateau *upper);

/* Level latencies fitted to a curve, given the level sizes expected. */
struct pes_calib_fit {
    uint32_t n_levels;
    double latency[PES_MAX_LEVELS];  /* cycles of a hit in level i */
    double capacity[PES_MAX_LEVELS]; /* measured capacity (bytes; 0: no step found after it) */
    int plateau[PES_MAX_LEVELS];     /* index of the plateau used; -1: read off the curve */
    int mismatch[PES_MAX_LEVELS];    /* capacity off the expected size by more than 2x */
    double mem_latency;              /* the last plateau (working sets beyond every cache) */
    int n_plateaus;
    struct pes_calib_plateau plateaus[16];
};

/* Fits the n_levels cache levels of expected sizes size[0..] (bytes,
 * increasing) and memory to the curve. Memory is the last plateau. L1 takes
 * the plateau holding the working set size[0]/2 (the last one before it if
 * that point is in a transition); every further level the widest plateau
 * after the level above's and not beyond the one its size points at nor
 * memory (every level is a step; a transition that levels off for two
 * points is narrower than a level): a level whose capacity is smaller than
 * said (a VM's cache shared with other tenants, a wrong size) still gets its
 * own hit latency, not that of a partly-missing plateau after it. A capacity is the boundary after the
 * level's plateau; mismatch flags a level whose plateau is not the one its
 * size points at, or whose capacity is off its size by more than 2x. Fails
 * if the curve has fewer than two plateaus (no memory beyond a cache). */
int pes_calib_fit_levels(const struct pes_calib_point *pt, size_t n, const uint64_t *size,
                         uint32_t n_levels, double tolerance, struct pes_calib_fit *fit,
                         struct pes_error *err);

/* The main step of a curve (the TLB sweep: extra cycles per access over
 * n pages). The rise at a split is the median of the (up to) three points
 * after it minus that of the three before it, over the splits with at least
 * two points on each side. With hint > 0 (a size, e.g. the entries cpuid
 * reports) the step is the highest rise at a split within 2x of the hint;
 * without, the first local maximum of the rise at least a quarter as high
 * as the highest (a TLB's reach comes after a first-level TLB's smaller
 * step and before the later rise where the page walk's own entries leave
 * the caches). `at` is where the curve first crosses
 * below + frac * (above - below) near the split (log interpolation in
 * size): frac 0.5 for a midpoint, less for the knee of a curve that rises
 * gradually after it. Points by increasing size > 0 (4..256 of them);
 * cycles any finite value (a difference of two timings may be negative).
 * Fails when the curve does not rise (near the hint). */
struct pes_calib_step {
    double below, above; /* cycles: the levels before and after the step */
    double at;           /* size where the step is */
    size_t index;        /* first point after the split */
};
int pes_calib_main_step(const struct pes_calib_point *pt, size_t n, double frac, double hint,
                        struct pes_calib_step *out, struct pes_error *err);

/* Memory-level parallelism from k independent pointer chases (k[0] must be
 * 1, k increasing) taking t[i] cycles per access: t(1) / min t, the factor by
 * which overlapping misses hide the latency; *knee (if not NULL) is the
 * smallest k within 10 % of the minimum. NaN for a bad series. */
double pes_calib_mlp(const double *k, const double *t, size_t n, double *knee);

/* The largest stride the prefetchers follow: strides ascending (bytes),
 * cycles[i] per access of a streaming read at stride[i] over memory, and
 * `random` the cycles per access of independent random reads (misses
 * overlapped, nothing prefetched). A stride is followed when its cost is
 * below the geometric mean of the smallest stride's and the random cost;
 * the answer is the largest stride up to which every stride is followed.
 * 0 when the smallest stride is not followed or random reads cost less than
 * 1.5x it (no contrast to tell the two apart). */
double pes_calib_prefetch_stride(const double *stride, const double *cycles, size_t n,
                                 double random);

/* A cache size usable in a .machine file near `bytes`: a multiple of
 * ways * line (whole sets), rounded to the nearest power of two of sets. */
uint64_t pes_calib_round_size(double bytes, uint32_t ways, uint32_t line);

/* ---------------------------------------------------------------- probes (timed) */

/* How long and how often: --quick trades precision for time. */
struct pes_calib_plan {
    int quick;
    unsigned repeats;           /* per figure; the best (least disturbed) is kept */
    unsigned points_per_octave; /* of the latency curve */
    double min_ws, max_ws;      /* latency curve range, bytes */
};
void pes_calib_plan_default(struct pes_calib_plan *p, int quick, double llc_bytes);

/* One measured figure: the best of the repeats, their median and spread. */
struct pes_calib_figure {
    double value;  /* the figure (best of repeats) */
    double median; /* of the repeats (of a plateau's points: value) */
    double spread; /* percent: how much the median repeat was slower than the
                                    best (of a plateau: (max - min) / median of its points) */
    unsigned repeats;
    unsigned rounds; /* measured in this many separate turns (0: one) */
    int measured;    /* 0: a documented default was kept */
    char method[160];
};

/* Core clock in GHz: a chain of dependent 64-bit adds (1 cycle each on every
 * x86-64 core) timed with CLOCK_MONOTONIC; the fastest repeat. */
int pes_calib_measure_ghz(const struct pes_calib_plan *p, struct pes_calib_figure *f,
                          struct pes_error *err);

/* Buffers for the memory probes: one mapping of `bytes` with transparent huge
 * pages requested (so that TLB misses do not add to the cache latencies). */
struct pes_calib_buffer {
    void *base;
    size_t bytes;
    double huge_share; /* share of the buffer backed by huge pages (-1: unknown) */
};
int pes_calib_buffer_alloc(struct pes_calib_buffer *b, size_t bytes, struct pes_error *err);
void pes_calib_buffer_free(struct pes_calib_buffer *b);

/* Cycles per load of a pointer chase through a random cyclic permutation of
 * the 64-byte lines of the first ws bytes of b (prefetchers cannot follow
 * it); the best of the plan's repeats. ghz converts seconds to cycles. */
int pes_calib_measure_chase(struct pes_calib_buffer *b, double ws, double ghz,
                            const struct pes_calib_plan *p, struct pes_calib_figure *f,
                            struct pes_error *err);
/* Cycles per access of streaming reads over the first ws bytes of b: one
 * 8-byte load per `stride` bytes (8: per load, for L1; 64: per line, for the
 * levels below, as struct pes_cache_config's recip_throughput counts; no
 * other stride). */
int pes_calib_measure_stream(struct pes_calib_buffer *b, double ws, unsigned stride, double ghz,
                             const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err);
/* Latency and reciprocal throughput (cycles) of one op class (enum
 * pes_op_class) by dependent and independent instruction chains; classes
 * without a robust probe (or on a CPU without one) keep the documented
 * default from def and say so in method. */
int pes_calib_measure_op(int op, double ghz, const struct pes_calib_plan *p,
                         const struct pes_machine *def, struct pes_calib_figure *latency,
                         struct pes_calib_figure *recip, struct pes_error *err);

/* A buffer as pes_calib_buffer_alloc makes it, with huge pages requested
 * (huge) or refused (MADV_NOHUGEPAGE: the TLB probe needs 4 KiB pages). */
int pes_calib_buffer_alloc_pages(struct pes_calib_buffer *b, size_t bytes, int huge,
                                 struct pes_error *err);

/* The TLB sweep, one point: cycles per access of a pointer chase over `pages`
 * pages of b (4 KiB pages; one line per page, page p's at line p mod 64, so
 * the lines spread over the cache sets as a contiguous array's would) in a
 * random cyclic order, and of the control: the same number of lines
 * contiguous in ctl (huge pages: no TLB misses). Their difference is what
 * the TLB adds. */
int pes_calib_measure_tlb(struct pes_calib_buffer *b, struct pes_calib_buffer *ctl, size_t pages,
                          double ghz, const struct pes_calib_plan *p,
                          struct pes_calib_figure *paged, struct pes_calib_figure *control,
                          struct pes_error *err);
/* The data TLB the CPU reports (cpuid: AMD leaf 0x80000006, the L2 DTLB of
 * 4 KiB pages; Intel leaf 0x18, the last level with 4 KiB pages): entries
 * and page bytes; -1 when the CPU says nothing usable. */
int pes_calib_tlb_cpuid(uint32_t *entries, uint32_t *page);

/* k independent pointer chases (ks[0..nk): 1, 2, 4, 6, 8, 12, 16, 20 or 24) through one random
 * cyclic permutation of the lines of the first ws bytes of b, started evenly
 * spaced on it: f[i] is the cycles per access with ks[i] chases. */
int pes_calib_measure_chases(struct pes_calib_buffer *b, double ws, const unsigned *ks, size_t nk,
                             double ghz, const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err);
/* Cycles per access of a streaming read, one 8-byte load per `stride` bytes
 * (a multiple of 64, at most 64 KiB), over the first ws bytes of b, wrapping. */
int pes_calib_measure_stride(struct pes_calib_buffer *b, double ws, unsigned stride, double ghz,
                             const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err);
/* Cycles per operation of a block mixing independent integer adds, scalar
 * floating-point adds and L1 loads (4 : 2 : 2): the core's issue rate when
 * no single kind of unit limits it (x86-64; elsewhere an error). */
int pes_calib_measure_issue(double ghz, const struct pes_calib_plan *p, struct pes_calib_figure *f,
                            struct pes_error *err);

/* OpenMP (the runtime pes-calibrate is linked with; clang's libomp), each
 * after warm-up regions, teams of `threads`: cycles to enter and leave an
 * empty parallel region, and cycles of a barrier, each sample after serial
 * work as in a program, the median sample kept; cycles per iteration of a
 * compute loop each thread runs on its own (no memory), the median kept
 * (the throughput of T threads relative to one is T x cycles(1) /
 * cycles(T)); cycles per 64-byte line of the whole team streaming reads, each
 * thread its own `per_thread` bytes of b (thread t from b + t * per_thread).
 * Fail (PES_ERR_ARG) when built without OpenMP. */
int pes_calib_omp_available(void);
int pes_calib_measure_fork_join(unsigned threads, double ghz, const struct pes_calib_plan *p,
                                struct pes_calib_figure *f, struct pes_error *err);
int pes_calib_measure_barrier(unsigned threads, double ghz, const struct pes_calib_plan *p,
                              struct pes_calib_figure *f, struct pes_error *err);
int pes_calib_measure_team_compute(unsigned threads, double ghz, const struct pes_calib_plan *p,
                                   struct pes_calib_figure *f, struct pes_error *err);
int pes_calib_measure_team_stream(struct pes_calib_buffer *b, double per_thread, unsigned threads,
                                  double ghz, const struct pes_calib_plan *p,
                                  struct pes_calib_figure *f, struct pes_error *err);

/* ---------------------------------------------------------------- the .machine file */

/* A calibration: the machine and, per figure, how it was found. */
struct pes_calib_result {
    struct pes_machine machine; /* validation = PES_MACHINE_CALIBRATED */
    struct pes_calib_figure ghz;
    struct pes_calib_figure latency[PES_MAX_LEVELS], recip[PES_MAX_LEVELS];
    struct pes_calib_figure mem_latency, mem_recip;
    struct pes_calib_figure op_latency[PES_OP_COUNT], op_recip[PES_OP_COUNT];
    /* the terms beyond Eq. 4-8: figures of the machine's curves point by
     * point (threads as in the machine's curve), and the single values */
    struct pes_calib_figure fork_join[PES_CURVE_POINTS], barrier[PES_CURVE_POINTS];
    struct pes_calib_figure mem_bandwidth[PES_CURVE_POINTS];
    struct pes_calib_figure compute_throughput[PES_CURVE_POINTS];
    struct pes_calib_figure level_bandwidth[PES_MAX_LEVELS][PES_CURVE_POINTS];
    struct pes_calib_figure issue_width, mlp, tlb_entries, tlb_miss_latency, prefetch_max_stride;
    struct pes_calib_point tlb_sweep[64]; /* pages, extra cycles per access (for printing) */
    size_t n_tlb_sweep;
    char notes[1024];  /* what could not be measured, and why (comment lines) */
    char header[1024]; /* free text for the top comment (one or more lines) */
};

/* Writes r as a .machine file: comments (the header, then every figure with
 * its method, repeats and spread) and pes_machine_print's keys. */
int pes_calib_write(const struct pes_calib_result *r, FILE *out, struct pes_error *err);
/* Creates path's parent directories and checks that a file can be created
 * there: a calibration fails before measuring, not after. */
int pes_calib_prepare_path(const char *path, struct pes_error *err);
/* pes_calib_write into path through a temporary file and rename (an
 * interrupted run leaves no half file); creates the parent directory. */
int pes_calib_write_file(const struct pes_calib_result *r, const char *path, struct pes_error *err);

#ifdef __cplusplus
}
#endif
#endif /* PES_CALIBRATE_H */
