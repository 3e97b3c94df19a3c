/*
 * report_text.c — the human-readable pes-replay report: aligned tables with
 * units and totals. Reads struct replay_result only; computes nothing beyond
 * ratios for display.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "report_util.h"

static void print_machine_line(FILE *out, const struct pes_machine *m, uint32_t line) {
    fprintf(out, "  machine   %s:", report_safe(m->name));
    for (uint32_t l = 0; l < m->n_levels; l++) {
        char size[32];
        report_bytes(size, sizeof size, m->level[l].size);
        fprintf(out, "%s L%u %s %u-way %s", l ? "," : "", l + 1, size, m->level[l].ways,
                m->level[l].shared ? "shared" : "private");
    }
    fprintf(out, "; reuse granularity %u B\n", line);
}

static void print_summary(FILE *out, const struct replay_options *o, const struct replay_result *res,
                          const struct replay_input *in) {
    const struct replay_summary *s = &res->summary;
    char a[32], r[32], w[32], b[32], bb[32];
    fprintf(out, "pes-replay: %s\n", report_safe(o->trace));
    if (s->command) fprintf(out, "  command   %s\n", report_safe(s->command));
    report_count(a, sizeof a, s->accesses);
    report_count(r, sizeof r, s->reads);
    report_count(w, sizeof w, s->writes);
    report_bytes(b, sizeof b, s->bytes);
    report_count(bb, sizeof bb, s->bb_execs);
    fprintf(out, "  trace     %s, %u thread%s: %s accesses (%s reads, %s writes, %s), %s BB executions\n",
            s->text ? replay_input_text_kind(in) : "full trace", s->threads, s->threads == 1 ? "" : "s", a, r, w, b,
            bb);
    if (replay_input_truncation(in)) fprintf(out, "  warning   %s\n", report_safe(replay_input_truncation(in)));
    const char *skipped;
    if (replay_input_skipped(in, &skipped)) fprintf(out, "  warning   %s\n", report_safe(skipped));
    char clipped[512];
    if (replay_input_clipped(in, clipped, sizeof clipped)) fprintf(out, "  warning   %s\n", report_safe(clipped));
    print_machine_line(out, &res->machine, res->line);
}

/* One profile row: accesses, cold share, mean distance, and the share of
 * accesses a fully associative LRU cache of each level's size would hit. */
static void print_hist_row(FILE *out, const char *label, const struct pes_rd_hist *h,
                           const struct replay_result *res) {
    char acc[32];
    report_count(acc, sizeof acc, h->total);
    fprintf(out, "  %-14s %14s %7.2f%% %11.1f", label, acc, h->total ? 100.0 * (double)h->cold / (double)h->total : 0.0,
            pes_rd_hist_mean(h));
    for (uint32_t l = 0; l < res->machine.n_levels; l++) {
        uint64_t lines = res->machine.level[l].size / res->line;
        fprintf(out, " %8.2f%%", h->total ? 100.0 * pes_rd_hist_below(h, lines) / (double)h->total : 0.0);
    }
    fputc('\n', out);
}

static void print_profiles(FILE *out, const struct replay_config *cfg, const struct replay_result *res) {
    fprintf(out, "\nReuse profiles — %s%u %s (distance in %u-byte lines)\n", cfg->mimicked ? "mimicked " : "",
            cfg->cores, cfg->mimicked ? (cfg->cores == 1 ? "core" : "cores") : (cfg->cores == 1 ? "thread" : "threads"),
            res->line);
    fprintf(out, "  %-14s %14s %8s %11s", "stream", "accesses", "cold", "mean RD");
    for (uint32_t l = 0; l < res->machine.n_levels; l++) fprintf(out, "   <L%u FA", l + 1);
    fputc('\n', out);
    char label[32];
    for (uint32_t s = 0; s < pes_profiles_streams(cfg->profiles); s++) {
        snprintf(label, sizeof label, "%s%u PRD", cfg->mimicked ? "core " : "T", s);
        print_hist_row(out, label, pes_profiles_prd(cfg->profiles, s), res);
    }
    for (uint32_t g = 0; g < replay_config_groups(cfg); g++) {
        snprintf(label, sizeof label, "shared%u CRD", g);
        print_hist_row(out, label, replay_config_crd(cfg, g), res);
    }
    fprintf(out, "  (<Ln FA: share of accesses a fully associative LRU cache of Ln's size would hit)\n");
}

/* The sites that make most line accesses, with their mean reuse distances. */
static void print_site_reuse(FILE *out, const struct replay_input *in, const struct replay_options *o,
                             const struct replay_config *cfg) {
    size_t n = 0;
    struct replay_site_reuse *rows = replay_config_site_reuse(cfg, &n);
    if (!rows || n == 0 || o->top == 0) {
        free(rows);
        return;
    }
    size_t shown = n < o->top ? n : o->top;
    fprintf(out, "\n  Top %zu sites by line accesses\n", shown);
    fprintf(out, "  %-44s %14s %8s %11s %11s\n", "site", "accesses", "cold", "mean PRD", "mean CRD");
    for (size_t i = 0; i < shown; i++) {
        const struct replay_site_reuse *r = &rows[i];
        char where[160], acc[32];
        report_site_label(where, sizeof where, replay_input_site(in, r->site), r->site);
        report_count(acc, sizeof acc, r->accesses);
        fprintf(out, "  %-44s %14s %7.2f%% %11.1f %11.1f\n", report_safe(where), acc,
                r->accesses ? 100.0 * (double)r->prd_cold / (double)r->accesses : 0.0, r->prd_mean, r->crd_mean);
    }
    free(rows);
}

static void print_predictions(FILE *out, const struct replay_result *res) {
    fprintf(out, "\nPredicted hit rates (SDCM, PPT-Multicore Eq. 1-3; local: hits / accesses reaching the level)"
                 " and runtime (Eq. 4-8)\n");
    fprintf(out, "  %6s", "cores");
    for (uint32_t l = 0; l < res->machine.n_levels; l++) fprintf(out, "   L%u hit", l + 1);
    fprintf(out, " %12s %12s %12s\n", "T_mem", "T_cpu", "T_pred");
    for (uint32_t i = 0; i < res->n_configs; i++) {
        const struct replay_config *c = &res->config[i];
        fprintf(out, "  %6u", c->cores);
        for (uint32_t l = 0; l < res->machine.n_levels; l++)
            fprintf(out, " %7.2f%%", 100.0 * report_local_rate(c->hit, l));
        char tm[32], tc[32], tp[32];
        report_seconds(tm, sizeof tm, c->runtime.mem_seconds);
        report_seconds(tc, sizeof tc, c->runtime.cpu_seconds);
        report_seconds(tp, sizeof tp, c->runtime.total_seconds);
        fprintf(out, " %12s %12s %12s\n", tm, tc, tp);
    }
}

static void print_site_label(FILE *out, const struct replay_input *in, uint32_t site) {
    const struct pes_site *s = site == UINT32_MAX ? NULL : replay_input_site(in, site);
    char where[160];
    report_site_label(where, sizeof where, s, site);
    fprintf(out, "  %-44s", report_safe(where));
}

static void print_simulation(FILE *out, const struct replay_input *in, const struct replay_options *o,
                             const struct replay_config *c) {
    const struct pes_sim *sim = c->sim.sim;
    const struct pes_sim_stats *t = pes_sim_totals(sim);
    char buf[32];
    fprintf(out, "\nSimulation (set-associative LRU + MESI) — %s%u %s\n", c->mimicked ? "mimicked " : "", c->cores,
            c->mimicked ? "cores" : "threads, one core each");
    fprintf(out, "  %-5s %14s %9s %9s %12s %12s %12s\n", "level", "accesses", "hit", "model", "compulsory",
            "capacity", "coherence");
    uint64_t reaching = t->accesses;
    for (uint32_t l = 0; l < pes_sim_levels(sim); l++) {
        uint64_t miss = t->misses[l][PES_SIM_COMPULSORY] + t->misses[l][PES_SIM_CAPACITY] +
                        t->misses[l][PES_SIM_COHERENCE];
        report_count(buf, sizeof buf, reaching);
        char m1[32], m2[32], m3[32];
        report_count(m1, sizeof m1, t->misses[l][PES_SIM_COMPULSORY]);
        report_count(m2, sizeof m2, t->misses[l][PES_SIM_CAPACITY]);
        report_count(m3, sizeof m3, t->misses[l][PES_SIM_COHERENCE]);
        fprintf(out, "  L%-4u %14s %8.2f%% %8.2f%% %12s %12s %12s\n", l + 1, buf,
                reaching ? 100.0 * (double)t->hits[l] / (double)reaching : 0.0,
                100.0 * report_local_rate(c->hit, l), m1, m2, m3);
        reaching = miss;
    }
    char it[32], ifl[32], ct[32], cf[32], mt[32], mf[32];
    report_count(it, sizeof it, t->inval_true);
    report_count(ifl, sizeof ifl, t->inval_false);
    report_count(ct, sizeof ct, t->coh_true);
    report_count(cf, sizeof cf, t->coh_false);
    report_count(mt, sizeof mt, t->comm_true);
    report_count(mf, sizeof mf, t->comm_false);
    fprintf(out, "  invalidations %s true / %s false sharing; coherence misses %s true / %s false;"
                 " line transfers %s true / %s false; writebacks %" PRIu64 "\n",
            it, ifl, ct, cf, mt, mf, pes_sim_writebacks(sim));

    uint32_t n = 0;
    uint32_t *order = report_top_sites(sim, o->sort, o->top, &n);
    if (!order || n == 0) {
        fprintf(out, "  no site has a non-zero '%s' count\n", o->sort);
        free(order);
        return;
    }
    fprintf(out, "\n  Top %u sites by %s\n", n, o->sort);
    fprintf(out, "  %-44s %12s %8s %10s %10s %10s %10s  %-7s %s\n", "site", "accesses", "L1 miss", "inval T",
            "inval F", "coh T", "coh F", "sharing", "threads");
    for (uint32_t i = 0; i < n; i++) {
        const struct pes_sim_stats *s = pes_sim_site(sim, order[i]);
        print_site_label(out, in, order[i]);
        uint64_t l1miss = s->misses[0][0] + s->misses[0][1] + s->misses[0][2];
        char acc[32], threads[96];
        report_count(acc, sizeof acc, s->accesses);
        report_thread_list(threads, sizeof threads, s->victim_threads | s->source_threads);
        fprintf(out, " %12s %7.2f%% %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  %-7s %s\n", acc,
                s->accesses ? 100.0 * (double)l1miss / (double)s->accesses : 0.0, s->inval_true, s->inval_false,
                s->coh_true, s->coh_false, report_sharing_kind(s), threads);
    }
    free(order);
}

int replay_report_text(FILE *out, const struct replay_input *in, const struct replay_options *o,
                       const struct replay_result *res) {
    print_summary(out, o, res, in);
    for (uint32_t i = 0; i < res->n_configs; i++) {
        print_profiles(out, &res->config[i], res);
        print_site_reuse(out, in, o, &res->config[i]);
    }
    print_predictions(out, res);
    for (uint32_t i = 0; i < res->n_configs; i++)
        if (res->config[i].sim.sim) print_simulation(out, in, o, &res->config[i]);
    return ferror(out) ? -1 : 0;
}
