/* One locality problem per mode, and the same work without it, for the
 * findings test (replay_findings.sh). Each marked line is the one the
 * finding must name.
 *   false / false-clean    two threads increment counters.hits and
 *                          counters.misses (one line) / padded.hits and
 *                          padded.misses (64 bytes apart), in rounds
 *   true / true-clean      two threads take turns adding to one shared
 *                          token in 400 barrier-separated rounds / each
 *                          adds to its own slot
 *   stride / stride-clean  a 1024 x 512 matrix of doubles summed column by
 *                          column (4096-byte stride; a column, 64 KiB, is
 *                          more than the L1) / row by row
 *   sweep / sweep-clean    16 sweeps over 128 KiB / over 8 KiB (the test's
 *                          last-level cache: 16 KiB) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stats {
    long hits;
    long misses;
};
struct padded_stats {
    _Alignas(64) long hits;
    _Alignas(64) long misses;
};

static struct stats counters __attribute__((aligned(64)));
static struct padded_stats padded;
static long token __attribute__((aligned(64)));
static struct {
    _Alignas(64) long v;
} slot[2];
static double m[1024][512];

static int sharing(int pad) {
    for (long r = 0; r < 20; r++) {
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            volatile long *f = pad ? (t ? &padded.misses : &padded.hits)
                                   : (t ? &counters.misses : &counters.hits);
            for (long i = 0; i < 500; i++)
                (*f)++; /* FALSE */
        }
    }
    return (int)(counters.hits + counters.misses + padded.hits + padded.misses) & 1;
}

static int turns(int own) {
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        for (long r = 0; r < 400; r++) { /* the line changes hands at least once a round */
            for (long i = 0; i < 25; i++) {
                if (own)
                    slot[t].v += i; /* OWN */
                else {
#pragma omp atomic
                    token += i; /* TRUE */
                }
            }
#pragma omp barrier
        }
    }
    return (int)(token + slot[0].v + slot[1].v) & 1;
}

static double walk(int by_rows) {
    double s = 0;
    for (int i = 0; i < 1024; i++)
        for (int j = 0; j < 512; j++)
            m[i][j] = i ^ j;
    if (by_rows)
        for (int a = 0; a < 1024; a++)
            for (int b = 0; b < 512; b++)
                s += m[a][b]; /* ROWS */
    else
        for (int a = 0; a < 512; a++)
            for (int b = 0; b < 1024; b++)
                s += m[b][a]; /* COLUMNS */
    return s;
}

static double sweep(long n) {
    double *a = calloc((size_t)n, sizeof *a), s = 0;
    if (!a)
        return -1;
    for (int r = 0; r < 16; r++)
        for (long i = 0; i < n; i++)
            s += a[i]; /* SWEEP */
    free(a);
    return s;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    double out = 0;
    if (!strcmp(mode, "false") || !strcmp(mode, "false-clean"))
        out = sharing(!strcmp(mode, "false-clean"));
    else if (!strcmp(mode, "true") || !strcmp(mode, "true-clean"))
        out = turns(!strcmp(mode, "true-clean"));
    else if (!strcmp(mode, "stride") || !strcmp(mode, "stride-clean"))
        out = walk(!strcmp(mode, "stride-clean"));
    else if (!strcmp(mode, "sweep") || !strcmp(mode, "sweep-clean"))
        out = sweep(!strcmp(mode, "sweep") ? 16384 : 1024);
    else {
        fprintf(stderr, "usage: findings_prog false|true|stride|sweep[-clean]\n");
        return 2;
    }
    printf("%g\n", out);
    return 0;
}
