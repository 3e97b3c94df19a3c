/* rt_prog — a hand-instrumented program driving libpes-rt through the rt_abi
 * inline sequence (no LLVM pass). Scenarios (argv[1]):
 *   single N           main thread emits N records
 *   threads T N        T threads emit N records each (main emits none)
 *   early T N          like threads, but odd workers pthread_exit after N/2
 *   abort N            main emits N records, then abort()
 *   segv N             main emits N records, then stores through a null pointer
 *   exit3 N            main emits N records, exit(3)
 *   fork N             main emits N, forks a child that emits N and exits,
 *                      then emits N more (the child must not appear in the trace)
 *   running T          T threads record without end; main exits while they run
 *                      (each worker's trace must be a prefix of its pattern)
 *   running-abort T    the same, but main calls abort()
 *   running-wait T     the same, but main prints "started" and waits for a signal
 *   cancel R           R rounds: 2 threads record with asynchronous cancellation
 *                      and are cancelled at once (the cancel lands anywhere,
 *                      also while they wait for a buffer in the runtime)
 *   echo ARGS...       prints each argument as [ARG] on stdout
 *   endless            main records without end (prints "started" after the
 *                      first 1000 records; a signal ends it)
 *   own-term           main installs its own SIGTERM handler, prints "started",
 *                      records until the handler ran, then exits 0
 * Every scenario prints fixed lines on stdout and stderr. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pes_rt_inline.h"
#include "rt_pattern.h"

static uint32_t id_base_a, id_base_b;

static const char strtab[] = "rt_prog.c\0worker\0entry\0body\0";
/* strtab offsets */
enum { S_FILE = 0, S_FUNC = 10, S_ENTRY = 17, S_BODY = 23 };

static const struct pes_rt_site sites_a[RT_A_SITES] = {
    {10, 3, PES_KIND_LOAD, 0, 8, 0, S_FILE, S_FUNC},
    {11, 5, PES_KIND_STORE, 0, 8, 1, S_FILE, S_FUNC},
    {12, 7, PES_KIND_RMW, PES_SITE_ATOMIC, 4, 1, S_FILE, S_FUNC},
};
/* the body carries the model's block facts (ABI 6) through to the trace */
static const struct pes_rt_bb bbs_a[RT_A_BBS] = {
    {.function = S_FUNC, .label = S_ENTRY, .n_sites = 1, .ops = {0}},
    {.function = S_FUNC,
     .label = S_BODY,
     .n_sites = 2,
     .flags = PES_BB_PARALLEL | PES_BB_MODEL_FACTS,
     .ops = {1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0},
     .forks = 0,
     .barriers = 1,
     .instrs = {1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0},
     .chain = {[PES_OP_INT_ADD] = 1}},
};
static const struct pes_rt_site sites_b[RT_B_SITES] = {
    {20, 1, PES_KIND_COPY_SRC, 0, 0, 0, S_FILE, S_FUNC},
};
static const struct pes_rt_bb bbs_b[RT_B_BBS] = {
    {.function = S_FUNC, .label = S_BODY, .n_sites = 1, .ops = {0}}};

static struct pes_rt_module mod_a = {PES_RT_ABI_VERSION, RT_A_SITES, RT_A_BBS, sizeof strtab,
                                     sites_a, bbs_a, strtab, "rt_prog_a.c", &id_base_a};
static struct pes_rt_module mod_b = {PES_RT_ABI_VERSION, RT_B_SITES, RT_B_BBS, sizeof strtab,
                                     sites_b, bbs_b, strtab, "rt_prog_b.c", &id_base_b};

__attribute__((constructor(PES_RT_CTOR_PRIORITY))) static void register_modules(void)
{
    __pes_register_module(&mod_a);
    __pes_register_module(&mod_b);
}

static void emit(uint32_t k, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        struct rt_expect e = rt_pattern(k, i);
        uint32_t id = (e.module ? id_base_b : id_base_a) + e.local;
        PES_TEST_RECORD(e.addr, id, e.extra);
    }
}

struct job {
    uint32_t k;
    uint64_t n;
    int early;
};

static void *worker(void *p)
{
    struct job *j = p;
    if (j->early && j->k % 2 == 1) {
        emit(j->k, 0, j->n / 2);
        pthread_exit(NULL);
    }
    emit(j->k, 0, j->n);
    return NULL;
}

static int started;

static void *endless(void *p)
{
    uint32_t k = (uint32_t)(uintptr_t)p;
    for (uint64_t c = 0; c < (1ull << 27); c++) {   /* addresses stay below bit 40 */
        emit(k, c * 1000, (c + 1) * 1000);
        if (c == 0)
            __atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static long progress;
static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static void *cancellable(void *p)
{
    uint32_t k = (uint32_t)(uintptr_t)p;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    for (uint64_t c = 0;; c++) {
        emit(k, (c % 1000) * 64, (c % 1000 + 1) * 64);
        __atomic_fetch_add(&progress, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int run_cancel(uint64_t rounds)
{
    uint64_t cancelled = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        pthread_t th[2];
        __atomic_store_n(&progress, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, cancellable, (void *)(uintptr_t)(i + 1));
        while (__atomic_load_n(&progress, __ATOMIC_ACQUIRE) < (long)(2 + r % 7))
            sched_yield();
        for (int i = 0; i < 2; i++)
            pthread_cancel(th[i]);
        for (int i = 0; i < 2; i++) {
            void *ret;
            pthread_join(th[i], &ret);
            cancelled += ret == PTHREAD_CANCELED;
        }
    }
    printf("rt_prog: %llu of %llu threads cancelled\n", (unsigned long long)cancelled,
           (unsigned long long)(2 * rounds));
    return 0;
}

static uint64_t number(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end) {
        fprintf(stderr, "rt_prog: bad number '%s'\n", s);
        exit(64);
    }
    return v;
}

static int run_threads(int t, uint64_t n, int early)
{
    pthread_t *th = calloc((size_t)t, sizeof *th);
    struct job *jobs = calloc((size_t)t, sizeof *jobs);
    for (int i = 0; i < t; i++) {
        jobs[i] = (struct job){(uint32_t)i + 1, n, early};
        pthread_create(&th[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(jobs);
    return 0;
}

int main(int argc, char **argv)
{
    printf("rt_prog: start\n");
    fprintf(stderr, "rt_prog: a line on stderr\n");
    fflush(stdout);
    if (argc < 2)
        return 64;
    const char *s = argv[1];
    if (strcmp(s, "single") == 0 && argc == 3) {
        emit(0, 0, number(argv[2]));
    } else if ((strcmp(s, "threads") == 0 || strcmp(s, "early") == 0) && argc == 4) {
        run_threads((int)number(argv[2]), number(argv[3]), s[0] == 'e');
    } else if (strcmp(s, "abort") == 0 && argc == 3) {
        emit(0, 0, number(argv[2]));
        printf("rt_prog: aborting\n");
        fflush(stdout);
        abort();
    } else if (strcmp(s, "segv") == 0 && argc == 3) {
        emit(0, 0, number(argv[2]));
        printf("rt_prog: faulting\n");
        fflush(stdout);
        *(volatile int *)(uintptr_t)number("0") = 1;
    } else if (strcmp(s, "exit3") == 0 && argc == 3) {
        emit(0, 0, number(argv[2]));
        printf("rt_prog: exit 3\n");
        exit(3);
    } else if (strcmp(s, "fork") == 0 && argc == 3) {
        uint64_t n = number(argv[2]);
        emit(0, 0, n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            emit(7, 0, n);   /* a worker number the checker does not expect */
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        emit(0, n, 2 * n);
        printf("rt_prog: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
    } else if (strncmp(s, "running", 7) == 0 && argc == 3) {
        int t = (int)number(argv[2]);
        for (int i = 0; i < t; i++) {
            pthread_t th;
            pthread_create(&th, NULL, endless, (void *)(uintptr_t)(i + 1));
            pthread_detach(th);
        }
        while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < t)
            usleep(1000);
        if (strcmp(s, "running-wait") == 0) {
            printf("rt_prog: started\n");
            fflush(stdout);
            for (;;)
                pause();
        }
        if (s[7] == '-') {
            printf("rt_prog: aborting\n");
            fflush(stdout);
            abort();
        }
    } else if (strcmp(s, "cancel") == 0 && argc == 3) {
        run_cancel(number(argv[2]));
    } else if (strcmp(s, "endless") == 0 || strcmp(s, "own-term") == 0) {
        if (s[0] == 'o') {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_term;
            sigaction(SIGTERM, &sa, NULL);
        }
        for (uint64_t c = 0; c < (1ull << 27) && !got_term; c++) {
            emit(0, c * 1000, (c + 1) * 1000);
            if (c == 0) {
                printf("rt_prog: started\n");
                fflush(stdout);
            }
        }
        if (got_term)
            printf("rt_prog: SIGTERM handled\n");
    } else if (strcmp(s, "echo") == 0) {
        for (int i = 2; i < argc; i++)
            printf("[%s]\n", argv[i]);
        emit(0, 0, 10);
    } else {
        fprintf(stderr, "rt_prog: unknown scenario\n");
        return 64;
    }
    printf("rt_prog: done\n");
    return 0;
}
