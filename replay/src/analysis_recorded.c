/*
 * analysis_recorded.c — one pass over the recorded (merged) stream: totals,
 * operation counts (static BB op counts × executions, what PPT-Multicore took
 * from Byfl), PRD per recorded thread and CRD per shared cache, and, with
 * --simulate, the cache + MESI simulation with one core per thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* The PRDs run on a worker thread fed with batches of accesses (double
 * buffered), while the main thread merges the trace and computes the CRDs and
 * the simulation: the two halves of the work are about equal, and the
 * machine has at least two cores. */
enum { BATCH = 16384 };

struct prd_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct replay_access *buf[2];
    size_t n[2];
    int full[2];                       /* handed to the worker, not yet consumed */
    int stop;
    int cur;                           /* buffer the main thread fills */
    struct pes_profiles *prd;
    struct pes_error err;
    int failed;
};

static void *prd_worker_main(void *arg) {
    struct prd_worker *w = arg;
    for (int k = 0;; k ^= 1) {
        pthread_mutex_lock(&w->mu);
        while (!w->full[k] && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->full[k]) {             /* stopped and drained */
            pthread_mutex_unlock(&w->mu);
            break;
        }
        pthread_mutex_unlock(&w->mu);
        for (size_t i = 0; i < w->n[k] && !w->failed; i++) {
            const struct replay_access *a = &w->buf[k][i];
            if (pes_profiles_push(w->prd, a->thread, a->addr, a->size, a->site, NULL, NULL, &w->err) < 0)
                w->failed = 1;
        }
        pthread_mutex_lock(&w->mu);
        w->full[k] = 0;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

/* Hands the current buffer over and waits until the other one is free. */
static void prd_worker_flush(struct prd_worker *w) {
    int k = w->cur;
    pthread_mutex_lock(&w->mu);
    w->full[k] = 1;
    pthread_cond_broadcast(&w->cv);
    while (w->full[k ^ 1]) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    w->cur = k ^ 1;
    w->n[w->cur] = 0;
}

static int prd_worker_start(struct prd_worker *w, struct pes_profiles *prd) {
    memset(w, 0, sizeof *w);
    w->prd = prd;
    w->buf[0] = malloc(BATCH * sizeof *w->buf[0]);
    w->buf[1] = malloc(BATCH * sizeof *w->buf[1]);
    if (!w->buf[0] || !w->buf[1]) goto fail;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, prd_worker_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        goto fail;
    }
    return 0;
fail:
    free(w->buf[0]);
    free(w->buf[1]);
    w->buf[0] = w->buf[1] = NULL;
    return -1;
}

/* Drains the last batch, stops the worker; -1 if it failed (err filled). */
static int prd_worker_finish(struct prd_worker *w, struct pes_error *err) {
    if (!w->buf[0]) return 0;
    if (w->n[w->cur]) prd_worker_flush(w);
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->buf[0]);
    free(w->buf[1]);
    w->buf[0] = w->buf[1] = NULL;
    if (w->failed) *err = w->err;
    return w->failed ? -1 : 0;
}

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
    if (c->prd) {
        struct prd_worker *w = c->prd;
        w->buf[w->cur][w->n[w->cur]++] = *a;
        if (w->n[w->cur] == BATCH) prd_worker_flush(w);
    }
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

void replay_result_free(struct replay_result *res) {
    for (uint32_t i = 0; i < res->n_configs; i++) {
        pes_profiles_destroy(res->config[i].profiles);
        pes_profiles_destroy(res->config[i].crd);
        if (res->config[i].sim.sim) pes_sim_destroy(res->config[i].sim.sim);
    }
    res->n_configs = 0;
}

uint32_t replay_config_groups(const struct replay_config *c) {
    return c->crd ? pes_profiles_streams(c->crd) : pes_profiles_groups(c->profiles);
}

const struct pes_rd_hist *replay_config_crd(const struct replay_config *c, uint32_t group) {
    return c->crd ? pes_profiles_prd(c->crd, group) : pes_profiles_crd(c->profiles, group);
}

static int by_accesses_desc(const void *a, const void *b) {
    const struct replay_site_reuse *x = a, *y = b;
    if (x->accesses != y->accesses) return x->accesses < y->accesses ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

static int by_site(const void *a, const void *b) {
    const struct pes_site_reuse *x = a, *y = b;
    return x->site < y->site ? -1 : x->site > y->site;
}

struct replay_site_reuse *replay_config_site_reuse(const struct replay_config *c, size_t *n) {
    size_t np = 0, nc = 0;
    const struct pes_site_reuse *p = pes_profiles_sites(c->profiles, &np);
    const struct pes_site_reuse *q = c->crd ? pes_profiles_sites(c->crd, &nc) : NULL;
    struct replay_site_reuse *rows = calloc(np ? np : 1, sizeof *rows);
    struct pes_site_reuse *crd = nc ? malloc(nc * sizeof *crd) : NULL;
    *n = 0;
    if (!rows || (nc && !crd)) {
        free(rows);
        free(crd);
        return NULL;
    }
    if (nc) {   /* recorded threads: CRD rows live in the shared-cache profile set */
        memcpy(crd, q, nc * sizeof *crd);
        qsort(crd, nc, sizeof *crd, by_site);
    }
    for (size_t i = 0; i < np; i++) {
        const struct pes_site_reuse *r = &p[i];
        struct replay_site_reuse *o = &rows[i];
        o->site = r->site;
        o->accesses = r->accesses;
        o->prd_cold = r->prd_cold;
        o->prd_mean = r->accesses > r->prd_cold ? r->prd_sum / (double)(r->accesses - r->prd_cold) : 0.0;
        const struct pes_site_reuse *cr = r;
        if (nc) {
            struct pes_site_reuse key = {.site = r->site};
            cr = bsearch(&key, crd, nc, sizeof *crd, by_site);
        }
        if (cr) {
            uint64_t cold = nc ? cr->prd_cold : cr->crd_cold;
            double sum = nc ? cr->prd_sum : cr->crd_sum;
            o->crd_cold = cold;
            o->crd_mean = cr->accesses > cold ? sum / (double)(cr->accesses - cold) : 0.0;
        }
    }
    free(crd);
    qsort(rows, np, sizeof *rows, by_accesses_desc);
    *n = np;
    return rows;
}
