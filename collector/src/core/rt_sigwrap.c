/* rt_sigwrap.c — the application's signal handlers run inside a wrapper.
 *
 * Why: the inline record sequence (rt_abi.h) loads the cursor, stores the
 * record, then stores cursor + 1. A handler that runs between the load and
 * the last store, and records accesses of its own, has its records
 * overwritten when the interrupted sequence resumes with the old cursor. So
 * while an application handler runs, its thread's limit is NULL and every
 * record of the handler goes to the slow path, which sees the handler mark and
 * keeps the record aside (rt_buffer.c: the reserve, or the sampler's pending
 * counts) without touching cursor or limit. The interrupted code then finds
 * everything as it left it; its next slow path moves the handler's records
 * into the stream.
 *
 * sigaction and signal are interposed (the runtime is a dependency of every
 * instrumented executable, like the pthread_create wrapper): a handler
 * function is installed as the wrapper, and the application sees its own
 * handler when it asks. Not wrapped: SIGTRAP (the watchpoints' handler already
 * chains to the application's, modes/watch.c), the PMU backends' overflow signal,
 * and handlers installed by a raw syscall. A handler that leaves by longjmp
 * never returns to the wrapper; the mark is dropped when the thread records
 * outside the handler's stack again (handler_left). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "core/core.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* What the application installed, per signal: the handler it sees. */
static struct sigaction app[NSIG];
static int wrapped[NSIG]; /* atomic: app[sig] holds a handler run by the wrapper */

#define PES_RT_TLS __thread __attribute__((tls_model("initial-exec")))
static int reserved_sig; /* atomic: the PMU backends' overflow signal, 0 if none */

PES_RT_TLS int
    pes_rt_handler_depth_tls; /* application handlers running; read inline by rt_alloc.c */
#define depth pes_rt_handler_depth_tls
static PES_RT_TLS uintptr_t stack_lo, stack_hi; /* the outermost handler's stack */

int pes_rt_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static sigaction_fn real;
    sigaction_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        if (!f) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    return f(sig, act, old);
}

/* The handler's stack: the alternate stack if the wrapper runs on it, else
 * everything below the wrapper's frame down to the end of the thread's stack. */
static void note_stack(uintptr_t frame)
{
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
        stack_lo = (uintptr_t)ss.ss_sp;
        stack_hi = (uintptr_t)ss.ss_sp + ss.ss_size;
    } else {
        stack_lo = 0;
        stack_hi = frame;
    }
}

int pes_rt_in_app_handler(void)
{
    if (!depth)
        return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (here >= stack_lo && here < stack_hi)
        return 1;
    depth = 0; /* the handler was left by longjmp */
    return 0;
}

static void wrapper(int sig, siginfo_t *info, void *uc)
{
    struct sigaction a = app[sig];
    if (a.sa_flags & SA_RESETHAND) {
        /* the kernel reset the disposition before this call */
        __atomic_store_n(&wrapped[sig], 0, __ATOMIC_RELAXED);
        app[sig].sa_handler = SIG_DFL;
    }
    int saved_errno = errno;
    if (depth++ == 0)
        note_stack((uintptr_t)__builtin_frame_address(0));
    if (pes_rt_active())
        __atomic_store_n(&__pes_tls.limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    errno = saved_errno;
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, info, uc);
    else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
        a.sa_handler(sig);
    saved_errno = errno;
    if (depth > 0)
        depth--;
    /* the limit stays NULL: the thread's next record takes the slow path,
     * which moves the handler's records into the stream and sets it again */
    errno = saved_errno;
}

void pes_rt_sigwrap_reserve(int sig)
{
    __atomic_store_n(&reserved_sig, sig, __ATOMIC_RELEASE);
}

static int ours_to_wrap(int sig)
{
    return sig > 0 && sig < NSIG && sig != SIGTRAP && sig != SIGKILL && sig != SIGSTOP &&
           sig != __atomic_load_n(&reserved_sig, __ATOMIC_ACQUIRE);
}

static int is_function(const struct sigaction *act)
{
    return (act->sa_flags & SA_SIGINFO) ? act->sa_sigaction != NULL
                                        : act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
                                                     struct sigaction *old)
{
    if (!ours_to_wrap(sig))
        return pes_rt_real_sigaction(sig, act, old);
    struct sigaction prev_app = app[sig];
    int was_wrapped = __atomic_load_n(&wrapped[sig], __ATOMIC_ACQUIRE);
    int rc;
    if (act && is_function(act)) {
        struct sigaction w = *act;
        w.sa_flags |= SA_SIGINFO;
        w.sa_sigaction = wrapper;
        app[sig] = *act;
        __atomic_store_n(&wrapped[sig], 1, __ATOMIC_RELEASE);
        rc = pes_rt_real_sigaction(sig, &w, old);
    } else {
        rc = pes_rt_real_sigaction(sig, act, old);
        if (rc == 0 && act)
            __atomic_store_n(&wrapped[sig], 0, __ATOMIC_RELEASE);
    }
    if (rc == 0 && old && was_wrapped && (old->sa_flags & SA_SIGINFO) &&
        old->sa_sigaction == wrapper)
        *old = prev_app; /* the application sees its own handler */
    return rc;
}

/* glibc's signal() calls its internal sigaction, so it is interposed too,
 * with its BSD semantics: restartable, the signal blocked in its handler. */
__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
                                       : old.sa_handler;
}
