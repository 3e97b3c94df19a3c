/*
 * merge.c — k-way merge of per-thread record streams by interpolated time.
 * See merge.h for the ordering rules and the memory bound.
 */
#include "merge.h"
#include "cpu_account.h"
#include "scheduler.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How the records of the current segment (or part of a long one) are
 * timed: record k of the part is the segment's record k0 + k + 1 (1-based)
 * of n, timed between the marks start and end (marked), or after the last
 * mark at `rate` ticks per record. Times are computed where they are
 * compared, not stored: the merge compares a few per run of one thread. */
struct seg_clock {
    uint64_t k0, n, start, end;
    double rate;
    double span, count; /* (double)(end - start) and (double)n, converted once */
    int marked;
    int monotone; /* times never decrease along the part (time_run may bisect) */
};

/* One thread's position: its ACCESS blocks in file order, the current decoded
 * block, and the current segment (records up to and including the next time
 * mark) with their interpolated times. A segment longer than
 * PES_MERGE_SEGMENT_CAP records is held in parts of at most that many (see
 * fill_segment). */
struct thread_stream {
    uint32_t thread;
    int started;                  /* first segment loaded (streams start lazily, see settle_top) */
    struct pes_block_ref *blocks; /* into merge->refs: this thread's ACCESS blocks */
    size_t n_blocks, next_block;
    struct pes_record *blk; /* copy of the current block (reader buffers are reused) */
    size_t blk_n, blk_pos, blk_cap;
    const struct pes_record *seg; /* current segment, or the current part of a long one: in blk
                                 * when it lies inside the current block, else in seg_buf */
    struct pes_record *seg_buf;
    size_t seg_n, seg_pos, seg_cap;
    struct seg_clock clock; /* the times of the current segment's records (time_at) */
    uint64_t last_mark;     /* time of the last mark consumed */
    uint64_t start;         /* the thread's start: no mark is timed before it */
    double rate;            /* ticks per record in the last closed segment */
    /* a segment longer than the cap: its length, the records delivered in
     * earlier parts, and how its records are timed */
    uint64_t long_n, long_done;
    uint64_t long_start, long_end;
    int long_marked;
    int skipping;        /* pes_merge_set_range: records before lo are still dropped */
    struct fetch *fetch; /* [PREFETCH] blocks decoded ahead (pes_merge_set_workers), or NULL */
};

/* Blocks decoded ahead on the replay's workers, PREFETCH per stream:
 * block j of a stream in fetch[j % PREFETCH], taken in order. */
enum { PREFETCH = 2 };

struct decoder;

struct fetch {
    struct decoder *dec;
    const struct pes_block_ref *ref;
    int busy;        /* submitted and not taken yet (merge thread only) */
    atomic_int done; /* decoded: rc, recs / err are set */
    int rc;
    struct pes_error err;
    struct pes_record *recs;
    size_t n, cap;
};

/* A reader of its own on a strand of its own: the streams bound to it get
 * their blocks decoded one after the other, each stream's in file order, so
 * that the reader's checks across a thread's blocks (its time marks never
 * go back) are those the merge's own reader makes. */
struct decoder {
    const char *path;
    struct pes_trace_reader *r; /* opened by its first task */
    struct pes_strand *strand;
};

struct heap_entry {
    uint64_t time;
    uint32_t stream; /* index into merge->streams */
};

struct pes_merge {
    struct pes_trace_reader *reader;
    struct pes_block_ref *refs; /* ACCESS blocks, grouped by stream, file order within one */
    struct thread_stream *streams;
    uint32_t n_streams;
    struct heap_entry *heap;
    uint32_t heap_n;
    uint32_t *ended; /* threads whose stream ended during the last call */
    size_t n_ended;
    uint64_t held; /* bytes in the streams' buffers */
    /* pes_merge_set_range: the records timed in [lo, hi) (bounded: hi holds) */
    uint64_t lo, hi;
    int bounded;
    int rest_checked;            /* check_rest_order done (a bounded range's end) */
    struct pes_block_ref footer; /* type 0: none */
    int st_decode;               /* --stats: the decoding's stage (cpu_account.h) */
    struct pes_sched *sched;     /* pes_merge_set_workers: decoding ahead; NULL: here */
    char *path;
    struct decoder *dec; /* stream i's blocks: dec[i % n_dec] */
    uint32_t n_dec;
};

/* Grows *p to at least `need` elements: small first (a short-lived thread
 * holds little), then doubling. */
static int grow(void **p, size_t *cap, size_t need, size_t elem, uint64_t *held)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *held += (c - *cap) * elem;
    *p = q;
    *cap = c;
    return 0;
}

static int is_time_mark(const struct pes_record *r)
{
    return r->id == PES_ID_TIME || r->id == PES_ID_THREAD_END;
}

/* ticks + a non-negative offset, saturated instead of wrapping (marks near
 * 2^64 in a damaged trace must not send records back to time 0). */
static uint64_t ticks_after(uint64_t ticks, double offset)
{
    if (!(offset < 18446744073709551616.0))
        return UINT64_MAX;
    /* the same value as (uint64_t)offset; below 2^63 the signed conversion
     * is one instruction, the unsigned one a branchy sequence */
    uint64_t d = offset < 9223372036854775808.0 ? (uint64_t)(int64_t)offset : (uint64_t)offset;
    return d > UINT64_MAX - ticks ? UINT64_MAX : ticks + d;
}

/* A block decompressed and decoded, its CPU charged to the decoding (--stats). */
static int decode_block(struct pes_merge *m, const struct pes_block_ref *ref, struct pes_block *b,
                        struct pes_error *err)
{
    int was = pes_cpu_switch(m->st_decode);
    int rc = pes_trace_reader_block_at(m->reader, ref, b, err);
    pes_cpu_switch(was);
    return rc;
}

/* ------------------------------------------------------------ decoding ahead */

/* A worker's task: the block decoded by the stream's decoder and its
 * records copied out (the reader's buffer is its own). */
static void fetch_run(void *arg)
{
    struct fetch *f = arg;
    struct decoder *d = f->dec;
    if (!d->r)
        d->r = pes_trace_reader_open(d->path, &f->err);
    struct pes_block b;
    f->rc = d->r && pes_trace_reader_block_at(d->r, f->ref, &b, &f->err) >= 0 ? 1 : -1;
    if (f->rc > 0 && b.n > f->cap) {
        struct pes_record *q = realloc(f->recs, b.n * sizeof *q);
        if (!q)
            f->rc = pes_error_set(&f->err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        else
            f->recs = q, f->cap = b.n;
    }
    if (f->rc > 0) {
        if (b.n)
            memcpy(f->recs, b.records, b.n * sizeof *f->recs);
        f->n = b.n;
    }
    atomic_store_explicit(&f->done, 1, memory_order_release);
}

static int fetch_done(void *ctx)
{
    struct fetch *f = ctx;
    return atomic_load_explicit(&f->done, memory_order_acquire);
}

/* Block j of the stream to a worker, if there is one and its place is free. */
static int fetch_ahead(struct pes_merge *m, struct thread_stream *s, size_t j,
                       struct pes_error *err)
{
    struct fetch *f = &s->fetch[j % PREFETCH];
    if (j >= s->n_blocks || f->busy)
        return 0;
    f->dec = &m->dec[(size_t)(s - m->streams) % m->n_dec];
    f->ref = &s->blocks[j];
    f->busy = 1;
    atomic_store_explicit(&f->done, 0, memory_order_relaxed);
    if (pes_sched_submit(f->dec->strand, fetch_run, f, err) < 0) {
        f->busy = 0;
        return -1;
    }
    return 0;
}

/* Block j (the stream's next) from the workers into s->blk; the blocks
 * after it go ahead. 0, or -1 with err filled (the block's own error, met
 * where the merge reaches it). */
static int fetch_take(struct pes_merge *m, struct thread_stream *s, size_t j, size_t *n,
                      struct pes_error *err)
{
    for (size_t k = 0; k < PREFETCH; k++)
        if (fetch_ahead(m, s, j + k, err) < 0)
            return -1;
    struct fetch *f = &s->fetch[j % PREFETCH];
    int was = pes_cpu_switch(m->st_decode); /* what the merge waits for, or decodes itself */
    pes_sched_wait_urgent(m->sched, fetch_done, f);
    pes_cpu_switch(was);
    f->busy = 0;
    if (f->rc < 0) {
        *err = f->err;
        return -1;
    }
    struct pes_record *t = s->blk; /* the buffers change places: no copy here */
    size_t cap = s->blk_cap;
    m->held -= cap * sizeof *t;
    s->blk = f->recs, s->blk_cap = f->cap;
    f->recs = t, f->cap = cap;
    m->held += s->blk_cap * sizeof *s->blk;
    *n = f->n;
    return fetch_ahead(m, s, j + PREFETCH, err);
}

/* Waits for the stream's blocks in flight and frees their buffers. */
static void fetch_drop(struct pes_merge *m, struct thread_stream *s)
{
    if (!s->fetch)
        return;
    for (size_t k = 0; k < PREFETCH; k++) {
        struct fetch *f = &s->fetch[k];
        if (f->busy)
            pes_sched_wait_urgent(m->sched, fetch_done, f);
        free(f->recs);
    }
    free(s->fetch);
    s->fetch = NULL;
}

int pes_merge_set_workers(struct pes_merge *m, struct pes_sched *sched, const char *path,
                          struct pes_error *err)
{
    uint32_t workers = pes_sched_workers(sched);
    if (workers < 2 || m->n_streams == 0)
        return 0;
    m->n_dec = workers < m->n_streams ? workers : m->n_streams;
    if (!(m->path = strdup(path)) || !(m->dec = calloc(m->n_dec, sizeof *m->dec)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
    m->sched = sched;
    for (uint32_t i = 0; i < m->n_dec; i++) {
        m->dec[i].path = m->path;
        if (!(m->dec[i].strand = pes_strand_create(sched, m->st_decode)))
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        pes_strand_set_urgent(m->dec[i].strand);
    }
    for (uint32_t i = 0; i < m->n_streams; i++)
        if (!(m->streams[i].fetch = calloc(PREFETCH, sizeof *m->streams[i].fetch)))
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
    return 0;
}

/* Loads the stream's next non-empty block; 1 = loaded, 0 = no more, -1 = error. */
static int load_block(struct pes_merge *m, struct thread_stream *s, struct pes_error *err)
{
    while (m->sched && s->next_block < s->n_blocks) {
        size_t n;
        if (fetch_take(m, s, s->next_block++, &n, err) < 0)
            return -1;
        if (n == 0)
            continue;
        s->blk_n = n;
        s->blk_pos = 0;
        return 1;
    }
    while (s->next_block < s->n_blocks) {
        struct pes_block b;
        if (decode_block(m, &s->blocks[s->next_block++], &b, err) < 0)
            return -1;
        if (b.n == 0)
            continue;
        if (grow((void **)&s->blk, &s->blk_cap, b.n, sizeof *s->blk, &m->held) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        memcpy(s->blk, b.records, b.n * sizeof *s->blk);
        s->blk_n = b.n;
        s->blk_pos = 0;
        return 1;
    }
    return 0;
}

/* Copies up to `max` records into the segment buffer, stopping after a time
 * mark if stop_at_mark; sets *found_mark. 0 or -1. */
static int copy_records(struct pes_merge *m, struct thread_stream *s, size_t max, int stop_at_mark,
                        int *found_mark, struct pes_error *err)
{
    *found_mark = 0;
    while (s->seg_n < max && !*found_mark) {
        if (s->blk_pos == s->blk_n) {
            int rc = load_block(m, s, err);
            if (rc < 0)
                return -1;
            if (rc == 0)
                break;
        }
        /* copy the run up to and including the next mark in one go */
        size_t avail = s->blk_n - s->blk_pos, room = max - s->seg_n;
        size_t k = avail < room ? avail : room;
        if (stop_at_mark) {
            size_t i = 0;
            while (i < k && !is_time_mark(&s->blk[s->blk_pos + i]))
                i++;
            if (i < k) {
                k = i + 1;
                *found_mark = 1;
            }
        }
        if (grow((void **)&s->seg_buf, &s->seg_cap, s->seg_n + k, sizeof *s->seg_buf, &m->held) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        memcpy(s->seg_buf + s->seg_n, s->blk + s->blk_pos, k * sizeof *s->seg_buf);
        s->seg_n += k;
        s->blk_pos += k;
    }
    s->seg = s->seg_buf; /* grown above: set after */
    return 0;
}

/* The length of the segment whose first `have` records are in the buffer
 * (up to and including its mark, or to the stream's end), found by decoding
 * the blocks ahead without keeping them; *end_mark and *marked say how it
 * ends. Those blocks are decoded again when their records are delivered. */
static int measure_segment(struct pes_merge *m, struct thread_stream *s, uint64_t have, uint64_t *n,
                           uint64_t *end_mark, int *marked, struct pes_error *err)
{
    *marked = 0;
    for (size_t i = s->blk_pos; i < s->blk_n; i++) {
        have++;
        if (is_time_mark(&s->blk[i])) {
            *n = have, *end_mark = s->blk[i].addr, *marked = 1;
            return 0;
        }
    }
    for (size_t j = s->next_block; j < s->n_blocks; j++) {
        struct pes_block b;
        if (decode_block(m, &s->blocks[j], &b, err) < 0)
            return -1;
        for (size_t i = 0; i < b.n; i++) {
            have++;
            if (is_time_mark(&b.records[i])) {
                *n = have, *end_mark = b.records[i].addr, *marked = 1;
                return 0;
            }
        }
    }
    *n = have;
    return 0;
}

/* Record k of the part's time: between marks, the segment's g-th record
 * (1-based) gets start + (end - start)·g/n and the mark itself exactly
 * `end`; after the last mark, records continue at the rate of the previous
 * segment. */
static inline uint64_t time_at(const struct seg_clock *c, size_t k)
{
    uint64_t r = c->k0 + k + 1;
    /* (double)r, by the signed conversion where that is the same value */
    double g = r < (UINT64_C(1) << 63) ? (double)(int64_t)r : (double)r;
    if (!c->marked)
        return ticks_after(c->start, c->rate * g);
    return r == c->n ? c->end : ticks_after(c->start, c->span * g / c->count);
}

/* The part's clock. Times rise with k (each step of the formula is
 * monotone, and the last interpolated time stays at or below `end` while
 * end - start < 2^52, where a tick is finer than a double's rounding). */
static void set_clock(struct thread_stream *s, uint64_t k0, uint64_t n, uint64_t start,
                      uint64_t end, int marked)
{
    s->clock = (struct seg_clock){.k0 = k0,
                                  .n = n,
                                  .start = start,
                                  .end = end,
                                  .rate = s->rate,
                                  .span = (double)(end - start),
                                  .count = (double)n,
                                  .marked = marked,
                                  .monotone = !marked || end - start < (UINT64_C(1) << 52)};
}

/* The end of the run of the part's records from pos on whose times come
 * before `limit` (or equal it, if ties_pass): where times rise, by
 * galloping from pos then bisecting (threads that run at once interleave
 * in runs of a record or two, a thread alone in runs of a segment), else
 * one by one. When the run stops at a record whose time it computed, that
 * time goes to *stop_time and *stopped is set: the caller's next key, which
 * it then need not compute again (a division per run of the merge). */
static size_t time_run(const struct seg_clock *c, size_t pos, size_t end, uint64_t limit,
                       int ties_pass, uint64_t *stop_time, int *stopped)
{
#define PASSES(t) ((t) < limit || ((t) == limit && ties_pass))
    *stopped = 0;
    if (!c->monotone) {
        for (; pos < end; pos++) {
            uint64_t t = time_at(c, pos);
            if (!PASSES(t)) {
                *stop_time = t;
                *stopped = 1;
                break;
            }
        }
        return pos;
    }
    /* the first record that does not pass is in [lo, hi]; hi_time is hi's
     * time once a probe failed there */
    size_t lo = pos, hi = end, step = 1;
    uint64_t hi_time = 0;
    while (lo < end) {
        size_t probe = end - lo > step ? lo + step - 1 : end - 1;
        uint64_t t = time_at(c, probe);
        if (!PASSES(t)) {
            hi = probe;
            hi_time = t;
            *stopped = 1;
            break;
        }
        lo = probe + 1;
        step *= 2;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t t = time_at(c, mid);
        if (PASSES(t)) {
            lo = mid + 1;
        } else {
            hi = mid;
            hi_time = t;
        }
    }
    *stop_time = hi_time;
    return lo;
#undef PASSES
}

/* Fills the next segment: records up to and including the next time mark,
 * timed by linear interpolation from the previous mark. At most
 * PES_MERGE_SEGMENT_CAP records are held: a longer segment is measured first
 * (measure_segment) and then delivered in parts, timed exactly as if it were
 * held whole. 1 / 0 (end) / -1. */
static int fill_segment(struct pes_merge *m, struct thread_stream *s, struct pes_error *err)
{
    s->seg_n = s->seg_pos = 0;
    int found_mark = 0;
    if (s->long_n) { /* the next part of a long segment */
        uint64_t rest = s->long_n - s->long_done;
        if (copy_records(m, s, rest < PES_MERGE_SEGMENT_CAP ? rest : PES_MERGE_SEGMENT_CAP, 0,
                         &found_mark, err) < 0)
            return -1;
        if (s->seg_n == 0)
            return pes_error_set(err, PES_ERR_IO, 0,
                                 "merge: thread %u: its blocks changed while being read",
                                 s->thread);
        set_clock(s, s->long_done, s->long_n, s->long_start, s->long_end, s->long_marked);
        s->long_done += s->seg_n;
        if (s->long_done >= s->long_n)
            s->long_n = 0;
        return 1;
    }
    /* The usual segment (about a thousand records) ends inside the current
     * block: it is delivered from there, without a copy. */
    if (s->blk_pos < s->blk_n) {
        const struct pes_record *b = s->blk + s->blk_pos;
        size_t avail = s->blk_n - s->blk_pos,
               k = avail < PES_MERGE_SEGMENT_CAP ? avail : PES_MERGE_SEGMENT_CAP, i = 0;
        while (i < k && !is_time_mark(&b[i]))
            i++;
        if (i < k) {
            s->seg = b;
            s->seg_n = i + 1;
            s->blk_pos += i + 1;
            found_mark = 1;
        }
    }
    if (!found_mark && copy_records(m, s, PES_MERGE_SEGMENT_CAP, 1, &found_mark, err) < 0)
        return -1;
    if (s->seg_n == 0)
        return 0;
    uint64_t n = s->seg_n, end = 0;
    int marked = found_mark;
    if (found_mark) {
        end = s->seg[s->seg_n - 1].addr;
    } else if (s->seg_n == PES_MERGE_SEGMENT_CAP) {
        if (measure_segment(m, s, s->seg_n, &n, &end, &marked, err) < 0)
            return -1;
        if (n > s->seg_n) {
            s->long_n = n;
            s->long_done = s->seg_n;
        }
    }
    uint64_t start = s->last_mark;
    if (marked) {
        if (end < start)
            end = start; /* clocks never run backwards; tolerate bad marks */
        set_clock(s, 0, n, start, end, 1);
        if (start > 0 || s->rate > 0)
            s->rate = (double)(end - start) / (double)n;
        s->last_mark = end;
    } else {
        set_clock(s, 0, n, start, 0, 0);
    }
    s->long_start = start;
    s->long_end = end;
    s->long_marked = marked;
    return 1;
}

static int stream_less(const struct heap_entry *a, const struct heap_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->stream < b->stream);
}

static void heap_push(struct pes_merge *m, struct heap_entry e)
{
    uint32_t i = m->heap_n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!stream_less(&e, &m->heap[parent]))
            break;
        m->heap[i] = m->heap[parent];
        i = parent;
    }
    m->heap[i] = e;
}

static struct heap_entry heap_pop(struct pes_merge *m)
{
    struct heap_entry top = m->heap[0];
    struct heap_entry last = m->heap[--m->heap_n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->heap_n)
            break;
        if (c + 1 < m->heap_n && stream_less(&m->heap[c + 1], &m->heap[c]))
            c++;
        if (!stream_less(&m->heap[c], &last))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->heap_n > 0)
        m->heap[i] = last;
    return top;
}

/* Restores the heap order after the top entry's time grew. */
static void heap_sift_down_top(struct pes_merge *m)
{
    struct heap_entry e = m->heap[0];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->heap_n)
            break;
        if (c + 1 < m->heap_n && stream_less(&m->heap[c + 1], &m->heap[c]))
            c++;
        if (!stream_less(&m->heap[c], &e))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    m->heap[i] = e;
}

/* A finished stream gives its buffers back and is reported by pes_merge_ended. */
static void end_stream(struct pes_merge *m, struct thread_stream *s)
{
    fetch_drop(m, s);
    m->held -= s->blk_cap * sizeof *s->blk + s->seg_cap * sizeof *s->seg_buf;
    free(s->blk);
    free(s->seg_buf);
    s->blk = s->seg_buf = NULL;
    s->seg = NULL;
    s->blk_cap = s->blk_n = s->blk_pos = s->seg_cap = s->seg_n = s->seg_pos = 0;
    m->ended[m->n_ended++] = s->thread;
}

/* Makes sure the stream has a current record: 1 = yes, 0 = stream ended.
 * In a range, a stream's records before lo are dropped: its times never
 * decrease, so they are its first ones. */
static int refill(struct pes_merge *m, struct thread_stream *s, struct pes_error *err)
{
    for (;;) {
        uint64_t unused;
        int stopped;
        if (s->skipping)
            s->seg_pos = time_run(&s->clock, s->seg_pos, s->seg_n, m->lo, 0, &unused, &stopped);
        if (s->seg_pos < s->seg_n) {
            s->skipping = 0;
            return 1;
        }
        int rc = fill_segment(m, s, err);
        if (rc == 0)
            end_stream(m, s);
        if (rc <= 0)
            return rc;
    }
}

static int seek_stream(struct pes_merge *m, struct thread_stream *s, struct pes_error *err);

/* Streams enter the heap keyed by their thread's start time, a lower bound of
 * their first record's time (records are timed from the start on), and load
 * their first block only when that key reaches the top: a thread holds
 * buffers only from its start to its last record, so short-lived threads that
 * ran one after the other are never all in memory. Makes the top entry (if
 * any) a started stream with its true key. 0 or -1. */
static int settle_top(struct pes_merge *m, struct pes_error *err)
{
    while (m->heap_n > 0) {
        struct thread_stream *s = &m->streams[m->heap[0].stream];
        if (s->started)
            return 0;
        s->started = 1;
        if (s->skipping && seek_stream(m, s, err) < 0)
            return -1;
        int rc = refill(m, s, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            heap_pop(m);
            continue;
        }
        m->heap[0].time = time_at(&s->clock, s->seg_pos);
        heap_sift_down_top(m);
    }
    return 0;
}

/* ------------------------------------------------------------ ranges */

/* A mark's time as the merge gives it: never before the thread's start
 * (marks never decrease, the reader checks it, so only the start can be
 * later than one). */
static uint64_t mark_time(const struct pes_record *r, uint64_t start)
{
    return r->addr < start ? start : r->addr;
}

/* Block j of the stream decoded; its first and last marks (index, or -1). */
static int probe_block(struct pes_merge *m, struct thread_stream *s, size_t j, struct pes_block *b,
                       long *first, long *last, struct pes_error *err)
{
    if (decode_block(m, &s->blocks[j], b, err) < 0)
        return -1;
    *first = *last = -1;
    for (size_t i = 0; i < b->n; i++)
        if (is_time_mark(&b->records[i])) {
            if (*first < 0)
                *first = (long)i;
            *last = (long)i;
        }
    return 0;
}

/* The last of the stream's blocks whose first mark is timed before t (-1:
 * none), bisected by first marks (marks never decrease): the block a part
 * that starts at t enters the stream in (seek_stream). */
static int last_block_before(struct pes_merge *m, struct thread_stream *s, uint64_t t, long *found,
                             struct pes_error *err)
{
    struct pes_block b;
    long first, last;
    size_t lo = 0, hi = s->n_blocks;
    *found = -1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, k = mid;
        for (; k < hi; k++) { /* blocks without marks are passed over */
            if (probe_block(m, s, k, &b, &first, &last, err) < 0)
                return -1;
            if (first >= 0)
                break;
        }
        if (k == hi) {
            hi = mid;
        } else if (mark_time(&b.records[first], s->start) < t) {
            *found = (long)k;
            lo = k + 1;
        } else {
            hi = mid;
        }
    }
    return 0;
}

/* The reader checks a thread's marks from one block to the next in file
 * order only (check_times in reader.c); the bisection decodes blocks out of
 * order. Blocks from the last marked one at or before `from` up to `to`
 * decoded again in order, so that the reader compares every pair between
 * them: a damaged file's blocks out of order are reported in parts too. */
static int recheck_order(struct pes_merge *m, struct thread_stream *s, size_t from, size_t to,
                         struct pes_error *err)
{
    struct pes_block b;
    long first, last;
    size_t j = from;
    for (;; j--) { /* a block at or before the last one decoded: the check starts over here */
        if (probe_block(m, s, j, &b, &first, &last, err) < 0)
            return -1;
        if (last >= 0 || j == 0)
            break;
    }
    for (size_t i = j + 1; i <= to; i++)
        if (decode_block(m, &s->blocks[i], &b, err) < 0)
            return -1;
    return 0;
}

/* At the end of a bounded range [lo, hi): the part after this one enters
 * each stream at last_block_before(hi) and checks the order from the block
 * before it on (seek_stream). With marks in order that block was read here
 * already; where it was not, the blocks between are checked now, so the
 * parts together check every pair of a thread's blocks, as one whole read
 * does. */
static int check_rest_order(struct pes_merge *m, struct pes_error *err)
{
    m->rest_checked = 1;
    for (uint32_t i = 0; i < m->n_streams; i++) {
        struct thread_stream *s = &m->streams[i];
        long next;
        /* a stream not started here starts at or after hi: no mark before it */
        if (!s->started || s->next_block == 0 || s->next_block >= s->n_blocks)
            continue;
        if (last_block_before(m, s, m->hi, &next, err) < 0)
            return -1;
        if (next >= (long)s->next_block &&
            recheck_order(m, s, s->next_block - 1, (size_t)next, err) < 0)
            return -1;
    }
    return 0;
}

/* Enters the stream after its last time mark M timed before lo, as if every
 * record up to M had been read: those records all come before lo (a
 * record is never timed after the mark that ends its segment), and what
 * follows is timed from M alone, except records after the thread's last
 * mark, which take the rate of the segment M ends. The blocks are bisected
 * by their first mark (marks never decrease), so a part costs a few block
 * decodes per thread besides its own blocks. No such mark: the stream
 * starts at its beginning; either way refill drops the records before lo. */
static int seek_stream(struct pes_merge *m, struct thread_stream *s, struct pes_error *err)
{
    const uint64_t start = s->start;
    struct pes_block b;
    long first, last, found;
    if (last_block_before(m, s, m->lo, &found, err) < 0)
        return -1;
    if (found < 0)
        return 0;
    if (probe_block(m, s, (size_t)found, &b, &first, &last, err) < 0)
        return -1;
    /* M: the last mark of the block timed before lo; S, the mark before it,
     * and the records after S up to M: the segment whose rate follows M */
    long mi = -1, si = -1;
    for (long i = first; i <= last; i++)
        if (is_time_mark(&b.records[i])) {
            if (mark_time(&b.records[i], start) >= m->lo)
                break;
            si = mi;
            mi = i;
        }
    uint64_t mark = mark_time(&b.records[mi], start), prev = start, n = (uint64_t)(mi - si);
    if (si >= 0)
        prev = mark_time(&b.records[si], start);
    size_t n_blk = b.n;
    if (grow((void **)&s->blk, &s->blk_cap, n_blk, sizeof *s->blk, &m->held) < 0)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
    memcpy(s->blk, b.records, n_blk * sizeof *s->blk);
    if (si < 0) { /* S is in an earlier block, or the start */
        n = (uint64_t)mi + 1;
        for (size_t j = (size_t)found; j-- > 0;) {
            if (probe_block(m, s, j, &b, &first, &last, err) < 0)
                return -1;
            if (last >= 0) {
                prev = mark_time(&b.records[last], start);
                n += b.n - 1 - (size_t)last;
                break;
            }
            n += b.n;
        }
    }
    /* the order from the block before on, as one whole read checks it */
    if (recheck_order(m, s, found > 0 ? (size_t)found - 1 : 0, (size_t)found, err) < 0)
        return -1;
    s->blk_n = n_blk;
    s->blk_pos = (size_t)mi + 1;
    s->next_block = (size_t)found + 1;
    s->last_mark = mark;
    /* fill_segment's rate: set by a segment that starts after time 0 */
    s->rate = prev > 0 ? (double)(mark - prev) / (double)n : 0.0;
    return 0;
}

int pes_merge_set_range(struct pes_merge *m, uint64_t lo, uint64_t hi, int bounded,
                        struct pes_error *err)
{
    for (uint32_t i = 0; i < m->n_streams; i++)
        if (m->streams[i].started)
            return pes_error_set(err, PES_ERR_ARG, 0, "%s",
                                 "pes_merge_set_range: after the first read");
    m->lo = lo;
    m->hi = hi;
    m->bounded = bounded;
    /* streams wait in the heap keyed by a lower bound of their first record */
    for (uint32_t i = 0; i < m->heap_n; i++) {
        struct thread_stream *s = &m->streams[m->heap[i].stream];
        s->skipping = lo > 0;
        if (m->heap[i].time < lo)
            m->heap[i].time = lo;
    }
    /* raising keys to lo keeps them ordered by time but not by the stream
     * tie-break of equal times: rebuild the heap (its entries pushed anew) */
    uint32_t n = m->heap_n;
    m->heap_n = 0;
    for (uint32_t i = 0; i < n; i++)
        heap_push(m, m->heap[i]);
    return 0;
}

/* Without a FOOTER: the time of a thread's last mark (its start if none). */
static int stream_end_time(struct pes_merge *m, struct thread_stream *s, uint64_t *end,
                           struct pes_error *err)
{
    *end = s->last_mark;
    for (size_t j = s->n_blocks; j-- > 0;) {
        struct pes_block b;
        long first, last;
        if (probe_block(m, s, j, &b, &first, &last, err) < 0)
            return -1;
        if (last >= 0) {
            *end = mark_time(&b.records[last], s->last_mark);
            return 0;
        }
    }
    return 0;
}

int pes_merge_part_times(struct pes_merge *m, uint32_t n, uint64_t *cuts, struct pes_error *err)
{
    uint32_t k = m->n_streams;
    uint64_t *t0 = calloc(k ? k : 1, sizeof *t0), *t1 = calloc(k ? k : 1, sizeof *t1);
    double *count = calloc(k ? k : 1, sizeof *count), total = 0;
    if (!t0 || !t1 || !count) {
        free(t0), free(t1), free(count);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
    }
    struct pes_block footer;
    const struct pes_block *f = NULL;
    if (m->footer.type == PES_BLOCK_FOOTER) {
        if (pes_trace_reader_block_at(m->reader, &m->footer, &footer, err) < 0)
            goto fail;
        f = &footer;
    }
    /* the footer's totals stay valid only until the next decode: the ends first */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < k; i++) {
        struct thread_stream *s = &m->streams[i];
        t0[i] = s->last_mark;
        for (size_t j = 0; j < s->n_blocks; j++)
            count[i] += s->blocks[j].count;
        total += count[i];
        if (f) {
            uint64_t e = t0[i];
            for (size_t j = 0; j < f->n; j++)
                if (f->totals[j].thread == s->thread && f->totals[j].end_ticks > e)
                    e = f->totals[j].end_ticks;
            t1[i] = e;
        }
    }
    for (uint32_t i = 0; i < k; i++) {
        if (!f && stream_end_time(m, &m->streams[i], &t1[i], err) < 0)
            goto fail;
        if (t0[i] < lo)
            lo = t0[i];
        if (t1[i] > hi)
            hi = t1[i];
    }
    /* Each thread taken to progress evenly from its start to its end: the
     * cut times that give each part about the same number of records. Any
     * cuts keep the parts exact; these only balance them. */
    for (uint32_t c = 1; c < n; c++) {
        double want = total * c / n;
        uint64_t a = lo, z = hi > lo ? hi : lo;
        while (a < z) {
            uint64_t t = a + (z - a) / 2;
            double got = 0;
            for (uint32_t i = 0; i < k; i++)
                got += t >= t1[i]  ? count[i]
                       : t < t0[i] ? 0
                                   : count[i] * (double)(t - t0[i]) / (double)(t1[i] - t0[i] + 1);
            if (got >= want)
                z = t;
            else
                a = t + 1;
        }
        cuts[c - 1] = k ? a : 0;
    }
    free(t0), free(t1), free(count);
    return 0;
fail:
    free(t0), free(t1), free(count);
    return -1;
}

struct pes_merge *pes_merge_open(struct pes_trace_reader *r, struct pes_error *err)
{
    struct pes_merge *m = calloc(1, sizeof *m);
    struct pes_block_ref *all = NULL;
    uint32_t *stream_of = NULL; /* thread index -> stream + 1 */
    size_t *fill = NULL;
    if (!m)
        goto nomem;
    m->reader = r;
    m->st_decode = pes_cpu_stage("decode", 0);
    size_t n_all = 0;
    if (pes_trace_reader_load_tables(r, err) < 0 ||
        pes_trace_reader_index(r, &all, &n_all, err) < 0)
        goto fail;
    /* Streams in thread-index order, the tie-break order (merge.h), whatever
     * the order of the blocks in the file; thread indices are < 2^20
     * (docs/trace-format.md §1). */
    uint32_t max_thread = 0;
    size_t n_access = 0;
    for (size_t i = 0; i < n_all; i++)
        if (all[i].type == PES_BLOCK_ACCESS) {
            n_access++;
            if (all[i].thread > max_thread)
                max_thread = all[i].thread;
        }
    stream_of = calloc((size_t)max_thread + 1, sizeof *stream_of);
    m->streams = calloc(n_access ? n_access : 1, sizeof *m->streams);
    m->refs = malloc((n_access ? n_access : 1) * sizeof *m->refs);
    if (!stream_of || !m->streams || !m->refs)
        goto nomem;
    for (size_t i = 0; i < n_all; i++) {
        if (all[i].type == PES_BLOCK_ACCESS)
            stream_of[all[i].thread] = 1;
        if (all[i].type == PES_BLOCK_FOOTER)
            m->footer = all[i];
    }
    for (uint32_t t = 0; t <= max_thread; t++) {
        if (!stream_of[t])
            continue;
        struct thread_stream *s = &m->streams[m->n_streams];
        s->thread = t;
        const struct pes_thread *info = pes_trace_reader_thread(r, t);
        s->last_mark = s->start = info ? info->start_ticks : 0;
        stream_of[t] = ++m->n_streams;
    }
    for (size_t i = 0; i < n_all; i++)
        if (all[i].type == PES_BLOCK_ACCESS)
            m->streams[stream_of[all[i].thread] - 1].n_blocks++;
    /* each stream's blocks, contiguous, in file order */
    fill = malloc((m->n_streams ? m->n_streams : 1) * sizeof *fill);
    if (!fill)
        goto nomem;
    size_t at = 0;
    for (uint32_t i = 0; i < m->n_streams; i++) {
        fill[i] = at;
        m->streams[i].blocks = m->refs + at;
        at += m->streams[i].n_blocks;
    }
    for (size_t i = 0; i < n_all; i++)
        if (all[i].type == PES_BLOCK_ACCESS)
            m->refs[fill[stream_of[all[i].thread] - 1]++] = all[i];
    m->heap = calloc(m->n_streams ? m->n_streams : 1, sizeof *m->heap);
    m->ended = calloc(m->n_streams ? m->n_streams : 1, sizeof *m->ended);
    if (!m->heap || !m->ended)
        goto nomem;
    for (uint32_t i = 0; i < m->n_streams; i++)
        heap_push(m, (struct heap_entry){m->streams[i].last_mark, i});
    free(all);
    free(stream_of);
    free(fill);
    return m;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
fail:
    free(all);
    free(stream_of);
    free(fill);
    pes_merge_close(m);
    return NULL;
}

int pes_merge_next(struct pes_merge *m, struct pes_merged_record *out, struct pes_error *err)
{
    m->n_ended = 0;
    if (settle_top(m, err) < 0)
        return -1;
    if (m->heap_n == 0)
        return 0;
    if (m->bounded && m->heap[0].time >= m->hi)
        return m->rest_checked || check_rest_order(m, err) == 0 ? 0 : -1;
    /* The top stream stays at the top while its next record is still the
     * earliest: update its key in place instead of a pop and a push. */
    struct heap_entry *top = &m->heap[0];
    struct thread_stream *s = &m->streams[top->stream];
    out->time = top->time;
    out->thread = s->thread;
    out->rec = s->seg[s->seg_pos++];
    int rc = refill(m, s, err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        heap_pop(m);
        return 1;
    }
    top->time = time_at(&s->clock, s->seg_pos);
    heap_sift_down_top(m);
    return 1;
}

long pes_merge_read(struct pes_merge *m, struct pes_record *out, uint32_t *threads, size_t max,
                    int keep_control, struct pes_error *err)
{
    size_t n = 0;
    m->n_ended = 0;
    while (n < max) {
        if (settle_top(m, err) < 0)
            return -1;
        if (m->heap_n == 0)
            break;
        if (m->bounded && m->heap[0].time >= m->hi) {
            if (!m->rest_checked && check_rest_order(m, err) < 0)
                return -1;
            break;
        }
        struct heap_entry *top = &m->heap[0];
        struct thread_stream *s = &m->streams[top->stream];
        /* The top stream keeps the lead while its records come before the
         * best other stream's head (or that stream's start, if it has not
         * started): emit that run without heap work. */
        const struct heap_entry *rival = NULL;
        if (m->heap_n > 1) {
            rival = &m->heap[1];
            if (m->heap_n > 2 && stream_less(&m->heap[2], rival))
                rival = &m->heap[2];
        }
        uint64_t rt = rival ? rival->time : UINT64_MAX;
        if (m->bounded &&
            m->hi <= rt) { /* the range's end stops the run like a rival after every stream */
            rt = m->hi;
            rival = NULL;
        }
        int tie_wins =
            rival ? top->stream < rival->stream : !m->bounded; /* equal times: lower stream first */
        size_t pos = s->seg_pos, end = s->seg_n;
        /* the run: records before the rival (none and no range end: all),
         * as many as fit, since each record is at most one out */
        if (end - pos > max - n)
            end = pos + (max - n);
        uint64_t stop_time = 0;
        int stopped = 0;
        if (rival || m->bounded)
            end = time_run(&s->clock, pos, end, rt, tie_wins, &stop_time, &stopped);
        const struct pes_record *seg = s->seg;
        uint32_t thread = s->thread;
        if (keep_control) {
            memcpy(out + n, seg + pos, (end - pos) * sizeof *out);
            if (threads)
                for (size_t i = 0; i < end - pos; i++)
                    threads[n + i] = thread;
            n += end - pos;
        } else {
            for (size_t i = pos; i < end; i++) {
                if (seg[i].id >= PES_ID_CONTROL_FIRST)
                    continue;
                out[n] = seg[i];
                if (threads)
                    threads[n] = thread;
                n++;
            }
        }
        s->seg_pos = end;
        if (stopped && !s->skipping) {
            /* the run stopped inside the part at a record it timed: refill
             * has nothing to do, and that time is the stream's next key */
            top->time = stop_time;
            heap_sift_down_top(m);
            continue;
        }
        int rc = refill(m, s, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            heap_pop(m);
            continue;
        }
        top->time = time_at(&s->clock, s->seg_pos);
        heap_sift_down_top(m);
    }
    return (long)n;
}

size_t pes_merge_ended(const struct pes_merge *m, const uint32_t **threads)
{
    *threads = m->ended;
    return m->n_ended;
}

uint32_t pes_merge_thread_count(const struct pes_merge *m)
{
    return m->n_streams;
}

uint64_t pes_merge_memory(const struct pes_merge *m)
{
    return m->held;
}

void pes_merge_close(struct pes_merge *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n_streams; i++)
        fetch_drop(m, &m->streams[i]);
    for (uint32_t i = 0; m->dec && i < m->n_dec; i++) {
        pes_strand_destroy(m->dec[i].strand);
        if (m->dec[i].r)
            pes_trace_reader_close(m->dec[i].r);
    }
    free(m->dec);
    free(m->path);
    for (uint32_t i = 0; i < m->n_streams; i++) {
        free(m->streams[i].blk);
        free(m->streams[i].seg_buf);
    }
    free(m->streams);
    free(m->refs);
    free(m->heap);
    free(m->ended);
    free(m);
}
