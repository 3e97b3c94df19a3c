/*
 * pes-calibrate — measures this host for the runtime model and writes a
 * .machine file, cached per host, that `pes-replay --machine host` then uses.
 * docs/model.md ("Calibration") says what is measured and why. Exit status:
 *   0  calibrated (or the cached calibration exists and --force was not given)
 *   1  a measurement or the file failed (one line: pes-calibrate: ...)
 *   2  bad command line
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include "pes/calibrate.h"
#include "pes/cli.h"

#define MIB       (1024.0 * 1024.0)
#define TOLERANCE 0.15        /* plateau: points within 15 % of its median */
#define SMALL_WS  (8.0 * MIB) /* latency curve points measured in every round */

struct opts {
    const char *output, *topology;
    int force, quick, quiet, topology_only, print_path;
    int measured_sizes; /* --sizes measured */
};

static void message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pes-calibrate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *const sizes_names[] = {"hwloc", "measured", NULL};

#define FIELD(f) offsetof(struct opts, f)
static const struct pes_cli_opt opt_rows[] = {
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .kind = PES_CLI_PATH,
     .field = FIELD(output),
     .help = "write FILE instead of the host's cache file\n($XDG_CACHE_HOME/pes/HOST-HASH.machine, "
             "see --print-path)"},
    {.name = "force",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(force),
     .help = "measure again even if the file exists"},
    {.name = "quick",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(quick),
     .help = "fewer sizes, repeats and rounds (faster, less precise)"},
    {.name = "sizes",
     .arg = "hwloc|measured",
     .kind = PES_CLI_CHOICE,
     .field = FIELD(measured_sizes),
     .names = sizes_names,
     .expected = "hwloc or measured",
     .help = "cache sizes in the file: hwloc's (default; an implausible one\n"
             "is replaced by the measured capacity) or the capacities the\n"
             "latency curve shows (a VM's share of a cache it shares with\n"
             "other tenants), rounded to whole power-of-two sets"},
    {.name = "topology",
     .arg = "FILE",
     .kind = PES_CLI_STRING,
     .field = FIELD(topology),
     .help = "read the topology from an hwloc XML export (lstopo FILE.xml)\n"
             "instead of this machine; only with --topology-only"},
    {.name = "topology-only",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(topology_only),
     .help = "print what hwloc says of the caches, and the warnings, and stop"},
    {.name = "print-path",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(print_path),
     .help = "print the host's cache file path and stop"},
    {.name = "quiet",
     .short_name = 'q',
     .kind = PES_CLI_SWITCH,
     .field = FIELD(quiet),
     .help = "print only errors and the file written"},
    {.name = "help", .short_name = 'h', .kind = PES_CLI_HELP, .help = "this text"},
    {.name = "version", .kind = PES_CLI_VERSION, .help = "print the version"},
};
#undef FIELD

static void usage_message(const char *line)
{
    message("%s", line);
}

static const struct pes_cli cli = {
    .prog = "pes-calibrate",
    .version = PES_VERSION,
    .usage_head =
        "Usage: pes-calibrate [options]\n"
        "\n"
        "Measures this host for pes's runtime model (PPT-Multicore Eq. 4-8) and writes a\n"
        ".machine file: cache geometry and sharing from hwloc, load latency per level\n"
        "(pointer chasing), streaming read throughput per level and from memory, the\n"
        "core clock (a dependent add chain), instruction latencies and throughputs\n"
        "(dependent and independent chains), and for the terms beyond Eq. 4-8 the issue\n"
        "width, memory-level parallelism, the prefetchers' stride reach, the data TLB\n"
        "(a page sweep), OpenMP fork/join and barrier costs and the bandwidth of T\n"
        "threads from memory and the shared cache. Each figure is printed with its\n"
        "method; what cannot be measured is left out, and the file says why.\n"
        "The file is cached per host; `pes-replay --machine host` uses it (and says so).\n"
        "\n",
    .usage_tail = "\n"
                  "Exit status: 0 when calibrated (or the file exists without --force), 1 when a\n"
                  "measurement or the file failed, 2 for a bad command line.\n",
    .opts = opt_rows,
    .n_opts = sizeof opt_rows / sizeof opt_rows[0],
    .help_column = 24,
    .message = usage_message,
};

static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    int first = pes_cli_parse(&cli, argc, argv, o, NULL);
    if (first == 0)
        exit(0);
    if (first < 0)
        return -1;
    if (first < argc) {
        message("%s: unexpected argument (pes-calibrate takes options only; see --help)",
                argv[first]);
        return -1;
    }
    if (o->topology && !o->topology_only) {
        message("--topology %s: only with --topology-only (the measurements are of this machine)",
                o->topology);
        return -1;
    }
    return 0;
}

static void human(char *buf, size_t len, double bytes)
{
    if (bytes >= MIB)
        snprintf(buf, len, "%.4g MiB", bytes / MIB);
    else
        snprintf(buf, len, "%.4g KiB", bytes / 1024.0);
}

/* One row of the figure table. */
static void row(const char *name, const struct pes_calib_figure *f, const char *unit)
{
    if (f->measured)
        printf("  %-24s %9.3f %9.3f %-7s %s\n", name, f->value, f->median, unit, f->method);
    else
        printf("  %-24s %9.3f %9s %-7s %s\n", name, f->value, "-", unit, f->method);
}

/* The latency curve, six points a line. */
static void print_curve(const struct pes_calib_point *pt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char s[32];
        human(s, sizeof s, pt[i].size);
        printf("%s%10s %6.1f", i % 6 ? "  " : "  ", s, pt[i].cycles);
        if (i % 6 == 5 || i + 1 == n)
            putchar('\n');
    }
}

/* Pins the calling thread to the CPU it runs on: a migration in the middle of
 * a measurement would time two cores' caches. */
static void pin_here(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Folds one round's figure into acc: the best value (the highest for the
 * clock, the lowest for costs), the median of the best round, the repeats
 * summed; the method says how many rounds. */
static void merge(struct pes_calib_figure *acc, const struct pes_calib_figure *f,
                  int higher_is_better)
{
    if (!f->measured) {
        *acc = *f;
        return;
    }
    unsigned rounds = (acc->rounds ? acc->rounds : acc->repeats ? 1 : 0) + 1;
    unsigned repeats = acc->repeats + f->repeats;
    double spread = acc->repeats && acc->spread > f->spread ? acc->spread : f->spread;
    if (!acc->repeats || (higher_is_better ? f->value > acc->value : f->value < acc->value))
        *acc = *f;
    acc->repeats = repeats;
    acc->rounds = rounds;
    acc->spread = spread;
    char *fastest = strstr(acc->method, "fastest of ");
    if (fastest)
        snprintf(fastest, sizeof acc->method - (size_t)(fastest - acc->method),
                 "fastest of %u in %u round%s", repeats, rounds, rounds == 1 ? "" : "s");
}

/* The streaming window of level i: L1, half of it; below, twice the level
 * above (it streams through that one and is served by this one), or halfway
 * between the two if this level (its measured capacity cap[i], if given and
 * smaller) ends before. Not half the level: a VM's share of a shared cache
 * moves from run to run, and the window would move with it. */
static double stream_window(const uint64_t *size, const double *cap, uint32_t i)
{
    double hi = (double)size[i];
    if (cap && cap[i] > 0 && cap[i] < hi)
        hi = cap[i];
    if (i == 0)
        return hi / 2;
    double lo = (double)size[i - 1];
    return 2 * lo < (lo + hi) / 2 ? 2 * lo : (lo + hi) / 2;
}

/* (max - min) / median of a plateau's points, percent. */
static double plateau_spread(const struct pes_calib_point *curve, const struct pes_calib_plateau *p)
{
    double v[256];
    size_t k = 0;
    for (size_t j = p->first; j <= p->last && k < 256; j++)
        v[k++] = curve[j].cycles;
    return pes_calib_spread(v, k);
}

/* A figure measured with ghz 1 (nanoseconds) in cycles. */
static void to_cycles(struct pes_calib_figure *f, double ghz)
{
    if (!f->measured)
        return;
    f->value *= ghz;
    f->median *= ghz;
}

static double physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* Appends one line to the notes of what was left out (comments in the file). */
static void note(struct pes_calib_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct pes_calib_result *res, const char *fmt, ...)
{
    size_t used = strlen(res->notes);
    if (used + 2 >= sizeof res->notes)
        return;
    if (used)
        res->notes[used++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->notes + used, sizeof res->notes - used, fmt, ap);
    va_end(ap);
}

/* A figure measured in cycles per 64-byte line as bytes per cycle. */
static void to_bandwidth(struct pes_calib_figure *f)
{
    f->value = 64.0 / f->value;
    f->median = 64.0 / f->median;
}

/* Thread counts of the curves: 1, 2, 4, ... below the CPUs this process may
 * run on, and their number. */
static uint32_t thread_counts(unsigned cpus, uint32_t *t)
{
    uint32_t n = 0;
    for (unsigned k = 1; k < cpus && n < PES_CURVE_POINTS - 1; k *= 2)
        t[n++] = k;
    t[n++] = cpus;
    return n;
}

/* The terms beyond Eq. 4-8 (docs/model.md, "Calibration"): issue width,
 * memory-level parallelism, the prefetchers' reach, the TLB, and with the
 * process's whole CPU set (the caller's pinning undone) OpenMP fork/join and
 * barriers and the bandwidth of T threads. buf: the memory probes' buffer
 * (huge pages, plan->max_ws bytes). A probe that cannot measure leaves its
 * key out with a note. */
static void measure_terms(const struct pes_calib_plan *plan, const struct pes_calib_fit *fit,
                          struct pes_calib_buffer *buf, double ghz, const cpu_set_t *cpus,
                          const struct pes_calib_figure *issue, const char *issue_error,
                          struct pes_calib_result *res)
{
    struct pes_machine *m = &res->machine;
    struct pes_error err = {0};

    /* issue width: the mixed block (cycles per op, measured in the turns),
     * or the adds alone if they issue faster */
    struct pes_calib_figure f = *issue;
    double adds = res->op_recip[PES_OP_INT_ADD].measured ? res->op_recip[PES_OP_INT_ADD].value : 0;
    if (f.measured && f.value > 0) {
        double w = 1.0 / f.value, wmed = 1.0 / f.median;
        res->issue_width = f;
        res->issue_width.value = w;
        res->issue_width.median = wmed;
        if (adds > 0 && 1.0 / adds > w) {
            res->issue_width.value = 1.0 / adds;
            snprintf(res->issue_width.method, sizeof res->issue_width.method,
                     "1 / int_add recip throughput (the mixed block issued %.3g per cycle)", w);
        } else {
            char tmp[160];
            snprintf(tmp, sizeof tmp, "1 / cycles per op of %s", f.method);
            snprintf(res->issue_width.method, sizeof res->issue_width.method, "%s", tmp);
        }
        if (res->issue_width.value >= 1.0)
            m->issue_width = res->issue_width.value;
        else
            note(res, "issue_width: measured %.3g per cycle (< 1): the default kept",
                 res->issue_width.value);
    } else {
        note(res, "issue_width: not measured (%s); the default kept", issue_error);
    }

    /* memory-level parallelism: k independent chases through memory */
    static const unsigned ks[] = {1, 2, 4, 6, 8, 12, 16, 20, 24};
    enum { NK = sizeof ks / sizeof ks[0] };
    struct pes_calib_figure cf[NK];
    double t_sat = 0;
    if (pes_calib_measure_chases(buf, plan->max_ws, ks, NK, ghz, plan, cf, &err) == 0) {
        double k[NK], t[NK], knee = 0;
        for (int i = 0; i < NK; i++) {
            k[i] = ks[i];
            t[i] = cf[i].value;
        }
        double mlp = pes_calib_mlp(k, t, NK, &knee);
        t_sat = t[0] / mlp;
        res->mlp = cf[0];
        res->mlp.value = mlp;
        res->mlp.median = mlp;
        snprintf(res->mlp.method, sizeof res->mlp.method,
                 "1 chase %.4g / fastest of 1..24 chases %.4g cycles per access (within 10 %% "
                 "from %g chases on), over %g MiB",
                 t[0], t_sat, knee, plan->max_ws / MIB);
        if (mlp >= 1.0 && isfinite(mlp))
            m->mlp = mlp;
        else
            note(res, "mlp: k chases gave %.3g (< 1): the default kept", mlp);
    } else {
        note(res, "mlp: not measured (%s); the default kept", err.message);
    }

    /* the prefetchers' reach: strided streams against random reads */
    static const unsigned strides[] = {64, 128, 256, 512, 1024, 2048, 4096};
    enum { NS = sizeof strides / sizeof strides[0] };
    double sv[NS], sc[NS];
    int ok = t_sat > 0;
    for (int i = 0; i < NS && ok; i++) {
        ok = pes_calib_measure_stride(buf, plan->max_ws, strides[i], ghz, plan, &f, &err) == 0;
        sv[i] = strides[i];
        sc[i] = f.value;
    }
    double ps = ok ? pes_calib_prefetch_stride(sv, sc, NS, t_sat) : 0;
    if (ps > 0) {
        m->prefetch_max_stride = ps;
        res->prefetch_max_stride =
            (struct pes_calib_figure){.value = ps, .median = ps, .measured = 1};
        int used = snprintf(res->prefetch_max_stride.method, sizeof res->prefetch_max_stride.method,
                            "cycles per access by stride:");
        for (int i = 0; i < NS && used > 0 && (size_t)used < sizeof res->prefetch_max_stride.method;
             i++)
            used += snprintf(res->prefetch_max_stride.method + used,
                             sizeof res->prefetch_max_stride.method - (size_t)used, " %u:%.3g",
                             strides[i], sc[i]);
        if (used > 0 && (size_t)used < sizeof res->prefetch_max_stride.method)
            snprintf(res->prefetch_max_stride.method + used,
                     sizeof res->prefetch_max_stride.method - (size_t)used, "; random %.3g", t_sat);
    } else if (!ok) {
        note(res, "prefetch.max_stride: not measured (%s)",
             t_sat > 0 ? err.message : "no mlp probe");
    } else {
        note(res,
             "prefetch.max_stride: left out: stride 64 costs %.3g cycles per access, random "
             "reads %.3g: no stride is told apart from random",
             sc[0], t_sat);
    }

    /* the TLB: one line per 4 KiB page, minus the same lines contiguous */
    uint32_t cpuid_entries = 0, cpuid_page = 0;
    int have_cpuid = pes_calib_tlb_cpuid(&cpuid_entries, &cpuid_page) == 0;
    size_t max_pages = 16384;
    if (have_cpuid && 4.0 * cpuid_entries > (double)max_pages)
        max_pages = 4.0 * cpuid_entries < 32768 ? 4 * (size_t)cpuid_entries : 32768;
    struct pes_calib_buffer pages;
    if (pes_calib_buffer_alloc_pages(&pages, max_pages * 4096, 0, &err) == 0) {
        struct pes_calib_plan tp = *plan;
        tp.repeats = plan->repeats / 3 > 5 ? plan->repeats / 3 : 5;
        struct pes_calib_point d[64];
        size_t nd = 0;
        ok = 1;
        for (double x = 16; x <= (double)max_pages * 1.0001 && nd < 64 && ok;
             x *= plan->quick ? 1.41421356 : 1.25992105) {
            size_t n = (size_t)(x + 0.5);
            struct pes_calib_figure a, b;
            ok = pes_calib_measure_tlb(&pages, buf, n, ghz, &tp, &a, &b, &err) == 0;
            d[nd++] = (struct pes_calib_point){(double)n, a.value - b.value};
        }
        memcpy(res->tlb_sweep, d, nd * sizeof d[0]);
        res->n_tlb_sweep = nd;
        double huge = pages.huge_share;
        pes_calib_buffer_free(&pages);
        struct pes_calib_step st;
        /* a quarter of the way up: past a TLB's reach every access of a
         * cyclic sweep misses (LRU), but replacement policies that keep some
         * entries round the knee off */
        if (!ok) {
            note(res, "tlb.entries, tlb.miss_latency: not measured (%s)", err.message);
        } else if (huge > 0.01) {
            note(res,
                 "tlb.entries, tlb.miss_latency: left out: the sweep's buffer got huge pages (%.0f "
                 "%%)",
                 100 * huge);
        } else if (pes_calib_main_step(d, nd, 0.25, have_cpuid ? cpuid_entries : 0, &st, &err) <
                       0 ||
                   st.above - st.below < 3) {
            note(res,
                 "tlb: left out: no step of 3 cycles or more in the page sweep (16..%zu pages)",
                 max_pages);
        } else {
            int agree = have_cpuid && st.at >= 0.5 * cpuid_entries && st.at <= 2.0 * cpuid_entries;
            m->tlb_entries = agree ? cpuid_entries : (uint32_t)(st.at + 0.5);
            m->tlb_page = 4096;
            m->tlb_miss_latency = st.above - st.below;
            res->tlb_entries = (struct pes_calib_figure){
                .value = m->tlb_entries, .median = m->tlb_entries, .measured = 1};
            if (agree)
                snprintf(res->tlb_entries.method, sizeof res->tlb_entries.method,
                         "cpuid; the page sweep steps at %.0f pages", st.at);
            else if (have_cpuid)
                snprintf(res->tlb_entries.method, sizeof res->tlb_entries.method,
                         "the page sweep's step (cpuid says %u, more than 2x off)", cpuid_entries);
            else
                snprintf(res->tlb_entries.method, sizeof res->tlb_entries.method,
                         "the page sweep's step (cpuid says nothing)");
            res->tlb_miss_latency = (struct pes_calib_figure){
                .value = m->tlb_miss_latency, .median = m->tlb_miss_latency, .measured = 1};
            snprintf(res->tlb_miss_latency.method, sizeof res->tlb_miss_latency.method,
                     "page sweep minus contiguous lines: %.3g cycles per access after the step "
                     "at %.0f pages, %.3g before",
                     st.above, st.at, st.below);
        }
    } else {
        note(res, "tlb.entries, tlb.miss_latency: not measured (%s)", err.message);
    }

    /* OpenMP and teams: every CPU this process may use */
    if (!pes_calib_omp_available()) {
        note(res, "omp.*, mem.bandwidth.*, L*.bandwidth.*: left out: pes-calibrate was built "
                  "without OpenMP");
        return;
    }
    sched_setaffinity(0, sizeof *cpus, cpus);
    unsigned ncpu = (unsigned)CPU_COUNT(cpus);
    uint32_t t[PES_CURVE_POINTS];
    uint32_t nt = thread_counts(ncpu ? ncpu : 1, t);
    if (ncpu < 2)
        note(res, "omp.*, *.bandwidth.*: one CPU: only the curves' point at 1 thread");
    /* the last level, if shared: buffers that fit it together, each beyond
     * the level above (measured capacity where smaller than hwloc's) */
    int shared = m->n_levels >= 2 && m->level[m->n_levels - 1].shared;
    uint32_t L = m->n_levels - 1;
    double cap = shared ? (double)m->level[L].size : 0;
    if (shared && fit->capacity[L] > 0 && fit->capacity[L] < cap)
        cap = fit->capacity[L];
    double above = shared ? (double)m->level[L - 1].size : 0;
    for (uint32_t i = 0; i < nt; i++) {
        struct pes_thread_curve *c[3] = {&m->fork_join, &m->barrier, &m->mem_bandwidth};
        struct pes_calib_figure *fig[3] = {&res->fork_join[i], &res->barrier[i],
                                           &res->mem_bandwidth[i]};
        int rc[3];
        rc[0] = pes_calib_measure_fork_join(t[i], ghz, plan, fig[0], &err);
        if (rc[0] < 0)
            note(res, "omp.fork_join.%u: %s", t[i], err.message);
        rc[1] = pes_calib_measure_barrier(t[i], ghz, plan, fig[1], &err);
        if (rc[1] < 0)
            note(res, "omp.barrier.%u: %s", t[i], err.message);
        rc[2] = pes_calib_measure_team_stream(buf, (double)buf->bytes / t[i], t[i], ghz, plan,
                                              fig[2], &err);
        if (rc[2] < 0)
            note(res, "mem.bandwidth.%u: %s", t[i], err.message);
        else
            to_bandwidth(fig[2]);
        for (int k = 0; k < 3; k++)
            if (rc[k] == 0 && fig[k]->value > 0) {
                c[k]->threads[c[k]->n] = t[i];
                c[k]->value[c[k]->n++] = fig[k]->value;
            }
        /* compute throughput relative to one thread (1 at 1 by definition) */
        struct pes_calib_figure *cf = &res->compute_throughput[i];
        if (t[i] == 1) {
            *cf = (struct pes_calib_figure){.value = 1, .median = 1, .measured = 1};
            snprintf(cf->method, sizeof cf->method, "one thread's own: 1 by definition");
        } else if (pes_calib_measure_team_compute(t[i], ghz, plan, cf, &err) < 0) {
            note(res, "compute.throughput.%u: %s", t[i], err.message);
        }
        if (cf->measured) {
            struct pes_thread_curve *cc = &m->compute_throughput;
            cc->threads[cc->n] = t[i];
            cc->value[cc->n++] = cf->value;
        }
        if (!shared)
            continue;
        double per = fmin(2.0 * above, 0.5 * cap / t[i]);
        if (per < 1.25 * above) {
            note(res,
                 "L%u.bandwidth.%u: left out: %u threads' buffers beyond L%u do not fit "
                 "L%u (%.4g MiB) together",
                 L + 1, t[i], t[i], L, L + 1, cap / MIB);
            continue;
        }
        struct pes_calib_figure *lf = &res->level_bandwidth[L][i];
        if (pes_calib_measure_team_stream(buf, per, t[i], ghz, plan, lf, &err) < 0) {
            note(res, "L%u.bandwidth.%u: %s", L + 1, t[i], err.message);
            continue;
        }
        to_bandwidth(lf);
        struct pes_thread_curve *lc = &m->level[L].bandwidth;
        lc->threads[lc->n] = t[i];
        lc->value[lc->n++] = lf->value;
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse_args(argc, argv, &o) < 0)
        return 2;
    struct pes_error err = {0};
    char path[4096];
    if (o.output)
        snprintf(path, sizeof path, "%s", o.output);
    else if (pes_machine_host_calibration_path(path, sizeof path, &err) < 0) {
        message("%s (give --output FILE)", err.message);
        return 1;
    }
    if (o.print_path) {
        printf("%s\n", path);
        return 0;
    }

    struct pes_calib_topology topo;
    if (pes_calib_topology_load(o.topology, &topo, &err) < 0) {
        message("%s", err.message);
        return 1;
    }
    if (o.topology_only || !o.quiet) {
        printf("pes-calibrate: %s%stopology from hwloc %s%s%s\n", topo.hostname,
               topo.hostname[0] ? ": " : "", HWLOC_VERSION, o.topology ? ", " : "",
               o.topology ? o.topology : "");
        pes_calib_topology_print(&topo, stdout);
    }
    if (o.topology_only)
        return 0;

    struct stat st;
    if (!o.force && stat(path, &st) == 0) {
        printf("pes-calibrate: %s exists: this host is calibrated (--force measures again)\n",
               path);
        return 0;
    }

    if (pes_calib_prepare_path(path, &err) < 0) { /* before measuring for seconds */
        message("%s", err.message);
        return 1;
    }
    double t_start = (double)time(NULL);
    struct timespec ts0;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    cpu_set_t all_cpus; /* the OpenMP probes run on all of them, after the pinned ones */
    CPU_ZERO(&all_cpus);
    if (sched_getaffinity(0, sizeof all_cpus, &all_cpus) < 0)
        CPU_SET(0, &all_cpus);
    pin_here();

    /* the last level's size for planning the curve: a flagged one is replaced
     * by the most a real CPU could have, 32 MiB per core sharing it */
    const struct pes_calib_cache *llc = &topo.level[topo.n_levels - 1];
    double llc_bytes = (double)llc->size;
    if (llc->implausible) {
        double cap = 32.0 * MIB * (llc->cores ? llc->cores : 1);
        llc_bytes = llc_bytes < cap ? llc_bytes : cap;
    }
    struct pes_calib_plan plan;
    pes_calib_plan_default(&plan, o.quick, llc_bytes);
    double mem = physical_memory();
    if (mem > 0 && plan.max_ws > mem / 4)
        plan.max_ws = mem / 4;

    struct pes_calib_result res;
    memset(&res, 0, sizeof res);
    struct pes_machine *m = &res.machine;
    /* defaults for what is not measured: the generic host of sysfs */
    struct pes_machine def;
    if (pes_machine_from_sysfs(NULL, &def, NULL) < 0 &&
        pes_machine_load("haswell", &def, NULL) < 0) { /* any documented costs will do */
        memset(&def, 0, sizeof def);
        for (int op = 0; op < PES_OP_COUNT; op++)
            def.op_latency[op] = def.op_recip_throughput[op] = 1;
    }

    /* Rounds: the clock, a share of the latency curve and the instruction
     * chains are measured in turns, so that each figure's repeats are spread
     * over the whole run and a busy spell of the machine spoils one round,
     * not a figure. Times are kept in nanoseconds (ghz 1) until the clock is
     * known, then turned into cycles. */
    const unsigned rounds = o.quick ? 2 : 4;
    /* the issue block too: a sibling hyperthread's busy spell can last
     * longer than one probe (hundreds of milliseconds under load), rarely
     * the whole run */
    struct pes_calib_figure issue = {0};
    char issue_error[sizeof err.message] = "";
    struct pes_calib_buffer buf;
    if (pes_calib_buffer_alloc(&buf, (size_t)plan.max_ws, &err) < 0) {
        message("%s", err.message);
        return 1;
    }
    struct pes_calib_point curve[256];
    double sizes_ws[256];
    size_t n = 0;
    double step = pow(2.0, 1.0 / plan.points_per_octave);
    for (double ws = plan.min_ws; ws <= plan.max_ws * 1.0001 && n < 256; ws *= step)
        sizes_ws[n++] = floor(ws / 64) * 64;
    uint64_t hw_sizes[PES_MAX_LEVELS];
    double stream_ws[PES_MAX_LEVELS];
    for (uint32_t i = 0; i < topo.n_levels; i++)
        hw_sizes[i] = topo.level[i].size;
    for (uint32_t i = 0; i < topo.n_levels; i++)
        stream_ws[i] = stream_window(hw_sizes, NULL, i);
    for (unsigned r = 0; r < rounds; r++) {
        struct pes_calib_figure f;
        if (pes_calib_measure_ghz(&plan, &f, &err) < 0) {
            message("clock: %s", err.message);
            return 1;
        }
        merge(&res.ghz, &f, 1);
        /* working sets up to SMALL_WS in every round (a share of the
         * repeats each, the fastest kept: their chains are cheap to build,
         * and the cache levels' plateaus are there); the larger ones, whose
         * chains take milliseconds to build, a share of them per round */
        for (size_t i = 0; i < n; i++) {
            int small = sizes_ws[i] <= SMALL_WS;
            if (!small && (i < n * r / rounds || i >= n * (r + 1) / rounds))
                continue;
            struct pes_calib_plan p = plan;
            if (small)
                p.repeats = (plan.repeats + rounds - 1) / rounds;
            if (pes_calib_measure_chase(&buf, sizes_ws[i], 1.0, &p, &f, &err) < 0) {
                message("latency curve: %s", err.message);
                return 1;
            }
            if (!small || r == 0 || f.value < curve[i].cycles)
                curve[i] = (struct pes_calib_point){sizes_ws[i], f.value};
        }
        for (int op = 0; op < PES_OP_COUNT; op++) {
            struct pes_calib_figure l, t;
            if (pes_calib_measure_op(op, 1.0, &plan, &def, &l, &t, &err) < 0) {
                message("op %s: %s", pes_machine_op_key(op), err.message);
                return 1;
            }
            merge(&res.op_latency[op], &l, 0);
            merge(&res.op_recip[op], &t, 0);
        }
        {
            struct pes_calib_plan p = plan;
            p.repeats = (plan.repeats + 1) / 2; /* the block's rounds, per turn */
            if (pes_calib_measure_issue(1.0, &p, &f, &err) == 0)
                merge(&issue, &f, 0);
            else
                snprintf(issue_error, sizeof issue_error, "%s", err.message);
        }
        /* streaming reads: per load in L1, per line below, from memory */
        for (uint32_t i = 0; i <= topo.n_levels; i++) {
            double ws = i < topo.n_levels ? stream_ws[i] : plan.max_ws;
            if (pes_calib_measure_stream(&buf, ws, i == 0 ? 8 : 64, 1.0, &plan, &f, &err) < 0) {
                message("%s throughput: %s", i < topo.n_levels ? "cache" : "memory", err.message);
                return 1;
            }
            merge(i < topo.n_levels ? &res.recip[i] : &res.mem_recip, &f, 0);
        }
    }
    double ghz = res.ghz.value;
    for (size_t i = 0; i < n; i++)
        curve[i].cycles *= ghz;
    for (int op = 0; op < PES_OP_COUNT; op++) {
        to_cycles(&res.op_latency[op], ghz);
        to_cycles(&res.op_recip[op], ghz);
    }
    to_cycles(&issue, ghz);
    uint64_t sizes[PES_MAX_LEVELS];
    for (uint32_t i = 0; i < topo.n_levels; i++)
        sizes[i] = topo.level[i].size;
    struct pes_calib_fit fit;
    if (pes_calib_fit_levels(curve, n, sizes, topo.n_levels, TOLERANCE, &fit, &err) < 0) {
        message("%s", err.message);
        return 1;
    }

    /* the machine: hwloc's geometry, where flagged the measured capacity */
    char notes[8][256];
    unsigned n_notes = 0;
    snprintf(m->name, sizeof m->name, "host");
    m->validation = PES_MACHINE_CALIBRATED;
    m->ghz = ghz;
    m->sockets = topo.packages;
    m->cores_per_socket = topo.cores_per_package ? topo.cores_per_package : 1;
    m->n_levels = topo.n_levels;
    for (uint32_t i = 0; i < topo.n_levels; i++) {
        const struct pes_calib_cache *c = &topo.level[i];
        struct pes_cache_config *l = &m->level[i];
        l->size = c->size;
        l->ways = c->ways;
        l->line = c->line;
        l->shared = c->cores > 1;
        char a[32], b[32];
        human(a, sizeof a, (double)c->size);
        human(b, sizeof b, fit.capacity[i]);
        if ((c->implausible || o.measured_sizes) && fit.capacity[i] > 0) {
            l->size = pes_calib_round_size(fit.capacity[i], c->ways, c->line);
            human(b, sizeof b, (double)l->size);
            if (n_notes < 8 && l->size != c->size)
                snprintf(notes[n_notes++], sizeof notes[0],
                         "L%u: hwloc's %s replaced by the measured capacity %s (latency step at "
                         "%.4g KiB%s)",
                         i + 1, a, b, fit.capacity[i] / 1024,
                         c->implausible ? "; hwloc's is implausible" : "");
        } else if (fit.mismatch[i] && n_notes < 8) {
            if (fit.capacity[i] > 0)
                snprintf(
                    notes[n_notes++], sizeof notes[0],
                    "L%u: the latency steps at about %s, hwloc says %s (a cache shared with other "
                    "tenants?); hwloc's size kept (--sizes measured uses the step)",
                    i + 1, b, a);
            else
                snprintf(
                    notes[n_notes++], sizeof notes[0],
                    "L%u: no latency step of its own on the curve; hwloc's size kept, its latency "
                    "is the nearest plateau's",
                    i + 1);
        }
        const struct pes_calib_plateau *pl = &fit.plateaus[fit.plateau[i]];
        res.latency[i] = (struct pes_calib_figure){.value = fit.latency[i],
                                                   .median = fit.latency[i],
                                                   .measured = 1,
                                                   .repeats = plan.repeats};
        res.latency[i].spread = plateau_spread(curve, pl);
        snprintf(
            res.latency[i].method, sizeof res.latency[i].method,
            "plateau of the latency curve at %.4g..%.4g KiB (median of %zu points, spread %.0f %%)",
            pl->lo / 1024, pl->hi / 1024, pl->last - pl->first + 1, res.latency[i].spread);
        l->latency = fit.latency[i];
    }
    {
        const struct pes_calib_plateau *mp = &fit.plateaus[fit.n_plateaus - 1];
        res.mem_latency = (struct pes_calib_figure){.value = fit.mem_latency,
                                                    .median = fit.mem_latency,
                                                    .measured = 1,
                                                    .repeats = plan.repeats};
        res.mem_latency.spread = plateau_spread(curve, mp);
        snprintf(res.mem_latency.method, sizeof res.mem_latency.method,
                 "last plateau of the latency curve, %.4g..%.4g MiB (median of %zu points, spread "
                 "%.0f %%)",
                 mp->lo / MIB, mp->hi / MIB, mp->last - mp->first + 1, res.mem_latency.spread);
        m->mem_latency = fit.mem_latency;
    }
    /* a stream window the fit shows to end beyond its level (a measured
     * capacity smaller than hwloc's size): measured again, in its place */
    for (uint32_t i = 0; i < m->n_levels; i++) {
        uint64_t sz[PES_MAX_LEVELS];
        for (uint32_t j = 0; j < m->n_levels; j++)
            sz[j] = m->level[j].size;
        double ws = stream_window(sz, fit.capacity, i);
        if (ws >= 0.9 * stream_ws[i])
            continue;
        memset(&res.recip[i], 0, sizeof res.recip[i]);
        for (unsigned r = 0; r < rounds; r++) {
            struct pes_calib_figure f;
            if (pes_calib_measure_stream(&buf, ws, i == 0 ? 8 : 64, 1.0, &plan, &f, &err) < 0) {
                message("L%u throughput: %s", i + 1, err.message);
                return 1;
            }
            merge(&res.recip[i], &f, 0);
        }
    }
    for (uint32_t i = 0; i < m->n_levels; i++) {
        to_cycles(&res.recip[i], ghz);
        m->level[i].recip_throughput = res.recip[i].value;
    }
    to_cycles(&res.mem_recip, ghz);
    m->mem_recip_throughput = res.mem_recip.value;
    measure_terms(&plan, &fit, &buf, ghz, &all_cpus, &issue, issue_error, &res);
    double huge = buf.huge_share;
    pes_calib_buffer_free(&buf);

    /* instructions (Eq. 8), measured above */
    for (int op = 0; op < PES_OP_COUNT; op++) {
        if (op == PES_OP_LOAD) { /* a load that hits L1 */
            res.op_latency[op] = res.latency[0];
            res.op_recip[op] = res.recip[0];
            snprintf(res.op_latency[op].method, sizeof res.op_latency[op].method, "as L1.latency");
            snprintf(res.op_recip[op].method, sizeof res.op_recip[op].method,
                     "as L1.recip_throughput");
        }
        m->op_latency[op] = res.op_latency[op].value;
        m->op_recip_throughput[op] = res.op_recip[op].value;
    }
    if (pes_machine_validate(m, &err) < 0) {
        message("the calibrated machine is not valid: %s", err.message);
        return 1;
    }

    struct timespec ts1;
    clock_gettime(CLOCK_MONOTONIC, &ts1);
    double took = (double)(ts1.tv_sec - ts0.tv_sec) + 1e-9 * (double)(ts1.tv_nsec - ts0.tv_nsec);
    time_t t0 = (time_t)t_start;
    struct tm tm;
    gmtime_r(&t0, &tm);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int used =
        snprintf(res.header, sizeof res.header,
                 "pes-calibrate %s%s on %s (%s, %u cores, %u PUs), %s, %.1f s\n"
                 "Topology: hwloc %s. Latencies: pointer chasing over a random cyclic\n"
                 "permutation of 64 B lines, huge pages %s; throughputs: streaming reads;\n"
                 "clock: a dependent add chain. docs/model.md, \"Calibration\".",
                 PES_VERSION, o.quick ? " --quick" : "", topo.hostname[0] ? topo.hostname : "?",
                 topo.cpu_model[0] ? topo.cpu_model : "CPU model unknown", topo.cores, topo.pus,
                 date, took, HWLOC_VERSION,
                 huge < 0     ? "requested"
                 : huge > 0.9 ? "in use"
                 : huge > 0   ? "partly in use"
                              : "not granted");
    for (uint32_t i = 0; i < topo.n_warnings && used > 0 && (size_t)used < sizeof res.header; i++)
        used += snprintf(res.header + used, sizeof res.header - (size_t)used, "\nhwloc: %s",
                         topo.warning[i]);
    for (unsigned i = 0; i < n_notes && used > 0 && (size_t)used < sizeof res.header; i++)
        used += snprintf(res.header + used, sizeof res.header - (size_t)used, "\n%s", notes[i]);

    if (pes_calib_write_file(&res, path, &err) < 0) {
        message("%s", err.message);
        return 1;
    }
    if (!o.quiet) {
        printf("\nlatency curve (working set, cycles per load; pointer chase, fastest of %u):\n",
               plan.repeats);
        print_curve(curve, n);
        printf("  plateaus:");
        for (int k = 0; k < fit.n_plateaus; k++) {
            char lo[32], hi[32];
            human(lo, sizeof lo, fit.plateaus[k].lo);
            human(hi, sizeof hi, fit.plateaus[k].hi);
            printf("%s %.1f (%s..%s)", k ? "," : "", fit.plateaus[k].cycles, lo, hi);
        }
        printf("\n  huge pages: %s\n", huge < 0     ? "requested (share unknown)"
                                       : huge > 0.9 ? "in use"
                                       : huge > 0
                                           ? "partly in use"
                                           : "not granted (TLB misses inflate large working sets)");
        for (unsigned i = 0; i < n_notes; i++)
            printf("  note: %s\n", notes[i]);
        if (res.n_tlb_sweep) {
            printf("\nTLB sweep (pages, cycles per access over the same lines contiguous):\n");
            for (size_t i = 0; i < res.n_tlb_sweep; i++)
                printf("%s%8.0f %6.1f%s", i % 6 ? "  " : "  ", res.tlb_sweep[i].size,
                       res.tlb_sweep[i].cycles, i % 6 == 5 || i + 1 == res.n_tlb_sweep ? "\n" : "");
        }
        printf("\n  %-24s %9s %9s %-7s %s\n", "figure", "value", "median", "unit", "method");
        row("clock", &res.ghz, "GHz");
        char name[64];
        for (uint32_t i = 0; i < m->n_levels; i++) {
            snprintf(name, sizeof name, "L%u latency", i + 1);
            row(name, &res.latency[i], "cycles");
            snprintf(name, sizeof name, "L%u recip throughput", i + 1);
            row(name, &res.recip[i], i ? "cyc/ln" : "cyc/ld");
        }
        row("memory latency", &res.mem_latency, "cycles");
        row("memory recip throughput", &res.mem_recip, "cyc/ln");
        printf("  %-24s %9.2f %9s %-7s 64 B x clock / memory recip throughput\n",
               "memory bandwidth", 64.0 * ghz / res.mem_recip.value, "", "GB/s");
        for (int op = 0; op < PES_OP_COUNT; op++) {
            snprintf(name, sizeof name, "%s latency", pes_machine_op_key(op));
            row(name, &res.op_latency[op], "cycles");
            snprintf(name, sizeof name, "%s recip thr", pes_machine_op_key(op));
            row(name, &res.op_recip[op], "cycles");
        }
        row("issue width", &res.issue_width, "ops/cyc");
        row("mlp", &res.mlp, "misses");
        row("prefetch max stride", &res.prefetch_max_stride, "bytes");
        row("tlb entries", &res.tlb_entries, "pages");
        row("tlb miss latency", &res.tlb_miss_latency, "cycles");
        for (uint32_t i = 0; i < m->fork_join.n; i++) {
            snprintf(name, sizeof name, "fork/join %u threads", m->fork_join.threads[i]);
            row(name, &res.fork_join[i], "cycles");
        }
        for (uint32_t i = 0; i < m->barrier.n; i++) {
            snprintf(name, sizeof name, "barrier %u threads", m->barrier.threads[i]);
            row(name, &res.barrier[i], "cycles");
        }
        for (uint32_t i = 0; i < m->mem_bandwidth.n; i++) {
            snprintf(name, sizeof name, "mem bandwidth %u thr", m->mem_bandwidth.threads[i]);
            row(name, &res.mem_bandwidth[i], "B/cyc");
        }
        for (uint32_t i = 0; i < m->compute_throughput.n; i++) {
            snprintf(name, sizeof name, "compute %u threads", m->compute_throughput.threads[i]);
            row(name, &res.compute_throughput[i], "threads");
        }
        for (uint32_t l = 0; l < m->n_levels; l++)
            for (uint32_t i = 0; i < m->level[l].bandwidth.n; i++) {
                snprintf(name, sizeof name, "L%u bandwidth %u thr", l + 1,
                         m->level[l].bandwidth.threads[i]);
                row(name, &res.level_bandwidth[l][i], "B/cyc");
            }
        if (res.notes[0])
            printf("  not measured:\n    %s\n", res.notes);
        printf("  (value: the fastest repeat (interference only adds time), or a plateau's median; "
               "median:\n"
               "   of the repeats; cyc/ld: cycles per load, cyc/ln: cycles per 64 B line)\n\n");
    }
    printf("pes-calibrate: wrote %s (%.1f s)\n", path, took);
    return 0;
}
