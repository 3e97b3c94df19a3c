/* samples_prog — threads of known length for pes-collect --samples
 * (tests/e2e/accuracy/samples_e2e.sh). Thread i reads its own array of
 * 256 longs cyclically, LEN_i loads in all (argv: LEN_0 LEN_1 ...), so every
 * sampled use is reused after 255 accesses strictly between, and the thread
 * makes exactly LEN_i instrumented loads plus the one store of its result.
 * Prints the sum of what each thread read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 256

struct job {
    long data[WIDTH];
    unsigned long len;
    long sum;
};

static void *run(void *arg)
{
    struct job *j = arg;
    const volatile long *d = j->data;   /* volatile: one load per iteration, no vectors */
    long s = 0;
    for (unsigned long i = 0; i < j->len; i++)
        s += d[i % WIDTH];
    j->sum = s;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc - 1;
    if (n < 1) {
        fprintf(stderr, "usage: samples_prog LEN...\n");
        return 2;
    }
    struct job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    if (!jobs || !tids)
        return 1;
    for (int t = 0; t < n; t++) {
        jobs[t].len = strtoul(argv[t + 1], NULL, 10);
        for (int k = 0; k < WIDTH; k++)
            jobs[t].data[k] = k + t;
    }
    for (int t = 0; t < n; t++)
        pthread_create(&tids[t], NULL, run, &jobs[t]);
    long total = 0;
    for (int t = 0; t < n; t++) {
        pthread_join(tids[t], NULL);
        total += jobs[t].sum;
    }
    printf("sum %ld\n", total);
    free(jobs);
    free(tids);
    return 3;   /* a non-zero status the collector must pass on */
}
