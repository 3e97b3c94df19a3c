/* Hierarchy averages and runtime prediction: PPT-Multicore Eq. 4–8, and the
 * overlap model (docs/model.md §3). */
#include <math.h>

#include "internal.h"

static int bad_rate(double h)
{
    return !(h >= 0.0 && h <= 1.0); /* also rejects NaN */
}

int pes_model_averages(const struct pes_machine *m, const double hit[], double *delta_avg,
                       double *beta_avg, struct pes_error *err)
{
    if (!m || !hit || !delta_avg || !beta_avg)
        return pes_model_fail(err, PES_ERR_ARG, "pes_model_averages: NULL argument");
    if (m->n_levels < 1 || m->n_levels > PES_MAX_LEVELS)
        return pes_model_fail(err, PES_ERR_ARG, "machine: %u cache levels", m->n_levels);
    double local[PES_MAX_LEVELS];
    double prev = 0.0;
    for (unsigned i = 0; i < m->n_levels; i++) {
        if (bad_rate(hit[i]))
            return pes_model_fail(err, PES_ERR_ARG, "hit rate of L%u is %g, not in [0,1]", i + 1,
                                  hit[i]);
        double g = hit[i] > prev ? hit[i] : prev; /* global rates are monotone */
        /* Eq. 6 nests P_Li(h) inside (1 - P_L(i-1)(h)): a rate among the accesses
         * that missed above, i.e. local = (g_i - g_{i-1}) / (1 - g_{i-1}). */
        local[i] = prev < 1.0 ? (g - prev) / (1.0 - prev) : 0.0;
        prev = g;
    }
    double d = m->mem_latency, b = m->mem_recip_throughput;
    for (unsigned i = m->n_levels; i-- > 0;) {
        d = local[i] * m->level[i].latency + (1.0 - local[i]) * d;          /* Eq. 6 */
        b = local[i] * m->level[i].recip_throughput + (1.0 - local[i]) * b; /* Eq. 7 */
    }
    *delta_avg = d;
    *beta_avg = b;
    return 0;
}

/* Eq. 8 for one op class of n operations on one core. */
static double cpu_cycles(double n, double lat, double rthr, enum pes_cpu_bound bound)
{
    if (n <= 0)
        return 0;
    if (bound == PES_CPU_LATENCY)
        return n * lat; /* a dependent chain: every op waits */
    if (n < 1)          /* a fraction of one op per core */
        return n * lat;
    return lat + (n - 1) * rthr; /* first result after lat, then pipelined */
}

const char *pes_runtime_model_name(enum pes_runtime_model model)
{
    switch (model) {
    case PES_RUNTIME_PPT:
        return "ppt";
    case PES_RUNTIME_OVERLAP:
        return "overlap";
    }
    return NULL;
}

const char *pes_runtime_term_name(enum pes_runtime_term t)
{
    static const char *const names[PES_TERM_COUNT] = {"compute",   "chain",   "issue", "fill",
                                                      "bandwidth", "exposed", "tlb",   "parallel"};
    return (unsigned)t < PES_TERM_COUNT ? names[t] : NULL;
}

/* A curve's value at t threads if measured and positive, else 0 (term off). */
static double curve_or_0(const struct pes_thread_curve *c, double t)
{
    if (!c->n)
        return 0;
    double v = pes_thread_curve_at(c, t);
    return v > 0 && isfinite(v) ? v : 0;
}

/* How many threads' worth of instructions `cores` threads retire together:
 * the calibrated compute.throughput curve (a vCPU that shares a core, or
 * waits for one, is not a core), else the cores themselves. */
static double compute_lanes(const struct pes_machine *m, double cores)
{
    double v = curve_or_0(&m->compute_throughput, cores);
    return v > 0 ? v : cores;
}

/* Per-core cycles of the overlap model's terms (docs/model.md §3, "overlap"). */
static void overlap_terms(const struct pes_machine *m, const struct pes_runtime_input *in,
                          double cores, double term[PES_TERM_COUNT])
{
    int facts = (in->known & PES_RUNTIME_KNOW_BB_FACTS) != 0;
    /* a vector instruction takes one issue slot and one port cycle, whatever
     * its lanes: with the pass's facts count instructions, else ops */
    const double *issued = facts ? in->instrs : in->ops;
    double loads = in->ops[PES_OP_LOAD] / cores, stores = in->ops[PES_OP_STORE] / cores;
    /* instructions are split over what the threads retire together */
    double lanes = compute_lanes(m, cores);
    /* issue: loads and stores go through their own ports */
    term[PES_TERM_ISSUE] =
        fmax(issued[PES_OP_LOAD] / lanes * m->op_recip_throughput[PES_OP_LOAD],
             issued[PES_OP_STORE] / lanes * m->op_recip_throughput[PES_OP_STORE]);
    /* the prefetchers fetch a regular stream's lines ahead of its accesses:
     * their latency is hidden, their delivery (fill, bandwidth) is not */
    double ahead = 0;
    if ((in->known & PES_RUNTIME_KNOW_PREFETCH) && m->prefetch_max_stride > 0)
        ahead = in->prefetched;
    /* the accesses each level below L1 serves: one line each, delivered at
     * that level's rate; the levels deliver concurrently (the slowest bounds)
     * and a fill waits for its latency only when mlp others are not in flight.
     * All cores together draw bytes from a level at most at its measured
     * bandwidth for that many cores (where a shared level or DRAM saturates). */
    double n = loads + stores, prev = in->hit[0], fill = 0, exposed = 0, bw = 0;
    for (unsigned i = 1; i <= m->n_levels; i++) { /* level i (index), then memory */
        int mem_level = i == m->n_levels;
        double g = mem_level ? 1.0 : fmax(in->hit[i], prev); /* global rates are monotone */
        double served = n * (g - prev);
        double beta = mem_level ? m->mem_recip_throughput : m->level[i].recip_throughput;
        double delta = mem_level ? m->mem_latency : m->level[i].latency;
        fill = fmax(fill, served * beta);
        exposed += served * delta * (1.0 - ahead);
        double rate = curve_or_0(mem_level ? &m->mem_bandwidth : &m->level[i].bandwidth, cores);
        double line = m->level[mem_level ? m->n_levels - 1 : i].line;
        if (rate > 0) /* served is per core: the cores' bytes together, over the shared rate */
            bw = fmax(bw, served * cores * line / rate);
        prev = g;
    }
    term[PES_TERM_FILL] = fill;
    term[PES_TERM_BANDWIDTH] = bw;
    term[PES_TERM_EXPOSED] = exposed / pes_machine_mlp(m);
    /* a page walk precedes its access's fill and overlaps other misses as
     * the fills do: exposed 1/mlp of the time like them */
    if ((in->known & PES_RUNTIME_KNOW_TLB) && m->tlb_entries && m->tlb_miss_latency > 0)
        term[PES_TERM_TLB] = in->tlb_misses / cores * m->tlb_miss_latency / pes_machine_mlp(m);
    /* compute: issue_width instructions per cycle, each class at most 1/beta */
    double all = 0, port = 0, chain = 0;
    for (int c = 0; c < PES_OP_COUNT; c++) {
        all += issued[c] / lanes;
        if (c != PES_OP_LOAD && c != PES_OP_STORE)
            port = fmax(port, issued[c] / lanes * m->op_recip_throughput[c]);
        /* an iteration's chain waits for each op's result in turn; the
         * iterations (a loop's work) are split over the threads (lanes) */
        if (facts)
            chain += in->chain[c] * m->op_latency[c];
    }
    term[PES_TERM_COMPUTE] = fmax(all / pes_machine_issue_width(m), port);
    term[PES_TERM_CHAIN] = chain / lanes;
    /* every core waits out each region's fork/join and each barrier */
    if (facts)
        term[PES_TERM_PARALLEL] = in->forks * curve_or_0(&m->fork_join, cores) +
                                  in->barriers * curve_or_0(&m->barrier, cores);
}

int pes_model_runtime(const struct pes_machine *m, const struct pes_runtime_input *in,
                      struct pes_runtime *out, struct pes_error *err)
{
    if (!m || !in || !out)
        return pes_model_fail(err, PES_ERR_ARG, "pes_model_runtime: NULL argument");
    if (pes_machine_validate(m, err))
        return -1;
    double cores = in->cores ? (double)in->cores : 1.0;
    double block = in->block != 0 ? in->block : 8.0;
    if (!(block >= 1.0) || !isfinite(block))
        return pes_model_fail(err, PES_ERR_ARG, "runtime: block size %g < 1 byte", in->block);
    if (!(in->total_mem >= 0.0) || !isfinite(in->total_mem))
        return pes_model_fail(err, PES_ERR_ARG, "runtime: total memory %g bytes", in->total_mem);
    if (in->bound != PES_CPU_THROUGHPUT && in->bound != PES_CPU_LATENCY)
        return pes_model_fail(err, PES_ERR_ARG, "runtime: unknown bound %d", (int)in->bound);
    if (!pes_runtime_model_name(in->model))
        return pes_model_fail(err, PES_ERR_ARG, "runtime: unknown model %d", (int)in->model);
    struct pes_runtime r = {0};
    if (pes_model_averages(m, in->hit, &r.delta_avg, &r.beta_avg, err))
        return -1;
    for (int c = 0; c < PES_OP_COUNT; c++)
        if (!(in->ops[c] >= 0.0) || !isfinite(in->ops[c]))
            return pes_model_fail(err, PES_ERR_ARG, "runtime: op count %g for %s", in->ops[c],
                                  pes_machine_op_key(c));
    /* the optional facts: counts are finite and >= 0, the share in [0, 1] */
    if (in->known & ~(PES_RUNTIME_KNOW_BB_FACTS | PES_RUNTIME_KNOW_TLB | PES_RUNTIME_KNOW_PREFETCH))
        return pes_model_fail(err, PES_ERR_ARG, "runtime: unknown facts 0x%x", in->known);
    int bad = 0;
    if (in->known & PES_RUNTIME_KNOW_BB_FACTS) {
        for (int c = 0; c < PES_OP_COUNT; c++)
            bad |= !(in->instrs[c] >= 0.0 && isfinite(in->instrs[c])) ||
                   !(in->chain[c] >= 0.0 && isfinite(in->chain[c]));
        bad |= !(in->forks >= 0.0 && isfinite(in->forks)) ||
               !(in->barriers >= 0.0 && isfinite(in->barriers));
    }
    if (in->known & PES_RUNTIME_KNOW_TLB)
        bad |= !(in->tlb_misses >= 0.0 && isfinite(in->tlb_misses));
    if (in->known & PES_RUNTIME_KNOW_PREFETCH)
        bad |= !(in->prefetched >= 0.0 && in->prefetched <= 1.0);
    if (bad)
        return pes_model_fail(err, PES_ERR_ARG,
                              "runtime: a block fact, TLB miss count or prefetched share is "
                              "negative, not finite or (a share) above 1");
    if (in->model == PES_RUNTIME_OVERLAP) {
        double *t = r.term;
        overlap_terms(m, in, cores, t);
        r.mem_cycles = fmax(fmax(t[PES_TERM_ISSUE], t[PES_TERM_FILL]), t[PES_TERM_BANDWIDTH]) +
                       t[PES_TERM_EXPOSED] + t[PES_TERM_TLB];
        r.cpu_cycles = fmax(t[PES_TERM_COMPUTE], t[PES_TERM_CHAIN]);
        r.total_cycles = fmax(r.mem_cycles, r.cpu_cycles) + t[PES_TERM_PARALLEL];
    } else {
        /* Eq. 5: each block of b bytes pays one latency and b-1 reciprocal
         * throughputs; the memory traffic is split evenly over the cores like
         * the operations. */
        double mem = in->total_mem / cores;
        r.mem_cycles = (r.delta_avg + (block - 1.0) * r.beta_avg) / block * mem;
        for (int c = 0; c < PES_OP_COUNT; c++) {
            if (c == PES_OP_LOAD || c == PES_OP_STORE)
                continue; /* memory time is Eq. 5's */
            r.cpu_cycles += cpu_cycles(in->ops[c] / cores, m->op_latency[c],
                                       m->op_recip_throughput[c], in->bound); /* Eq. 8 */
        }
        r.total_cycles = r.mem_cycles + r.cpu_cycles; /* Eq. 4 */
        r.term[PES_TERM_COMPUTE] = r.cpu_cycles;
        r.term[PES_TERM_FILL] = r.mem_cycles;
    }
    for (int k = 1; k < PES_TERM_COUNT; k++)
        if (r.term[k] > r.term[r.bounds])
            r.bounds = (enum pes_runtime_term)k;
    double hz = m->ghz * 1e9;
    r.mem_seconds = r.mem_cycles / hz;
    r.cpu_seconds = r.cpu_cycles / hz;
    r.total_seconds = r.total_cycles / hz;
    *out = r;
    return 0;
}
