/* rt_roi.c — what a full trace keeps: the region of interest (pes/roi.h
 * markers), --skip and --max-accesses. Records are written inline as usual;
 * the slow path passes the ones written since its last call through the gate
 * and compacts the buffer in place, so the instrumented fast path is the same
 * with or without a region, and records outside it never reach the writer.
 * Control records (allocations, region markers, lost counts, thread end) are
 * kept wherever they fall, except time marks outside the region. Sampled
 * traces: no sample is taken outside the region. */
#include <string.h>

#include "core/core.h"

/* Defined (weak) by pes/roi.h in programs compiled by pes-clang that include
 * it: the program has markers, so recording waits for the first begin. */
extern char __pes_roi_used __attribute__((weak));

static int roi_active; /* markers present and obeyed (set once at init) */
static int roi_depth;  /* atomic: begin/end nesting */
static int gating;     /* full trace: any of region, skip, max (set once at init) */

void pes_rt_roi_init(void)
{
    roi_active = &__pes_roi_used != NULL && pes_rt.cfg.roi;
    gating = roi_active || pes_rt.cfg.skip || pes_rt.cfg.max_accesses;
}

const char *pes_rt_roi_mode(void)
{
    if (&__pes_roi_used == NULL)
        return "none";
    return pes_rt.cfg.roi ? "markers" : "ignored";
}

int pes_rt_roi_open(void)
{
    return !roi_active || __atomic_load_n(&roi_depth, __ATOMIC_ACQUIRE) > 0;
}

void pes_rt_gate_thread_init(struct pes_rt_thread *t)
{
    t->gate.done = t->tls->cursor;
    t->gate.open = pes_rt_roi_open();
}

/* Passes [from, to) through the gate with the region `open` or not, writing
 * the kept records from `out` on (out <= from). Returns the new end. */
static struct pes_record *pass(struct pes_rt_gate *g, const struct pes_record *from,
                               const struct pes_record *to, struct pes_record *out, int open)
{
    uint64_t skip = pes_rt.cfg.skip;
    uint64_t max = pes_rt.cfg.max_accesses ? pes_rt.cfg.max_accesses : UINT64_MAX;
    if (open && g->accesses >= skip && max == UINT64_MAX) {
        /* everything is kept and nothing needs counting: no pass over the
         * records (a region without --max-accesses costs O(1) here) */
        size_t n = (size_t)(to - from);
        if (out != from)
            memmove(out, from, n * sizeof *out);
        return out + n;
    }
    for (const struct pes_record *r = from; r < to; r++) {
        uint32_t id = r->id;
        if (id >= PES_ID_CONTROL_FIRST) {
            if (open || id != PES_ID_TIME)
                *out++ = *r;
            continue;
        }
        if (!open)
            continue;
        if (pes_rt_site_weight(id)) { /* an access (every site kind reads or writes) */
            if (++g->accesses <= skip || g->kept >= max)
                continue;
            g->kept++;
            *out++ = *r;
        } else if (g->accesses >= skip && g->kept < max) {
            *out++ = *r; /* a basic block, while the next access would be kept */
        }
    }
    return out;
}

/* Under t->lock, by the owner or by a thread stopping it (which has pulled its
 * limit down: the owner writes nothing below the cursor read here). */
void pes_rt_gate_run(struct pes_rt_thread *t)
{
    if (!gating || !pes_rt.full)
        return;
    struct pes_rt_gate *g = &t->gate;
    struct pes_record *start = t->bufs[t->cur].recs;
    struct pes_record *cur = __atomic_load_n(&t->tls->cursor, __ATOMIC_ACQUIRE);
    if (g->done < start || g->done > cur)
        g->done = start; /* a buffer switch since the last pass */
    struct pes_record *out = g->done;
    if (g->toggle && g->toggle >= g->done && g->toggle <= cur) {
        out = pass(g, g->done, g->toggle, out, g->open);
        g->open = g->toggle_open;
        out = pass(g, g->toggle, cur, out, g->open);
    } else {
        if (g->toggle)
            g->open = g->toggle_open;
        out = pass(g, g->done, cur, out, g->open);
    }
    g->toggle = NULL;
    g->done = out;
    if (out != cur) {
        __atomic_store_n(&t->tls->cursor, out, __ATOMIC_RELEASE);
        if (pes_rt.sampling && t->s.scan > out)
            t->s.scan = out; /* the sampler classified them already */
    }
}

int pes_rt_gate_configured(void)
{
    return gating;
}

int pes_rt_gate_enabled(void)
{
    return gating && pes_rt.full && !pes_rt.sampling;
}

/* Full trace without sampling: nothing the thread does from now on would be
 * kept (the region is closed for it, or it reached --max-accesses), so it may
 * run its check clones. With sampling the check path's counts are needed. */
int pes_rt_gate_idle(const struct pes_rt_thread *t)
{
    if (!pes_rt_gate_enabled())
        return 0;
    const struct pes_rt_gate *g = &t->gate;
    if (pes_rt.cfg.max_accesses && g->kept >= pes_rt.cfg.max_accesses)
        return 1;
    return !(g->toggle ? g->toggle_open : g->open);
}

/* Owner, under its lock: idle threads run their check clones, whose countdown
 * brings them back every PES_RT_CD_WAKE_ROOM accesses to look again (a
 * wake-up kick from toggle_all can be lost to the owner's plain subtraction,
 * rt_check.c); the others record. */
void pes_rt_gate_settle(struct pes_rt_thread *t)
{
    if (!pes_rt_gate_enabled())
        return;
    if (pes_rt_gate_idle(t)) {
        __atomic_store_n(&t->tls->recording, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->tls->countdown, pes_rt_check_pack(PES_RT_CD_WAKE_ROOM),
                         __ATOMIC_RELAXED);
    } else {
        /* functions start recording; a running check clone enters the
         * runtime at its next segment (__pes_check_due) and switches */
        __atomic_store_n(&t->tls->recording, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->tls->countdown, 0, __ATOMIC_RELAXED);
    }
}

/* The calling thread is in the runtime, no lock held. Every thread's records
 * up to its cursor now belong to the old state: the caller's exactly, another
 * thread's up to where its cursor was when its lock was taken (exact for a
 * thread that is not running meanwhile, e.g. an idle OpenMP worker). */
static void toggle_all(int open)
{
    struct pes_rt_thread *self = pes_rt_thread_self();
    pthread_mutex_lock(&pes_rt.threads_lock);
    struct pes_rt_thread *list = pes_rt.threads;
    pthread_mutex_unlock(&pes_rt.threads_lock);
    for (struct pes_rt_thread *t = list; t; t = t->next) {
        pthread_mutex_lock(&t->lock);
        if (!t->stopped) {
            if (t == self) {
                pes_rt_gate_run(t);
                t->gate.open = open;
                pes_rt_buffer_set_limit(t);
                pes_rt_gate_settle(t);
            } else {
                if (!t->gate.toggle)
                    t->gate.toggle = __atomic_load_n(&t->tls->cursor, __ATOMIC_ACQUIRE);
                t->gate.toggle_open = open; /* the first switch point, the last state */
                /* an idle thread's next segment enters the runtime, which
                 * switches it to recording (its TLS lives: not stopped, and
                 * its exit stops it under the lock held here) */
                if (open && pes_rt_gate_enabled())
                    pes_rt_check_kick(t);
            }
        }
        pthread_mutex_unlock(&t->lock);
    }
}

static void roi_change(int delta)
{
    if (!roi_active || !pes_rt_active())
        return;
    if (pes_rt_enter())
        return; /* called from a signal handler inside the runtime: ignored */
    if (!pes_rt_thread_self())
        pes_rt_thread_setup();
    int before = __atomic_load_n(&roi_depth, __ATOMIC_ACQUIRE);
    int after = before + delta < 0 ? 0 : before + delta;
    __atomic_store_n(&roi_depth, after, __ATOMIC_RELEASE);
    if ((before > 0) != (after > 0) && pes_rt.full)
        toggle_all(after > 0);
    pes_rt_leave();
}

/* Serialised by the program (begin/end from several threads at once race on
 * the depth; the markers are meant for the main thread's phases). */
__attribute__((visibility("default"))) void __pes_roi_begin(void)
{
    roi_change(1);
}

__attribute__((visibility("default"))) void __pes_roi_end(void)
{
    roi_change(-1);
}
