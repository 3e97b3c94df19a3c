/* spawn HELPER — posix_spawn of HELPER, between memory work. */
#include <spawn.h>
#include <sys/wait.h>

#include "bh.h"

extern char **environ;

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static unsigned long a[4000];
    bh_say("spawn: before %lx\n", bh_sweep(a, 4000, 50));
    pid_t pid;
    char *child_argv[] = {argv[1], "spawned", NULL};
    if (posix_spawn(&pid, argv[1], NULL, NULL, child_argv, environ) != 0)
        return 3;
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 4;
    printf("spawn: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("spawn: after %lx\n", bh_sweep(a, 4000, 50));
    return 0;
}
