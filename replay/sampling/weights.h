/*
 * weights.h — the period weights of a sampled trace's events: what an
 * observation stands for (docs/accuracy.md, "Enough samples by design").
 *
 * A sample taken at period p stands for p accesses of its type (loads or
 * stores; Horvitz–Thompson). At a fixed period (the header's period_load /
 * period_store) every sample stands for as many. pes-collect --samples N
 * (header samples_target) adapts each thread's period and records every
 * change as a PERIOD event (the thread's periods from the event's time on:
 * aux the load period, distance the store period); the header's periods
 * are then the caps. The collector ends a thread's watches before it
 * changes the period, so an outcome of thread T at time t belongs to T's
 * last PERIOD event at or before t (the first one before any); a thread
 * without PERIOD events (lost with a full buffer) ran at the schedule's
 * first level, cap >> period_levels.
 *
 * The weights are a property of the stream: the events source builds them
 * (pes_weights_build, from every PERIOD event of the trace, before the
 * first batch) and hangs them on the stream description (si->weights), so
 * any analysis weighs the events as they come: pes_weight_of, pes_period_of.
 */
#ifndef PES_REPLAY_WEIGHTS_H
#define PES_REPLAY_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "pes/trace.h"
#include "stream.h"

struct pes_weights;

/* What the periods of one thread were over the run (--samples: its PERIOD
 * events; else the header's periods, 0 changes). */
struct pes_period_schedule {
    uint64_t first_load, first_store, last_load, last_store;
    uint32_t changes;
};

/* The weights of the trace at path (for messages; read only with --samples)
 * whose settings (si->settings) and thread count are given: with samples_target, every
 * PERIOD event of its EVENTS blocks. NULL with err filled (out of memory, a
 * PERIOD event of a thread the trace does not announce, a damaged block). */
struct pes_weights *pes_weights_build(const char *path, const struct pes_collect_settings *settings,
                                      uint32_t n_threads, struct pes_error *err);
/* The same in steps, for events held in memory: create, add every block's
 * events (PERIOD events are kept, the others ignored; offset: the block's,
 * for messages), then seal before the first lookup. */
struct pes_weights *pes_weights_create(const char *path,
                                       const struct pes_collect_settings *settings,
                                       uint32_t n_threads, struct pes_error *err);
int pes_weights_add(struct pes_weights *w, const struct pes_event *e, size_t n, uint64_t offset,
                    struct pes_error *err);
void pes_weights_seal(struct pes_weights *w);
void pes_weights_free(struct pes_weights *w);

/* The trace adapts its periods (--samples): weights other than 1. */
int pes_weights_adaptive(const struct pes_weights *w);
/* The period thread was sampled at, at time, for the access type (write:
 * the store period). */
double pes_weights_period_at(const struct pes_weights *w, uint32_t thread, uint64_t time,
                             int write);
/* That period over the header's of the same type: an observation's weight
 * relative to a fixed-period trace's (1 without --samples). */
double pes_weights_factor_at(const struct pes_weights *w, uint32_t thread, uint64_t time,
                             int write);
void pes_weights_schedule(const struct pes_weights *w, uint32_t thread,
                          struct pes_period_schedule *out);

/* The event's sample's relative weight (pes_weights_factor_at of its
 * thread, time and access type): the factor a histogram or a mean weighs
 * the observation by. 1 without --samples or without weights. */
double pes_weight_of(const struct pes_stream_info *si, const struct pes_event *e);
/* The period the event's sample was taken at (pes_weights_period_at): the
 * accesses it stands for, what an estimated total adds up. 1 without
 * weights. */
double pes_period_of(const struct pes_stream_info *si, const struct pes_event *e);

#endif
