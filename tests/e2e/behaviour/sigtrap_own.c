/* sigtrap_own — the program's own SIGTRAP handler (SA_SIGINFO), which writes a
 * global array, and raise(SIGTRAP) between sweeps; the collector's watchpoints
 * also use SIGTRAP. */
#include <signal.h>

#include "bh.h"

#define RAISES 100
static volatile sig_atomic_t traps, from_raise;
static unsigned long hist[32];

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_TKILL || si->si_code == SI_USER)
        from_raise = from_raise + 1;
    long n = traps;
    for (int i = 0; i < 32; i++)
        hist[i] = hist[i] * 3 + (unsigned long)(n + i);
    traps = (sig_atomic_t)(n + 1);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);
    static unsigned long a[2000];
    unsigned long s = 0;
    for (int k = 0; k < RAISES; k++) {
        s = s * 3 + bh_sweep(a, 2000, 5);
        raise(SIGTRAP);
    }
    unsigned long h = 0;
    for (int i = 0; i < 32; i++)
        h = h * 31 + hist[i];
    printf("sigtrap_own: %d handled, %d from raise, hist %lx, sweep %lx\n", (int)traps,
           (int)from_raise, h, s);
    return 0;
}
