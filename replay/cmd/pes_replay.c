/*
 * pes_replay.c — `pes-replay TRACE [options]`: reuse profiles, SDCM hit rates,
 * runtime prediction and cache + MESI simulation of a full trace (or a
 * plain-text address trace). See `pes-replay --help` and docs/replay.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "pipeline.h"
#include "replay.h"
#include "report_util.h"

static int fail(const struct pes_error *err) {
    replay_message("%s", err->message);
    return 1;
}

static int load_machine(const struct replay_options *o, struct pes_machine *m, struct pes_error *err) {
    if (pes_machine_load(o->machine, m, err) < 0) return -1;
    if (o->cache_spec && pes_machine_apply_cache_spec(m, o->cache_spec, err) < 0) return -1;
    return pes_machine_validate(m, err);
}

/* The extra CSV outputs: communication matrix of the last configuration, or
 * the per-site table. */
static int write_side_file(const char *flag, const char *path, const struct replay_options *o,
                           const struct replay_input *in, const struct replay_result *res, struct pes_error *err) {
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (f) {
        rc = strcmp(flag, "--comm-csv") == 0 ? replay_report_comm_csv(f, &res->config[res->n_configs - 1])
                                             : replay_report_sites_csv(f, in, o, res);
        if (fclose(f) != 0) rc = -1;
    }
    if (rc < 0) snprintf(err->message, sizeof err->message, "%s %s: %s", flag, path, strerror(errno));
    return rc;
}

/* One configuration: the analyses over one source's stream. */
static int run_config(struct replay_input *in, const struct pes_stream_info *si, const struct pes_knobs *k,
                      const struct pes_mimic_counts *counts, const struct pes_mimic_options *mo,
                      struct replay_result *res, struct replay_config *cfg, struct pes_error *err) {
    struct pes_pipeline *p = pes_pipeline_create(si, k, err);
    if (!p) return -1;
    int rc = mo ? replay_mimic_run(in, counts, mo, pes_pipeline_sink(p), err)
                : replay_input_run(in, pes_pipeline_sink(p), err);
    if (rc == 0) rc = pes_pipeline_finish(p, res, cfg, err);
    pes_pipeline_destroy(p);
    return rc;
}

static const struct pes_site *input_site(const void *in, uint32_t id) { return replay_input_site(in, id); }

/* Thread t of n on `sockets` shared caches: contiguous blocks, like a compact
 * OpenMP placement (OMP_PLACES=cores, OMP_PROC_BIND=close). */
static uint32_t socket_of(uint32_t t, uint32_t n, uint32_t sockets) {
    return (uint32_t)((uint64_t)t * sockets / n);
}

/* The recorded threads: the summary always, and the other analyses unless
 * --cores mimics cores instead. */
static int run_recorded(struct replay_input *in, const struct replay_options *o, const struct pes_knobs *k,
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

    uint32_t n = replay_input_threads(in), sockets = o->sockets < n ? o->sockets : n;
    uint32_t *cache = calloc(n, sizeof *cache);
    if (!cache) return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t t = 0; t < n; t++) cache[t] = socket_of(t, n, sockets);
    struct pes_stream_info si = {
        .path = o->trace, .n_streams = n, .n_caches = sockets, .stream_cache = cache, .machine = &res->machine,
        .line = res->line, .range_cap = replay_input_range_cap(in), .page_size = o->page_size,
        .site = input_site, .site_ctx = in,
    };
    struct replay_config *cfg = NULL;
    if (!o->n_cores) {   /* recorded threads are the configuration */
        cfg = &res->config[res->n_configs++];
        memset(cfg, 0, sizeof *cfg);
        cfg->cores = n;
    }
    int rc = run_config(in, &si, k, NULL, NULL, res, cfg, err);
    s->clipped_ranges = replay_input_clipped(in, NULL, 0);
    free(cache);
    return rc;
}

/* PPT-Multicore mimicking for every --cores count. */
static int run_mimicked(struct replay_input *in, const struct replay_options *o, const struct pes_knobs *k,
                        struct replay_result *res, struct pes_error *err) {
    if (!replay_input_has_bbs(in))
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "%s: --cores needs a basic-block table (a full trace of a pes-clang build); this %s has none",
                             o->trace, replay_input_is_text(in) ? "text trace" : "trace");
    struct pes_mimic_source src;
    replay_input_mimic_source(in, &src);
    struct pes_mimic_counts *counts = pes_mimic_count(&src, err);
    if (!counts) return -1;
    /* PPT-Multicore models one processor: every mimicked core shares its
     * last-level cache, as the single CRD group assumes. */
    static const uint32_t one_cache[PES_SIM_MAX_CORES];
    int rc = 0;
    for (uint32_t i = 0; i < o->n_cores && rc == 0; i++) {
        struct replay_config *cfg = &res->config[res->n_configs++];
        memset(cfg, 0, sizeof *cfg);
        cfg->cores = o->cores[i];
        cfg->mimicked = 1;
        struct pes_mimic_options mo = {
            .n_cores = o->cores[i], .strategy = o->interleave, .seed = o->seed, .chunk = o->chunk,
            .per_region = o->per_region, .max_range = replay_input_range_cap(in),
        };
        struct pes_stream_info si = {
            .path = o->trace, .n_streams = o->cores[i], .mimicked = 1, .n_caches = 1, .stream_cache = one_cache,
            .machine = &res->machine, .line = res->line, .range_cap = replay_input_range_cap(in),
            .page_size = o->page_size, .site = input_site, .site_ctx = in,
        };
        rc = run_config(in, &si, k, counts, &mo, res, cfg, err);
    }
    pes_mimic_counts_free(counts);
    return rc;
}

int main(int argc, char **argv) {
    struct replay_options o;
    int rc = replay_parse_options(argc, argv, &o);
    if (rc != 0) return rc > 0 ? 0 : 2;

    struct pes_error err = {0};
    static struct replay_result res;
    if (load_machine(&o, &res.machine, &err) < 0) return fail(&err);
    if (o.show_machine) {
        pes_machine_print(&res.machine, stdout);
        return 0;
    }
    /* before anything opens them: a fifo would block, /dev/zero never end */
    if (replay_input_check_file(o.trace, &err) < 0 || (o.compare && replay_input_check_file(o.full, &err) < 0))
        return fail(&err);
    /* sampled traces and --compare: accuracy.h */
    if (!o.compare && replay_trace_kind(o.trace) == PES_TRACE_SAMPLED) {
        /* a sampled trace holds events, not the access stream these replay: say what works instead */
        if (o.full_only) {
            replay_message("%s: a sampled trace; --%s needs a full trace (pes-collect --full): "
                           "pes-replay %s alone reports its samples, --compare %s FULL their accuracy",
                           o.trace, o.full_only, o.trace, o.trace);
            return 2;
        }
        return replay_accuracy_main(&o, &res.machine);
    }
    if (o.compare) {
        /* unreadable traces are left to the analyses, which name the damage */
        int first = replay_trace_kind(o.trace), second = replay_trace_kind(o.full);
        if (first == PES_TRACE_FULL && second == PES_TRACE_SAMPLED) {
            replay_message("--compare SAMPLED FULL: %s is a full trace and %s a sampled one; "
                           "give the sampled trace first", o.trace, o.full);
            return 2;
        }
        if (second == PES_TRACE_SAMPLED) {
            replay_message("--compare SAMPLED FULL: %s is a sampled trace; the second trace must be "
                           "the full trace of the same program (pes-collect --full; both from one run: "
                           "pes-collect --mode MODE --full)", o.full);
            return 2;
        }
        if (first == PES_TRACE_FULL) {
            replay_message("--compare SAMPLED FULL: %s is a full trace; the first trace must be a "
                           "sampled trace (pes-collect --mode MODE)", o.trace);
            return 2;
        }
        return replay_accuracy_main(&o, &res.machine);
    }
    res.line = o.line ? o.line : res.machine.level[0].line;
    for (uint32_t l = 1; l < res.machine.n_levels; l++)
        if (res.machine.level[l].line != res.line && !o.line)
            replay_message("warning: L%u has %u-byte lines; all levels are modelled with %u-byte lines",
                           l + 1, res.machine.level[l].line, res.line);

    struct replay_input *in = replay_input_open_as(o.trace, o.input_format, &err);
    if (!in) return fail(&err);
    if (replay_input_truncation(in)) replay_message("warning: %s", replay_input_truncation(in));
    const char *skipped;
    if (replay_input_skipped(in, &skipped)) replay_message("warning: %s", skipped);
    replay_input_set_range_cap(in, replay_range_cap(res.line, res.machine.level[0].line));

    FILE *out = stdout;
    rc = 1;
    struct pes_knobs knobs = {.jobs = o.jobs, .mimic = o.n_cores > 0, .simulate = o.simulate};
    if (run_recorded(in, &o, &knobs, &res, &err) < 0) goto done;
    char clipped[sizeof err.message];
    if (replay_input_clipped(in, clipped, sizeof clipped)) fprintf(stderr, "pes-replay: warning: %s\n", clipped);
    if (res.summary.accesses == 0) {
        snprintf(err.message, sizeof err.message, "%s: the trace holds no memory accesses", o.trace);
        goto done;
    }
    if (o.n_cores && res.summary.threads > 1)
        replay_message("warning: --cores mimics cores from a sequential run (PPT-Multicore); this trace "
                       "has %u threads, whose records are taken in time order as one sequential stream "
                       "(record with OMP_NUM_THREADS=1 for the paper's method)",
                       res.summary.threads);
    if (o.n_cores && run_mimicked(in, &o, &knobs, &res, &err) < 0) goto done;
    if (replay_apply_model(&res, &err) < 0) goto done;

    if (o.output && !(out = fopen(o.output, "w"))) {
        snprintf(err.message, sizeof err.message, "-o %s: %s", o.output, strerror(errno));
        out = stdout;
        goto done;
    }
    int wr = o.format == REPLAY_JSON  ? replay_report_json(out, in, &o, &res)
             : o.format == REPLAY_CSV ? replay_report_csv(out, in, &o, &res)
                                      : replay_report_text(out, in, &o, &res);
    if (wr < 0 || fflush(out) != 0) {
        snprintf(err.message, sizeof err.message, "%s: write failed: %s", o.output ? o.output : "stdout",
                 strerror(errno));
        goto done;
    }
    if (o.comm_csv && write_side_file("--comm-csv", o.comm_csv, &o, in, &res, &err) < 0) goto done;
    if (o.sites_csv && write_side_file("--sites-csv", o.sites_csv, &o, in, &res, &err) < 0) goto done;
    rc = 0;
done:
    if (rc) fail(&err);
    if (out != stdout) fclose(out);
    replay_result_free(&res);
    replay_input_close(in);
    return rc;
}
