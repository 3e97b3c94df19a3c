/* alloc_prog — heap blocks with known sizes, sites and order, for the
 * allocation records and events of the collector (alloc_run.sh, alloc_check.py).
 *
 *   alloc_prog report   prints "name=0x..." for every block, the functions
 *                       that allocate and a stack variable of each thread
 *   alloc_prog quiet    prints one line that does not depend on addresses
 *
 * Exits with status 3 (so that a run under the collector shows the status
 * is passed on). The blocks, in program order on the main thread:
 *   a   malloc(4096) in make_a       a2  malloc(4096) in make_a (same call)
 *   b   malloc(8192) in make_b       c   calloc(100, 4) in main
 *   r0  malloc(64) in main, k = malloc(48) in main (after r0: r0 cannot grow
 *       in place), then r = realloc(r0, 1 MiB) in main (moves)
 *   m   posix_memalign(256, 3000) in main
 *   free(b), free(r), then the worker thread: w = malloc(512) in worker, free(w)
 * and a, a2, c, k, m stay allocated. Only initialised bytes are read: the
 * output must not depend on the heap's layout, which the collector changes. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report;
static uint64_t sum;

static void show(const char *name, const void *p)
{
    if (report)
        printf("%s=%p\n", name, p);
}

/* noinline, and more to do after the call, so that malloc's caller is this
 * function and not a tail call from main */
__attribute__((noinline)) static double *make_a(void)
{
    double *p = malloc(4096);
    if (!p)
        abort();
    memset(p, 1, 4096);
    return p;
}

__attribute__((noinline)) static double *make_b(void)
{
    double *p = malloc(8192);
    if (!p)
        abort();
    memset(p, 2, 8192);
    return p;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    (void)arg;
    int local = 7;
    show("worker_local", &local);
    unsigned char *w = malloc(512);
    if (!w)
        abort();
    for (int i = 0; i < 512; i++)
        w[i] = (unsigned char)(i + local);
    for (int i = 0; i < 512; i++)
        sum += w[i];
    show("w", w);
    free(w);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "report") && strcmp(argv[1], "quiet")))
        return 2;
    report = !strcmp(argv[1], "report");
    setvbuf(stdout, NULL, _IOLBF, 0);
    int local = 1;
    show("main_local", &local);
    show("fn_make_a", (void *)make_a);
    show("fn_make_b", (void *)make_b);
    show("fn_main", (void *)main);
    show("fn_worker", (void *)worker);

    double *a = make_a();
    double *b = make_b();
    double *a2 = make_a();
    int *c = calloc(100, sizeof(int));
    char *r0 = malloc(64);
    char *k = malloc(48);
    if (!c || !r0 || !k)
        abort();
    memset(r0, 3, 64);
    memset(k, 6, 48);
    show("r0", r0);   /* before the realloc: the old block's address */
    char *r = realloc(r0, 1 << 20);
    void *m = NULL;
    if (!r || posix_memalign(&m, 256, 3000) != 0)
        abort();
    memset(m, 4, 3000);
    r[(1 << 20) - 1] = 5;
    show("a", a);
    show("b", b);
    show("a2", a2);
    show("c", c);
    show("r", r);
    show("m", m);
    show("k", k);
    for (int i = 0; i < 512; i++)
        sum += (uint64_t)(a[i] + a2[i] + b[i] + b[512 + i]) + (uint64_t)c[i % 100] + r[i % 64] +
               (uint64_t)k[i % 48];
    errno = EDOM;   /* free leaves errno alone (glibc >= 2.33): so must the collector */
    free(b);
    free(r);
    if (errno != EDOM)
        printf("alloc_prog: free changed errno to %d\n", errno);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
        abort();
    printf("alloc_prog: sum=%llu\n", (unsigned long long)sum);
    return 3;
}
