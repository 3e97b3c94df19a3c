/* bh.h — shared by the collector behaviour programs (see run.sh): memory work
 * whose result does not depend on timing, and output that reaches its file
 * before the process forks, execs, crashes or leaves with _exit. */
#ifndef BH_H
#define BH_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* rounds over a[0..n): every element read and written each round */
__attribute__((noinline, unused)) static unsigned long bh_sweep(unsigned long *a, long n, long rounds)
{
    unsigned long sum = 0;
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < n; i++) {
            a[i] = a[i] * 3 + (unsigned long)(r + i);
            sum += a[i];
        }
    return sum;
}

/* printf, then flush: the line is out before whatever the program does next */
#define bh_say(...) (printf(__VA_ARGS__), fflush(stdout))

/* async-signal-safe: a fixed message to stdout */
__attribute__((unused)) static void bh_write(const char *s)
{
    ssize_t w = write(1, s, strlen(s));
    (void)w;
}

#endif
