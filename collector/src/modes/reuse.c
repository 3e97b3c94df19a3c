/* reuse.c — ReuseTracker: the reuse (intra-thread) and reuse-shared modes.
 *
 * Intra-thread (Alg. 2 and 3): a sample takes a global slot chosen by
 * reservoir sampling (reservoir.c); the sampling thread watches the address
 * RW, every other thread W. The first trap decides: in the sampling thread it
 * is a reuse with time distance = its load+store count difference; in another
 * thread (a write) it is an invalidation. Shared cache (§6.4.2): threads of the
 * sampler's socket watch RW, other sockets W, the sampler itself nothing; a
 * trap on the same socket is a reuse whose distance sums the counts of that
 * socket's threads, a trap on another socket an invalidation.
 *
 * Soft mode never arms another thread's registers (that needs an IPI, ≈10 µs
 * each): it publishes the slot and lowers the other threads' limits so
 * each arms its own registers at its next instrumented access. Between the
 * sample and that access an invalidation can go unseen — the relaxed
 * definition of reuse (dissertation §6.3).
 *
 * Slot state word: generation << 1 | active. A trap decides a slot by one CAS
 * from its armed generation to inactive; a new sample first swaps the word to
 * a new, inactive generation, then writes the fields, then activates it, so a
 * trap that won the CAS read the fields of its own generation. The fields are
 * relaxed atomics: the handler reads them without a lock.
 *
 * Censoring: a watch that ends undecided — replaced by a later sample, or
 * still armed when its (intra-thread) owner ends — is a WATCH_EXPIRED event
 * whose distance is how long it survived, in the same counts as a reuse's
 * distance: its reuse time is at least that (a right-censored observation,
 * docs/accuracy.md "Censoring"). Exactly one of REUSE, INVALIDATION or
 * WATCH_EXPIRED ends every armed watch: each leaves the state word by one
 * atomic operation (the trap's CAS, the new sample's exchange, the thread
 * end's CAS). */
#include <string.h>

#include "modes/modes.h"
#include "modes/reservoir.h"
#include "modes/watch.h"

#define LINE 64u

struct slot {
    uint64_t state;
    uint64_t addr, count, site, sample_ip;
    uint64_t phase;  /* count at the end of the sample's segment (check-clone traps) */
    uint64_t offers; /* samples offered to this slot's reservoir since it was armed */
    uint32_t len, size, owner, socket, write;
    uint64_t chunks[PES_RT_MAX_DEBUG_REGISTERS]; /* spatial: one chunk per register */
    uint32_t chunk_len[PES_RT_MAX_DEBUG_REGISTERS];
    uint32_t n_chunks;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[PES_RT_MAX_DEBUG_REGISTERS];
static struct pes_rt_reservoir_slot reservoir[PES_RT_MAX_DEBUG_REGISTERS];
static uint32_t next_gen;

#define LD(x)    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static int shared_mode(void)
{
    return pes_rt.mode == &pes_rt_mode_reuse_shared;
}

static uint32_t n_slots(void)
{
    return pes_rt.cfg.spatial ? 1 : pes_rt.cfg.debug_registers;
}

/* Sum of the load+store counts of the threads of `socket`; `self` exactly.
 * The thread list only grows and is never freed: safe in a handler. */
static uint64_t socket_count(const struct pes_rt_thread *self, uint32_t socket)
{
    uint64_t sum = 0;
    for (struct pes_rt_thread *t = __atomic_load_n(&pes_rt.threads, __ATOMIC_ACQUIRE); t;
         t = t->next) {
        if (t->s.socket != socket)
            continue;
        if (t == self)
            sum += pes_rt_sample_count_self(t);
        else {
            /* racy by design (the relaxed definition): loads, stores and what
             * its check path counted since its last sync */
            struct pes_rt_drop d = pes_rt_check_pending_other(t);
            sum += __atomic_load_n(&t->s.loads, __ATOMIC_RELAXED) +
                   __atomic_load_n(&t->s.stores, __ATOMIC_RELAXED) + d.loads + d.stores;
        }
    }
    return sum;
}

/* The load+store count of the thread with index `owner` (self: exactly;
 * another: as of its last slow path plus what its check path counted since,
 * racy by design like socket_count); UINT64_MAX if it is not in the list. */
static uint64_t thread_count(const struct pes_rt_thread *self, uint32_t owner)
{
    if (owner == self->index)
        return pes_rt_sample_count_self(self);
    for (struct pes_rt_thread *t = __atomic_load_n(&pes_rt.threads, __ATOMIC_ACQUIRE); t;
         t = t->next) {
        if (t->index != owner)
            continue;
        struct pes_rt_drop d = pes_rt_check_pending_other(t);
        return __atomic_load_n(&t->s.loads, __ATOMIC_RELAXED) +
               __atomic_load_n(&t->s.stores, __ATOMIC_RELAXED) + d.loads + d.stores;
    }
    return UINT64_MAX;
}

/* The thread with index `owner` (t itself, or from the list, which only grows
 * and is never freed: safe in a handler); NULL if it is not there. */
static struct pes_rt_thread *thread_of(struct pes_rt_thread *t, uint32_t owner)
{
    if (owner == t->index)
        return t;
    for (struct pes_rt_thread *o = __atomic_load_n(&pes_rt.threads, __ATOMIC_ACQUIRE); o;
         o = o->next)
        if (o->index == owner)
            return o;
    return NULL;
}

/* A WATCH_EXPIRED event for the undecided watch of slot s (fields read by
 * the caller before the state word changed): thread = its owner,
 * other_thread = the thread that replaced it (UINT32_MAX: its owner ended),
 * distance = accesses it survived (owner's, or the socket's, count now minus
 * at the sample; 0 if unknown), aux = the reservoir offers it was kept over. */
static void expired_event(struct pes_rt_thread *t, const struct slot *old, uint64_t now,
                          int by_other)
{
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_WATCH_EXPIRED, t);
    ev.thread = old->owner;
    ev.other_thread = by_other ? t->index : UINT32_MAX;
    ev.addr = old->addr;
    ev.size = (uint16_t)old->size;
    ev.site = (uint32_t)old->site;
    ev.ip = old->sample_ip;
    ev.flags = (old->write ? PES_EVF_WRITE : 0) | (pes_rt.cfg.spatial ? PES_EVF_SPATIAL : 0) |
               (shared_mode() ? PES_EVF_SHARED_CACHE : 0);
    ev.distance = now != UINT64_MAX && now > old->count ? now - old->count : 0;
    ev.aux = old->offers;
    ev.loads = t->s.loads;
    ev.stores = t->s.stores;
    pes_rt_alloc_announce(t, &ev);
    pes_rt_events_add(t, &ev);
}

static void read_slot(const struct slot *s, struct slot *out)
{
    out->addr = LD(s->addr);
    out->count = LD(s->count);
    out->site = LD(s->site);
    out->sample_ip = LD(s->sample_ip);
    out->offers = LD(s->offers);
    out->size = LD(s->size);
    out->owner = LD(s->owner);
    out->socket = LD(s->socket);
    out->write = LD(s->write);
}

/* Which registers of thread t watch slot i, and how (-1: none). */
static int watch_type(const struct pes_rt_thread *t, const struct slot *s)
{
    uint32_t owner = LD(s->owner);
    if (!shared_mode())
        return owner == t->index ? 1 : 0;
    if (owner == t->index)
        return -1; /* same core: intra-thread profiling's business (Table 6.3) */
    return LD(s->socket) == t->s.socket ? 1 : 0;
}

static void arm_slot(struct pes_rt_thread *t, uint32_t i, uint32_t gen)
{
    struct slot *s = &slots[i];
    int type = watch_type(t, s);
    if (pes_rt.cfg.spatial) {
        uint32_t n = LD(s->n_chunks);
        for (uint32_t r = 0; r < pes_rt.cfg.debug_registers; r++) {
            if (type < 0 || r >= n)
                pes_rt_watch_disarm(t, r);
            else
                pes_rt_watch_arm(t, r, LD(s->chunks[r]), LD(s->chunk_len[r]), type, gen);
        }
        return;
    }
    if (type < 0)
        pes_rt_watch_disarm(t, i);
    else
        pes_rt_watch_arm(t, i, LD(s->addr), LD(s->len), type, gen);
}

static void reuse_sync(struct pes_rt_thread *t)
{
    for (uint32_t i = 0; i < n_slots(); i++) {
        uint64_t st = __atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE);
        uint32_t gen = (uint32_t)(st >> 1);
        uint32_t reg = pes_rt.cfg.spatial ? 0 : i;
        if (!(st & 1)) {
            if (t->s.wp[reg].armed)
                for (uint32_t r = reg;
                     r < (pes_rt.cfg.spatial ? pes_rt.cfg.debug_registers : reg + 1); r++)
                    pes_rt_watch_disarm(t, r);
            continue;
        }
        if (t->s.wp[reg].armed && t->s.wp[reg].gen == gen)
            continue;
        arm_slot(t, i, gen);
        /* the slot may have been replaced meanwhile: a stale arm only costs a
         * trap that the generation check ignores, and a later wake re-syncs */
    }
}

/* Spatial granularity: the line of the sample, as much of it as the registers
 * cover (ComDetective's trick): the sampled word first, then random others. */
static void choose_chunks(struct slot *s, uint64_t addr, uint32_t size, uint64_t *rng)
{
    uint64_t line = addr & ~(uint64_t)(LINE - 1);
    uint64_t first = addr & ~7ull;
    uint32_t n = 0;
    ST(s->chunks[n], first);
    ST(s->chunk_len[n], 8);
    n++;
    (void)size;
    uint32_t order[LINE / 8];
    for (uint32_t k = 0; k < LINE / 8; k++)
        order[k] = k;
    for (uint32_t k = LINE / 8 - 1; k > 0; k--) {
        uint32_t j = (uint32_t)pes_rt_rand_below(rng, k + 1);
        uint32_t tmp = order[k];
        order[k] = order[j];
        order[j] = tmp;
    }
    for (uint32_t k = 0; k < LINE / 8 && n < pes_rt.cfg.debug_registers; k++) {
        uint64_t c = line + order[k] * 8u;
        if (c == first)
            continue;
        ST(s->chunks[n], c);
        ST(s->chunk_len[n], 8);
        n++;
    }
    ST(s->n_chunks, n);
}

static void reuse_sample(struct pes_rt_thread *t, const struct pes_event *ev)
{
    uint32_t n = n_slots();
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) /* slots decided by traps since the last sample */
        if (reservoir[i].active && !(__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) & 1))
            pes_rt_reservoir_release(&reservoir[i]);
    int i = pes_rt_reservoir_pick(reservoir, n, &t->s.rng);
    /* an armed watch stands for every sample offered to its slot (RDX weighting) */
    for (uint32_t k = 0; k < n; k++)
        if (reservoir[k].active && (int)k != i)
            ST(slots[k].offers, reservoir[k].samples - 1);
    if (i < 0) {
        pthread_mutex_unlock(&lock);
        return; /* the old addresses stay watched (reservoir sampling) */
    }
    struct slot *s = &slots[i];
    uint32_t gen = ++next_gen;
    if (!gen)
        gen = ++next_gen;
    struct slot old;
    read_slot(s, &old); /* the fields change only under this lock */
    if (__atomic_exchange_n(&s->state, (uint64_t)gen << 1, __ATOMIC_ACQ_REL) & 1) {
        /* replaced before any trap decided it: a censored observation */
        uint64_t now = shared_mode()           ? socket_count(t, old.socket)
                       : old.owner == t->index ? ev->loads + ev->stores
                                               : thread_count(t, old.owner);
        expired_event(t, &old, now, 1);
    }
    uint32_t size = ev->size ? ev->size : 1;
    ST(s->addr, ev->addr);
    ST(s->len, pes_rt_watch_len(ev->addr, size));
    ST(s->size, size);
    ST(s->owner, t->index);
    ST(s->socket, t->s.socket);
    ST(s->write, (uint32_t)(ev->flags & PES_EVF_WRITE));
    ST(s->site, (uint64_t)ev->site);
    ST(s->sample_ip, ev->ip);
    ST(s->offers, reservoir[i].samples - 1);
    uint64_t count = shared_mode() ? socket_count(t, t->s.socket) : ev->loads + ev->stores;
    ST(s->count, count);
    ST(s->phase, count + (t->s.sample_phase - (ev->loads + ev->stores)));
    if (pes_rt.cfg.spatial)
        choose_chunks(s, ev->addr, size, &t->s.rng);
    __atomic_store_n(&s->state, (uint64_t)gen << 1 | 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);

    /* own registers now: the next access may already be the reuse */
    arm_slot(t, (uint32_t)i, gen);
    pthread_mutex_lock(&pes_rt.threads_lock);
    for (struct pes_rt_thread *o = pes_rt.threads; o; o = o->next)
        if (o != t && o->live && !__atomic_load_n(&o->stopped, __ATOMIC_ACQUIRE))
            pes_rt_sample_wake(o);
    pthread_mutex_unlock(&pes_rt.threads_lock);
}

/* Signal handler (watch.c): no locks, no allocation, no watched memory. */
static void reuse_trap(struct pes_rt_thread *t, uint32_t reg, uint32_t gen, uint64_t ip,
                       int *disarm)
{
    uint32_t i = pes_rt.cfg.spatial ? 0 : reg;
    if (i >= n_slots())
        return;
    struct slot *s = &slots[i];
    uint64_t armed = (uint64_t)gen << 1 | 1;
    if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != armed)
        return; /* decided or replaced: a stale watchpoint */
    uint32_t owner = LD(s->owner), socket = LD(s->socket);
    uint64_t count = LD(s->count);
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_REUSE, t);
    ev.thread = owner;
    ev.other_thread = t->index;
    ev.addr = LD(s->addr);
    ev.size = (uint16_t)LD(s->size);
    ev.site = (uint32_t)LD(s->site);
    ev.ip = ip;
    ev.flags = (LD(s->write) ? PES_EVF_WRITE : 0) | (pes_rt.cfg.spatial ? PES_EVF_SPATIAL : 0);
    ev.aux = LD(s->offers);
    int rw = t->s.wp[reg].rw;
    if (!rw)
        ev.flags |= PES_EVF_TRAP_WRITE;
    /* Recording clone: the trapping access executed but its record is not
     * written yet (+1), and the distance runs from the sampled access. Check
     * clone: counts run to the end of the trapping access's segment, so the
     * distance runs from the end of the sample's segment too — exact when the
     * same site reuses in a later run of its segment, else off by less than
     * the segment's accesses (docs/collector.md). */
    uint64_t now;
    int segment_end = 0;
    if (shared_mode()) {
        ev.flags |= PES_EVF_SHARED_CACHE;
        if (owner == t->index)
            return;
        if (socket == t->s.socket) {
            uint64_t self = pes_rt_sample_now(t, &segment_end);
            now = socket_count(t, socket) + (self - pes_rt_sample_count_self(t));
        } else {
            ev.kind = PES_EV_INVALIDATION;
            now = 0;
        }
    } else if (owner == t->index) {
        now = pes_rt_sample_now(t, &segment_end);
    } else {
        /* the owner's count now (racy, as socket_count): how long the watch
         * survived, which the censoring-aware estimator needs */
        ev.kind = PES_EV_INVALIDATION;
        now = thread_count(t, owner);
    }
    if (!__atomic_compare_exchange_n(&s->state, &armed, (uint64_t)gen << 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* another thread's trap decided it first */
    if (segment_end)
        count = LD(s->phase);
    if (ev.kind == PES_EV_REUSE || (now != UINT64_MAX && !shared_mode()))
        ev.distance = now != UINT64_MAX && now > count ? now - count : 0;
    ev.loads = t->s.loads; /* as of the thread's last slow path */
    ev.stores = t->s.stores;
    struct pes_rt_thread *o = thread_of(t, owner);
    if (o) /* the owner's decided outcomes: --samples counts them (rt_adapt.h) */
        __atomic_fetch_add(&o->s.decided, 1, __ATOMIC_ACQ_REL);
    pes_rt_alloc_announce(t, &ev);
    pes_rt_events_add(t, &ev);
    if (pes_rt.cfg.spatial)
        for (uint32_t r = 0; r < pes_rt.cfg.debug_registers; r++)
            if (r != reg)
                pes_rt_watch_disarm(t, r);
    *disarm = 1;
}

/* Ends every watch `t` owns as censored at `count` (its access count; a
 * shared-cache watch: its socket's); `disarm`: also clear t's own registers,
 * whose stale watch would only trap for nothing. Returns the events added. */
static int censor_owned(struct pes_rt_thread *t, uint64_t count, int disarm)
{
    int added = 0;
    for (uint32_t i = 0; i < n_slots(); i++) {
        struct slot *s = &slots[i];
        uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (!(st & 1) || LD(s->owner) != t->index)
            continue;
        struct slot old;
        read_slot(s, &old);
        if (!__atomic_compare_exchange_n(&s->state, &st, st & ~1ull, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue; /* a trap or a new sample ended it first */
        if (old.owner != t->index)
            continue; /* cannot happen: the fields change only while inactive */
        uint64_t now = shared_mode() ? socket_count(t, old.socket) : count;
        expired_event(t, &old, now, 0);
        added++;
        if (disarm && !shared_mode()) {
            uint32_t reg = pes_rt.cfg.spatial ? 0 : i;
            uint32_t end = pes_rt.cfg.spatial ? pes_rt.cfg.debug_registers : reg + 1;
            for (uint32_t r = reg; r < end; r++)
                pes_rt_watch_disarm(t, r);
        }
    }
    return added;
}

/* --samples, at a period change of thread t (its own slow path or overflow
 * handler): its armed watches become WATCH_EXPIRED events (intra: censored at
 * `count`, t's count now; shared cache: at its socket's count). */
static int reuse_censor(struct pes_rt_thread *t, uint64_t count)
{
    return censor_owned(t, count, 1);
}

/* Thread end (its own, or stopped by another thread at process exit): its
 * intra-thread watches can no longer be reused, so each still armed ends
 * censored at the thread's final count. Shared-cache watches stay armed (the
 * socket's other threads may still reuse them): reuse-shared has no such hook.
 * Returns the events added. */
static int reuse_thread_end(struct pes_rt_thread *t, uint64_t final_count)
{
    return censor_owned(t, final_count, 0);
}

const struct pes_rt_mode pes_rt_mode_reuse = {
    .name = "reuse",
    .uses_watchpoints = 1,
    .wakes_threads = 1,
    .counts_decided = 1,
    .start = pes_rt_watch_install,
    .thread_exit = pes_rt_watch_thread_exit,
    .sample = reuse_sample,
    .sync = reuse_sync,
    .trap = reuse_trap,
    .censor = reuse_censor,
    .thread_end = reuse_thread_end,
};

const struct pes_rt_mode pes_rt_mode_reuse_shared = {
    .name = "reuse-shared",
    .uses_watchpoints = 1,
    .wakes_threads = 1,
    .counts_decided = 1,
    .start = pes_rt_watch_install,
    .thread_exit = pes_rt_watch_thread_exit,
    .sample = reuse_sample,
    .sync = reuse_sync,
    .trap = reuse_trap,
    .censor = reuse_censor,
};
