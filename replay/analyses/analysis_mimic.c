/*
 * analysis_mimic.c — `--cores N,...`: PPT-Multicore mimicking (Alg. 1 private
 * traces, Alg. 2 interleaving; mimic.h) of the recorded run for each core
 * count, and, with --simulate, the cache + MESI simulation of the very same
 * interleaved stream, so model and simulation see identical accesses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Accesses reach the simulator in batches (pes_sim_access_batch prefetches). */
enum { FEED_BATCH = 4096 };

struct sim_feed {
    struct replay_input *in;
    struct pes_sim *sim;
    struct pes_error err;
    int failed;
    size_t n;
    struct pes_sim_access *buf;   /* [FEED_BATCH] */
};

static void feed_flush(struct sim_feed *f) {
    if (!f->failed && f->n && pes_sim_access_batch(f->sim, f->buf, f->n, &f->err) < 0) {
        f->err.offset = 0;
        f->failed = 1;
    }
    f->n = 0;
}

/* Alg. 2 output observer: each interleaved access goes to the simulator, with
 * the core standing for the thread (one mimicked thread per core). */
static void feed_sim(void *ctx, uint32_t core, uint64_t addr, uint32_t size, uint32_t site) {
    struct sim_feed *f = ctx;
    if (f->failed) return;
    const struct pes_site *s = replay_input_site(f->in, site);
    f->buf[f->n++] = (struct pes_sim_access){
        .addr = addr, .size = size, .core = core, .thread = core, .site = site,
        .is_read = s ? (uint8_t)pes_kind_reads(s->kind) : 1,
        .is_write = s ? (uint8_t)pes_kind_writes(s->kind) : 0,
    };
    if (f->n == FEED_BATCH) feed_flush(f);
}

int replay_analyze_mimic(struct replay_input *in, const struct replay_options *o,
                         struct replay_result *res, struct pes_error *err) {
    if (!replay_input_has_bbs(in)) {
        err->code = PES_ERR_ARG;
        snprintf(err->message, sizeof err->message,
                 "%s: --cores needs a basic-block table (a full trace of a pes-clang build); this %s has none",
                 o->trace, replay_input_is_text(in) ? "text trace" : "trace");
        return -1;
    }
    struct pes_mimic_source src;
    replay_input_mimic_source(in, &src);
    struct pes_mimic_counts *counts = pes_mimic_count(&src, err);
    if (!counts) return -1;
    int rc = 0;
    struct pes_sim_access *feed_buf = NULL;
    if (o->simulate && !(feed_buf = malloc(FEED_BATCH * sizeof *feed_buf))) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        pes_mimic_counts_free(counts);
        return -1;
    }
    for (uint32_t i = 0; i < o->n_cores && rc == 0; i++) {
        struct replay_config *cfg = &res->config[res->n_configs];
        memset(cfg, 0, sizeof *cfg);
        cfg->cores = o->cores[i];
        cfg->mimicked = 1;
        struct sim_feed feed = {.in = in};
        struct pes_mimic_options mo = {
            .n_cores = o->cores[i], .strategy = o->interleave, .seed = o->seed, .chunk = o->chunk, .per_region = o->per_region,
            .granule = res->line, .per_site = 1, .max_range = replay_input_range_cap(in),
        };
        if (o->simulate) {
            struct pes_sim_config sc = {
                .machine = &res->machine, .n_cores = o->cores[i], .n_threads = o->cores[i],
                .page_size = o->page_size,
            };
            /* PPT-Multicore models one processor: every mimicked core shares
             * its last-level cache, as the single CRD group assumes. */
            uint32_t core_socket[PES_SIM_MAX_CORES] = {0};
            sc.core_socket = core_socket;
            feed.sim = cfg->sim.sim = pes_sim_create(&sc, err);
            if (!feed.sim) {
                rc = -1;
                break;
            }
            feed.buf = feed_buf;
            cfg->sim.n_threads = o->cores[i];
            mo.emit = feed_sim;
            mo.emit_ctx = &feed;
        }
        res->n_configs++;
        cfg->profiles = pes_mimic_run(&src, counts, &mo, err);
        if (feed.sim) feed_flush(&feed);
        if (!cfg->profiles) rc = -1;
        else if (feed.failed) {
            *err = feed.err;
            rc = -1;
        }
    }
    free(feed_buf);
    pes_mimic_counts_free(counts);
    return rc;
}
