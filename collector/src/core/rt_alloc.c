/* rt_alloc.c — heap blocks and thread stacks of the traced program.
 *
 * The runtime defines malloc, calloc, realloc, reallocarray, free,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc and the C++
 * operator new family. libpes-rt comes before libc (and libstdc++) in the
 * lookup order of a pes-clang program, and first when it is LD_PRELOADed, so
 * these are the definitions the whole process uses (glibc's own calls to
 * malloc go through the PLT too). Each calls glibc's allocator directly
 * (__libc_malloc ...: no dlsym, which allocates), then, if the allocation is
 * recorded, writes ALLOC + ALLOC_SIZE (FREE before the block goes back) to
 * the thread's records (full trace) or PES_EV_ALLOC / PES_EV_FREE to its
 * events (sampled trace): docs/trace-format.md §2.6, §3, §4.
 *
 * Not recorded, a plain call: tracing off, before start-up or in a fork
 * child; the runtime's own allocations (inside the runtime, a writer
 * thread, a thread's set-up); an application signal handler (malloc is not
 * async-signal-safe; such a program is on its own).
 *
 * Sites: the return address of the program's call (ip0) names the site; a
 * lock-free open-addressing table maps it to an id. The first allocation from
 * a new ip0 takes the call stack (_Unwind_Backtrace, at most 8 frames from
 * the call) and queues an ALLOC_SITES item before it publishes the id, so the
 * block always comes before any record or event of any thread that uses it.
 * Later allocations from the same call through other callers get the same
 * site: ip[1..] are the callers of the first one (documented). The tables are
 * mmap'ed once, so the interposer itself never allocates.
 *
 * operator new is interposed too (it calls __libc_malloc), so that ip0 is the
 * program's call to new and the kind PES_ALLOC_NEW; when glibc has no memory
 * it defers to the next operator new (libstdc++'s), which runs the new_handler
 * and throws. operator delete is not: libstdc++'s calls free, recorded here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unwind.h>

#include "core/core.h"

static void add_event(struct pes_rt_thread *t, uint8_t kind, uint64_t addr, uint64_t size,
                      uint32_t site)
{
    struct pes_event ev;
    pes_rt_event_init(&ev, kind, t);
    ev.addr = addr;
    ev.aux = size;
    ev.site = site;
    t->s.in_runtime = 1; /* its traps are ignored while the event buffer changes */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&t->lock); /* a thread stopping this one flushes its events */
    if (!t->stopped) {
        struct pes_rt_drop pending = pes_rt_check_pending(t);
        ev.loads = t->s.loads + pending.loads;
        ev.stores = t->s.stores + pending.stores;
        pes_rt_events_add(t, &ev);
        if (__atomic_load_n(&t->s.ev_n, __ATOMIC_RELAXED) >= PES_RT_EV_FLUSH)
            pes_rt_events_flush(t, 0);
    }
    pthread_mutex_unlock(&t->lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->s.in_runtime = 0;
}

#ifndef PES_RT_NO_ALLOC_INTERPOSE

void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);

#define SITE_BITS   17u
#define SITE_SLOTS  (1u << SITE_BITS) /* at most half full */
#define MAX_SITES   (SITE_SLOTS / 2)  /* ids 1 .. MAX_SITES; the last one is "other sites" */
#define OVERFLOW_ID MAX_SITES

struct slot {
    uint64_t ip; /* atomic: 0 = free; set once by the thread that creates the site */
    uint32_t id; /* atomic: 0 until the site's ALLOC_SITES item is queued */
};

struct site {
    struct pes_alloc_site s;
    uint64_t ips[PES_ALLOC_MAX_DEPTH];
    struct pes_rt_item item; /* one ALLOC_SITES block of this site */
};

/* The code of libc and of the dynamic loader: a call from there may hold
 * their locks, so a thread's stack (pthread_getattr_np) is not read then. */
static struct pes_rt_code_range libc_code, ld_code;

static int in_libc(uint64_t ip)
{
    return pes_rt_code_range_has(&libc_code, ip) || pes_rt_code_range_has(&ld_code, ip);
}

static int live_init(void);

static struct slot *slots;
static struct site *sites;      /* sites[id - 1] */
static uint32_t n_sites;        /* atomic: ids handed out */
static uint32_t overflow_state; /* atomic: 0 none, 1 being made, 2 queued */

int pes_rt_alloc_init(int sampled)
{
    if (slots)
        return 0;
    libc_code = pes_rt_code_range_of((const void *)&__libc_malloc);
    ld_code = pes_rt_code_range_of((const void *)&_dl_find_object);
    /* untouched pages cost nothing: a program with few sites uses a few pages */
    void *a = mmap(NULL, SITE_SLOTS * sizeof(struct slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *b = mmap(NULL, MAX_SITES * sizeof(struct site), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        if (a != MAP_FAILED)
            munmap(a, SITE_SLOTS * sizeof(struct slot));
        if (b != MAP_FAILED)
            munmap(b, MAX_SITES * sizeof(struct site));
        return -1;
    }
    sites = b;
    /* without the live-block table every block's events are written at once */
    if (sampled && live_init() != 0)
        pes_rt_message("cannot map the live heap-block table; every allocation is an event");
    __atomic_store_n(&slots, (struct slot *)a, __ATOMIC_RELEASE);
    return 0;
}

/* ------------------------------------------------------------ call stacks */

struct backtrace {
    uint64_t ip0;
    uint64_t *out;
    uint32_t n, skipped;
};

/* Frames up to the caller's (whose IP is ip0) are the runtime's and the
 * allocator's own: skipped. */
static _Unwind_Reason_Code backtrace_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct backtrace *b = arg;
    uint64_t ip = (uint64_t)_Unwind_GetIP(ctx);
    if (b->n == 0) {
        if (ip != b->ip0)
            return ++b->skipped > 16 ? _URC_END_OF_STACK : _URC_NO_REASON;
    } else if (ip == 0) {
        return _URC_END_OF_STACK;
    }
    b->out[b->n++] = ip;
    return b->n >= PES_ALLOC_MAX_DEPTH ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* ------------------------------------------------------------ sites */

/* Fills site `id` and queues its block; the caller then publishes the id. */
static void make_site(uint32_t id, uint64_t ip0, uint32_t kind, int walk)
{
    struct site *s = &sites[id - 1];
    struct backtrace b = {ip0, s->ips, 0, 0};
    if (walk)
        _Unwind_Backtrace(backtrace_frame, &b);
    if (b.n == 0) { /* no unwind information up to the caller: the call alone */
        s->ips[0] = ip0;
        b.n = 1;
    }
    s->s = (struct pes_alloc_site){id, kind, b.n, s->ips};
    s->item.type = PES_RT_ITEM_ALLOC_SITES;
    s->item.heap = 0;
    s->item.alloc_sites = &s->s;
    s->item.n = 1;
    pes_rt_writer_push(&s->item); /* before any record naming it: its queue position */
}

/* The site of ip0 once it is past its first allocation: "other sites". */
static uint32_t overflow_site(uint32_t kind)
{
    uint32_t st = 0;
    if (__atomic_compare_exchange_n(&overflow_state, &st, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        make_site(OVERFLOW_ID, 0, kind, 0);
        __atomic_store_n(&overflow_state, 2, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&overflow_state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    return OVERFLOW_ID;
}

static uint32_t new_site(struct slot *sl, uint64_t ip0, uint32_t kind)
{
    uint32_t id = __atomic_add_fetch(&n_sites, 1, __ATOMIC_RELAXED);
    if (id >= OVERFLOW_ID)
        id = overflow_site(kind);
    else
        make_site(id, ip0, kind, 1);
    __atomic_store_n(&sl->id, id, __ATOMIC_RELEASE);
    return id;
}

static uint32_t site_of(uint64_t ip0, uint32_t kind)
{
    uint32_t mask = SITE_SLOTS - 1, h = (uint32_t)pes_hash_fib(ip0, SITE_BITS);
    /* bounded probing: a table filled by many call sites (JIT code) must not
     * turn every later allocation into a scan; the rest share the overflow site */
    for (uint32_t probe = 0; probe < 256; probe++) {
        struct slot *sl = &slots[(h + probe) & mask];
        uint64_t cur = __atomic_load_n(&sl->ip, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            if (__atomic_compare_exchange_n(&sl->ip, &cur, ip0, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                return new_site(sl, ip0, kind);
            /* another thread took the slot: for this ip or another one */
        }
        if (cur == ip0) {
            uint32_t id;
            while (!(id = __atomic_load_n(&sl->id, __ATOMIC_ACQUIRE)))
                sched_yield(); /* its creator is queueing the block */
            return id;
        }
    }
    return overflow_site(kind);
}

/* ------------------------------------------------------------ live blocks
 *
 * A sampled trace needs a heap block only if an event names an address in
 * it. So, while a sampled trace is written, each recorded block goes into
 * this table instead of the events (pes_rt_alloc_announce):
 *  - a SAMPLE event in a live block names the block itself (flag HEAP_BLOCK:
 *    other_thread = allocation site, aux = block size, distance = offset);
 *  - before any other event at an address in it (reuse, invalidation,
 *    communication, expired watch) the block's ALLOC event, with the time,
 *    size and site of the allocation, goes into that thread's own events:
 *    the replay reads EVENTS blocks in file order, and a thread's events keep
 *    their order there. Each thread announces a block once; its FREE event is
 *    written only if some thread announced it.
 * docs/collector.md, "Heap blocks in a sampled trace".
 *
 * The table is lock-free: the sampling paths read it from signal handlers
 * (traps, PMU overflows), possibly while their own thread is inside the
 * allocator. Open addressing, linear probing; a block's key is its usable
 * size's class k (floor log2) and its address >> k. Live blocks of one class
 * never start in the same 2^k bytes, so the key is unique, and the block
 * holding an address a starts in one of the windows a >> k, (a >> k) - 1,
 * (a >> k) - 2. A slot's seq is odd while it is written (a seqlock for the
 * readers); `emitted` holds the slot's generation (high 16 bits) and one bit
 * per thread that announced the block (threads from THREAD_BITS - 1 on share
 * the last bit and announce the block at each event). A block the table
 * cannot take (its probes are full) gets its ALLOC and FREE events at once,
 * as before. */

#define LIVE_BITS   21u
#define LIVE_SLOTS  (1u << LIVE_BITS)
#define LIVE_PROBES 64u
#define KEY_EMPTY   0u
#define KEY_TOMB    1u
#define KEY_BUSY    2u
#define THREAD_BITS 48u
#define GEN_SHIFT   THREAD_BITS

struct live {
    uint64_t seq; /* atomic */
    uint64_t key; /* atomic: KEY_EMPTY, KEY_TOMB, KEY_BUSY (being filled) or a block's key */
    uint64_t addr, size, time; /* atomic (relaxed): the ALLOC event's fields */
    uint64_t emitted;          /* atomic: generation << GEN_SHIFT | announcing threads */
    uint32_t site;             /* atomic (relaxed) */
    uint32_t pad[3];
};

static struct live *live;     /* set once when a sampled trace is written */
static uint64_t live_classes; /* atomic: classes that ever held a block */
/* Per class, the address range its blocks ever covered (atomic; only widens):
 * a lookup skips the classes whose range misses the address. Without it every
 * lookup probes each class in use at three keys, slots scattered over the
 * 128 MiB table: a page fault or a cache miss each, the bulk of a sample's
 * cost (issue 29). */
#define LIVE_CLASSES 48u
static uint64_t live_lo[LIVE_CLASSES], live_hi[LIVE_CLASSES];

static int live_init(void)
{
    void *p = mmap(NULL, LIVE_SLOTS * sizeof(struct live), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    for (uint32_t k = 0; k < LIVE_CLASSES; k++)
        __atomic_store_n(&live_lo[k], UINT64_MAX, __ATOMIC_RELAXED); /* empty: lo >= hi */
    __atomic_store_n(&live, (struct live *)p, __ATOMIC_RELEASE);
    return 0;
}

size_t malloc_usable_size(void *p);

static inline uint32_t live_class(uint64_t usable)
{
    uint32_t k = 63u - (uint32_t)__builtin_clzll(usable | 1);
    return k > LIVE_CLASSES - 1 ? LIVE_CLASSES - 1 : k;
}

/* Class k now holds a block over [addr, end): its range covers it (before the
 * block is published, so a lookup that finds the block also passed the range). */
static void live_widen(uint32_t k, uint64_t addr, uint64_t end)
{
    uint64_t cur = __atomic_load_n(&live_lo[k], __ATOMIC_RELAXED);
    while (addr < cur && !__atomic_compare_exchange_n(&live_lo[k], &cur, addr, 1, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED))
        ;
    cur = __atomic_load_n(&live_hi[k], __ATOMIC_RELAXED);
    while (end > cur && !__atomic_compare_exchange_n(&live_hi[k], &cur, end, 1, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED))
        ;
}

static inline uint64_t live_key(uint32_t k, uint64_t window)
{
    return (uint64_t)(k + 1) << 57 | (window & ((1ull << 57) - 1));
}

#define LD(x)    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Takes a slot for the block; -1 if its probes are all taken. */
static int live_insert(uint64_t addr, uint64_t size, uint64_t usable, uint32_t site, uint64_t time)
{
    struct live *tab = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
    if (!tab)
        return -1;
    uint32_t k = live_class(usable);
    uint64_t key = live_key(k, addr >> k), mask = LIVE_SLOTS - 1;
    uint64_t h = pes_hash_fib(key, LIVE_BITS);
    for (uint32_t probe = 0; probe < LIVE_PROBES; probe++) {
        struct live *sl = &tab[(h + probe) & mask];
        uint64_t cur = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
        /* an empty or freed slot, or this key's (a block whose free went unseen) */
        while (cur == KEY_EMPTY || cur == KEY_TOMB || cur == key) {
            if (!__atomic_compare_exchange_n(&sl->key, &cur, KEY_BUSY, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                continue; /* another thread changed it: look again */
            __atomic_fetch_add(&sl->seq, 1, __ATOMIC_RELAXED);
            __atomic_thread_fence(__ATOMIC_RELEASE);
            ST(sl->addr, addr);
            ST(sl->size, size);
            ST(sl->time, time);
            ST(sl->site, site);
            uint64_t gen = (LD(sl->emitted) >> GEN_SHIFT) + 1;
            ST(sl->emitted, gen << GEN_SHIFT);
            __atomic_fetch_add(&sl->seq, 1, __ATOMIC_RELEASE);
            live_widen(k, addr, addr + (size ? size : 1));
            __atomic_fetch_or(&live_classes, 1ull << k, __ATOMIC_RELAXED);
            __atomic_store_n(&sl->key, key, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -1;
}

/* The block at addr goes: 1 if a thread announced it, 0 if none did, -1 if
 * the table does not hold it. */
static int live_remove(uint64_t addr, uint64_t usable)
{
    struct live *tab = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
    if (!tab)
        return -1;
    uint32_t k = live_class(usable);
    uint64_t key = live_key(k, addr >> k), mask = LIVE_SLOTS - 1;
    uint64_t h = pes_hash_fib(key, LIVE_BITS);
    for (uint32_t probe = 0; probe < LIVE_PROBES; probe++) {
        struct live *sl = &tab[(h + probe) & mask];
        uint64_t cur = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
        if (cur == KEY_EMPTY)
            return -1;
        if (cur != key || LD(sl->addr) != addr)
            continue;
        __atomic_fetch_add(&sl->seq, 1, __ATOMIC_ACQ_REL);
        /* a new generation: an announcement that has not claimed its bit yet fails */
        uint64_t old = __atomic_load_n(&sl->emitted, __ATOMIC_RELAXED), gen;
        do
            gen = ((old >> GEN_SHIFT) + 1) << GEN_SHIFT;
        while (!__atomic_compare_exchange_n(&sl->emitted, &old, gen, 1, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED));
        __atomic_fetch_add(&sl->seq, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&sl->key, KEY_TOMB, __ATOMIC_RELEASE);
        return (old & ((1ull << THREAD_BITS) - 1)) != 0;
    }
    return -1;
}

struct live_view {
    struct live *sl;
    uint64_t addr, size, time, gen;
    uint32_t site;
};

/* The live block holding a, read consistently; 0 if none. Async-signal-safe. */
static int live_find(uint64_t a, struct live_view *v)
{
    struct live *tab = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
    if (!tab)
        return 0;
    uint64_t classes = __atomic_load_n(&live_classes, __ATOMIC_RELAXED), mask = LIVE_SLOTS - 1;
    while (classes) {
        uint32_t k = (uint32_t)__builtin_ctzll(classes);
        classes &= classes - 1;
        if (a < __atomic_load_n(&live_lo[k], __ATOMIC_RELAXED) ||
            a >= __atomic_load_n(&live_hi[k], __ATOMIC_RELAXED))
            continue; /* no block of this class ever covered a */
        for (uint64_t back = 0; back < 3 && back <= (a >> k); back++) {
            uint64_t key = live_key(k, (a >> k) - back);
            uint64_t h = pes_hash_fib(key, LIVE_BITS);
            for (uint32_t probe = 0; probe < LIVE_PROBES; probe++) {
                struct live *sl = &tab[(h + probe) & mask];
                uint64_t s1 = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
                uint64_t cur = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
                if (cur == KEY_EMPTY)
                    break;
                if (cur != key || (s1 & 1))
                    continue;
                v->addr = LD(sl->addr);
                v->size = LD(sl->size);
                v->time = LD(sl->time);
                v->site = LD(sl->site);
                v->gen = LD(sl->emitted) >> GEN_SHIFT;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (LD(sl->seq) != s1 || LD(sl->key) != key)
                    continue; /* changed meanwhile: freed, or another block */
                if (a >= v->addr && a - v->addr < (v->size ? v->size : 1)) {
                    v->sl = sl;
                    return 1;
                }
            }
        }
    }
    return 0;
}

static int lazy_heap(void)
{
    return __atomic_load_n(&live, __ATOMIC_RELAXED) != NULL;
}

void pes_rt_alloc_announce(struct pes_rt_thread *t, struct pes_event *ev)
{
    struct live_view v;
    if (!ev->addr || !lazy_heap() || !live_find(ev->addr, &v))
        return;
    if (ev->kind == PES_EV_SAMPLE) {
        /* a sample names its block itself: no event, and no FREE to follow */
        ev->flags |= PES_EVF_HEAP_BLOCK;
        ev->other_thread = v.site;
        ev->aux = v.size;
        ev->distance = ev->addr - v.addr;
        return;
    }
    uint64_t bit = 1ull << (t->index < THREAD_BITS - 1 ? t->index : THREAD_BITS - 1);
    int own = t->index < THREAD_BITS - 1;
    uint64_t old = __atomic_load_n(&v.sl->emitted, __ATOMIC_ACQUIRE);
    do {
        if ((old >> GEN_SHIFT) != (v.gen & ((1ull << (64 - GEN_SHIFT)) - 1)))
            return; /* the block went since it was read */
        if (own && (old & bit))
            return; /* already in this thread's events */
    } while (!__atomic_compare_exchange_n(&v.sl->emitted, &old, old | bit, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    struct pes_event a;
    pes_rt_event_init(&a, PES_EV_ALLOC, t);
    a.time = v.time; /* when it was allocated, not now */
    a.addr = v.addr;
    a.aux = v.size;
    a.site = v.site;
    a.loads = ev->loads;
    a.stores = ev->stores;
    /* the CAS above set this thread's own bit (it was clear, else we returned) */
    if (pes_rt_events_add(t, &a) < 0 && own)
        __atomic_fetch_and(&v.sl->emitted, ~bit, __ATOMIC_ACQ_REL); /* lost: not announced */
}

#undef LD
#undef ST

/* ------------------------------------------------------------ recording */

/* Whether this call may record, cheapest tests first. */
static inline int recording(void)
{
    if (!__atomic_load_n(&slots, __ATOMIC_RELAXED) || !pes_rt_active())
        return 0;
    if (pes_rt_entered_tls | pes_rt_in_pool_tls | pes_rt_in_setup_tls)
        return 0;
    return !pes_rt_handler_depth_tls || !pes_rt_in_app_handler();
}

/* One allocation (size > 0 for ALLOC) or free (size ignored), entered. */
static void note_entered(struct pes_rt_thread *t, int is_free, uint64_t addr, uint64_t size,
                         uint32_t kind, uint64_t ip0)
{
    if (__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
        return;
    /* a thread's stack comes first, when the program itself calls: not from
     * inside libc, which may hold the lock pthread_getattr_np takes */
    if (t->stack_pending && !is_free && !in_libc(ip0))
        pes_rt_alloc_stack(t);
    uint32_t site = is_free ? UINT32_MAX : site_of(ip0, kind);
    if (pes_rt.full) {
        struct pes_record r[2] = {{addr, is_free ? PES_ID_FREE : PES_ID_ALLOC, is_free ? 0 : site},
                                  {size, PES_ID_ALLOC_SIZE, 0}};
        pes_rt_buffer_put_control(t, r, is_free ? 1 : 2);
    }
    if (pes_rt.sampling) {
        /* the table first: its blocks' events come when a sample needs them */
        int in_table = -1;
        if (lazy_heap()) {
            uint64_t usable = malloc_usable_size((void *)(uintptr_t)addr);
            in_table = is_free ? live_remove(addr, usable)
                               : live_insert(addr, size, usable, site, pes_rt_now());
        }
        if (is_free ? in_table != 0 : in_table < 0)
            add_event(t, is_free ? PES_EV_FREE : PES_EV_ALLOC, addr, is_free ? 0 : size, site);
    }
}

static void note_saved(int is_free, const void *p, uint64_t size, uint32_t kind, uint64_t ip0);

/* errno is the program's: free() leaves it alone (glibc >= 2.33, POSIX 2024)
 * and the allocators set it only on failure, while recording may wait on a
 * futex, open files or read /proc (a thread's first record). */
static void note(int is_free, const void *p, uint64_t size, uint32_t kind, uint64_t ip0)
{
    if (!recording())
        return;
    int saved = errno;
    note_saved(is_free, p, size, kind, ip0);
    errno = saved;
}

static void note_saved(int is_free, const void *p, uint64_t size, uint32_t kind, uint64_t ip0)
{
    struct pes_rt_thread *t = pes_rt_self_tls;
    if (t) {
        /* pes_rt_enter_quick / pes_rt_leave_quick, inline: the entered flag
         * was 0 just above, and is set before anything a handler could see */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        pes_rt_entered_tls = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        note_entered(t, is_free, (uint64_t)(uintptr_t)p, size, kind, ip0);
        pes_rt_leave_quick();
        return;
    }
    /* the thread's first event: its set-up reads files (the main thread's
     * stack bounds), so the full guard, which holds cancellation off */
    if (pes_rt_enter())
        return;
    if ((t = pes_rt_thread_setup()) != NULL)
        note_entered(t, is_free, (uint64_t)(uintptr_t)p, size, kind, ip0);
    pes_rt_leave();
}

#define CALLER ((uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))
#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    if (p)
        note(0, p, size, PES_ALLOC_MALLOC, CALLER);
    return p;
}

EXPORT void free(void *p)
{
    if (p)
        note(1, p, 0, 0, 0); /* before the block can be handed out again */
    __libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    if (p)
        note(0, p, (uint64_t)n * size, PES_ALLOC_CALLOC, CALLER);
    return p;
}

static void *realloc_at(void *old, size_t size, uint64_t ip0)
{
    /* the old block's FREE comes first: once the call returns, glibc may
     * already have handed its address to another thread, whose ALLOC must
     * not be taken for the old block's. If the call fails the old block
     * lives on, unrecorded (its accesses: unknown). */
    if (old)
        note(1, old, 0, 0, 0);
    void *p = __libc_realloc(old, size);
    if (p)
        note(0, p, size, PES_ALLOC_REALLOC, ip0);
    return p;
}

EXPORT void *realloc(void *old, size_t size)
{
    return realloc_at(old, size, CALLER);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_at(old, bytes, CALLER);
}

static void *aligned_at(size_t align, size_t size, uint64_t ip0)
{
    void *p = __libc_memalign(align, size);
    if (p)
        note(0, p, size, PES_ALLOC_ALIGNED, ip0);
    return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    /* glibc's checks: a power of two multiple of sizeof(void *) */
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned_at(align, size, CALLER);
    errno = saved; /* posix_memalign leaves errno alone */
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
#if defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 38)
    /* as glibc >= 2.38: an alignment that is not a power of two is refused
     * (older ones round it up, as __libc_memalign does) */
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
#endif
#endif
    return aligned_at(align, size, CALLER);
}

EXPORT void *memalign(size_t align, size_t size)
{
    return aligned_at(align, size, CALLER);
}

EXPORT void *valloc(size_t size)
{
    void *p = __libc_valloc(size);
    if (p)
        note(0, p, size, PES_ALLOC_ALIGNED, CALLER);
    return p;
}

EXPORT void *pvalloc(size_t size)
{
    void *p = __libc_pvalloc(size);
    if (p) {
        long page = sysconf(_SC_PAGESIZE);
        uint64_t ps = page > 0 ? (uint64_t)page : 4096;
        note(0, p, size ? (size + ps - 1) / ps * ps : ps, PES_ALLOC_ALIGNED, CALLER);
    }
    return p;
}

/* ------------------------------------------------------------ operator new */

/* The next definition (libstdc++'s), for what glibc alone cannot do: the
 * new_handler loop and std::bad_alloc. Looked up only then. */
static void *next_new(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nothrow_fn)(size_t, const void *);
typedef void *(*new_aligned_fn)(size_t, size_t);
typedef void *(*new_aligned_nothrow_fn)(size_t, size_t, const void *);

/* operator new(size_t) and new[](size_t) */
#define NEW_PLAIN(sym)                                                                             \
    EXPORT void *sym(size_t size)                                                                  \
    {                                                                                              \
        void *p = __libc_malloc(size ? size : 1);                                                  \
        if (!p) {                                                                                  \
            new_fn f = (new_fn)next_new(#sym);                                                     \
            return f ? f(size) : NULL;                                                             \
        }                                                                                          \
        note(0, p, size, PES_ALLOC_NEW, CALLER);                                                   \
        return p;                                                                                  \
    }
/* operator new(size_t, const std::nothrow_t &) and new[] */
#define NEW_NOTHROW(sym)                                                                           \
    EXPORT void *sym(size_t size, const void *nt)                                                  \
    {                                                                                              \
        void *p = __libc_malloc(size ? size : 1);                                                  \
        if (!p) {                                                                                  \
            new_nothrow_fn f = (new_nothrow_fn)next_new(#sym);                                     \
            return f ? f(size, nt) : NULL;                                                         \
        }                                                                                          \
        note(0, p, size, PES_ALLOC_NEW, CALLER);                                                   \
        return p;                                                                                  \
    }
/* operator new(size_t, std::align_val_t) and new[] */
#define NEW_ALIGNED(sym)                                                                           \
    EXPORT void *sym(size_t size, size_t align)                                                    \
    {                                                                                              \
        void *p = __libc_memalign(align, size ? size : 1);                                         \
        if (!p) {                                                                                  \
            new_aligned_fn f = (new_aligned_fn)next_new(#sym);                                     \
            return f ? f(size, align) : NULL;                                                      \
        }                                                                                          \
        note(0, p, size, PES_ALLOC_NEW, CALLER);                                                   \
        return p;                                                                                  \
    }
#define NEW_ALIGNED_NOTHROW(sym)                                                                   \
    EXPORT void *sym(size_t size, size_t align, const void *nt)                                    \
    {                                                                                              \
        void *p = __libc_memalign(align, size ? size : 1);                                         \
        if (!p) {                                                                                  \
            new_aligned_nothrow_fn f = (new_aligned_nothrow_fn)next_new(#sym);                     \
            return f ? f(size, align, nt) : NULL;                                                  \
        }                                                                                          \
        note(0, p, size, PES_ALLOC_NEW, CALLER);                                                   \
        return p;                                                                                  \
    }

#if UINTPTR_MAX == UINT64_MAX /* size_t is unsigned long: 'm' in the mangled names */
NEW_PLAIN(_Znwm)
NEW_PLAIN(_Znam)
NEW_NOTHROW(_ZnwmRKSt9nothrow_t)
NEW_NOTHROW(_ZnamRKSt9nothrow_t)
NEW_ALIGNED(_ZnwmSt11align_val_t)
NEW_ALIGNED(_ZnamSt11align_val_t)
NEW_ALIGNED_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t)
NEW_ALIGNED_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t)
#endif

#else /* PES_RT_NO_ALLOC_INTERPOSE: sanitizer builds own malloc */

int pes_rt_alloc_init(int sampled)
{
    (void)sampled;
    return 0; /* nothing to set up: heap blocks are not recorded in these builds */
}

void pes_rt_alloc_announce(struct pes_rt_thread *t, struct pes_event *ev)
{
    (void)t, (void)ev; /* heap blocks are not recorded in these builds */
}

#endif

/* ------------------------------------------------------------ thread stacks */

void pes_rt_alloc_stack(struct pes_rt_thread *t)
{
    t->stack_pending = 0;
    if (__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
        return;
    /* inside the runtime: pthread_getattr_np allocates (the main thread's
     * reads /proc/self/maps), which must not be recorded */
    int entered = pes_rt_enter_quick() == 0;
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &lo, &size) != 0)
            size = 0;
        pthread_attr_destroy(&attr);
    }
    if (size) {
        uint64_t addr = (uint64_t)(uintptr_t)lo;
        if (pes_rt.full) {
            struct pes_record r[2] = {{addr, PES_ID_ALLOC, PES_ALLOC_SITE_STACK},
                                      {size, PES_ID_ALLOC_SIZE, 0}};
            pes_rt_buffer_put_control(t, r, 2);
        }
        if (pes_rt.sampling)
            add_event(t, PES_EV_ALLOC, addr, size, PES_ALLOC_SITE_STACK);
    }
    if (entered)
        pes_rt_leave_quick();
}
