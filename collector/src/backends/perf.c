/* perf.c — what the pebs and ibs backends share (perf.h). Each thread opens
 * its own events (PEBS: a load and a store event; IBS: one op event; which
 * ones is the backend's encode function) with a ring buffer, and
 * has the overflow signal sent to itself (F_SETOWN_EX/F_OWNER_TID, O_ASYNC,
 * F_SETSIG; wakeup_events = 1 so every sample signals). The handler runs on
 * the thread's sigaltstack, drains the rings with pes_pmu_parse_ring (no
 * malloc, no locks of its own) and gives every sample to the same
 * pes_rt_sample_record the soft sampler uses, so reuse, reuse-shared and comm
 * work unchanged; a sample's PERF_SAMPLE_CALLCHAIN (user part) becomes its
 * call stack (rt_stack.c). Lost and throttle records and dropped samples (IBS
 * non-memory ops, kernel or runtime addresses) become LOST, THROTTLE and
 * DROPPED events.
 *
 * Time distances: the accesses a thread has executed are its events' counts,
 * read through the mmap'd user page (offset + rdpmc(index - 1), the kernel's
 * self-monitoring protocol: no system call in the trap handler) when the
 * kernel allows rdpmc, else with read(2) on the event. The soft sampler's
 * countdowns are switched off on such threads.
 *
 * The handler never runs inside the runtime: when the thread is already in the
 * runtime (slow path, this handler), was interrupted in the runtime's own code
 * or in a handler running on the alternate stack (the SIGTRAP handler), it
 * leaves the samples in the ring for the next signal. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "backends/perf.h"
#include "backends/pmu.h"
#include "core/rt_adapt.h"

#define RING_PAGES  8 /* data pages per event (a power of two) */
#define DRAIN_BATCH 16

/* Tests replace perf_event_open by defining this symbol in the program (see
 * tests/e2e/collector/pmu_app.c); it is never defined in production. */
extern long pes_rt_pmu_test_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                                 unsigned long flags) __attribute__((weak));

static struct {
    int started; /* the overflow handler is installed */
    int n;       /* events per thread */
    struct perf_event_attr attr[2];
    int stores[2];
    int sig;
    uintptr_t text_lo, text_hi; /* the runtime's own code: its accesses are not the program's */
    int warned;
} pmu;

static void on_overflow(int sig, siginfo_t *si, void *uc);

/* The executable segment of this library. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t self = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (self >= lo && self < hi) {
            pmu.text_lo = lo;
            pmu.text_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void finish_attr(struct perf_event_attr *a, uint64_t period)
{
    a->sample_period = period;
    a->disabled = 0;      /* counting from open: samples before F_SETOWN wait in the ring */
    a->wakeup_events = 1; /* a signal per sample: drained on the thread that took it */
    a->use_clockid = 1;   /* sample times comparable with the runtime's clock */
    a->clockid = CLOCK_MONOTONIC;
    a->inherit = 0;
}

int pes_rt_perf_start(pes_rt_perf_encode_fn encode, char *why, size_t why_size)
{
    struct pes_rt_perf_events ev;
    if (pes_rt_pmu_test_open)
        pes_pmu_set_open(pes_rt_pmu_test_open);
    memset(&ev, 0, sizeof ev);
    if (encode(&ev, why, why_size))
        return -1;
    memcpy(pmu.attr, ev.attr, sizeof pmu.attr);
    memcpy(pmu.stores, ev.stores, sizeof pmu.stores);
    pmu.n = ev.n;
    for (int i = 0; i < pmu.n; i++)
        finish_attr(&pmu.attr[i], ev.period[i]);
    dl_iterate_phdr(find_text, (void *)(uintptr_t)&pes_rt_perf_start);
    pmu.sig = SIGRTMIN + 5;
    pes_rt_sigwrap_reserve(pmu.sig);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_overflow;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (pes_rt_real_sigaction(pmu.sig, &sa, NULL) != 0) {
        snprintf(why, why_size, "sigaction: %s", strerror(errno));
        return -1;
    }
    pmu.started = 1;
    return 0;
}

/* ------------------------------------------------------------ counting */

static uint64_t ring_count(const struct pes_rt_pmu_ring *r)
{
    const volatile struct perf_event_mmap_page *pg = r->base;
    for (int tries = 0; pg && tries < 100; tries++) {
        uint32_t seq = pg->lock;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (!pg->cap_user_rdpmc)
            break;
        uint32_t idx = pg->index;
        uint64_t count = (uint64_t)pg->offset;
        if (idx) {
            uint32_t lo, hi;
            __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
            uint16_t width = pg->pmc_width;
            int64_t pmc = (int64_t)((uint64_t)hi << 32 | lo);
            if (width && width < 64) {
                pmc <<= 64 - width;
                pmc >>= 64 - width;
            }
            count += (uint64_t)pmc;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (pg->lock == seq)
            return count;
    }
    uint64_t v = 0;
    if (pes_rt_read(r->fd, &v, sizeof v) != (long)sizeof v)
        return 0;
    return v;
}

uint64_t pes_rt_perf_count(const struct pes_rt_thread *t)
{
    uint64_t sum = 0;
    for (int i = 0; i < 2; i++)
        if (__atomic_load_n(&t->s.pmu[i].base, __ATOMIC_ACQUIRE))
            sum += ring_count(&t->s.pmu[i]);
    return sum;
}

/* ------------------------------------------------------------ handler */

/* Hands the current event buffer to the writer if the other one is free (a
 * handler cannot wait); otherwise keeps filling (full = lost, counted). */
static void flush_from_handler(struct pes_rt_thread *t)
{
    int next = (t->s.ev_cur + 1) % PES_RT_NBUF;
    if (__atomic_load_n(&t->s.ev[next].busy, __ATOMIC_ACQUIRE))
        return;
    size_t n = __atomic_load_n(&t->s.ev_n, __ATOMIC_ACQUIRE);
    struct pes_rt_buf *b = &t->s.ev[t->s.ev_cur];
    b->item.type = PES_RT_ITEM_EVENTS;
    b->item.heap = 0;
    b->item.thread = t->index;
    b->item.events = t->s.evs[t->s.ev_cur];
    b->item.n = n;
    b->item.buf = b;
    if (pes_rt_writer_try_push(&b->item))
        return;
    t->s.ev_cur = next;
    __atomic_store_n(&t->s.ev_n, 0, __ATOMIC_RELEASE);
}

static void count_event(struct pes_rt_thread *t, uint8_t kind, uint64_t n)
{
    if (!n)
        return;
    struct pes_event e;
    pes_rt_event_init(&e, kind, t);
    e.aux = n;
    pes_rt_events_add(t, &e);
}

static int in_runtime_text(uint64_t ip)
{
    return ip >= pmu.text_lo && ip < pmu.text_hi;
}

/* Drains every ring of t (owner thread, t->s.in_runtime set by the caller). */
static void drain(struct pes_rt_thread *t)
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < 2; i++) {
        struct pes_rt_pmu_ring *r = &t->s.pmu[i];
        struct perf_event_mmap_page *pg = __atomic_load_n(&r->base, __ATOMIC_ACQUIRE);
        if (!pg)
            continue;
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = pg->data_tail;
        uint64_t off = pg->data_offset ? pg->data_offset : (uint64_t)page;
        uint64_t size = pg->data_size ? pg->data_size : r->len - (uint64_t)page;
        if (off + size > r->len)
            continue; /* not a layout we mapped */
        const uint8_t *data = (const uint8_t *)pg + off;
        struct pes_pmu_counts c = {0};
        uint64_t counted[2] = {0, 0};
        int have_counts = 0;
        for (;;) {
            struct pes_event evs[DRAIN_BATCH];
            struct pes_pmu_stack stacks[DRAIN_BATCH];
            size_t n = pes_pmu_parse_ring(data, size, head, &tail, pmu.attr[i].sample_type,
                                          r->stores, t->index, evs, stacks, DRAIN_BATCH, &c);
            if (n && !have_counts) {
                /* the counts when the ring is drained: at most the samples
                 * still in the ring late, normally one (wakeup per sample) */
                for (int k = 0; k < 2; k++)
                    if (__atomic_load_n(&t->s.pmu[k].base, __ATOMIC_ACQUIRE))
                        counted[pmu.stores[k]] += ring_count(&t->s.pmu[k]);
                __atomic_store_n(&t->s.loads, counted[0], __ATOMIC_RELAXED);
                __atomic_store_n(&t->s.stores, counted[1], __ATOMIC_RELAXED);
                have_counts = 1;
            }
            for (size_t k = 0; k < n; k++) {
                struct pes_event *ev = &evs[k];
                if (in_runtime_text(ev->ip)) {
                    c.dropped++; /* the runtime's own access (this handler) */
                    continue;
                }
                ev->size =
                    8; /* the PMU does not say; 8 bytes, narrowed by alignment when watched */
                ev->loads = counted[0];
                ev->stores = counted[1];
                ev->stack = stacks[k].depth ? pes_rt_stack_intern(stacks[k].ips, stacks[k].depth, 1)
                                            : PES_STACK_NONE;
                pes_rt_sample_record(t, ev);
                if (__atomic_load_n(&t->s.ev_n, __ATOMIC_RELAXED) >= PES_RT_EV_FLUSH)
                    flush_from_handler(t);
            }
            if (n < DRAIN_BATCH)
                break;
        }
        __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
        count_event(t, PES_EV_LOST, c.lost);
        count_event(t, PES_EV_THROTTLE, c.throttle);
        count_event(t, PES_EV_DROPPED, c.dropped);
    }
}

static void on_overflow(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    if (__atomic_load_n(&pes_rt.stopping, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&pes_rt.sampling, __ATOMIC_ACQUIRE))
        return;
    struct pes_rt_thread *t = pes_rt_thread_self();
    if (!t || t->s.in_runtime || __atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
        return; /* the samples wait in the ring for the next signal */
    ucontext_t *uc = ucv;
    if (uc && in_runtime_text((uint64_t)uc->uc_mcontext.gregs[REG_RIP]))
        return;
    /* interrupted a handler on the alternate stack (the watchpoint handler,
     * also while it is in libc, or one of the application's): not now */
    if (uc && uc->uc_stack.ss_size) {
        /* uc_stack is the alternate stack; ss_flags does not say whether the
         * interrupted code ran on it, its stack pointer does */
        uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
        uintptr_t lo = (uintptr_t)uc->uc_stack.ss_sp;
        if (sp >= lo && sp - lo <= uc->uc_stack.ss_size)
            return;
    }
    int saved = errno;
    /* draining may push to the writer queue: an asynchronous cancel must not
     * end the thread while it holds that lock */
    int entered = pes_rt_enter() == 0;
    t->s.in_runtime = 1; /* traps and nested overflows while draining are ours */
    drain(t);
    t->s.in_runtime = 0;
    if (entered)
        pes_rt_leave();
    errno = saved;
}

/* ------------------------------------------------------------ per thread */

static void close_ring(struct pes_rt_pmu_ring *r)
{
    void *base = __atomic_exchange_n(&r->base, NULL, __ATOMIC_ACQ_REL);
    if (r->fd >= 0)
        pes_rt_close(r->fd); /* no signal after this */
    r->fd = -1;
    if (base)
        munmap(base, r->len);
}

void pes_rt_perf_open(struct pes_rt_thread *t)
{
    struct pes_rt_sampler *s = &t->s;
    for (int i = 0; i < 2; i++)
        s->pmu[i].fd = -1;
    if (!pmu.started || !pmu.n)
        return;
    s->cd_load = s->cd_store = UINT64_MAX; /* the PMU samples, not the countdowns */
    pes_rt_altstack_setup(t);              /* the handler's frames stay off the program's stack */
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * (1 + RING_PAGES);
    for (int i = 0; i < pmu.n; i++) {
        struct pes_rt_pmu_ring *r = &s->pmu[i];
        struct perf_event_attr a = pmu.attr[i];
        long fd = pes_pmu_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        const char *what = "perf_event_open";
        if (fd < 0)
            goto fail;
        r->fd = (int)fd;
        r->len = len;
        r->stores = pmu.stores[i];
        void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        what = "mmap";
        if (base == MAP_FAILED)
            goto fail;
        __atomic_store_n(&r->base, base, __ATOMIC_RELEASE);
        struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = t->tid};
        what = "fcntl";
        int fl = fcntl(r->fd, F_GETFL);
        if (fl < 0 || fcntl(r->fd, F_SETOWN_EX, &owner) != 0 ||
            fcntl(r->fd, F_SETSIG, pmu.sig) != 0 || fcntl(r->fd, F_SETFL, fl | O_ASYNC) != 0)
            goto fail;
        continue;
    fail:
        if (!__atomic_exchange_n(&pmu.warned, 1, __ATOMIC_RELAXED) && !pes_rt.cfg.quiet)
            pes_rt_message("%s backend: %s: %s; thread %u is not sampled", pes_rt.backend->name,
                           what, strerror(errno), t->index);
        for (int k = 0; k <= i; k++)
            close_ring(&s->pmu[k]);
        return;
    }
    /* --samples: the schedule's first level (rt_adapt.h); a kernel that
     * refuses it leaves the thread at the cap, and its PERIOD events say so */
    if (pes_rt.cfg.samples_target && pes_rt.backend->set_period(t) < 0) {
        s->adapt_level = PES_RT_ADAPT_LEVELS;
        s->period_load = pes_rt.cfg.period_load;
        s->period_store = pes_rt.cfg.period_store;
        pes_rt.backend->set_period(t);
    }
}

int pes_rt_perf_set_period(struct pes_rt_thread *t)
{
    struct pes_rt_sampler *s = &t->s;
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        struct pes_rt_pmu_ring *r = &s->pmu[i];
        /* the IBS op ring samples loads and stores at one period: the load
         * period, or the store period when loads are not sampled (as opened) */
        uint64_t p =
            r->stores ? s->period_store : (s->period_load ? s->period_load : s->period_store);
        if (r->fd >= 0 && p && ioctl(r->fd, PERF_EVENT_IOC_PERIOD, &p) != 0)
            rc = -1;
    }
    return rc;
}

/* From drain to close the overflow handler leaves the rings alone
 * (in_runtime); close restores what the thread had before drain. */
static __thread __attribute__((tls_model("initial-exec"))) int was_in_runtime;

void pes_rt_perf_drain(struct pes_rt_thread *t)
{
    int was = t->s.in_runtime;
    was_in_runtime = was;
    t->s.in_runtime = 1; /* an overflow now leaves the ring to us */
    if (!was && !__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
        drain(t);
        uint64_t counted[2] = {0, 0}; /* the final counts, for TOTALS */
        for (int k = 0; k < 2; k++)
            if (__atomic_load_n(&t->s.pmu[k].base, __ATOMIC_ACQUIRE))
                counted[pmu.stores[k]] += ring_count(&t->s.pmu[k]);
        __atomic_store_n(&t->s.loads, counted[0], __ATOMIC_RELAXED);
        __atomic_store_n(&t->s.stores, counted[1], __ATOMIC_RELAXED);
    }
}

void pes_rt_perf_close(struct pes_rt_thread *t)
{
    t->s.in_runtime = 1;
    for (int i = 0; i < 2; i++)
        close_ring(&t->s.pmu[i]);
    t->s.in_runtime = was_in_runtime;
}
