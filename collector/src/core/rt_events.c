/* rt_events.c — per-thread event buffers of the sampled trace. Only the owner
 * thread appends (its slow path, or its SIGTRAP handler, which ignores traps
 * while the slow path runs), so appending needs no lock. The slow path hands a
 * buffer over once it is half full, which leaves the other half for traps
 * taken in uninstrumented code; a handler that finds the buffer full counts
 * the event as lost. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* Ended threads whose buffers wait for the next thread (newest first). A
 * thread's set-up used to allocate and zero 72 KiB of events here, most of
 * its cost (issue 29); a program that starts many short threads now reuses
 * the buffers of those that ended, whose pages are already there. */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pes_rt_thread *retired;

/* The buffers of an ended thread whose events the writer has given back, or
 * NULL. The few that the writer still holds stay for a later set-up. */
static struct pes_rt_thread *take_retired(void)
{
    pthread_mutex_lock(&retired_lock);
    struct pes_rt_thread **p = &retired, *o = NULL;
    for (int tries = 0; *p && tries < 4; tries++, p = &(*p)->retired_next) {
        if (pes_rt_writer_is_free(&(*p)->s.ev[0]) && pes_rt_writer_is_free(&(*p)->s.ev[1])) {
            o = *p;
            *p = o->retired_next;
            break;
        }
    }
    pthread_mutex_unlock(&retired_lock);
    return o;
}

int pes_rt_events_alloc(struct pes_rt_thread *t)
{
    struct pes_rt_thread *o = take_retired();
    if (o) {
        for (int i = 0; i < PES_RT_NBUF; i++) {
            t->s.evs[i] = o->s.evs[i];
            o->s.evs[i] = NULL;
        }
        t->s.scratch = o->s.scratch;
        o->s.scratch = NULL;
        return 0;
    }
    /* lines of their own: a spatial watch on a line shared with program data
     * would trap inside the runtime (core.h, pes_rt_calloc_lines) */
    size_t bytes = ((size_t)PES_RT_EVCAP * sizeof(struct pes_event) + 63) & ~(size_t)63;
    for (int i = 0; i < PES_RT_NBUF; i++) {
        t->s.evs[i] = aligned_alloc(64, bytes);
        if (!t->s.evs[i])
            return -1;
    }
    if (!pes_rt.full) {
        t->s.scratch = aligned_alloc(64, PES_RT_SAMPLE_SCRATCH * sizeof(struct pes_record));
        if (!t->s.scratch)
            return -1;
    }
    return 0;
}

void pes_rt_events_retire(struct pes_rt_thread *t)
{
    if (!t->s.evs[0] || !t->s.evs[1] || (!pes_rt.full && !t->s.scratch))
        return;
    pthread_mutex_lock(&retired_lock);
    t->retired_next = retired;
    retired = t;
    pthread_mutex_unlock(&retired_lock);
}

void pes_rt_event_init(struct pes_event *e, uint8_t kind, const struct pes_rt_thread *t)
{
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->thread = t->index;
    e->other_thread = UINT32_MAX;
    e->site = UINT32_MAX;
    e->stack = PES_STACK_NONE;
    e->time = pes_rt_now();
}

int pes_rt_events_add(struct pes_rt_thread *t, const struct pes_event *e)
{
    size_t n = __atomic_load_n(&t->s.ev_n, __ATOMIC_RELAXED);
    if (n >= PES_RT_EVCAP || !t->s.evs[t->s.ev_cur]) {
        t->s.lost++;
        return -1;
    }
    t->s.evs[t->s.ev_cur][n] = *e;
    /* release: a thread stopping this one reads ev_n, then the events below it */
    __atomic_store_n(&t->s.ev_n, n + 1, __ATOMIC_RELEASE);
    return 0;
}

void pes_rt_events_flush(struct pes_rt_thread *t, int from_signal)
{
    size_t n = __atomic_load_n(&t->s.ev_n, __ATOMIC_ACQUIRE);
    if (n == 0 || !t->s.evs[t->s.ev_cur])
        return;
    struct pes_rt_buf *b = &t->s.ev[t->s.ev_cur];
    b->item.type = PES_RT_ITEM_EVENTS;
    b->item.heap = 0;
    b->item.thread = t->index;
    b->item.events = t->s.evs[t->s.ev_cur];
    b->item.n = n;
    b->item.buf = b;
    if (from_signal) {
        if (pes_rt_writer_try_push(&b->item))
            return;
        __atomic_store_n(&t->s.ev_n, 0, __ATOMIC_RELEASE);
        return; /* no buffer switch: the process is ending */
    }
    pes_rt_writer_push(&b->item);
    t->s.ev_cur = (t->s.ev_cur + 1) % PES_RT_NBUF;
    if (pes_rt_writer_wait_free(&t->s.ev[t->s.ev_cur]) == PES_RT_WAIT_INTERRUPTED)
        __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE); /* the buffer may still be read */
    __atomic_store_n(&t->s.ev_n, 0, __ATOMIC_RELEASE);
}
