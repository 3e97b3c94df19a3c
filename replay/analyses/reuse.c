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
 * With a machine that has a TLB (tlb.entries, tlb.page, tlb.miss_latency),
 * the PRD of every stream again at page granularity: its accesses at page
 * distance >= the TLB's entries (or cold) are the TLB misses of a fully
 * associative LRU TLB, the runtime model's TLB term (docs/model.md §3). With
 * prefetch.max_stride, the share of the line changes made by constant-stride
 * walks (prefetch_share.h), the prefetch term's. With pes-replay-mpi both
 * are process 0's where every process reads the whole stream (round-robin
 * windows); read in parts, each part counts what it can alone and sends
 * the rest (page_prd.h: PARDA summaries of its pages; prefetch_share.h: the
 * walks' first accesses, which wait for the state the part before left), so
 * the runtime is pes-replay's either way.
 *
 * With --jobs N the engines run on N worker threads (profiles.h: the PRD
 * and CRD engines spread over them, a dominant one split PARDA-style), with
 * results identical to one thread.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "callpaths.h"
#include "groups.h"
#include "histogram.h"
#include "page_prd.h"
#include "prefetch_share.h"
#include "profiles.h"
#include "reuse_model.h"

struct reuse {
    struct pes_profiles *prof;  /* PRD per stream, CRD per shared cache (group) */
    struct pes_profiles *pages; /* PRD per stream at tlb_page granularity; NULL: no TLB term */
    struct replay_page_prd *page_parts; /* the same, read in parts (pages is NULL then) */
    struct replay_prefetch *ahead;      /* constant-stride line changes; NULL: no prefetch term */
    const struct pes_stream_info *si;
    struct pes_work work; /* counted here unless the stream info brings it */
    struct replay_model model;
    enum replay_by by; /* --by object: the profiles' per-site rows are keyed by object */
    uint32_t *zeros;   /* [PES_BATCH] the unknown object, for batches without objects */
    int annotate;      /* --annotate: per-line counts for the text report */
    enum pes_runtime_model runtime_model;
    /* call paths (callpaths.h): the profiles' rows are (key, path, site)
     * triples, added back per key for the tables; NULL: keys */
    struct replay_pathkeys *pk;
    uint32_t *pk_ids; /* [PES_BATCH] a batch's triples */
    /* call paths read in parts: a later part's triples (its own ids, on its
     * symbolic paths) go into the profiles as part_key(part, id); part 0
     * maps each part's ids to its own triples when it merges the part's
     * counts (their paths resolved: stream info callpath_map), and the
     * profiles' rows back to them when it publishes */
    uint32_t part, parts;     /* 0, 0: not in parts */
    uint32_t **part_triples;  /* part 0: [parts] a part's triple ids -> pk ids */
    uint32_t *n_part_triples; /* [parts] */
    uint32_t merged;          /* part 0: later parts merged so far */
};

#define PART_KEY_BIT 0x80000000u

static uint32_t part_key(uint32_t part, uint32_t parts, uint32_t id)
{
    return PART_KEY_BIT | (id * parts + part);
}

/* With --cores the recorded stream only feeds the summary; with
 * --sample-rate the approximate profiles (approx.c) take this one's place. */
static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return (si->mimicked || !k->mimic) && k->sample_rate == 0 && si->kind != PES_TRACE_SAMPLED;
}

static int tlb_term(const struct pes_machine *m, uint32_t line)
{
    return m->tlb_entries && m->tlb_miss_latency > 0 && m->tlb_page >= line &&
           !(m->tlb_page & (m->tlb_page - 1));
}

static void destroy(void *self);

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct reuse *r = calloc(1, sizeof *r);
    if (!r) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    r->si = si;
    r->by = replay_by_parse(k->by);
    r->annotate = k->annotate != NULL;
    r->runtime_model = (enum pes_runtime_model)k->runtime_model;
    if (r->by == REPLAY_BY_CALLPATH && !si->callpaths) {
        free(r);
        pes_error_set(err, PES_ERR_ARG, 0,
                      "--by callpath: %s has no call edges (no call sites in its tables: "
                      "recorded without call paths)",
                      si->path);
        return NULL;
    }
    if ((r->by == REPLAY_BY_OBJECT && !(r->zeros = calloc(PES_BATCH, sizeof *r->zeros))) ||
        (si->callpaths && (!(r->pk = replay_pathkeys_create()) ||
                           !(r->pk_ids = malloc(PES_BATCH * sizeof *r->pk_ids))))) {
        replay_pathkeys_destroy(r->pk);
        free(r->zeros);
        free(r);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    struct pes_profiles_options po = {
        .granule = si->line,
        .n_streams = si->n_streams,
        .n_groups = si->n_caches,
        .group_of = si->stream_cache,
        .per_site = 1,
        .threads = k->jobs,
        .split = k->split,
    };
    const struct pes_machine *m = si->machine;
    /* the whole stream in this process, which publishes (no split, or
     * process 0 of a split without parts), or this process's part of it */
    int parts = k->split && k->split->parts, later = parts && k->split->rank != 0;
    int whole = !k->split || (!parts && k->split->rank == 0);
    int tlb = tlb_term(m, si->line);
    struct pes_profiles_options pages = {
        .granule = m->tlb_page, .n_streams = si->n_streams, .threads = k->jobs};
    if (!(r->prof = pes_profiles_create(&po, err)) ||
        (tlb && whole && !(r->pages = pes_profiles_create(&pages, err))) ||
        (tlb && parts &&
         !(r->page_parts = replay_page_prd_create(m->tlb_page, si->n_streams, later, err))) ||
        (m->prefetch_max_stride > 0 && (whole || parts) &&
         !(r->ahead = replay_prefetch_create(si->line, m->prefetch_max_stride)) &&
         pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory"))) {
        pes_profiles_destroy(r->prof);
        pes_profiles_destroy(r->pages);
        replay_page_prd_destroy(r->page_parts);
        replay_prefetch_destroy(r->ahead);
        replay_pathkeys_destroy(r->pk);
        free(r->pk_ids);
        free(r->zeros);
        free(r);
        return NULL;
    }
    if (r->ahead && later)
        replay_prefetch_set_later(r->ahead);
    if (parts && r->pk && k->split->ranks > 1) {
        r->part = k->split->rank;
        r->parts = k->split->ranks;
        if (r->part == 0 && (!(r->part_triples = calloc(r->parts, sizeof *r->part_triples)) ||
                             !(r->n_part_triples = calloc(r->parts, sizeof *r->n_part_triples)))) {
            destroy(r);
            pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
            return NULL;
        }
    }
    return r;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct reuse *r = self;
    if (!r->si->work)
        replay_work_count(&r->work, b);
    const uint32_t *key = r->by != REPLAY_BY_OBJECT ? b->site : b->object ? b->object : r->zeros;
    if (r->pk) {
        if (replay_pathkeys_map(r->pk, key, b->callpath, b->site, b->n, r->pk_ids) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory (call paths)");
        for (size_t i = 0; r->part > 0 && i < b->n; i++) {
            if (r->pk_ids[i] >= (PART_KEY_BIT - r->part) / r->parts)
                return pes_error_set(err, PES_ERR_NOMEM, 0, "part %u: more than %u call path rows",
                                     r->part, (PART_KEY_BIT - r->part) / r->parts);
            r->pk_ids[i] = part_key(r->part, r->parts, r->pk_ids[i]);
        }
        key = r->pk_ids;
    }
    if (b->n && pes_profiles_push_batch(r->prof, b->stream, b->addr, b->size, key, b->n, err) < 0)
        return -1;
    if (r->ahead && replay_prefetch_batch(r->ahead, b) < 0)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    if (r->pages && b->n &&
        pes_profiles_push_batch(r->pages, b->stream, b->addr, b->size, b->site, b->n, err) < 0)
        return -1;
    if (r->page_parts && replay_page_prd_batch(r->page_parts, b, err) < 0)
        return -1;
    /* the PRD engines of ended streams go once their accesses are pushed */
    for (size_t i = 0; i < b->n_ended; i++)
        if (pes_profiles_end_stream(r->prof, b->ended[i], err) < 0 ||
            (r->pages && pes_profiles_end_stream(r->pages, b->ended[i], err) < 0))
            return -1;
    return 0;
}

static int sum_crd(const struct pes_profiles *p, struct pes_rd_hist *out)
{
    for (uint32_t g = 0; g < pes_profiles_groups(p); g++)
        if (pes_rd_hist_merge(out, pes_profiles_crd(p, g)) < 0)
            return -1;
    return 0;
}

/* SDCM hit rates (Eq. 1-3) and runtime (Eq. 4-8) from the summed histograms. */
static int model(struct reuse *r, struct pes_error *err)
{
    struct pes_rd_hist prd, crd;
    if (pes_rd_hist_init(&prd, 0, err) < 0)
        return -1;
    if (pes_rd_hist_init(&crd, 0, err) < 0) {
        pes_rd_hist_free(&prd);
        return -1;
    }
    struct replay_model_extra extra = {0};
    int rc = pes_profiles_prd_total(r->prof, &prd) < 0 || sum_crd(r->prof, &crd) < 0
                 ? pes_error_set(err, PES_ERR_NOMEM, 0,
                                 "cannot sum the reuse histograms (out of memory)")
                 : 0;
    if (rc == 0 &&
        (r->pages || r->page_parts)) { /* TLB misses: page distance >= entries, or cold */
        struct pes_rd_hist pg;
        if (r->page_parts ? replay_page_prd_total(r->page_parts, &pg, err) < 0
                          : pes_rd_hist_init(&pg, 0, err) < 0)
            rc = -1;
        else if (r->pages && pes_profiles_prd_total(r->pages, &pg) < 0)
            rc = pes_error_set(err, PES_ERR_NOMEM, 0, "cannot sum the page reuse histograms");
        else {
            extra.known |= PES_RUNTIME_KNOW_TLB;
            extra.tlb_misses =
                (double)pg.total - pes_rd_hist_below(&pg, r->si->machine->tlb_entries);
            extra.tlb_accesses = pg.total;
        }
        pes_rd_hist_free(&pg);
    }
    if (r->ahead) {
        extra.known |= PES_RUNTIME_KNOW_PREFETCH;
        extra.prefetched = replay_prefetch_share(r->ahead);
    }
    if (rc == 0)
        rc = replay_model_run(&r->model, r->runtime_model, r->si, &r->work, &extra, &prd,
                              pes_profiles_groups(r->prof) ? &crd : NULL, err);
    pes_rd_hist_free(&prd);
    pes_rd_hist_free(&crd);
    return rc;
}

static int finish(void *self, struct pes_error *err)
{
    struct reuse *r = self;
    /* the workers' last errors; then the histograms are the result and the engines can go */
    if (pes_profiles_sync(r->prof, err) < 0 || (r->pages && pes_profiles_sync(r->pages, err) < 0))
        return -1;
    pes_profiles_finish(r->prof);
    if (r->pages)
        pes_profiles_finish(r->pages);
    return model(r, err);
}

/* Parts: the profiles travel as window summaries (profiles.h, parts), so a
 * part brings the work counted for the runtime model and, with those
 * terms, its page summaries and its prefetch walks: the work, then
 * [u64 bytes][page summaries] and [u64 bytes][walks]. */
static int sync(void *self, struct pes_error *err)
{
    struct reuse *r = self;
    if (pes_profiles_sync(r->prof, err) < 0)
        return -1;
    return r->page_parts ? replay_page_prd_end(r->page_parts, err) : 0;
}

static size_t part_pack(void *self, void *buf, size_t cap)
{
    struct reuse *r = self;
    uint64_t pages = r->page_parts ? replay_page_prd_pack(r->page_parts, NULL, 0) : 0;
    uint64_t walks = r->ahead ? replay_prefetch_pack(r->ahead, NULL, 0) : 0;
    uint64_t triples = r->part > 0 ? 12 * (uint64_t)replay_pathkeys_count(r->pk) : 0;
    size_t need = sizeof r->work + 3 * sizeof(uint64_t) + (size_t)(pages + walks + triples);
    if (!buf || cap < need)
        return need;
    unsigned char *o = buf;
    memcpy(o, &r->work, sizeof r->work);
    o += sizeof r->work;
    memcpy(o, &pages, sizeof pages);
    o += sizeof pages;
    if (pages)
        o += replay_page_prd_pack(r->page_parts, o, (size_t)pages);
    memcpy(o, &walks, sizeof walks);
    o += sizeof walks;
    if (walks)
        o += replay_prefetch_pack(r->ahead, o, (size_t)walks);
    memcpy(o, &triples, sizeof triples);
    o += sizeof triples;
    for (uint32_t i = 0; i < triples / 12; i++, o += 12) {
        uint32_t t[3] = {replay_pathkeys_key(r->pk, i), replay_pathkeys_path(r->pk, i),
                         replay_pathkeys_site(r->pk, i)};
        memcpy(o, t, sizeof t);
    }
    return need;
}

/* Part 0: the next later part's triples, in its id order, as triples of
 * part 0's table, their symbolic paths resolved (si->callpath_map). */
static int merge_triples(struct reuse *r, const unsigned char *in, size_t n, struct pes_error *err)
{
    uint32_t from = ++r->merged;
    if (from >= r->parts)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "reuse: part %u of %u", from, r->parts);
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory (call paths)");
    for (size_t i = 0; i < n; i++) {
        uint32_t t[3];
        memcpy(t, in + 12 * i, sizeof t);
        if (t[1] >= r->si->callpath_map_n) {
            free(ids);
            return pes_error_set(err, PES_ERR_FORMAT, 0, "reuse: part %u names call path %u of %u",
                                 from, t[1], r->si->callpath_map_n);
        }
        uint32_t path = r->si->callpath_map[t[1]];
        if (replay_pathkeys_map(r->pk, &t[0], &path, &t[2], 1, &ids[i]) < 0) {
            free(ids);
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory (call paths)");
        }
    }
    r->part_triples[from] = ids;
    r->n_part_triples[from] = (uint32_t)n;
    return 0;
}

static int part_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct reuse *r = self;
    const unsigned char *in = buf, *end = in + len;
    struct pes_work w;
    uint64_t pages, walks;
    if (len < sizeof w + sizeof pages)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "reuse: a part of %zu bytes", len);
    memcpy(&w, in, sizeof w);
    memcpy(&pages, in + sizeof w, sizeof pages);
    in += sizeof w + sizeof pages;
    if (pages > (uint64_t)(end - in) || (size_t)(end - in) - pages < sizeof walks)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "reuse: a part of %zu bytes", len);
    memcpy(&walks, in + pages, sizeof walks);
    const unsigned char *at_walks = in + pages + sizeof walks;
    uint64_t triples = UINT64_MAX;
    if (walks <= (uint64_t)(end - at_walks) && (size_t)(end - at_walks) - walks >= sizeof triples)
        memcpy(&triples, at_walks + walks, sizeof triples);
    const unsigned char *at_triples = at_walks + walks + sizeof triples;
    if (triples == UINT64_MAX || triples != (uint64_t)(end - at_triples) ||
        (pages != 0) != (r->page_parts != NULL) || (walks != 0) != (r->ahead != NULL) ||
        triples % 12 || (triples && !r->part_triples))
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "reuse: a part of %zu bytes (pages %llu, walks %llu)", len,
                             (unsigned long long)pages, (unsigned long long)walks);
    if (r->part_triples && merge_triples(r, at_triples, (size_t)(triples / 12), err) < 0)
        return -1;
    replay_work_merge(&r->work, &w);
    if (pages && replay_page_prd_merge(r->page_parts, in, (size_t)pages, err) < 0)
        return -1;
    if (walks && replay_prefetch_merge(r->ahead, at_walks, (size_t)walks) < 0)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "reuse: a part's prefetch walks (%llu bytes)",
                             (unsigned long long)walks);
    return 0;
}

/* ------------------------------------------------------------ report */

struct site_row {
    uint32_t site;
    uint64_t accesses, prd_cold, crd_cold;
    double prd_mean, crd_mean;
};

static int by_accesses_desc(const void *a, const void *b)
{
    const struct site_row *x = a, *y = b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* Mean finite distance of `accesses` of which `cold` were cold. */
static double mean(double sum, uint64_t accesses, uint64_t cold)
{
    return accesses > cold ? sum / (double)(accesses - cold) : 0.0;
}

/* --annotate: the line accesses of each source line (text only). */
static void publish_annotate(struct pes_report *rep, struct pes_rnode *parent,
                             const struct reuse *r, const uint32_t *keys, size_t np,
                             const struct pes_site_reuse *p)
{
    struct pes_rnode *arr = pes_r_flag(pes_r_array(rep, parent, "annotate"), PES_R_TEXT_ONLY);
    struct replay_groups g;
    if (!keys || replay_groups_make(&g, r->si, REPLAY_BY_LINE, keys, np) < 0) {
        pes_r_array(rep, NULL, NULL); /* marks the report failed */
        return;
    }
    for (size_t j = 0; j < g.n; j++) {
        uint32_t first = keys[g.member[g.start[j]]];
        const struct pes_site *site =
            first == UINT32_MAX ? NULL : r->si->site(r->si->site_ctx, first);
        if (!site)
            continue; /* no site table (another tool's trace): nothing to name */
        uint64_t acc = 0;
        for (uint32_t m = g.start[j]; m < g.start[j + 1]; m++)
            acc += p[g.member[m]].accesses;
        /* line 0 (the file's unidentified lines) and no file at all (no
         * debug location: a row of file "" named by its function) stay rows */
        struct pes_rnode *o = pes_r_object(rep, arr, NULL);
        pes_r_str(rep, o, "file", site->file ? site->file : "");
        pes_r_u64(rep, o, "line", site->line);
        pes_r_str(rep, o, "function", site->function ? site->function : "");
        pes_r_u64(rep, o, "accesses", acc);
    }
    replay_groups_free(&g);
}

/* Call paths: the profiles' rows (triples, raw[0..n)) added per key, in
 * the keys' first-seen order (that of the rows without paths); raw row i
 * went into row (*fold_of)[i]. NULL without memory. */
struct first_seen {
    uint32_t key, at;
};

static int by_key_then_at(const void *a, const void *b)
{
    const struct first_seen *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

static int by_at(const void *a, const void *b)
{
    const struct first_seen *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Parts: the profiles' rows of later parts' triples as rows of part 0's
 * triples, one row per triple in id order (the rows of one process fed the
 * whole stream: its triples' ids are in first-seen order). Rows are sorted
 * as first_seen entries keyed by part 0's triple. NULL without memory. */
static struct pes_site_reuse *unpart(const struct reuse *r, const struct pes_site_reuse *raw,
                                     size_t n, size_t *n_out)
{
    struct first_seen *v = malloc((n ? n : 1) * sizeof *v);
    struct pes_site_reuse *out = calloc(n ? n : 1, sizeof *out);
    if (!v || !out) {
        free(v);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t site = raw[i].site;
        if (site & PART_KEY_BIT) {
            uint32_t x = site & ~PART_KEY_BIT, part = x % r->parts, id = x / r->parts;
            site = part < r->parts && id < r->n_part_triples[part] ? r->part_triples[part][id]
                                                                   : UINT32_MAX;
        }
        v[i] = (struct first_seen){site, (uint32_t)i};
    }
    qsort(v, n, sizeof *v, by_key_then_at);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pes_site_reuse *x = &raw[v[i].at];
        if (i == 0 || v[i].key != v[i - 1].key)
            out[m++] = (struct pes_site_reuse){.site = v[i].key};
        struct pes_site_reuse *o = &out[m - 1];
        o->accesses += x->accesses;
        o->prd_cold += x->prd_cold;
        o->crd_cold += x->crd_cold;
        o->prd_sum += x->prd_sum;
        o->crd_sum += x->crd_sum;
    }
    free(v);
    *n_out = m;
    return out;
}

static struct pes_site_reuse *fold(const struct reuse *r, const struct pes_site_reuse *raw,
                                   size_t n, size_t *n_out, uint32_t **fold_of)
{
    struct first_seen *v = malloc((n ? n : 1) * sizeof *v),
                      *runs = malloc((n ? n : 1) * sizeof *runs);
    struct pes_site_reuse *out = calloc(n ? n : 1, sizeof *out);
    uint32_t *of = malloc((n ? n : 1) * sizeof *of), *rank = malloc((n ? n : 1) * sizeof *rank);
    size_t m = 0;
    if (v && runs && out && of && rank) {
        for (size_t i = 0; i < n; i++)
            v[i] = (struct first_seen){replay_pathkeys_key(r->pk, raw[i].site), (uint32_t)i};
        qsort(v, n, sizeof *v, by_key_then_at);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || v[i].key != v[i - 1].key)
                runs[m++] = (struct first_seen){v[i].key, v[i].at};
            of[v[i].at] = (uint32_t)(m - 1); /* the run, renumbered below */
        }
        for (size_t j = 0; j < m; j++)
            runs[j].key = (uint32_t)j; /* run index, ordered by first row */
        qsort(runs, m, sizeof *runs, by_at);
        for (size_t j = 0; j < m; j++)
            rank[runs[j].key] = (uint32_t)j;
        for (size_t i = 0; i < n; i++) {
            of[i] = rank[of[i]];
            struct pes_site_reuse *o = &out[of[i]];
            o->site = replay_pathkeys_key(r->pk, raw[i].site);
            o->accesses += raw[i].accesses;
            o->prd_cold += raw[i].prd_cold;
            o->crd_cold += raw[i].crd_cold;
            o->prd_sum += raw[i].prd_sum;
            o->crd_sum += raw[i].crd_sum;
        }
    }
    free(v);
    free(runs);
    free(rank);
    if (!out || !of || (m == 0 && n)) {
        free(out);
        free(of);
        return NULL;
    }
    *n_out = m;
    *fold_of = of;
    return out;
}

/* Under each group row of g (rows[j].site: its group), its top paths by
 * line accesses: raw rows bucketed by the group of their folded row. */
static void publish_row_paths(struct pes_report *rep, const struct reuse *r,
                              struct pes_rnode *const *row_node, const struct site_row *rows,
                              size_t n_rows, const struct replay_groups *g,
                              const struct pes_site_reuse *raw, size_t nraw,
                              const uint32_t *fold_of);

/* One row per group (--by), most line accesses first: counts and distance
 * sums of its sites added, means recomputed from the sums. With call paths
 * (raw: the triples, fold_of their rows of p) each row lists its top paths;
 * --by callpath groups the triples per line and path instead. */
static void publish_groups(struct pes_report *rep, struct pes_rnode *parent, const struct reuse *r,
                           const struct pes_site_reuse *p, size_t np,
                           const struct pes_site_reuse *raw, size_t nraw, const uint32_t *fold_of)
{
    pes_r_str(rep, parent, "by", replay_by_name(r->by));
    struct pes_rnode *arr = pes_r_array(rep, parent, "groups");
    struct replay_groups g;
    int by_path = r->by == REPLAY_BY_CALLPATH && raw;
    const struct pes_site_reuse *rowsrc = by_path ? raw : p;
    size_t nsrc = by_path ? nraw : np;
    uint32_t *keys = malloc((np ? np : 1) * sizeof *keys);
    uint32_t *skeys = malloc((nsrc ? nsrc : 1) * sizeof *skeys);
    uint32_t *paths = by_path ? malloc((nsrc ? nsrc : 1) * sizeof *paths) : NULL;
    for (size_t i = 0; keys && i < np; i++)
        keys[i] = p[i].site;
    for (size_t i = 0; skeys && i < nsrc; i++) {
        skeys[i] = by_path ? replay_pathkeys_key(r->pk, raw[i].site) : p[i].site;
        if (paths)
            paths[i] = replay_pathkeys_path(r->pk, raw[i].site);
    }
    struct site_row *rows = NULL;
    struct pes_rnode **nodes = NULL;
    double *sums = NULL;
    if (r->annotate && r->by != REPLAY_BY_OBJECT)
        publish_annotate(rep, parent, r, keys, np, p);
    int made = !keys || !skeys || (by_path && !paths) ? -1
               : by_path ? replay_groups_make_paths(&g, r->si, skeys, paths, nsrc)
                         : replay_groups_make(&g, r->si, r->by, skeys, nsrc);
    if (made < 0) {
        free(keys);
        free(skeys);
        free(paths);
        pes_r_array(rep, NULL, NULL); /* marks the report failed */
        return;
    }
    rows = calloc(g.n ? g.n : 1, sizeof *rows);
    nodes = calloc(g.n ? g.n : 1, sizeof *nodes);
    sums = calloc(2 * (g.n ? g.n : 1), sizeof *sums);
    for (size_t i = 0; rows && sums && i < nsrc; i++) {
        struct site_row *w = &rows[g.of[i]];
        w->site = g.of[i]; /* the group, for the ranking's ties */
        w->accesses += rowsrc[i].accesses;
        w->prd_cold += rowsrc[i].prd_cold;
        w->crd_cold += rowsrc[i].crd_cold;
        sums[2 * g.of[i]] += rowsrc[i].prd_sum;
        sums[2 * g.of[i] + 1] += rowsrc[i].crd_sum;
    }
    for (size_t j = 0; rows && sums && j < g.n; j++) {
        rows[j].prd_mean = mean(sums[2 * j], rows[j].accesses, rows[j].prd_cold);
        rows[j].crd_mean = mean(sums[2 * j + 1], rows[j].accesses, rows[j].crd_cold);
    }
    if (!rows || !sums || !nodes)
        pes_r_array(rep, NULL, NULL);
    else
        qsort(rows, g.n, sizeof *rows, by_accesses_desc);
    for (size_t j = 0; rows && sums && nodes && j < g.n; j++) {
        struct pes_rnode *o = nodes[j] = pes_r_object(rep, arr, NULL);
        replay_group_publish(rep, o, r->si, r->by, &g, rows[j].site, skeys);
        pes_r_u64(rep, o, "accesses", rows[j].accesses);
        pes_r_u64(rep, o, "prd_cold", rows[j].prd_cold);
        pes_r_u64(rep, o, "crd_cold", rows[j].crd_cold);
        pes_r_f64(rep, o, "prd_mean", rows[j].prd_mean, "%.6g");
        pes_r_f64(rep, o, "crd_mean", rows[j].crd_mean, "%.6g");
    }
    if (rows && sums && nodes && raw && !by_path && replay_callpaths_shown(r->si))
        publish_row_paths(rep, r, nodes, rows, g.n, &g, raw, nraw, fold_of);
    free(rows);
    free(nodes);
    free(sums);
    free(keys);
    free(skeys);
    free(paths);
    replay_groups_free(&g);
}

static void publish_row_paths(struct pes_report *rep, const struct reuse *r,
                              struct pes_rnode *const *row_node, const struct site_row *rows,
                              size_t n_rows, const struct replay_groups *g,
                              const struct pes_site_reuse *raw, size_t nraw,
                              const uint32_t *fold_of)
{
    /* counting sort of the raw rows by group */
    uint32_t *start = calloc(n_rows + 1, sizeof *start),
             *idx = malloc((nraw ? nraw : 1) * sizeof *idx);
    uint32_t *sites = malloc((nraw ? nraw : 1) * sizeof *sites),
             *paths = malloc((nraw ? nraw : 1) * sizeof *paths);
    uint64_t *values = malloc((nraw ? nraw : 1) * sizeof *values);
    if (!start || !idx || !sites || !paths || !values) {
        pes_r_array(rep, NULL, NULL);
    } else {
        for (size_t i = 0; i < nraw; i++)
            start[g->of[fold_of[i]] + 1]++;
        for (size_t j = 0; j < n_rows; j++)
            start[j + 1] += start[j];
        for (size_t i = 0; i < nraw; i++)
            idx[start[g->of[fold_of[i]]]++] = (uint32_t)i;
        for (size_t j = n_rows; j > 0; j--)
            start[j] = start[j - 1];
        start[0] = 0;
        for (size_t j = 0; j < n_rows; j++) {
            uint32_t grp = rows[j].site, n = 0;
            for (uint32_t k = start[grp]; k < start[grp + 1]; k++, n++) {
                const struct pes_site_reuse *x = &raw[idx[k]];
                sites[n] = replay_pathkeys_site(r->pk, x->site);
                paths[n] = replay_pathkeys_path(r->pk, x->site);
                values[n] = x->accesses;
            }
            replay_callpaths_publish(rep, row_node[j], r->si, "accesses", sites, paths, values, n,
                                     rows[j].accesses);
        }
    }
    free(start);
    free(idx);
    free(sites);
    free(paths);
    free(values);
}

/* One row per site, most line accesses first; means are over finite
 * distances, in lines. With --by object the profiles' rows are objects and
 * only the groups list them. */
static void publish_sites(struct pes_report *rep, struct pes_rnode *parent, const struct reuse *r)
{
    size_t np = 0, nraw = 0;
    const struct pes_site_reuse *p = pes_profiles_sites(r->prof, &np), *raw = NULL;
    struct pes_site_reuse *folded = NULL, *whole = NULL;
    uint32_t *fold_of = NULL;
    if (r->pk) { /* the rows are triples: added per key */
        raw = p;
        nraw = np;
        if ((r->part_triples && !(raw = whole = unpart(r, p, np, &nraw))) ||
            !(folded = fold(r, raw, nraw, &np, &fold_of))) {
            free(whole);
            pes_r_array(rep, NULL, NULL); /* marks the report failed */
            return;
        }
        p = folded;
    }
    struct site_row *rows = calloc(np ? np : 1, sizeof *rows);
    struct pes_rnode *arr = pes_r_array(rep, parent, "sites");
    publish_groups(rep, parent, r, p, np, raw, nraw, fold_of);
    if (r->by == REPLAY_BY_OBJECT)
        np = 0;
    if (!rows) {
        free(folded);
        free(fold_of);
        free(whole);
        pes_r_array(rep, NULL, NULL); /* marks the report failed */
        return;
    }
    for (size_t i = 0; i < np; i++)
        rows[i] = (struct site_row){
            .site = p[i].site,
            .accesses = p[i].accesses,
            .prd_cold = p[i].prd_cold,
            .crd_cold = p[i].crd_cold,
            .prd_mean = mean(p[i].prd_sum, p[i].accesses, p[i].prd_cold),
            .crd_mean = mean(p[i].crd_sum, p[i].accesses, p[i].crd_cold),
        };
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
    free(folded);
    free(fold_of);
    free(whole);
}

static void publish(void *self, const struct pes_publish *to)
{
    struct reuse *r = self;
    struct pes_report *rep = to->r;
    struct pes_rnode *prd = pes_r_array(rep, to->config, "prd");
    for (uint32_t st = 0; st < pes_profiles_streams(r->prof); st++) {
        struct pes_rnode *o = pes_r_object(rep, prd, NULL);
        pes_r_u64(rep, o, "stream", st);
        replay_publish_histogram(rep, o, pes_profiles_prd(r->prof, st), r->si);
    }
    struct pes_rnode *crd = pes_r_array(rep, to->config, "crd");
    for (uint32_t g = 0; g < pes_profiles_groups(r->prof); g++) {
        struct pes_rnode *o = pes_r_object(rep, crd, NULL);
        pes_r_u64(rep, o, "group", g);
        replay_publish_histogram(rep, o, pes_profiles_crd(r->prof, g), r->si);
    }
    publish_sites(rep, to->config, r);
    replay_publish_model(rep, to->config, &r->model, r->si);
}

static void destroy(void *self)
{
    struct reuse *r = self;
    replay_pathkeys_destroy(r->pk);
    free(r->pk_ids);
    pes_profiles_destroy(r->prof);
    pes_profiles_destroy(r->pages);
    replay_page_prd_destroy(r->page_parts);
    replay_prefetch_destroy(r->ahead);
    for (uint32_t k = 0; r->part_triples && k < r->parts; k++)
        free(r->part_triples[k]);
    free(r->part_triples);
    free(r->n_part_triples);
    free(r->zeros);
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
    .sync = sync,
    .part_pack = part_pack,
    .part_merge = part_merge,
};
