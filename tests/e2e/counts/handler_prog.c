/* handler_prog 1|0 REPS: a loop over an array while (with 1) a 1 ms
 * SIGALRM handler stores into another array. The handler's accesses are
 * exactly hits x (1 load, M + 1 stores); the rest of the program is the same
 * with 1 and 0, so a full trace of each differs by exactly that if
 * every handler access is recorded — including those that interrupt the
 * runtime's slow path (docs/collector.md, Signal handlers). The number of
 * handler runs goes to hits.txt: stdout must not depend on timing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define N 65536
#define M 600
static long a[N];
static volatile long g[M];
static volatile long hits;

static void on_alarm(int sig)
{
    (void)sig;
    for (int i = 0; i < M; i++)
        g[i] = i;
    hits++;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int on = argv[1][0] == '1';   /* one load either way, unlike strcmp */
    int reps = atoi(argv[2]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    /* the same accesses either way: only the interval differs */
    long us = on ? 1000 : 0;
    struct itimerval every_ms = {{0, us}, {0, us}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every_ms, NULL);
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            a[i] += i;
    setitimer(ITIMER_REAL, &off, NULL);
    long h = hits;
    FILE *f = fopen("hits.txt", "w");
    if (!f)
        return 3;
    fprintf(f, "%ld\n", h);
    fclose(f);
    printf("%ld\n", a[N - 1]);
    return 0;
}
