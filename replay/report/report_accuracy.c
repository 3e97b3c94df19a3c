/*
 * report_accuracy.c — text and JSON reports of a sampled trace and of
 * --compare (schema in docs/accuracy.md). Report writers never compute.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy.h"
#include "replay.h"
#include "report_util.h"

static void json_num(FILE *out, double v) {
    if (isnan(v) || isinf(v)) fputs("null", out);
    else fprintf(out, "%.6g", v);
}

static void text_num(FILE *out, const char *fmt, double v) {
    if (isnan(v)) fputs("n/a", out);
    else fprintf(out, fmt, v);
}

static void hist_text(FILE *out, const char *title, const double *h) {
    double total = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++) total += h[i];
    if (total <= 0) return;
    fprintf(out, "\n%s (%.0f)\n  %-24s %12s %8s\n", title, total, "distance", "count", "share");
    for (size_t i = 0; i < PES_RT_BINS; i++) {
        if (h[i] < 0.0005 * total) continue;   /* converted histograms have long, thin tails */
        uint64_t lo, hi;
        pes_rt_bin_range(i, &lo, &hi);
        char range[48];
        if (hi == lo + 1) snprintf(range, sizeof range, "%llu", (unsigned long long)lo);
        else snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)lo, (unsigned long long)hi - 1);
        fprintf(out, "  %-24s %12.1f %7.2f%%\n", range, h[i], 100 * h[i] / total);
    }
}

static void hist_json(FILE *out, const double *h) {
    fputc('[', out);
    int first = 1;
    for (size_t i = 0; i < PES_RT_BINS; i++) {
        if (h[i] <= 0) continue;
        uint64_t lo, hi;
        pes_rt_bin_range(i, &lo, &hi);
        fprintf(out, "%s{\"lo\": %llu, \"hi\": %llu, \"count\": %.6g}", first ? "" : ", ", (unsigned long long)lo,
                (unsigned long long)hi, h[i]);
        first = 0;
    }
    fputc(']', out);
}

static void matrix_json(FILE *out, const double *m, uint32_t n) {
    fputc('[', out);
    for (uint32_t i = 0; i < n; i++) {
        fputs(i ? ", [" : "[", out);
        for (uint32_t j = 0; j < n; j++) fprintf(out, "%s%.6g", j ? ", " : "", m[(size_t)i * n + j]);
        fputc(']', out);
    }
    fputc(']', out);
}

/* Sites by invalidations, then samples (a small selection sort: top is small). */
static size_t top_sites(const struct replay_sampled *s, uint32_t top, size_t *idx) {
    size_t n = 0;
    for (size_t i = 0; i < s->n_sites && n < top; i++) {
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < s->n_sites; j++) {
            int taken = 0;
            for (size_t k = 0; k < n; k++) taken |= idx[k] == j;
            if (taken) continue;
            const struct replay_sampled_site *a = &s->sites[j];
            if (best == SIZE_MAX) {
                best = j;
                continue;
            }
            const struct replay_sampled_site *b = &s->sites[best];
            uint64_t ca = a->comm_true + a->comm_false, cb = b->comm_true + b->comm_false;
            if (a->invalidations > b->invalidations ||
                (a->invalidations == b->invalidations && (ca > cb || (ca == cb && a->samples > b->samples))))
                best = j;
        }
        if (best == SIZE_MAX) break;
        idx[n++] = best;
    }
    return n;
}

static double matrix_total(const double *m, uint32_t n) {
    double t = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) t += m[i];
    return t / 2;   /* symmetric: every transfer is in two cells */
}

int replay_report_sampled_text(FILE *out, const char *path, const struct replay_sampled *s, uint32_t top) {
    char a[32], b[32];
    fprintf(out, "pes-replay: %s: sampled trace, mode %s, period load %llu store %llu, %s, %u threads\n",
            report_safe(path), report_safe(s->mode), (unsigned long long)s->period_load, (unsigned long long)s->period_store,
            s->spatial ? "line granularity" : "address granularity", s->n_threads);
    report_count(a, sizeof a, s->samples);
    report_count(b, sizeof b, s->lost);
    fprintf(out, "samples %s, lost %s, throttled %llu, dropped %llu, expired watches %llu\n", a, b,
            (unsigned long long)s->throttled, (unsigned long long)s->dropped, (unsigned long long)s->expired);
    for (int sc = 0; sc < 2; sc++) {
        uint64_t r = s->reuses[sc], i = s->invalidations[sc];
        if (!r && !i) continue;
        fprintf(out, "%s: reuses %llu, invalidations %llu, invalidation ratio ", sc ? "shared cache" : "intra-thread",
                (unsigned long long)r, (unsigned long long)i);
        text_num(out, "%.2f %%", r + i ? 100.0 * (double)i / (double)(r + i) : NAN);
        fprintf(out, " (estimated invalidations: %.0f)\n",
                (double)i * (double)(s->period_load ? s->period_load : s->period_store));
    }
    hist_text(out, "Intra-thread reuses, time distance (accesses strictly between)", s->temporal[0]);
    hist_text(out, "Intra-thread line reuses, time distance", s->spatial_hist[0]);
    hist_text(out, "Shared-cache reuses, time distance", s->temporal[1]);
    hist_text(out, "Shared-cache line reuses, time distance", s->spatial_hist[1]);
    hist_text(out, "Intra-thread reuses, stack distance (Shen et al. conversion)", s->stack);
    fprintf(out, "\n  %-6s %14s %14s %9s %9s %9s %12s\n", "thread", "loads", "stores", "samples", "reuses", "inval",
            "N-hat");
    for (uint32_t t = 0; t < s->n_threads; t++) {
        const struct replay_sampled_thread *h = &s->thread[t];
        fprintf(out, "  T%-5u %14llu %14llu %9llu %9llu %9llu %12.0f\n", t, (unsigned long long)h->loads,
                (unsigned long long)h->stores, (unsigned long long)h->samples, (unsigned long long)h->reuses,
                (unsigned long long)h->invalidations, h->n_distinct);
    }
    if (s->comm_events) {
        double ct = matrix_total(s->comm_true, s->n_threads), cf = matrix_total(s->comm_false, s->n_threads);
        fprintf(out, "\nCommunication (ComDetective scaling: period, x %.2f for traps): %llu events, volume %.0f "
                     "(true %.0f, false %.0f, false fraction %.1f %%)\n",
                s->trap_scale, (unsigned long long)s->comm_events, ct + cf, ct, cf,
                ct + cf > 0 ? 100 * cf / (ct + cf) : 0.0);
        fprintf(out, "  %-4s", "");
        for (uint32_t j = 0; j < s->n_threads; j++) fprintf(out, " %10s%u", "T", j);
        fputc('\n', out);
        for (uint32_t i = 0; i < s->n_threads; i++) {
            fprintf(out, "  T%-3u", i);
            for (uint32_t j = 0; j < s->n_threads; j++) {
                size_t c = (size_t)i * s->n_threads + j;
                fprintf(out, " %11.0f", s->comm_true[c] + s->comm_false[c]);
            }
            fputc('\n', out);
        }
    }
    size_t idx[256];
    size_t n = top_sites(s, top < 256 ? top : 256, idx);
    if (n) {
        fprintf(out, "\n  %-48s %9s %9s %9s %9s %9s\n", "site", "samples", "reuses", "inval", "comm-true",
                "comm-false");
        for (size_t k = 0; k < n; k++) {
            const struct replay_sampled_site *p = &s->sites[idx[k]];
            fprintf(out, "  %-48.48s %9llu %9llu %9llu %9llu %9llu\n", report_safe(p->label), (unsigned long long)p->samples,
                    (unsigned long long)p->reuses, (unsigned long long)p->invalidations,
                    (unsigned long long)p->comm_true, (unsigned long long)p->comm_false);
        }
    }
    return ferror(out) ? -1 : 0;
}

int replay_report_sampled_json(FILE *out, const char *path, const struct replay_sampled *s, uint32_t top) {
    fputs("{\"trace\": ", out);
    pes_json_string(out, path);
    fputs(", \"kind\": \"sampled\", \"mode\": ", out);
    pes_json_string(out, s->mode);
    fprintf(out, ", \"period_load\": %llu, \"period_store\": %llu, \"granularity\": \"%s\", \"threads\": %u",
            (unsigned long long)s->period_load, (unsigned long long)s->period_store,
            s->spatial ? "line" : "address", s->n_threads);
    fprintf(out, ", \"truncated\": %s, \"skipped_blocks\": %llu", s->truncation[0] ? "true" : "false",
            (unsigned long long)s->skipped_blocks);
    fprintf(out, ", \"samples\": %llu, \"lost\": %llu, \"throttled\": %llu, \"dropped\": %llu, \"expired\": %llu",
            (unsigned long long)s->samples, (unsigned long long)s->lost, (unsigned long long)s->throttled,
            (unsigned long long)s->dropped, (unsigned long long)s->expired);
    const char *scope[2] = {"intra", "shared"};
    for (int sc = 0; sc < 2; sc++) {
        fprintf(out, ", \"%s\": {\"reuses\": %llu, \"invalidations\": %llu, \"time_histogram\": ", scope[sc],
                (unsigned long long)s->reuses[sc], (unsigned long long)s->invalidations[sc]);
        hist_json(out, s->temporal[sc]);
        fputs(", \"line_time_histogram\": ", out);
        hist_json(out, s->spatial_hist[sc]);
        fputc('}', out);
    }
    fputs(", \"stack_histogram\": ", out);
    hist_json(out, s->stack);
    fputs(", \"per_thread\": [", out);
    for (uint32_t t = 0; t < s->n_threads; t++) {
        const struct replay_sampled_thread *h = &s->thread[t];
        fprintf(out,
                "%s{\"thread\": %u, \"loads\": %llu, \"stores\": %llu, \"samples\": %llu, \"reuses\": %llu, "
                "\"invalidations\": %llu, \"comm\": %llu, \"lost\": %llu, \"n_distinct\": ",
                t ? ", " : "", t, (unsigned long long)h->loads, (unsigned long long)h->stores,
                (unsigned long long)h->samples, (unsigned long long)h->reuses, (unsigned long long)h->invalidations,
                (unsigned long long)h->comm, (unsigned long long)h->lost);
        json_num(out, h->n_distinct);
        fputc('}', out);
    }
    fprintf(out, "], \"comm\": {\"events\": %llu, \"true_events\": %llu, \"false_events\": %llu, \"trap_scale\": ",
            (unsigned long long)s->comm_events, (unsigned long long)s->comm_true_events,
            (unsigned long long)s->comm_false_events);
    json_num(out, s->trap_scale);
    fputs(", \"true\": ", out);
    matrix_json(out, s->comm_true, s->n_threads);
    fputs(", \"false\": ", out);
    matrix_json(out, s->comm_false, s->n_threads);
    fputs("}, \"sites\": [", out);
    size_t idx[256];
    size_t n = top_sites(s, top < 256 ? top : 256, idx);
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &s->sites[idx[k]];
        fprintf(out, "%s{\"site\": ", k ? ", " : "");
        if (p->site == UINT32_MAX) fputs("null", out);
        else fprintf(out, "%u", p->site);
        fputs(", \"label\": ", out);
        pes_json_string(out, p->label);
        fprintf(out,
                ", \"samples\": %llu, \"reuses\": %llu, \"invalidations\": %llu, \"comm_true\": %llu, "
                "\"comm_false\": %llu}",
                (unsigned long long)p->samples, (unsigned long long)p->reuses, (unsigned long long)p->invalidations,
                (unsigned long long)p->comm_true, (unsigned long long)p->comm_false);
    }
    fputs("]}\n", out);
    return ferror(out) ? -1 : 0;
}

int replay_report_accuracy_text(FILE *out, const struct replay_options *o, const struct replay_sampled *s,
                                const struct replay_truth *t, const struct replay_accuracy *a) {
    fprintf(out, "pes-replay --compare %s %s\n", report_safe(o->trace), report_safe(o->full));
    fprintf(out, "mode %s, period load %llu store %llu; %s\n", report_safe(s->mode), (unsigned long long)s->period_load,
            (unsigned long long)s->period_store,
            a->same_execution ? "both traces come from one execution (same pid, host and command)"
                              : "the traces come from DIFFERENT executions (pid, host, command or start differ)");
    fprintf(out, "samples %llu, lost %llu, decided uses (reuse or invalidation) %llu; full trace: %llu accesses, "
            "%u threads\n\n",
            (unsigned long long)a->samples, (unsigned long long)s->lost, (unsigned long long)a->decided,
            (unsigned long long)t->accesses, t->n_threads);
    fprintf(out, "  %-40s ", "S intra-thread time histogram");
    text_num(out, "%.4f", a->s_intra);
    fprintf(out, "\n  %-40s ", "S shared-cache time histogram");
    text_num(out, "%.4f", a->s_shared);
    fprintf(out, "\n  %-40s ", "S stack histogram (converted vs exact)");
    text_num(out, "%.4f", a->s_stack);
    fprintf(out, "\n  %-40s sampled ", "invalidation ratio");
    text_num(out, "%.2f %%", 100 * a->inval_ratio_sampled);
    fputs(", full ", out);
    text_num(out, "%.2f %%", 100 * a->inval_ratio_true);
    fputs(", error ", out);
    text_num(out, "%+.2f pp", 100 * a->inval_ratio_error);
    fprintf(out, "\n  %-40s sampled %.0f, full %.0f, error ", "communication volume (symmetric)", a->comm.total_est,
            a->comm.total_true);
    text_num(out, "%+.1f %%", 100 * a->comm.volume_error);
    fprintf(out, "\n  %-40s ", "communication per-cell error");
    text_num(out, "%.4f", a->comm.cell_error);
    fprintf(out, "\n  %-40s sampled ", "false-sharing fraction");
    text_num(out, "%.1f %%", 100 * a->false_fraction_sampled);
    fputs(", full ", out);
    text_num(out, "%.1f %%", 100 * a->false_fraction_true);
    fputs(", error ", out);
    text_num(out, "%+.1f pp", 100 * a->split_error);
    const struct pes_cmp_topk *tk[2] = {&a->top_invalidations, &a->top_coherence};
    const char *names[2] = {"invalidations (by use site)", "coherence misses"};
    for (int i = 0; i < 2; i++) {
        char label[64];
        snprintf(label, sizeof label, "top-%u %s", a->top_k, names[i]);
        fprintf(out, "\n  %-40s coverage ", label);
        text_num(out, "%.1f %%", 100 * tk[i]->coverage);
        fprintf(out, ", false positives %u (%u sampled, %u full sites ranked)", tk[i]->false_positives,
                tk[i]->n_sampled, tk[i]->n_full);
    }
    fprintf(out, "\n  %-40s n/a: sampled events name the use's site, not the writer's\n",
            "invalidations caused (by writing site)");
    return ferror(out) ? -1 : 0;
}

static void topk_json(FILE *out, const struct pes_cmp_topk *t) {
    fputs("{\"coverage\": ", out);
    json_num(out, t->coverage);
    fprintf(out, ", \"false_positives\": %u, \"v1\": %.6g, \"v2\": %.6g, \"ranked_full\": %u, \"ranked_sampled\": %u}",
            t->false_positives, t->v1, t->v2, t->n_full, t->n_sampled);
}

int replay_report_accuracy_json(FILE *out, const struct replay_options *o, const struct replay_sampled *s,
                                const struct replay_truth *t, const struct replay_accuracy *a) {
    fputs("{\"sampled\": ", out);
    pes_json_string(out, o->trace);
    fputs(", \"full\": ", out);
    pes_json_string(out, o->full);
    fputs(", \"mode\": ", out);
    pes_json_string(out, s->mode);
    fprintf(out,
            ", \"period_load\": %llu, \"period_store\": %llu, \"same_execution\": %s, \"samples\": %llu, "
            "\"decided\": %llu, \"effective_reuses\": %.6g, \"accesses\": %llu, \"threads\": %u",
            (unsigned long long)s->period_load, (unsigned long long)s->period_store,
            a->same_execution ? "true" : "false", (unsigned long long)a->samples, (unsigned long long)a->decided,
            a->effective_reuses, (unsigned long long)t->accesses, t->n_threads);
    fprintf(out, ", \"truncated\": %s, \"sampled_truncated\": %s, \"full_truncated\": %s",
            s->truncation[0] || t->truncation[0] ? "true" : "false", s->truncation[0] ? "true" : "false",
            t->truncation[0] ? "true" : "false");
    fprintf(out, ", \"skipped_blocks\": %llu, \"lost\": %llu",
            (unsigned long long)(s->skipped_blocks + t->skipped_blocks), (unsigned long long)s->lost);
    const struct { const char *k; double v; } f[] = {
        {"s_intra", a->s_intra}, {"s_shared", a->s_shared}, {"s_stack", a->s_stack},
        {"inval_ratio_sampled", a->inval_ratio_sampled}, {"inval_ratio_true", a->inval_ratio_true},
        {"inval_ratio_error", a->inval_ratio_error}, {"comm_volume_sampled", a->comm.total_est},
        {"comm_volume_true", a->comm.total_true}, {"comm_volume_error", a->comm.volume_error},
        {"comm_cell_error", a->comm.cell_error}, {"false_fraction_sampled", a->false_fraction_sampled},
        {"false_fraction_true", a->false_fraction_true}, {"split_error", a->split_error},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        fprintf(out, ", \"%s\": ", f[i].k);
        json_num(out, f[i].v);
    }
    fprintf(out, ", \"top_k\": %u, \"top_invalidations\": ", a->top_k);
    topk_json(out, &a->top_invalidations);
    fputs(", \"top_coherence\": ", out);
    topk_json(out, &a->top_coherence);
    fputs(", \"top_invalidations_caused\": null", out);
    fputs(", \"histograms\": {\"sampled_intra\": ", out);
    hist_json(out, s->spatial ? s->spatial_hist[0] : s->temporal[0]);
    fputs(", \"sampled_stack\": ", out);
    hist_json(out, s->stack);
    double ex[PES_RT_BINS];
    const struct pes_rt_stats *in = pes_rt_totals(t->rt, PES_RT_INTRA);
    for (size_t i = 0; i < PES_RT_BINS; i++) ex[i] = (double)(s->spatial ? in->line.bin[i] : in->temporal.bin[i]);
    fputs(", \"full_intra\": ", out);
    hist_json(out, ex);
    fputs(", \"full_stack\": ", out);
    hist_json(out, t->stack);
    fputs("}}\n", out);
    return ferror(out) ? -1 : 0;
}
