/* sig_altstack — a SIGUSR1 handler on the main thread's own sigaltstack,
 * raised by another thread (pthread_kill) while main sweeps memory. The
 * sender waits for each signal to be handled before sending the next, so the
 * handler runs exactly SIGNALS times and writes a global array each time. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "bh.h"

#define SIGNALS 200
static volatile sig_atomic_t handled, on_alt;
static unsigned long hist[64];
static pthread_t main_thread;

static void on_usr1(int sig)
{
    (void)sig;
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
        on_alt = on_alt + 1;
    long n = handled;
    for (int i = 0; i < 64; i++)
        hist[i] = hist[i] * 5 + (unsigned long)(n ^ i);
    handled = (sig_atomic_t)(n + 1);
}

static void *sender(void *arg)
{
    (void)arg;
    for (long k = 0; k < SIGNALS; k++) {
        pthread_kill(main_thread, SIGUSR1);
        for (long spin = 0; handled <= k; spin++) {
            if (spin > 100000000L)
                abort();   /* a lost signal: fail loudly, never hang */
            sched_yield();
        }
    }
    return NULL;
}

int main(void)
{
    static unsigned long a[4096];
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0};
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
        return 3;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    while (handled < SIGNALS)
        bh_sweep(a, 4096, 1);
    pthread_join(t, NULL);
    unsigned long h = 0;
    for (int i = 0; i < 64; i++)
        h = h * 31 + hist[i];
    printf("sig_altstack: %d signals handled, %s on the alternate stack, hist %lx\n", SIGNALS,
           on_alt == SIGNALS ? "all" : "NOT all", h);
    return 0;
}
