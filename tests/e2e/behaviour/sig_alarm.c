/* sig_alarm — a SIGALRM handler (normal stack) that writes a global array,
 * every 2 ms (setitimer), while the main thread sweeps memory. The handler's
 * first TICKS runs decide the output; the work done meanwhile does not. */
#include <signal.h>
#include <sys/time.h>

#include "bh.h"

#define TICKS 50
static volatile sig_atomic_t ticks;
static unsigned long hist[64];

static void on_alarm(int sig)
{
    (void)sig;
    long n = ticks;
    if (n < TICKS)
        for (int i = 0; i < 64; i++)
            hist[i] = hist[i] * 7 + (unsigned long)(n + i);
    ticks = (sig_atomic_t)(n + 1);
}

int main(void)
{
    static unsigned long a[4096];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (ticks < TICKS)
        bh_sweep(a, 4096, 1);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    unsigned long h = 0;
    for (int i = 0; i < 64; i++)
        h = h * 31 + hist[i];
    printf("sig_alarm: %d ticks handled, hist %lx\n", TICKS, h);
    static unsigned long b[1000];
    printf("sig_alarm: sweep %lx\n", bh_sweep(b, 1000, 100));
    return 0;
}
