/* segv early|late — a store through a null pointer after a few hundred
 * accesses (inside the first 4 KiB of trace records) or after a lot of work
 * (many trace buffers). Dies of SIGSEGV. */
#include "bh.h"

static unsigned long *volatile nowhere;   /* null, unknown to the optimiser */

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static unsigned long a[8000];
    long rounds = !strcmp(argv[1], "early") ? 0 : 300;
    unsigned long s = bh_sweep(a, 64, 1) + bh_sweep(a, 8000, rounds);
    bh_say("segv: %s %lx\n", argv[1], s);
    *nowhere = s;
    return 0;
}
