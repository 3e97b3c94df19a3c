/* rt_sample.c — the soft sampler. Instrumented code calls the slow path when
 * its cursor reaches the limit (rt_abi.h); the limit is lowered so that the
 * slow path runs at the latest on the access whose load or store countdown
 * expires. Each record counts at most once against each countdown, so letting
 * min(countdowns) - 1 records through inline can never skip the expiring one:
 * the sample is exactly that access, taken after it executed (as PEBS reports
 * it). The slow path classifies the records written inline since its last call
 * with the site table, which also gives exact per-thread load and store counts
 * (atomics, read by other threads for shared-cache time distances). */
#include <string.h>

#include "core/rt_adapt.h"
#include "core/core.h"

void pes_rt_sample_thread_init(struct pes_rt_thread *t)
{
    struct pes_rt_sampler *s = &t->s;
    uint64_t seed = pes_rt.cfg.seed ^ ((uint64_t)t->index * 0x9e3779b97f4a7c15ull);
    s->rng = pes_rt_splitmix(&seed) | 1; /* xorshift needs a non-zero state */
    /* --samples: the schedule's first level (rt_adapt.h), else the period */
    s->adapt_level = pes_rt.cfg.samples_target ? 0 : PES_RT_ADAPT_LEVELS;
    s->period_load = pes_rt_adapt_period(pes_rt.cfg.period_load, s->adapt_level);
    s->period_store = pes_rt_adapt_period(pes_rt.cfg.period_store, s->adapt_level);
    s->cd_load = s->period_load ? pes_rt_next_period(&s->rng, s->period_load) : UINT64_MAX;
    s->cd_store = s->period_store ? pes_rt_next_period(&s->rng, s->period_store) : UINT64_MAX;
    for (uint32_t i = 0; i < PES_RT_MAX_DEBUG_REGISTERS; i++)
        s->wp[i].fd = -1;
    s->wp_publisher = UINT32_MAX;
}

/* Loads and stores among records [from, to). */
static void classify(const struct pes_record *from, const struct pes_record *to, uint64_t *loads,
                     uint64_t *stores)
{
    uint64_t l = 0, st = 0;
    const uint32_t *w = __atomic_load_n(&pes_rt_site_weights, __ATOMIC_ACQUIRE);
    if (w) {
        /* each weight is 1 (reads) + 1 << 16 (writes): one sum gives both
         * counts (at most 65535 records per call); four sums keep loads in flight */
        uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const struct pes_record *r = from;
        while (r < to) {
            const struct pes_record *end = to - r > 65535 ? r + 65535 : to;
            for (; r + 4 <= end; r += 4) {
                a0 += w[pes_rt_weight_index(r[0].id)];
                a1 += w[pes_rt_weight_index(r[1].id)];
                a2 += w[pes_rt_weight_index(r[2].id)];
                a3 += w[pes_rt_weight_index(r[3].id)];
            }
            for (; r < end; r++)
                a0 += w[pes_rt_weight_index(r->id)];
            uint32_t sum = a0 + a1 + a2 + a3;
            l += sum & 0xffff;
            st += sum >> 16;
            a0 = a1 = a2 = a3 = 0;
        }
        *loads = l;
        *stores = st;
        return;
    }
    for (const struct pes_record *r = from; r < to; r++) {
        if (r->id >= PES_ID_CONTROL_FIRST)
            continue;
        struct pes_rt_site_info info = pes_rt_sites_get(r->id);
        l += pes_kind_reads(info.kind) != 0;
        st += pes_kind_writes(info.kind) != 0;
    }
    *loads = l;
    *stores = st;
}

void pes_rt_sample_scan(struct pes_rt_thread *t)
{
    struct pes_rt_sampler *s = &t->s;
    struct pes_record *cur = t->tls->cursor;
    if (!s->scan || cur < s->scan)
        return;
    if (pes_rt_hardware_samples()) {
        s->scan = cur; /* the PMU counts this thread's accesses */
        return;
    }
    uint64_t l, st;
    classify(s->scan, cur, &l, &st);
    /* never below 1: the slow path is entered at the latest on the expiring access */
    if (s->cd_load != UINT64_MAX)
        s->cd_load = l < s->cd_load ? s->cd_load - l : 1;
    if (s->cd_store != UINT64_MAX)
        s->cd_store = st < s->cd_store ? s->cd_store - st : 1;
    __atomic_store_n(&s->loads, s->loads + l, __ATOMIC_RELAXED);
    __atomic_store_n(&s->stores, s->stores + st, __ATOMIC_RELAXED);
    s->scan = cur;
}

uint64_t pes_rt_sample_count_self(const struct pes_rt_thread *t)
{
    if (pes_rt_hardware_samples())
        return pes_rt.backend->count(t); /* time distances in PMU-counted accesses */
    const struct pes_rt_sampler *s = &t->s;
    uint64_t l = 0, st = 0;
    struct pes_record *cur = t->tls->cursor;
    if (s->scan && cur >= s->scan)
        classify(s->scan, cur, &l, &st);
    struct pes_rt_drop d = pes_rt_check_pending(t);
    return s->loads + s->stores + l + st + d.loads + d.stores;
}

uint64_t pes_rt_sample_now(const struct pes_rt_thread *t, int *segment_end)
{
    struct pes_rt_drop d = pes_rt_check_pending(t);
    /* the check path counted its whole segment on entry; the recording path
     * writes the trapping access's record only after the access */
    *segment_end = d.loads + d.stores != 0;
    return pes_rt_sample_count_self(t) + (*segment_end ? 0 : 1);
}

static uint64_t remaining(uint64_t cd, uint64_t ahead)
{
    if (cd == UINT64_MAX)
        return UINT64_MAX;
    return ahead < cd ? cd - ahead : 1;
}

uint64_t pes_rt_sample_room_after(const struct pes_rt_thread *t, struct pes_rt_drop ahead)
{
    uint64_t l = remaining(t->s.cd_load, ahead.loads), st = remaining(t->s.cd_store, ahead.stores);
    uint64_t m = l < st ? l : st;
    return m ? m - 1 : 0;
}

void pes_rt_sample_wake(struct pes_rt_thread *t)
{
    __atomic_store_n(&t->s.wake, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* its next instrumented access (recording clone) or segment (check clone)
     * enters the runtime; see pes_rt_buffer_set_limit and pes_rt_check_arm */
    __atomic_store_n(&t->tls->limit, (struct pes_record *)NULL, __ATOMIC_RELAXED);
    pes_rt_check_kick(t);
}

static int expire(uint64_t *cd, uint64_t period, uint64_t *rng)
{
    if (*cd == UINT64_MAX)
        return 0;
    if (--*cd)
        return 0;
    *cd = pes_rt_next_period(rng, period);
    return 1;
}

int pes_rt_sample_count(struct pes_rt_thread *t, uint32_t id)
{
    struct pes_rt_sampler *s = &t->s;
    if (id >= PES_ID_CONTROL_FIRST)
        return 0;
    const uint32_t *w = __atomic_load_n(&pes_rt_site_weights, __ATOMIC_ACQUIRE);
    uint8_t b;
    if (w) {
        uint32_t v = w[pes_rt_weight_index(id)];
        b = (uint8_t)((v & 1) | (v >> 16) << 1);
    } else {
        struct pes_rt_site_info info = pes_rt_sites_get(id);
        b = (uint8_t)((pes_kind_reads(info.kind) ? 1 : 0) | (pes_kind_writes(info.kind) ? 2 : 0));
    }
    if (!b || pes_rt_hardware_samples())
        return 0;
    __atomic_store_n(&s->loads, s->loads + (b & 1u), __ATOMIC_RELAXED);
    __atomic_store_n(&s->stores, s->stores + (b >> 1), __ATOMIC_RELAXED);
    int hit = 0;
    if (b & 1)
        hit |= expire(&s->cd_load, s->period_load, &s->rng);
    if (b & 2)
        hit |= expire(&s->cd_store, s->period_store, &s->rng);
    return hit;
}

void pes_rt_sample_take(struct pes_rt_thread *t, uint64_t addr, uint32_t id, uint32_t extra,
                        uint64_t ip, int hit)
{
    struct pes_rt_sampler *s = &t->s;
    if (__atomic_exchange_n(&s->wake, 0, __ATOMIC_SEQ_CST) && pes_rt.mode->sync)
        pes_rt.mode->sync(t);
    if (!hit)
        return;
    struct pes_rt_site_info info = pes_rt_sites_get(id);
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_SAMPLE, t);
    ev.flags = pes_kind_writes(info.kind) ? PES_EVF_WRITE : 0;
    uint32_t size = info.size ? info.size : extra;
    ev.size = (uint16_t)(size > UINT16_MAX ? UINT16_MAX : size);
    ev.site = id;
    ev.addr = addr;
    ev.ip = ip;
    /* here, not in a handler: the slow path runs on the program's own stack,
     * whose frames above the runtime's are the access's callers */
    if (pes_rt.cfg.stacks && pes_rt_roi_open())
        ev.stack = pes_rt_stack_here(ip);
    ev.loads = s->loads;
    ev.stores = s->stores;
    /* where a check-clone trap will measure the reuse from (modes/reuse.c) */
    s->sample_phase = s->switched ? s->seg_end : ev.loads + ev.stores;
    pes_rt_sample_record(t, &ev);
    if (__atomic_load_n(&s->ev_n, __ATOMIC_RELAXED) >= PES_RT_EV_FLUSH)
        pes_rt_events_flush(t, 0);
}

/* A PERIOD event: the thread's periods from now on (docs/trace-format.md §4). */
static void period_event(struct pes_rt_thread *t, const struct pes_event *sample, uint64_t count)
{
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_PERIOD, t);
    ev.aux = t->s.period_load;
    ev.distance = t->s.period_store;
    ev.size = (uint16_t)t->s.adapt_level;
    ev.addr = count;
    ev.loads = sample->loads;
    ev.stores = sample->stores;
    pes_rt_events_add(t, &ev);
}

/* --samples (rt_adapt.h): after each sample, the thread moves up a level
 * once it has N more decided outcomes (reuse modes) or samples (the others)
 * than when it entered its level. Its armed watches end first (censored), so
 * that every outcome of a watch lies in the period epoch of its sample: the
 * PERIOD event's time, taken after them, separates the epochs for the
 * replay's weights (docs/accuracy.md, "Enough samples by design"). */
static void adapt(struct pes_rt_thread *t, const struct pes_event *sample)
{
    struct pes_rt_sampler *s = &t->s;
    uint64_t target = pes_rt.cfg.samples_target;
    if (!target)
        return;
    const struct pes_rt_mode *mode = pes_rt.mode;
    const struct pes_rt_backend *b = pes_rt.backend;
    uint64_t count =
        mode->counts_decided ? __atomic_load_n(&s->decided, __ATOMIC_ACQUIRE) : s->samples;
    if (!s->adapt_started) {
        s->adapt_started = 1;
        period_event(t, sample, 0); /* level 0, in effect since the thread started */
    }
    uint32_t next = pes_rt_adapt_next(s->adapt_level, s->adapt_mark, count, target);
    if (next == s->adapt_level)
        return;
    uint64_t old_load = s->period_load, old_store = s->period_store;
    s->period_load = pes_rt_adapt_period(pes_rt.cfg.period_load, next);
    s->period_store = pes_rt_adapt_period(pes_rt.cfg.period_store, next);
    if (b->set_period && b->set_period(t) < 0) {
        /* the kernel kept the old period: so do the thread and its trace,
         * and the thread stops adapting (no PERIOD event, no censoring) */
        s->period_load = old_load;
        s->period_store = old_store;
        b->set_period(t);
        s->adapt_level = PES_RT_ADAPT_LEVELS;
        return;
    }
    s->adapt_level = next;
    s->adapt_mark = count;
    if (mode->censor)
        mode->censor(t, sample->loads + sample->stores);
    if (b->program_counts) {
        /* the countdowns drawn at the old period start over at the new one */
        if (s->cd_load != UINT64_MAX)
            s->cd_load = pes_rt_next_period(&s->rng, s->period_load);
        if (s->cd_store != UINT64_MAX)
            s->cd_store = pes_rt_next_period(&s->rng, s->period_store);
    }
    period_event(t, sample, count);
}

void pes_rt_sample_record(struct pes_rt_thread *t, struct pes_event *ev)
{
    struct pes_rt_sampler *s = &t->s;
    if (!pes_rt_roi_open())
        return; /* outside the region of interest */
    s->samples++;
    s->prev_sample_ns = s->cur_sample_ns;
    s->cur_sample_ns = ev->time;
    pes_rt_alloc_announce(t, ev);
    pes_rt_events_add(t, ev);
    if (pes_rt.mode->sample)
        pes_rt.mode->sample(t, ev);
    adapt(t, ev);
}

void pes_rt_sample_finish(struct pes_rt_thread *t, int from_signal)
{
    struct pes_rt_sampler *s = &t->s;
    struct pes_rt_drop pending = {0, 0};
    if (!from_signal) {
        pes_rt_check_fold(t, 0);
        pes_rt_sample_scan(t);
    } else {
        pending = pes_rt_check_pending(t);
    }
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_TOTALS, t);
    ev.loads = s->loads + pending.loads;
    ev.stores = s->stores + pending.stores;
    ev.aux = s->samples;
    ev.distance = s->traps; /* TOTALS: watchpoint traps taken (ignored ones included) */
    if (__atomic_load_n(&s->ev_n, __ATOMIC_RELAXED) + PES_RT_MAX_DEBUG_REGISTERS + 2 >
            PES_RT_EVCAP &&
        !from_signal)
        pes_rt_events_flush(t, 0);
    /* its watches end here: censored observations (modes/reuse.c) */
    if (pes_rt.mode->thread_end)
        pes_rt.mode->thread_end(t, ev.loads + ev.stores);
    if (s->lost) {
        struct pes_event lost;
        pes_rt_event_init(&lost, PES_EV_LOST, t);
        lost.aux = s->lost;
        if (__atomic_load_n(&s->ev_n, __ATOMIC_RELAXED) + 2 > PES_RT_EVCAP && !from_signal)
            pes_rt_events_flush(t, 0);
        pes_rt_events_add(t, &lost);
    }
    if (__atomic_load_n(&s->ev_n, __ATOMIC_RELAXED) + 1 > PES_RT_EVCAP && !from_signal)
        pes_rt_events_flush(t, 0);
    pes_rt_events_add(t, &ev);
    pes_rt_events_flush(t, from_signal);
}

void pes_rt_sample_backend_stop(struct pes_rt_thread *t)
{
    const struct pes_rt_backend *b = __atomic_load_n(&pes_rt.backend, __ATOMIC_ACQUIRE);
    if (!b)
        return;
    if (b->drain)
        b->drain(t);
    if (b->close)
        b->close(t);
}
