/*
 * report_util.c — number formatting, site labels and top-N ranking for the
 * report writers.
 */
#include "report_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void report_count(char *buf, size_t len, uint64_t v) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0 && o + 2 < len) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void report_bytes(char *buf, size_t len, uint64_t v) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)v;
    int u = 0;
    while (x >= 1024.0 && u < 4) {
        x /= 1024.0;
        u++;
    }
    if (u == 0 || x == (double)(uint64_t)x) snprintf(buf, len, "%.0f %s", x, unit[u]);
    else snprintf(buf, len, "%.1f %s", x, unit[u]);
}

void report_seconds(char *buf, size_t len, double s) {
    if (s >= 1.0) snprintf(buf, len, "%.3f s", s);
    else if (s >= 1e-3) snprintf(buf, len, "%.3f ms", s * 1e3);
    else snprintf(buf, len, "%.3f us", s * 1e6);
}

double report_local_rate(const double global[], uint32_t l) {
    double above = l ? global[l - 1] : 0.0;
    if (above >= 1.0) return 0.0;
    return (global[l] - above) / (1.0 - above);
}

void report_site_label(char *buf, size_t len, const struct pes_site *s, uint32_t id) {
    if (!s) {
        snprintf(buf, len, id == UINT32_MAX ? "(other sites)" : "site %u", id);
        return;
    }
    const char *file = s->file && *s->file ? s->file : NULL;
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    char kind[24];
    snprintf(kind, sizeof kind, "%s%s", pes_access_kind_name(s->kind), s->flags & PES_SITE_VECTOR ? "(vec)" : "");
    if (base && s->line)
        snprintf(buf, len, "%s:%u:%u %s %s", base, s->line, s->column, kind, s->function ? s->function : "");
    else if (s->function && *s->function)
        snprintf(buf, len, "site %u %s %s", id, kind, s->function);
    else
        snprintf(buf, len, "site %u %s", id, kind);
}

void report_thread_list(char *buf, size_t len, uint64_t mask) {
    size_t o = 0;
    buf[0] = '\0';
    for (int t = 0; t < 64 && o + 8 < len; t++)
        if (mask >> t & 1) o += (size_t)snprintf(buf + o, len - o, "%sT%d", o ? "," : "", t);
    if (o == 0) snprintf(buf, len, "-");
}

const char *report_sharing_kind(const struct pes_sim_stats *s) {
    uint64_t t = s->inval_true + s->coh_true, f = s->inval_false + s->coh_false;
    if (t == 0 && f == 0) return "-";
    if (f == 0) return "true";
    if (t == 0) return "false";
    return f >= 4 * t ? "false" : t >= 4 * f ? "true" : "mixed";
}

uint64_t report_metric(const struct pes_sim_stats *s, const char *metric) {
    if (strcmp(metric, "coherence") == 0) return s->coh_true + s->coh_false;
    if (strcmp(metric, "false-sharing") == 0) return s->inval_false + s->coh_false;
    if (strcmp(metric, "true-sharing") == 0) return s->inval_true + s->coh_true;
    if (strcmp(metric, "misses") == 0)
        return s->misses[0][PES_SIM_COMPULSORY] + s->misses[0][PES_SIM_CAPACITY] + s->misses[0][PES_SIM_COHERENCE];
    if (strcmp(metric, "accesses") == 0) return s->accesses;
    return s->inval_true + s->inval_false;   /* "invalidations" */
}

struct ranked {
    uint64_t value;
    uint32_t site;
};

static int by_value_desc(const void *a, const void *b) {
    const struct ranked *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

uint32_t *report_top_sites(const struct pes_sim *sim, const char *metric, uint32_t top, uint32_t *n) {
    uint32_t sites = pes_sim_sites(sim);
    struct ranked *all = malloc(((size_t)sites + 1) * sizeof *all);
    if (!all) return NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i <= sites; i++) {
        uint32_t id = i == sites ? UINT32_MAX : i;
        const struct pes_sim_stats *s = pes_sim_site(sim, id);
        if (!s) continue;
        uint64_t v = report_metric(s, metric);
        if (v) all[k++] = (struct ranked){v, id};
    }
    qsort(all, k, sizeof *all, by_value_desc);
    if (k > top) k = top;
    uint32_t *ids = malloc(((size_t)k + 1) * sizeof *ids);
    if (ids)
        for (uint32_t i = 0; i < k; i++) ids[i] = all[i].site;
    free(all);
    *n = ids ? k : 0;
    return ids;
}

void report_json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

const char *report_safe(const char *s) { return pes_escape_text_tmp(s); }

void replay_message(const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pes-replay: %s\n", report_safe(line));
}

void report_csv_field(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}
