/*
 * prd_worker.h — reuse profiles on a second thread (`--jobs 2`).
 *
 * The main thread decodes and merges the trace and computes the CRDs; the
 * PRDs run on a worker. With --simulate the main thread runs the simulation
 * instead and the worker takes the CRDs too (measured: better balanced).
 * The worker is fed with batches of accesses through two buffers: the main
 * thread fills one while the worker drains the other. Results are identical
 * to pushing on one thread.
 */
#ifndef PES_REPLAY_PRD_WORKER_H
#define PES_REPLAY_PRD_WORKER_H

#include <pthread.h>

#include "profiles.h"
#include "replay.h"

enum { PRD_WORKER_BATCH = 16384 };

struct prd_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct prd_batch {
        uint64_t *addr;
        uint32_t *size, *thread, *site;
        uint32_t *ended;               /* threads ended after these accesses */
        size_t n_ended, cap_ended;
    } buf[2];
    size_t n[2];
    int full[2];                       /* handed to the worker, not yet consumed */
    int stop;
    int cur;                           /* buffer the main thread fills */
    struct pes_profiles *prd;
    struct pes_profiles *crd;          /* NULL, or one stream per shared cache */
    const uint32_t *group;             /* thread -> shared cache (with crd) */
    uint32_t *cache;                   /* [PRD_WORKER_BATCH] scratch: shared cache per access */
    struct pes_error err;
    int failed;
};

/* 0, or -1 (no memory / no thread). With crd (may be NULL) the worker also
 * feeds each access to stream group[thread] of crd. */
int prd_worker_start(struct prd_worker *w, struct pes_profiles *prd, struct pes_profiles *crd,
                     const uint32_t *group);
/* Hands the current buffer over and waits until the other one is free. */
void prd_worker_flush(struct prd_worker *w);
/* Queues n accesses (blocks only while both buffers are full). */
void prd_worker_push_batch(struct prd_worker *w, const uint64_t *addr, const uint32_t *size,
                           const uint32_t *thread, const uint32_t *site, size_t n);
/* The threads' PRD streams end after the accesses queued so far
 * (pes_profiles_end_stream on the worker). */
void prd_worker_end_streams(struct prd_worker *w, const uint32_t *threads, size_t n);
/* Drains the last batch and stops the worker; -1 if a push failed (err filled). */
int prd_worker_finish(struct prd_worker *w, struct pes_error *err);

#endif
