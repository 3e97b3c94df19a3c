/* rt_buffer.c — the slow path of the inline sequence (rt_abi.h): hand a full
 * buffer to the writer, insert time marks, and compute the next limit. */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "core/core.h"

__attribute__((visibility("default"),
               tls_model("initial-exec"))) __thread struct pes_rt_tls __pes_tls;

static size_t capacity(void)
{
    return pes_rt.cfg.buffer_records;
}

int pes_rt_buffer_alloc(struct pes_rt_thread *t)
{
    for (int i = 0; i < PES_RT_NBUF; i++) {
        t->bufs[i].recs = malloc(capacity() * sizeof(struct pes_record));
        if (!t->bufs[i].recs)
            return -1;
    }
    void *r = mmap(NULL, PES_RT_RESERVE * sizeof(struct pes_record), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    t->reserve = r;
    return 0;
}

void pes_rt_reserve_free(struct pes_rt_thread *t)
{
    if (t->reserve)
        munmap(t->reserve, PES_RT_RESERVE * sizeof(struct pes_record));
    t->reserve = NULL;
}

/* Queues the first n records of the current buffer (if any); the writer
 * counts what its loop descriptors stand for, and so does `flushed`. */
static void hand_over(struct pes_rt_thread *t, size_t n, int from_signal)
{
    struct pes_rt_buf *b = &t->bufs[t->cur];
    if (n == 0)
        return;
    b->item.type = PES_RT_ITEM_RECORDS;
    b->item.heap = 0;
    b->item.thread = t->index;
    b->item.records = b->recs;
    b->item.n = n;
    b->item.buf = b;
    if (from_signal) {
        if (pes_rt_writer_try_push(&b->item))
            return;
    } else {
        pes_rt_writer_push(&b->item);
    }
    t->flushed += n + t->loop_extra;
    t->loop_extra = 0;
}

/* Records in the current buffer as readers count them. */
static uint64_t buffer_used(const struct pes_rt_thread *t)
{
    return (uint64_t)(t->tls->cursor - t->bufs[t->cur].recs) + t->loop_extra;
}

/* Full buffer → writer; continue in the next one, waiting only if the writer
 * has not returned it yet (back-pressure keeps memory bounded). The wait is
 * outside the thread's lock, so that a thread stopping this one (exit, a
 * termination signal) need not wait for the writer: it finds the cursor at
 * the start of the new buffer, hands over nothing, and marks the thread
 * stopped. -1: stopped meanwhile, nothing may be written any more. */
static int switch_buffer(struct pes_rt_thread *t)
{
    /* The sampler's scan mark must not outlive its buffer: a switch inside
     * pes_rt_buffer_drain (a handler's records at a full buffer) used to leave it
     * there, and the next scan classified [old buffer, new cursor) — unrelated
     * memory, a SIGSEGV when unmapped, else wrong counts. Count the rest of
     * the old buffer now and go on from the start of the new one. */
    if (pes_rt.sampling)
        pes_rt_sample_scan(t);
    hand_over(t, (size_t)(t->tls->cursor - t->bufs[t->cur].recs), 0);
    t->cur = (t->cur + 1) % PES_RT_NBUF;
    t->tls->cursor = t->bufs[t->cur].recs;
    if (pes_rt.sampling)
        t->s.scan = t->tls->cursor;
    pthread_mutex_unlock(&t->lock);
    /* writer gone: nobody reads it any more */
    int interrupted = pes_rt_writer_wait_free(&t->bufs[t->cur]) == PES_RT_WAIT_INTERRUPTED;
    pthread_mutex_lock(&t->lock);
    if (interrupted) /* the buffer may still be read: record nothing more */
        __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);
    return t->stopped ? -1 : 0;
}

/* Under t->lock. -1: the thread was stopped while it waited for a buffer. */
static int buffer_put(struct pes_rt_thread *t, uint64_t addr, uint32_t id, uint32_t extra)
{
    uint64_t room;
    if (pes_rt_buffer_room(t, &room))
        return -1;
    struct pes_record *c = t->tls->cursor;
    c->addr = addr;
    c->id = id;
    c->extra = extra;
    t->tls->cursor = c + 1;
    return 0;
}

/* Under t->lock: a full buffer is passed through the gate (what is left may
 * fit), then handed over. */
int pes_rt_buffer_room(struct pes_rt_thread *t, uint64_t *room)
{
    if (buffer_used(t) >= capacity())
        pes_rt_gate_run(t);
    if (buffer_used(t) >= capacity() && switch_buffer(t))
        return -1;
    *room = capacity() - buffer_used(t);
    return 0;
}

/* A record of a signal handler: the interrupted code may be inside the
 * runtime (holding the thread's lock) or inside an inline record sequence,
 * and owns cursor and limit either way. The record waits in the reserve (full
 * traces; lost and counted as such when the reserve is full), or, without a
 * full trace, only its load and store counts wait (pes_rt_check_fold takes
 * them): a handler's accesses are counted but never sampled. */
void pes_rt_buffer_nested(struct pes_rt_thread *t, uint64_t addr, uint32_t id, uint32_t extra)
{
    if (pes_rt.full && t->reserve) {
        uint32_t i = __atomic_load_n(&t->n_reserve, __ATOMIC_RELAXED);
        if (i < PES_RT_RESERVE) {
            t->reserve[i] = (struct pes_record){.addr = addr, .id = id, .extra = extra};
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            __atomic_store_n(&t->n_reserve, i + 1, __ATOMIC_RELAXED);
            return;
        }
    }
    if (id >= PES_ID_CONTROL_FIRST)
        return;
    if (!pes_rt.full) {
        uint32_t w = pes_rt_site_weight(id);
        __atomic_fetch_add(&t->s.nested_loads, w & 0xffff, __ATOMIC_RELAXED);
        __atomic_fetch_add(&t->s.nested_stores, w >> 16, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&t->lost_nested, 1, __ATOMIC_RELAXED);
}

/* Moves the handlers' records into the buffer (their accesses ran before the
 * access this slow path records completes), then says how many were lost
 * since the last PES_ID_LOST record. Under t->lock; handlers may add more
 * while this runs, so the reserve is emptied with a compare-and-swap. */
int pes_rt_buffer_drain(struct pes_rt_thread *t)
{
    uint32_t done = 0;
    for (;;) {
        uint32_t n = __atomic_load_n(&t->n_reserve, __ATOMIC_RELAXED);
        for (; done < n; done++)
            if (buffer_put(t, t->reserve[done].addr, t->reserve[done].id, t->reserve[done].extra))
                return -1;
        if (__atomic_compare_exchange_n(&t->n_reserve, &n, 0, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            break;
    }
    uint64_t lost = __atomic_load_n(&t->lost_nested, __ATOMIC_RELAXED);
    if (lost != t->lost_reported) {
        if (buffer_put(t, lost - t->lost_reported, PES_ID_LOST, 0))
            return -1;
        t->lost_reported = lost;
    }
    return 0;
}

/* limit = min(buffer end, next time mark, next sample): everything that must
 * interrupt the inline path is one min(). Without a full trace the records go
 * to the scratch buffer, which the slow path restarts. Sampling without a full
 * trace splits the room to the next sample between the records (clone-less
 * functions, the recording clone's tail after a sample) and the check path's
 * countdown, so that together they can never pass the sampled access. `ahead`
 * = counts of a segment about to run in the check clone (weight `spent`). */
void pes_rt_buffer_set_limit_ahead(struct pes_rt_thread *t, struct pes_rt_drop ahead, int64_t spent)
{
    struct pes_record *start, *cur = t->tls->cursor;
    uint64_t room, extra = 0; /* room: records as readers count them, from start on */
    if (pes_rt.full) {
        start = t->bufs[t->cur].recs;
        extra = t->loop_extra;
        room = capacity();
        uint64_t to_mark = t->next_mark - t->flushed; /* > records in this buffer */
        if (to_mark < room)
            room = to_mark;
    } else {
        start = t->s.scratch;
        room = PES_RT_SAMPLE_SCRATCH;
    }
    if (pes_rt.sampling) {
        uint64_t used = (uint64_t)(cur - start) + extra;
        uint64_t sample_room = pes_rt_sample_room_after(t, ahead);
        if (!pes_rt.full && !pes_rt_hardware_samples()) {
            /* Records are rare outside a recording stretch: they get a small
             * share while the sample is far (a slow path per 64 records of a
             * clone-less function), none near it (then each record takes the
             * slow path), so the countdown runs out about twice per sample */
            uint64_t check_room = 0;
            if (!__atomic_load_n(&t->tls->recording, __ATOMIC_RELAXED)) {
                uint64_t records =
                    sample_room >= PES_RT_RECORD_SHARE_FROM ? PES_RT_RECORD_SHARE : 0;
                check_room = sample_room - records;
                sample_room = records;
            }
            pes_rt_check_arm(t, check_room, spent);
        }
        if (sample_room < room - used)
            room = used + sample_room;
    }
    /* a thread set up by its allocations records its stack at its next
     * access (pes_rt_alloc_stack_due): until then every access comes here */
    /* room >= extra: the buffer's records are below both the capacity and the mark */
    __atomic_store_n(&t->tls->limit, t->stack_pending ? NULL : start + (room - extra),
                     __ATOMIC_RELAXED);
    if (pes_rt.sampling && pes_rt.mode->wakes_threads) {
        /* Dekker with pes_rt_sample_wake (modes that wake threads): either it sees our
         * limit and lowers it afterwards, or we see its flag here */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&t->s.wake, __ATOMIC_RELAXED))
            __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    }
}

void pes_rt_buffer_set_limit(struct pes_rt_thread *t)
{
    struct pes_rt_drop none = {0, 0};
    pes_rt_buffer_set_limit_ahead(t, none, 0);
}

uint64_t pes_rt_buffer_count(const struct pes_rt_thread *t)
{
    return t->flushed + buffer_used(t);
}

/* The per-access path's time marks: one before the record at each count
 * next_mark, then `time_interval` records to the next. `ahead` = 1 for an
 * ALLOC/ALLOC_SIZE pair, which a mark never separates (it comes first). */
int pes_rt_buffer_mark_due(struct pes_rt_thread *t, unsigned ahead)
{
    uint64_t n = pes_rt_buffer_count(t);
    if (n + ahead < t->next_mark)
        return 0;
    if (buffer_put(t, pes_rt_now(), PES_ID_TIME, 0))
        return -1;
    t->next_mark = n + 1 + pes_rt.cfg.time_interval;
    return 0;
}

void pes_rt_buffer_leave(struct pes_rt_thread *t)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->s.in_runtime = 0;
}

void pes_rt_buffer_unlock(struct pes_rt_thread *t, int stopped)
{
    if (!stopped)
        pes_rt_buffer_set_limit(t);
    pthread_mutex_unlock(&t->lock);
    if (stopped)
        pes_rt_thread_use_scratch();
    pes_rt_buffer_leave(t);
}

/* Sampling without a full trace: the records only feed the counters, so the
 * scratch buffer restarts; the lock is taken only to record a sample or to
 * re-arm watchpoints (a thread stopping this one adds events under it). A
 * sample taken in the recording clone sends the thread back to its check
 * clones (at the next loop header or call). */
static void slow_sampling_only(struct pes_rt_thread *t, uint64_t addr, uint32_t id, uint32_t extra,
                               uint64_t ip)
{
    pes_rt_check_fold(t, 0); /* a check-clone callee may have run since */
    pes_rt_sample_scan(t);
    t->tls->cursor = t->s.scratch;
    t->s.scan = t->s.scratch;
    int hit = pes_rt_sample_count(t, id);
    if (hit || __atomic_load_n(&t->s.wake, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&t->lock);
        if (!t->stopped)
            pes_rt_sample_take(t, addr, id, extra, ip, hit);
        pthread_mutex_unlock(&t->lock);
    }
    if (hit) {
        t->s.switched = 0;
        __atomic_store_n(&t->tls->recording, 0, __ATOMIC_RELAXED);
    }
    pes_rt_buffer_set_limit(t);
}

/* The slow path under the entry guard. A handler's records go to the slow
 * path too while this runs (limit NULL), and from there to pes_rt_buffer_nested. */
void pes_rt_buffer_record(struct pes_rt_thread *t, uint64_t addr, uint32_t id, uint32_t extra,
                          uint64_t ip)
{
    __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    t->s.in_runtime = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!pes_rt.full) {
        slow_sampling_only(t, addr, id, extra, ip);
        pes_rt_buffer_leave(t);
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (t->stopped)
        goto stopped;
    if (pes_rt_buffer_drain(t)) /* before the scan: the sampler counts them too */
        goto stopped;
    if (pes_rt.sampling)
        pes_rt_sample_scan(t); /* before a buffer switch moves the records away */
    if (pes_rt_buffer_mark_due(t, 0))
        goto stopped;
    if (buffer_put(t, addr, id, extra))
        goto stopped;
    if (pes_rt.sampling) {
        t->s.scan = t->tls->cursor;
        int hit = pes_rt_sample_count(t, id);
        pes_rt_sample_take(t, addr, id, extra, ip, hit);
    }
    /* handlers that ran meanwhile: after the record, before the limit opens */
    if (pes_rt_buffer_drain(t))
        goto stopped;
    pes_rt_gate_run(t);
    pes_rt_gate_settle(t);
    pes_rt_buffer_unlock(t, 0);
    return;
stopped:
    pes_rt_buffer_unlock(t, 1);
}

__attribute__((visibility("default"))) PES_RT_SLOW_CC void __pes_record_slow(uint64_t addr,
                                                                             uint64_t id_and_extra)
{
    uint32_t id = (uint32_t)id_and_extra, extra = (uint32_t)(id_and_extra >> 32);
    struct pes_rt_thread *t = pes_rt_thread_self();
    if (pes_rt_in_app_handler() || pes_rt_enter()) {
        if (t && !__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
            pes_rt_buffer_nested(t, addr, id, extra);
        return;
    }
    if (!t)
        t = pes_rt_thread_setup();
    if (!t) {
        pes_rt_thread_use_scratch();
    } else if (__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
        pes_rt_thread_use_scratch();
    } else {
        pes_rt_alloc_stack_due(t); /* the stack comes before the access */
        pes_rt_buffer_record(t, addr, id, extra, (uint64_t)__builtin_return_address(0));
    }
    pes_rt_leave();
}

/* Control records of the allocator interposer (rt_alloc.c), from the owner
 * thread inside the runtime (pes_rt_enter_quick), between two accesses of its
 * own: the inline path is not in the middle of a record. Without sampling,
 * records that fit below the limit (so below the buffer end and the next time
 * mark) are stored as the inline path stores them, without the lock: the limit
 * is pulled to NULL first so that a signal handler's records go to the reserve,
 * and a thread stopping this one meanwhile drops them like a late inline
 * record. Otherwise, the slow path's way under the lock: a time mark at its
 * count (k <= 2, and one due inside an ALLOC/ALLOC_SIZE pair comes one record
 * early), a buffer switch if needed, a new limit. */
void pes_rt_buffer_put_control(struct pes_rt_thread *t, const struct pes_record *r, unsigned k)
{
    struct pes_rt_tls *tls = t->tls;
    struct pes_record *lim = __atomic_load_n(&tls->limit, __ATOMIC_RELAXED);
    __atomic_store_n(&tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    t->s.in_runtime = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct pes_record *c = tls->cursor;
    if (!pes_rt.sampling && lim && c + k <= lim &&
        !__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < k; i++)
            c[i] = r[i];
        __atomic_store_n(&tls->cursor, c + k, __ATOMIC_RELEASE); /* records before the cursor */
        __atomic_store_n(&tls->limit, lim, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
            pes_rt_thread_use_scratch(); /* stopped meanwhile: the limit must not stay open */
        pes_rt_buffer_leave(t);
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (t->stopped || pes_rt_buffer_drain(t))
        goto stopped;
    if (pes_rt.sampling)
        pes_rt_sample_scan(t); /* before a buffer switch moves the records away */
    /* a time mark never separates an ALLOC from its ALLOC_SIZE: one due at
     * the second record of the group comes before the first */
    if (pes_rt_buffer_mark_due(t, k > 1))
        goto stopped;
    for (unsigned i = 0; i < k; i++)
        if (buffer_put(t, r[i].addr, r[i].id, r[i].extra))
            goto stopped;
    if (pes_rt.sampling)
        t->s.scan = t->tls->cursor; /* control records: nothing to count */
    if (pes_rt_buffer_drain(t))
        goto stopped;
    pes_rt_buffer_unlock(t, 0);
    return;
stopped:
    pes_rt_buffer_unlock(t, 1);
}

/*
 * Stopping a thread that may still be running (process exit, fatal signal):
 * under its lock (so it is not inside the slow path) we mark it stopped, pull
 * its limit down so its next access enters the slow path and is dropped, then
 * read its cursor. The inline sequence stores a record before advancing the
 * cursor, so every record below the cursor we read is complete (x86-TSO store
 * order); a record being written concurrently lies at or past it and is
 * dropped. The buffers are never freed afterwards, so a late store is harmless.
 */
int pes_rt_buffer_stop(struct pes_rt_thread *t, int wait_lock, int end_record)
{
    int from_signal = !wait_lock;
    if (from_signal) {
        if (pthread_mutex_trylock(&t->lock) != 0)
            return -1;
    } else {
        pthread_mutex_lock(&t->lock);
    }
    if (t->stopped) {
        pthread_mutex_unlock(&t->lock);
        return 1;
    }
    int own = t == pes_rt_thread_self();
    if (pes_rt.sampling) {
        /* counts are exact up to the thread's last slow path; its own stop
         * (thread exit) also classifies what it wrote since */
        if (own)
            t->s.in_runtime = 1;
        pes_rt_sample_finish(t, from_signal || !own);
    }
    /* its next loop chunk comes to __pes_loop_flush, which drops it */
    __atomic_store_n(&t->tls->descriptors, 0, __ATOMIC_RELAXED);
    if (!pes_rt.full) {
        __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&t->lock);
        return 0;
    }
    struct pes_record *start = t->bufs[t->cur].recs;
    if (end_record && !from_signal) {
        /* its own thread, outside the slow path: the reserve is empty but
         * for handlers that ran since, and the buffer is its own */
        if (pes_rt_buffer_drain(t) == 0)
            buffer_put(t, pes_rt_now(), PES_ID_THREAD_END, 0);
        if (t->stopped) { /* a termination signal cut its wait for a buffer */
            pthread_mutex_unlock(&t->lock);
            return 1;
        }
        start = t->bufs[t->cur].recs;
    }
    __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&t->tls->limit, start, __ATOMIC_RELAXED);
    pes_rt_gate_run(t);
    struct pes_record *cursor = __atomic_load_n(&t->tls->cursor, __ATOMIC_ACQUIRE);
    size_t n = 0;
    if (cursor >= start && cursor <= start + capacity())
        n = (size_t)(cursor - start);
    hand_over(t, n, from_signal);
    pthread_mutex_unlock(&t->lock);
    return 0;
}
