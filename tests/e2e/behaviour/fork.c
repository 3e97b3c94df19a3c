/* fork exit|_exit|exec HELPER — memory work, fork; the child works and ends
 * with exit(), with _exit() or by exec'ing HELPER; the parent waits for it,
 * then works again. */
#include <stdlib.h>
#include <sys/wait.h>

#include "bh.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *how = argv[1];
    static unsigned long a[4000];
    bh_say("fork: parent before %lx\n", bh_sweep(a, 4000, 50));
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        bh_say("fork: child %lx\n", bh_sweep(a, 4000, 50));
        if (!strcmp(how, "exit"))
            exit(0);
        if (!strcmp(how, "_exit"))
            _exit(0);
        if (!strcmp(how, "exec") && argc == 3)
            execl(argv[2], argv[2], "forked", (char *)NULL);
        _exit(9);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 4;
    printf("fork: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("fork: parent after %lx\n", bh_sweep(a, 4000, 50));
    return 0;
}
