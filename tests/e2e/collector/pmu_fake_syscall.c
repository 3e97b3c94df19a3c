/* pmu_fake_syscall.c — preloaded into pes-collect by pmu_run.sh: makes
 * perf_event_open "work" on this PMU-less machine (it returns a memfd), so
 * that pes-collect's probe succeeds and its pebs path (choose the backend,
 * preload the runtime) runs for real. Every other system call is forwarded. */
#define _GNU_SOURCE
#include <dlfcn.h>
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
