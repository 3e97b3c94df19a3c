/* Runs a command with stdout to /dev/null and prints "SECONDS MAXRSS_KIB CPU" of
 * it; exits with the command's status (128 + signal if killed). The bench
 * scripts time through this rather than from Python: Linux keeps a process's
 * peak RSS across execve, so a child forked from Python starts with the
 * interpreter's ~15 MiB as its peak and every smaller program measured 15 MiB.
 * Forked from this small program, the floor is about 1 MiB. The peak covers
 * the command's own waited-for children too (pes-collect and its program).
 * A third field is the command's CPU time, user + system, of it and its
 * waited-for children (readers taking two fields ignore it).
 * usage: rusage_run command [args...] */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s command [args...]\n", argv[0]);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage_run: fork");
        return 127;
    }
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
            perror("rusage_run: /dev/null");
            _exit(127);
        }
        close(fd);
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("rusage_run: wait4");
        return 127;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    printf("%.6f %ld %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
           ru.ru_maxrss, cpu);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
