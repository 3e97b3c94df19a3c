/*
 * reuse.c — reuse profiles (PPT-Multicore §2.4): the PRD of every stream
 * (private caches) and the CRD of every shared cache, fed by the accesses of
 * the streams placed on it, each with its per-site breakdown (profiles.h).
 *
 * With --jobs 2 the PRDs run on a second thread (prd_worker.h). With the
 * simulation on this thread too, the CRDs balance better on the worker;
 * without it, the worker is the slower side already (measured with
 * bench/replay_throughput.py).
 */
#include <stdlib.h>

#include "analysis.h"
#include "prd_worker.h"
#include "replay.h"

struct reuse {
    struct pes_profiles *prd;     /* one stream per recorded thread / mimicked core */
    struct pes_profiles *crd;     /* one stream per shared cache: its PRD is that cache's CRD */
    const uint32_t *stream_cache;
    uint32_t *cache;              /* [PES_BATCH] scratch: shared cache of each access */
    struct prd_worker worker;
    int on_worker;                /* PRDs (and crd_on_worker: CRDs) go to the worker */
    int crd_on_worker;
};

/* With --cores the recorded stream only feeds the summary. */
static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k) {
    return si->mimicked || !k->mimic;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k, struct pes_error *err) {
    struct reuse *r = calloc(1, sizeof *r);
    if (!r || !(r->cache = malloc(PES_BATCH * sizeof *r->cache))) {
        free(r);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    r->stream_cache = si->stream_cache;
    struct pes_profiles_options po = {.granule = si->line, .n_streams = si->n_streams, .per_site = 1};
    struct pes_profiles_options co = {.granule = si->line, .n_streams = si->n_caches, .per_site = 1};
    if (!(r->prd = pes_profiles_create(&po, err)) || !(r->crd = pes_profiles_create(&co, err))) goto fail;
    if (k->jobs >= 2) {
        r->crd_on_worker = k->simulate;
        if (prd_worker_start(&r->worker, r->prd, r->crd_on_worker ? r->crd : NULL, si->stream_cache) < 0) {
            pes_error_set(err, PES_ERR_NOMEM, 0, "cannot start the replay worker thread");
            goto fail;
        }
        r->on_worker = 1;
    }
    return r;
fail:
    pes_profiles_destroy(r->prd);
    pes_profiles_destroy(r->crd);
    free(r->cache);
    free(r);
    return NULL;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err) {
    struct reuse *r = self;
    if (b->n) {
        if (r->on_worker) prd_worker_push_batch(&r->worker, b->addr, b->size, b->stream, b->site, b->n);
        else if (pes_profiles_push_batch(r->prd, b->stream, b->addr, b->size, b->site, b->n, err) < 0) return -1;
        if (!r->crd_on_worker) {
            for (size_t i = 0; i < b->n; i++) r->cache[i] = r->stream_cache[b->stream[i]];
            if (pes_profiles_push_batch(r->crd, r->cache, b->addr, b->size, b->site, b->n, err) < 0) return -1;
        }
    }
    /* the PRD engines of ended streams go once their accesses are pushed */
    if (b->n_ended && r->on_worker) prd_worker_end_streams(&r->worker, b->ended, b->n_ended);
    for (size_t i = 0; !r->on_worker && i < b->n_ended; i++)
        if (pes_profiles_end_stream(r->prd, b->ended[i], err) < 0) return -1;
    return 0;
}

static int stop_worker(struct reuse *r, struct pes_error *err) {
    if (!r->on_worker) return 0;
    r->on_worker = 0;
    return prd_worker_finish(&r->worker, err);
}

static int finish(void *self, struct pes_error *err) {
    struct reuse *r = self;
    int rc = stop_worker(r, err);
    /* the histograms are the result; the engines can go */
    pes_profiles_finish(r->prd);
    pes_profiles_finish(r->crd);
    return rc;
}

static void publish(void *self, struct replay_result *res, struct replay_config *cfg) {
    (void)res;
    struct reuse *r = self;
    cfg->profiles = r->prd;
    cfg->crd = r->crd;
    r->prd = r->crd = NULL;
}

static void destroy(void *self) {
    struct reuse *r = self;
    struct pes_error ignored;
    stop_worker(r, &ignored);
    pes_profiles_destroy(r->prd);
    pes_profiles_destroy(r->crd);
    free(r->cache);
    free(r);
}

const struct pes_analysis pes_analysis_reuse = {
    .name = "reuse",
    .help = "PRD per stream and CRD per shared cache, with per-site means (PPT-Multicore)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
