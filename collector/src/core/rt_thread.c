/* rt_thread.c — per-thread state. A new thread's __pes_tls is zero, so its
 * first instrumented access takes the slow path, which calls
 * pes_rt_thread_setup; a pthread key destructor flushes it at thread exit. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"

/* initial-exec like __pes_tls (the runtime is never dlopen'ed): no
 * __tls_get_addr call on every slow path */
#define PES_RT_TLS __thread __attribute__((tls_model("initial-exec")))
PES_RT_TLS struct pes_rt_thread *pes_rt_self_tls; /* read inline by rt_alloc.c */
#define self pes_rt_self_tls
static PES_RT_TLS int setup_failed;
static PES_RT_TLS struct pes_record scratch[PES_RT_SCRATCH];
static pthread_key_t exit_key;
PES_RT_TLS int pes_rt_entered_tls; /* in the runtime (pes_rt_enter); read inline by rt_alloc.c */
#define entered pes_rt_entered_tls
static PES_RT_TLS int saved_cancel_state, saved_cancel_type;
static PES_RT_TLS volatile int deferred_signal;

int pes_rt_enter(void)
{
    if (entered)
        return -1;
    /* An asynchronous cancel could strike anywhere, and cond_wait and write
     * are cancellation points: none may end a thread inside the runtime. The
     * type goes first: a cancel from then on is only marked, and acted on in
     * pes_rt_leave. One that strikes before it unwinds a thread that holds
     * nothing and is not yet marked as entered, so its exit flushes as usual.
     * The runtime's own waits are not cancellation points either (glibc 2.36
     * acts in them on a cancel signal sent just before the type changed:
     * rt_writer.c, returned_seq). */
    int type, state;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    saved_cancel_type = type;
    saved_cancel_state = state;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    entered = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static void leave(int restore_cancel)
{
    int cancel_state = saved_cancel_state, cancel_type = saved_cancel_type;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    entered = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int sig = deferred_signal;
    if (sig) {
        deferred_signal = 0;
        pes_rt_signals_deliver_deferred(sig);
    }
    if (!restore_cancel)
        return;
    /* A cancel request that came meanwhile is acted on here, with no lock
     * held. Asynchronous cancellation is restored through pthread_testcancel:
     * glibc 2.36 ends a thread whose pending asynchronous cancel is enabled by
     * pthread_setcancelstate without PTHREAD_CANCELED as its result. */
    pthread_setcancelstate(cancel_state, NULL);
    if (cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS) {
        if (cancel_state == PTHREAD_CANCEL_ENABLE)
            pthread_testcancel();
        pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    }
}

void pes_rt_leave(void)
{
    leave(1);
}

/* The allocator interposer's guard (rt_alloc.c): the entered flag alone. Its
 * path has no cancellation point (futex waits, mutexes, no I/O), so the
 * cancel state need not change, which would cost two calls per malloc. */
int pes_rt_enter_quick(void)
{
    if (entered)
        return -1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    entered = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return 0;
}

void pes_rt_leave_quick(void)
{
    leave(0);
}

PES_RT_TLS int
    pes_rt_in_setup_tls; /* pes_rt_thread_setup runs: its allocations are the runtime's */
#define in_setup pes_rt_in_setup_tls

int pes_rt_thread_setting_up(void)
{
    return in_setup;
}

int pes_rt_in_runtime(void)
{
    return entered;
}

void pes_rt_defer_signal(int sig)
{
    deferred_signal = sig;
}

int pes_rt_signal_pending(void)
{
    return deferred_signal != 0;
}

struct pes_rt_thread *pes_rt_thread_self(void)
{
    return self;
}

/* Records go nowhere: the inline path writes into scratch, which is recycled. */
void pes_rt_thread_use_scratch(void)
{
    /* check clones from now on, their countdown out of the way */
    __atomic_store_n(&__pes_tls.recording, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&__pes_tls.descriptors, 0, __ATOMIC_RELAXED); /* loops record per access */
    __atomic_store_n(&__pes_tls.countdown, PES_RT_CD_OFF, __ATOMIC_RELAXED);
    __pes_tls.cursor = scratch;
    /* atomic: other threads lower it (pes_rt_sample_wake) */
    __atomic_store_n(&__pes_tls.limit, scratch + PES_RT_SCRATCH, __ATOMIC_RELAXED);
}

struct pes_record *pes_rt_thread_scratch(void)
{
    return scratch;
}

void pes_rt_thread_forget_self(void)
{
    self = NULL;
    setup_failed = 1;
    pes_rt_thread_use_scratch();
}

/* CPU -> its socket + 1 (0: not read yet), for the first CPUs: a thread's
 * set-up reads sysfs only for a CPU no thread started on before. */
#define SOCKET_CACHE_CPUS 1024
static int socket_cache[SOCKET_CACHE_CPUS]; /* atomic */

/* Raw system calls: open and read are cancellation points, and this runs
 * inside the runtime (see rt_writer.c, returned_seq). */
static int cpu_socket_read(int cpu)
{
    char path[128];
    if (cpu < 0)
        return -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[16];
    long n = pes_rt_read((int)fd, buf, sizeof buf - 1);
    pes_rt_close((int)fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    long id = strtol(buf, &end, 10);
    return end == buf || id < 0 || id > INT_MAX - 1 ? -1 : (int)id;
}

static int cpu_socket(int cpu)
{
    if (cpu < 0 || cpu >= SOCKET_CACHE_CPUS)
        return cpu_socket_read(cpu);
    int known = __atomic_load_n(&socket_cache[cpu], __ATOMIC_RELAXED);
    if (known)
        return known - 1;
    int socket = cpu_socket_read(cpu);
    __atomic_store_n(&socket_cache[cpu], socket + 1, __ATOMIC_RELAXED); /* -1 (unknown) stays 0 */
    return socket;
}

/* Thread exit: a last THREAD_END record, hand the partial buffer over, then
 * free the buffers once the writer is done with them. */
static void thread_exit_entered(struct pes_rt_thread *t);

static void thread_exit(void *p)
{
    struct pes_rt_thread *t = p;
    if (__atomic_load_n(&pes_rt.child, __ATOMIC_RELAXED))
        return;
    if (pes_rt_enter())
        return; /* pthread_exit in a handler that interrupted the runtime: its records are lost */
    thread_exit_entered(t);
    /* the thread is ending (perhaps cancelled and unwound already): enabling
     * cancellation again here would act on the same request a second time */
    leave(0);
}

static void thread_exit_entered(struct pes_rt_thread *t)
{
    if (pes_rt.sampling)
        pes_rt_sample_backend_stop(t); /* drained and closed: no overflow signal after this */
    int stopped_here = pes_rt_buffer_stop(t, 1, 1) == 0;
    pes_rt_thread_use_scratch(); /* later destructors may still run instrumented code */
    if (pes_rt.sampling) {
        if (pes_rt.mode->thread_exit)
            pes_rt.mode->thread_exit(t); /* no trap after this point */
        pes_rt_altstack_release(t);
        /* stopped here: its last events are queued and nothing adds more */
        if (stopped_here)
            pes_rt_events_retire(t);
    }
    /* others may no longer write its TLS (pes_rt_sample_wake) */
    pthread_mutex_lock(&pes_rt.threads_lock);
    __atomic_store_n(&t->live, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pes_rt.threads_lock);
    /* lock-free readers of its countdown (trap handlers) finish first */
    while (__atomic_load_n(&t->tls_readers, __ATOMIC_SEQ_CST))
        sched_yield();
    if (!stopped_here || !pes_rt.full)
        return; /* stopped by process exit: its buffers are the writer's to read */
    int all_free = 1;
    for (int i = 0; i < PES_RT_NBUF; i++)
        all_free &= pes_rt_writer_wait_free(&t->bufs[i]) == 0;
    if (all_free) {
        for (int i = 0; i < PES_RT_NBUF; i++) {
            free(t->bufs[i].recs);
            t->bufs[i].recs = NULL;
        }
        pes_rt_reserve_free(t);
    }
}

void pes_rt_thread_init_key(void)
{
    pthread_key_create(&exit_key, thread_exit);
}

static struct pes_rt_thread *thread_setup(void);

struct pes_rt_thread *pes_rt_thread_setup(void)
{
    /* The runtime's own threads (the writer pool) never record, even where
     * they run instrumented code: a program that defines a function the
     * runtime calls. Their first slow path leaves them on the scratch buffer
     * with the countdown out of the way. */
    if (setup_failed || !pes_rt_active() || in_setup || pes_rt_in_pool_tls)
        return NULL;
    in_setup = 1;
    struct pes_rt_thread *t = thread_setup();
    in_setup = 0;
    return t;
}

static struct pes_rt_thread *thread_setup(void)
{
    struct pes_rt_thread *t = pes_rt_calloc_lines(1, sizeof *t);
    struct pes_rt_item *it = calloc(1, sizeof *it);
    /* sampling: events and scratch records (an ended thread's where it can) */
    if (!t || !it || (pes_rt.full && pes_rt_buffer_alloc(t)) ||
        (pes_rt.sampling && pes_rt_events_alloc(t))) {
        if (t) {
            for (int i = 0; i < PES_RT_NBUF; i++) {
                free(t->bufs[i].recs);
                free(t->s.evs[i]);
            }
            pes_rt_reserve_free(t);
            free(t->s.scratch);
        }
        free(t);
        free(it);
        setup_failed = 1;
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->tls = &__pes_tls;
    t->tid = gettid();
    int cpu = sched_getcpu();

    it->type = PES_RT_ITEM_THREAD;
    it->heap = 1;
    it->info.parent = UINT32_MAX; /* creator unknown: pthread_create is not wrapped */
    it->info.tid = (uint64_t)t->tid;
    it->info.cpu = cpu;
    it->info.socket = cpu_socket(cpu);
    it->info.start_ticks = pes_rt_now();

    /* Index and THREAD block under one lock: THREAD blocks appear in index order. */
    pthread_mutex_lock(&pes_rt.threads_lock);
    if (__atomic_load_n(&pes_rt.stopping, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&pes_rt.threads_lock);
        for (int i = 0; i < PES_RT_NBUF; i++) {
            free(t->bufs[i].recs);
            free(t->s.evs[i]);
        }
        pes_rt_reserve_free(t);
        free(t->s.scratch);
        free(t);
        free(it);
        setup_failed = 1;
        return NULL;
    }
    t->index = pes_rt.n_threads++;
    t->live = 1;
    if (pes_rt.sampling) {
        pes_rt_sample_thread_init(t);
        t->s.socket = pes_rt.cfg.sockets ? t->index % pes_rt.cfg.sockets
                                         : (uint32_t)(it->info.socket < 0 ? 0 : it->info.socket);
        it->info.socket = (int32_t)t->s.socket;
    }
    it->info.index = t->index;
    t->next = pes_rt.threads;
    __atomic_store_n(&pes_rt.threads, t, __ATOMIC_RELEASE); /* read by trap handlers */
    pes_rt_writer_push_quiet(it); /* encoded with the thread's first events, in queue order */
    pthread_mutex_unlock(&pes_rt.threads_lock);

    self = t;
    pthread_setspecific(exit_key, t);
    __pes_tls.cursor = pes_rt.full ? t->bufs[0].recs : t->s.scratch;
    __atomic_store_n(&__pes_tls.limit, __pes_tls.cursor, __ATOMIC_RELAXED);
    pes_rt_gate_thread_init(t);
    /* a full trace records in the recording clones (a check clone that runs
     * anyway finds the countdown due); sampling arms the check path's
     * countdown at its first slow path; the PMU backends count alone */
    __atomic_store_n(&__pes_tls.recording, (uint32_t)pes_rt.full, __ATOMIC_RELAXED);
    if (pes_rt.descriptors) {
        /* loops write descriptor chunks (rt_loop.c); never once a thread
         * stopping this one (process exit) has turned them off */
        pthread_mutex_lock(&t->lock);
        if (!t->stopped)
            __atomic_store_n(&__pes_tls.descriptors, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&t->lock);
    }
    int64_t cd = pes_rt.sampling && !pes_rt.full && pes_rt_hardware_samples() ? PES_RT_CD_OFF : 0;
    __atomic_store_n(&t->s.cd_init, cd, __ATOMIC_RELAXED); /* read by other threads */
    __atomic_store_n(&__pes_tls.countdown, cd, __ATOMIC_RELAXED);
    if (pes_rt.sampling) {
        t->s.scan = __pes_tls.cursor;
        /* the alternate signal stack comes with the thread's first
         * watchpoint (modes/watch.c): a thread that never arms one needs none */
        /* arm the slots published before this thread existed */
        __atomic_store_n(&t->s.wake, 1, __ATOMIC_RELAXED);
        if (pes_rt.backend->open)
            pes_rt.backend->open(t);
    }
    /* its stack is recorded at the thread's next entry into the runtime from
     * its own code (pes_rt_alloc_stack_due): a set-up inside malloc may run
     * inside libc with its locks held, which pthread_getattr_np takes */
    t->stack_pending = 1;
    return t;
}
