/* vfork_exec HELPER — vfork + exec of HELPER, between memory work. */
#include <sys/wait.h>

#include "bh.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static unsigned long a[4000];
    bh_say("vfork_exec: before %lx\n", bh_sweep(a, 4000, 50));
    pid_t pid = vfork();
    if (pid == 0) {
        execl(argv[1], argv[1], "vforked", (char *)NULL);
        _exit(9);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 3;
    printf("vfork_exec: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("vfork_exec: after %lx\n", bh_sweep(a, 4000, 50));
    return 0;
}
