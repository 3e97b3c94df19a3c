/* rt_signals.c — fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, and
 * SIGHUP/SIGINT/SIGQUIT/SIGTERM while they have their default action): flush
 * what can be flushed, close the trace, then let the signal do what it would
 * have done without us, so the exit status is unchanged. Also the alternate
 * signal stacks the runtime's own handlers run on. */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "core/core.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE, SIGABRT,
                            SIGHUP,  SIGINT, SIGQUIT, SIGTERM};
#define N_FATAL           (sizeof fatal / sizeof fatal[0])
#define FIRST_TERMINATION 5 /* from here: only taken over while SIG_DFL (^C of a long run) */
static struct sigaction previous[N_FATAL];
static int ours[N_FATAL];
static int installed;

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static int slot(int sig)
{
    for (size_t i = 0; i < N_FATAL; i++)
        if (fatal[i] == sig)
            return (int)i;
    return -1;
}

/* Flushes and closes the trace, then ends the process as the signal would
 * have without us. */
static void finish_and_reraise(int sig, const siginfo_t *info)
{
    struct sigaction *prev = &previous[slot(sig)];
    if (!pes_rt_writer_is_self())
        pes_rt_shutdown(is_fault(sig) || sig == SIGABRT ? PES_RT_STOP_FAULT : PES_RT_STOP_TERM);
    pes_rt_real_sigaction(sig, prev, NULL);
    /* A hardware fault (si_code > 0) re-executes the faulting instruction
     * under the old disposition when we return; anything else (kill, raise,
     * abort, the terminal) is raised again and delivered when we return. */
    if (!(is_fault(sig) && info && info->si_code > 0))
        raise(sig);
}

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    int i = slot(sig);
    if (i < 0)
        return;
    struct sigaction *prev = &previous[i];
    /* A handler installed before ours may recover (e.g. a GC write barrier):
     * call it and keep tracing. If it does not return, nothing is flushed. */
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        if (prev->sa_flags & SA_SIGINFO)
            prev->sa_sigaction(sig, info, uc);
        else
            prev->sa_handler(sig);
        return;
    }
    /* This thread is inside the runtime and may hold its locks: a signal
     * sent to the process waits until the runtime is left (pes_rt_leave).
     * The runtime's waits (a buffer from the writers, the final flush) end
     * at once, so that is soon whatever the writers do. A fault there is the
     * runtime's own: flush what trylock allows. */
    if (pes_rt_in_runtime() && !(is_fault(sig) && info->si_code > 0)) {
        pes_rt_defer_signal(sig);
        pes_rt_writer_interrupt();
        return;
    }
    finish_and_reraise(sig, info);
}

void pes_rt_signals_deliver_deferred(int sig)
{
    if (slot(sig) >= 0)
        finish_and_reraise(sig, NULL);
}

void pes_rt_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FATAL; i++) {
        if (pes_rt_real_sigaction(fatal[i], NULL, &previous[i]) != 0)
            continue;
        if (i >= FIRST_TERMINATION && previous[i].sa_handler != SIG_DFL)
            continue; /* ignored (nohup) or handled: not ours to change */
        ours[i] = pes_rt_real_sigaction(fatal[i], &sa, NULL) == 0;
    }
    installed = 1;
}

/* fork child: it does not trace, so it gets the dispositions it would have had. */
void pes_rt_signals_restore(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < N_FATAL; i++) {
        struct sigaction cur;
        if (ours[i] && pes_rt_real_sigaction(fatal[i], NULL, &cur) == 0 &&
            cur.sa_sigaction == on_fatal)
            pes_rt_real_sigaction(fatal[i], &previous[i], NULL);
    }
    installed = 0;
}

#define ALTSTACK_SIZE (64 * 1024)

/* Stacks of ended threads, for the next ones: an munmap in a running
 * multithreaded process shoots down the TLBs of every CPU that runs one of its
 * threads, and a program that starts many short threads paid one per thread
 * (issue 29). Each free stack's first word links to the next. */
#define ALTSTACK_SPARE_MAX 64
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static void *spare;
static unsigned n_spare;

static void *altstack_get(void)
{
    void *p = NULL;
    /* tried only: a set-up may run in a signal handler (a PMU overflow's
     * first arm), which must not wait for the thread it interrupted */
    if (pthread_mutex_trylock(&spare_lock) == 0) {
        p = spare;
        if (p) {
            memcpy(&spare, p, sizeof spare);
            n_spare--;
        }
        pthread_mutex_unlock(&spare_lock);
    }
    if (p)
        return p;
    p = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void altstack_put(void *p)
{
    pthread_mutex_lock(&spare_lock);
    if (n_spare < ALTSTACK_SPARE_MAX) {
        memcpy(p, &spare, sizeof spare);
        spare = p;
        n_spare++;
        p = NULL;
    }
    pthread_mutex_unlock(&spare_lock);
    if (p)
        munmap(p, ALTSTACK_SIZE);
}

void pes_rt_altstack_setup(struct pes_rt_thread *t)
{
    stack_t cur;
    if (t->s.altstack)
        return;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return; /* the application's own alternate stack serves */
    void *p = altstack_get();
    if (!p)
        return;
    stack_t ss = {.ss_sp = p, .ss_size = ALTSTACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        altstack_put(p);
        return;
    }
    t->s.altstack = p;
}

void pes_rt_altstack_release(struct pes_rt_thread *t)
{
    if (!t->s.altstack)
        return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    stack_t cur;
    /* not on it (thread exit, no handler runs): once disabled, no signal uses it */
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == t->s.altstack && sigaltstack(&ss, NULL) == 0)
        altstack_put(t->s.altstack);
    t->s.altstack = NULL;
}
