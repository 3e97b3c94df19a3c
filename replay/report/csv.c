/*
 * csv.c — `--format csv`: one row per configuration and cache level (model,
 * and simulation when --simulate ran), for spreadsheets and plots;
 * `--comm-csv`: a communication matrix; `--sites-csv`: every simulated site.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "pes/model.h"
#include "report_util.h"
#include "tables.h"
#include "writers.h"

static const struct pes_rnode *tree(const struct pes_report_view *v)
{
    return pes_report_tree(v->r);
}

int pes_report_write_csv(FILE *out, const struct pes_report_view *v)
{
    if (pes_report_failed(v->r))
        return -1;
    const struct pes_rnode *root = tree(v), *configs = pes_r_get(root, "configs");
    const struct pes_rnode *levels = pes_r_get(pes_r_get(root, "machine"), "levels");
    fputs("cores,mimicked,level,size,ways,line,shared,model_hit_local,model_hit_global,"
          "sim_accesses,sim_hits,sim_compulsory,sim_capacity,sim_coherence,t_pred_seconds,sim_"
          "conflict",
          out);
    /* the runtime model's terms per core (docs/model.md §3) and the largest */
    for (int k = 0; k < PES_TERM_COUNT; k++)
        fprintf(out, ",t_%s_seconds", pes_runtime_term_name(k));
    fputs(",t_bound\n", out);
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *c = pes_r_at(configs, i), *model = pes_r_get(c, "model");
        const struct pes_rnode *sim = pes_r_get(pes_r_get(c, "simulation"), "levels");
        for (size_t l = 0; l < pes_r_count(levels); l++) {
            const struct pes_rnode *lv = pes_r_at(levels, l);
            fprintf(out, "%u,%d,%zu,%" PRIu64 ",%u,%u,%d,%.6f,%.6f,",
                    (unsigned)pes_r_get_u(c, "cores"), (int)pes_r_get_u(c, "mimicked"), l + 1,
                    pes_r_get_u(lv, "size"), (unsigned)pes_r_get_u(lv, "ways"),
                    (unsigned)pes_r_get_u(lv, "line"), (int)pes_r_get_u(lv, "shared"),
                    pes_r_f(pes_r_at(pes_r_get(model, "hit_local"), l)),
                    pes_r_f(pes_r_at(pes_r_get(model, "hit_global"), l)));
            const struct pes_rnode *s = pes_r_at(sim, l);
            if (s)
                fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
                        pes_r_get_u(s, "accesses"), pes_r_get_u(s, "hits"),
                        pes_r_get_u(s, "compulsory"), pes_r_get_u(s, "capacity"),
                        pes_r_get_u(s, "coherence"));
            else
                fputs(",,,,,", out);
            fprintf(out, "%.6g,", pes_r_get_f(pes_r_get(model, "runtime"), "total_seconds"));
            /* columns added later go last: readers by position keep working */
            if (s)
                fprintf(out, "%" PRIu64, pes_r_get_u(s, "conflict"));
            const struct pes_rnode *rt = pes_r_get(model, "runtime"),
                                   *terms = pes_r_get(rt, "terms");
            for (int k = 0; k < PES_TERM_COUNT; k++)
                if (terms)
                    fprintf(out, ",%.6g",
                            pes_r_get_f(pes_r_get(terms, pes_runtime_term_name(k)), "seconds"));
                else
                    fputc(',', out);
            fprintf(out, ",%s\n", terms ? pes_r_get_s(rt, "bound") : "");
        }
    }
    return ferror(out) ? -1 : 0;
}

/* Rows: thread i, columns: thread j; cells: line transfers between them in
 * either direction (ComDetective's symmetric matrix), then the true and false
 * sharing parts, in long format for plotting. The last configuration's. */
int pes_report_write_comm_csv(FILE *out, const struct pes_report_view *v)
{
    if (pes_report_failed(v->r))
        return -1;
    const struct pes_rnode *configs = pes_r_get(tree(v), "configs");
    const struct pes_rnode *last = pes_r_at(configs, pes_r_count(configs) - 1);
    const struct pes_rnode *comm = pes_r_get(pes_r_get(last, "simulation"), "communication");
    const struct pes_rnode *all = pes_r_get(comm, "all"), *tru = pes_r_get(comm, "true"),
                           *fal = pes_r_get(comm, "false");
    uint64_t n = pes_r_get_u(comm, "threads");
    fputs("thread_a,thread_b,transfers,true_sharing,false_sharing\n", out);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i, j,
                    pes_r_u(pes_r_at(pes_r_at(all, i), j)), pes_r_u(pes_r_at(pes_r_at(tru, i), j)),
                    pes_r_u(pes_r_at(pes_r_at(fal, i), j)));
    return ferror(out) ? -1 : 0;
}

/* Every site that accessed memory, in every simulated configuration, ranked
 * by the --sort metric: the perf-c2c-like table for spreadsheets. */
int pes_report_write_sites_csv(FILE *out, const struct pes_report_view *v)
{
    if (pes_report_failed(v->r))
        return -1;
    const struct pes_rnode *root = tree(v), *configs = pes_r_get(root, "configs");
    size_t n_levels = pes_r_count(pes_r_get(pes_r_get(root, "machine"), "levels"));
    fputs("cores,mimicked,site,file,line,column,function,kind,accesses,reads,writes", out);
    for (size_t l = 0; l < n_levels; l++)
        fprintf(out, ",l%zu_hits", l + 1);
    /* a trace with call edges: a row per site and call path (docs/replay.md, "Call paths") */
    const struct pes_rnode *first =
        pes_r_at(pes_r_get(pes_r_get(pes_r_at(configs, 0), "simulation"), "all_sites"), 0);
    int paths = first && pes_r_get(first, "callpath");
    fputs(",l1_compulsory,l1_capacity,l1_coherence,inval_true,inval_false,coh_true,coh_false,"
          "sharing,threads,l1_conflict",
          out);
    fputs(paths ? ",callpath\n" : "\n", out);
    static const char *const counts[] = {"l1_compulsory", "l1_capacity", "l1_coherence",
                                         "inval_true",    "inval_false", "coh_true",
                                         "coh_false"};
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *c = pes_r_at(configs, i);
        const struct pes_rnode *rows = pes_r_get(pes_r_get(c, "simulation"), "all_sites");
        for (size_t j = 0; j < pes_r_count(rows); j++) {
            const struct pes_rnode *s = pes_r_at(rows, j);
            fprintf(out, "%u,%d,%" PRId64 ",", (unsigned)pes_r_get_u(c, "cores"),
                    (int)pes_r_get_u(c, "mimicked"), pes_r_i(pes_r_get(s, "site")));
            pes_csv_field(out, pes_r_get_s(s, "file"));
            fprintf(out, ",%u,%u,", (unsigned)pes_r_get_u(s, "line"),
                    (unsigned)pes_r_get_u(s, "column"));
            pes_csv_field(out, pes_r_get_s(s, "function"));
            fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64, pes_r_get_s(s, "kind"),
                    pes_r_get_u(s, "accesses"), pes_r_get_u(s, "reads"), pes_r_get_u(s, "writes"));
            const struct pes_rnode *hits = pes_r_get(s, "hits");
            for (size_t l = 0; l < n_levels; l++)
                fprintf(out, ",%" PRIu64, pes_r_u(pes_r_at(hits, l)));
            for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
                fprintf(out, ",%" PRIu64, pes_r_get_u(s, counts[k]));
            fprintf(out, ",%s,", pes_r_get_s(s, "sharing"));
            char threads[256];
            report_thread_list(threads, sizeof threads,
                               report_thread_mask(pes_r_get(s, "threads")));
            pes_csv_field(out, threads);
            fprintf(out, ",%" PRIu64, pes_r_get_u(s, "l1_conflict"));
            if (paths) {
                fputc(',', out);
                pes_csv_field(out, pes_r_get_s(s, "callpath"));
            }
            fputc('\n', out);
        }
    }
    return ferror(out) ? -1 : 0;
}
