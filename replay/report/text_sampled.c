/*
 * text_sampled.c — the text reports of a sampled trace and of --compare,
 * from the report tree that the sampled analyses (analyses/sampled_*.c) and
 * analyses/accuracy.c fill
 * (keys: docs/accuracy.md). Writers never compute: shares and sums for
 * display only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_util.h"
#include "writers.h"

static void text_num(FILE *out, const char *fmt, double v)
{
    if (isnan(v))
        fputs("n/a", out);
    else
        fprintf(out, fmt, v);
}

/* What the stated intervals include (older reports: Wilson alone). */
static const char *interval_kind(const struct pes_rnode *o)
{
    return strcmp(pes_r_get_s(o, "interval_bias"), "calibrated") == 0
               ? "Wilson with Kish's effective sample size, widened by each family's calibrated "
                 "model error"
               : "Wilson with Kish's effective sample size, sampling error only";
}

/* " [lo, hi]" in percent of a [lo, hi] interval node, or nothing (older
 * reports, undefined values). */
static void ci_text(FILE *out, const char *fmt, const struct pes_rnode *ci)
{
    if (pes_r_count(ci) != 2)
        return;
    fprintf(out, fmt, 100 * pes_r_f(pes_r_at(ci, 0)), 100 * pes_r_f(pes_r_at(ci, 1)));
}

/* A histogram ([{"lo","hi","count"}]) with its total; bins under 0.05 % of
 * the total are left out (converted histograms have long, thin tails). The
 * bins' 90 % intervals follow where the report has them. */
static void hist_text(FILE *out, const char *title, const char *unit, const struct pes_rnode *h)
{
    double total = 0;
    for (size_t i = 0; i < pes_r_count(h); i++)
        total += pes_r_get_f(pes_r_at(h, i), "count");
    if (total <= 0)
        return;
    int ci = pes_r_count(h) && pes_r_get(pes_r_at(h, 0), "share_ci90");
    fprintf(out, "\n%s (%.0f)\n  %-24s %12s %8s%s\n  %-24s %12s %8s%s\n", title, total, "distance",
            "count", "share", ci ? "     90 % interval" : "", unit, "(#)", "(%)",
            ci ? "               (%)" : "");
    for (size_t i = 0; i < pes_r_count(h); i++) {
        const struct pes_rnode *b = pes_r_at(h, i);
        double c = pes_r_get_f(b, "count");
        if (c < 0.0005 * total)
            continue;
        uint64_t lo = pes_r_get_u(b, "lo"), hi = pes_r_get_u(b, "hi");
        char range[48];
        if (hi == lo + 1)
            snprintf(range, sizeof range, "%llu", (unsigned long long)lo);
        else
            snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)lo,
                     (unsigned long long)hi - 1);
        fprintf(out, "  %-24s %12.1f %7.2f%%", range, c, 100 * c / total);
        ci_text(out, "  [%6.2f, %6.2f]", pes_r_get(b, "share_ci90"));
        fputc('\n', out);
    }
    fprintf(
        out,
        "  (distance: a bin lo..hi of %s;\n"
        "   count: the reuses in it, weighted as sampled; share: of the total in the title; bins\n"
        "   under 0.05 %% of it are left out)\n",
        strcmp(unit, "(accesses)") == 0 ? "accesses strictly between use and reuse"
                                        : "distinct addresses between use and reuse");
    if (ci)
        fprintf(out,
                "  (90 %% interval: of the share, from the sampling alone (Wilson, Kish's "
                "effective sample\n"
                "   size)%s)\n",
                strcmp(unit, "(accesses)") == 0 ? ""
                                                : "; the conversion's model error is not in it");
}

/* The mass the censored estimator could not place: reuses longer than any
 * distance observed, and uses never reused. */
static void beyond_text(FILE *out, const struct pes_rnode *scope, const struct pes_rnode *h)
{
    const struct pes_rnode *b = pes_r_get(scope, "beyond");
    double total = pes_r_get_f(b, "count");
    if (!pes_r_get(b, "from") || !(pes_r_get_f(b, "count") > 0))
        return;
    for (size_t i = 0; i < pes_r_count(h); i++)
        total += pes_r_get_f(pes_r_at(h, i), "count");
    fprintf(out,
            "  beyond the last distance observed: >= %llu: %.1f (%.2f %% of the watched uses; "
            "reuses longer\n"
            "   than any watch survived and uses never reused, not spread over the bins above)\n",
            (unsigned long long)pes_r_get_u(b, "from"), pes_r_get_f(b, "count"),
            total > 0 ? 100 * pes_r_get_f(b, "count") / total : 0.0);
}

/* A row's top call paths (version-3 traces with stacks), one per line under it. */
static void paths_text(FILE *out, const struct pes_rnode *paths)
{
    for (size_t i = 0; i < pes_r_count(paths); i++) {
        const struct pes_rnode *q = pes_r_at(paths, i);
        fprintf(out, "      %5.1f%%  %s\n", 100 * pes_r_get_f(q, "share"),
                report_safe(pes_r_get_s(q, "path")));
    }
}

/* The keys of a sampled report that write_sampled lays out (or leaves out
 * on purpose); any other is a new analysis's (docs/replay.md, "Writing a
 * sampled analysis"), printed by print_others. */
static int known_sampled_key(const char *key)
{
    static const char *const known[] = {"pes_replay_json",
                                        "trace",
                                        "kind",
                                        "mode",
                                        "period_load",
                                        "period_store",
                                        "samples_target",
                                        "region",
                                        "interval_bias",
                                        "granularity",
                                        "threads",
                                        "truncated",
                                        "skipped_blocks",
                                        "samples",
                                        "lost",
                                        "throttled",
                                        "dropped",
                                        "expired",
                                        "heap_events_dominate",
                                        "reuse_estimator",
                                        "stack_model",
                                        "interval_level",
                                        "intra",
                                        "shared",
                                        "stack_histogram",
                                        "per_thread",
                                        "comm",
                                        "sites",
                                        "by",
                                        "groups",
                                        "cache_lines",
                                        "cache_lines_untracked",
                                        "findings", /* first, after the header */
                                        NULL};
    for (int i = 0; known[i]; i++)
        if (strcmp(key, known[i]) == 0)
            return 1;
    return 0;
}

/* Every section of the report this writer has no layout for, as it is: a
 * title from its key, then a table (an array of objects), "name value"
 * lines (an object) or the value. */
static void print_others(FILE *out, const struct pes_rnode *o)
{
    for (size_t k = 0; k < pes_r_count(o); k++) {
        const struct pes_rnode *n = pes_r_at(o, k);
        if (known_sampled_key(pes_r_key(n)))
            continue;
        char title[64];
        snprintf(title, sizeof title, "%s", pes_r_key(n));
        for (char *t = title; *t; t++)
            if (*t == '_')
                *t = ' ';
        if (*title && *title >= 'a' && *title <= 'z')
            *title = (char)(*title - 'a' + 'A');
        fprintf(out, "\n%s\n", title);
        if (pes_r_kind(n) == PES_R_ARRAY && pes_r_kind(pes_r_at(n, 0)) == PES_R_OBJECT) {
            report_print_table(out, n);
        } else if (pes_r_kind(n) == PES_R_OBJECT) {
            for (size_t i = 0; i < pes_r_count(n); i++) {
                fprintf(out, "  %-24s ", pes_r_key(pes_r_at(n, i)));
                report_print_value(out, pes_r_at(n, i));
                fputc('\n', out);
            }
        } else {
            fputs("  ", out);
            report_print_value(out, n);
            fputc('\n', out);
        }
    }
}

static int write_sampled(FILE *out, const struct pes_rnode *o)
{
    char a[32], b[32];
    uint64_t threads = pes_r_get_u(o, "threads");
    fprintf(out,
            "pes-replay: %s: sampled trace, mode %s, period load %llu store %llu, %s, %u threads\n",
            report_safe(pes_r_get_s(o, "trace")), report_safe(pes_r_get_s(o, "mode")),
            (unsigned long long)pes_r_get_u(o, "period_load"),
            (unsigned long long)pes_r_get_u(o, "period_store"),
            strcmp(pes_r_get_s(o, "granularity"), "line") == 0 ? "line granularity"
                                                               : "address granularity",
            (unsigned)threads);
    if (pes_r_get(o, "region"))
        fprintf(out, "region: %s\n", report_safe(pes_r_get_s(o, "region")));
    if (pes_r_get(o, "samples_target"))
        fprintf(
            out,
            "adaptive period (--samples %llu): the periods above are the caps; per thread below\n",
            (unsigned long long)pes_r_get_u(o, "samples_target"));
    report_count(a, sizeof a, pes_r_get_u(o, "samples"));
    report_count(b, sizeof b, pes_r_get_u(o, "lost"));
    fprintf(out, "samples %s, lost %s, throttled %llu, dropped %llu, expired watches %llu\n", a, b,
            (unsigned long long)pes_r_get_u(o, "throttled"),
            (unsigned long long)pes_r_get_u(o, "dropped"),
            (unsigned long long)pes_r_get_u(o, "expired"));
    const struct pes_rnode *heap = pes_r_get(o, "heap_events_dominate");
    if (heap) {
        uint64_t h = pes_r_get_u(heap, "heap_events"), all = pes_r_get_u(heap, "events");
        report_count(a, sizeof a, h);
        report_count(b, sizeof b, all);
        fprintf(out,
                "heap events: %s of the trace's %s events (%.0f %%) are allocations and frees\n  "
                "hint: %s\n",
                a, b, all ? 100.0 * (double)h / (double)all : 0.0,
                report_safe(pes_r_get_s(heap, "hint")));
    }
    if (pes_r_get(o, "reuse_estimator"))
        fprintf(out, "reuse estimator: %s; intervals: %.0f %%, %s (docs/accuracy.md)\n",
                strcmp(pes_r_get_s(o, "reuse_estimator"), "censored") == 0
                    ? "censored (Kaplan-Meier over decided and censored watches)"
                    : "decided (decided outcomes weighted by reservoir offers)",
                100 * pes_r_get_f(o, "interval_level"), interval_kind(o));
    report_print_findings(out, o);
    static const char *const scope[2] = {"intra", "shared"}, *const name[2] = {"intra-thread",
                                                                               "shared cache"};
    for (int sc = 0; sc < 2; sc++) {
        const struct pes_rnode *s = pes_r_get(o, scope[sc]);
        uint64_t r = pes_r_get_u(s, "reuses"), i = pes_r_get_u(s, "invalidations");
        if (!r && !i)
            continue;
        fprintf(out, "%s: reuses %llu, invalidations %llu, invalidation ratio ", name[sc],
                (unsigned long long)r, (unsigned long long)i);
        text_num(out, "%.2f %%", r + i ? 100.0 * (double)i / (double)(r + i) : NAN);
        fprintf(out, " (estimated invalidations: %.0f)", pes_r_get_f(s, "estimated_invalidations"));
        if (pes_r_get(s, "invalidation_ratio_ci90") &&
            pes_r_count(pes_r_get(s, "invalidation_ratio_ci90")) == 2) {
            fputs("; weighted ", out);
            text_num(out, "%.2f %%", 100 * pes_r_get_f(s, "invalidation_ratio"));
            ci_text(out, " [%.2f, %.2f]", pes_r_get(s, "invalidation_ratio_ci90"));
        }
        if (pes_r_get_u(s, "censored"))
            fprintf(out, "; censored %llu", (unsigned long long)pes_r_get_u(s, "censored"));
        fputc('\n', out);
    }
    const struct pes_rnode *intra = pes_r_get(o, "intra"), *shared = pes_r_get(o, "shared");
    int line = strcmp(pes_r_get_s(o, "granularity"), "line") == 0;
    hist_text(out, "Intra-thread reuses, time distance (accesses strictly between)", "(accesses)",
              pes_r_get(intra, "time_histogram"));
    if (!line)
        beyond_text(out, intra, pes_r_get(intra, "time_histogram"));
    hist_text(out, "Intra-thread line reuses, time distance", "(accesses)",
              pes_r_get(intra, "line_time_histogram"));
    if (line)
        beyond_text(out, intra, pes_r_get(intra, "line_time_histogram"));
    hist_text(out, "Shared-cache reuses, time distance", "(accesses)",
              pes_r_get(shared, "time_histogram"));
    if (!line)
        beyond_text(out, shared, pes_r_get(shared, "time_histogram"));
    hist_text(out, "Shared-cache line reuses, time distance", "(accesses)",
              pes_r_get(shared, "line_time_histogram"));
    if (line)
        beyond_text(out, shared, pes_r_get(shared, "line_time_histogram"));
    char stack_title[96];
    snprintf(stack_title, sizeof stack_title,
             "Intra-thread reuses, stack distance (converted: --stack-model %s)",
             report_safe(pes_r_get_s(o, "stack_model")));
    hist_text(out, stack_title, "(distinct addr.)", pes_r_get(o, "stack_histogram"));
    fprintf(out, "\n  %-6s %14s %14s %9s %9s %9s %12s\n", "thread", "loads", "stores", "samples",
            "reuses", "inval", "N-hat");
    fprintf(out, "  %-6s %14s %14s %9s %9s %9s %12s\n", "", "(#)", "(#)", "(#)", "(#)", "(#)",
            "(addresses)");
    const struct pes_rnode *pt = pes_r_get(o, "per_thread");
    for (size_t t = 0; t < pes_r_count(pt); t++) {
        const struct pes_rnode *h = pes_r_at(pt, t);
        fprintf(out, "  T%-5u %14llu %14llu %9llu %9llu %9llu %12.0f\n",
                (unsigned)pes_r_get_u(h, "thread"), (unsigned long long)pes_r_get_u(h, "loads"),
                (unsigned long long)pes_r_get_u(h, "stores"),
                (unsigned long long)pes_r_get_u(h, "samples"),
                (unsigned long long)pes_r_get_u(h, "reuses"),
                (unsigned long long)pes_r_get_u(h, "invalidations"), pes_r_get_f(h, "n_distinct"));
    }
    fprintf(out, "  (loads, stores: the thread's access counts; samples: sampled accesses; reuses "
                 "/ inval: sampled\n"
                 "   uses whose next access was a reuse / an invalidation; N-hat: estimated "
                 "distinct addresses\n"
                 "   the thread touched (Kac), which the stack-distance conversion uses)\n");
    if (pes_r_get(o, "samples_target")) {
        fprintf(out, "\nAdaptive period (--samples %llu; at most the period above): per thread\n",
                (unsigned long long)pes_r_get_u(o, "samples_target"));
        fprintf(out, "  %-6s %12s %12s %12s %12s %8s\n", "thread", "first load", "first store",
                "last load", "last store", "changes");
        for (size_t t = 0; t < pes_r_count(pt); t++) {
            const struct pes_rnode *h = pes_r_at(pt, t), *p = pes_r_get(h, "period");
            fprintf(out, "  T%-5u %12llu %12llu %12llu %12llu %8llu\n",
                    (unsigned)pes_r_get_u(h, "thread"),
                    (unsigned long long)pes_r_get_u(p, "first_load"),
                    (unsigned long long)pes_r_get_u(p, "first_store"),
                    (unsigned long long)pes_r_get_u(p, "last_load"),
                    (unsigned long long)pes_r_get_u(p, "last_store"),
                    (unsigned long long)pes_r_get_u(p, "changes"));
        }
        fprintf(out, "  (each observation is weighted by the period its sample was taken at)\n");
    }
    const struct pes_rnode *comm = pes_r_get(o, "comm");
    double ct = pes_r_get_f(comm, "volume_true"), cf = pes_r_get_f(comm, "volume_false");
    const char *est =
        pes_r_get(comm, "estimator") ? pes_r_get_s(comm, "estimator") : "comdetective";
    if (pes_r_get(comm, "volume_limit90"))
        fprintf(out,
                "\nCommunication (estimator %s): none found in %llu samples: volume 0, but up to "
                "%.0f transfers "
                "could go unseen\n  (90 %%: a pattern touching fewer than 3 of the sampled "
                "accesses is missed; "
                "a shorter period or --samples N lowers the limit)\n",
                report_safe(est), (unsigned long long)pes_r_get_u(o, "samples"),
                pes_r_get_f(comm, "volume_limit90"));
    /* the interleave estimate needs no ComDetective event */
    if (pes_r_get_u(comm, "events") || ct + cf > 0) {
        if (strcmp(est, "comdetective") == 0)
            fprintf(out,
                    "\nCommunication (estimator comdetective: period per detection, x %.2f for "
                    "traps): %llu "
                    "events, volume %.0f (true %.0f, false %.0f, false fraction %.1f %%)\n",
                    pes_r_get_f(comm, "trap_scale"),
                    (unsigned long long)pes_r_get_u(comm, "events"), ct + cf, ct, cf,
                    ct + cf > 0 ? 100 * cf / (ct + cf) : 0.0);
        else
            fprintf(
                out,
                "\nCommunication (estimator %s): %llu events, volume %.0f (true %.0f, false %.0f, "
                "false fraction %.1f %%)\n  (owner changes of the interleaving rebuilt from the "
                "samples: "
                "%llu shared lines, %llu samples on them, %llu gaps, resolution %.0f accesses)\n",
                report_safe(est), (unsigned long long)pes_r_get_u(comm, "events"), ct + cf, ct, cf,
                ct + cf > 0 ? 100 * cf / (ct + cf) : 0.0,
                (unsigned long long)pes_r_get_u(comm, "shared_lines"),
                (unsigned long long)pes_r_get_u(comm, "shared_samples"),
                (unsigned long long)pes_r_get_u(comm, "gaps"), pes_r_get_f(comm, "resolution"));
        if (pes_r_count(pes_r_get(comm, "false_fraction_ci90")) == 2) {
            fputs("  false fraction 90 % interval", out);
            ci_text(out, " [%.1f, %.1f] %%", pes_r_get(comm, "false_fraction_ci90"));
            fprintf(out,
                    strcmp(est, "comdetective") == 0
                        ? " (Wilson, %.1f effective events: weighted by their volumes)\n"
                        : " (Wilson, n = %.0f samples on shared lines)\n",
                    pes_r_get_f(comm, "effective_events"));
        }
        const struct pes_rnode *mt = pes_r_get(comm, "true"), *mf = pes_r_get(comm, "false");
        fprintf(out, "  %-4s", "");
        for (size_t j = 0; j < pes_r_count(mt); j++)
            fprintf(out, " %10s%u", "T", (unsigned)j);
        fprintf(out, "\n  %-4s", "");
        for (size_t j = 0; j < pes_r_count(mt); j++)
            fprintf(out, " %11s", "(transfers)");
        fputc('\n', out);
        for (size_t i = 0; i < pes_r_count(mt); i++) {
            fprintf(out, "  T%-3u", (unsigned)i);
            const struct pes_rnode *rt = pes_r_at(mt, i), *rf = pes_r_at(mf, i);
            for (size_t j = 0; j < pes_r_count(rt); j++)
                fprintf(out, " %11.0f", pes_r_f(pes_r_at(rt, j)) + pes_r_f(pes_r_at(rf, j)));
            fputc('\n', out);
        }
        fprintf(out, "  (volume: each transfer once; the matrix holds it in both directions' "
                     "cells, as --compare's\n"
                     "   symmetric volume counts it: twice this)\n");
    }
    /* the rows of --by (older reports: the sites) */
    const struct pes_rnode *sites = pes_r_get(o, "groups");
    const char *key = "key", *by = pes_r_get_s(o, "by");
    if (!sites)
        sites = pes_r_get(o, "sites"), key = "label", by = "site";
    if (pes_r_count(sites) && strcmp(by, "object") == 0) {
        /* objects: the reuses' mean time distance too (docs/replay.md) */
        fprintf(out, "\n  %-38s %9s %9s %9s %9s %9s %9s\n", "object", "samples", "reuses",
                "reuse-t", "inval", "comm-true", "comm-false");
        fprintf(out, "  %-38s %9s %9s %9s %9s %9s %9s\n", "", "(#)", "(#)", "(mean)", "(#)", "(#)",
                "(#)");
        for (size_t k = 0; k < pes_r_count(sites); k++) {
            const struct pes_rnode *p = pes_r_at(sites, k);
            char name[4 * 38 + 8];
            report_fit(name, sizeof name, report_safe(pes_r_get_s(p, key)), 38);
            fprintf(out, "  %s %9llu %9llu %9.4g %9llu %9llu %9llu\n", name,
                    (unsigned long long)pes_r_get_u(p, "samples"),
                    (unsigned long long)pes_r_get_u(p, "reuses"), pes_r_get_f(p, "reuse_time_mean"),
                    (unsigned long long)pes_r_get_u(p, "invalidations"),
                    (unsigned long long)pes_r_get_u(p, "comm_true"),
                    (unsigned long long)pes_r_get_u(p, "comm_false"));
        }
        fprintf(
            out,
            "  (#: a count of raw events per data object (unknown: no object known for the "
            "address):\n"
            "   samples, reuses, invalidations, and communication events found with true / false\n"
            "   sharing; reuse-t: the mean time distance of its reuses, weighted as the "
            "histograms)\n");
    } else if (pes_r_count(sites) && strcmp(by, "callpath") == 0) {
        fprintf(out, "\n  %-9s %7s  %s\n", "samples", "share", "call path");
        fprintf(out, "  %-9s %7s\n", "(#)", "(%)");
        for (size_t k = 0; k < pes_r_count(sites); k++) {
            const struct pes_rnode *p = pes_r_at(sites, k);
            fprintf(out, "  %9llu %6.1f%%  %s\n", (unsigned long long)pes_r_get_u(p, "samples"),
                    100 * pes_r_get_f(p, "share"), report_safe(pes_r_get_s(p, key)));
        }
        fprintf(out,
                "  (#: the samples taken with this call path, outermost frame first; share: of "
                "all samples;\n"
                "   samples without a call stack are in no row)\n");
    } else if (pes_r_count(sites)) {
        const char *column = strcmp(by, "line") == 0 ? "source line" : by;
        fprintf(out, "\n  %-48s %9s %9s %9s %9s %9s\n", column, "samples", "reuses", "inval",
                "comm-true", "comm-false");
        fprintf(out, "  %-48s %9s %9s %9s %9s %9s\n", "", "(#)", "(#)", "(#)", "(#)", "(#)");
        for (size_t k = 0; k < pes_r_count(sites); k++) {
            const struct pes_rnode *p = pes_r_at(sites, k);
            char name[4 * 48 + 8];
            report_fit(name, sizeof name, report_safe(pes_r_get_s(p, key)), 48);
            fprintf(out, "  %s %9llu %9llu %9llu %9llu %9llu\n", name,
                    (unsigned long long)pes_r_get_u(p, "samples"),
                    (unsigned long long)pes_r_get_u(p, "reuses"),
                    (unsigned long long)pes_r_get_u(p, "invalidations"),
                    (unsigned long long)pes_r_get_u(p, "comm_true"),
                    (unsigned long long)pes_r_get_u(p, "comm_false"));
            paths_text(out, pes_r_get(p, "callpaths"));
        }
        fprintf(out,
                "  (#: a count of raw events per %s: samples, reuses, invalidations, and "
                "communication events\n"
                "   found with true / false sharing; rows: --by line|site|function)\n",
                column);
        if (pes_r_get(pes_r_at(sites, 0), "callpaths"))
            fprintf(out, "  (under a row: its top call paths, outermost frame first, with their "
                         "share of its samples)\n");
    }
    report_print_cache_lines(out, o, "communication events");
    print_others(out, o);
    return ferror(out) ? -1 : 0;
}

/* "LABEL sampled S, full F, error E": a share in percent, sampled and full,
 * and the error in percentage points (keys: the report's). */
static void share_row(FILE *out, const struct pes_rnode *o, const char *label, const char *fmt,
                      const char *err_fmt, const char *sampled, const char *full, const char *error,
                      const char *ci)
{
    fprintf(out, "\n  %-40s sampled ", label);
    text_num(out, fmt, 100 * pes_r_get_f(o, sampled));
    fputs(", full ", out);
    text_num(out, fmt, 100 * pes_r_get_f(o, full));
    fputs(", error ", out);
    text_num(out, err_fmt, 100 * pes_r_get_f(o, error));
    if (pes_r_count(pes_r_get(o, ci)) == 2) {
        fputs(", sampled 90 % interval", out);
        ci_text(out, " [%.2f, %.2f] %%", pes_r_get(o, ci));
    }
}

/* "N of M stated 90 % intervals hold the full trace's value": per kind and in all. */
static void coverage_text(FILE *out, const struct pes_rnode *o)
{
    const struct pes_rnode *c = pes_r_get(o, "interval_coverage");
    if (!c)
        return;
    static const char *const key[] = {"intra_bins", "stack_bins", "inval_ratio", "false_fraction",
                                      "comm_pairs"};
    static const char *const name[] = {"intra bins", "stack bins", "inval ratio", "false fraction",
                                       "comm pairs"};
    const struct pes_rnode *all = pes_r_get(c, "all");
    fprintf(out, "  %-40s %llu of %llu hold the full trace's value (", "stated 90 % intervals",
            (unsigned long long)pes_r_get_u(all, "covered"),
            (unsigned long long)pes_r_get_u(all, "checked"));
    text_num(out, "%.1f %%", 100 * pes_r_get_f(all, "fraction"));
    fputs(")", out);
    const char *sep = ":";
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        const struct pes_rnode *k = pes_r_get(c, key[i]);
        if (!pes_r_get_u(k, "checked"))
            continue;
        fprintf(out, "%s %s %llu/%llu", sep, name[i], (unsigned long long)pes_r_get_u(k, "covered"),
                (unsigned long long)pes_r_get_u(k, "checked"));
        sep = ",";
    }
    fprintf(out,
            "\n  (reuse estimator %s; the intervals: %s;\n"
            "   bins where either histogram has mass are checked)\n",
            report_safe(pes_r_get_s(o, "reuse_estimator")), interval_kind(o));
}

/* Why each n/a above is n/a (JSON not_estimated), one line each. */
static void not_estimated_text(FILE *out, const struct pes_rnode *why)
{
    if (!pes_r_count(why))
        return;
    fputs("  not estimated (n/a above):\n", out);
    for (size_t i = 0; i < pes_r_count(why); i++)
        fprintf(out, "    %-36s %s\n", report_safe(pes_r_key(pes_r_at(why, i))),
                report_safe(pes_r_s(pes_r_at(why, i))));
}

static int write_compare(FILE *out, const struct pes_rnode *o)
{
    fprintf(out, "pes-replay --compare %s %s\n", report_safe(pes_r_get_s(o, "sampled")),
            report_safe(pes_r_get_s(o, "full")));
    fprintf(out, "mode %s, period load %llu store %llu; %s\n", report_safe(pes_r_get_s(o, "mode")),
            (unsigned long long)pes_r_get_u(o, "period_load"),
            (unsigned long long)pes_r_get_u(o, "period_store"),
            pes_r_get_u(o, "same_execution")
                ? "both traces come from one execution (same pid, host and command)"
                : "the traces come from DIFFERENT executions (pid, host, command or start differ)");
    if (pes_r_get(o, "samples_target"))
        fprintf(
            out,
            "adaptive period (--samples %llu): the periods above are the caps; each observation "
            "weighted by its sample's period\n",
            (unsigned long long)pes_r_get_u(o, "samples_target"));
    if (pes_r_get(o, "region"))
        fprintf(out, "region: %s\n", report_safe(pes_r_get_s(o, "region")));
    fprintf(out,
            "samples %llu, lost %llu, decided uses (reuse or invalidation) %llu; full trace: %llu "
            "accesses, "
            "%u threads\n\n",
            (unsigned long long)pes_r_get_u(o, "samples"),
            (unsigned long long)pes_r_get_u(o, "lost"),
            (unsigned long long)pes_r_get_u(o, "decided"),
            (unsigned long long)pes_r_get_u(o, "accesses"), (unsigned)pes_r_get_u(o, "threads"));
    fprintf(out, "  %-40s ", "S intra-thread time histogram");
    text_num(out, "%.4f", pes_r_get_f(o, "s_intra"));
    fprintf(out, "\n  %-40s ", "S shared-cache time histogram");
    text_num(out, "%.4f", pes_r_get_f(o, "s_shared"));
    fprintf(out, "\n  %-40s ", "S stack histogram (converted vs exact)");
    text_num(out, "%.4f", pes_r_get_f(o, "s_stack"));
    share_row(out, o, "invalidation ratio", "%.2f %%", "%+.2f pp", "inval_ratio_sampled",
              "inval_ratio_true", "inval_ratio_error", "inval_ratio_sampled_ci90");
    fprintf(out, "\n  %-40s sampled %.0f (%s), full %.0f, error ",
            "communication volume (symmetric)", pes_r_get_f(o, "comm_volume_sampled"),
            pes_r_get(o, "comm_estimator") ? report_safe(pes_r_get_s(o, "comm_estimator"))
                                           : "comdetective",
            pes_r_get_f(o, "comm_volume_true"));
    text_num(out, "%+.1f %%", 100 * pes_r_get_f(o, "comm_volume_error"));
    if (pes_r_get(o, "comm_volume_limit"))
        fprintf(out, "; none seen: up to %.0f could go unseen (90 %%)",
                pes_r_get_f(o, "comm_volume_limit"));
    /* the sampled report's volume counts a transfer once: half of these */
    fprintf(out,
            "\n  %-40s (symmetric: each transfer in both directions' cells; pes-replay SAMPLED "
            "counts it once:\n  %-40s sampled %.0f, full %.0f)",
            "", "", pes_r_get_f(o, "comm_volume_sampled") / 2,
            pes_r_get_f(o, "comm_volume_true") / 2);
    fprintf(out, "\n  %-40s ", "communication per-cell error");
    text_num(out, "%.4f", pes_r_get_f(o, "comm_cell_error"));
    share_row(out, o, "false-sharing fraction", "%.1f %%", "%+.1f pp", "false_fraction_sampled",
              "false_fraction_true", "split_error", "false_fraction_sampled_ci90");
    static const char *const key[2] = {"top_invalidations", "top_coherence"};
    static const char *const name[2] = {"invalidations (by use site)", "coherence misses"};
    for (int i = 0; i < 2; i++) {
        const struct pes_rnode *tk = pes_r_get(o, key[i]);
        char label[64];
        snprintf(label, sizeof label, "top-%u %s", (unsigned)pes_r_get_u(o, "top_k"), name[i]);
        fprintf(out, "\n  %-40s coverage ", label);
        text_num(out, "%.1f %%", 100 * pes_r_get_f(tk, "coverage"));
        fprintf(out, ", false positives %u (%u sampled, %u full sites ranked)",
                (unsigned)pes_r_get_u(tk, "false_positives"),
                (unsigned)pes_r_get_u(tk, "ranked_sampled"),
                (unsigned)pes_r_get_u(tk, "ranked_full"));
    }
    fprintf(out, "\n  %-40s n/a: sampled events name the use's site, not the writer's\n",
            "invalidations caused (by writing site)");
    fprintf(
        out,
        "  (S: 1 - half the L1 distance of the histograms normalised to fractions, 1 = identical;\n"
        "   pp: percentage points; coverage: the truth summed over the sample's top-k source lines "
        "over\n"
        "   the truth summed over the full trace's top k (Marathe et al.); docs/accuracy.md)\n");
    coverage_text(out, o);
    not_estimated_text(out, pes_r_get(o, "not_estimated"));
    const struct pes_rnode *objs = pes_r_get(o, "objects"); /* --by object */
    if (pes_r_count(objs)) {
        fprintf(out, "\n  %-38s %9s %9s %9s %9s\n", "object", "samples", "accesses", "sampled",
                "full");
        fprintf(out, "  %-38s %9s %9s %9s %9s\n", "", "(#)", "(#)", "(%)", "(%)");
        for (size_t k = 0; k < pes_r_count(objs); k++) {
            const struct pes_rnode *p = pes_r_at(objs, k);
            char name[4 * 38 + 8];
            report_fit(name, sizeof name, report_safe(pes_r_get_s(p, "key")), 38);
            fprintf(out, "  %s %9llu %9llu %9.2f %9.2f\n", name,
                    (unsigned long long)pes_r_get_u(p, "samples"),
                    (unsigned long long)pes_r_get_u(p, "accesses"),
                    100 * pes_r_get_f(p, "sample_share"), 100 * pes_r_get_f(p, "access_share"));
        }
        fprintf(out, "  (#: samples of the sampled trace, accesses of the full one, per data "
                     "object joined by name;\n"
                     "   %%: each as a share of its trace's total)\n");
    }
    return ferror(out) ? -1 : 0;
}

int pes_report_is_sampled(const struct pes_report *r)
{
    return strcmp(pes_r_get_s(pes_report_tree(r), "kind"), "sampled") == 0 ||
           pes_report_is_compare(r);
}

int pes_report_is_compare(const struct pes_report *r)
{
    return pes_r_get(pes_report_tree(r), "full") != NULL;
}

int pes_report_write_sampled_text(FILE *out, const struct pes_report *r)
{
    if (pes_report_failed(r))
        return -1;
    const struct pes_rnode *o = pes_report_tree(r);
    return pes_report_is_compare(r) ? write_compare(out, o) : write_sampled(out, o);
}
