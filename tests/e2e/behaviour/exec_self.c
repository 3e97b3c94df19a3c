/* exec_self — memory work, then exec of its own executable with the argument
 * "again", which works and exits 0. */
#include "bh.h"

int main(int argc, char **argv)
{
    static unsigned long a[4000];
    if (argc == 2 && !strcmp(argv[1], "again")) {
        printf("exec_self: second image %lx\n", bh_sweep(a, 4000, 50));
        return 0;
    }
    bh_say("exec_self: first image %lx\n", bh_sweep(a, 4000, 50));
    execl("/proc/self/exe", argv[0], "again", (char *)NULL);
    return 9;
}
