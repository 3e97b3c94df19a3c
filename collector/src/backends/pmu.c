/* pmu.c — PEBS/IBS encoding, probing and sample parsing (see pmu.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <perfmon/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backends/pmu.h"

static long sys_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                     unsigned long flags)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static pes_pmu_open_fn open_fn = sys_open;

void pes_pmu_set_open(pes_pmu_open_fn fn)
{
    open_fn = fn ? fn : sys_open;
}

long pes_pmu_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
    return open_fn(attr, pid, cpu, group, flags);
}

/* libpfm4 is opened only when a PEBS event is encoded: linked in, its 40,000
 * relocations of event tables cost every instrumented program ~1.5 ms and
 * ~1 MiB at start-up, even with the collector off. */
static struct {
    int (*initialize)(void);
    void (*terminate)(void);
    const char *(*strerror)(int);
    int (*encoding)(const char *, int, pfm_os_t, void *);
    int (*pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
} pfm;

/* RTLD_DEEPBIND: libpfm4 calls some of its own exported functions through its
 * PLT (pfm_get_os_event_encoding, pfm_strerror); a program that contains
 * libpfm4 itself (PAPI bundles it) would otherwise have those calls bound to
 * its own, instrumented copies. The sanitizer runtimes refuse the flag. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define PES_PMU_NO_DEEPBIND
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PES_PMU_NO_DEEPBIND
#endif
#ifdef PES_PMU_NO_DEEPBIND
#define PES_PMU_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#else
#define PES_PMU_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#endif

static int pfm_open(char *why, size_t why_size)
{
    if (pfm.initialize)
        return 0;
    void *h = dlopen("libpfm.so.4", PES_PMU_DLOPEN_FLAGS);
    if (!h) {
        snprintf(why, why_size, "libpfm4 is not available: %s", dlerror());
        return -1;
    }
    *(void **)&pfm.terminate = dlsym(h, "pfm_terminate");
    *(void **)&pfm.strerror = dlsym(h, "pfm_strerror");
    *(void **)&pfm.encoding = dlsym(h, "pfm_get_os_event_encoding");
    *(void **)&pfm.pmu_info = dlsym(h, "pfm_get_pmu_info");
    *(void **)&pfm.initialize = dlsym(h, "pfm_initialize");
    if (!pfm.terminate || !pfm.strerror || !pfm.encoding || !pfm.pmu_info || !pfm.initialize) {
        snprintf(why, why_size, "libpfm.so.4 lacks the libpfm4 functions pes needs");
        pfm.initialize = NULL;
        return -1;
    }
    return 0;
}

/* Event names by generation: Skylake and later call them MEM_INST_RETIRED. */
static const char *const load_events[] = {"MEM_INST_RETIRED:ALL_LOADS",
                                          "MEM_UOPS_RETIRED:ALL_LOADS"};
static const char *const store_events[] = {"MEM_INST_RETIRED:ALL_STORES",
                                           "MEM_UOPS_RETIRED:ALL_STORES"};

/* The user part of the callchain, at most a pes stack's depth (issue 28). */
static void want_callchain(struct perf_event_attr *a)
{
    a->sample_type |= PERF_SAMPLE_CALLCHAIN;
    a->exclude_callchain_kernel = 1;
    a->sample_max_stack = PES_ALLOC_MAX_DEPTH;
}

int pes_pmu_encode_pebs(int store, uint64_t period, int callchain, struct perf_event_attr *attr,
                        char *event, size_t event_size, char *why, size_t why_size)
{
    if (pfm_open(why, why_size))
        return -1;
    /* re-initialise so LIBPFM_FORCE_PMU is read again (tests switch models) */
    pfm.terminate();
    int rc = pfm.initialize();
    if (rc != PFM_SUCCESS) {
        snprintf(why, why_size, "libpfm4 cannot initialise: %s", pfm.strerror(rc));
        return -1;
    }
    const char *const *names = store ? store_events : load_events;
    for (int i = 0; i < 2; i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        pfm_perf_encode_arg_t arg;
        memset(&arg, 0, sizeof arg);
        arg.attr = &a;
        arg.size = sizeof arg;
        rc = pfm.encoding(names[i], PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (rc != PFM_SUCCESS)
            continue;
        a.size = sizeof a;
        a.sample_period = period;
        a.precise_ip = 2; /* PEBS: the sampled instruction itself, not a skid */
        a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                        PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.disabled = 1;
        a.wakeup_events = 1;
        if (callchain)
            want_callchain(&a);
        *attr = a;
        snprintf(event, event_size, "%s", names[i]);
        return 0;
    }
    pfm_pmu_info_t info;
    memset(&info, 0, sizeof info);
    const char *model = "unknown";
    for (int p = 0; p < PFM_PMU_MAX; p++) {
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm.pmu_info((pfm_pmu_t)p, &info) == PFM_SUCCESS && info.is_present &&
            info.type == PFM_PMU_TYPE_CORE) {
            model = info.name;
            break;
        }
    }
    snprintf(why, why_size, "libpfm4 knows no PEBS %s event for this CPU (core PMU: %s)",
             store ? "store" : "load", model);
    return -1;
}

int pes_pmu_ibs_type(const char *sysfs_root, uint32_t *type, char *why, size_t why_size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bus/event_source/devices/ibs_op/type", sysfs_root);
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(why, why_size, "%s: %s: no AMD IBS op PMU", path, strerror(errno));
        return -1;
    }
    unsigned v;
    int ok = fscanf(f, "%u", &v) == 1;
    fclose(f);
    if (!ok) {
        snprintf(why, why_size, "%s: expected a number", path);
        return -1;
    }
    *type = v;
    return 0;
}

int pes_pmu_encode_ibs(const char *sysfs_root, uint64_t period, int callchain,
                       struct perf_event_attr *attr, char *why, size_t why_size)
{
    uint32_t type;
    if (pes_pmu_ibs_type(sysfs_root, &type, why, why_size))
        return -1;
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->type = type;
    attr->config = 1ull << 19; /* IbsOpCntCtl: count dispatched ops, not cycles */
    attr->sample_period = period;
    attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    attr->disabled = 1;
    attr->wakeup_events = 1;
    if (callchain)
        want_callchain(attr);
    /* no exclude_kernel: older IBS drivers refuse it; kernel addresses are dropped in parsing */
    return 0;
}

static void explain_errno(int e, const char *what, char *why, size_t why_size)
{
    const char *hint = "";
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
        hint = ": no hardware PMU exposed (a VM or container without PMU passthrough?)";
    else if (e == EACCES || e == EPERM)
        hint = ": not permitted (see /proc/sys/kernel/perf_event_paranoid)";
    snprintf(why, why_size, "perf_event_open(%s): %s%s", what, strerror(e), hint);
}

int pes_pmu_probe(int backend, char *why, size_t why_size)
{
    struct perf_event_attr a;
    char event[64] = "ibs_op";
    if (backend == PES_PMU_PEBS) {
        /* a generic hardware event first: without it nothing PMU-based can work */
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_HARDWARE;
        a.config = PERF_COUNT_HW_CPU_CYCLES;
        a.exclude_kernel = 1;
        a.disabled = 1;
        long fd = pes_pmu_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            explain_errno(errno, "cycles", why, why_size);
            return -1;
        }
        close((int)fd);
        if (pes_pmu_encode_pebs(0, 100000, 0, &a, event, sizeof event, why, why_size))
            return -1;
    } else if (pes_pmu_encode_ibs("/sys", 100000, 0, &a, why, why_size)) {
        return -1;
    }
    long fd = pes_pmu_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        explain_errno(errno, event, why, why_size);
        return -1;
    }
    close((int)fd);
    snprintf(why, why_size, "%s opens on this thread", event);
    return 0;
}

int pes_pmu_probe_watchpoints(char *why, size_t why_size)
{
    static long probe;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_BREAKPOINT;
    a.bp_type = 2; /* HW_BREAKPOINT_W (linux/hw_breakpoint.h clashes with libpfm4 headers) */
    a.bp_addr = (uint64_t)(uintptr_t)&probe;
    a.bp_len = 8;
    a.sample_period = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    int n = 0;
    long fds[8];
    for (; n < 8; n++) {
        fds[n] = pes_pmu_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fds[n] < 0)
            break;
    }
    int e = errno;
    for (int i = 0; i < n; i++)
        close((int)fds[i]);
    if (n == 0) {
        explain_errno(e, "breakpoint", why, why_size);
        return -1;
    }
    snprintf(why, why_size, "available (%d debug registers per thread)", n);
    return 0;
}

int pes_pmu_rearm_refused(int err)
{
    return err == EINVAL || err == ENOTTY || err == EOPNOTSUPP;
}

/* The runtime's attributes (rt_watch.c, fill_attr), on a variable of the probe
 * that nothing touches while the event exists; disabled throughout. */
static void rearm_attr(struct perf_event_attr *a, const volatile uint64_t *addr, int rw,
                       uint64_t data)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_BREAKPOINT;
    a->bp_type = rw ? 3 : 2; /* HW_BREAKPOINT_RW, HW_BREAKPOINT_W */
    a->bp_addr = (uint64_t)(uintptr_t)addr;
    a->bp_len = 8;
    a->sample_period = 1;
    a->sigtrap = 1;
    a->remove_on_exec = 1;
    a->sig_data = data;
    a->exclude_kernel = 1;
    a->exclude_hv = 1;
    a->disabled = 1;
}

int pes_pmu_probe_watch_rearm(int *refused_errno, char *why, size_t why_size)
{
    static volatile uint64_t probe[2];
    struct perf_event_attr a;
    rearm_attr(&a, &probe[0], 0, 1);
    /* the system call itself, as the runtime's arms (pes_pmu_set_open fakes PMU events) */
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        explain_errno(errno, "breakpoint", why, why_size);
        return -1;
    }
    rearm_attr(&a, &probe[1], 1, 2);
    int rc = ioctl((int)fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
    int e = errno;
    close((int)fd);
    if (rc == 0 || !pes_pmu_rearm_refused(e)) {
        /* another error concerns this probe, not the kernel's support */
        snprintf(why, why_size, "re-armed with PERF_EVENT_IOC_MODIFY_ATTRIBUTES");
        return PES_PMU_REARM_MODIFY;
    }
    *refused_errno = e;
    snprintf(why, why_size, "reopened per arm (kernel refused MODIFY_ATTRIBUTES: %s)", strerror(e));
    return PES_PMU_REARM_REOPEN;
}

/* ------------------------------------------------------------ parsing */

#define KERNEL_START 0xffff800000000000ull

/* IBS_OP_DATA3 bits (AMD PPR): load op, store op, linear address valid */
#define IBS_LD_OP       (1ull << 0)
#define IBS_ST_OP       (1ull << 1)
#define IBS_LIN_VALID   (1ull << 17)
#define IBS_RIP_INVALID (1ull << 38) /* IBS_OP_DATA */

int pes_pmu_parse_ibs(const uint8_t *raw, size_t size, struct pes_event *ev)
{
    uint64_t r[7];
    if (size < 4 + sizeof r)
        return -1;
    memcpy(r, raw + 4, sizeof r);
    uint64_t rip = r[1], data = r[2], data3 = r[4], lin = r[5];
    if (!(data3 & (IBS_LD_OP | IBS_ST_OP)) || !(data3 & IBS_LIN_VALID) || lin >= KERNEL_START)
        return 0;
    memset(ev, 0, sizeof *ev);
    ev->kind = PES_EV_SAMPLE;
    ev->flags = (data3 & IBS_ST_OP) ? PES_EVF_WRITE : 0;
    ev->addr = lin;
    ev->ip = (data & IBS_RIP_INVALID) ? 0 : rip;
    ev->other_thread = UINT32_MAX;
    ev->site = UINT32_MAX;
    return 1;
}

static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *dst, size_t n)
{
    uint64_t pos = off & (size - 1);
    size_t first = (size_t)(size - pos) < n ? (size_t)(size - pos) : n;
    memcpy(dst, data + pos, first);
    memcpy((uint8_t *)dst + first, data, n - first);
}

static const uint64_t understood = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                   PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                   PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
                                   PERF_SAMPLE_CALLCHAIN;

/* The user entries of a callchain (u64 nr, then nr entries: context
 * markers, each followed by its context's ips) into st, after ips[0]. */
static void take_callchain(const uint64_t *chain, uint64_t nr, struct pes_pmu_stack *st)
{
    int user = 0, first = 1;
    for (uint64_t i = 0; i < nr && st->depth < PES_ALLOC_MAX_DEPTH; i++) {
        uint64_t ip = chain[i];
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) { /* a marker: which context follows */
            user = ip == (uint64_t)PERF_CONTEXT_USER;
            continue;
        }
        if (!user)
            continue;
        if (first) { /* the interrupted ip: the sample's, which ips[0] holds */
            first = 0;
            if (st->depth == 0 && ip)
                st->ips[st->depth++] = ip;
            continue;
        }
        if (ip)
            st->ips[st->depth++] = ip;
    }
}

size_t pes_pmu_parse_ring(const uint8_t *data, uint64_t size, uint64_t head, uint64_t *tail,
                          uint64_t sample_type, int stores, uint32_t thread, struct pes_event *out,
                          struct pes_pmu_stack *stacks, size_t max, struct pes_pmu_counts *c)
{
    size_t n = 0;
    /* small: this runs in the runtime's overflow handler on a 64 KiB sigaltstack;
     * the sample types understood here make records of well under 1 KiB */
    uint64_t rec_words[256];
    uint8_t *rec = (uint8_t *)rec_words;
    if (!size || (size & (size - 1)) || (sample_type & ~understood))
        return 0;
    while (*tail < head && n < max) {
        struct perf_event_header h;
        if (head - *tail < sizeof h)
            break;
        ring_copy(data, size, *tail, &h, sizeof h);
        if (h.size < sizeof h || h.size > head - *tail) {
            *tail = head; /* corrupt: skip what is there rather than loop */
            c->other++;
            break;
        }
        if (h.size > sizeof rec_words) {
            *tail += h.size; /* not a record we asked for */
            c->other++;
            continue;
        }
        ring_copy(data, size, *tail, rec, h.size);
        *tail += h.size;
        const uint8_t *p = rec + sizeof h, *end = rec + h.size;
        uint64_t v[2];
#define TAKE(dst, len)                                                                             \
    do {                                                                                           \
        if (p + (len) > end)                                                                       \
            goto bad;                                                                              \
        memcpy((dst), p, (len));                                                                   \
        p += (len);                                                                                \
    } while (0)
        switch (h.type) {
        case PERF_RECORD_LOST:
            TAKE(v, 16);
            c->lost += v[1];
            continue;
        case PERF_RECORD_THROTTLE:
            c->throttle++;
            continue;
        case PERF_RECORD_SAMPLE:
            break;
        default:
            c->other++;
            continue;
        }
        struct pes_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = PES_EV_SAMPLE;
        ev.thread = thread;
        ev.other_thread = UINT32_MAX;
        ev.site = UINT32_MAX;
        ev.stack = PES_STACK_NONE;
        ev.flags = stores ? PES_EVF_WRITE : 0;
        uint64_t u;
        uint32_t u32[2];
        if (sample_type & PERF_SAMPLE_IP)
            TAKE(&ev.ip, 8);
        if (sample_type & PERF_SAMPLE_TID)
            TAKE(u32, 8);
        if (sample_type & PERF_SAMPLE_TIME)
            TAKE(&ev.time, 8);
        if (sample_type & PERF_SAMPLE_ADDR)
            TAKE(&ev.addr, 8);
        if (sample_type & PERF_SAMPLE_CPU)
            TAKE(u32, 8);
        if (sample_type & PERF_SAMPLE_PERIOD)
            TAKE(&u, 8);
        const uint64_t *chain = NULL;
        uint64_t chain_n = 0;
        if (sample_type & PERF_SAMPLE_CALLCHAIN) {
            TAKE(&chain_n, 8);
            if (chain_n > (uint64_t)(end - p) / 8)
                goto bad;
            chain = (const uint64_t *)(const void *)p; /* rec is 8-byte aligned, as p */
            p += chain_n * 8;
        }
        if (sample_type & PERF_SAMPLE_RAW) {
            uint32_t rsize;
            TAKE(&rsize, 4);
            if (p + rsize > end)
                goto bad;
            struct pes_event ibs;
            int k = pes_pmu_parse_ibs(p, rsize, &ibs);
            p += rsize;
            if (k <= 0) {
                c->dropped++;
                continue;
            }
            ev.addr = ibs.addr;
            ev.flags = ibs.flags;
            if (ibs.ip)
                ev.ip = ibs.ip;
        }
        if (sample_type & PERF_SAMPLE_WEIGHT)
            TAKE(&ev.aux, 8); /* PEBS load latency (cycles) */
        if (sample_type & PERF_SAMPLE_DATA_SRC)
            TAKE(&u, 8);
        if (!(sample_type & PERF_SAMPLE_RAW) && (ev.addr == 0 || ev.addr >= KERNEL_START)) {
            c->dropped++;
            continue;
        }
        c->samples++;
        if (stacks) {
            struct pes_pmu_stack *st = &stacks[n];
            st->depth = 0;
            if (chain && ev.ip)
                st->ips[st->depth++] = ev.ip;
            if (chain)
                take_callchain(chain, chain_n, st);
        }
        out[n++] = ev;
        continue;
    bad:
        c->other++;
#undef TAKE
    }
    return n;
}
