/*
 * analysis_recorded.c — one pass over the recorded (merged) stream: totals,
 * operation counts (static BB op counts × executions, what PPT-Multicore took
 * from Byfl), PRD per recorded thread and CRD per shared cache, and, with
 * --simulate, the cache + MESI simulation with one core per thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prd_worker.h"
#include "replay.h"

/* Accesses are gathered in batches: the engines then run tight loops with
 * prefetching (pes_profiles_push_batch, pes_sim_access_batch) instead of one
 * call chain per access. Every analysis still sees the accesses in order. */
enum { RECORDED_BATCH = 4096 };

struct recorded_ctx {
    struct replay_summary *sum;
    struct prd_worker *prd;            /* PRDs (and CRDs with --simulate) on a worker (--jobs 2) */
    struct pes_profiles *prd_inline;   /* PRDs on this thread (--jobs 1) */
    struct pes_profiles *crd;          /* one stream per shared cache, unless on the worker */
    const uint32_t *group;             /* thread -> shared cache */
    struct pes_sim *sim;
    uint32_t n_threads;
    uint8_t *seen;                     /* threads with at least one record */
    uint32_t *ended;                   /* threads ended since the last flush: their PRD
                                          engines go once their accesses are pushed */
    uint32_t n_ended;
    size_t n;                          /* accesses in the batch */
    uint64_t addr[RECORDED_BATCH];
    uint32_t size[RECORDED_BATCH], thread[RECORDED_BATCH], site[RECORDED_BATCH];
    uint32_t cache[RECORDED_BATCH];    /* shared cache of the thread */
    struct pes_sim_access sa[RECORDED_BATCH];
};

static void note_thread(struct recorded_ctx *c, uint32_t t) {
    if (t < c->n_threads && !c->seen[t]) {
        c->seen[t] = 1;
        c->sum->threads++;
    }
}

/* The threads ended since the last flush free their PRD engines. */
static int end_threads(struct recorded_ctx *c, struct pes_error *err) {
    uint32_t n = c->n_ended;
    c->n_ended = 0;
    if (n && c->prd) prd_worker_end_streams(c->prd, c->ended, n);
    for (uint32_t i = 0; c->prd_inline && i < n; i++)
        if (pes_profiles_end_stream(c->prd_inline, c->ended[i], err) < 0) return -1;
    return 0;
}

static int flush(struct recorded_ctx *c, struct pes_error *err) {
    size_t n = c->n;
    c->n = 0;
    if (n == 0) return end_threads(c, err);
    if (c->prd) prd_worker_push_batch(c->prd, c->addr, c->size, c->thread, c->site, n);
    if (c->prd_inline &&
        pes_profiles_push_batch(c->prd_inline, c->thread, c->addr, c->size, c->site, n, err) < 0)
        return -1;
    if (c->crd && pes_profiles_push_batch(c->crd, c->cache, c->addr, c->size, c->site, n, err) < 0)
        return -1;
    if (c->sim && pes_sim_access_batch(c->sim, c->sa, n, err) < 0) {
        err->offset = 0;
        return -1;
    }
    return end_threads(c, err);
}

static int on_thread_end(void *ctx, uint32_t thread, struct pes_error *err) {
    struct recorded_ctx *c = ctx;
    (void)err;
    if (thread < c->n_threads) c->ended[c->n_ended++] = thread;   /* each thread ends once */
    return 0;
}

static int on_access(void *ctx, const struct replay_access *a, struct pes_error *err) {
    struct recorded_ctx *c = ctx;
    struct replay_summary *s = c->sum;
    if (a->thread >= c->n_threads) {
        err->code = PES_ERR_FORMAT;
        snprintf(err->message, sizeof err->message,
                 "record of thread %u, but the trace announces only %u threads", a->thread, c->n_threads);
        return -1;
    }
    note_thread(c, a->thread);
    s->records++;
    s->accesses++;
    s->bytes += a->length;
    s->reads += a->reads;
    s->writes += a->writes;
    size_t i = c->n++;
    c->addr[i] = a->addr;
    c->size[i] = a->size;
    c->thread[i] = a->thread;
    c->site[i] = a->site;
    if (c->crd) c->cache[i] = c->group[a->thread];
    if (c->sim)
        c->sa[i] = (struct pes_sim_access){
            .addr = a->addr, .size = a->size, .core = a->thread, .thread = a->thread,
            .site = a->site, .is_read = a->reads, .is_write = a->writes,
        };
    return c->n == RECORDED_BATCH ? flush(c, err) : 0;
}

static void on_bb(void *ctx, uint32_t thread, const struct pes_bb *bb) {
    struct recorded_ctx *c = ctx;
    note_thread(c, thread);
    c->sum->records++;
    c->sum->bb_execs++;
    for (int k = 0; k < PES_OP_COUNT; k++) c->sum->ops[k] += bb->ops[k];
}

/* Thread t of n on `sockets` shared caches: contiguous blocks, like a compact
 * OpenMP placement (OMP_PLACES=cores, OMP_PROC_BIND=close). */
static uint32_t socket_of(uint32_t t, uint32_t n, uint32_t sockets) {
    return (uint32_t)((uint64_t)t * sockets / n);
}

int replay_analyze_recorded(struct replay_input *in, const struct replay_options *o,
                            struct replay_result *res, struct pes_error *err) {
    struct replay_summary *s = &res->summary;
    memset(s, 0, sizeof *s);
    s->text = replay_input_is_text(in);
    const struct pes_trace_info *info = replay_input_info(in);
    if (info) {
        s->kind = info->kind;
        s->command = info->command;
    }
    s->truncated = replay_input_truncation(in) != NULL;
    s->skipped_blocks = replay_input_skipped(in, NULL);

    uint32_t n = replay_input_threads(in);
    uint32_t sockets = o->sockets < n ? o->sockets : n;
    struct recorded_ctx *c = calloc(1, sizeof *c);   /* batch arrays: too big for the stack */
    if (!c) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return -1;
    }
    struct replay_config *cfg = NULL;
    c->sum = s;
    c->n_threads = n;
    struct prd_worker worker;
    int worker_started = 0;
    c->seen = calloc(n, 1);
    c->ended = calloc(n, sizeof *c->ended);
    uint32_t *group = calloc(n, sizeof *group);
    int rc = -1;
    if (!c->seen || !c->ended || !group) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    for (uint32_t t = 0; t < n; t++) group[t] = socket_of(t, n, sockets);

    if (o->n_cores == 0) {   /* recorded threads are the configuration */
        cfg = &res->config[res->n_configs++];
        memset(cfg, 0, sizeof *cfg);
        cfg->cores = n;
        struct pes_profiles_options po = {.granule = res->line, .n_streams = n, .per_site = 1};
        struct pes_profiles_options co = {.granule = res->line, .n_streams = sockets, .per_site = 1};
        cfg->profiles = pes_profiles_create(&po, err);
        if (!cfg->profiles || !(cfg->crd = c->crd = pes_profiles_create(&co, err))) goto out;
        c->group = group;
        if (o->jobs < 2) {
            c->prd_inline = cfg->profiles;
        } else if (prd_worker_start(&worker, cfg->profiles, o->simulate ? c->crd : NULL, group) < 0) {
            err->code = PES_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "cannot start the replay worker thread");
            goto out;
        } else {
            worker_started = 1;
            c->prd = &worker;
            /* With the simulation on this thread, the CRDs balance better on
             * the worker; without it, the worker is the slower side already. */
            if (o->simulate) c->crd = NULL;
        }
        if (o->simulate) {
            if (n > PES_SIM_MAX_CORES) {
                err->code = PES_ERR_ARG;
                snprintf(err->message, sizeof err->message,
                         "--simulate: the trace has %u threads; the simulator maps one core per thread "
                         "and supports at most %u", n, PES_SIM_MAX_CORES);
                goto out;
            }
            struct pes_sim_config sc = {
                .machine = &res->machine, .n_cores = n, .core_socket = group, .n_threads = n,
                .page_size = o->page_size,
            };
            cfg->sim.sim = c->sim = pes_sim_create(&sc, err);
            if (!c->sim) goto out;
            cfg->sim.n_threads = n;
        }
    }
    rc = replay_input_scan(in, on_access, on_bb, on_thread_end, c, err);
    if (rc == 0) rc = flush(c, err);
    s->clipped_ranges = replay_input_clipped(in, NULL, 0);
out:
    if (worker_started) {
        struct pes_error werr;
        if (prd_worker_finish(&worker, &werr) < 0 && rc == 0) {
            *err = werr;
            rc = -1;
        }
    }
    /* the histograms are the result; the engines can go before the mimicking */
    if (cfg && cfg->profiles) pes_profiles_finish(cfg->profiles);
    if (cfg && cfg->crd) pes_profiles_finish(cfg->crd);
    free(c->seen);
    free(c->ended);
    free(group);
    free(c);
    return rc;
}
