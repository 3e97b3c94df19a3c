/* rt_loop.c — loop descriptor chunks (pes/rt_abi.h, __pes_loop_flush): the
 * recording clone of a descriptor loop hands over a chunk of iterations at a
 * time instead of a record per access, and the chunk's records go into the
 * thread's buffer as descriptor groups (pes/trace.h, "Loop descriptors").
 *
 * The trace holds what the per-access path would have written, counted the
 * same way: a group stands for R records, the thread's record count (time
 * marks, `flushed`, the footer) grows by R, and a group is cut where the
 * per-access path would have put a time mark, where its buffer would have
 * been full, and at the writer's block size, so every mark, buffer and block
 * holds the same records as with --no-descriptors. */
#include "core/core.h"

/* A chunk as the runtime reads it: steps and, for a mixed body, the
 * irregular positions' rank among them and their addresses. */
struct chunk {
    const struct pes_rt_loop *d;
    const int64_t *step;
    const uint64_t *addr; /* iteration-major, k per iteration */
    uint32_t k;           /* irregular positions per iteration */
    uint8_t rank[PES_RT_LOOP_MAX];
};

/* Record q (0 .. iterations*m - 1) of the chunk. */
static struct pes_record chunk_record(const struct chunk *c, uint64_t q)
{
    const struct pes_rt_loop *d = c->d;
    uint32_t j = (uint32_t)(q % d->m);
    struct pes_record r = d->tmpl[j];
    if (d->irregular >> j & 1)
        r.addr = c->addr[q / d->m * c->k + c->rank[j]];
    else
        r.addr += q / d->m * (uint64_t)c->step[j]; /* modulo 2^64, as readers expand it */
    return r;
}

/* Records q .. q+n-1 of the chunk, in order, into out; with `only_irregular`
 * those on irregular positions only. Returns the end of what it wrote. One
 * division per run, not two per record as chunk_record (m is not a constant:
 * a row of cg spent most of its copy dividing). */
static struct pes_record *chunk_records(const struct chunk *c, uint64_t q, uint64_t n,
                                        int only_irregular, struct pes_record *out)
{
    const struct pes_rt_loop *d = c->d;
    uint32_t m = d->m, j = (uint32_t)(q % m);
    uint64_t i = q / m;
    for (uint64_t e = 0; e < n; e++) {
        if (d->irregular >> j & 1) {
            *out = d->tmpl[j];
            out++->addr = c->addr[i * c->k + c->rank[j]];
        } else if (!only_irregular) {
            *out = d->tmpl[j];
            out++->addr += i * (uint64_t)c->step[j]; /* modulo 2^64, as readers expand it */
        }
        if (++j == m) {
            j = 0;
            i++;
        }
    }
    return out;
}

/* Stores the chunk's records q .. q+n-1 at the cursor: a descriptor group
 * where it is shorter than the records themselves. The buffer has room for
 * n records as readers count them, and so for the group's 2m + 1 + K slots
 * (K of its records on irregular positions). */
static void put_run(struct pes_rt_thread *t, const struct chunk *ch, uint64_t q, uint64_t n)
{
    const struct pes_rt_loop *d = ch->d;
    uint32_t m = d->m, phase = (uint32_t)(q % m);
    struct pes_record *c = t->tls->cursor;
    uint64_t k = 0;
    for (uint32_t j = 0; j < m && d->irregular; j++)
        if (d->irregular >> j & 1)
            k += pes_trace_loop_times(n, m, phase, j);
    uint64_t size = 2 * (uint64_t)m + 1 + k;
    if (n <= size) {
        chunk_records(ch, q, n, 0, c);
        __atomic_store_n(&t->tls->cursor, c + n, __ATOMIC_RELEASE);
        return;
    }
    /* the templates advanced to the run's first iteration */
    uint64_t first = q - phase;
    c[0] = (struct pes_record){.addr = n, .id = PES_ID_LOOP, .extra = m | phase << 16};
    for (uint32_t j = 0; j < m; j++) {
        if (d->irregular >> j & 1) { /* the address of its first record in the run, or 0 */
            uint64_t at = q + (j + m - phase) % m;
            c[1 + j] = (struct pes_record){.addr = at < q + n ? chunk_record(ch, at).addr : 0,
                                           .id = d->tmpl[j].id,
                                           .extra = d->tmpl[j].extra};
            c[1 + m + j] =
                (struct pes_record){.id = PES_ID_LOOP_STEP, .extra = PES_LOOP_STEP_IRREGULAR};
        } else {
            c[1 + j] = chunk_record(ch, first + j);
            c[1 + m + j] =
                (struct pes_record){.addr = (uint64_t)ch->step[j], .id = PES_ID_LOOP_STEP};
        }
    }
    if (k) /* then the irregular records as they are */
        chunk_records(ch, q, n, 1, c + 1 + 2 * m);
    t->loop_extra += n - size;
    __atomic_store_n(&t->tls->cursor, c + size, __ATOMIC_RELEASE); /* a whole group below it */
}

/* The chunk's `total` records as descriptor groups, under the entry guard.
 * Like the slow path: the limit is NULL meanwhile (a handler's records go to
 * the reserve), and a thread stopped (process exit) drops the chunk as it
 * drops a late inline record. */
static void flush(struct pes_rt_thread *t, const struct chunk *ch, uint64_t total)
{
    __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    t->s.in_runtime = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&t->lock);
    if (t->stopped || pes_rt_buffer_drain(t))
        goto stopped;
    for (uint64_t q = 0; q < total;) {
        /* the per-access path's mark before record q, then the records up to
         * the next mark, the buffer's end or the writer's block end */
        uint64_t room;
        if (pes_rt_buffer_mark_due(t, 0) || pes_rt_buffer_room(t, &room))
            goto stopped;
        uint64_t n = total - q;
        uint64_t to_mark = t->next_mark - pes_rt_buffer_count(t); /* >= 1 */
        uint64_t in_buffer = pes_rt.cfg.buffer_records - room;
        uint64_t to_block = PES_RT_BLOCK_RECORDS - in_buffer % PES_RT_BLOCK_RECORDS;
        if (n > to_mark)
            n = to_mark;
        if (n > room)
            n = room;
        if (n > to_block)
            n = to_block;
        put_run(t, ch, q, n);
        q += n;
    }
    /* handlers that ran meanwhile: after the chunk, before the limit opens */
    if (pes_rt_buffer_drain(t))
        goto stopped;
    pes_rt_buffer_unlock(t, 0);
    return;
stopped:
    pes_rt_buffer_unlock(t, 1);
}

__attribute__((visibility("default"))) PES_RT_SLOW_CC void __pes_loop_flush(struct pes_rt_loop *d)
{
    static const int64_t no_steps[PES_RT_LOOP_MAX]; /* one iteration: steps unset */
    if (!d || d->m < 1 || d->m > PES_RT_LOOP_MAX || d->iterations < 1 ||
        d->iterations > UINT64_MAX / d->m || (d->m < 64 && d->irregular >> d->m))
        return; /* not a chunk the pass makes */
    struct chunk ch = {.d = d, .step = d->iterations > 1 ? pes_rt_loop_steps(d) : no_steps};
    for (uint32_t j = 0; j < d->m; j++)
        if (d->irregular >> j & 1)
            ch.rank[j] = (uint8_t)ch.k++;
    if (ch.k && d->iterations > PES_RT_LOOP_ADDRS / ch.k)
        return; /* more addresses than the chunk holds */
    ch.addr = pes_rt_loop_addrs(d);
    uint64_t total = d->iterations * d->m;
    /* A chunk too short for a group (a loop of a few iterations: cg's rows)
     * with room below the limit goes in as the inline path writes records:
     * no lock, no runtime entry. The limit already stops before the next time
     * mark, the buffer's end, a pending stack record and a due sample. */
    struct pes_record *cur = __pes_tls.cursor;
    struct pes_record *lim = __atomic_load_n(&__pes_tls.limit, __ATOMIC_RELAXED);
    if (total <= 2 * (uint64_t)d->m + 1 + d->iterations * ch.k && lim && cur < lim &&
        (uint64_t)(lim - cur) >= total) {
        chunk_records(&ch, 0, total, 0, cur);
        __atomic_store_n(&__pes_tls.cursor, cur + total, __ATOMIC_RELEASE);
        return;
    }
    struct pes_rt_thread *t = pes_rt_thread_self();
    if (pes_rt_in_app_handler() || pes_rt_enter()) {
        /* a signal handler's chunk: its records wait like its other records */
        for (uint64_t q = 0; q < total && t && !__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE);
             q++) {
            struct pes_record r = chunk_record(&ch, q);
            pes_rt_buffer_nested(t, r.addr, r.id, r.extra);
        }
        return;
    }
    if (!t)
        t = pes_rt_thread_setup();
    if (!t || __atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
        pes_rt_thread_use_scratch();
    } else {
        pes_rt_alloc_stack_due(t); /* the stack comes before the accesses */
        if (pes_rt.descriptors) {
            flush(t, &ch, total);
        } else {
            /* a run whose loops record per access (sampling, a region, --skip,
             * --max-accesses, --no-descriptors): the slow path of each record */
            uint64_t ip = (uint64_t)__builtin_return_address(0);
            for (uint64_t q = 0; q < total; q++) {
                struct pes_record r = chunk_record(&ch, q);
                pes_rt_buffer_record(t, r.addr, r.id, r.extra, ip);
            }
        }
    }
    pes_rt_leave();
}
