/* rt_init.c — start-up (environment, mode and backend, header, writer thread,
 * signal handlers), process exit (flush every thread, footer) and fork (the
 * child traces nothing). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/rt_adapt.h"
#include "core/core.h"

struct pes_rt_state pes_rt = {.threads_lock = PTHREAD_MUTEX_INITIALIZER};

uint64_t pes_rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One line on stderr, written with a single write(2) so it is not interleaved. */
void pes_rt_message(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "pes-rt: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w = write(2, buf, len);
    (void)w;
}

static const char *env_get(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

/* /proc/self/cmdline, quoted like PES_COMMAND. */
static char *self_cmdline(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *raw = malloc(cap + 1);
    ssize_t r;
    while (raw && (r = read(fd, raw + len, cap - len)) > 0) {
        len += (size_t)r;
        if (len == cap) {
            char *bigger = realloc(raw, cap * 2 + 1);
            if (!bigger) {
                free(raw);
                raw = NULL;
                break;
            }
            raw = bigger;
            cap *= 2;
        }
    }
    close(fd);
    if (!raw)
        return NULL;
    raw[len] = '\0';
    int argc = 0;
    for (size_t i = 0; i < len; i++)
        argc += raw[i] == '\0';
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    char *out = NULL;
    if (argv) {
        char *p = raw;
        for (int i = 0; i < argc; i++, p += strlen(p) + 1)
            argv[i] = p;
        out = pes_cmdline_quote(argc, argv);
        free(argv);
    }
    free(raw);
    return out;
}

/* The header's config: the settings as the environment gave them, and what
 * this run did that they do not say (pes/settings.h writes each key that a
 * trace of this kind has, in the table's order). watch_bytes and line_size
 * keep the table's values: the watchpoints watch 8 bytes a register, of
 * 64-byte lines. */
static void build_config_string(char *buf, size_t size, int sampled)
{
    struct pes_collect_settings h = pes_rt.cfg;
    h.mode = sampled ? pes_rt.cfg.mode : PES_MODE_FULL;
    if (sampled) {
        snprintf(h.backend, sizeof h.backend, "%s", pes_rt.backend->name); /* the one that ran */
        snprintf(h.period_jitter, sizeof h.period_jitter, "%s", pes_rt.backend->jitter);
    }
    h.censoring =
        PES_CENSORING_WATCH_EXPIRED; /* modes/reuse.c: every undecided watch is an event */
    h.abi_version = PES_RT_ABI_VERSION;
    h.descriptors = pes_rt.descriptors; /* what this run did: whether the trace may hold them */
    pes_setting_parse(pes_settings_find("roi_state"), PES_SETTING_FROM_HEADER, pes_rt_roi_mode(),
                      &h, NULL);
    /* heap blocks as events need them (rt_alloc.c) */
    h.heap_events = h.heap ? PES_HEAP_EVENTS_USED : PES_HEAP_EVENTS_ALL;
    h.period_levels = PES_RT_ADAPT_LEVELS;
    if (pes_settings_to_header(&h, buf, size) < 0 && !pes_rt.cfg.quiet)
        pes_rt_message(
            "the trace header's settings do not fit in %zu bytes; the header holds the first ones",
            size);
}

/* Which process wrote an existing trace: PES_TRACED_BY, set by the runtime
 * that opened it, is inherited by the programs it execs or starts. */
#define TRACED_BY_ENV "PES_TRACED_BY"
static void say_not_traced(const char *path)
{
    const char *by = getenv(TRACED_BY_ENV);
    char *end;
    long pid = by ? strtol(by, &end, 10) : 0;
    if (!by || *end || pid <= 0)
        pes_rt_message("%s exists (the trace of another process?); this process is not traced",
                       path);
    else if (pid == (long)getpid())
        pes_rt_message("%s was written by this process before it called exec; the new program "
                       "is not traced",
                       path);
    else
        pes_rt_message("%s is the trace of process %ld, which started this one; this process "
                       "is not traced",
                       path, pid);
}

static struct pes_trace_writer *open_trace(const char *path, int sampled)
{
    /* Typically a program exec'd (or run) by the traced one, inheriting its
     * environment: the file belongs to the first process. A warning, not an error. */
    if (!pes_rt.cfg.overwrite && access(path, F_OK) == 0) {
        if (!pes_rt.cfg.quiet)
            say_not_traced(path);
        return NULL;
    }
    struct pes_trace_info info;
    memset(&info, 0, sizeof info);
    char host[256] = "";
    char config[768];
    gethostname(host, sizeof host - 1);
    char *command = pes_rt.cfg.command ? strdup(pes_rt.cfg.command) : self_cmdline();
    char *model = pes_rt_host_cpu_model("/proc/cpuinfo");
    build_config_string(config, sizeof config, sampled);

    info.version = PES_TRACE_VERSION;
    info.kind = sampled ? PES_TRACE_SAMPLED : PES_TRACE_FULL;
    info.command = command ? command : "";
    info.hostname = host;
    info.cpu_model = model ? model : "";
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    info.n_cpus = ncpu > 0 ? (uint32_t)ncpu : 0;
    info.n_sockets = pes_rt_host_sockets("/sys/devices/system/cpu");
    if (sampled && pes_rt.cfg.sockets)
        info.n_sockets = pes_rt.cfg.sockets; /* simulated topology (THREAD blocks agree) */
    info.n_cache_levels =
        pes_rt_host_caches("/sys/devices/system/cpu", info.caches, PES_MAX_CACHE_LEVELS);
    info.ticks_per_second = 1000000000ull;
    info.start_ticks = pes_rt_now();
    info.pid = (uint64_t)getpid();
    info.config = config;

    struct pes_writer_options opt = {.zstd_level = pes_rt.cfg.zstd_level};
    struct pes_error err = {0};
    struct pes_trace_writer *w =
        pes_trace_writer_open(path, pes_rt.cfg.overwrite, &info, &opt, &err);
    free(command);
    free(model);
    if (!w) {
        pes_rt_message("%s; %s disabled", err.message[0] ? err.message : "cannot open trace",
                       sampled ? "sampling" : "full trace");
    } else {
        char pid[24];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        setenv(TRACED_BY_ENV, pid, 1); /* start-up: no other thread reads the environment yet */
    }
    return w;
}

/* Executable mappings of /proc/self/maps, for symbolizing IPs of samples. */
static void queue_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    size_t cap = 16, n = 0;
    struct pes_mapping *m = calloc(cap, sizeof *m);
    char line[4096];
    while (m && fgets(line, sizeof line, f)) {
        unsigned long long start, end, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &off, &pos) < 4 ||
            perms[2] != 'x')
            continue;
        char *path = line + pos;
        while (*path == ' ')
            path++;
        path[strcspn(path, "\n")] = '\0';
        if (n == cap) {
            struct pes_mapping *b = realloc(m, 2 * cap * sizeof *m);
            if (!b)
                break;
            m = b;
            cap *= 2;
        }
        m[n].start = start;
        m[n].end = end;
        m[n].file_offset = off;
        m[n].path = strdup(path);
        if (!m[n].path)
            break;
        n++;
    }
    fclose(f);
    struct pes_rt_item *it = calloc(1, sizeof *it);
    if (!it || !m) {
        free(it);
        for (size_t i = 0; m && i < n; i++)
            free((char *)m[i].path);
        free(m);
        return;
    }
    it->type = PES_RT_ITEM_MAPS;
    it->heap = 1;
    it->maps = m;
    it->n = n;
    pes_rt_writer_push(it);
}

/* fork: the child shares nothing with the parent's writer; its inherited
 * buffers belong to the parent's trace and must not be written twice. */
static void atfork_child(void)
{
    __atomic_store_n(&pes_rt.child, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pes_rt.full, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pes_rt.sampling, 0, __ATOMIC_RELEASE);
    pes_rt.descriptors = 0;
    pes_rt.writer = NULL;
    pes_rt.swriter = NULL;
    pes_rt_thread_forget_self();
    pes_rt_signals_restore();
}

/* PES_MODE's mode (the configuration has checked the name). */
static const struct pes_rt_mode *find_mode(const struct pes_rt_mode *const *modes, const char *name)
{
    for (; *modes; modes++)
        if (!strcmp((*modes)->name, name))
            return *modes;
    return NULL;
}

/* PES_BACKEND's backend (pes_rt.cfg.backend), started; the program-counted one (soft) when
 * PES_BACKEND is unset or empty, or names one that cannot work here. */
static const struct pes_rt_backend *choose_backend(const struct pes_rt_backend *const *list)
{
    const struct pes_rt_backend *fallback = NULL, *b;
    for (const struct pes_rt_backend *const *k = list; *k && !fallback; k++)
        if ((*k)->program_counts)
            fallback = *k;
    const char *name = pes_rt.cfg.backend, *env = pes_settings_find("backend")->env;
    char why[512] = "";
    b = pes_rt_backend_find(list, name);
    if (!b) {
        pes_rt_backend_choices(list, "", why, sizeof why);
        pes_rt_message("%s=%s: expected %s; using the %s sampler", env, name, why, fallback->name);
        return fallback;
    }
    int failed = b->stub ? (b->probe(why, sizeof why), 1) : b->start && b->start(why, sizeof why);
    if (failed) {
        pes_rt_message("%s=%s: %s; using the %s sampler", env, name, why, fallback->name);
        return fallback;
    }
    return b;
}

static void start(const struct pes_rt_mode *const *modes,
                  const struct pes_rt_backend *const *backends)
{
    char msg[256];
    if (pes_rt_config_parse(&pes_rt.cfg, env_get, NULL, msg, sizeof msg)) {
        pes_rt_message("%s; tracing disabled", msg);
        return;
    }
    if (!pes_rt.cfg.full_output && !pes_rt.cfg.sample_output)
        return; /* off: scratch buffers only, no file, no thread */
    pes_rt_roi_init();
    /* loop descriptors (rt_loop.c): the sampler and the gate need a record per access */
    pes_rt.descriptors = pes_rt.cfg.descriptors && pes_rt.cfg.full_output &&
                         !pes_rt.cfg.sample_output && !pes_rt_gate_configured();
    if (pes_rt.cfg.sample_output && !pes_rt.cfg.seed)
        pes_rt.cfg.seed = pes_rt_now() ^ ((uint64_t)getpid() << 32);
    pes_rt_thread_init_key();
    if (pes_rt.cfg.full_output)
        pes_rt.writer = open_trace(pes_rt.cfg.full_output, 0);
    if (pes_rt.cfg.sample_output) {
        pes_rt.mode = find_mode(modes, pes_rt_mode_name(pes_rt.cfg.mode));
        /* before the header, which names the backend */
        __atomic_store_n(&pes_rt.backend, choose_backend(backends), __ATOMIC_RELEASE);
        if (pes_rt.mode && pes_rt.backend)
            pes_rt.swriter = open_trace(pes_rt.cfg.sample_output, 1);
        else
            pes_rt_message("%s: mode %s or its backend missing from this runtime; sampling "
                           "disabled",
                           pes_rt.cfg.sample_output, pes_rt_mode_name(pes_rt.cfg.mode));
    }
    if (!pes_rt.writer && !pes_rt.swriter)
        return;
    if (pes_rt_writer_start()) {
        pes_rt_message("cannot start the writer thread; tracing disabled");
        struct pes_error err;
        if (pes_rt.writer)
            pes_trace_writer_close(pes_rt.writer, NULL, 0, pes_rt_now(), &err);
        if (pes_rt.swriter)
            pes_trace_writer_close(pes_rt.swriter, NULL, 0, pes_rt_now(), &err);
        pes_rt.writer = pes_rt.swriter = NULL;
        return;
    }
    pthread_atfork(NULL, NULL, atfork_child);
    /* without the site table the interposer only forwards (--no-heap) */
    if (pes_rt.cfg.heap && pes_rt_alloc_init(pes_rt.swriter != NULL) != 0 && !pes_rt.cfg.quiet)
        pes_rt_message("cannot map the allocation-site table; heap blocks are not recorded");
    if (pes_rt.swriter && pes_rt.cfg.stacks && pes_rt_stack_init() != 0 && !pes_rt.cfg.quiet)
        pes_rt_message("cannot map the call-stack table; samples have no call stacks");
    queue_maps(); /* sample and allocation-site IPs are symbolized through it */
    if (pes_rt.swriter) {
        if (pes_rt.mode->start)
            pes_rt.mode->start();
        __atomic_store_n(&pes_rt.sampling, 1, __ATOMIC_RELEASE);
    }
    if (pes_rt.writer)
        __atomic_store_n(&pes_rt.full, 1, __ATOMIC_RELEASE);
    pes_rt_signals_install();
    if (pes_rt.sampling && pes_rt_hardware_samples()) {
        struct pes_rt_thread *t =
            pes_rt_thread_setup(); /* the PMU samples this thread from now on */
        if (t)
            pes_rt_alloc_stack_due(t);
    }
}

void pes_rt_start(const struct pes_rt_mode *const *modes,
                  const struct pes_rt_backend *const *backends)
{
    start(modes, backends);
}

/* In a signal handler: a thread holds its lock only for a few instructions
 * (a buffer hand-over waits outside it), so the locks are tried again until
 * every thread is stopped or STOP_WAIT_NS passed; a thread still busy then
 * loses its current buffer. */
#define STOP_WAIT_NS 50000000ull
static void stop_threads_bounded(struct pes_rt_thread *list, struct pes_rt_thread *self)
{
    uint64_t deadline = pes_rt_now() + STOP_WAIT_NS;
    for (;;) {
        int busy = 0;
        for (struct pes_rt_thread *t = list; t; t = t->next)
            busy |= pes_rt_buffer_stop(t, 0, t == self) < 0;
        if (!busy || pes_rt_now() > deadline)
            return;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

/* Accesses of signal handlers the runtime could not record (rt_buffer.c). */
static void report_lost(struct pes_rt_thread *list)
{
    uint64_t lost = 0;
    for (struct pes_rt_thread *t = list; t; t = t->next)
        lost += __atomic_load_n(&t->lost_nested, __ATOMIC_RELAXED);
    if (lost && !pes_rt.cfg.quiet)
        pes_rt_message("%llu accesses made by signal handlers while their thread was inside the "
                       "runtime were not %s",
                       (unsigned long long)lost,
                       pes_rt.full ? "recorded (LOST records)" : "counted");
}

/*
 * Stops every thread and closes the trace. Threads still running keep their
 * buffers (never freed here): they may store one more record past the cursor we
 * read, which we do not write (see pes_rt_buffer_stop).
 */
void pes_rt_shutdown(int from_signal)
{
    if (!pes_rt_active() || pes_rt.child)
        return;
    struct pes_rt_thread *self = pes_rt_thread_self();
    if (self && !from_signal)
        pes_rt_sample_backend_stop(self); /* last samples of this thread's ring */
    if (__atomic_exchange_n(&pes_rt.stopping, 1, __ATOMIC_ACQ_REL))
        return; /* another thread (exit or signal) does it */
    if (from_signal) {
        if (pthread_mutex_trylock(&pes_rt.threads_lock) != 0)
            goto finish; /* a thread is being created right now: flush what is queued */
    } else {
        pthread_mutex_lock(&pes_rt.threads_lock);
    }
    struct pes_rt_thread *list = pes_rt.threads;
    pthread_mutex_unlock(&pes_rt.threads_lock);
    if (from_signal)
        stop_threads_bounded(list, self);
    else
        for (struct pes_rt_thread *t = list; t; t = t->next)
            pes_rt_buffer_stop(t, 1, t == self);
    report_lost(list);
finish:
    if (from_signal) /* the whole process ends within a second of a termination signal */
        pes_rt_writer_finish_signal(from_signal == PES_RT_STOP_TERM ? 500 : 5000);
    else
        pes_rt_writer_finish();
}

/* Runs after the application's atexit handlers and static destructors (the
 * runtime is a dependency of the executable, so its fini runs last). */
__attribute__((destructor)) static void rt_destructor(void)
{
    /* a termination signal meanwhile waits until the footer is written */
    int entered = pes_rt_enter() == 0;
    pes_rt_shutdown(0);
    if (entered)
        pes_rt_leave();
}
