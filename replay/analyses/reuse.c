/*
 * reuse.c — reuse profiles (PPT-Multicore §2.4): the PRD of every stream
 * (private caches) and the CRD of every shared cache, fed by the accesses of
 * the streams placed on it, each with its per-site breakdown (profiles.h).
 *
 * At the end, the SDCM model (PPT-Multicore Eq. 1-3) turns them into hit
 * rates per level (private levels from the PRD of all streams together,
 * which is the access-weighted mean of the per-core rates; shared levels from
 * the CRD of all shared caches) and Eq. 4-8 into a predicted runtime.
 *
 * With --jobs 2 the PRDs run on a second thread (prd_worker.h). With the
 * simulation on this thread too, the CRDs balance better on the worker;
 * without it, the worker is the slower side already (measured with
 * bench/replay_throughput.py).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "histogram.h"
#include "prd_worker.h"

struct reuse {
    struct pes_profiles *prd;     /* one stream per recorded thread / mimicked core */
    struct pes_profiles *crd;     /* one stream per shared cache: its PRD is that cache's CRD */
    const uint32_t *stream_cache;
    uint32_t *cache;              /* [PES_BATCH] scratch: shared cache of each access */
    struct prd_worker worker;
    int on_worker;                /* PRDs (and crd_on_worker: CRDs) go to the worker */
    int crd_on_worker;
    const struct pes_stream_info *si;
    struct pes_work work;         /* counted here unless the stream info brings it */
    double hit[PES_MAX_LEVELS];   /* SDCM global hit rates */
    struct pes_runtime runtime;
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
    r->si = si;
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
    if (!r->si->work) {
        for (size_t i = 0; i < b->n; i++) r->work.bytes += b->length[i];
        for (size_t i = 0; i < b->n_bbs; i++)
            for (int k = 0; k < PES_OP_COUNT; k++) r->work.ops[k] += b->bb[i]->ops[k];
    }
    /* profiles check stream indices, but the worker would only say so at the
     * end and the shared-cache lookup below must not read beyond its table */
    for (size_t i = 0; i < b->n; i++)
        if (b->stream[i] >= r->si->n_streams)
            return pes_error_set(err, PES_ERR_ARG, 0, "stream %u out of range (%u streams)", b->stream[i],
                                 r->si->n_streams);
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

static int sum_crd(const struct pes_profiles *crd, struct pes_rd_hist *out) {
    for (uint32_t g = 0; g < pes_profiles_streams(crd); g++)
        if (pes_rd_hist_merge(out, pes_profiles_prd(crd, g)) < 0) return -1;
    return 0;
}

/* SDCM hit rates (Eq. 1-3) and runtime (Eq. 4-8). */
static int model(struct reuse *r, struct pes_error *err) {
    struct pes_rd_hist prd, crd;
    if (pes_rd_hist_init(&prd, 0, err) < 0) return -1;
    if (pes_rd_hist_init(&crd, 0, err) < 0) {
        pes_rd_hist_free(&prd);
        return -1;
    }
    const struct pes_machine *m = r->si->machine;
    struct pes_reuse_profile prd_profile, crd_profile;
    int rc = -1;
    if (pes_profiles_prd_total(r->prd, &prd) < 0 || sum_crd(r->crd, &crd) < 0 ||
        pes_rd_hist_to_profile(&prd, &prd_profile) < 0 || pes_rd_hist_to_profile(&crd, &crd_profile) < 0) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "cannot sum the reuse histograms (out of memory, or internal layout mismatch)");
        goto out;
    }
    const struct pes_reuse_profile *per_level[PES_MAX_LEVELS];
    for (uint32_t l = 0; l < m->n_levels; l++)
        per_level[l] = m->level[l].shared && pes_profiles_streams(r->crd) ? &crd_profile : &prd_profile;
    if (pes_model_hit_rates(m, per_level, r->hit, err) < 0) goto out;
    const struct pes_work *w = r->si->work ? r->si->work : &r->work;
    struct pes_runtime_input ri = {.total_mem = (double)w->bytes, .cores = r->si->n_streams};
    memcpy(ri.hit, r->hit, sizeof ri.hit);
    memcpy(ri.ops, w->ops, sizeof ri.ops);
    if (pes_model_runtime(m, &ri, &r->runtime, err) < 0) goto out;
    rc = 0;
out:
    pes_rd_hist_free(&prd);
    pes_rd_hist_free(&crd);
    return rc;
}

static int finish(void *self, struct pes_error *err) {
    struct reuse *r = self;
    int rc = stop_worker(r, err);
    /* the histograms are the result; the engines can go */
    pes_profiles_finish(r->prd);
    pes_profiles_finish(r->crd);
    return rc < 0 ? rc : model(r, err);
}

/* ------------------------------------------------------------ report */

/* Local hit rate of level l from global (cumulative) rates: hits at l among
 * the accesses that missed every level above. */
static double local_rate(const double global[], uint32_t l) {
    double above = l ? global[l - 1] : 0.0;
    if (above >= 1.0) return 0.0;
    return (global[l] - above) / (1.0 - above);
}

/* A histogram: JSON lists only non-empty bins; the text report's cold share
 * and fully associative hit shares ride along as display values. */
static void publish_hist(struct pes_report *rep, struct pes_rnode *parent, const struct pes_rd_hist *h,
                         const struct pes_stream_info *si) {
    struct pes_rnode *o = pes_r_object(rep, parent, "histogram");
    pes_r_u64(rep, o, "accesses", h->total);
    pes_r_u64(rep, o, "cold", h->cold);
    pes_r_f64(rep, o, "mean", pes_rd_hist_mean(h), "%.6g");
    struct pes_rnode *ex = pes_r_array(rep, o, "exact");
    for (uint64_t d = 0; d < h->exact_n; d++) {
        if (!h->exact[d]) continue;
        struct pes_rnode *bin = pes_r_array(rep, ex, NULL);
        pes_r_u64(rep, bin, NULL, d);
        pes_r_u64(rep, bin, NULL, h->exact[d]);
    }
    struct pes_rnode *lg = pes_r_array(rep, o, "log2");
    for (int b = 0; b < PES_RD_HIST_LOG2_BINS; b++) {
        if (!h->log2[b]) continue;
        struct pes_rnode *bin = pes_r_array(rep, lg, NULL);
        pes_r_u64(rep, bin, NULL, (uint64_t)1 << b);
        pes_r_u64(rep, bin, NULL, b < 63 ? (uint64_t)1 << (b + 1) : UINT64_MAX);
        pes_r_u64(rep, bin, NULL, h->log2[b]);
    }
    pes_r_flag(pes_r_f64(rep, o, "cold_share", h->total ? (double)h->cold / (double)h->total : 0.0, NULL),
               PES_R_TEXT_ONLY);
    struct pes_rnode *fa = pes_r_flag(pes_r_array(rep, o, "fa_hit_share"), PES_R_TEXT_ONLY);
    for (uint32_t l = 0; l < si->machine->n_levels; l++) {
        uint64_t lines = si->machine->level[l].size / si->line;
        pes_r_f64(rep, fa, NULL, h->total ? pes_rd_hist_below(h, lines) / (double)h->total : 0.0, NULL);
    }
}

static int by_site(const void *a, const void *b) {
    const struct pes_site_reuse *x = a, *y = b;
    return x->site < y->site ? -1 : x->site > y->site;
}

struct site_row {
    uint32_t site;
    uint64_t accesses, prd_cold, crd_cold;
    double prd_mean, crd_mean;
};

static int by_accesses_desc(const void *a, const void *b) {
    const struct site_row *x = a, *y = b;
    if (x->accesses != y->accesses) return x->accesses < y->accesses ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* One row per site, most line accesses first; means are over finite
 * distances, in lines; CRD rows come from the shared-cache profile set. */
static void publish_sites(struct pes_report *rep, struct pes_rnode *parent, const struct reuse *r) {
    size_t np = 0, nc = 0;
    const struct pes_site_reuse *p = pes_profiles_sites(r->prd, &np);
    const struct pes_site_reuse *q = pes_profiles_sites(r->crd, &nc);
    struct site_row *rows = calloc(np ? np : 1, sizeof *rows);
    struct pes_site_reuse *crd = malloc((nc ? nc : 1) * sizeof *crd);
    struct pes_rnode *arr = pes_r_array(rep, parent, "sites");
    if (!rows || !crd) {
        pes_r_array(rep, NULL, NULL);   /* marks the report failed */
        free(rows);
        free(crd);
        return;
    }
    if (nc) memcpy(crd, q, nc * sizeof *crd);
    qsort(crd, nc, sizeof *crd, by_site);
    for (size_t i = 0; i < np; i++) {
        struct site_row *o = &rows[i];
        o->site = p[i].site;
        o->accesses = p[i].accesses;
        o->prd_cold = p[i].prd_cold;
        o->prd_mean = p[i].accesses > p[i].prd_cold ? p[i].prd_sum / (double)(p[i].accesses - p[i].prd_cold) : 0.0;
        struct pes_site_reuse key = {.site = p[i].site};
        const struct pes_site_reuse *c = nc ? bsearch(&key, crd, nc, sizeof *crd, by_site) : NULL;
        if (c) {
            o->crd_cold = c->prd_cold;
            o->crd_mean = c->accesses > c->prd_cold ? c->prd_sum / (double)(c->accesses - c->prd_cold) : 0.0;
        }
    }
    qsort(rows, np, sizeof *rows, by_accesses_desc);
    for (size_t i = 0; i < np; i++) {
        struct pes_rnode *o = pes_r_object(rep, arr, NULL);
        pes_r_u64(rep, o, "site", rows[i].site);
        pes_r_u64(rep, o, "accesses", rows[i].accesses);
        pes_r_u64(rep, o, "prd_cold", rows[i].prd_cold);
        pes_r_u64(rep, o, "crd_cold", rows[i].crd_cold);
        pes_r_f64(rep, o, "prd_mean", rows[i].prd_mean, "%.6g");
        pes_r_f64(rep, o, "crd_mean", rows[i].crd_mean, "%.6g");
    }
    free(rows);
    free(crd);
}

static void publish(void *self, const struct pes_publish *to) {
    struct reuse *r = self;
    struct pes_report *rep = to->r;
    const struct pes_machine *m = r->si->machine;
    struct pes_rnode *prd = pes_r_array(rep, to->config, "prd");
    for (uint32_t st = 0; st < pes_profiles_streams(r->prd); st++) {
        struct pes_rnode *o = pes_r_object(rep, prd, NULL);
        pes_r_u64(rep, o, "stream", st);
        publish_hist(rep, o, pes_profiles_prd(r->prd, st), r->si);
    }
    struct pes_rnode *crd = pes_r_array(rep, to->config, "crd");
    for (uint32_t g = 0; g < pes_profiles_streams(r->crd); g++) {
        struct pes_rnode *o = pes_r_object(rep, crd, NULL);
        pes_r_u64(rep, o, "group", g);
        publish_hist(rep, o, pes_profiles_prd(r->crd, g), r->si);
    }
    publish_sites(rep, to->config, r);
    struct pes_rnode *mo = pes_r_object(rep, to->config, "model");
    struct pes_rnode *hg = pes_r_array(rep, mo, "hit_global");
    for (uint32_t l = 0; l < m->n_levels; l++) pes_r_f64(rep, hg, NULL, r->hit[l], "%.6f");
    struct pes_rnode *hl = pes_r_array(rep, mo, "hit_local");
    for (uint32_t l = 0; l < m->n_levels; l++) pes_r_f64(rep, hl, NULL, local_rate(r->hit, l), "%.6f");
    const struct pes_runtime *t = &r->runtime;
    struct pes_rnode *rt = pes_r_object(rep, mo, "runtime");
    pes_r_f64(rep, rt, "delta_avg", t->delta_avg, "%.6g");
    pes_r_f64(rep, rt, "beta_avg", t->beta_avg, "%.6g");
    pes_r_f64(rep, rt, "mem_cycles", t->mem_cycles, "%.6g");
    pes_r_f64(rep, rt, "cpu_cycles", t->cpu_cycles, "%.6g");
    pes_r_f64(rep, rt, "total_cycles", t->total_cycles, "%.6g");
    pes_r_f64(rep, rt, "mem_seconds", t->mem_seconds, "%.6g");
    pes_r_f64(rep, rt, "cpu_seconds", t->cpu_seconds, "%.6g");
    pes_r_f64(rep, rt, "total_seconds", t->total_seconds, "%.6g");
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
