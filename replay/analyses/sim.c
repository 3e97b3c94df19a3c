/*
 * sim.c — `--simulate`: set-associative LRU caches with MESI coherence, one
 * core per stream (recorded thread or mimicked core), placed on the shared
 * caches as the stream description says (sim/mesi.h): hit rates per level,
 * miss classes, true/false sharing per site, communication matrices.
 */
#include <stdlib.h>

#include "analysis.h"
#include "replay.h"

struct sim {
    struct pes_sim *sim;
    uint32_t n_threads;
    struct pes_sim_access *acc;   /* [PES_BATCH] */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k) {
    return k->simulate && (si->mimicked || !k->mimic);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k, struct pes_error *err) {
    (void)k;
    if (si->n_streams > PES_SIM_MAX_CORES) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "--simulate: the trace has %u threads; the simulator maps one core per thread "
                      "and supports at most %u", si->n_streams, PES_SIM_MAX_CORES);
        return NULL;
    }
    struct sim *s = calloc(1, sizeof *s);
    if (!s || !(s->acc = malloc(PES_BATCH * sizeof *s->acc))) {
        free(s);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    struct pes_sim_config sc = {
        .machine = si->machine, .n_cores = si->n_streams, .core_socket = si->stream_cache,
        .n_threads = si->n_streams, .page_size = si->page_size,
    };
    if (!(s->sim = pes_sim_create(&sc, err))) {
        free(s->acc);
        free(s);
        return NULL;
    }
    s->n_threads = si->n_streams;
    return s;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err) {
    struct sim *s = self;
    for (size_t i = 0; i < b->n; i++)
        s->acc[i] = (struct pes_sim_access){
            .addr = b->addr[i], .size = b->size[i], .core = b->stream[i], .thread = b->stream[i],
            .site = b->site[i], .is_read = b->rw[i] & PES_BATCH_READ, .is_write = (b->rw[i] & PES_BATCH_WRITE) >> 1,
        };
    if (b->n && pes_sim_access_batch(s->sim, s->acc, b->n, err) < 0) {
        err->offset = 0;
        return -1;
    }
    return 0;
}

static void publish(void *self, struct replay_result *res, struct replay_config *cfg) {
    (void)res;
    struct sim *s = self;
    cfg->sim.sim = s->sim;
    cfg->sim.n_threads = s->n_threads;
    s->sim = NULL;
}

static void destroy(void *self) {
    struct sim *s = self;
    if (s->sim) pes_sim_destroy(s->sim);
    free(s->acc);
    free(s);
}

const struct pes_analysis pes_analysis_sim = {
    .name = "sim",
    .help = "cache + MESI simulation: hit rates, miss classes, true/false sharing per site (--simulate)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
