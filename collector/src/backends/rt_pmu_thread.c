/* rt_pmu_thread.c — pthread_create wrapper. A program that is not built with
 * pes-clang never enters the runtime's slow path, so with the runtime
 * LD_PRELOADed for the pebs/ibs backends its threads would never be set up:
 * the wrapper runs the set-up (which opens the thread's PMU events) in the new
 * thread before the start routine. With the soft backend it only forwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/core.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
    void *(*fn)(void *);
    void *arg;
};

static void *trampoline(void *p)
{
    struct start st = *(struct start *)p;
    __libc_free(p); /* the runtime's: not a heap block of the program (rt_alloc.c) */
    struct pes_rt_thread *t = pes_rt_thread_self();
    if (!t && (t = pes_rt_thread_setup()) != NULL)
        pes_rt_alloc_stack_due(t); /* before the thread's own code: outside libc */
    return st.fn(st.arg);
}

__attribute__((visibility("default"))) int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                                                          void *(*fn)(void *), void *arg)
{
    static create_fn real;
    create_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
        if (!f)
            return EAGAIN;
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    if (!pes_rt_hardware_samples() || !__atomic_load_n(&pes_rt.sampling, __ATOMIC_ACQUIRE))
        return f(th, attr, fn, arg);
    struct start *st = __libc_malloc(sizeof *st);
    if (!st)
        return f(th, attr, fn, arg); /* unsampled rather than failed */
    st->fn = fn;
    st->arg = arg;
    int rc = f(th, attr, trampoline, st);
    if (rc)
        __libc_free(st);
    return rc;
}
