/* samp_prog — a hand-instrumented program (the rt_abi inline sequence after
 * real accesses, no LLVM pass) whose reuse, invalidation and communication
 * events are known by construction. Scenarios (argv[1]):
 *   reuse K R         R rounds of: load a[i], store b[i] for i < K: every access
 *                     is re-touched after exactly 2K accesses
 *   stream N          N loads of distinct words: no reuse
 *   pair F S          thread A does F (r|w) on x; then thread B S (r|w) on x;
 *                     then A loads x again (Table 6.2)
 *   triple F S        three threads on sockets 0,1,0 (--sockets 2): T0 does F on
 *                     x, then T2 S on x; then T0 loads y, T1 does S on y, T0
 *                     loads y again (Table 6.3: all three columns)
 *   comm false|true|none R
 *                     two threads store alternately, R rounds: adjacent words of
 *                     one line, the same word, or different lines
 *   threads T K R     T threads each run `reuse K R` on private arrays
 *   pingpong K R      two threads take R turns each, strictly alternating: a
 *                     turn loads K private words and stores K shared ones (the
 *                     other thread's stores): the same accesses, samples and
 *                     traps in every run with one seed
 *   exit-watched T    threads sample and exit while others still watch; main goes on
 *   fork K R          reuse, fork (child: reuse then exec /bin/echo), reuse again
 *   sigtrap K R       installs its own SIGTRAP handler, raises SIGTRAP around reuse
 *   handler K R H     one store, then R rounds of: raise(SIGUSR1), whose handler stores
 *                     H words, then K loads and K stores: R*K loads, R*(K+H)+1 stores
 *   calls K R         R rounds of: a CALL record, K loads and K stores, a RETURN
 *                     record (call edges, pes/trace.h): R*K loads, R*K stores
 * Prints fixed lines; exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pes_rt_inline.h"

static uint32_t id_base;
static const char strtab[] = "samp_prog.c\0f\0";
static const struct pes_rt_site sites[3] = {
    {1, 1, PES_KIND_LOAD, 0, 8, 0, 0, 12},
    {2, 1, PES_KIND_STORE, 0, 8, 0, 0, 12},
    {3, 1, PES_KIND_CALL, 0, 0, 0, 0, 12}, /* names CALL records only */
};
#define CALL_SITE 2
#define BB_ID     3
static const struct pes_rt_bb bbs[1] = {{.function = 12, .label = 12, .n_sites = 3, .ops = {0}}};
static struct pes_rt_module mod = {PES_RT_ABI_VERSION, 3, 1, sizeof strtab, sites, bbs, strtab,
                                   "samp_prog.c", &id_base};

__attribute__((constructor(PES_RT_CTOR_PRIORITY))) static void register_module(void)
{
    __pes_register_module(&mod);
}

/* The access first, then its record (the compiler may not swap them). */
static inline long load(volatile long *p)
{
    long v = *p;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    PES_TEST_RECORD((uintptr_t)p, id_base + 0, 0);
    return v;
}
static inline void store(volatile long *p, long v)
{
    *p = v;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    PES_TEST_RECORD((uintptr_t)p, id_base + 1, 0);
}

/* A basic-block record: takes the slow path when another thread asked for it
 * (new watch slots) without being an access, so it is never sampled. */
static inline void sync_point(void)
{
    PES_TEST_RECORD(0, id_base + BB_ID, 0);
}

/* The arrays are never freed: free() writes its own pointers into the first
 * words of a chunk (glibc's tcache next and key), so a watch still armed on
 * a[0..1] or b[0..1] after the last round would trap in free() — a true reuse
 * at a distance other than 2K — and memory handed to another thread or to the
 * runtime would be a true invalidation. Which addresses stay watched depends
 * only on the sampler's seed. */
static long reuse(long k, long rounds)
{
    volatile long *a = calloc((size_t)k, sizeof(long));
    volatile long *b = calloc((size_t)k, sizeof(long));
    long sum = 0;
    if (!a || !b)
        exit(3);
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < k; i++) {
            sum += load(&a[i]);
            store(&b[i], r);
        }
    return sum;
}

/* reuse's rounds, each bracketed like a call of an instrumented function:
 * neither record is an access, so the counts and samples are reuse's */
static long calls(long k, long rounds)
{
    volatile long *a = calloc((size_t)k, sizeof(long));
    volatile long *b = calloc((size_t)k, sizeof(long));
    long sum = 0;
    if (!a || !b)
        exit(3);
    uint64_t sp = (uintptr_t)__builtin_frame_address(0);
    for (long r = 0; r < rounds; r++) {
        PES_TEST_RECORD(sp, PES_ID_CALL, id_base + CALL_SITE);
        for (long i = 0; i < k; i++) {
            sum += load(&a[i]);
            store(&b[i], r);
        }
        PES_TEST_RECORD(sp, PES_ID_RETURN, 0);
    }
    return sum;
}

static pthread_barrier_t bar;
static struct {
    _Alignas(64) long x[8];
    _Alignas(64) long y[8];
    _Alignas(64) long other[8];
} shared;

static void access_(int kind, volatile long *p)
{
    if (kind == 'w')
        store(p, 1);
    else
        load(p);
}

static int first_kind, second_kind;

static void *pair_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&bar);   /* A sampled x */
    sync_point();                 /* arms B's watchpoints (W on x) */
    access_(second_kind, &shared.x[0]);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);   /* A done */
    return NULL;
}

static void pair(void)
{
    pthread_t b;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_create(&b, NULL, pair_b, NULL);
    access_(first_kind, &shared.x[0]);   /* A: thread index 0, sampled (period 1) */
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);          /* B accessed x */
    load(&shared.x[0]);                  /* reuse unless B wrote x */
    pthread_barrier_wait(&bar);
    pthread_join(b, NULL);
}

/* triple: thread index k = order of first access (enforced by barriers) */
static void *triple_t(void *arg)
{
    long k = (long)arg;
    for (long step = 0; step < 3; step++) {
        if (step == k) {
            if (k == 0) {
                access_(first_kind, &shared.x[0]);
            } else if (k == 1) {
                sync_point();
            } else {
                sync_point();
                access_(second_kind, &shared.x[0]);   /* same socket as T0 */
            }
        }
        pthread_barrier_wait(&bar);
    }
    /* other socket: T0 loads y, then T1 does S on y */
    if (k == 0)
        load(&shared.y[0]);
    pthread_barrier_wait(&bar);
    if (k == 1) {
        sync_point();
        access_(second_kind, &shared.y[0]);
    }
    pthread_barrier_wait(&bar);
    if (k == 0)
        load(&shared.y[0]);   /* same core: never a shared-cache reuse */
    pthread_barrier_wait(&bar);
    return NULL;
}

static void triple(void)
{
    pthread_t t[3];
    pthread_barrier_init(&bar, NULL, 3);
    for (long k = 0; k < 3; k++)
        pthread_create(&t[k], NULL, triple_t, (void *)k);
    for (int k = 0; k < 3; k++)
        pthread_join(t[k], NULL);
}

static int comm_kind;   /* 'f' false, 't' true, 'n' none */
static long comm_rounds;
static int turn;

static void *comm_t(void *arg)
{
    long k = (long)arg;
    volatile long *mine = &shared.x[0];
    if (k == 1)
        mine = comm_kind == 'f' ? &shared.x[1] : comm_kind == 't' ? &shared.x[0] : &shared.other[0];
    for (long r = 0; r < comm_rounds; r++) {
        /* bounded spin on an uninstrumented flag: strict alternation */
        for (long spin = 0; __atomic_load_n(&turn, __ATOMIC_ACQUIRE) != k; spin++) {
            if (spin > 2000000000L)
                exit(4);
            sched_yield();
        }
        store(mine, r);
        __atomic_store_n(&turn, (int)(1 - k), __ATOMIC_RELEASE);
    }
    return NULL;
}

static void comm(void)
{
    pthread_t t[2];
    for (long k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, comm_t, (void *)k);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
}

/* pingpong: while one thread takes its turn, the other spins on an
 * uninstrumented flag, so it enters the runtime (and re-arms) only at its
 * own next access: every run makes the same decisions */
static long pp_k, pp_rounds;
static int pp_turn;
static volatile long *pp_shared, *pp_mine[2];

static void *pingpong_t(void *arg)
{
    long k = (long)arg;
    volatile long *mine = pp_mine[k];   /* allocated by main: the first turn sets the thread up */
    for (long r = 0; r < pp_rounds; r++) {
        for (long spin = 0; __atomic_load_n(&pp_turn, __ATOMIC_ACQUIRE) != k; spin++) {
            if (spin > 2000000000L)
                exit(4);
            sched_yield();
        }
        for (long i = 0; i < pp_k; i++) {
            load(&mine[i]);
            store(&pp_shared[i], r);
        }
        __atomic_store_n(&pp_turn, (int)(1 - k), __ATOMIC_RELEASE);
    }
    return NULL;   /* the arrays are never freed (see reuse) */
}

static void pingpong(void)
{
    pthread_t t[2];
    pp_shared = calloc((size_t)pp_k, sizeof(long));
    pp_mine[0] = calloc((size_t)pp_k, sizeof(long));
    pp_mine[1] = calloc((size_t)pp_k, sizeof(long));
    if (!pp_shared || !pp_mine[0] || !pp_mine[1])
        exit(3);
    for (long k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, pingpong_t, (void *)k);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
}

static long tk, tr;
static void *reuse_t(void *arg)
{
    (void)arg;
    reuse(tk, tr);
    return NULL;
}

static void *exit_t(void *arg)
{
    long k = (long)arg;
    volatile long *mine = calloc(64, sizeof(long));
    long stackvar[16] = {0};
    for (int r = 0; r < 200; r++)
        for (int i = 0; i < 64; i++) {
            load(&mine[i]);
            store(&stackvar[i % 16], r);
            load(&shared.x[(k + (unsigned)i) % 8]);
        }
    return (void *)mine;   /* exits while other threads may watch these addresses */
}

static void on_trap(int sig)
{
    (void)sig;
    static const char msg[] = "samp_prog: own SIGTRAP handler\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
}

/* SIGUSR1: its records wait in the runtime's reserve until main's next
 * access, whose slow path moves them into the buffer; with H above the
 * buffer's size that move always switches buffers. */
static volatile long *handler_words;
static long handler_n;
static void on_usr1(int sig)
{
    (void)sig;
    for (long j = 0; j < handler_n; j++)
        store(&handler_words[j], j);
}

static void handler(long k, long rounds, long h)
{
    volatile long *a = calloc((size_t)k, sizeof(long));
    handler_words = calloc((size_t)h, sizeof(long));
    if (!a || !handler_words)
        exit(3);
    handler_n = h;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    /* an access sets the thread up (under TSan malloc does not): a handler
     * that runs before is not recorded */
    store(&a[0], 0);
    /* the signal first: an access of main follows every handler (a reserve
     * still full at exit is emptied after the TOTALS event) */
    for (long r = 0; r < rounds; r++) {
        raise(SIGUSR1);
        for (long i = 0; i < k; i++)
            store(&a[i], load(&a[i]) + r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *s = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* main is thread 0 in every scenario: an allocation makes a thread a
     * traced one (its heap blocks are recorded), before any worker starts */
    static void *volatile block;
    block = malloc(16);
    free(block);
    if (!strcmp(s, "reuse") && argc == 4) {
        reuse(atol(argv[2]), atol(argv[3]));
    } else if (!strcmp(s, "stream") && argc == 3) {
        long n = atol(argv[2]);
        volatile long *a = calloc((size_t)n, sizeof(long));
        for (long i = 0; a && i < n; i++)
            load(&a[i]);
    } else if ((!strcmp(s, "pair") || !strcmp(s, "triple")) && argc == 4) {
        first_kind = argv[2][0];
        second_kind = argv[3][0];
        if (!strcmp(s, "pair"))
            pair();
        else
            triple();
    } else if (!strcmp(s, "comm") && argc == 4) {
        comm_kind = argv[2][0];
        comm_rounds = atol(argv[3]);
        comm();
    } else if (!strcmp(s, "pingpong") && argc == 4) {
        pp_k = atol(argv[2]);
        pp_rounds = atol(argv[3]);
        pingpong();
    } else if (!strcmp(s, "threads") && argc == 5) {
        int n = atoi(argv[2]);
        tk = atol(argv[3]);
        tr = atol(argv[4]);
        pthread_t t[64];
        for (int i = 0; i < n && i < 64; i++)
            pthread_create(&t[i], NULL, reuse_t, NULL);
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(s, "exit-watched") && argc == 3) {
        int n = atoi(argv[2]);
        for (int round = 0; round < 4; round++) {
            pthread_t t[64];
            for (long i = 0; i < n && i < 64; i++)
                pthread_create(&t[i], NULL, exit_t, (void *)i);
            for (int i = 0; i < n && i < 64; i++) {
                void *mem;
                pthread_join(t[i], &mem);
                free(mem);
            }
            reuse(100, 50);
        }
    } else if (!strcmp(s, "fork") && argc == 4) {
        long k = atol(argv[2]), r = atol(argv[3]);
        reuse(k, r);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            reuse(k, r);
            execl("/bin/echo", "echo", "samp_prog: child exec", (char *)NULL);
            _exit(5);
        }
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 6;
        reuse(k, r);
    } else if (!strcmp(s, "sigtrap") && argc == 4) {
        signal(SIGTRAP, on_trap);
        raise(SIGTRAP);
        reuse(atol(argv[2]), atol(argv[3]));
        raise(SIGTRAP);
    } else if (!strcmp(s, "calls") && argc == 4) {
        calls(atol(argv[2]), atol(argv[3]));
    } else if (!strcmp(s, "handler") && argc == 5) {
        handler(atol(argv[2]), atol(argv[3]), atol(argv[4]));
    } else {
        return 2;
    }
    printf("samp_prog: %s done\n", s);
    return 0;
}
