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

struct recorded_ctx {
    struct replay_summary *sum;
    struct prd_worker *prd;            /* PRDs on a worker thread (--jobs 2) */
    struct pes_profiles *prd_inline;   /* PRDs on this thread (--jobs 1) */
    struct pes_profiles *crd;          /* one stream per shared cache */
    const uint32_t *group;             /* thread -> shared cache */
    struct pes_sim *sim;
    uint32_t n_threads;
    uint8_t *seen;                     /* threads with at least one record */
};

static void note_thread(struct recorded_ctx *c, uint32_t t) {
    if (t < c->n_threads && !c->seen[t]) {
        c->seen[t] = 1;
        c->sum->threads++;
    }
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
    s->bytes += a->size;
    s->reads += a->reads;
    s->writes += a->writes;
    if (c->prd_inline &&
        pes_profiles_push(c->prd_inline, a->thread, a->addr, a->size, a->site, NULL, NULL, err) < 0)
        return -1;
    if (c->prd) prd_worker_push(c->prd, a);
    if (c->crd) {
        if (pes_profiles_push(c->crd, c->group[a->thread], a->addr, a->size, a->site, NULL, NULL, err) < 0)
            return -1;
    }
    if (c->sim) {
        struct pes_sim_access sa = {
            .addr = a->addr, .size = a->size, .core = a->thread, .thread = a->thread,
            .site = a->site, .is_read = a->reads, .is_write = a->writes,
        };
        if (pes_sim_access(c->sim, &sa, err) < 0) return -1;
    }
    return 0;
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

    uint32_t n = replay_input_threads(in);
    uint32_t sockets = o->sockets < n ? o->sockets : n;
    struct recorded_ctx c = {.sum = s, .n_threads = n};
    struct prd_worker worker;
    int worker_started = 0;
    c.seen = calloc(n, 1);
    uint32_t *group = calloc(n, sizeof *group);
    int rc = -1;
    if (!c.seen || !group) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    for (uint32_t t = 0; t < n; t++) group[t] = socket_of(t, n, sockets);

    struct replay_config *cfg = NULL;
    if (o->n_cores == 0) {   /* recorded threads are the configuration */
        cfg = &res->config[res->n_configs++];
        memset(cfg, 0, sizeof *cfg);
        cfg->cores = n;
        struct pes_profiles_options po = {.granule = res->line, .n_streams = n, .per_site = 1};
        struct pes_profiles_options co = {.granule = res->line, .n_streams = sockets, .per_site = 1};
        cfg->profiles = pes_profiles_create(&po, err);
        if (!cfg->profiles || !(cfg->crd = c.crd = pes_profiles_create(&co, err))) goto out;
        c.group = group;
        if (o->jobs < 2) {
            c.prd_inline = cfg->profiles;
        } else if (prd_worker_start(&worker, cfg->profiles) < 0) {
            err->code = PES_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "cannot start the replay worker thread");
            goto out;
        } else {
            worker_started = 1;
            c.prd = &worker;
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
            cfg->sim.sim = c.sim = pes_sim_create(&sc, err);
            if (!c.sim) goto out;
            cfg->sim.n_threads = n;
        }
    }
    rc = replay_input_scan(in, on_access, on_bb, &c, err);
out:
    if (worker_started) {
        struct pes_error werr;
        if (prd_worker_finish(&worker, &werr) < 0 && rc == 0) {
            *err = werr;
            rc = -1;
        }
    }
    free(c.seen);
    free(group);
    return rc;
}
