/* pmu_fake_syscall.c — preloaded by pmu_run.sh. Into pes-collect: makes
 * perf_event_open "work" on this PMU-less machine (it returns a memfd), so
 * that pes-collect's probe succeeds and its pebs path (choose the backend,
 * preload the runtime) runs for real. Every other system call is forwarded.
 * Into an instrumented program: pes_rt_pmu_test_open gives the runtime quiet
 * events (a perf mmap layout with count 0 and no records); a program that
 * defines its own (pmu_app) takes precedence. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <string.h>
#include <unistd.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>

typedef long (*syscall_fn)(long, ...);

__attribute__((visibility("default"))) long syscall(long n, ...)
{
    va_list ap;
    va_start(ap, n);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_perf_event_open)
        return memfd_create("pes-fake-perf", MFD_CLOEXEC);
    syscall_fn real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

__attribute__((visibility("default"))) long pes_rt_pmu_test_open(struct perf_event_attr *attr,
                                                                  pid_t pid, int cpu, int group,
                                                                  unsigned long flags)
{
    (void)attr, (void)pid, (void)cpu, (void)group, (void)flags;
    long page = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("pes-fake-ring", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, page * 9) != 0)
        return -1;
    struct perf_event_mmap_page pg;
    memset(&pg, 0, sizeof pg);
    pg.data_offset = (unsigned long long)page;
    pg.data_size = (unsigned long long)page * 8;
    pg.cap_user_rdpmc = 1;   /* index 0, offset 0: the count is 0 */
    if (pwrite(fd, &pg, sizeof pg, 0) != (ssize_t)sizeof pg)
        return -1;
    return fd;
}
