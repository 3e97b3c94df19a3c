/* rt_stack.c — the short call stacks of sampled accesses (pes_event.stack,
 * docs/trace-format.md §2.6 and §4, issue 28).
 *
 * A stack is at most PES_ALLOC_MAX_DEPTH ips: ips[0] the sampled access's ip,
 * then the return addresses of its callers. The soft backend takes it with
 * _Unwind_Backtrace where the slow path takes the sample (the owner thread,
 * in the runtime, not in a signal handler); the PMU backends take it from the
 * sample's PERF_SAMPLE_CALLCHAIN (backends/pmu.c), in their overflow handler.
 *
 * Interning: one process-wide lock-free table maps an ip sequence (its hash,
 * then the ips compared) to an id; the first sample with a new sequence fills
 * an entry and queues it as an ALLOC_SITES item of kind PES_ALLOC_CALLSTACK
 * before it publishes the id, so the entry always comes before any event
 * naming it. Ids start at STACK_ID_BASE, apart from the allocation sites'
 * (rt_alloc.c numbers those from 1). The tables are mmap'ed once at start-up:
 * interning never allocates, so it is safe in the overflow handler. A full
 * table, or a queue the handler cannot take (pes_rt_writer_try_push), leaves
 * the event without a stack (PES_STACK_NONE) rather than wait. */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "core/core.h"

#define STACK_BITS    15u
#define STACK_SLOTS   (1u << STACK_BITS) /* at most half full */
#define MAX_STACKS    (STACK_SLOTS / 2)
#define STACK_PROBES  64u
#define STACK_ID_BASE 0x80000000u

enum slot_state { SLOT_MAKING = 0, SLOT_READY = 1, SLOT_FAILED = 2 };

struct slot {
    uint64_t hash;  /* atomic: 0 = free; set once by the thread that makes the entry */
    uint32_t index; /* entries[index], valid once state is READY */
    uint32_t state; /* atomic: enum slot_state */
};

struct entry {
    struct pes_alloc_site s;
    uint64_t ips[PES_ALLOC_MAX_DEPTH];
    struct pes_rt_item item; /* its ALLOC_SITES block */
};

static struct slot *slots;
static struct entry *entries;
static uint32_t n_entries; /* atomic: entries handed out */

int pes_rt_stack_init(void)
{
    if (__atomic_load_n(&slots, __ATOMIC_ACQUIRE))
        return 0;
    /* untouched pages cost nothing: a program with few stacks uses a few pages */
    void *a = mmap(NULL, STACK_SLOTS * sizeof(struct slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *b = mmap(NULL, MAX_STACKS * sizeof(struct entry), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        if (a != MAP_FAILED)
            munmap(a, STACK_SLOTS * sizeof(struct slot));
        if (b != MAP_FAILED)
            munmap(b, MAX_STACKS * sizeof(struct entry));
        return -1;
    }
    entries = b;
    __atomic_store_n(&slots, (struct slot *)a, __ATOMIC_RELEASE);
    return 0;
}

static uint64_t stack_hash(const uint64_t *ips, uint32_t depth)
{
    uint64_t h = depth;
    for (uint32_t i = 0; i < depth; i++)
        h = pes_mix64(h ^ ips[i]);
    return h ? h : 1; /* 0 marks a free slot */
}

/* Fills a new entry for the sequence and queues its block; its index, or
 * UINT32_MAX (table full, or a handler could not queue it). */
static uint32_t make_entry(const uint64_t *ips, uint32_t depth, int from_signal)
{
    uint32_t index = __atomic_fetch_add(&n_entries, 1, __ATOMIC_RELAXED);
    if (index >= MAX_STACKS)
        return UINT32_MAX;
    struct entry *e = &entries[index];
    memcpy(e->ips, ips, (size_t)depth * sizeof *ips);
    e->s = (struct pes_alloc_site){STACK_ID_BASE + index, PES_ALLOC_CALLSTACK, depth, e->ips};
    e->item.type = PES_RT_ITEM_ALLOC_SITES;
    e->item.heap = 0;
    e->item.alloc_sites = &e->s;
    e->item.n = 1;
    if (!from_signal) {
        pes_rt_writer_push(&e->item); /* before any event naming it: its queue position */
        return index;
    }
    return pes_rt_writer_try_push(&e->item) == 0 ? index : UINT32_MAX;
}

uint32_t pes_rt_stack_intern(const uint64_t *ips, uint32_t depth, int from_signal)
{
    struct slot *tab = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (!tab || depth == 0)
        return PES_STACK_NONE;
    if (depth > PES_ALLOC_MAX_DEPTH)
        depth = PES_ALLOC_MAX_DEPTH;
    uint64_t h = stack_hash(ips, depth);
    uint32_t mask = STACK_SLOTS - 1, at = (uint32_t)pes_hash_fib(h, STACK_BITS);
    /* bounded probing: a program with very many distinct stacks gets none
     * for the rest rather than a scan per sample */
    for (uint32_t probe = 0; probe < STACK_PROBES; probe++) {
        struct slot *sl = &tab[(at + probe) & mask];
        uint64_t cur = __atomic_load_n(&sl->hash, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            if (__atomic_compare_exchange_n(&sl->hash, &cur, h, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                uint32_t index = make_entry(ips, depth, from_signal);
                sl->index = index;
                __atomic_store_n(&sl->state, index == UINT32_MAX ? SLOT_FAILED : SLOT_READY,
                                 __ATOMIC_RELEASE);
                return index == UINT32_MAX ? PES_STACK_NONE : STACK_ID_BASE + index;
            }
            /* another thread took the slot: for this sequence or another one */
        }
        if (cur != h)
            continue;
        uint32_t st;
        while ((st = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE)) == SLOT_MAKING) {
            if (from_signal)
                return PES_STACK_NONE; /* a handler never waits */
            sched_yield();             /* its maker is queueing the block */
        }
        if (st == SLOT_FAILED)
            return PES_STACK_NONE;
        const struct entry *e = &entries[sl->index];
        if (e->s.depth == depth && !memcmp(e->ips, ips, (size_t)depth * sizeof *ips))
            return e->s.id;
        /* the same hash, another sequence: probe on */
    }
    return PES_STACK_NONE;
}

/* ------------------------------------------------------------ unwinding */

struct walk {
    uint64_t ip0;
    uint64_t *out;
    uint32_t n, skipped;
};

/* Frames up to the one whose ip is ip0 (the sampled access's) are the
 * runtime's own: skipped. */
static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct walk *w = arg;
    uint64_t ip = (uint64_t)_Unwind_GetIP(ctx);
    if (w->n == 0) {
        if (ip != w->ip0)
            return ++w->skipped > 16 ? _URC_END_OF_STACK : _URC_NO_REASON;
    } else if (ip == 0) {
        return _URC_END_OF_STACK;
    }
    w->out[w->n++] = ip;
    return w->n >= PES_ALLOC_MAX_DEPTH ? _URC_END_OF_STACK : _URC_NO_REASON;
}

uint32_t pes_rt_stack_here(uint64_t ip0)
{
    if (!ip0 || !__atomic_load_n(&slots, __ATOMIC_ACQUIRE))
        return PES_STACK_NONE;
    uint64_t ips[PES_ALLOC_MAX_DEPTH];
    struct walk w = {ip0, ips, 0, 0};
    _Unwind_Backtrace(walk_frame, &w);
    if (w.n == 0) { /* no unwind information up to the access: the access alone */
        ips[0] = ip0;
        w.n = 1;
    }
    return pes_rt_stack_intern(ips, w.n, 0);
}
