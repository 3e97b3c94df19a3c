/*
 * probes_omp.c — what a team of threads costs (pes/calibrate.h): entering and
 * leaving an OpenMP parallel region, a barrier, and streaming reads by the
 * whole team (the bandwidth a shared cache or memory gives T cores together).
 * Built with the OpenMP runtime that clang -fopenmp programs use (libomp);
 * without OpenMP every probe fails and pes-calibrate leaves its keys out.
 * Times are taken by the team's first thread between barriers: the slowest
 * thread sets them. Like every probe: repeats, the fastest kept.
 */
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
#endif

int pes_calib_measure_fork_join(unsigned threads, double ghz, const struct pes_calib_plan *p,
                                struct pes_calib_figure *f, struct pes_error *err)
{
#ifdef _OPENMP
    if (check_threads(threads, err) < 0)
        return -1;
    int T = (int)threads;
    unsigned got = 0;
    /* warm-up: the runtime's thread pool created and its threads awake */
    double until = pes_calib_now() + (p->quick ? 0.005 : 0.01);
    do {
#pragma omp parallel num_threads(T)
        {
#pragma omp master
            got = (unsigned)omp_get_num_threads();
        }
    } while (pes_calib_now() < until);
    if (got != threads)
        return team_fail(got, threads, err);
    /* many short samples of a few regions, the fastest kept: a region whose
     * threads wait for a CPU (a loaded machine) costs 100x more, and one
     * such wait spoils only its own sample */
    unsigned rep = MAX_REPEATS, per = 4;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < rep; r++) {
        double t0 = pes_calib_now();
        for (unsigned i = 0; i < per; i++) {
#pragma omp parallel num_threads(T)
            {
                __asm__ volatile("" ::: "memory"); /* an empty body the compiler keeps */
            }
        }
        v[r] = (pes_calib_now() - t0) * ghz * 1e9 / per;
    }
    char method[160];
    snprintf(method, sizeof method,
             "empty parallel regions of %u threads (OpenMP %d), %u per sample, fastest of %u",
             threads, _OPENMP, per, rep);
    pes_calib_figure_from(f, v, rep, method);
    return 0;
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
    if (check_threads(threads, err) < 0)
        return -1;
    int T = (int)threads;
    unsigned got = 0;
    const unsigned rep = MAX_REPEATS, per_sample = 8;
    double v[MAX_REPEATS];
    (void)p;
#pragma omp parallel num_threads(T)
    {
#pragma omp master
        got = (unsigned)omp_get_num_threads();
        /* warm-up */
        for (int i = 0; i < 256; i++) {
#pragma omp barrier
        }
        /* many short samples of a few barriers, the fastest kept (as for
         * fork/join: a wait for a CPU spoils only its own sample) */
        for (unsigned r = 0; r < rep; r++) {
#pragma omp barrier
            double r0 = pes_calib_now();
            for (unsigned i = 0; i < per_sample; i++) {
#pragma omp barrier
            }
#pragma omp master
            v[r] = (pes_calib_now() - r0) * ghz * 1e9 / per_sample;
        }
    }
    if (got != threads)
        return team_fail(got, threads, err);
    char method[160];
    snprintf(method, sizeof method,
             "barriers of a team of %u threads in one region, %u per sample, fastest of %u",
             threads, per_sample, rep);
    pes_calib_figure_from(f, v, rep, method);
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
