/* longjmp — longjmp out of nested calls that sweep memory, and siglongjmp out
 * of a SIGUSR1 handler (raised in the middle of the work). */
#include <setjmp.h>
#include <signal.h>

#include "bh.h"

static jmp_buf env;
static sigjmp_buf senv;
static unsigned long a[2000];

__attribute__((noinline)) static unsigned long nest(int depth)
{
    unsigned long s = bh_sweep(a, 2000, 2);
    if (depth == 0)
        longjmp(env, 1);
    return s + nest(depth - 1);
}

static void on_usr1(int sig)
{
    (void)sig;
    a[0] += 5;
    siglongjmp(senv, 1);
}

int main(void)
{
    int jumps = 0, sigjumps = 0;
    for (int k = 0; k < 50; k++)
        if (setjmp(env) == 0)
            nest(k % 10);
        else
            jumps++;
    signal(SIGUSR1, on_usr1);
    for (int k = 0; k < 50; k++)
        if (sigsetjmp(senv, 1) == 0) {
            bh_sweep(a, 2000, 2);
            raise(SIGUSR1);
        } else {
            sigjumps++;
        }
    printf("longjmp: %d jumps, %d from the handler, %lx\n", jumps, sigjumps, bh_sweep(a, 2000, 1));
    return 0;
}
