/* rt_signals.c — fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT):
 * flush what can be flushed, close the trace, then let the signal do what it
 * would have done without us, so the exit status is unchanged. */
#include <signal.h>
#include <string.h>

#include "rt_internal.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define N_FATAL (sizeof fatal / sizeof fatal[0])
static struct sigaction previous[N_FATAL];
static int installed;

static int slot(int sig)
{
    for (size_t i = 0; i < N_FATAL; i++)
        if (fatal[i] == sig)
            return (int)i;
    return -1;
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
    if (!pes_rt_writer_is_self())
        pes_rt_shutdown(1);
    sigaction(sig, prev, NULL);
    /* Sent signals (kill, raise, abort) are raised again and delivered when we
     * return; a fault re-executes the faulting instruction under the old
     * disposition instead. */
    if (info->si_code <= 0 || sig == SIGABRT)
        raise(sig);
}

void pes_rt_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FATAL; i++)
        sigaction(fatal[i], &sa, &previous[i]);
    installed = 1;
}

/* fork child: it does not trace, so it gets the dispositions it would have had. */
void pes_rt_signals_restore(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < N_FATAL; i++) {
        struct sigaction cur;
        if (sigaction(fatal[i], NULL, &cur) == 0 && cur.sa_sigaction == on_fatal)
            sigaction(fatal[i], &previous[i], NULL);
    }
    installed = 0;
}
