/*
 * scheduler.h — the replay's workers (--jobs N): one pool of threads that the
 * parallel stages submit their tasks to, so that N bounds the threads that
 * compute whatever the stages are (simulation partitions, configurations).
 *
 * Tasks belong to strands: the tasks of one strand run one at a time, in
 * the order they were submitted (one address partition's batches, one
 * configuration's stream), on any worker; tasks of different strands run at
 * the same time. A thread that waits for tasks (pes_sched_wait) runs ready
 * ones meanwhile, so a pool of 0 workers runs everything on the waiting
 * thread, in submission order per strand: --jobs 1 needs no thread.
 *
 * Results never depend on which thread ran a task: a strand's tasks see
 * each other's effects in order, and everything a task reads was written
 * before it was submitted.
 */
#ifndef PES_REPLAY_SCHEDULER_H
#define PES_REPLAY_SCHEDULER_H

#include <stdint.h>

#include "pes/trace.h"

struct pes_sched;
struct pes_strand;

/* A pool of `workers` threads (0: tasks run on the threads that wait),
 * started with the first task. NULL with err filled (no memory). A worker
 * that cannot start leaves its tasks to the others and to the waiters. */
struct pes_sched *pes_sched_create(uint32_t workers, struct pes_error *err);
/* Runs what is still queued, stops the workers and frees the pool (its
 * strands first, pes_strand_destroy). NULL: nothing. */
void pes_sched_destroy(struct pes_sched *s);
/* The workers asked for (stages size their work by it; 0 for NULL). */
uint32_t pes_sched_workers(const struct pes_sched *s);

/* A strand whose tasks are charged to the CPU stage `stage` (cpu_account.h;
 * -1: the running thread's). NULL without memory. */
struct pes_strand *pes_strand_create(struct pes_sched *s, int stage);
/* Waits for its tasks, then frees it. NULL: nothing. */
void pes_strand_destroy(struct pes_strand *st);
/* The strand's tasks go before the others (they feed a serial stage, e.g.
 * blocks decoded ahead of the merge). Before its first task. */
void pes_strand_set_urgent(struct pes_strand *st);

/* Queues fn(arg) on the strand; returns at once. 0, or -1 without memory. */
int pes_sched_submit(struct pes_strand *st, void (*fn)(void *arg), void *arg,
                     struct pes_error *err);
/* fn(args[i]) on st[i] for i < n, queued at once (one wake-up of the
 * workers for all): 0, or -1 without memory (then none is queued). */
int pes_sched_submit_many(struct pes_strand *const *st, void (*fn)(void *arg), void *const *args,
                          uint32_t n, struct pes_error *err);

/* Runs ready tasks on the calling thread until done(ctx) is nonzero
 * (checked before each task and after every task ends, anywhere), sleeping
 * only while none is ready. done may read what finished tasks wrote. */
void pes_sched_wait(struct pes_sched *s, int (*done)(void *ctx), void *ctx);
/* Waits until every task submitted to the strand so far has run. */
void pes_strand_wait(struct pes_strand *st);
/* Like pes_sched_wait, but runs only urgent tasks meanwhile: for a serial
 * stage that waits for its own urgent work and must not be kept from its
 * next step by a long task of another stage. */
void pes_sched_wait_urgent(struct pes_sched *s, int (*done)(void *ctx), void *ctx);

#endif
