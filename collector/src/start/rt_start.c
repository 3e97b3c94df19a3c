/* rt_start.c — libpes-rt's entry: the one place that names the modes and the
 * backends, which core then reaches through pes_rt.mode and pes_rt.backend
 * only. Core starts from the runtime's constructor, or earlier from the first
 * __pes_register_module (a module constructor may run before the runtime's own). */
#include <pthread.h>

#include "core/core.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void start_once(void)
{
    pes_rt_start(pes_rt_modes, pes_rt_backends);
}

static void start(void)
{
    pthread_once(&once, start_once);
}

__attribute__((constructor(PES_RT_CTOR_PRIORITY - 1))) static void rt_constructor(void)
{
    start();
}

__attribute__((visibility("default"))) void __pes_register_module(struct pes_rt_module *m)
{
    start();
    pes_rt_modules_register(m);
}
