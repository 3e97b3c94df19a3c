/* rt_writer.c — the writer pool. Application threads queue full buffers,
 * THREAD, MODULE, EVENTS, MAPS and ALLOC_SITES items; each item takes a sequence number
 * when it is queued. Encoder threads take items in queue order and encode
 * them concurrently, each with its own pes_trace_encoder, and hand a buffer
 * back to its owner as soon as it is encoded. The encoded blocks are then
 * appended to the file(s) strictly in sequence order (the reorder stage
 * below), so a file is the one a single writer would write for the same queue
 * order: a block's bytes do not depend on which encoder made it (pes/trace.h).
 * Footer totals are also summed in that order, when a block is appended.
 *
 * Why: one thread encoding and compressing every block of every application
 * thread was the bottleneck of full traces of vectorised loops.
 *
 * Memory: 2 buffers per application thread (back-pressure, rt_buffer.c), one
 * encoded block per encoder, and at most `window` blocks encoded out of turn
 * and waiting for an earlier one: an item is only taken while its sequence
 * number is within `window` of the next one to append.
 *
 * Appending: there is no appending thread. The encoder that finishes the item
 * next in line appends it, then every following item that is already
 * waiting; an encoder that finishes out of turn copies its block into the
 * window and goes on. One mutex guards the queue, the buffer flags and the
 * window; encoding, copying and file writes run outside it. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pes/progress.h"
#include "core/core.h"

/* What an encoder made of one item, kept until the item's turn to be appended. */
struct result {
    uint64_t seq;
    int type;                /* enum pes_rt_item_type */
    uint32_t thread;         /* RECORDS, EVENTS: thread index; THREAD: its index */
    int to_full, to_sampled; /* the item was encoded for that file */
    int rc;                  /* encoding failed: err says why */
    struct pes_error err;
    const uint8_t *bytes; /* encoded block(s): in the encoder, or `owned` */
    size_t size;
    uint8_t *owned; /* malloc'd copy while waiting in the window */
    /* RECORDS: footer contributions */
    uint64_t n, loads, stores, end_ticks;
    int has_end; /* a TIME or THREAD_END record set end_ticks */
    /* EVENTS: footer contributions */
    int has_totals; /* a TOTALS event: loads, stores, samples */
    uint64_t samples, lost, max_time;
};

struct slot {
    int ready;
    struct result r;
};

struct worker {
    pthread_t thread;
    struct pes_trace_encoder *enc;
    int started;
};

/* The pool's state, one per process. */
static struct writer_state {
    pthread_mutex_t qlock;
    /* Encoders are woken one at a time, and only when an item is there for
     * them: a broadcast per append woke every idle encoder twice per block to
     * find nothing, a futex round trip each (a quarter of a vectorised
     * kernel's CPU, whose buffers of loop groups fill every ~100 us). */
    pthread_cond_t q_work; /* an item within the window was queued, or STOP taken */
    pthread_cond_t q_turn; /* appending moved on (an encoder waits for its turn) */
    uint32_t idle;         /* encoders waiting on q_work */
    uint32_t turn_waiters; /* encoders waiting on q_turn */
    /* A buffer is back: application threads wait for it inside the runtime,
     * so not on a condition variable. pthread_cond_wait is a cancellation
     * point, and glibc 2.36 acts there on an asynchronous cancel sent just
     * before the thread disabled cancellation, ending it with qlock held. A
     * futex wait is not a cancellation point: returned_seq changes (under
     * qlock) at every return. */
    uint32_t returned_seq;
    uint32_t returned_waiters; /* guarded by qlock */

    struct pes_rt_item *head, *tail; /* the queue */
    struct pes_rt_item *retired;     /* encoded heap items, kept (release_item_locked) */
    uint64_t next_seq;               /* sequence number of the next item queued */
    int running;                     /* guarded by qlock: buffers may still come back */
    int closed;                      /* atomic: footer written, file closed */
    int stop_taken;                  /* STOP was taken: nothing after it is ever taken */
    struct pes_rt_item stop_item;

    struct worker *workers;
    uint32_t n_workers;
    struct slot *window; /* results waiting for their turn, at seq % window_size */
    uint32_t window_size;
    uint64_t next_append; /* sequence number of the next item to append */
    int appending;        /* an encoder is appending (outside the lock) */

    /* Appender-only: only the encoder that holds `appending` touches these. */
    int failed;                        /* atomic (encoders read it): the full trace */
    int sfailed;                       /* atomic: the sampled trace */
    struct pes_thread_totals *stotals; /* sampled trace footer */
    size_t n_stotals;
    struct pes_thread_totals *totals;
    size_t n_totals;
    uint32_t n_announced;   /* threads whose THREAD block was written */
    uint64_t queued_units;  /* guarded by qlock: records and events queued so far */
    uint64_t encoded_units; /* atomic: of them, encoded (progress line) */
} pool = {
    .qlock = PTHREAD_MUTEX_INITIALIZER,
    .q_work = PTHREAD_COND_INITIALIZER,
    .q_turn = PTHREAD_COND_INITIALIZER,
    .stop_item = {.type = PES_RT_ITEM_STOP},
};

static void returned_broadcast_locked(void)
{
    /* an add: a signal handler may bump it too (pes_rt_writer_interrupt) */
    __atomic_fetch_add(&pool.returned_seq, 1, __ATOMIC_RELEASE);
    if (pool.returned_waiters)
        syscall(SYS_futex, &pool.returned_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* A signal handler on a thread waiting below: the futex wait, restarted after
 * the handler, finds the word changed and returns, and the waiter sees the
 * pending signal. Lock-free, so safe in a handler. */
void pes_rt_writer_interrupt(void)
{
    __atomic_fetch_add(&pool.returned_seq, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &pool.returned_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Under qlock: waits for the next change of returned_seq, or returns non-zero
 * at once if a termination signal waits for this thread to leave the runtime
 * (the word is read first, so a handler that runs after the check changes it
 * before the futex sleeps). */
static int wait_returned_locked(void)
{
    uint32_t seq = __atomic_load_n(&pool.returned_seq, __ATOMIC_ACQUIRE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (pes_rt_signal_pending())
        return -1;
    pool.returned_waiters++;
    pthread_mutex_unlock(&pool.qlock);
    syscall(SYS_futex, &pool.returned_seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
    pthread_mutex_lock(&pool.qlock);
    pool.returned_waiters--;
    return 0;
}
__thread __attribute__((
    tls_model("initial-exec"))) int pes_rt_in_pool_tls; /* read inline by rt_alloc.c */
#define in_pool pes_rt_in_pool_tls

/* libzstd's archive refers (weakly) to tracing hooks that a program may
 * define: the zstd tool does. Left undefined, the dynamic linker would bind
 * the runtime's compression to the program's hooks; these hidden definitions
 * settle the references inside libpes-rt. 0: this compression is not traced. */
PES_RT_HIDDEN unsigned long long ZSTD_trace_compress_begin(const void *cctx);
PES_RT_HIDDEN void ZSTD_trace_compress_end(unsigned long long ctx, const void *trace);
unsigned long long ZSTD_trace_compress_begin(const void *cctx)
{
    (void)cctx;
    return 0;
}
void ZSTD_trace_compress_end(unsigned long long ctx, const void *trace)
{
    (void)ctx;
    (void)trace;
}

static uint64_t units_of(const struct pes_rt_item *it)
{
    return it->type == PES_RT_ITEM_RECORDS || it->type == PES_RT_ITEM_EVENTS ? it->n : 0;
}

static void append_quiet_locked(struct pes_rt_item *it)
{
    it->next = NULL;
    it->seq = pool.next_seq++;
    pool.queued_units += units_of(it);
    if (it->buf)
        it->buf->busy = 1;
    if (pool.tail)
        pool.tail->next = it;
    else
        pool.head = it;
    pool.tail = it;
}

/* Under qlock: the queue's head may be taken (the window bound, below). */
static int head_takeable_locked(void)
{
    return pool.head && pool.head->seq < pool.next_append + pool.window_size;
}

/* Under qlock: whether to wake one idle encoder, the head being there for
 * it. The caller signals after unlocking qlock, so that the encoder does not
 * wake up only to block on it. An encoder that takes an item asks again for
 * the next (a quiet push left two). */
static int wake_due_locked(void)
{
    return pool.idle && head_takeable_locked();
}

static void wake_one(int due)
{
    if (due)
        pthread_cond_signal(&pool.q_work);
}

static int append_locked(struct pes_rt_item *it)
{
    append_quiet_locked(it);
    return wake_due_locked();
}

void pes_rt_writer_push(struct pes_rt_item *it)
{
    pthread_mutex_lock(&pool.qlock);
    int due = append_locked(it);
    pthread_mutex_unlock(&pool.qlock);
    wake_one(due);
}

void pes_rt_writer_push_quiet(struct pes_rt_item *it)
{
    pthread_mutex_lock(&pool.qlock);
    append_quiet_locked(it);
    pthread_mutex_unlock(&pool.qlock);
}

int pes_rt_writer_is_free(const struct pes_rt_buf *buf)
{
    pthread_mutex_lock(&pool.qlock);
    int free_now = !buf->busy;
    pthread_mutex_unlock(&pool.qlock);
    return free_now;
}

int pes_rt_writer_try_push(struct pes_rt_item *it)
{
    /* bounded wait: the lock is only held for a few instructions by live threads */
    for (int i = 0; i < 200; i++) {
        if (pthread_mutex_trylock(&pool.qlock) == 0) {
            int due = append_locked(it);
            pthread_mutex_unlock(&pool.qlock);
            wake_one(due);
            return 0;
        }
        struct timespec ts = {0, 1000000};
        syscall(SYS_nanosleep, &ts, NULL); /* not a cancellation point */
    }
    return -1;
}

int pes_rt_writer_wait_free(struct pes_rt_buf *buf)
{
    pthread_mutex_lock(&pool.qlock);
    int interrupted = 0;
    while (buf->busy && pool.running && !(interrupted = wait_returned_locked()))
        ;
    int busy = buf->busy;
    pthread_mutex_unlock(&pool.qlock);
    return !busy ? 0 : interrupted ? PES_RT_WAIT_INTERRUPTED : -1;
}

int pes_rt_writer_is_self(void)
{
    return in_pool;
}

/* ------------------------------------------------------------ footer totals */

static void report_to(int *flag, const struct pes_error *err)
{
    if (!__atomic_load_n(flag, __ATOMIC_RELAXED))
        pes_rt_message("%s; the trace ends here", err->message[0] ? err->message : "write failed");
    __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
}

static struct pes_thread_totals *grow(struct pes_thread_totals **arr, size_t *len, uint32_t thread)
{
    if (thread >= *len) {
        size_t n = thread + 16;
        struct pes_thread_totals *t = realloc(*arr, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + *len, 0, (n - *len) * sizeof *t);
        for (size_t i = *len; i < n; i++)
            t[i].thread = (uint32_t)i;
        *arr = t;
        *len = n;
    }
    return &(*arr)[thread];
}

/* Encoder side: what a RECORDS item adds to its thread's totals. Site kinds
 * come from rt_sites.c, filled when a module registers, before any record
 * can use its ids; its tables are never moved, so this needs no lock. */
static uint32_t record_weight(const uint32_t *wt, uint32_t id)
{
    if (wt)
        return wt[pes_rt_weight_index(id)];
    uint8_t kind = pes_rt_sites_get(id).kind;
    return (pes_kind_reads(kind) ? 1u : 0u) + (pes_kind_writes(kind) ? 1u << 16 : 0u);
}

/* A loop descriptor group (rt_loop.c, pes/trace.h) at rec[0], with `left`
 * records from it in the batch, adds the records it stands for: with
 * R = q m + r, template j repeats q times, once more if it is among the r
 * positions after phase (one division per group: cg's rows are groups of a
 * few iterations); a mixed group's irregular records are counted with their
 * templates. Returns its stored size, 0 if it is not a whole group. */
static size_t count_group(const uint32_t *wt, const struct pes_record *g, size_t left,
                          uint64_t *loads, uint64_t *stores)
{
    uint32_t m = g->extra & 0xffff, phase = g->extra >> 16;
    if (m < 1 || m > PES_LOOP_MAX_RECORDS || phase >= m || left <= 2 * (size_t)m)
        return 0;
    uint64_t q = g->addr / m, r = g->addr % m, irregular = 0;
    for (uint32_t j = 0; j < m; j++) {
        uint32_t first = j >= phase ? j - phase : j + m - phase;
        uint64_t times = q + (first < r);
        uint32_t w = record_weight(wt, g[1 + j].id);
        *loads += (w & 0xffff) * times;
        *stores += (w >> 16) * times;
        if (g[1 + m + j].extra == PES_LOOP_STEP_IRREGULAR)
            irregular += times;
    }
    return 1 + 2 * (size_t)m + irregular;
}

/* Records, loads and stores of a batch as readers count them (expanded),
 * and its last time mark. Control records (time marks, groups) are rare: the
 * common record costs a weight look-up and two adds. */
static void count_records(struct result *r, const struct pes_record *rec, size_t n)
{
    const uint32_t *wt = __atomic_load_n(&pes_rt_site_weights, __ATOMIC_ACQUIRE);
    uint64_t loads = 0, stores = 0, records = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = rec[i].id;
        if (__builtin_expect(id >= PES_ID_CONTROL_FIRST, 0)) {
            size_t size;
            if (id == PES_ID_LOOP && (size = count_group(wt, &rec[i], n - i, &loads, &stores))) {
                records += rec[i].addr;
                i += size - 1;
                continue;
            }
            if (id == PES_ID_TIME || id == PES_ID_THREAD_END) {
                r->end_ticks = rec[i].addr;
                r->has_end = 1;
            }
        }
        uint32_t w = record_weight(wt, id);
        records++;
        loads += w & 0xffff;
        stores += w >> 16;
    }
    r->n = records;
    r->loads = loads;
    r->stores = stores;
}

/* Encoder side, sampled footer: events written; loads, stores and samples
 * from the thread's TOTALS event; lost from LOST events; last event time. */
static void count_events(struct result *r, const struct pes_event *e, size_t n)
{
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        if (e[i].kind == PES_EV_TOTALS) {
            r->has_totals = 1;
            r->loads = e[i].loads;
            r->stores = e[i].stores;
            r->samples = e[i].aux;
        } else if (e[i].kind == PES_EV_LOST) {
            r->lost += e[i].aux;
        }
        if (e[i].time > r->max_time)
            r->max_time = e[i].time;
    }
}

/* Appender side, in queue order. */
static void add_records(const struct result *r)
{
    struct pes_thread_totals *tt = grow(&pool.totals, &pool.n_totals, r->thread);
    if (!tt)
        return;
    tt->records += r->n;
    tt->loads += r->loads;
    tt->stores += r->stores;
    if (r->has_end)
        tt->end_ticks = r->end_ticks;
}

static void add_events(const struct result *r)
{
    struct pes_thread_totals *tt = grow(&pool.stotals, &pool.n_stotals, r->thread);
    if (!tt)
        return;
    tt->records += r->n;
    if (r->has_totals) {
        tt->loads = r->loads;
        tt->stores = r->stores;
        tt->samples = r->samples;
    }
    tt->lost += r->lost;
    if (r->max_time > tt->end_ticks)
        tt->end_ticks = r->max_time;
}

/* ------------------------------------------------------------ encoding */

/* Encodes for the files that still take blocks; a file that failed earlier
 * in queue order skips the work (`failed` is only ever set). */
static void encode_item(struct pes_trace_encoder *enc, const struct pes_rt_item *it,
                        struct result *r)
{
    memset(r, 0, sizeof *r);
    r->seq = it->seq;
    r->type = it->type;
    int full = pes_rt.writer && !__atomic_load_n(&pool.failed, __ATOMIC_RELAXED);
    int sampled = pes_rt.swriter && !__atomic_load_n(&pool.sfailed, __ATOMIC_RELAXED);
    switch (it->type) {
    case PES_RT_ITEM_RECORDS:
        r->thread = it->thread;
        if (!full)
            return;
        r->to_full = 1;
        count_records(r, it->records, it->n);
        r->rc = pes_trace_encoder_records(enc, it->thread, it->records, it->n, &r->err);
        break;
    case PES_RT_ITEM_EVENTS:
        r->thread = it->thread;
        if (!sampled)
            return;
        r->to_sampled = 1;
        count_events(r, it->events, it->n);
        r->rc = pes_trace_encoder_events(enc, it->thread, it->events, it->n, &r->err);
        break;
    case PES_RT_ITEM_MAPS: /* both files: allocation sites are IPs too */
        r->to_full = full;
        r->to_sampled = sampled;
        if (!full && !sampled)
            return;
        r->rc = pes_trace_encoder_mappings(enc, it->maps, it->n, &r->err);
        break;
    case PES_RT_ITEM_THREAD:
        r->thread = it->info.index;
        r->to_full = full;
        r->to_sampled = sampled;
        if (!full && !sampled)
            return;
        /* the same bytes serve both files: one zstd level for both */
        r->rc = pes_trace_encoder_thread(enc, &it->info, &r->err);
        break;
    case PES_RT_ITEM_MODULE:
        r->to_full = full;
        r->to_sampled = sampled;
        if (!full && !sampled)
            return;
        r->rc = pes_trace_encoder_module(enc, it->module, &r->err);
        break;
    case PES_RT_ITEM_ALLOC_SITES:
        r->to_full = full;
        r->to_sampled = sampled;
        if (!full && !sampled)
            return;
        r->rc = pes_trace_encoder_alloc_sites(enc, it->alloc_sites, it->n, &r->err);
        break;
    default:
        return;
    }
    if (!r->rc)
        r->bytes = pes_trace_encoder_output(enc, &r->size);
}

/* The item is encoded: a buffer goes back to its owner now, not when it is
 * appended. A heap item (a thread's, a module's, the mappings) is kept until
 * the process ends: it was allocated in the application's thread, and freeing
 * it here, at a moment that depends on the writers' timing, would move where
 * the application's next allocations land in that thread's arena (two runs of
 * a deterministic program must put their heap blocks at the same addresses;
 * the loop descriptor twins test compares them). They are few and small. */
static int release_item_locked(struct pes_rt_item *it)
{
    if (it->type == PES_RT_ITEM_STOP)
        return 0;
    if (it->heap) {
        it->next = pool.retired;
        pool.retired = it;
        return 0;
    }
    /* a RECORDS/EVENTS item lives in its buffer: once returned, its owner
     * reuses both. Returns whether a thread waits for a buffer (the caller
     * wakes it after unlocking qlock, which it would block on at once). */
    if (!it->buf)
        return 0;
    it->buf->busy = 0;
    __atomic_fetch_add(&pool.returned_seq, 1, __ATOMIC_RELEASE);
    return pool.returned_waiters != 0;
}

/* ------------------------------------------------------------ appending */

static void close_trace(void)
{
    /* a run that recorded no thread still ends with a FOOTER (of no entries):
     * without totals the trace library closes a file without one */
    static const struct pes_thread_totals no_threads;
    struct pes_error err = {0};
    if (pes_rt.writer &&
        pes_trace_writer_close(pes_rt.writer, pool.totals ? pool.totals : &no_threads,
                               pool.n_announced, pes_rt_now(), &err) &&
        !__atomic_load_n(&pool.failed, __ATOMIC_RELAXED))
        report_to(&pool.failed, &err);
    pes_rt.writer = NULL;
    if (pes_rt.swriter &&
        pes_trace_writer_close(pes_rt.swriter, pool.stotals ? pool.stotals : &no_threads,
                               pool.n_announced, pes_rt_now(), &err) &&
        !__atomic_load_n(&pool.sfailed, __ATOMIC_RELAXED))
        report_to(&pool.sfailed, &err);
    pes_rt.swriter = NULL;
}

/* An encoding error ends that file's trace like a write error does; the
 * encoder's message does not name the file, so it is added here. */
static void report_encoding(int *flag, const char *path, const struct result *r)
{
    struct pes_error e = r->err;
    snprintf(e.message, sizeof e.message, "%s: %s", path ? path : "trace", r->err.message);
    report_to(flag, &e);
}

static void append_to(struct pes_trace_writer *w, int *flag, const char *path,
                      const struct result *r)
{
    struct pes_error err = {0};
    if (r->rc)
        report_encoding(flag, path, r);
    else if (pes_trace_writer_append(w, r->bytes, r->size, &err))
        report_to(flag, &err);
}

/* Appends one result, in its turn. Items for a file that failed meanwhile are
 * dropped and not counted, as they would have been by a single writer. */
static void append_result(const struct result *r)
{
    struct pes_trace_writer *fw =
        __atomic_load_n(&pool.failed, __ATOMIC_RELAXED) ? NULL : pes_rt.writer;
    struct pes_trace_writer *sw =
        __atomic_load_n(&pool.sfailed, __ATOMIC_RELAXED) ? NULL : pes_rt.swriter;
    switch (r->type) {
    case PES_RT_ITEM_RECORDS:
        if (fw && r->to_full) {
            add_records(r);
            append_to(fw, &pool.failed, pes_rt.cfg.full_output, r);
        }
        break;
    case PES_RT_ITEM_EVENTS:
        if (sw && r->to_sampled) {
            add_events(r);
            append_to(sw, &pool.sfailed, pes_rt.cfg.sample_output, r);
        }
        break;
    case PES_RT_ITEM_MAPS:
        if (fw && r->to_full)
            append_to(fw, &pool.failed, pes_rt.cfg.full_output, r);
        if (sw && r->to_sampled)
            append_to(sw, &pool.sfailed, pes_rt.cfg.sample_output, r);
        break;
    case PES_RT_ITEM_THREAD:
    case PES_RT_ITEM_MODULE:
    case PES_RT_ITEM_ALLOC_SITES:
        if (r->type == PES_RT_ITEM_THREAD && grow(&pool.totals, &pool.n_totals, r->thread) &&
            grow(&pool.stotals, &pool.n_stotals, r->thread) && r->thread >= pool.n_announced)
            pool.n_announced = r->thread + 1;
        if (fw && r->to_full)
            append_to(fw, &pool.failed, pes_rt.cfg.full_output, r);
        if (sw && r->to_sampled)
            append_to(sw, &pool.sfailed, pes_rt.cfg.sample_output, r);
        break;
    case PES_RT_ITEM_STOP:
        close_trace();
        pthread_mutex_lock(&pool.qlock);
        pool.running = 0; /* anything queued after STOP is never written */
        returned_broadcast_locked();
        pthread_mutex_unlock(&pool.qlock);
        __atomic_store_n(&pool.closed, 1, __ATOMIC_RELEASE);
        break;
    default:
        break;
    }
}

/* Keeps a copy of the encoder's output so that the encoder can go on while
 * the result waits for its turn. 0, or -1 if out of memory. */
static int keep_copy(struct result *r)
{
    if (!r->bytes || r->owned)
        return 0;
    r->owned = malloc(r->size);
    if (!r->owned)
        return -1;
    memcpy(r->owned, r->bytes, r->size);
    r->bytes = r->owned;
    return 0;
}

/* Hands a result to the reorder stage: appends it (and the ones waiting after
 * it) if it is next in line and nobody is appending, else parks it. Called
 * and returns with qlock held (one lock round per item less: the encoders,
 * the application threads and the append all meet on qlock). */
static void deliver_locked(struct result *r)
{
    struct result cur;
    if (pool.appending || r->seq != pool.next_append) {
        pthread_mutex_unlock(&pool.qlock);
        int copied = keep_copy(r) == 0;
        pthread_mutex_lock(&pool.qlock);
        if (!copied) {
            /* no memory for a copy: wait for our turn with the bytes still in
             * our encoder. Every earlier item is taken already (items are
             * taken in order) and is appended without waiting for us. */
            pool.turn_waiters++;
            while (pool.appending || r->seq != pool.next_append)
                pthread_cond_wait(&pool.q_turn, &pool.qlock);
            pool.turn_waiters--;
            cur = *r;
        } else {
            struct slot *s = &pool.window[r->seq % pool.window_size];
            s->r = *r;
            s->ready = 1;
            s = &pool.window[pool.next_append % pool.window_size];
            if (pool.appending || !s->ready || s->r.seq != pool.next_append)
                return;
            cur = s->r; /* meanwhile everything before ours was appended */
            s->ready = 0;
        }
    } else {
        cur = *r;
    }
    pool.appending = 1;
    for (;;) {
        pthread_mutex_unlock(&pool.qlock);
        append_result(&cur);
        free(cur.owned);
        pthread_mutex_lock(&pool.qlock);
        pool.next_append++;
        wake_one(wake_due_locked()); /* the window moved: one more item may be taken */
        struct slot *s = &pool.window[pool.next_append % pool.window_size];
        if (!s->ready || s->r.seq != pool.next_append)
            break;
        cur = s->r;
        s->ready = 0;
    }
    pool.appending = 0;
    if (pool.turn_waiters)
        pthread_cond_broadcast(&pool.q_turn); /* one of them may be next */
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    in_pool = 1;
    pthread_mutex_lock(&pool.qlock);
    for (;;) {
        /* the window bound: an item is taken only if the blocks encoded out
         * of turn stay fewer than window_size */
        while (!pool.stop_taken && !head_takeable_locked()) {
            pool.idle++;
            pthread_cond_wait(&pool.q_work, &pool.qlock);
            pool.idle--;
        }
        if (pool.stop_taken)
            break;
        struct pes_rt_item *it = pool.head;
        pool.head = it->next;
        if (!pool.head)
            pool.tail = NULL;
        int next_due = 0;
        if (it->type == PES_RT_ITEM_STOP) {
            pool.stop_taken = 1;
            pthread_cond_broadcast(&pool.q_work); /* the other encoders end */
        } else {
            next_due = wake_due_locked(); /* the next item, for another encoder */
        }
        pthread_mutex_unlock(&pool.qlock);
        wake_one(next_due);
        struct result r;
        uint64_t units = units_of(it);
        encode_item(w->enc, it, &r);
        pthread_mutex_lock(&pool.qlock);
        if (release_item_locked(it)) { /* its owner waits: woken outside qlock */
            pthread_mutex_unlock(&pool.qlock);
            syscall(SYS_futex, &pool.returned_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
            pthread_mutex_lock(&pool.qlock);
        }
        deliver_locked(&r);
        __atomic_fetch_add(&pool.encoded_units, units, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&pool.qlock);
    return NULL;
}

/* ------------------------------------------------------------ start and stop */

static uint32_t pool_size(void)
{
    if (pes_rt.cfg.writers)
        return pes_rt.cfg.writers;
    cpu_set_t set;
    int cpus = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    return pes_rt_writers_for_cpus(cpus);
}

static void free_pool(void)
{
    for (uint32_t i = 0; pool.workers && i < pool.n_workers; i++)
        pes_trace_encoder_free(pool.workers[i].enc);
    free(pool.workers);
    free(pool.window);
    pool.workers = NULL;
    pool.window = NULL;
    pool.n_workers = 0;
}

int pes_rt_writer_start(void)
{
    uint32_t n = pool_size();
    pool.workers = calloc(n, sizeof *pool.workers);
    /* two blocks per encoder may wait for an earlier one: enough that a slow
     * block (a large module, an incompressible buffer) rarely stalls the rest */
    pool.window_size = 2 * n;
    pool.window = calloc(pool.window_size, sizeof *pool.window);
    if (!pool.workers || !pool.window) {
        free_pool();
        return -1;
    }
    pool.n_workers = n;
    struct pes_writer_options opt = {.zstd_level = pes_rt.cfg.zstd_level};
    for (uint32_t i = 0; i < n; i++)
        if (!(pool.workers[i].enc = pes_trace_encoder_new(&opt, NULL)))
            break;
    sigset_t all, old;
    sigfillset(&all);
    /* the encoders never take the application's asynchronous signals */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pool.running = 1;
    uint32_t started = 0;
    for (uint32_t i = 0; i < n && pool.workers[i].enc; i++)
        if (pthread_create(&pool.workers[i].thread, NULL, worker_main, &pool.workers[i]) == 0) {
            pool.workers[i].started = 1;
            started++;
        }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started) {
        pool.running = 0;
        free_pool();
        return -1;
    }
    if (started < n && !pes_rt.cfg.quiet)
        pes_rt_message("started %u of %u writer threads", started, n);
    return 0;
}

/* The program has exited (its own output is complete): while the records
 * still queued are encoded and written, a progress line on a terminal
 * (pes/progress.h; drawn only if this takes over a second). */
static void finish_progress(uint64_t queued, uint64_t base)
{
    if (queued <= base || pes_rt.cfg.quiet)
        return;
    const char *name = pes_rt.cfg.full_output ? pes_rt.cfg.full_output : pes_rt.cfg.sample_output;
    struct pes_progress *p = pes_progress_start(name ? name : "trace", queued - base, "records");
    if (!p)
        return;
    for (;;) {
        int done = __atomic_load_n(&pool.closed, __ATOMIC_ACQUIRE) || pes_rt_signal_pending();
        pes_progress_update(p, __atomic_load_n(&pool.encoded_units, __ATOMIC_RELAXED) - base);
        if (done)
            break;
        struct timespec ts = {0, 50000000};
        syscall(SYS_nanosleep, &ts, NULL); /* not a cancellation point (see returned_seq) */
    }
    pes_progress_end(p);
}

void pes_rt_writer_finish(void)
{
    pthread_mutex_lock(&pool.qlock);
    /* queued, less encoded: the items still in the queue and in the encoders */
    uint64_t queued = pool.queued_units;
    uint64_t base = __atomic_load_n(&pool.encoded_units, __ATOMIC_RELAXED);
    int due = append_locked(&pool.stop_item);
    pthread_mutex_unlock(&pool.qlock);
    wake_one(due);
    finish_progress(queued, base);
    /* STOP ends `running`; a termination signal meanwhile ends the wait (the
     * process is about to die, with the trace as far as it got) */
    pthread_mutex_lock(&pool.qlock);
    int interrupted = 0;
    while (pool.running && !(interrupted = wait_returned_locked()))
        ;
    pthread_mutex_unlock(&pool.qlock);
    if (interrupted)
        return;
    for (uint32_t i = 0; i < pool.n_workers; i++)
        if (pool.workers[i].started)
            pthread_join(pool.workers[i].thread, NULL);
}

void pes_rt_writer_finish_signal(unsigned wait_ms)
{
    /* bounded by the clock: a dying process must not hang on a stuck writer */
    uint64_t deadline = pes_rt_now() + (uint64_t)wait_ms * 1000000u;
    if (pes_rt_writer_try_push(&pool.stop_item))
        return;
    while (!__atomic_load_n(&pool.closed, __ATOMIC_ACQUIRE) && pes_rt_now() < deadline) {
        struct timespec ts = {0, 1000000};
        syscall(SYS_nanosleep, &ts, NULL);
    }
}
