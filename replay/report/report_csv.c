/*
 * report_csv.c — `--format csv`: one row per configuration and cache level
 * (model, and simulation when --simulate ran), for spreadsheets and plots;
 * `--comm-csv`: the communication matrix.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report_util.h"

int replay_report_csv(FILE *out, const struct replay_input *in, const struct replay_options *o,
                      const struct replay_result *res) {
    (void)in;
    (void)o;
    fputs("cores,mimicked,level,size,ways,line,shared,model_hit_local,model_hit_global,"
          "sim_accesses,sim_hits,sim_compulsory,sim_capacity,sim_coherence,t_pred_seconds\n", out);
    for (uint32_t i = 0; i < res->n_configs; i++) {
        const struct replay_config *c = &res->config[i];
        const struct pes_sim_stats *t = c->sim.sim ? pes_sim_totals(c->sim.sim) : NULL;
        uint64_t reaching = t ? t->accesses : 0;
        for (uint32_t l = 0; l < res->machine.n_levels; l++) {
            const struct pes_cache_config *lv = &res->machine.level[l];
            fprintf(out, "%u,%d,%u,%" PRIu64 ",%u,%u,%d,%.6f,%.6f,", c->cores, c->mimicked, l + 1, lv->size,
                    lv->ways, lv->line, lv->shared ? 1 : 0, report_local_rate(c->hit, l), c->hit[l]);
            if (t) {
                uint64_t miss = t->misses[l][0] + t->misses[l][1] + t->misses[l][2];
                fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", reaching, t->hits[l],
                        t->misses[l][PES_SIM_COMPULSORY], t->misses[l][PES_SIM_CAPACITY],
                        t->misses[l][PES_SIM_COHERENCE]);
                reaching = miss;
            } else {
                fputs(",,,,,", out);
            }
            fprintf(out, "%.6g\n", c->runtime.total_seconds);
        }
    }
    return ferror(out) ? -1 : 0;
}

/* Rows: thread i, columns: thread j; cells: line transfers between them in
 * either direction (ComDetective's symmetric matrix), then the true and false
 * sharing parts as separate long-format rows for plotting. */
int replay_report_comm_csv(FILE *out, const struct replay_config *c) {
    uint32_t n = c->sim.n_threads;
    size_t cells = (size_t)n * n;
    uint64_t *all = calloc(cells ? cells : 1, sizeof *all);
    uint64_t *tru = calloc(cells ? cells : 1, sizeof *tru);
    uint64_t *fal = calloc(cells ? cells : 1, sizeof *fal);
    if (!all || !tru || !fal) {
        free(all);
        free(tru);
        free(fal);
        return -1;
    }
    pes_sim_comm_symmetric(c->sim.sim, PES_SIM_COMM_ALL, 0, all);
    pes_sim_comm_symmetric(c->sim.sim, PES_SIM_COMM_TRUE, 0, tru);
    pes_sim_comm_symmetric(c->sim.sim, PES_SIM_COMM_FALSE, 0, fal);
    fputs("thread_a,thread_b,transfers,true_sharing,false_sharing\n", out);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            size_t k = (size_t)i * n + j;
            fprintf(out, "%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i, j, all[k], tru[k], fal[k]);
        }
    free(all);
    free(tru);
    free(fal);
    return ferror(out) ? -1 : 0;
}

/* Every site that accessed memory, in every simulated configuration, ranked
 * by the --sort metric: the perf-c2c-like table for spreadsheets. */
int replay_report_sites_csv(FILE *out, const struct replay_input *in, const struct replay_options *o,
                            const struct replay_result *res) {
    fputs("cores,mimicked,site,file,line,column,function,kind,accesses,reads,writes", out);
    for (uint32_t l = 0; l < res->machine.n_levels; l++) fprintf(out, ",l%u_hits", l + 1);
    fputs(",l1_compulsory,l1_capacity,l1_coherence,inval_true,inval_false,coh_true,coh_false,"
          "sharing,threads\n", out);
    for (uint32_t i = 0; i < res->n_configs; i++) {
        const struct replay_config *c = &res->config[i];
        if (!c->sim.sim) continue;
        uint32_t n = 0;
        uint32_t *order = report_top_sites(c->sim.sim, "accesses", UINT32_MAX, &n);
        if (!order) return -1;
        /* rank by the requested metric, ties by accesses (report_top_sites is stable on ids) */
        uint32_t k = 0;
        uint32_t *ranked = report_top_sites(c->sim.sim, o->sort, UINT32_MAX, &k);
        for (uint32_t pass = 0; pass < 2; pass++) {
            const uint32_t *ids = pass == 0 ? ranked : order;
            uint32_t m = pass == 0 ? k : n;
            for (uint32_t j = 0; ids && j < m; j++) {
                const struct pes_sim_stats *st = pes_sim_site(c->sim.sim, ids[j]);
                if (pass == 1 && report_metric(st, o->sort) != 0) continue;   /* listed in pass 0 */
                const struct pes_site *site = ids[j] == UINT32_MAX ? NULL : replay_input_site(in, ids[j]);
                char threads[256];
                report_thread_list(threads, sizeof threads, st->victim_threads | st->source_threads);
                fprintf(out, "%u,%d,%" PRId64 ",", c->cores, c->mimicked,
                        ids[j] == UINT32_MAX ? (int64_t)-1 : (int64_t)ids[j]);
                report_csv_field(out, site && site->file ? site->file : "");
                fprintf(out, ",%u,%u,", site ? site->line : 0, site ? site->column : 0);
                report_csv_field(out, site && site->function ? site->function : "");
                fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64, site ? pes_access_kind_name(site->kind) : "",
                        st->accesses, st->reads, st->writes);
                for (uint32_t l = 0; l < res->machine.n_levels; l++) fprintf(out, ",%" PRIu64, st->hits[l]);
                fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,",
                        st->misses[0][PES_SIM_COMPULSORY], st->misses[0][PES_SIM_CAPACITY],
                        st->misses[0][PES_SIM_COHERENCE], st->inval_true, st->inval_false, st->coh_true,
                        st->coh_false, report_sharing_kind(st));
                report_csv_field(out, threads);
                fputc('\n', out);
            }
        }
        free(ranked);
        free(order);
    }
    return ferror(out) ? -1 : 0;
}
