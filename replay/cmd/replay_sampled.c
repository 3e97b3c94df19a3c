/*
 * replay_sampled.c — `pes-replay SAMPLED` and `pes-replay --compare SAMPLED
 * FULL`: the sampled trace's events (then, for --compare, the full trace's
 * accesses) through the registry's analyses into one report (the sampled
 * analyses, sampled_*.c, or the accuracy join, accuracy.c, publish it;
 * docs/accuracy.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "pipeline.h"
#include "pes/progress.h"
#include "replay_run.h"
#include "report_util.h"
#include "sampled.h"
#include "weights.h"
#include "writers.h"

/* The stream of an input: its header, threads, damage. */
static struct pes_stream_info stream_of(struct replay_input *in, const char *path, uint32_t kind)
{
    return (struct pes_stream_info){
        .path = path,
        .kind = kind,
        .header = replay_input_info(in),
        .settings = replay_input_settings(in),
        .n_streams = replay_input_threads(in),
        .truncated = replay_input_truncation(in) != NULL,
        .skipped_blocks = replay_input_skipped(in, NULL),
        .site = replay_site_of_input,
        .site_ctx = in,
    };
}

/* What the full trace's stream needs besides (--compare): shared caches
 * (--sockets if given, else what the collector simulated; threads in compact
 * blocks), the sampled trace's line size, the machine. */
static int pair_full(struct pes_stream_info *full, struct replay_input *fin,
                     const struct replay_options *o, const struct pes_machine *m,
                     const struct pes_collect_settings *sampled, uint32_t **cache,
                     struct pes_error *err)
{
    uint32_t n = full->n_streams;
    uint32_t sockets = o->sockets > 1 ? o->sockets : sampled->sockets;
    if (sockets == 0)
        sockets = 1;
    if (sockets > n)
        sockets = n;
    uint32_t line = sampled->line_size;
    if (line == 0 || (line & (line - 1)))
        line = (uint32_t)pes_settings_find("line_size")->def;
    if (!(*cache = calloc(n ? n : 1, sizeof **cache)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        (*cache)[i] = pes_stream_compact_cache(i, n, sockets);
    full->n_caches = sockets;
    full->stream_cache = *cache;
    full->line = line;
    full->machine = m;
    replay_input_set_range_cap(fin, replay_range_cap(line, m->level[0].line));
    full->range_cap = replay_input_range_cap(fin);
    return 0;
}

/* The pipeline's sink, counting for the progress line. */
struct counted {
    struct pes_batch_sink sink;
    const struct pes_batch_sink *to;
    struct pes_progress *progress;
};

static int count(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct counted *c = ctx;
    pes_progress_add(c->progress, b->n_events + b->n + b->n_bbs);
    return c->to->batch(c->to->ctx, b, err);
}

/* The analyses over the events (and the full trace's accesses), into rep. */
static int analyse(const struct replay_options *o, const struct pes_machine *m,
                   struct replay_input *sin, struct replay_input *fin, struct pes_report *rep,
                   struct pes_error *err)
{
    struct pes_stream_info si = stream_of(sin, o->trace, PES_TRACE_SAMPLED), full;
    si.machine = m;
    uint32_t *cache = NULL;
    int rc = -1;
    si.objects = replay_input_objects_setup(sin, o);
    /* what each event stands for, known before the first batch (weights.h) */
    struct pes_weights *weights = pes_weights_build(o->trace, si.settings, si.n_streams, err);
    if (!weights)
        return -1;
    si.weights = weights;
    if (fin) {
        full = stream_of(fin, o->full, PES_TRACE_FULL);
        full.objects = replay_input_objects_setup(fin, o);
        if (pair_full(&full, fin, o, m, si.settings, &cache, err) < 0) {
            pes_weights_free(weights);
            return -1;
        }
        si.paired = &full;
    }
    struct pes_pipeline *p = pes_pipeline_create(&si, &o->knobs, err);
    struct counted c = {.sink = {.batch = count},
                        .progress = pes_progress_start(o->trace, 0, "records")};
    c.sink.ctx = &c;
    /* the total (index scans) only when the line is drawn */
    if (c.progress)
        pes_progress_more(c.progress, replay_input_records_estimate(sin) +
                                          (fin ? replay_input_records_estimate(fin) : 0));
    if (p)
        c.to = pes_pipeline_sink(p);
    if (p && replay_input_run(sin, &c.sink, err) == 0 &&
        (!fin || replay_input_run(fin, &c.sink, err) == 0) && pes_pipeline_finish(p, err) == 0) {
        /* the report's format version first, as in every pes-replay JSON report */
        pes_r_u64(rep, pes_report_root(rep), "pes_replay_json", REPLAY_JSON_VERSION);
        struct pes_publish to = {.r = rep, .trace = pes_report_root(rep)};
        pes_pipeline_publish(p, &to);
        rc = 0;
    }
    pes_progress_end(c.progress);
    pes_pipeline_destroy(p);
    pes_weights_free(weights);
    free(cache);
    return rc;
}

static int write_report(const struct replay_options *o, const struct pes_report *rep,
                        struct pes_error *err)
{
    FILE *out = stdout;
    if (o->output && !(out = fopen(o->output, "w")))
        return pes_error_set(err, PES_ERR_IO, 0, "-o %s: %s", o->output, strerror(errno));
    int wr = o->format == REPLAY_JSON ? pes_report_write_json(out, rep)
                                      : pes_report_write_sampled_text(out, rep);
    int rc = 0;
    if (wr < 0 || fflush(out) != 0)
        rc = pes_error_set(err, PES_ERR_IO, 0, "%s: write failed: %s",
                           o->output ? o->output : "stdout", strerror(errno));
    else
        rc = replay_write_csv_dir(o, rep, err);
    if (out != stdout)
        fclose(out);
    return rc;
}

struct pes_report *replay_sampled_report(const struct replay_options *o,
                                         const struct pes_machine *m, struct pes_error *err)
{
    struct replay_input *sin = NULL, *fin = NULL;
    struct pes_report *rep = NULL;
    int rc = -1;
    if (!(sin = replay_input_open_sampled(o->trace, err)))
        goto done;
    replay_input_warnings(sin);
    if (o->compare) {
        if (!(fin = replay_input_open(o->full, err)))
            goto done;
        replay_input_warnings(fin);
    }
    if (!(rep = pes_report_create())) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        goto done;
    }
    if (analyse(o, m, sin, fin, rep, err) < 0)
        goto done;
    pes_findings_add(rep); /* none for --compare */
    if (pes_report_failed(rep)) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory while building the report");
        goto done;
    }
    const struct pes_rnode *root = pes_report_tree(rep);
    uint64_t lost = pes_r_get_u(root, "lost");
    if (lost)
        replay_message(
            "warning: %s: the collector lost %llu samples or events (LOST events: a full "
            "buffer or the kernel's ring); the counts and histograms lack them",
            o->trace, (unsigned long long)lost);
    const struct pes_rnode *comm = pes_r_get(root, "comm");
    if (comm && pes_r_get_u(comm, "time_bins"))
        replay_message(
            "warning: %s: too many samples on shared lines for the exact interleave sweep: each "
            "thread's rate was averaged over %llu time bins (docs/accuracy.md)",
            o->trace, (unsigned long long)pes_r_get_u(comm, "time_bins"));
    char clipped[sizeof err->message];
    if (fin && replay_input_clipped(fin, clipped, sizeof clipped))
        replay_message("warning: %s", clipped);
    if (fin && !pes_r_get_u(root, "same_execution"))
        replay_message("warning: %s and %s come from different executions", o->trace, o->full);
    rc = 0;
done:
    replay_input_close(fin);
    replay_input_close(sin);
    if (rc == 0)
        return rep;
    pes_report_destroy(rep);
    return NULL;
}

int replay_sampled(const struct replay_options *o, const struct pes_machine *m)
{
    struct pes_error err = {0};
    struct pes_report *rep = NULL;
    int rc = -1;
    if (o->format == REPLAY_CSV)
        pes_error_set(&err, PES_ERR_ARG, 0,
                      "--format csv: sampled and --compare reports are text or json; "
                      "--csv-dir DIR writes each of their tables as CSV");
    else if ((rep = replay_sampled_report(o, m, &err)))
        rc = write_report(o, rep, &err);
    if (rc)
        replay_message("%s", err.message);
    pes_report_destroy(rep);
    return rc ? 1 : 0;
}
