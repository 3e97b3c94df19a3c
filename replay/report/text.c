/*
 * text.c — the human-readable pes-replay report: aligned tables with units
 * and totals, from the report tree (report.h). Sections: the trace and
 * machine, then per configuration its reuse profiles and top sites, the
 * model's predictions of every configuration, and the simulations.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assumptions.h"
#include "findings.h"
#include "pes/model.h"
#include "report_util.h"
#include "writers.h"

/* The sites whose counts depend on thread timing (timing.c), named up to 4. */
static void print_timing(FILE *out, const struct pes_rnode *td)
{
    if (!td)
        return;
    const struct pes_rnode *w = pes_r_get(td, "spin_waits");
    uint64_t n = pes_r_get_u(td, "sites");
    double share = 100.0 * pes_r_get_f(td, "share");
    fprintf(out,
            "  timing    counts at %u site%s (%s%.2f%% of accesses) depend on thread timing: "
            "spin-waits at ",
            (unsigned)n, n == 1 ? "" : "s", share < 0.01 ? "<" : "", share < 0.01 ? 0.01 : share);
    /* sites of one line (an unrolled loop's) are one place */
    char shown[4][REPORT_LABEL_MAX * 2];
    size_t n_shown = 0, i = 0;
    for (; i < pes_r_count(w) && n_shown < 4; i++) {
        const struct pes_rnode *e = pes_r_at(w, i);
        const char *file = pes_r_get_s(e, "file"), *base = strrchr(file, '/'),
                   *fn = pes_r_get_s(e, "function");
        base = base ? base + 1 : file;
        char label[REPORT_LABEL_MAX * 2];
        if (*base && pes_r_get_u(e, "line"))
            snprintf(label, sizeof label, "%s:%u%s%s", base, (unsigned)pes_r_get_u(e, "line"),
                     *fn ? " " : "", fn);
        else
            snprintf(label, sizeof label, "site %u%s%s", (unsigned)pes_r_get_u(e, "site"),
                     *fn ? " " : "", fn);
        size_t k = 0;
        while (k < n_shown && strcmp(shown[k], label) != 0)
            k++;
        if (k < n_shown)
            continue;
        fprintf(out, "%s%s", n_shown ? ", " : "", report_safe(label));
        snprintf(shown[n_shown++], sizeof shown[0], "%s", label);
    }
    if (i < pes_r_count(w))
        fprintf(out, " and %zu more site%s", pes_r_count(w) - i,
                pes_r_count(w) - i == 1 ? "" : "s");
    fputc('\n', out);
}

static void print_summary(FILE *out, const struct pes_rnode *root)
{
    const struct pes_rnode *t = pes_r_get(root, "trace"), *m = pes_r_get(root, "machine");
    char a[32], r[32], w[32], b[32], bb[32];
    fprintf(out, "pes-replay: %s\n", report_safe(pes_r_get_s(t, "path")));
    if (pes_r_get(t, "command_line"))
        fprintf(out, "  command   %s\n", report_safe(pes_r_get_s(t, "command")));
    report_count(a, sizeof a, pes_r_get_u(t, "accesses"));
    report_count(r, sizeof r, pes_r_get_u(t, "reads"));
    report_count(w, sizeof w, pes_r_get_u(t, "writes"));
    report_bytes(b, sizeof b, pes_r_get_u(t, "bytes"));
    report_count(bb, sizeof bb, pes_r_get_u(t, "bb_executions"));
    uint64_t threads = pes_r_get_u(t, "threads");
    fprintf(
        out,
        "  trace     %s, %u thread%s: %s accesses (%s reads, %s writes, %s), %s BB executions\n",
        pes_r_get_s(t, "label"), (unsigned)threads, threads == 1 ? "" : "s", a, r, w, b, bb);
    if (pes_r_get(t, "region"))
        fprintf(out, "  region    %s\n", report_safe(pes_r_get_s(t, "region")));
    const struct pes_rnode *warnings = pes_r_get(t, "warnings");
    for (size_t i = 0; i < pes_r_count(warnings); i++)
        fprintf(out, "  warning   %s\n", report_safe(pes_r_s(pes_r_at(warnings, i))));
    print_timing(out, pes_r_get(t, "timing_dependent"));
    fprintf(out, "  machine   %s:", report_safe(pes_r_get_s(m, "name")));
    const struct pes_rnode *levels = pes_r_get(m, "levels");
    for (size_t l = 0; l < pes_r_count(levels); l++) {
        const struct pes_rnode *lv = pes_r_at(levels, l);
        char size[32];
        report_bytes(size, sizeof size, pes_r_get_u(lv, "size"));
        fprintf(out, "%s L%zu %s %u-way %s", l ? "," : "", l + 1, size,
                (unsigned)pes_r_get_u(lv, "ways"),
                pes_r_get_u(lv, "shared") ? "shared" : "private");
    }
    fprintf(out, "; reuse granularity %u B\n", (unsigned)pes_r_get_u(root, "line"));
}

/* s from column `indent` on, wrapped at words to lines of at most 100
 * columns (a word longer than a line stays whole). */
static void print_wrapped(FILE *out, const char *s, int indent, int first_indent)
{
    int col = first_indent, fresh = 1; /* fresh: at the start of a line */
    while (*s) {
        size_t w = strcspn(s, " ");
        if (!fresh && col + 1 + (int)w > 100) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!fresh) {
            fputc(' ', out);
            col++;
        }
        fresh = 0;
        fwrite(s, 1, w, out);
        col += (int)w;
        s += w;
        while (*s == ' ')
            s++;
    }
    fputc('\n', out);
}

void report_print_findings(FILE *out, const struct pes_rnode *root)
{
    const struct pes_rnode *f = pes_r_get(root, "findings");
    if (!f)
        return;
    fprintf(out, "\nFindings (ranked by the share of the accesses they cost; docs/report.md)\n");
    if (!pes_r_count(f)) {
        fputs("  ", out);
        print_wrapped(out, pes_findings_none(), 2, 2);
    }
    for (size_t i = 0; i < pes_r_count(f); i++) {
        const struct pes_rnode *o = pes_r_at(f, i);
        fprintf(out, "  %u. ", (unsigned)pes_r_get_u(o, "rank"));
        print_wrapped(out, report_safe(pes_r_get_s(o, "text")), 5, 5);
        fputs("     Fix: ", out);
        print_wrapped(out, report_safe(pes_r_get_s(o, "fix")), 5, 10);
    }
}

/* One profile row: accesses, cold share, mean distance, and the share of
 * accesses a fully associative LRU cache of each level's size would hit. */
static void print_hist_row(FILE *out, const char *label, const struct pes_rnode *h)
{
    char acc[32];
    report_count(acc, sizeof acc, pes_r_get_u(h, "accesses"));
    fprintf(out, "  %-14s %14s %7.2f%% %11.1f", label, acc, 100.0 * pes_r_get_f(h, "cold_share"),
            pes_r_get_f(h, "mean"));
    const struct pes_rnode *fa = pes_r_get(h, "fa_hit_share");
    for (size_t l = 0; l < pes_r_count(fa); l++)
        fprintf(out, " %8.2f%%", 100.0 * pes_r_f(pes_r_at(fa, l)));
    fputc('\n', out);
}

static const char *streams_word(const struct pes_rnode *c)
{
    int mimicked = (int)pes_r_get_u(c, "mimicked");
    uint64_t n = pes_r_get_u(c, "cores");
    return mimicked ? (n == 1 ? "core" : "cores") : (n == 1 ? "thread" : "threads");
}

static void print_profiles(FILE *out, const struct pes_rnode *root, const struct pes_rnode *c)
{
    int mimicked = (int)pes_r_get_u(c, "mimicked");
    size_t n_levels = pes_r_count(pes_r_get(pes_r_get(root, "machine"), "levels"));
    fprintf(out, "\nReuse profiles — %s%u %s (distance in %u-byte lines)\n",
            mimicked ? "mimicked " : "", (unsigned)pes_r_get_u(c, "cores"), streams_word(c),
            (unsigned)pes_r_get_u(root, "line"));
    fprintf(out, "  %-14s %14s %8s %11s", "stream", "accesses", "cold", "mean RD");
    for (size_t l = 0; l < n_levels; l++)
        fprintf(out, "   <L%zu FA", l + 1);
    fprintf(out, "\n  %-14s %14s %8s %11s", "", "(#)", "(%)", "(lines)");
    for (size_t l = 0; l < n_levels; l++)
        fprintf(out, " %8s", "(%)");
    fputc('\n', out);
    char label[32];
    const struct pes_rnode *prd = pes_r_get(c, "prd"), *crd = pes_r_get(c, "crd");
    for (size_t s = 0; s < pes_r_count(prd); s++) {
        snprintf(label, sizeof label, "%s%zu PRD", mimicked ? "core " : "T", s);
        print_hist_row(out, label, pes_r_get(pes_r_at(prd, s), "histogram"));
    }
    for (size_t g = 0; g < pes_r_count(crd); g++) {
        snprintf(label, sizeof label, "shared%zu CRD", g);
        print_hist_row(out, label, pes_r_get(pes_r_at(crd, g), "histogram"));
    }
    fprintf(out, "  (#: a count, %%: a share; accesses: line accesses; cold: first accesses to a "
                 "line; mean RD: mean\n"
                 "   reuse distance, in lines; <Ln FA: share of accesses a fully associative LRU "
                 "cache of Ln's\n"
                 "   size would hit)\n");
}

/* A label in a column of width columns (report_fit). */
static void print_label(FILE *out, const char *s, int width)
{
    char buf[4 * REPORT_LABEL_MAX + 8];
    report_fit(buf, sizeof buf, report_safe(s), width);
    fprintf(out, "  %s", buf);
}

static void print_site_label(FILE *out, const struct pes_report_view *v, int64_t id, int width)
{
    const struct pes_site *s = id < 0 ? NULL : v->site(v->site_ctx, (uint32_t)id);
    char where[512];
    report_site_label(where, sizeof where, s, id < 0 ? UINT32_MAX : (uint32_t)id);
    print_label(out, where, width);
}

/* What the rows of a ranked table are (--by): its title's plural and its
 * first column's name. Reports without "by" (older analyses) list sites. */
static void by_words(const struct pes_rnode *parent, const char **plural, const char **column)
{
    const char *by = pes_r_get_s(parent, "by");
    *plural = "sites", *column = "site";
    if (strcmp(by, "line") == 0)
        *plural = "source lines", *column = "source line";
    else if (strcmp(by, "function") == 0)
        *plural = "functions", *column = "function";
    else if (strcmp(by, "object") == 0)
        *plural = "data objects", *column = "object";
    else if (strcmp(by, "callpath") == 0)
        *plural = "source lines by call path", *column = "call path > source line";
}

/* The width of the label column of rows 0..n-1: 44, or the longest group
 * key (at most REPORT_LABEL_MAX; longer ones are elided, report_fit). */
static int label_width(const struct pes_rnode *rows, size_t n)
{
    size_t w = 44;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        for (const char *k = report_safe(pes_r_get_s(pes_r_at(rows, i), "key")); *k; k++)
            len += (*k & 0xC0) != 0x80;
        if (len > w)
            w = len;
    }
    return w > REPORT_LABEL_MAX ? REPORT_LABEL_MAX : (int)w;
}

/* A row's label: its group key, or the site of a per-site row. */
static void print_row_label(FILE *out, const struct pes_report_view *v, const struct pes_rnode *row,
                            int width)
{
    if (pes_r_get(row, "key"))
        print_label(out, pes_r_get_s(row, "key"), width);
    else
        print_site_label(out, v, pes_r_i(pes_r_get(row, "site")), width);
}

/* A row's top call paths (callpaths.h), each under it with its share of
 * the row's metric; 1 if it has any. */
static int print_row_paths(FILE *out, const struct pes_rnode *row)
{
    const struct pes_rnode *paths = pes_r_get(row, "callpaths");
    for (size_t k = 0; k < pes_r_count(paths); k++) {
        const struct pes_rnode *p = pes_r_at(paths, k);
        fprintf(out, "    %5.1f%%  %s\n", 100.0 * pes_r_get_f(p, "share"),
                report_safe(pes_r_get_s(p, "path")));
    }
    return pes_r_count(paths) > 0;
}

/* The rows (--by) that make most line accesses, with their mean reuse distances. */
static void print_site_reuse(FILE *out, const struct pes_report_view *v, const struct pes_rnode *c)
{
    const struct pes_rnode *rows = pes_r_get(c, "groups");
    if (!rows)
        rows = pes_r_get(c, "sites");
    size_t n = pes_r_count(rows);
    if (n == 0 || v->top == 0)
        return;
    size_t shown = n < v->top ? n : v->top;
    const char *plural, *column;
    by_words(c, &plural, &column);
    fprintf(out, "\n  Top %zu %s by line accesses\n", shown, plural);
    int w = label_width(rows, shown);
    fprintf(out, "  %-*s %14s %8s %11s %11s\n", w, column, "accesses", "cold", "mean PRD",
            "mean CRD");
    fprintf(out, "  %-*s %14s %8s %11s %11s\n", w, "", "(#)", "(%)", "(lines)", "(lines)");
    int paths = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct pes_rnode *r = pes_r_at(rows, i);
        char acc[32];
        uint64_t accesses = pes_r_get_u(r, "accesses");
        report_count(acc, sizeof acc, accesses);
        print_row_label(out, v, r, w);
        fprintf(out, " %14s %7.2f%% %11.1f %11.1f\n", acc,
                accesses ? 100.0 * (double)pes_r_get_u(r, "prd_cold") / (double)accesses : 0.0,
                pes_r_get_f(r, "prd_mean"), pes_r_get_f(r, "crd_mean"));
        paths |= print_row_paths(out, r);
    }
    if (paths)
        fprintf(out, "  (under a row: its top call paths, with their share of its accesses; "
                     "--by callpath: a row per path)\n");
    fprintf(out,
            "  (#: a count, %%: a share; accesses: line accesses; cold: the first accesses to a "
            "line among them;\n"
            "   mean PRD / CRD: mean reuse distance in %u-byte lines within the thread / within "
            "its shared\n"
            "   cache; rows: %s, --by line|site|function|object)\n",
            (unsigned)pes_r_get_u(pes_report_tree(v->r), "line"), plural);
}

/* The overlap model's terms per core count (docs/model.md §3), in the
 * predictions table's unit: why T_pred is what it is. */
static void print_runtime_terms(FILE *out, const struct pes_rnode *configs, double scale,
                                const char *unit)
{
    static const char *const heads[PES_TERM_COUNT] = {"compute", "chain",   "issue", "fill",
                                                      "bandw",   "exposed", "tlb",   "parallel"};
    fprintf(out,
            "\nRuntime terms per core %s (T_pred = max(max(issue, fill, bandw) + exposed + "
            "tlb,\n"
            "max(compute, chain)) + parallel; bound: the largest term)\n  %6s",
            unit, "cores");
    for (int k = 0; k < PES_TERM_COUNT; k++)
        fprintf(out, " %9s", heads[k]);
    fprintf(out, "  %s\n", "bound");
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *c = pes_r_at(configs, i);
        const struct pes_rnode *rt = pes_r_get(pes_r_get(c, "model"), "runtime");
        const struct pes_rnode *terms = pes_r_get(rt, "terms");
        fprintf(out, "  %6u", (unsigned)pes_r_get_u(c, "cores"));
        for (int k = 0; k < PES_TERM_COUNT; k++)
            fprintf(out, " %9.3f",
                    scale * pes_r_get_f(pes_r_get(terms, pes_runtime_term_name(k)), "seconds"));
        fprintf(out, "  %s\n", report_safe(pes_r_get_s(rt, "bound")));
    }
    fprintf(out,
            "  (compute: instructions at the issue width and ports; chain: loop-carried "
            "dependences; issue:\n"
            "   load/store ports; fill: lines below L1 at each level's rate; bandw: bytes over "
            "the bandwidth\n"
            "   of that many cores; exposed: fill latency not hidden by mlp or prefetchers; tlb: "
            "page walks;\n"
            "   parallel: fork/join and barriers. A term whose trace fact (pass model facts, "
            "TLB, prefetch)\n"
            "   or machine value (pes-calibrate) is missing is 0)\n");
}

static void print_predictions(FILE *out, const struct pes_rnode *root)
{
    size_t n_levels = pes_r_count(pes_r_get(pes_r_get(root, "machine"), "levels"));
    const struct pes_rnode *configs = pes_r_get(root, "configs");
    /* model, status and error band: the machine's, the same in every configuration */
    const struct pes_rnode *rt0 = pes_r_get(pes_r_get(pes_r_at(configs, 0), "model"), "runtime");
    const char *rm = pes_r_get_s(rt0, "model");
    int ppt = rm && !strcmp(rm, "ppt");
    fprintf(out,
            "\nPredicted hit rates (SDCM, PPT-Multicore Eq. 1-3; local: hits / accesses reaching "
            "the level)"
            " and runtime (%s)\n",
            ppt ? "Eq. 4-8" : "overlap model");
    fprintf(out, "  %6s", "cores");
    for (size_t l = 0; l < n_levels; l++)
        fprintf(out, "   L%zu hit", l + 1);
    fprintf(out, " %12s %12s %12s\n", "T_mem", "T_cpu", "T_pred");
    /* one unit for all times of the table, from the largest */
    double tmax = 0;
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *rt = pes_r_get(pes_r_get(pes_r_at(configs, i), "model"), "runtime");
        double t = pes_r_get_f(rt, "total_seconds");
        if (t > tmax)
            tmax = t;
    }
    double scale = tmax >= 1.0 ? 1.0 : tmax >= 1e-3 ? 1e3 : 1e6;
    const char *unit = scale == 1.0 ? "(s)" : scale == 1e3 ? "(ms)" : "(us)";
    fprintf(out, "  %6s", "(#)");
    for (size_t l = 0; l < n_levels; l++)
        fprintf(out, " %8s", "(%)");
    fprintf(out, " %12s %12s %12s\n", unit, unit, unit);
    int unreached = 0, simulated = 0, parallel = 0;
    /* a level that only a few accesses reach and none hits: said in words */
    size_t few_level = 0;
    double few_reach = 0, few_total = 0;
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *c = pes_r_at(configs, i), *model = pes_r_get(c, "model");
        const struct pes_rnode *local = pes_r_get(model, "hit_local"),
                               *global = pes_r_get(model, "hit_global"),
                               *rt = pes_r_get(model, "runtime");
        simulated |= pes_r_get(c, "simulation") != NULL;
        parallel |= pes_r_get_u(c, "cores") > 1;
        double total = 0; /* the configuration's line accesses */
        const struct pes_rnode *prd = pes_r_get(c, "prd");
        for (size_t k = 0; k < pes_r_count(prd); k++)
            total += (double)pes_r_get_u(pes_r_get(pes_r_at(prd, k), "histogram"), "accesses");
        fprintf(out, "  %6u", (unsigned)pes_r_get_u(c, "cores"));
        for (size_t l = 0; l < n_levels; l++) {
            double reach = l == 0 || !global ? 1.0 : 1.0 - pes_r_f(pes_r_at(global, l - 1));
            double hit = pes_r_f(pes_r_at(local, l));
            /* every access hits above: no hit rate at this level (not 0 %) */
            if (reach * total < 0.5 && total > 0) {
                fprintf(out, " %8s", "-");
                unreached = 1;
                continue;
            }
            fprintf(out, " %7.2f%%", 100.0 * hit);
            if (!few_level && l > 0 && hit < 0.00005 && reach < 0.01) /* prints as 0.00% */
                few_level = l + 1, few_reach = reach * total, few_total = total;
        }
        fprintf(out, " %12.3f %12.3f %12.3f\n", scale * pes_r_get_f(rt, "mem_seconds"),
                scale * pes_r_get_f(rt, "cpu_seconds"), scale * pes_r_get_f(rt, "total_seconds"));
    }
    fprintf(out,
            "  (%%: a share; s / ms / us: seconds / milliseconds / microseconds; Ln hit: local hit "
            "rate;\n"
            "   T_mem, T_cpu: predicted memory and compute time of the run's work; T_pred = %s,\n"
            "   the predicted runtime; docs/model.md)\n",
            ppt ? "T_mem + T_cpu" : "max(T_mem, T_cpu)");
    if (unreached)
        fprintf(out, "  (Ln hit \"-\": no access reaches the level: the model has every one hit "
                     "a level above it)\n");
    if (few_level) {
        char reach[32], total[32];
        report_count(reach, sizeof reach, (uint64_t)(few_reach + 0.5));
        report_count(total, sizeof total, (uint64_t)(few_total + 0.5));
        fprintf(out,
                "  (L%zu hit 0.00 %%: of %s line accesses only about %s reach L%zu, the rest hit "
                "above it, and (almost)\n"
                "   none of those hits there: a rate of very few accesses)\n",
                few_level, total, reach, few_level);
    }
    if (parallel && !simulated)
        fprintf(out,
                "  Ln hit counts no coherence misses: the model reads each thread's reuse "
                "distances, not\n"
                "  the other cores' stores that invalidate its lines, so false or true sharing "
                "does not lower\n"
                "  it; --simulate simulates MESI and reports the invalidations and coherence "
                "misses\n");
    const char *v = pes_r_get_s(rt0, "validation");
    const char *name = report_safe(pes_r_get_s(pes_r_get(root, "machine"), "name"));
    const struct pes_rnode *band = pes_r_get(rt0, "error_band");
    if (band && !strcmp(pes_r_get_s(band, "model"), rm ? rm : ""))
        fprintf(out,
                "  T_pred error band on this host: mean %.0f %%, max %.0f %% (|predicted - "
                "measured| / measured over\n"
                "  %u measured runs of bench/model_vs_host.py with machine '%s'; docs/model.md, "
                "\"Validation\")\n",
                100.0 * pes_r_get_f(band, "mean"), 100.0 * pes_r_get_f(band, "max"),
                (unsigned)pes_r_get_u(band, "runs"), name);
    else if (band)
        fprintf(out,
                "  T_pred has no measured error band for the %s runtime model (machine '%s' has "
                "one for --runtime-model\n"
                "  %s: mean %.0f %%, max %.0f %%; docs/model.md, \"Validation\")\n",
                report_safe(rm), name, report_safe(pes_r_get_s(band, "model")),
                100.0 * pes_r_get_f(band, "mean"), 100.0 * pes_r_get_f(band, "max"));
    else if (!strcmp(v, "calibrated"))
        fprintf(out,
                "  T_pred uses machine '%s' as calibrated on its host (pes-calibrate: measured "
                "clock, latencies\n"
                "  and throughputs); no measured run was compared with it yet: "
                "bench/model_vs_host.py --record\n"
                "  measures its error band (docs/model.md, \"Validation\")\n",
                name);
    else if (!strcmp(v, "preset"))
        fprintf(out,
                "  T_pred uses the preset '%s' (published figures of that CPU, not measured) and "
                "is not validated:\n"
                "  no measured run was compared with it; read it as a relative figure "
                "(docs/model.md, \"Validation\")\n",
                name);
    else
        fprintf(out,
                "  T_pred uses machine '%s', unvalidated (generic latencies and clock; "
                "pes-calibrate measures this\n"
                "  host): read it as a relative figure (docs/model.md, \"Validation\")\n",
                name);
    if (!ppt && pes_r_get(rt0, "terms"))
        print_runtime_terms(out, configs, scale, unit);
}

static void count(char *buf, size_t len, const struct pes_rnode *o, const char *key)
{
    report_count(buf, len, pes_r_get_u(o, key));
}

/* A report array of strings as "a, b"; "-" when empty. */
static void join_strings(char *buf, size_t len, const struct pes_rnode *a)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < pes_r_count(a) && o + 1 < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", pes_r_s(pes_r_at(a, i)));
    if (o == 0)
        snprintf(buf, len, "-");
}

/* The cache-line table (c2c.h): per contended line its totals, then one row
 * per offset touched. */
void report_print_cache_lines(FILE *out, const struct pes_rnode *parent, const char *what)
{
    const struct pes_rnode *lines = pes_r_get(parent, "cache_lines");
    size_t n = pes_r_count(lines);
    if (!lines)
        return;
    if (n == 0) {
        fprintf(out, "\n  No cache line had %s\n", what);
        return;
    }
    fprintf(out, "\n  Top %zu cache lines by %s (c2c)\n", n, what);
    const char *untyped = NULL; /* a part named by its byte offset, for want of -g */
    for (size_t i = 0; i < n; i++) {
        const struct pes_rnode *l = pes_r_at(lines, i);
        const struct pes_rnode *in = pes_r_get(l, "invalidations"),
                               *co = pes_r_get(l, "coherence_misses"),
                               *tr = pes_r_get(l, "transfers");
        char th[96], obj[300];
        report_thread_list(th, sizeof th, report_thread_mask(pes_r_get(l, "threads")));
        const char *part = pes_r_get_s(l, "part");
        if (strcmp(part, pes_r_get_s(l, "object")) == 0)
            part = ""; /* a part without a name of its own */
        snprintf(obj, sizeof obj, "%s%s%s%s", report_safe(pes_r_get_s(l, "object")),
                 *part ? " (from " : "", report_safe(part), *part ? ")" : "");
        fprintf(out, "  #%zu line 0x%" PRIx64 "  object %s  threads %s\n", i + 1,
                pes_r_get_u(l, "address"), obj, th);
        char c[6][32];
        count(c[0], sizeof c[0], in, "true");
        count(c[1], sizeof c[1], in, "false");
        count(c[2], sizeof c[2], co, "true");
        count(c[3], sizeof c[3], co, "false");
        count(c[4], sizeof c[4], tr, "true");
        count(c[5], sizeof c[5], tr, "false");
        fprintf(out,
                "     invalidations %s true / %s false; coherence misses %s true / %s false; "
                "transfers %s true / %s false\n",
                c[0], c[1], c[2], c[3], c[4], c[5]);
        /* the parts' column: 20, or the longest part up to 48 (longer ones elided) */
        const struct pes_rnode *offs = pes_r_get(l, "offsets");
        int pw = 20;
        for (size_t k = 0; k < pes_r_count(offs); k++) {
            int len = 0;
            for (const char *c = report_safe(pes_r_get_s(pes_r_at(offs, k), "part")); *c; c++)
                len += (*c & 0xC0) != 0x80;
            if (len > pw)
                pw = len > 48 ? 48 : len;
        }
        fprintf(out, "     %6s %4s %10s %10s %8s %8s %8s %8s %8s %8s  %-9s %-*s %s\n", "offset",
                "size", "reads", "writes", "inval T", "inval F", "coh T", "coh F", "xfer T",
                "xfer F", "threads", pw, "object part", "source lines");
        fprintf(out, "     %6s %4s %10s %10s %8s %8s %8s %8s %8s %8s\n", "(B)", "(B)", "(#)", "(#)",
                "(#)", "(#)", "(#)", "(#)", "(#)", "(#)");
        for (size_t k = 0; k < pes_r_count(offs); k++) {
            const struct pes_rnode *f = pes_r_at(offs, k);
            const struct pes_rnode *fi = pes_r_get(f, "invalidations"),
                                   *fc = pes_r_get(f, "coherence_misses"),
                                   *ft = pes_r_get(f, "transfers");
            char src[256];
            report_thread_list(th, sizeof th, report_thread_mask(pes_r_get(f, "threads")));
            join_strings(src, sizeof src, pes_r_get(f, "sources"));
            const char *fp = pes_r_get_s(f, "part");
            char part[4 * 48 + 8];
            report_fit(part, sizeof part, report_safe(*fp ? fp : "-"), pw);
            char n[8][32];
            count(n[0], sizeof n[0], f, "reads");
            count(n[1], sizeof n[1], f, "writes");
            count(n[2], sizeof n[2], fi, "true");
            count(n[3], sizeof n[3], fi, "false");
            count(n[4], sizeof n[4], fc, "true");
            count(n[5], sizeof n[5], fc, "false");
            count(n[6], sizeof n[6], ft, "true");
            count(n[7], sizeof n[7], ft, "false");
            fprintf(out,
                    "     %6" PRIu64 " %4" PRIu64
                    " %10s %10s %8s %8s %8s %8s %8s %8s  %-9s %s %s\n",
                    pes_r_get_u(f, "offset"), pes_r_get_u(f, "size"), n[0], n[1], n[2], n[3], n[4],
                    n[5], n[6], n[7], th, part, report_safe(src));
            if (pes_r_get(f, "part_untyped") && !untyped)
                untyped = fp;
        }
    }
    fprintf(out, "  (B: bytes, #: a count; per line: its address, the data object holding it and "
                 "the part at its\n"
                 "   first byte; per offset touched: reads / writes since the line's first "
                 "coherence event (a sampled\n"
                 "   trace: sampled accesses), the invalidations its stores caused (inval), the "
                 "coherence misses of\n"
                 "   its accesses (coh) and the line transfers to them (xfer; a sampled trace: "
                 "communication\n"
                 "   events), true (T) / false (F) sharing; offsets written by different threads "
                 "with only false\n"
                 "   sharing: pad or move them apart; docs/simulation.md, \"Cache-line table\")\n");
    if (untyped)
        fprintf(out,
                "  (%s: a byte offset into the object; its field or element names need the "
                "program built\n"
                "   with -g: without it pes-clang adds line tables only, which name no type)\n",
                report_safe(untyped));
}

/* Why a level's warning is outside SDCM's assumptions (assumptions.c), in
 * words after the warning: the "model_assumptions" entries of the level. */
static void print_outside_model(FILE *out, const struct pes_rnode *list, unsigned level)
{
    for (size_t i = 0; i < pes_r_count(list); i++) {
        const struct pes_rnode *e = pes_r_at(list, i);
        if (pes_r_get_u(e, "level") != level)
            continue;
        const char *reason = pes_r_get_s(e, "reason");
        if (!strcmp(reason, "set_conflicts")) {
            fprintf(out,
                    "; %.0f %% of its misses are conflict misses: set conflicts, outside the "
                    "model's assumptions (SDCM places lines in sets at random)",
                    100.0 * pes_r_get_f(e, "conflict_share"));
            if (pes_r_get(e, "site")) {
                char n[32];
                report_count(n, sizeof n, pes_r_get_u(e, "site_conflict_misses"));
                fprintf(out, "; most at %s (%s of them)", report_safe(pes_r_get_s(e, "site")), n);
            }
            if (pes_r_get(e, "stride_bytes")) {
                char st[32];
                report_count(st, sizeof st, pes_r_get_u(e, "stride_bytes"));
                fprintf(out,
                        ", whose accesses step %s bytes and reach %" PRIu64 " of the %" PRIu64
                        " sets",
                        st, pes_r_get_u(e, "sets_reached"), pes_r_get_u(e, "sets"));
            }
        } else if (!strcmp(reason, "cyclic_at_capacity")) {
            const struct pes_rnode *band = pes_r_get(e, "band_lines");
            char cap[32], lo[32], hi[32];
            report_count(cap, sizeof cap, pes_r_get_u(e, "capacity_lines"));
            report_count(lo, sizeof lo, pes_r_u(pes_r_at(band, 0)));
            report_count(hi, sizeof hi, pes_r_u(pes_r_at(band, 1)));
            fprintf(
                out,
                "; reuses at the capacity, outside the model's assumptions: %.0f %% of the "
                "accesses reaching it reuse a line after %s..%s other lines (the level holds %s), "
                "where SDCM's hit probability is between %.0f %% and %.0f %%, but lines "
                "spread evenly over the sets all hit below the capacity and all miss above; "
                "they alone move the hit rate by %+.1f pp",
                100.0 * pes_r_get_f(e, "band_share"), lo, hi, cap,
                100.0 * PES_ASSUMPTIONS_BAND_EDGE, 100.0 * (1 - PES_ASSUMPTIONS_BAND_EDGE),
                100.0 * pes_r_get_f(e, "band_shift"));
            if (pes_r_get_u(e, "binned"))
                fputs(" (most of these distances are known only to their power-of-two bin of "
                      "the profile, taken as spread evenly over it, as the model takes them)",
                      out);
        } else if (!strcmp(reason, "level_above")) {
            fprintf(out,
                    "; inherited from L%" PRIu64 ", outside the model's assumptions: this level's "
                    "accesses are the misses of the levels above, which differ between the "
                    "model and the simulation",
                    pes_r_get_u(e, "above"));
        }
    }
}

static void print_simulation(FILE *out, const struct pes_report_view *v, const struct pes_rnode *c)
{
    const struct pes_rnode *sim = pes_r_get(c, "simulation");
    const struct pes_rnode *local = pes_r_get(pes_r_get(c, "model"), "hit_local");
    int mimicked = (int)pes_r_get_u(c, "mimicked");
    fprintf(out, "\nSimulation (set-associative LRU + MESI) — %s%u %s\n",
            mimicked ? "mimicked " : "", (unsigned)pes_r_get_u(c, "cores"),
            mimicked ? "cores" : "threads, one core each");
    fprintf(out, "  %-5s %14s %9s %9s %12s %12s %12s %12s\n", "level", "accesses", "hit", "model",
            "compulsory", "capacity", "coherence", "conflict");
    fprintf(out, "  %-5s %14s %9s %9s %12s %12s %12s %12s\n", "", "(#)", "(%)", "(%)", "(#)", "(#)",
            "(#)", "(#)");
    const struct pes_rnode *levels = pes_r_get(sim, "levels");
    int unreached = 0;
    for (size_t l = 0; l < pes_r_count(levels); l++) {
        const struct pes_rnode *lv = pes_r_at(levels, l);
        uint64_t reaching = pes_r_get_u(lv, "accesses");
        char buf[32], m1[32], m2[32], m3[32], m4[32], hit[32];
        report_count(buf, sizeof buf, reaching);
        count(m1, sizeof m1, lv, "compulsory");
        count(m2, sizeof m2, lv, "capacity");
        count(m3, sizeof m3, lv, "coherence");
        count(m4, sizeof m4, lv, "conflict");
        /* no access reached the level: no hit rate (not 0 %) */
        if (reaching)
            snprintf(hit, sizeof hit, "%8.2f%%",
                     100.0 * (double)pes_r_get_u(lv, "hits") / (double)reaching);
        else
            snprintf(hit, sizeof hit, "%9s", "-"), unreached = 1;
        fprintf(out, "  L%-4zu %14s %s %8.2f%% %12s %12s %12s %12s\n", l + 1, buf, hit,
                100.0 * pes_r_f(pes_r_at(local, l)), m1, m2, m3, m4);
    }
    fprintf(out, "  (#: a count, %%: a share; accesses: line accesses reaching the level; hit: "
                 "simulated local hit\n"
                 "   rate; model: SDCM's; misses by cause: compulsory = first touch, capacity = "
                 "a fully associative\n"
                 "   cache of the same size misses too, coherence = the line was invalidated, "
                 "conflict = a fully\n"
                 "   associative cache of the same size would hit: set conflicts)\n");
    if (unreached)
        fprintf(out,
                "  (hit \"-\": no access reached the level: every one hit a level above it)\n");
    struct report_disagreement dis[8];
    size_t n_dis = report_model_disagreements(c, dis, 8);
    for (size_t i = 0; i < n_dis; i++) {
        fprintf(out,
                "  warning: L%u: the model (SDCM) says %.1f %% hits, the simulation %.1f %% "
                "(%+.1f pp)",
                dis[i].level, 100.0 * dis[i].model, 100.0 * dis[i].sim,
                100.0 * (dis[i].sim - dis[i].model));
        print_outside_model(out, pes_r_get(c, "model_assumptions"), dis[i].level);
        fputc('\n', out);
    }
    const struct pes_rnode *inv = pes_r_get(sim, "invalidations"),
                           *coh = pes_r_get(sim, "coherence_misses"),
                           *tr = pes_r_get(sim, "transfers");
    char it[32], ifl[32], ct[32], cf[32], mt[32], mf[32], wb[32];
    count(wb, sizeof wb, sim, "writebacks");
    count(it, sizeof it, inv, "true");
    count(ifl, sizeof ifl, inv, "false");
    count(ct, sizeof ct, coh, "true");
    count(cf, sizeof cf, coh, "false");
    count(mt, sizeof mt, tr, "true");
    count(mf, sizeof mf, tr, "false");
    fprintf(out,
            "  invalidations %s true / %s false sharing; coherence misses %s true / %s false;"
            " line transfers %s true / %s false; writebacks %s\n",
            it, ifl, ct, cf, mt, mf, wb);

    const char *sort = pes_r_get_s(sim, "sort");
    const struct pes_rnode *sites = pes_r_get(sim, "groups");
    if (!sites)
        sites = pes_r_get(sim, "sites");
    size_t n = pes_r_count(sites);
    const char *plural, *column;
    by_words(sim, &plural, &column);
    if (n == 0) {
        fprintf(out, "  no %s has a non-zero '%s' count\n", column, sort);
        return;
    }
    fprintf(out, "\n  Top %zu %s by %s\n", n, plural, sort);
    int w = label_width(sites, n);
    fprintf(out, "  %-*s %12s %8s %11s %11s %11s %11s  %-7s %s\n", w, column, "accesses", "L1 miss",
            "inval T", "inval F", "coh T", "coh F", "sharing", "threads");
    fprintf(out, "  %-*s %12s %8s %11s %11s %11s %11s\n", w, "", "(#)", "(%)", "(#)", "(#)", "(#)",
            "(#)");
    int paths = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pes_rnode *s = pes_r_at(sites, i);
        print_row_label(out, v, s, w);
        uint64_t accesses = pes_r_get_u(s, "accesses");
        char acc[32], threads[96];
        report_count(acc, sizeof acc, accesses);
        report_thread_list(threads, sizeof threads, report_thread_mask(pes_r_get(s, "threads")));
        const struct pes_rnode *si = pes_r_get(s, "invalidations"),
                               *sc = pes_r_get(s, "coherence_misses");
        char n4[4][32];
        count(n4[0], sizeof n4[0], si, "true");
        count(n4[1], sizeof n4[1], si, "false");
        count(n4[2], sizeof n4[2], sc, "true");
        count(n4[3], sizeof n4[3], sc, "false");
        fprintf(out, " %12s %7.2f%% %11s %11s %11s %11s  %-7s %s\n", acc,
                accesses ? 100.0 * (double)pes_r_get_u(s, "l1_misses") / (double)accesses : 0.0,
                n4[0], n4[1], n4[2], n4[3], pes_r_get_s(s, "sharing"), threads);
        paths |= print_row_paths(out, s);
    }
    if (paths)
        fprintf(out,
                "  (under a row: its top call paths, with their share of its '%s' count; "
                "--by callpath: a row per path)\n",
                sort);
    fprintf(out,
            "  (#: a count, %%: a share; accesses: line accesses; L1 miss: share of them that miss "
            "L1; inval T / F:\n"
            "   invalidations its stores caused in other cores, true / false sharing; coh T / F: "
            "coherence misses of\n"
            "   its accesses, true / false sharing; sharing: the kind that dominates 4:1, else "
            "mixed; threads:\n"
            "   the threads that ran it; rows: %s, --by line|site|function|object; "
            "docs/simulation.md)\n",
            plural);
    report_print_cache_lines(out, sim, "coherence events");
}

/* ------------------------------------------------------------ other sections
 * What an analysis publishes beyond the sections above is printed as it is:
 * a title from its key, then "name  value" lines; an array of objects is a
 * table with the first object's names as columns. A new analysis shows up
 * in the text report without a change here. */

static int known_config_key(const char *key)
{
    static const char *const known[] = {
        "cores",      "mimicked",     "prd",      "crd",   "sites",
        "by",         "groups",       "annotate", "model", "miss_ratio_curve",
        "simulation", "site_strides", NULL};
    for (int i = 0; known[i]; i++)
        if (strcmp(key, known[i]) == 0)
            return 1;
    return 0;
}

static void print_other(FILE *out, const struct pes_rnode *c, const struct pes_rnode *section)
{
    char title[64];
    snprintf(title, sizeof title, "%s", pes_r_key(section));
    for (char *t = title; *t; t++)
        if (*t == '_')
            *t = ' ';
    if (*title)
        *title = (char)toupper((unsigned char)*title);
    int mimicked = (int)pes_r_get_u(c, "mimicked");
    fprintf(out, "\n%s — %s%u %s\n", title, mimicked ? "mimicked " : "",
            (unsigned)pes_r_get_u(c, "cores"), streams_word(c));
    if (pes_r_kind(section) != PES_R_OBJECT) {
        fputs("  ", out);
        report_print_value(out, section);
        fputc('\n', out);
        return;
    }
    for (size_t i = 0; i < pes_r_count(section); i++) {
        const struct pes_rnode *n = pes_r_at(section, i);
        if (pes_r_kind(n) == PES_R_ARRAY && pes_r_kind(pes_r_at(n, 0)) == PES_R_OBJECT) {
            fprintf(out, "  %s\n", pes_r_key(n));
            report_print_table(out, n);
            continue;
        }
        fprintf(out, "  %-24s ", pes_r_key(n));
        report_print_value(out, n);
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------ --annotate
 * Like cg_annotate: a source file's lines with the counts of each line that
 * has any in a margin, and a few lines of context around them. */

enum { ANNOTATE_CONTEXT = 3 };

static int by_line_no(const void *a, const void *b)
{
    uint64_t x = pes_r_get_u(*(const struct pes_rnode *const *)a, "line");
    uint64_t y = pes_r_get_u(*(const struct pes_rnode *const *)b, "line");
    return (x > y) - (x < y);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Whether the --annotate argument names this source file: "all", the path
 * as the site table has it, or its last components ("false_sharing.c",
 * "kernels/false_sharing.c"). */
static int annotate_wants(const char *arg, const char *file)
{
    if (strcmp(arg, "all") == 0 || strcmp(arg, file) == 0)
        return 1;
    size_t la = strlen(arg), lf = strlen(file);
    return la < lf && strcmp(file + lf - la, arg) == 0 && file[lf - la - 1] == '/';
}

static void margin_u(FILE *out, int width, uint64_t v)
{
    if (v == 0)
        fprintf(out, "%*s ", width, ".");
    else {
        char buf[32];
        report_count(buf, sizeof buf, v);
        fprintf(out, "%*s ", width, buf);
    }
}

/* The margin of one source line: its counts, or blanks. */
static void annotate_margin(FILE *out, const struct pes_rnode *row, size_t n_levels, int sim)
{
    if (!row) {
        fprintf(out, "%*s", 13 + (sim ? (int)(10 * n_levels) + 40 : 0), "");
        return;
    }
    margin_u(out, 12, pes_r_get_u(row, "accesses"));
    if (!sim)
        return;
    const struct pes_rnode *m = pes_r_get(row, "misses");
    for (size_t l = 0; l < n_levels; l++)
        margin_u(out, 9, pes_r_u(pes_r_at(m, l)));
    const struct pes_rnode *in = pes_r_get(row, "invalidations"),
                           *co = pes_r_get(row, "coherence_misses");
    margin_u(out, 9, pes_r_get_u(in, "true"));
    margin_u(out, 9, pes_r_get_u(in, "false"));
    margin_u(out, 9, pes_r_get_u(co, "true"));
    margin_u(out, 9, pes_r_get_u(co, "false"));
}

/* The sum of rows[0..n-1]'s key (inside their object `in`, if not NULL). */
static uint64_t sum_u(const struct pes_rnode **rows, size_t n, const char *in, const char *key)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += pes_r_get_u(in ? pes_r_get(rows[i], in) : rows[i], key);
    return s;
}

/* The margin of rows[0..k-1] summed. */
static void annotate_sum(FILE *out, const struct pes_rnode **rows, size_t k, size_t n_levels,
                         int sim)
{
    margin_u(out, 12, sum_u(rows, k, NULL, "accesses"));
    for (size_t l = 0; sim && l < n_levels; l++) {
        uint64_t m = 0;
        for (size_t i = 0; i < k; i++)
            m += pes_r_u(pes_r_at(pes_r_get(rows[i], "misses"), l));
        margin_u(out, 9, m);
    }
    if (sim) {
        margin_u(out, 9, sum_u(rows, k, "invalidations", "true"));
        margin_u(out, 9, sum_u(rows, k, "invalidations", "false"));
        margin_u(out, 9, sum_u(rows, k, "coherence_misses", "true"));
        margin_u(out, 9, sum_u(rows, k, "coherence_misses", "false"));
    }
}

static void annotate_head(FILE *out, size_t n_levels, int sim)
{
    fprintf(out, "%12s ", "accesses");
    for (size_t l = 0; sim && l < n_levels; l++)
        fprintf(out, "%8s%zu ", "L", l + 1);
    if (sim)
        fprintf(out, "%9s %9s %9s %9s ", "inval T", "inval F", "coh T", "coh F");
    fprintf(out, " source\n%12s ", "(#)");
    for (size_t l = 0; sim && l < n_levels; l++)
        fprintf(out, "%9s ", "(misses)");
    if (sim)
        fprintf(out, "%9s %9s %9s %9s ", "(#)", "(#)", "(#)", "(#)");
    fputc('\n', out);
}

static int by_function(const void *a, const void *b)
{
    return strcmp(pes_r_get_s(*(const struct pes_rnode *const *)a, "function"),
                  pes_r_get_s(*(const struct pes_rnode *const *)b, "function"));
}

/* The sites without a source file (no debug location: a build without -g,
 * code the compiler made up), summed per function: no line to annotate, but
 * their counts are part of the totals. */
static void annotate_no_file(FILE *out, const struct pes_rnode **rows, size_t n, size_t n_levels,
                             int sim)
{
    qsort(rows, n, sizeof *rows, by_function);
    fprintf(out, "\n-- (no source file: accesses without a debug location)\n");
    annotate_head(out, n_levels, sim);
    for (size_t i = 0, j; i < n; i = j) {
        const char *fn = pes_r_get_s(rows[i], "function");
        for (j = i; j < n && strcmp(pes_r_get_s(rows[j], "function"), fn) == 0; j++)
            ;
        annotate_sum(out, rows + i, j - i, n_levels, sim);
        fprintf(out, " <counts for %s, no source line>\n", *fn ? report_safe(fn) : "?");
    }
}

static void annotate_file(FILE *out, const char *file, const struct pes_rnode **rows, size_t n,
                          size_t n_levels, int sim)
{
    qsort(rows, n, sizeof *rows, by_line_no);
    fprintf(out, "\n-- %s\n", report_safe(file));
    annotate_head(out, n_levels, sim);
    /* the file's sites without a line (line 0: code the compiler merged or
     * made up), summed first, as cg_annotate's "<counts for unidentified lines>" */
    size_t k = 0;
    while (k < n && pes_r_get_u(rows[k], "line") == 0)
        k++;
    if (k) {
        annotate_sum(out, rows, k, n_levels, sim);
        fprintf(out, " <counts for unidentified lines of %s>\n", report_safe(base_name(file)));
    }
    FILE *src = report_open_source(file);
    if (!src) {
        fprintf(out, "  (source not readable: %s: %s; the counts per line follow)\n",
                report_safe(file), strerror(errno));
        for (size_t i = k; i < n; i++) {
            annotate_margin(out, rows[i], n_levels, sim);
            fprintf(out, " line %" PRIu64 "\n", pes_r_get_u(rows[i], "line"));
        }
        return;
    }
    char *text = NULL;
    size_t cap = 0;
    uint64_t lineno = 0, last_printed = 0;
    ssize_t len;
    while ((len = getline(&text, &cap, src)) >= 0) {
        lineno++;
        while (k < n && pes_r_get_u(rows[k], "line") < lineno)
            k++;
        uint64_t next = k < n ? pes_r_get_u(rows[k], "line") : UINT64_MAX;
        uint64_t prev = k > 0 ? pes_r_get_u(rows[k - 1], "line") : 0;
        int near = (next != UINT64_MAX && next - lineno <= ANNOTATE_CONTEXT) ||
                   (prev && lineno - prev <= ANNOTATE_CONTEXT);
        if (!near)
            continue;
        if (last_printed + 1 != lineno)
            fprintf(out, "-- line %" PRIu64 " ----------------------------------------\n", lineno);
        if (len > 0 && text[len - 1] == '\n')
            text[len - 1] = '\0';
        annotate_margin(out, next == lineno ? rows[k] : NULL, n_levels, sim);
        /* the source as it is, but for what a terminal would act on */
        for (char *c = text; *c; c++)
            if ((unsigned char)*c < 0x20 ? *c != '\t' : *c == 0x7f)
                *c = '?';
        fprintf(out, " %s\n", text);
        last_printed = lineno;
    }
    free(text);
    fclose(src);
    for (; k < n; k++)
        if (pes_r_get_u(rows[k], "line") > lineno) {
            annotate_margin(out, rows[k], n_levels, sim);
            fprintf(out,
                    " (line %" PRIu64 ": past the end of the file, which changed since the run?)\n",
                    pes_r_get_u(rows[k], "line"));
        }
}

static void print_annotate(FILE *out, const struct pes_report_view *v, const struct pes_rnode *root)
{
    const struct pes_rnode *c = pes_r_at(pes_r_get(root, "configs"), 0);
    const struct pes_rnode *rows = pes_r_get(pes_r_get(c, "simulation"), "annotate");
    int sim = rows != NULL;
    if (!rows)
        rows = pes_r_get(c, "annotate");
    size_t n = pes_r_count(rows),
           n_levels = pes_r_count(pes_r_get(pes_r_get(root, "machine"), "levels"));
    fprintf(out, "\nAnnotated source (--annotate %s) — %s%u %s\n", report_safe(v->annotate),
            pes_r_get_u(c, "mimicked") ? "mimicked " : "", (unsigned)pes_r_get_u(c, "cores"),
            streams_word(c));
    if (!rows) {
        fprintf(out, "  no per-line counts (--annotate needs site rows: not with --by object or "
                     "--sample-rate)\n");
        return;
    }
    const struct pes_rnode **mine = malloc((n ? n : 1) * sizeof *mine);
    char *done = calloc(n ? n : 1, 1);
    size_t files = 0;
    for (size_t i = 0; mine && done && i < n; i++) {
        const char *file = pes_r_get_s(pes_r_at(rows, i), "file");
        if (done[i] || !*file || !annotate_wants(v->annotate, file))
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && strcmp(pes_r_get_s(pes_r_at(rows, j), "file"), file) == 0) {
                mine[m++] = pes_r_at(rows, j);
                done[j] = 1;
            }
        annotate_file(out, file, mine, m, n_levels, sim);
        files++;
    }
    if (mine && strcmp(v->annotate, "all") == 0) {
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (!*pes_r_get_s(pes_r_at(rows, j), "file"))
                mine[m++] = pes_r_at(rows, j);
        if (m) {
            annotate_no_file(out, mine, m, n_levels, sim);
            files++;
        }
    }
    if (files == 0) {
        fprintf(out, "  no accesses from a file named %s; the files with accesses:",
                report_safe(v->annotate));
        for (size_t i = 0; i < n; i++) {
            const char *f = pes_r_get_s(pes_r_at(rows, i), "file");
            int seen = 0;
            for (size_t j = 0; j < i; j++)
                seen |= strcmp(pes_r_get_s(pes_r_at(rows, j), "file"), f) == 0;
            if (!seen)
                fprintf(out, " %s", report_safe(base_name(f)));
        }
        fputc('\n', out);
    }
    fprintf(
        out,
        "  (margin: per source line, the line accesses of its sites (#)%s;\n"
        "   \".\": none; lines without counts are context; -- line N: where the listing resumes)\n",
        sim ? ", the misses at each level (Ln: accesses\n"
              "   that missed Ln), the invalidations its stores caused and the coherence misses of "
              "its\n"
              "   accesses, true (T) / false (F) sharing (#)"
            : "");
    free(mine);
    free(done);
}

int pes_report_write_text(FILE *out, const struct pes_report_view *v)
{
    if (pes_report_failed(v->r))
        return -1;
    if (pes_report_is_sampled(v->r))
        return pes_report_write_sampled_text(out, v->r);
    const struct pes_rnode *root = pes_report_tree(v->r);
    const struct pes_rnode *configs = pes_r_get(root, "configs");
    print_summary(out, root);
    report_print_findings(out, root);
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        print_profiles(out, root, pes_r_at(configs, i));
        print_site_reuse(out, v, pes_r_at(configs, i));
    }
    print_predictions(out, root);
    for (size_t i = 0; i < pes_r_count(configs); i++)
        if (pes_r_get(pes_r_at(configs, i), "simulation"))
            print_simulation(out, v, pes_r_at(configs, i));
    for (size_t i = 0; i < pes_r_count(configs); i++) {
        const struct pes_rnode *c = pes_r_at(configs, i);
        for (size_t k = 0; k < pes_r_count(c); k++)
            if (!known_config_key(pes_r_key(pes_r_at(c, k))))
                print_other(out, c, pes_r_at(c, k));
    }
    if (v->annotate)
        print_annotate(out, v, root);
    return ferror(out) ? -1 : 0;
}
