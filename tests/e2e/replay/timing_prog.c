/*
 * timing_prog.c [spin|join] LOADS_FILE — two threads, for pes-replay's note on
 * counts that depend on thread timing (replay_timing.sh).
 * spin: the main thread polls `flag` until the worker, after its work,
 *       stores 1 there; the number of polls depends on the schedule, and
 *       the program writes it to LOADS_FILE (counted in a register, so the
 *       poll is the loop's only memory access).
 * join: the main thread joins the worker and then loads `flag` 8 times in a
 *       row: repeated loads, but no store by another thread while they run.
 * The output (a checksum) is the same either way.
 */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { N = 4096, ROUNDS = 200 };
static double data[N];
static _Atomic int flag;
static sem_t polling;   /* libc's, not instrumented: no access in the trace */

static void *worker(void *arg) {
    sem_wait(&polling);   /* the work starts once the main thread polls (spin) or waits in join */
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < N; i++) data[i] = data[i] * 0.5 + i;
    atomic_store_explicit(&flag, 1, memory_order_release);
    return arg;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int spin = strcmp(argv[1], "spin") == 0;
    pthread_t t;
    sem_init(&polling, 0, 0);
    pthread_create(&t, NULL, worker, NULL);
    unsigned long loads = 1, seen = 0;
    sem_post(&polling);
    if (spin) {
        while (!atomic_load_explicit(&flag, memory_order_acquire)) {   /* SPIN-LOAD */
            loads++;
            sched_yield();   /* no memory access of this program: the poll stays the only one */
        }
        pthread_join(t, NULL);
    } else {
        pthread_join(t, NULL);
        for (int k = 0; k < 8; k++) seen += (unsigned long)atomic_load_explicit(&flag, memory_order_relaxed);
        loads = seen;
    }
    double s = 0;
    for (int i = 0; i < N; i++) s += data[i];
    printf("%.6e\n", s);
    FILE *f = fopen(argv[2], "w");
    if (!f) return 1;
    fprintf(f, "%lu\n", loads);
    return fclose(f) != 0;
}
