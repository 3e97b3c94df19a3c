/* rt_check.c — the check path of the two-clone contract (rt_abi.h).
 *
 * Instrumented code in its check clone subtracts each segment's weight,
 * (loads + stores) << 24 | stores, from __pes_tls.countdown and calls
 * __pes_check_due when the result is negative. The countdown is armed as
 * (room << 24) | 0xffffff: it stays non-negative while at most `room` loads
 * plus stores ran, as long as fewer than 2^24 stores ran (room is capped at
 * 2^23, a segment at 2^16 accesses). The drop of the countdown since it was
 * armed is then sum(A) << 24 + sum(S) exactly, so the runtime recovers exact
 * load and store counts from it: the stores field borrows into the access
 * field, but the difference of two values never loses a bit.
 *
 * The sample countdowns of rt_sample.c stay the truth: `room` is
 * min(load countdown, store countdown) - 1, so no sample can be due while the
 * check path runs (loads + stores bounds both). When a segment would reach a
 * countdown, the thread runs that segment in the recording clone, where the
 * inline record path stops exactly on the sampled access (Arnold & Ryder's
 * counter-based switch, with the dissertation §6.3 requirement of exact counts
 * for time distances).
 *
 * Another thread wakes this one (reuse modes: new watch slot) by setting the
 * countdown's sign bit with an atomic OR; the owner's plain subtraction can
 * overwrite that bit in a narrow window, so in those modes the room is capped
 * (PES_RT_CD_WAKE_ROOM) and a lost wake-up costs at most that many accesses.
 */
#include "core/core.h"

/* Pending counts beyond this are a torn read by another thread: ignored. */
#define PLAUSIBLE (1ull << 50)

static int counting(const struct pes_rt_thread *t)
{
    return pes_rt.sampling && !pes_rt_hardware_samples() &&
           !__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE);
}

/* cd_init - now - unspent, without the wake-up bit. */
static uint64_t drop_since_arm(const struct pes_rt_thread *t, int64_t now, int64_t unspent)
{
    int64_t armed = __atomic_load_n(&t->s.cd_init, __ATOMIC_RELAXED);
    uint64_t drop = pes_rt_check_drop(armed, now) - (uint64_t)unspent;
    return drop < PLAUSIBLE ? drop : 0;
}

struct pes_rt_drop pes_rt_check_pending(const struct pes_rt_thread *t)
{
    if (!counting(t)) {
        struct pes_rt_drop none = {0, 0};
        return none;
    }
    return pes_rt_check_decode(
        drop_since_arm(t, __atomic_load_n(&t->tls->countdown, __ATOMIC_RELAXED), 0));
}

struct pes_rt_drop pes_rt_check_pending_other(struct pes_rt_thread *t)
{
    struct pes_rt_drop d = {0, 0};
    /* Dekker with thread exit: it clears `live`, then waits for readers */
    __atomic_fetch_add(&t->tls_readers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&t->live, __ATOMIC_SEQ_CST))
        d = pes_rt_check_pending(t);
    __atomic_fetch_sub(&t->tls_readers, 1, __ATOMIC_RELEASE);
    return d;
}

static void count_down(uint64_t *cd, uint64_t n)
{
    /* never below 1: the runtime is entered at the latest on the expiring access */
    if (*cd != UINT64_MAX)
        *cd = n < *cd ? *cd - n : 1;
}

void pes_rt_check_fold(struct pes_rt_thread *t, int64_t unspent)
{
    if (!counting(t))
        return;
    struct pes_rt_sampler *s = &t->s;
    /* one read: the fold and the next arm agree on what was counted */
    int64_t now = __atomic_load_n(&t->tls->countdown, __ATOMIC_RELAXED);
    struct pes_rt_drop d = pes_rt_check_decode(drop_since_arm(t, now, unspent));
    /* what signal handlers did meanwhile (rt_buffer.c, pes_rt_buffer_nested) */
    d.loads += __atomic_exchange_n(&s->nested_loads, 0, __ATOMIC_RELAXED);
    d.stores += __atomic_exchange_n(&s->nested_stores, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->loads, s->loads + d.loads, __ATOMIC_RELAXED);
    __atomic_store_n(&s->stores, s->stores + d.stores, __ATOMIC_RELAXED);
    count_down(&s->cd_load, d.loads);
    count_down(&s->cd_store, d.stores);
    /* counted: a second fold before the next arm adds nothing */
    __atomic_store_n(&s->cd_init, now + unspent, __ATOMIC_RELAXED);
    s->cd_at_fold = now;
}

/* Other threads' samples wake this one (mode.h): a lost wake-up must cost little. */
static int wakes(void)
{
    return pes_rt.mode->wakes_threads;
}

void pes_rt_check_arm(struct pes_rt_thread *t, uint64_t room, int64_t spent)
{
    uint64_t cap = wakes() ? PES_RT_CD_WAKE_ROOM : PES_RT_CD_MAX_ROOM;
    if (room > cap)
        room = cap;
    int64_t v = pes_rt_check_pack(room);
    /* in the runtime (in_runtime set): a trap handler never sees the pair half-written */
    __atomic_store_n(&t->s.cd_init, v + spent, __ATOMIC_RELAXED);
    /* One exchange: what a signal handler's check clones subtracted since
     * the fold (the runtime was interrupted in between) is kept, not
     * overwritten; the next fold counts it. */
    int64_t old = __atomic_exchange_n(&t->tls->countdown, v, __ATOMIC_RELAXED);
    uint64_t missed = pes_rt_check_drop(t->s.cd_at_fold, old);
    t->s.cd_at_fold = v;
    if (missed && missed < PLAUSIBLE) {
        struct pes_rt_drop d = pes_rt_check_decode(missed);
        __atomic_fetch_add(&t->s.nested_loads, d.loads, __ATOMIC_RELAXED);
        __atomic_fetch_add(&t->s.nested_stores, d.stores, __ATOMIC_RELAXED);
    }
    if (wakes()) {
        /* Dekker with pes_rt_sample_wake: it kicks after setting the flag, we
         * check the flag after arming, so one of us leaves the countdown due */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&t->s.wake, __ATOMIC_RELAXED))
            pes_rt_check_kick(t);
    }
}

void pes_rt_check_kick(struct pes_rt_thread *t)
{
    __atomic_fetch_or((uint64_t *)&t->tls->countdown, PES_RT_CD_KICK, __ATOMIC_SEQ_CST);
}

/* Sampling without a full trace: fold, take the wake-up, and either run this
 * segment in the recording clone (a countdown expires inside it) or count it
 * now and let the check clone run it. */
static int due_sampling(struct pes_rt_thread *t, int64_t weight, int fresh)
{
    struct pes_rt_sampler *s = &t->s;
    /* a thread set up just now armed its countdown after this segment's subtraction */
    pes_rt_check_fold(t, fresh ? 0 : weight);
    pes_rt_sample_scan(t); /* records of clone-less functions and recording tails */
    t->tls->cursor = s->scratch;
    s->scan = s->scratch;
    if (__atomic_load_n(&s->wake, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&t->lock);
        if (!t->stopped)
            pes_rt_sample_take(t, 0, PES_ID_TIME, 0, 0, 0); /* re-arm only */
        pthread_mutex_unlock(&t->lock);
    }
    struct pes_rt_drop seg = pes_rt_check_decode((uint64_t)weight);
    int due =
        !pes_rt_hardware_samples() && ((s->cd_load != UINT64_MAX && seg.loads >= s->cd_load) ||
                                       (s->cd_store != UINT64_MAX && seg.stores >= s->cd_store));
    if (due) {
        s->switched = 1;
        s->seg_end = s->loads + s->stores + seg.loads + seg.stores;
        __atomic_store_n(&t->tls->recording, 1, __ATOMIC_RELAXED);
        pes_rt_buffer_set_limit(t);
        return 1;
    }
    pes_rt_buffer_set_limit_ahead(t, seg, weight);
    return 0;
}

__attribute__((visibility("default"))) PES_RT_SLOW_CC int __pes_check_due(int64_t weight)
{
    if (pes_rt_in_app_handler() || pes_rt_enter()) {
        /* A signal handler: the runtime is not re-entered. Without a full
         * trace it stays in its check clone, and the weights it subtracts
         * stay in the countdown for the interrupted thread's next fold (the
         * recording clone would switch straight back at a loop header: the
         * recording flag is the interrupted code's). A full trace records. */
        return pes_rt.full ? 1 : 0;
    }
    int rec = 0;
    struct pes_rt_thread *t = pes_rt_thread_self();
    int fresh = !t;
    if (!t)
        t = pes_rt_thread_setup();
    if (!t) {
        pes_rt_thread_use_scratch();
    } else if (__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
        pes_rt_thread_use_scratch();
    } else if (pes_rt_alloc_stack_due(t), pes_rt.full) {
        /* a full trace records everything: the check clone only leads here,
         * but for a thread outside the region of interest (rt_roi.c) */
        int idle = 0;
        if (pes_rt_gate_enabled()) {
            pthread_mutex_lock(&t->lock);
            idle = pes_rt_gate_idle(t);
            pthread_mutex_unlock(&t->lock);
        }
        if (idle) {
            __atomic_store_n(&t->tls->recording, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&t->tls->countdown, pes_rt_check_pack(PES_RT_CD_WAKE_ROOM),
                             __ATOMIC_RELAXED);
        } else {
            __atomic_store_n(&t->tls->recording, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&t->tls->countdown, 0, __ATOMIC_RELAXED);
            rec = 1; /* the setup left cursor and limit on the first buffer */
        }
    } else {
        /* a handler's records take the slow path while the cursor moves */
        __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
        t->s.in_runtime = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rec = due_sampling(t, weight, fresh);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->s.in_runtime = 0;
    }
    pes_rt_leave();
    return rec;
}
