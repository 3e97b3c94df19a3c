/*
 * report_util.c — number formatting, escaping and site labels for the report
 * writers.
 */
#include "report_util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void report_count(char *buf, size_t len, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0 && o + 2 < len)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void report_bytes(char *buf, size_t len, uint64_t v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)v;
    int u = 0;
    while (x >= 1024.0 && u < 4) {
        x /= 1024.0;
        u++;
    }
    if (u == 0 || x == (double)(uint64_t)x)
        snprintf(buf, len, "%.0f %s", x, unit[u]);
    else
        snprintf(buf, len, "%.1f %s", x, unit[u]);
}

void report_seconds(char *buf, size_t len, double s)
{
    if (s >= 1.0)
        snprintf(buf, len, "%.3f s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3f ms", s * 1e3);
    else
        snprintf(buf, len, "%.3f us", s * 1e6);
}

void report_site_label(char *buf, size_t len, const struct pes_site *s, uint32_t id)
{
    if (!s) {
        snprintf(buf, len, id == UINT32_MAX ? "(other sites)" : "site %u", id);
        return;
    }
    const char *file = s->file && *s->file ? s->file : NULL;
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    char kind[24];
    snprintf(kind, sizeof kind, "%s%s", pes_access_kind_name(s->kind),
             s->flags & PES_SITE_VECTOR ? "(vec)" : "");
    const char *fn = s->function && *s->function ? s->function : NULL;
    if (base && s->line)
        snprintf(buf, len, "%s:%u:%u %s %s", base, s->line, s->column, kind,
                 s->function ? s->function : "");
    else if (base || fn) /* no debug location, or line 0 (code the compiler merged or made up) */
        snprintf(buf, len, "%s%s<unidentified line> %s%s%s (site %u)", base ? base : "",
                 base ? ":" : "", kind, fn ? " " : "", fn ? fn : "", id);
    else /* nothing but the kind (another tool's trace) */
        snprintf(buf, len, "site %u %s", id, kind);
}

/* Bytes of the first k code points of s (at most its length). */
static size_t cp_bytes(const char *s, size_t k)
{
    size_t i = 0;
    for (; s[i] && k; k--) {
        i++;
        while ((s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

void report_fit(char *buf, size_t len, const char *s, int width)
{
    if (!len)
        return;
    size_t n = 0, w = width > 0 ? (size_t)width : 0;
    for (const char *p = s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    size_t o = 0;
    if (n <= w || w < 8) {
        size_t b = strlen(s);
        if (b >= len)
            b = len - 1;
        memcpy(buf, s, b);
        o = b;
        for (; n < w && o + 1 < len; n++)
            buf[o++] = ' ';
    } else {
        size_t tail = (w - 3) / 2, head = w - 3 - tail;
        size_t hb = cp_bytes(s, head), skip = cp_bytes(s, n - tail), tb = strlen(s + skip);
        if (hb + 3 + tb < len) {
            memcpy(buf, s, hb);
            memcpy(buf + hb, "...", 3);
            memcpy(buf + hb + 3, s + skip, tb);
            o = hb + 3 + tb;
        }
    }
    buf[o] = '\0';
}

uint64_t report_thread_mask(const struct pes_rnode *threads)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < pes_r_count(threads); i++)
        mask |= UINT64_C(1) << (pes_r_u(pes_r_at(threads, i)) & 63);
    return mask;
}

void report_thread_list(char *buf, size_t len, uint64_t mask)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int t = 0; t < 64 && o + 8 < len; t++)
        if (mask >> t & 1)
            o += (size_t)snprintf(buf + o, len - o, "%sT%d", o ? "," : "", t);
    if (o == 0)
        snprintf(buf, len, "-");
}

const char *report_safe(const char *s)
{
    return pes_escape_text_tmp(s);
}

static const char *message_name = "pes-replay";
static int message_quiet;
static _Thread_local int thread_quiet; /* a part's thread (pes-replay --parts): part 0 speaks */

void replay_message_setup(const char *name, int quiet)
{
    message_name = name;
    message_quiet = quiet;
}

void replay_message_thread_quiet(int quiet)
{
    thread_quiet = quiet;
}

void replay_message(const char *fmt, ...)
{
    if (message_quiet || thread_quiet)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", message_name, report_safe(line));
}

/* A source file named by the trace's site table, for reading: only a regular
 * file (a FIFO would block, /dev/zero never end); NULL with errno set else. */
FILE *report_open_source(const char *file)
{
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL; /* "Invalid argument": not a regular file */
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* ------------------------------------------------------------ sections no writer knows */

void report_print_value(FILE *out, const struct pes_rnode *n)
{
    char buf[64];
    switch (pes_r_kind(n)) {
    case PES_R_U64:
        report_count(buf, sizeof buf, pes_r_u(n));
        fputs(buf, out);
        break;
    case PES_R_I64:
        fprintf(out, "%" PRId64, pes_r_i(n));
        break;
    case PES_R_F64:
        fprintf(out, "%.6g", pes_r_f(n));
        break;
    case PES_R_BOOL:
        fputs(pes_r_u(n) ? "yes" : "no", out);
        break;
    case PES_R_STR:
        fputs(report_safe(pes_r_s(n)), out);
        break;
    case PES_R_NULL:
        fputs("n/a", out);
        break;
    case PES_R_ARRAY:
        for (size_t i = 0; i < pes_r_count(n); i++) {
            if (i)
                fputs(", ", out);
            report_print_value(out, pes_r_at(n, i));
        }
        break;
    case PES_R_OBJECT:
        for (size_t i = 0; i < pes_r_count(n); i++) {
            fprintf(out, "%s%s ", i ? ", " : "", pes_r_key(pes_r_at(n, i)));
            report_print_value(out, pes_r_at(n, i));
        }
        break;
    }
}

void report_print_table(FILE *out, const struct pes_rnode *rows)
{
    const struct pes_rnode *first = pes_r_at(rows, 0);
    fputs("   ", out);
    for (size_t c = 0; c < pes_r_count(first); c++)
        fprintf(out, " %14s", pes_r_key(pes_r_at(first, c)));
    fputc('\n', out);
    for (size_t r = 0; r < pes_r_count(rows); r++) {
        const struct pes_rnode *row = pes_r_at(rows, r);
        fputs("   ", out);
        for (size_t c = 0; c < pes_r_count(first); c++) {
            fputc(' ', out);
            /* right-aligned in 14 columns: print to a buffer first */
            char *cell = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&cell, &len);
            if (m) {
                report_print_value(m, pes_r_get(row, pes_r_key(pes_r_at(first, c))));
                fclose(m);
            }
            fprintf(out, "%14s", cell ? cell : "");
            free(cell);
        }
        fputc('\n', out);
    }
}

const struct pes_rnode *report_top_conflict_site(const struct pes_rnode *sim, size_t l)
{
    const struct pes_rnode *all = pes_r_get(sim, "all_sites"), *top = NULL;
    double best = 0;
    for (size_t i = 0; i < pes_r_count(all); i++) {
        const struct pes_rnode *row = pes_r_at(all, i);
        double v = pes_r_f(pes_r_at(pes_r_get(row, "conflict"), l));
        if (v > best)
            best = v, top = row;
    }
    return top;
}

size_t report_model_disagreements(const struct pes_rnode *c, struct report_disagreement *out,
                                  size_t cap)
{
    const struct pes_rnode *local = pes_r_get(pes_r_get(c, "model"), "hit_local");
    const struct pes_rnode *levels = pes_r_get(pes_r_get(c, "simulation"), "levels");
    size_t n = 0;
    for (size_t l = 0; local && l < pes_r_count(levels) && l < pes_r_count(local) && n < cap; l++) {
        const struct pes_rnode *lv = pes_r_at(levels, l);
        uint64_t reaching = pes_r_get_u(lv, "accesses"), hits = pes_r_get_u(lv, "hits");
        if (!reaching)
            continue; /* nothing reached it: no rate to compare */
        double sim = (double)hits / (double)reaching, model = pes_r_f(pes_r_at(local, l));
        if (100.0 * (sim > model ? sim - model : model - sim) <= REPORT_DISAGREE_PP)
            continue;
        out[n++] =
            (struct report_disagreement){.level = (unsigned)l + 1, .model = model, .sim = sim};
    }
    return n;
}
