/* rt_events.c — per-thread event buffers of the sampled trace. Only the owner
 * thread appends (its slow path, or its SIGTRAP handler, which ignores traps
 * while the slow path runs), so appending needs no lock. The slow path hands a
 * buffer over once it is half full, which leaves the other half for traps
 * taken in uninstrumented code; a handler that finds the buffer full counts
 * the event as lost. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

int pes_rt_events_alloc(struct pes_rt_thread *t)
{
    for (int i = 0; i < PES_RT_NBUF; i++) {
        t->s.evs[i] = pes_rt_calloc_lines(PES_RT_EVCAP, sizeof(struct pes_event));
        if (!t->s.evs[i])
            return -1;
    }
    return 0;
}

void pes_rt_event_init(struct pes_event *e, uint8_t kind, const struct pes_rt_thread *t)
{
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->thread = t->index;
    e->other_thread = UINT32_MAX;
    e->site = UINT32_MAX;
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
        return;   /* no buffer switch: the process is ending */
    }
    pes_rt_writer_push(&b->item);
    t->s.ev_cur = (t->s.ev_cur + 1) % PES_RT_NBUF;
    if (pes_rt_writer_wait_free(&t->s.ev[t->s.ev_cur]) == PES_RT_WAIT_INTERRUPTED)
        __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);   /* the buffer may still be read */
    __atomic_store_n(&t->s.ev_n, 0, __ATOMIC_RELEASE);
}
