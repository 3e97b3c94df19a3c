/* helper TAG — run by fork_exec, vfork_exec and posix_spawn: memory work and
 * one line of output. Built like its caller (pes-clang or plain clang). */
#include "bh.h"

int main(int argc, char **argv)
{
    static unsigned long a[2000];
    printf("helper %s: sweep %lx\n", argc > 1 ? argv[1] : "-", bh_sweep(a, 2000, 100));
    return 0;
}
