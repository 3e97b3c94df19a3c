/*
 * replay_run.c — the replay of a full trace (or another tool's address
 * trace) through the registry's analyses into one report: what pes-replay
 * and pes-replay-mpi share (replay_run.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callpath.h"
#include "cpu_account.h"
#include "assumptions.h"
#include "findings.h"
#include "pipeline.h"
#include "pes/progress.h"
#include "profiles.h"
#include "replay_run.h"
#include "scheduler.h"
#include "report_util.h"
#include "reuse_model.h"
#include "shards.h"
#include "tables.h"
#include "writers.h"

int replay_part_failure(struct pes_error *err, const char *who, uint32_t from, int code,
                        const char *message)
{
    /* reading in parts, a damaged input may be met by another part first:
     * its line is pes-replay's, which names no part */
    if (code == PES_ERR_FORMAT || code == PES_ERR_IO || code == PES_ERR_VERSION ||
        code == PES_ERR_TRUNCATED)
        return pes_error_set(err, code, 0, "%s", message);
    return pes_error_set(err, PES_ERR_ARG, 0, "%s %u: %s", who, from, message);
}

int replay_fail(const struct pes_error *err)
{
    replay_message("%s", err->message);
    return 1;
}

int replay_load_machine(const struct replay_options *o, struct pes_machine *m,
                        struct pes_error *err)
{
    if (pes_machine_load(o->machine, m, err) < 0)
        return -1;
    char path[4096];
    if (!strcmp(o->machine, "host") && m->validation == PES_MACHINE_CALIBRATED &&
        pes_machine_host_calibration_path(path, sizeof path, NULL) == 0)
        replay_message("machine host: this host's calibration %s (pes-calibrate)", path);
    if (o->cache_spec && pes_machine_apply_cache_spec(m, o->cache_spec, err) < 0)
        return -1;
    return pes_machine_validate(m, err);
}

/* A report file of a side table (--comm-csv, --sites-csv). */
static int write_side_file(const char *flag, const char *path,
                           int (*write)(FILE *, const struct pes_report_view *),
                           const struct pes_report_view *v, struct pes_error *err)
{
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (f) {
        rc = write(f, v);
        if (fclose(f) != 0)
            rc = -1;
    }
    if (rc < 0)
        snprintf(err->message, sizeof err->message, "%s %s: %s", flag, path, strerror(errno));
    return rc;
}

int replay_write_csv_dir(const struct replay_options *o, const struct pes_report *rep,
                         struct pes_error *err)
{
    if (o->html) {
        json_t *h = pes_report_to_json(rep);
        int hr =
            h ? pes_report_write_html_file(o->html, h, rep, err->message, sizeof err->message) : -1;
        if (!h)
            snprintf(err->message, sizeof err->message, "--html %s: the report is incomplete",
                     o->html);
        json_decref(h);
        if (hr < 0)
            return -1;
    }
    if (!o->csv_dir)
        return 0;
    json_t *j = pes_report_to_json(rep);
    int rc = j ? pes_report_write_csv_dir(j, o->csv_dir, err->message, sizeof err->message)
               : pes_error_set(err, PES_ERR_NOMEM, 0, "--csv-dir: out of memory");
    json_decref(j);
    return rc < 0 ? -1 : 0;
}

const struct pes_site *replay_site_of_input(const void *in, uint32_t id)
{
    return replay_input_site(in, id);
}

void replay_input_warnings(const struct replay_input *in)
{
    const char *msg;
    if ((msg = replay_input_truncation(in)))
        replay_message("warning: %s", msg);
    if (replay_input_skipped(in, &msg))
        replay_message("warning: %s", msg);
}

struct pes_objects *replay_input_objects_setup(struct replay_input *in,
                                               const struct replay_options *o)
{
    replay_input_set_objects(in, !o->no_objects);
    struct pes_objects *objects = replay_input_objects(in);
    const char *msg = replay_input_objects_warning(in);
    if (msg)
        replay_message("warning: %s", msg);
    return objects;
}

/* What every configuration shares: the input, the options, the report. */
struct run {
    struct replay_input *in;
    const struct replay_options *o;
    struct pes_knobs knobs;
    const struct pes_machine *machine;
    uint32_t line;
    struct pes_report *rep;
    struct pes_rnode *trace, *configs;
    const struct replay_hooks *hooks;
    struct pes_batch_sink tick;    /* hooks->progress and the progress line, then the pipeline */
    struct pes_progress *progress; /* on a terminal only (pes/progress.h) */
    const struct pes_batch_sink *to;
    pthread_mutex_t progress_mu;     /* configurations side by side draw one line */
    struct pes_profiles_split split; /* hooks->split, in parts */
    int later_part; /* this process read a part after the first: its counts went to part 0 */
    struct pes_stream_info *si; /* the recorded threads' (run_recorded) */
    double part_cpu0;           /* --parts, part 0: its thread's CPU clock when the parts began */
};

static int tick(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct run *run = ctx;
    if (run->hooks && run->hooks->progress && run->hooks->progress(run->hooks->ctx, err) < 0)
        return -1;
    uint64_t n = b->n + b->n_bbs + b->dropped_reads + b->dropped_writes;
    if (run->hooks && run->hooks->records) /* parts on threads: part 0 draws all */
        pes_progress_update(run->progress, run->hooks->records(run->hooks->ctx, n));
    else
        pes_progress_add(run->progress, n);
    return run->to->batch(run->to->ctx, b, err);
}

/* Where a source delivers for pipeline p. */
static const struct pes_batch_sink *sink_of(struct run *run, struct pes_pipeline *p)
{
    if (!run->progress && (!run->hooks || !run->hooks->progress))
        return pes_pipeline_sink(p);
    run->to = pes_pipeline_sink(p);
    run->tick = (struct pes_batch_sink){.batch = tick, .ctx = run};
    return &run->tick;
}

/* A configuration's section: {"cores":N,"mimicked":B, ... its analyses ...}. */
static struct pes_rnode *config_node_in(struct pes_report *r, struct pes_rnode *configs,
                                        uint32_t cores, int mimicked)
{
    struct pes_rnode *c = pes_r_object(r, configs, NULL);
    pes_r_u64(r, c, "cores", cores);
    pes_r_bool(r, c, "mimicked", mimicked);
    return c;
}

static struct pes_rnode *config_node(struct run *run, uint32_t cores, int mimicked)
{
    return config_node_in(run->rep, run->configs, cores, mimicked);
}

/* Whether this process reads only its part of the recorded stream: the
 * same answer on every process (the same options and the same file). */
static int in_parts(struct run *run, const struct pes_stream_info *si)
{
    const struct replay_hooks *h = run->hooks;
    /* --by object: a part's batches carry no objects (replay_input_set_part) */
    int by_object = run->knobs.by && strcmp(run->knobs.by, "object") == 0;
    /* --parts auto: each part holds every thread's state (e2e.replay_memory:
     * 100,000 threads under ulimit -v), so not for traces of very many */
    int too_many = h && h->threads && run->o->parts == REPLAY_PARTS_AUTO &&
                   si->n_streams > REPLAY_PARTS_MAX_STREAMS;
    return h && h->parts > 1 && h->split && !run->o->n_cores && !by_object && !too_many &&
           pes_analyses_can_part(si, &run->knobs);
}

/* After this process's part: its counts to part 0, or, on part 0, the
 * others' merged in order. */
static int exchange_parts_in_order(struct run *run, struct pes_pipeline *p, struct pes_error *err)
{
    const struct replay_hooks *h = run->hooks;
    if (pes_pipeline_sync(p, err) < 0)
        return -1;
    /* call paths: [u64 bytes][the part's effect] after the clipping counts */
    const struct pes_callpaths_effect *eff = replay_input_callpath_effect(run->in);
    int paths = run->si->callpaths != NULL;
    if (h->part != 0) {
        size_t n = 0;
        uint64_t ne = paths && eff ? pes_callpaths_effect_pack(eff, NULL, 0) : 0;
        size_t head = REPLAY_CLIP_BYTES + (paths ? sizeof ne + (size_t)ne : 0);
        unsigned char *counts = pes_pipeline_part_pack(p, &n, err);
        unsigned char *buf = counts ? malloc(head + n) : NULL;
        if (counts && !buf)
            pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        if (buf) {
            replay_input_clip_pack(run->in, buf);
            if (paths) {
                memcpy(buf + REPLAY_CLIP_BYTES, &ne, sizeof ne);
                if (ne)
                    pes_callpaths_effect_pack(eff, buf + REPLAY_CLIP_BYTES + sizeof ne, ne);
            }
            memcpy(buf + head, counts, n);
        }
        free(counts);
        return buf ? h->part_send(h->ctx, buf, head + n, err) : -1;
    }
    /* part 0 resolves each part's symbolic paths from the state at its
     * start (callpath.h, parts), adding its new paths to the whole table */
    struct pes_error cp_err = {0};
    struct pes_callpaths *whole = paths ? replay_input_callpaths(run->in, &cp_err) : NULL,
                         *state = paths ? replay_input_callpath_end(run->in) : NULL;
    if (paths && (!whole || !state)) {
        pes_callpaths_destroy(state);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory for call paths");
    }
    int rc = 0;
    for (uint32_t from = 1; from < h->parts && rc == 0; from++) {
        void *buf = NULL;
        size_t n = 0;
        if (h->part_recv(h->ctx, from, &buf, &n, err) < 0) {
            rc = -1;
            break;
        }
        unsigned char *at = (unsigned char *)buf + REPLAY_CLIP_BYTES;
        size_t left = n < REPLAY_CLIP_BYTES ? 0 : n - REPLAY_CLIP_BYTES;
        uint32_t *map = NULL;
        if (n < REPLAY_CLIP_BYTES)
            rc = pes_error_set(err, PES_ERR_FORMAT, 0, "part %u: no counts", from);
        if (rc == 0 && paths) {
            uint64_t ne = 0;
            if (left >= sizeof ne)
                memcpy(&ne, at, sizeof ne);
            struct pes_callpaths_effect *e = NULL;
            if (left < sizeof ne || ne == 0 || ne > left - sizeof ne)
                rc = pes_error_set(err, PES_ERR_FORMAT, 0, "part %u: no call paths", from);
            else if (!(e = pes_callpaths_effect_unpack(at + sizeof ne, (size_t)ne, err)))
                rc = -1;
            else if (!(map = malloc(pes_callpaths_effect_count(e) * sizeof *map)) ||
                     pes_callpaths_resolve(state, e, whole, map) < 0)
                rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory for call paths");
            if (e) {
                run->si->callpath_map = map;
                run->si->callpath_map_n = pes_callpaths_effect_count(e);
            }
            pes_callpaths_effect_destroy(e);
            if (rc == 0) {
                at += sizeof ne + ne;
                left -= sizeof ne + (size_t)ne;
            }
        }
        if (rc == 0)
            rc = pes_pipeline_part_merge(p, at, left, err);
        if (rc == 0)
            replay_input_clip_merge(run->in, buf);
        run->si->callpath_map = NULL;
        run->si->callpath_map_n = 0;
        free(map);
        free(buf);
    }
    pes_callpaths_destroy(state);
    return rc;
}

static int exchange_parts(struct run *run, struct pes_pipeline *p, struct pes_error *err)
{
    /* a part's reading is a chain no number of threads shortens (--stats) */
    if (run->hooks->threads && run->hooks->part == 0)
        pes_cpu_chain(pes_cpu_stage("a part", PES_CPU_PARALLEL),
                      pes_cpu_thread_seconds() - run->part_cpu0);
    /* part 0 resolves the others' windows (in the sync) and merges their
     * counts one after the other: serial however many parts run */
    int back = run->hooks->part == 0
                   ? pes_cpu_switch(pes_cpu_stage("parts resolution", PES_CPU_SERIAL))
                   : -1;
    int rc = exchange_parts_in_order(run, p, err);
    if (back >= 0)
        pes_cpu_switch(back);
    return rc;
}

/* After a pipeline's finish, with shares (--simulate on pes-replay-mpi):
 * this process's share to process 0, or there the others' added in order. */
static int exchange_shares(struct run *run, struct pes_pipeline *p, struct pes_error *err)
{
    const struct replay_hooks *h = run->hooks;
    if (!h || h->shares < 2 || !run->knobs.simulate)
        return 0;
    if (h->share != 0) {
        size_t n = 0;
        void *buf = pes_pipeline_share_pack(p, &n, err);
        return buf ? h->part_send(h->ctx, buf, n, err) : -1;
    }
    for (uint32_t from = 1; from < h->shares; from++) {
        void *buf = NULL;
        size_t n = 0;
        if (h->part_recv(h->ctx, from, &buf, &n, err) < 0)
            return -1;
        int rc = pes_pipeline_share_merge(p, buf, n, err);
        free(buf);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A part's carry (pipeline.h): the stream after the part goes to the
 * analyses that carry their state across the part's end until they say
 * stop, read by a second input of the same trace from the next part on. */
struct carry_sink {
    struct pes_pipeline *p;
    int done;
};

static int carry_batch(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct carry_sink *c = ctx;
    int rc = pes_pipeline_carry(c->p, b, err);
    if (rc == 1) { /* stops the reading; not an error (carry_parts) */
        c->done = 1;
        return pes_error_set(err, PES_ERR_ARG, 0, "carried");
    }
    return rc;
}

static int carry_parts(struct run *run, struct pes_pipeline *p, struct pes_error *err)
{
    const struct replay_hooks *h = run->hooks;
    struct carry_sink c = {.p = p};
    if (h->part + 1 >= h->parts || !pes_pipeline_carries(p))
        return 0;
    int rc = pes_pipeline_carry(p, &(struct pes_batch){0}, err); /* maybe nothing to carry */
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    struct replay_input *in = replay_input_open_as(run->o->trace, run->o->input_format, err);
    if (!in)
        return -1;
    replay_input_set_range_cap(in, replay_input_range_cap(run->in));
    replay_input_set_objects(in, 0);
    replay_input_set_threads(in, 1);
    rc = replay_input_set_part_to_end(in, h->part + 1, h->parts, err);
    if (rc == 0)
        rc = replay_input_run(in, &(struct pes_batch_sink){.batch = carry_batch, .ctx = &c}, err);
    if (c.done) {
        *err = (struct pes_error){0};
        rc = 0;
    } else if (rc == 0) {
        rc = pes_pipeline_carry(p, NULL, err) < 0 ? -1 : 0;
    }
    replay_input_close(in);
    return rc;
}

/* pes-replay --parts: this part runs on its own thread, without workers
 * (the other parts are the parallelism); part 0 starts the others now that
 * it knows the report allows parts, and its reading divides like theirs. */
static int begin_thread_part(struct run *run, struct pes_knobs *knobs, struct pes_error *err)
{
    knobs->jobs = 1;
    knobs->sched = NULL;
    replay_input_set_threads(run->in, 1);
    replay_input_set_workers(run->in, NULL);
    if (run->hooks->part != 0)
        return 0;
    if (pes_cpu_enabled()) {
        pes_cpu_thread_end();
        pes_cpu_thread_begin("part", 0, 0, pes_cpu_stage("setup", 0));
        run->part_cpu0 = pes_cpu_thread_seconds();
    }
    return run->hooks->parts_begin(run->hooks->ctx, err);
}

/* The recorded threads: the summary always, and the other analyses unless
 * --cores mimics cores instead. */
static int run_recorded(struct run *run, struct pes_error *err)
{
    struct replay_input *in = run->in;
    const struct replay_options *o = run->o;
    uint32_t n = replay_input_threads(in), sockets = o->sockets < n ? o->sockets : n;
    uint32_t *cache = calloc(n, sizeof *cache);
    if (!cache)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t t = 0; t < n; t++)
        cache[t] = pes_stream_compact_cache(t, n, sockets);
    struct pes_stream_info si = {
        .path = o->trace,
        .n_streams = n,
        .n_caches = sockets,
        .stream_cache = cache,
        .machine = run->machine,
        .line = run->line,
        .range_cap = replay_input_range_cap(in),
        .page_size = o->page_size,
        .site = replay_site_of_input,
        .site_ctx = in,
    };
    run->si = &si;
    /* call paths: in parts, each part's resolved by part 0 (exchange_parts_in_order) */
    replay_input_set_callpaths(in, o->callpath_depth);
    struct pes_error cp_err = {0};
    si.callpaths = replay_input_callpaths(in, &cp_err);
    if (!si.callpaths && cp_err.code) {
        free(cache);
        *err = cp_err;
        return -1;
    }
    int parts = in_parts(run, &si);
    struct pes_knobs knobs = run->knobs;
    if (parts) {
        run->split = *run->hooks->split;
        run->split.parts = 1;
        knobs.split = &run->split;
    }
    struct pes_pipeline *p = NULL;
    /* no objects in parts, but their warning (a binary missing) as without */
    if (parts && run->hooks->part == 0)
        replay_input_objects_setup(in, o);
    int rc = parts ? replay_input_set_part(in, run->hooks->part, run->hooks->parts, err) : 0;
    if (rc == 0 && parts && run->hooks->threads)
        rc = begin_thread_part(run, &knobs, err);
    /* objects: not in parts (replay_input_set_part) */
    if (rc == 0 && !parts)
        si.objects = replay_input_objects_setup(in, o);
    if (rc == 0 && !(p = pes_pipeline_create(&si, &knobs, err)))
        rc = -1;
    /* --sample-rate alone on another tool's trace: the estimators see only
     * their lines and the summary only counts, so the parsing threads drop
     * the other lines at once (the same choice, shards.h) instead of handing
     * 99 % of the records over to be rejected here */
    const struct pes_knobs *k = &knobs;
    struct pes_shards_filter sf;
    struct pes_shards_options so = {
        .granule = run->line, .rate = k->sample_rate, .seed = k->sample_seed};
    struct pes_error probe = {0}; /* a filter that cannot be set up is only not used */
    int filtered =
        rc == 0 && k->sample_rate > 0 && !k->sample_check && !k->simulate && !k->mimic &&
        !k->split && pes_shards_filter_init(&sf, &so, &probe) == 0 &&
        replay_input_set_filter(in, &(struct pes_text_filter){pes_shards_filter_records, &sf});
    if (rc == 0)
        rc = replay_input_run(in, sink_of(run, p), err);
    if (filtered)
        replay_input_set_filter(in, NULL);
    if (rc == 0 && parts)
        rc = carry_parts(run, p, err);
    if (rc == 0 && parts)
        rc = exchange_parts(run, p, err);
    run->later_part = parts && run->hooks->part != 0;
    if (rc == 0)
        rc = pes_pipeline_finish(p, err);
    if (rc == 0 && !o->n_cores)
        rc = exchange_shares(run, p, err);
    if (rc == 0) {
        pes_r_u64(run->rep, run->trace, "clipped_ranges", replay_input_clipped(in, NULL, 0));
        struct pes_publish to = {.r = run->rep,
                                 .trace = run->trace,
                                 .config = o->n_cores ? NULL : config_node(run, n, 0)};
        pes_pipeline_publish(p, &to);
    }
    pes_pipeline_destroy(p);
    free(cache);
    run->si = NULL;
    return rc;
}

/* One --cores configuration: its stream, its analyses and their outcome. */
struct config_run {
    struct run *run;
    const struct pes_mimic_counts *counts;
    struct pes_mimic_options mo;
    struct pes_stream_info si;
    struct pes_knobs knobs;
    uint32_t first_lane; /* its cores' lanes of the objects (replay_mimic_run) */
    struct pes_pipeline *p;
    struct pes_batch_sink tick;      /* the progress line, then the pipeline */
    struct pes_callpaths *callpaths; /* its cores' (a trace with call edges), else NULL */
    int rc;
    struct pes_error err;
};

static int config_tick(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct config_run *c = ctx;
    pthread_mutex_lock(&c->run->progress_mu);
    pes_progress_add(c->run->progress, b->n + b->n_bbs);
    pthread_mutex_unlock(&c->run->progress_mu);
    return pes_pipeline_sink(c->p)->batch(pes_pipeline_sink(c->p)->ctx, b, err);
}

/* A configuration's pass and the end of its analyses (a task: every
 * configuration's on a worker of its own, side by side). */
static void run_config(void *arg)
{
    struct config_run *c = arg;
    const struct pes_batch_sink *sink = c->run->progress ? &c->tick : pes_pipeline_sink(c->p);
    c->rc =
        replay_mimic_run(c->run->in, c->counts, &c->mo, c->first_lane, c->callpaths, sink, &c->err);
    if (c->rc == 0)
        c->rc = pes_pipeline_finish(c->p, &c->err);
}

/* pes-replay-mpi (shares > 1) deals the --cores configurations out: each
 * runs whole (its mimicked streams, engines and simulation) on one process,
 * as pes-replay runs it, and its report section travels packed
 * (pes_report_pack) to process 0, which adds the sections in configuration
 * order. Each section is independent of the others, so the report is
 * pes-replay's whatever the number of processes. */
struct deal {
    uint32_t me, procs;
    uint32_t *owner;           /* [n_cores] the process of each configuration */
    struct pes_report *mine;   /* this process's sections, before they travel */
    struct pes_rnode *configs; /* in mine */
    struct pes_rnode *trace;   /* in mine: a configuration publishes nothing there */
    void **packed;             /* [n_cores] this process's sections, packed */
    size_t *len;
};

static int deal_begin(struct deal *d, const struct run *run, const uint32_t *cores,
                      uint32_t n_cores, struct pes_error *err)
{
    const struct replay_hooks *h = run->hooks;
    *d = (struct deal){.me = h->share, .procs = h->shares};
    d->mine = pes_report_create();
    d->packed = calloc(n_cores, sizeof *d->packed);
    d->len = calloc(n_cores, sizeof *d->len);
    d->owner = calloc(n_cores, sizeof *d->owner);
    uint64_t *load = calloc(d->procs, sizeof *load);
    uint8_t *dealt = calloc(n_cores, 1);
    /* largest first, each to the least loaded process (the lowest on a tie):
     * a configuration of c cores costs about c + 1 units (its c streams and
     * their simulation, plus the recorded stream every process reads); the
     * same answer on every process */
    for (uint32_t k = 0; load && dealt && d->owner && k < n_cores; k++) {
        uint32_t big = 0, to = 0;
        while (dealt[big])
            big++;
        for (uint32_t i = big + 1; i < n_cores; i++)
            if (!dealt[i] && cores[i] > cores[big])
                big = i;
        for (uint32_t q = 1; q < d->procs; q++)
            if (load[q] < load[to])
                to = q;
        dealt[big] = 1;
        d->owner[big] = to;
        load[to] += (uint64_t)cores[big] + 1;
    }
    int ok = load && dealt;
    free(load);
    free(dealt);
    if (d->mine) {
        d->configs = pes_r_array(d->mine, pes_report_root(d->mine), "configs");
        d->trace = pes_r_object(d->mine, pes_report_root(d->mine), "trace");
    }
    if (!ok || !d->mine || !d->packed || !d->len || !d->owner || pes_report_failed(d->mine))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

static void deal_end(struct deal *d, uint32_t n_cores)
{
    for (uint32_t i = 0; d->packed && i < n_cores; i++)
        free(d->packed[i]);
    free(d->packed);
    free(d->len);
    free(d->owner);
    pes_report_destroy(d->mine);
}

/* Configuration i's section, published into d->mine, packed. */
static int deal_pack(struct deal *d, uint32_t i, struct pes_error *err)
{
    const struct pes_rnode *node = pes_r_at(d->configs, pes_r_count(d->configs) - 1);
    if (pes_r_count(d->trace) != 0) /* the section would not hold all of its results */
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "configuration %u published outside its section: not distributed", i);
    if (pes_report_failed(d->mine) || !(d->packed[i] = pes_report_pack(node, &d->len[i])))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

/* After this process's configurations: to process 0 (in order, so that it
 * receives them as it adds them), or there every section in order. */
static int deal_finish(struct deal *d, struct run *run, uint32_t n_cores, struct pes_error *err)
{
    const struct replay_hooks *h = run->hooks;
    for (uint32_t i = 0; d->me != 0 && i < n_cores; i++) {
        if (d->owner[i] != d->me)
            continue;
        void *buf = d->packed[i];
        d->packed[i] = NULL; /* the callee's */
        if (h->part_send(h->ctx, buf, d->len[i], err) < 0)
            return -1;
    }
    for (uint32_t i = 0; d->me == 0 && i < n_cores; i++) {
        uint32_t from = d->owner[i];
        void *buf = d->packed[i];
        size_t n = d->len[i];
        if (from != 0 && h->part_recv(h->ctx, from, &buf, &n, err) < 0)
            return -1;
        const char *why = pes_report_unpack(run->rep, run->configs, buf, n);
        if (from != 0)
            free(buf);
        if (why)
            return pes_error_set(err, PES_ERR_FORMAT, 0, "configuration %u from rank %u: %s", i,
                                 from, why);
    }
    return 0;
}

/* PPT-Multicore mimicking for every --cores count, with the recorded run's
 * work (bytes, op counts) for the runtime model. The configurations run
 * side by side on the replay's workers (each reads the trace itself, its
 * cores walking their own lanes of the data objects), and are published in
 * --cores order; pes-replay-mpi deals them to its processes (struct deal
 * above), each running its own one after the other. */
static int run_mimicked(struct run *run, struct pes_error *err)
{
    struct replay_input *in = run->in;
    const struct replay_options *o = run->o;
    if (!replay_input_has_bbs(in))
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "%s: --cores needs a basic-block table (a full trace of a pes-clang "
                             "build); this %s has none",
                             o->trace, replay_input_is_text(in) ? "text trace" : "trace");
    struct pes_work work = {.bytes = pes_r_get_u(run->trace, "bytes")};
    const struct pes_rnode *ops = pes_r_get(run->trace, "ops");
    for (int k = 0; k < PES_OP_COUNT; k++)
        work.ops[k] = pes_r_get_f(ops, pes_machine_op_key(k));
    replay_work_facts_from_report(&work, run->trace);
    struct pes_mimic_source src;
    replay_input_mimic_source(in, &src);
    struct pes_mimic_counts *counts = pes_mimic_count(&src, err);
    if (!counts)
        return -1;
    /* PPT-Multicore models one processor: every mimicked core shares its
     * last-level cache, as the single CRD group assumes. */
    static const uint32_t one_cache[PES_SIM_MAX_CORES];
    int side_by_side = (!run->hooks || run->hooks->threads) &&
                       pes_sched_workers(run->knobs.sched) >= 2 && o->n_cores > 1;
    int dealt = run->hooks && run->hooks->shares > 1;
    struct deal deal = {0};
    struct config_run *cfg = calloc(o->n_cores, sizeof *cfg);
    struct pes_strand **strands = calloc(o->n_cores, sizeof *strands);
    int rc = cfg && strands ? 0 : pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    if (rc == 0 && dealt)
        rc = deal_begin(&deal, run, o->cores, o->n_cores, err);
    /* lane 0 is the recorded pass's; configuration i's cores follow the earlier ones' */
    uint32_t lanes = 1;
    for (uint32_t i = 0; rc == 0 && i < o->n_cores; i++) {
        struct config_run *c = &cfg[i];
        c->run = run;
        c->counts = counts;
        c->mo = (struct pes_mimic_options){
            .n_cores = o->cores[i],
            .strategy = o->interleave,
            .seed = o->seed,
            .chunk = o->chunk,
            .per_region = o->per_region,
            .max_range = replay_input_range_cap(in),
            /* each core's private stream made ahead on the workers */
            .sched = pes_sched_workers(run->knobs.sched) >= 2 ? run->knobs.sched : NULL,
        };
        c->si = (struct pes_stream_info){
            .path = o->trace,
            .n_streams = o->cores[i],
            .mimicked = 1,
            .n_caches = 1,
            .stream_cache = one_cache,
            .machine = run->machine,
            .line = run->line,
            .range_cap = replay_input_range_cap(in),
            .page_size = o->page_size,
            .work = &work,
            .site = replay_site_of_input,
            .site_ctx = in,
            .objects = replay_input_objects(in), /* each core names them at its place in the run */
        };
        /* call paths: each core's the sequential run's at its place, in a table of its own */
        struct pes_error cp_err = {0};
        if (replay_input_callpaths(in, &cp_err) &&
            !(c->si.callpaths = c->callpaths =
                  pes_callpaths_create(o->callpath_depth, o->cores[i], NULL)))
            rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory for call paths");
        else if (cp_err.code) {
            *err = cp_err;
            rc = -1;
        }
        c->knobs = run->knobs;
        if (dealt) { /* the whole configuration here: no windows, no shares */
            c->knobs.split = NULL;
            c->knobs.share = 0;
            c->knobs.shares = 0;
        }
        if (side_by_side) { /* the reuse engines' threads shared out among the configurations */
            c->knobs.jobs = run->knobs.jobs / o->n_cores ? run->knobs.jobs / o->n_cores : 1;
            c->first_lane = lanes;
            lanes += o->cores[i];
        }
        c->tick = (struct pes_batch_sink){.batch = config_tick, .ctx = c};
    }
    if (rc == 0 && side_by_side && replay_input_object_lanes(in, lanes) < 0)
        rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    int st_config = pes_cpu_stage("mimicked configurations", PES_CPU_PARALLEL);
    for (uint32_t i = 0; rc == 0 && i < o->n_cores; i++) {
        struct config_run *c = &cfg[i];
        if (dealt && deal.owner[i] != deal.me)
            continue; /* another process's */
        if (!(c->p = pes_pipeline_create(&c->si, &c->knobs, err)))
            rc = -1;
        else if (!side_by_side) { /* here and now (pes-replay-mpi's messages go out in order) */
            const struct pes_batch_sink *sink = sink_of(run, c->p);
            c->rc = replay_mimic_run(in, counts, &c->mo, 0, c->callpaths, sink, &c->err);
            if (c->rc == 0)
                c->rc = pes_pipeline_finish(c->p, &c->err);
            if (c->rc == 0 && !dealt)
                c->rc = exchange_shares(run, c->p, &c->err);
            if (c->rc < 0) {
                *err = c->err;
                rc = -1;
            } else if (dealt) { /* its section travels (deal_finish) */
                struct pes_publish to = {
                    .r = deal.mine,
                    .trace = deal.trace,
                    .config = config_node_in(deal.mine, deal.configs, o->cores[i], 1)};
                pes_pipeline_publish(c->p, &to);
                rc = deal_pack(&deal, i, err);
            } else { /* one configuration's state at a time */
                struct pes_publish to = {
                    .r = run->rep, .trace = run->trace, .config = config_node(run, o->cores[i], 1)};
                pes_pipeline_publish(c->p, &to);
            }
            pes_pipeline_destroy(c->p);
            c->p = NULL;
        } else if (!(strands[i] = pes_strand_create(run->knobs.sched, st_config)) ||
                   pes_sched_submit(strands[i], run_config, c, err) < 0) {
            if (!strands[i])
                pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
            rc = -1;
        }
    }
    for (uint32_t i = 0; strands && i < o->n_cores; i++)
        pes_strand_destroy(strands[i]); /* waits for it */
    for (uint32_t i = 0; side_by_side && rc == 0 && i < o->n_cores; i++)
        if (cfg[i].rc < 0) { /* the first configuration's failure, as one after the other would */
            *err = cfg[i].err;
            rc = -1;
        }
    if (side_by_side && replay_input_object_lanes(in, 1) < 0 && rc == 0)
        rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t i = 0; side_by_side && rc == 0 && i < o->n_cores; i++) {
        struct pes_publish to = {
            .r = run->rep, .trace = run->trace, .config = config_node(run, o->cores[i], 1)};
        pes_pipeline_publish(cfg[i].p, &to);
    }
    if (rc == 0 && dealt)
        rc = deal_finish(&deal, run, o->n_cores, err);
    if (dealt)
        deal_end(&deal, o->n_cores);
    for (uint32_t i = 0; cfg && i < o->n_cores; i++) {
        pes_pipeline_destroy(cfg[i].p);
        pes_callpaths_destroy(cfg[i].callpaths);
    }
    free(cfg);
    free(strands);
    pes_mimic_counts_free(counts);
    return rc;
}

/* The report's run-level sections, before any analysis adds to them. */
/* What the collector kept (the header's roi, skip, max_accesses settings):
 * "region of interest (pes_roi_begin/end), first 100 accesses per
 * thread skipped, at most 50 per thread", or "" for the whole run. */
static void region_label(const struct pes_collect_settings *s, char *buf, size_t n)
{
    int used =
        snprintf(buf, n, "%s",
                 s->roi_state == PES_ROI_MARKERS ? "region of interest (pes_roi_begin/end)" : "");
    if (s->skip && used >= 0 && (size_t)used < n)
        used += snprintf(buf + used, n - (size_t)used, "%sfirst %llu accesses per thread skipped",
                         used ? ", " : "", (unsigned long long)s->skip);
    if (s->max_accesses && used >= 0 && (size_t)used < n)
        snprintf(buf + used, n - (size_t)used, "%sat most %llu accesses per thread",
                 used ? ", " : "", (unsigned long long)s->max_accesses);
}

static void report_head(struct run *run)
{
    struct pes_report *r = run->rep;
    struct pes_rnode *root = pes_report_root(r);
    const struct pes_trace_info *info = replay_input_info(run->in);
    int text = replay_input_is_text(run->in);
    pes_r_u64(r, root, "pes_replay_json", REPLAY_JSON_VERSION);
    struct pes_rnode *t = run->trace = pes_r_object(r, root, "trace");
    pes_r_str(r, t, "path", run->o->trace);
    pes_r_str(r, t, "kind", text ? "text" : "full");
    pes_r_str(r, t, "command", info && info->command ? info->command : "");
    if (info && info->command)
        pes_r_flag(pes_r_bool(r, t, "command_line", 1), PES_R_TEXT_ONLY);
    pes_r_bool(r, t, "truncated", replay_input_truncation(run->in) != NULL);
    pes_r_u64(r, t, "skipped_blocks", replay_input_skipped(run->in, NULL));
    pes_r_flag(pes_r_str(r, t, "label", text ? replay_input_text_kind(run->in) : "full trace"),
               PES_R_TEXT_ONLY);
    char region[256];
    region_label(replay_input_settings(run->in), region, sizeof region);
    if (region[0])
        pes_r_str(r, t, "region", region);
    struct pes_rnode *m = pes_r_object(r, root, "machine");
    pes_r_str(r, m, "name", run->machine->name);
    pes_r_f64(r, m, "ghz", run->machine->ghz, "%.6g");
    struct pes_rnode *levels = pes_r_array(r, m, "levels");
    for (uint32_t l = 0; l < run->machine->n_levels; l++) {
        const struct pes_cache_config *c = &run->machine->level[l];
        struct pes_rnode *lv = pes_r_object(r, levels, NULL);
        pes_r_u64(r, lv, "level", l + 1);
        pes_r_u64(r, lv, "size", c->size);
        pes_r_u64(r, lv, "ways", c->ways);
        pes_r_u64(r, lv, "line", c->line);
        pes_r_bool(r, lv, "shared", c->shared);
    }
    pes_r_u64(r, root, "line", run->line);
    run->configs = pes_r_array(r, root, "configs");
}

/* The input's warnings, for the text report (stderr has them too). */
static void report_warnings(struct run *run)
{
    struct pes_rnode *w =
        pes_r_flag(pes_r_array(run->rep, run->trace, "warnings"), PES_R_TEXT_ONLY);
    const char *msg;
    if ((msg = replay_input_truncation(run->in)))
        pes_r_str(run->rep, w, NULL, msg);
    if (replay_input_skipped(run->in, &msg))
        pes_r_str(run->rep, w, NULL, msg);
    char clipped[512];
    if (replay_input_clipped(run->in, clipped, sizeof clipped))
        pes_r_str(run->rep, w, NULL, clipped);
}

/* The report, in the format asked for, and the side files. */
static int write_report(struct run *run, struct pes_error *err)
{
    const struct replay_options *o = run->o;
    FILE *out = stdout;
    if (o->output && !(out = fopen(o->output, "w"))) {
        snprintf(err->message, sizeof err->message, "-o %s: %s", o->output, strerror(errno));
        return -1;
    }
    struct pes_report_view view = {.r = run->rep,
                                   .site = replay_site_of_input,
                                   .site_ctx = run->in,
                                   .top = o->knobs.top,
                                   .annotate = o->knobs.annotate};
    int wr = o->format == REPLAY_JSON  ? pes_report_write_json(out, run->rep)
             : o->format == REPLAY_CSV ? pes_report_write_csv(out, &view)
                                       : pes_report_write_text(out, &view);
    int rc = -1;
    if (wr < 0 || fflush(out) != 0)
        snprintf(err->message, sizeof err->message, "%s: write failed: %s",
                 o->output ? o->output : "stdout", strerror(errno));
    else if (o->comm_csv &&
             write_side_file("--comm-csv", o->comm_csv, pes_report_write_comm_csv, &view, err) < 0)
        ;
    else if (o->sites_csv && write_side_file("--sites-csv", o->sites_csv,
                                             pes_report_write_sites_csv, &view, err) < 0)
        ;
    else if (replay_write_csv_dir(o, run->rep, err) < 0)
        ;
    else
        rc = 0;
    if (out != stdout)
        fclose(out);
    return rc;
}

/* The analyses of the registry over the recorded threads or each --cores
 * configuration, into run->rep. 0, or -1 with err filled. */
static int analyse(struct run *run, struct pes_error *err)
{
    const struct replay_options *o = run->o;
    struct replay_input *in = run->in;
    replay_input_warnings(in);
    replay_input_set_range_cap(in, replay_range_cap(run->line, run->machine->level[0].line));
    replay_input_set_threads(in, o->knobs.jobs);
    replay_input_set_workers(in, run->knobs.sched);
    if (!run->rep)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    run->knobs.mimic = o->n_cores > 0;
    /* pes-replay only: MPI ranks would draw over each other; the total
     * (an index scan) only when the line is drawn */
    if ((!run->hooks || (run->hooks->threads && run->hooks->part == 0)) &&
        (run->progress = pes_progress_start(o->trace, 0, "records")))
        pes_progress_more(run->progress, replay_input_records_estimate(in) * (1 + o->n_cores));
    report_head(run);
    if (run_recorded(run, err) < 0)
        return -1;
    pes_progress_clear(run->progress);
    char clipped[sizeof err->message];
    if (replay_input_clipped(in, clipped, sizeof clipped))
        replay_message("warning: %s", clipped);
    if (!run->later_part && pes_r_get_u(run->trace, "accesses") == 0) {
        snprintf(err->message, sizeof err->message, "%s: the trace holds no memory accesses",
                 o->trace);
        return -1;
    }
    uint64_t threads = pes_r_get_u(run->trace, "threads");
    if (o->n_cores && threads > 1)
        replay_message(
            "warning: --cores mimics cores from a sequential run (PPT-Multicore); this trace "
            "has %u threads, whose records are taken in time order as one sequential stream "
            "(record with OMP_NUM_THREADS=1 for the paper's method)",
            (unsigned)threads);
    if (o->n_cores && run_mimicked(run, err) < 0)
        return -1;
    report_warnings(run);
    pes_assumptions_add(run->rep); /* needs the model and the simulation of each config */
    pes_findings_add(run->rep);    /* from the whole report: after every analysis published */
    if (pes_report_failed(run->rep))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory while building the report");
    return 0;
}

int replay_full(const struct replay_options *o, const struct pes_machine *machine,
                const struct replay_hooks *h)
{
    struct pes_error err = {0};
    uint32_t line = o->line ? o->line : machine->level[0].line;
    for (uint32_t l = 1; l < machine->n_levels; l++)
        if (machine->level[l].line != line && !o->line)
            replay_message(
                "warning: L%u has %u-byte lines; all levels are modelled with %u-byte lines", l + 1,
                machine->level[l].line, line);
    if (o->stats && !pes_cpu_enabled())
        pes_cpu_enable();
    /* pes-replay --parts: part 0 is the reading thread until parts begin */
    int a_part = h && h->threads && h->part != 0;
    pes_cpu_thread_begin(a_part ? "part" : "main", h ? h->part : 0, !a_part,
                         pes_cpu_stage("setup", 0));
    struct run run = {.o = o,
                      .machine = machine,
                      .line = line,
                      .knobs = o->knobs,
                      .hooks = h,
                      .progress_mu = PTHREAD_MUTEX_INITIALIZER};
    if (h) {
        run.knobs.split = h->threads ? NULL : h->split; /* threads: only in parts (run_recorded) */
        run.knobs.share = h->share;
        run.knobs.shares = h->shares;
    }
    /* the page's annotated source needs the per-line rows of --annotate (text
     * only: the text report prints them only when --annotate asks) */
    if (o->html && !run.knobs.annotate)
        run.knobs.annotate = "all";
    int rc = -1;
    /* the workers every parallel stage shares (scheduler.h); --jobs 1: none */
    if ((run.knobs.sched = pes_sched_create(o->knobs.jobs >= 2 ? o->knobs.jobs : 0, &err)) &&
        (run.in = replay_input_open_as(o->trace, o->input_format, &err))) {
        run.rep = pes_report_create();
        rc = analyse(&run, &err);
        pes_progress_end(run.progress);
    }
    pes_cpu_switch(pes_cpu_stage("report", 0));
    if (h && h->agree)
        rc = h->agree(h->ctx, rc, &err);
    if (rc == 0 && h && h->report) {
        *h->report = run.rep; /* the caller's now */
        run.rep = NULL;
    } else if (rc == 0 && !(h && h->no_report))
        rc = write_report(&run, &err);
    if (rc)
        replay_fail(&err);
    pes_report_destroy(run.rep);
    replay_input_close(run.in);
    pes_sched_destroy(run.knobs.sched);
    if (a_part) /* its whole thread, a chain (run_recorded's exchange_parts: part 0's) */
        pes_cpu_chain(pes_cpu_stage("a part", PES_CPU_PARALLEL), pes_cpu_thread_seconds());
    pes_cpu_thread_end();
    if (h && h->parts_end)
        h->parts_end(h->ctx);  /* the other parts' threads have ended: their CPU is in */
    if (o->stats && !a_part) { /* every rank's own table, named */
        char who[48];
        if (h && h->shares)
            snprintf(who, sizeof who, "pes-replay-mpi rank %u", h->share);
        else
            snprintf(who, sizeof who, "pes-replay");
        pes_cpu_report(stderr, who);
    }
    return rc ? 1 : 0;
}
