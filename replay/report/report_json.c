/*
 * report_json.c — `--format json`: the stable machine-readable report.
 * Schema: docs/replay.schema.json (described in docs/replay.md). Histograms
 * list only non-empty bins.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "histogram.h"
#include "report_util.h"

#define REPLAY_JSON_VERSION 1

static void json_hist(FILE *out, const struct pes_rd_hist *h) {
    fprintf(out, "{\"accesses\":%" PRIu64 ",\"cold\":%" PRIu64 ",\"mean\":%.6g,\"exact\":[", h->total, h->cold,
            pes_rd_hist_mean(h));
    int first = 1;
    for (uint64_t d = 0; d < h->exact_n; d++) {
        if (!h->exact[d]) continue;
        fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", d, h->exact[d]);
        first = 0;
    }
    fputs("],\"log2\":[", out);
    first = 1;
    for (int b = 0; b < PES_RD_HIST_LOG2_BINS; b++) {
        if (!h->log2[b]) continue;
        uint64_t lo = (uint64_t)1 << b, hi = b < 63 ? (uint64_t)1 << (b + 1) : UINT64_MAX;
        fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", lo, hi, h->log2[b]);
        first = 0;
    }
    fputs("]}", out);
}

static void json_pair(FILE *out, const char *name, uint64_t t, uint64_t f) {
    fprintf(out, "\"%s\":{\"true\":%" PRIu64 ",\"false\":%" PRIu64 "}", name, t, f);
}

static void json_matrix(FILE *out, const struct pes_sim *sim, enum pes_sim_comm_kind kind, uint32_t n) {
    uint64_t *m = calloc((size_t)n * n ? (size_t)n * n : 1, sizeof *m);
    fputc('[', out);
    if (m) {
        pes_sim_comm_symmetric(sim, kind, 0, m);
        for (uint32_t i = 0; i < n; i++) {
            fprintf(out, "%s[", i ? "," : "");
            for (uint32_t j = 0; j < n; j++) fprintf(out, "%s%" PRIu64, j ? "," : "", m[(size_t)i * n + j]);
            fputc(']', out);
        }
    }
    fputc(']', out);
    free(m);
}

static void json_simulation(FILE *out, const struct replay_input *in, const struct replay_options *o,
                            const struct replay_config *c) {
    const struct pes_sim *sim = c->sim.sim;
    const struct pes_sim_stats *t = pes_sim_totals(sim);
    fputs(",\"simulation\":{\"levels\":[", out);
    uint64_t reaching = t->accesses;
    for (uint32_t l = 0; l < pes_sim_levels(sim); l++) {
        uint64_t miss = t->misses[l][0] + t->misses[l][1] + t->misses[l][2];
        fprintf(out,
                "%s{\"level\":%u,\"accesses\":%" PRIu64 ",\"hits\":%" PRIu64 ",\"compulsory\":%" PRIu64
                ",\"capacity\":%" PRIu64 ",\"coherence\":%" PRIu64 "}",
                l ? "," : "", l + 1, reaching, t->hits[l], t->misses[l][PES_SIM_COMPULSORY],
                t->misses[l][PES_SIM_CAPACITY], t->misses[l][PES_SIM_COHERENCE]);
        reaching = miss;
    }
    fputs("],", out);
    json_pair(out, "invalidations", t->inval_true, t->inval_false);
    fputc(',', out);
    json_pair(out, "coherence_misses", t->coh_true, t->coh_false);
    fputc(',', out);
    json_pair(out, "transfers", t->comm_true, t->comm_false);
    fprintf(out, ",\"writebacks\":%" PRIu64 ",\"sort\":", pes_sim_writebacks(sim));
    report_json_string(out, o->sort);
    fputs(",\"sites\":[", out);
    uint32_t n = 0;
    uint32_t *order = report_top_sites(sim, o->sort, o->top, &n);
    for (uint32_t i = 0; i < n; i++) {
        const struct pes_sim_stats *s = pes_sim_site(sim, order[i]);
        const struct pes_site *site = order[i] == UINT32_MAX ? NULL : replay_input_site(in, order[i]);
        fprintf(out, "%s{\"site\":%" PRId64 ",\"file\":", i ? "," : "",
                order[i] == UINT32_MAX ? (int64_t)-1 : (int64_t)order[i]);
        report_json_string(out, site && site->file ? site->file : "");
        fprintf(out, ",\"line\":%u,\"column\":%u,\"function\":", site ? site->line : 0, site ? site->column : 0);
        report_json_string(out, site && site->function ? site->function : "");
        fprintf(out, ",\"accesses\":%" PRIu64 ",\"l1_misses\":%" PRIu64 ",\"hits\":[", s->accesses,
                s->misses[0][0] + s->misses[0][1] + s->misses[0][2]);
        for (uint32_t l = 0; l < pes_sim_levels(sim); l++) fprintf(out, "%s%" PRIu64, l ? "," : "", s->hits[l]);
        fprintf(out, "],\"l1_miss_classes\":{\"compulsory\":%" PRIu64 ",\"capacity\":%" PRIu64
                     ",\"coherence\":%" PRIu64 "},",
                s->misses[0][PES_SIM_COMPULSORY], s->misses[0][PES_SIM_CAPACITY], s->misses[0][PES_SIM_COHERENCE]);
        json_pair(out, "invalidations", s->inval_true, s->inval_false);
        fputc(',', out);
        json_pair(out, "coherence_misses", s->coh_true, s->coh_false);
        fputs(",\"sharing\":", out);
        report_json_string(out, report_sharing_kind(s));
        fputs(",\"threads\":[", out);
        uint64_t mask = s->victim_threads | s->source_threads;
        for (int b = 0, k = 0; b < 64; b++)
            if (mask >> b & 1) fprintf(out, "%s%d", k++ ? "," : "", b);
        fputs("]}", out);
    }
    free(order);
    fprintf(out, "],\"communication\":{\"threads\":%u,\"all\":", c->sim.n_threads);
    json_matrix(out, sim, PES_SIM_COMM_ALL, c->sim.n_threads);
    fputs(",\"true\":", out);
    json_matrix(out, sim, PES_SIM_COMM_TRUE, c->sim.n_threads);
    fputs(",\"false\":", out);
    json_matrix(out, sim, PES_SIM_COMM_FALSE, c->sim.n_threads);
    fputs("}}", out);
}

int replay_report_json(FILE *out, const struct replay_input *in, const struct replay_options *o,
                       const struct replay_result *res) {
    const struct replay_summary *s = &res->summary;
    fprintf(out, "{\"pes_replay_json\":%d,\"trace\":{\"path\":", REPLAY_JSON_VERSION);
    report_json_string(out, o->trace);
    fprintf(out, ",\"kind\":\"%s\",\"command\":", s->text ? "text" : "full");
    report_json_string(out, s->command ? s->command : "");
    fprintf(out,
            ",\"truncated\":%s,\"skipped_blocks\":%" PRIu64 ",\"clipped_ranges\":%" PRIu64
            ",\"threads\":%u,\"records\":%" PRIu64 ",\"accesses\":%" PRIu64 ",\"reads\":%" PRIu64
            ",\"writes\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"bb_executions\":%" PRIu64 ",\"ops\":{",
            s->truncated ? "true" : "false", s->skipped_blocks, s->clipped_ranges, s->threads, s->records,
            s->accesses, s->reads, s->writes, s->bytes, s->bb_execs);
    for (int k = 0; k < PES_OP_COUNT; k++) fprintf(out, "%s\"%s\":%.0f", k ? "," : "", pes_machine_op_key(k), s->ops[k]);
    fputs("}},\"machine\":{\"name\":", out);
    report_json_string(out, res->machine.name);
    fprintf(out, ",\"ghz\":%.6g,\"levels\":[", res->machine.ghz);
    for (uint32_t l = 0; l < res->machine.n_levels; l++) {
        const struct pes_cache_config *c = &res->machine.level[l];
        fprintf(out, "%s{\"level\":%u,\"size\":%" PRIu64 ",\"ways\":%u,\"line\":%u,\"shared\":%s}", l ? "," : "",
                l + 1, c->size, c->ways, c->line, c->shared ? "true" : "false");
    }
    fprintf(out, "]},\"line\":%u,\"configs\":[", res->line);
    for (uint32_t i = 0; i < res->n_configs; i++) {
        const struct replay_config *c = &res->config[i];
        fprintf(out, "%s{\"cores\":%u,\"mimicked\":%s,\"prd\":[", i ? "," : "", c->cores,
                c->mimicked ? "true" : "false");
        for (uint32_t st = 0; st < pes_profiles_streams(c->profiles); st++) {
            fprintf(out, "%s{\"stream\":%u,\"histogram\":", st ? "," : "", st);
            json_hist(out, pes_profiles_prd(c->profiles, st));
            fputc('}', out);
        }
        fputs("],\"crd\":[", out);
        for (uint32_t g = 0; g < replay_config_groups(c); g++) {
            fprintf(out, "%s{\"group\":%u,\"histogram\":", g ? "," : "", g);
            json_hist(out, replay_config_crd(c, g));
            fputc('}', out);
        }
        fputs("],\"sites\":[", out);
        size_t ns = 0;
        struct replay_site_reuse *rows = replay_config_site_reuse(c, &ns);
        for (size_t k = 0; rows && k < ns; k++)
            fprintf(out, "%s{\"site\":%u,\"accesses\":%" PRIu64 ",\"prd_cold\":%" PRIu64 ",\"crd_cold\":%" PRIu64
                         ",\"prd_mean\":%.6g,\"crd_mean\":%.6g}",
                    k ? "," : "", rows[k].site, rows[k].accesses, rows[k].prd_cold, rows[k].crd_cold, rows[k].prd_mean,
                    rows[k].crd_mean);
        free(rows);
        fputs("],\"model\":{\"hit_global\":[", out);
        for (uint32_t l = 0; l < res->machine.n_levels; l++) fprintf(out, "%s%.6f", l ? "," : "", c->hit[l]);
        fputs("],\"hit_local\":[", out);
        for (uint32_t l = 0; l < res->machine.n_levels; l++)
            fprintf(out, "%s%.6f", l ? "," : "", report_local_rate(c->hit, l));
        const struct pes_runtime *r = &c->runtime;
        fprintf(out,
                "],\"runtime\":{\"delta_avg\":%.6g,\"beta_avg\":%.6g,\"mem_cycles\":%.6g,\"cpu_cycles\":%.6g,"
                "\"total_cycles\":%.6g,\"mem_seconds\":%.6g,\"cpu_seconds\":%.6g,\"total_seconds\":%.6g}}",
                r->delta_avg, r->beta_avg, r->mem_cycles, r->cpu_cycles, r->total_cycles, r->mem_seconds,
                r->cpu_seconds, r->total_seconds);
        if (c->sim.sim) json_simulation(out, in, o, c);
        fputc('}', out);
    }
    fputs("]}\n", out);
    return ferror(out) ? -1 : 0;
}
