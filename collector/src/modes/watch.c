/* watch.c — debug-register watchpoints of the calling thread:
 * perf_event_open(PERF_TYPE_BREAKPOINT) opened at a register's first arm (x86
 * has 4 per thread; the 5th gives ENOSPC), re-targeted with
 * PERF_EVENT_IOC_MODIFY_ATTRIBUTES, delivering a synchronous SIGTRAP
 * (attr.sigtrap, which needs remove_on_exec) whose si_perf_data is our
 * sig_data: magic | register | generation. x86 data breakpoints trap after the
 * access. The handler runs on the thread's alternate signal stack
 * (pes_rt_altstack_setup, before the thread's first breakpoint opens: frames
 * on the normal stack could hit a watched stack address), never reads watched
 * memory, takes no lock and does not allocate. A SIGTRAP that is not ours goes
 * to the handler the application had (or installs later: every arm re-checks
 * the disposition). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "backend.h"
#include "modes/watch.h"

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

static struct sigaction previous; /* the application's SIGTRAP disposition */
static int installed;
static void on_trap(int sig, siginfo_t *si, void *uc);

/* How a register is re-targeted (issue 29). Opening a breakpoint costs about
 * 10 µs (the kernel's slot accounting, a file descriptor, and its close),
 * changing one with PERF_EVENT_IOC_MODIFY_ATTRIBUTES 2 to 3 µs, and the kernel
 * lets a breakpoint change its address, type, length and sig_data, all an arm
 * changes: so each thread opens a register once. Where the kernel refuses the
 * change (pes_pmu_rearm_refused: before Linux 5.17 sig_data cannot change),
 * every arm closes and reopens; set for the whole process at the first refusal
 * (pes-collect --list-backends probes the same), or by PES_WATCH_REARM=reopen. */
static int reopen_per_arm; /* atomic */

uint32_t pes_rt_watch_len(uint64_t addr, uint32_t size)
{
    for (uint32_t len = 8; len > 1; len /= 2)
        if (len <= size && addr % len == 0)
            return len;
    return 1;
}

/* glibc's siginfo_t has no si_perf_data: it follows si_addr (kernel layout). */
static uint64_t perf_data(const siginfo_t *si)
{
    unsigned long d;
    memcpy(&d, (const char *)si + offsetof(siginfo_t, si_addr) + sizeof(void *), sizeof d);
    return d;
}

/* The runtime's own code. A trap raised there is the runtime touching a
 * watched address, never the program: a watch on memory the runtime reuses
 * (a dead thread's stack that now holds a new thread's TLS, a freed block),
 * or on a line that holds both. Such a trap returns at once, before the
 * handler reads any state a watch could cover, so the handler's own accesses
 * cannot trap it into itself again (it runs with SA_NODEFER). */
static struct pes_rt_code_range own_code;

static void take_over(void)
{
    struct sigaction sa, cur;
    if (pes_rt_real_sigaction(SIGTRAP, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_trap)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (pes_rt_real_sigaction(SIGTRAP, &sa, &cur) == 0)
        previous = cur;
}

void pes_rt_watch_install(void)
{
    if (!own_code.hi)
        own_code = pes_rt_code_range_of((const void *)&on_trap);
    take_over();
    installed = 1;
    if (pes_rt.cfg.watch_rearm == PES_WATCH_REARM_REOPEN)
        __atomic_store_n(&reopen_per_arm, 1, __ATOMIC_RELAXED);
}

static void fill_attr(struct perf_event_attr *a, uint64_t addr, uint32_t len, int rw, uint64_t data,
                      int disabled)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_BREAKPOINT;
    a->bp_type = rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
    a->bp_addr = addr;
    a->bp_len = len;
    a->sample_period = 1;
    a->sigtrap = 1;
    a->remove_on_exec = 1;
    a->sig_data = data;
    a->exclude_kernel = 1;
    a->exclude_hv = 1;
    a->disabled = disabled ? 1 : 0;
}

int pes_rt_watch_arm(struct pes_rt_thread *t, uint32_t i, uint64_t addr, uint32_t len, int rw,
                     uint32_t gen)
{
    struct pes_rt_wp *w = &t->s.wp[i];
    struct perf_event_attr a;
    fill_attr(&a, addr, len, rw, pes_rt_sigdata(i, gen), 0);
    take_over();
    int refused = 0; /* errno of a MODIFY_ATTRIBUTES that the reopen below may show refused */
    if (w->fd >= 0 && !__atomic_load_n(&reopen_per_arm, __ATOMIC_RELAXED)) {
        if (ioctl(w->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) == 0)
            goto armed;
        refused = errno;
        if (!pes_pmu_rearm_refused(refused)) {
            ioctl(w->fd, PERF_EVENT_IOC_DISABLE, 0); /* not left on its old target */
            w->armed = 0;
            return -1;
        }
    }
    if (w->fd >= 0) {
        pes_rt_close(w->fd); /* a slot of its own for the reopen (ENOSPC otherwise) */
        w->fd = -1;
    } else {
        pes_rt_altstack_setup(t); /* before the thread's first trap can come */
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        w->armed = 0;
        return -1; /* the attributes, not the change, were refused: nothing learnt */
    }
    w->fd = fd;
    if (refused)
        __atomic_store_n(&reopen_per_arm, 1, __ATOMIC_RELAXED); /* the kernel's answer */
armed:
    w->armed = 1;
    w->addr = addr;
    w->len = len;
    w->rw = rw;
    w->gen = gen;
    return 0;
}

/* Async-signal-safe (one ioctl). */
void pes_rt_watch_disarm(struct pes_rt_thread *t, uint32_t i)
{
    struct pes_rt_wp *w = &t->s.wp[i];
    if (w->fd < 0 || !w->armed)
        return;
    if (__atomic_load_n(&reopen_per_arm, __ATOMIC_RELAXED)) {
        ioctl(w->fd, PERF_EVENT_IOC_DISABLE, 0); /* the next arm reopens it anyway */
        w->armed = 0;
        return;
    }
    struct perf_event_attr a;
    fill_attr(&a, w->addr, w->len, w->rw, pes_rt_sigdata(i, w->gen), 1);
    if (ioctl(w->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) != 0)
        ioctl(w->fd, PERF_EVENT_IOC_DISABLE, 0);
    w->armed = 0;
}

void pes_rt_watch_thread_exit(struct pes_rt_thread *t)
{
    for (uint32_t i = 0; i < PES_RT_MAX_DEBUG_REGISTERS; i++) {
        struct pes_rt_wp *w = &t->s.wp[i];
        if (w->fd >= 0) {
            pes_rt_close(w->fd);
            w->fd = -1;
            w->armed = 0;
        }
    }
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction prev = previous;
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction)
            prev.sa_sigaction(sig, si, uc);
        return;
    }
    if (prev.sa_handler == SIG_IGN)
        return;
    if (prev.sa_handler != SIG_DFL) {
        prev.sa_handler(sig);
        return;
    }
    /* default action (terminate with a core): what the program would have got */
    signal(SIGTRAP, SIG_DFL);
    raise(SIGTRAP);
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
    uint64_t d = si->si_code == TRAP_PERF ? perf_data(si) : 0;
    if (d >> 48 != PES_RT_SIGDATA_MAGIC) {
        chain(sig, si, ucv);
        return;
    }
    const ucontext_t *uc = ucv;
    uint64_t ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (pes_rt_code_range_has(&own_code, ip))
        return; /* the runtime's access (above): stays armed, nothing counted */
    int saved = errno;
    /* the trap may push events to the writer queue: an asynchronous cancel
     * must not end the thread while it holds that lock (inside the runtime
     * cancellation is already off) */
    int entered = pes_rt_enter() == 0;
    uint32_t reg = (uint32_t)(d >> 32) & 0xff, gen = (uint32_t)d;
    struct pes_rt_thread *t = pes_rt_thread_self();
    if (t && reg < PES_RT_MAX_DEBUG_REGISTERS) {
        t->s.traps++;
        int disarm = 1;
        if (t->s.in_runtime) {
            t->s.ignored_traps++; /* the runtime touched it, not the program */
            disarm = 0;
        } else if (!__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
            if (pes_rt.mode->trap)
                pes_rt.mode->trap(t, reg, gen, ip, &disarm);
        }
        if (disarm)
            pes_rt_watch_disarm(t, reg);
    }
    if (entered)
        pes_rt_leave();
    errno = saved;
}
