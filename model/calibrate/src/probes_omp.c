/*
 * probes_omp.c — what a team of threads costs (pes/calibrate.h): entering and
 * leaving an OpenMP parallel region, a barrier, the compute a team retires
 * together, and streaming reads by the whole team (the bandwidth a shared
 * cache or memory gives T cores together). Built with the OpenMP runtime that
 * clang -fopenmp programs use (libomp); without OpenMP every probe fails and
 * pes-calibrate leaves its keys out. Times are taken by the team's first
 * thread between barriers: the slowest thread sets them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "pes/calibrate.h"
#include "probe.h"

int pes_calib_omp_available(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

#ifdef _OPENMP
static int check_threads(unsigned threads, struct pes_error *err)
{
    if (threads < 1 || threads > 4096)
        return pes_error_set(err, PES_ERR_ARG, 0, "OpenMP probe: %u threads", threads);
    return 0;
}

/* A team of fewer threads than asked (a thread limit) measures another machine. */
static int team_fail(unsigned got, unsigned threads, struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_ARG, 0, "OpenMP gave a team of %u threads for %u", got,
                         threads);
}

/* Serial work between the samples of fork/join and barrier, as a program
 * runs code between its regions and barriers (about SERIAL_ADDS cycles: a
 * dependent add chain). A team's idle threads then spin or sleep as they do
 * in a program, which back-to-back regions never let them do. */
#define SERIAL_ADDS 20000u

PROBE static uint64_t serial_work(uint64_t adds)
{
    uint64_t x = 0;
    for (uint64_t i = 0; i < adds; i++) {
        x += 1;
        __asm__ volatile("" : "+r"(x)); /* one add after the other, not folded */
    }
    return x;
}

/* A compute loop each thread runs on its own: four independent add chains
 * (the core's ALUs, no memory), so T threads retire T times one's work
 * exactly when each has a core of its own. */
PROBE static uint64_t compute_loop(uint64_t iters)
{
    uint64_t a = 1, b = 2, c = 3, d = 4;
    for (uint64_t i = 0; i < iters; i++) {
        a += 1;
        b += 3;
        c ^= i;
        d += i;
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    return a + b + c + d;
}

/* What one sample of measure_team times. */
enum team_probe {
    TEAM_FORK_JOIN, /* enter and leave an empty region, after serial work */
    TEAM_BARRIER,   /* a barrier, after each thread's serial work */
    TEAM_COMPUTE,   /* each thread's compute_loop(iters), the slowest thread's */
};

static volatile uint64_t team_sink;

/* rep samples of `what` for a team of `threads` into v (seconds), after
 * `warm` seconds of regions that create the runtime's thread pool and wake
 * its threads. */
static int measure_team(enum team_probe what, unsigned threads, uint64_t iters, double warm,
                        double *v, unsigned rep, struct pes_error *err)
{
    if (check_threads(threads, err) < 0)
        return -1;
    int T = (int)threads;
    unsigned got = 0;
    double until = pes_calib_now() + warm;
    do {
#pragma omp parallel num_threads(T)
        {
#pragma omp master
            got = (unsigned)omp_get_num_threads();
        }
    } while (pes_calib_now() < until);
    if (got != threads)
        return team_fail(got, threads, err);
    if (what == TEAM_FORK_JOIN) {
        for (unsigned r = 0; r < rep; r++) {
            team_sink += serial_work(SERIAL_ADDS);
            double t0 = pes_calib_now();
#pragma omp parallel num_threads(T)
            {
                __asm__ volatile("" ::: "memory"); /* an empty body the compiler keeps */
            }
            v[r] = pes_calib_now() - t0;
        }
        return 0;
    }
    memset(v, 0, rep * sizeof *v);
#pragma omp parallel num_threads(T)
    {
        uint64_t mine = 0;
        for (unsigned r = 0; r < rep; r++) {
#pragma omp barrier
            if (what == TEAM_BARRIER) {
                mine += serial_work(SERIAL_ADDS);
                /* the first thread's wait for the others and the barrier's own cost */
                double t0 = pes_calib_now();
#pragma omp barrier
#pragma omp master
                v[r] = pes_calib_now() - t0;
            } else {
                /* each thread's own loop, not the barriers around it (those
                 * are the barrier figure): the team is as fast as its slowest */
                double t0 = pes_calib_now();
                mine += compute_loop(iters);
                double t = pes_calib_now() - t0;
#pragma omp critical(pes_calib_team_slowest)
                v[r] = t > v[r] ? t : v[r];
            }
        }
#pragma omp atomic
        team_sink += mine;
    }
    return 0;
}

/* A team's samples spread 100x on a machine whose threads wait for a CPU
 * (other tenants, a vCPU's steal): such waits are what programs meet there,
 * so the median sample is the figure, not the fastest as for one thread. */
static void typical_figure(struct pes_calib_figure *f, double *v, unsigned n, const char *method)
{
    pes_calib_figure_from(f, v, n, method);
    f->value = f->median;
}

static int sync_figure(enum team_probe what, unsigned threads, double ghz,
                       const struct pes_calib_plan *p, struct pes_calib_figure *f,
                       struct pes_error *err)
{
    double v[MAX_REPEATS];
    const unsigned rep = MAX_REPEATS;
    if (measure_team(what, threads, 0, p->quick ? 0.005 : 0.01, v, rep, err) < 0)
        return -1;
    for (unsigned r = 0; r < rep; r++)
        v[r] *= ghz * 1e9;
    char method[160];
    snprintf(method, sizeof method,
             "%s of %u threads (OpenMP %d), each after ~%u cycles of "
             "serial work, median of %u",
             what == TEAM_FORK_JOIN ? "empty parallel regions" : "barriers in one region", threads,
             _OPENMP, SERIAL_ADDS, rep);
    typical_figure(f, v, rep, method);
    return 0;
}
#endif

int pes_calib_measure_fork_join(unsigned threads, double ghz, const struct pes_calib_plan *p,
                                struct pes_calib_figure *f, struct pes_error *err)
{
#ifdef _OPENMP
    return sync_figure(TEAM_FORK_JOIN, threads, ghz, p, f, err);
#else
    (void)threads;
    (void)ghz;
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0, "built without OpenMP");
#endif
}

int pes_calib_measure_barrier(unsigned threads, double ghz, const struct pes_calib_plan *p,
                              struct pes_calib_figure *f, struct pes_error *err)
{
#ifdef _OPENMP
    return sync_figure(TEAM_BARRIER, threads, ghz, p, f, err);
#else
    (void)threads;
    (void)ghz;
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0, "built without OpenMP");
#endif
}

int pes_calib_measure_team_compute(unsigned threads, double ghz, const struct pes_calib_plan *p,
                                   struct pes_calib_figure *f, struct pes_error *err)
{
#ifdef _OPENMP
    if (check_threads(threads, err) < 0)
        return -1;
    /* the same work per thread in both teams: about a repeat's time at one
     * iteration per cycle, shorter than a scheduler's time slice */
    uint64_t iters = (uint64_t)(pes_calib_repeat_seconds(p) * ghz * 1e9);
    /* one thread and the team in turns, so that other work on the machine
     * slows both alike */
    enum { ROUNDS = 8, PER = MAX_REPEATS / ROUNDS };
    double one[MAX_REPEATS], team[MAX_REPEATS], sum1 = 0, sumT = 0;
    for (unsigned r = 0; r < ROUNDS; r++)
        if (measure_team(TEAM_COMPUTE, 1, iters, 0.001, one + r * PER, PER, err) < 0 ||
            measure_team(TEAM_COMPUTE, threads, iters, 0.001, team + r * PER, PER, err) < 0)
            return -1;
    for (unsigned r = 0; r < MAX_REPEATS; r++) {
        sum1 += one[r];
        sumT += team[r];
    }
    /* threads' worth per sample; means, not medians: a program's loop runs
     * for many samples' time, and a preempted thread holds up the team */
    for (unsigned r = 0; r < MAX_REPEATS; r++)
        team[r] = threads * one[r] / team[r];
    char method[160];
    snprintf(method, sizeof method,
             "%u threads each running 4 independent add chains against 1, %.3g M iterations, "
             "%u samples each in turns, T x mean(1) / mean(T)",
             threads, (double)iters / 1e6, MAX_REPEATS);
    pes_calib_figure_from(f, team, MAX_REPEATS, method);
    f->value = fmin((double)threads, threads * sum1 / sumT);
    f->median = fmin((double)threads, f->median);
    return 0;
#else
    (void)threads;
    (void)ghz;
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0, "built without OpenMP");
#endif
}

int pes_calib_measure_team_stream(struct pes_calib_buffer *b, double per_thread, unsigned threads,
                                  double ghz, const struct pes_calib_plan *p,
                                  struct pes_calib_figure *f, struct pes_error *err)
{
#ifdef _OPENMP
    if (check_threads(threads, err) < 0)
        return -1;
    size_t window = (size_t)per_thread / 4096 * 4096;
    if (window < 16384 || (double)window * threads > (double)b->bytes)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "team stream: %u x %g bytes outside the %zu-byte buffer", threads,
                             per_thread, b->bytes);
    int T = (int)threads;
    unsigned got = 0;
    size_t bytes = 0;
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double v[MAX_REPEATS];
    /* a longer repeat than a single thread's: the team starts and stops at barriers */
    double target = 4 * pes_calib_repeat_seconds(p);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        const volatile uint64_t *w =
            (const volatile uint64_t *)((const char *)b->base + (size_t)t * window);
        size_t off = 0, warm = window < (64u << 20) ? window : (64u << 20);
#pragma omp barrier
        double t0 = pes_calib_now();
        pes_calib_stream_lines(w, window, &off, warm);
        double per_byte = (pes_calib_now() - t0) / (double)warm;
#pragma omp master
        {
            got = (unsigned)omp_get_num_threads();
            bytes = per_byte > 0 ? (size_t)(target / per_byte) / 4096 * 4096 : window;
            bytes = bytes < 4096 ? 4096 : bytes;
        }
#pragma omp barrier
        size_t mine = bytes;
        for (unsigned r = 0; r < rep; r++) {
#pragma omp barrier
            double r0 = pes_calib_now();
            pes_calib_stream_lines(w, window, &off, mine);
#pragma omp barrier
#pragma omp master
            v[r] = (pes_calib_now() - r0) * ghz * 1e9 / ((double)mine * T / 64.0);
        }
    }
    if (got != threads)
        return team_fail(got, threads, err);
    char method[160];
    snprintf(method, sizeof method,
             "%u threads streaming reads, each its own %g KiB, %g KiB each per repeat, fastest "
             "of %u",
             threads, (double)window / 1024, (double)bytes / 1024, rep);
    pes_calib_figure_from(f, v, rep, method);
    return 0;
#else
    (void)b;
    (void)per_thread;
    (void)threads;
    (void)ghz;
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0, "built without OpenMP");
#endif
}
