/*
 * html.c — pes-replay --html FILE: one self-contained HTML page (inline CSS,
 * inline SVG, a few lines of inline JS for sortable tables, no URL) drawn
 * from the JSON tree of any report (full, sampled, --compare, --diff), which
 * the page embeds verbatim as <script type="application/json" id="pes-data">.
 *
 * The charts read without colour: bars carry their count in a <title> and in
 * data-* attributes, series differ by hatching, heatmap cells by grey level
 * and their value. Sizes are bounded: tables list at most HTML_TOP_ROWS rows,
 * heatmaps aggregate beyond HTML_MAX_CELLS threads a side, at most
 * HTML_MAX_CHARTS histograms are drawn (docs/report.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "assumptions.h"
#include "diff.h"
#include "findings.h"
#include "report.h"
#include "report_util.h"
#include "utf8.h"
#include "writers.h"

#define HTML_TOP_ROWS   PES_HTML_TOP_ROWS
#define HTML_MAX_CELLS  32
#define HTML_MAX_CHARTS 64
#define HTML_MAX_BINS   64
/* the annotated-source section: the hottest files, in each the hottest
 * lines with a few lines of context, source lines cut at so many bytes */
#define HTML_SRC_FILES   5
#define HTML_SRC_HOT     20
#define HTML_SRC_CONTEXT 3
#define HTML_SRC_BYTES   240
/* chart geometry (SVG user units = CSS px) */
#define CH_W           640.0
#define CH_H           200.0
#define CH_L           70.0 /* left margin: y axis labels */
#define HTML_LONG_CELL 80   /* bytes: longer strings in table cells are cut (title: the whole) */
#define CH_T           40.0 /* top margin: title, unit */
#define CH_B           50.0 /* bottom margin: x labels and unit */
#define TITLE_CHAR_PX  7.5  /* width of a title's character (13 px bold sans-serif), at most */

#define DIST_UNIT "reuse distance (distinct cache lines, log2 bins)"
#define TIME_UNIT "reuse time (accesses in between, log2 bins)"

/* One source line's counts (the rows of --annotate, summed per line). */
struct src_line {
    uint64_t line, accesses, misses[4], inval[2], coh[2];
    int hot;   /* one of the file's HTML_SRC_HOT lines with the most accesses */
    int shown; /* within HTML_SRC_CONTEXT lines of a hot line: listed, with an anchor */
};

/* A file of the annotated-source section. */
struct src_file {
    const char *path;
    uint64_t accesses;
    struct src_line *lines; /* by line number */
    size_t n;
};

struct html {
    FILE *out;
    struct src_file src[HTML_SRC_FILES];
    int nsrc;             /* files in the annotated-source section */
    int src_sim;          /* its rows have misses, invalidations, coherence misses */
    size_t src_levels;    /* cache levels of the misses */
    const char *src_why;  /* why there is no per-line count (NULL: there are) */
    int charts;           /* histograms drawn so far */
    int tables;           /* tables so far (ids) */
    long line;            /* cache line size of the report, bytes (0: unknown) */
    const json_t *levels; /* machine.levels */
    const json_t *root;
};

/* Text with the five HTML specials escaped. */
static void esc(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

/* A scalar as table text. */
static void scalar(FILE *out, const json_t *v)
{
    if (json_is_string(v))
        esc(out, json_string_value(v));
    else if (json_is_integer(v))
        fprintf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(out, "%.6g", json_real_value(v));
    else if (json_is_true(v))
        fputs("yes", out);
    else if (json_is_false(v))
        fputs("no", out);
    else
        fputs("&#8212;", out);
}

static double num(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* A stated interval: [lo, hi] under a key ending in "_ci90" (docs/accuracy.md). */
static int is_interval(const char *key, const json_t *v)
{
    size_t n = strlen(key);
    return n > 5 && !strcmp(key + n - 5, "_ci90") && json_is_array(v) && json_array_size(v) == 2 &&
           json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1));
}

static void interval(FILE *out, const json_t *v)
{
    fprintf(out, "[%.6g, %.6g]", num(json_array_get(v, 0)), num(json_array_get(v, 1)));
}

/* A histogram's bins as log2 bins of distance: bin 0 is distance 0, bin k
 * (k >= 1) is [2^(k-1), 2^k - 1]. "exact" rows are [distance, count],
 * "log2" rows [lo, hi, count] (placed by lo), --compare's rows {lo, hi, count}. */
static int bin_of(double d)
{
    return d < 1 ? 0 : (int)floor(log2(d)) + 1;
}

/* One series of a chart in those bins: the summed counts, how many rows each
 * bin holds, and the 90 % interval a sampled row states for its share
 * (share_ci90), which a bar of exactly one row carries. */
struct hist_bins {
    double count[HTML_MAX_BINS];
    int rows[HTML_MAX_BINS];
    int has_ci[HTML_MAX_BINS];
    double ci[HTML_MAX_BINS][2];
    double share[HTML_MAX_BINS]; /* the row's share of its histogram, with ci */
};

static int bins_of(const json_t *rows, struct hist_bins *hb)
{
    memset(hb, 0, sizeof *hb);
    int n = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
    {
        double d, c;
        const json_t *iv = NULL;
        if (json_is_object(r)) {
            d = num(json_object_get(r, "lo"));
            c = num(json_object_get(r, "count"));
            iv = json_object_get(r, "share_ci90");
        } else if (json_array_size(r) == 2) {
            d = num(json_array_get(r, 0));
            c = num(json_array_get(r, 1));
        } else {
            d = num(json_array_get(r, 0));
            c = num(json_array_get(r, 2));
        }
        int b = bin_of(d);
        if (b >= HTML_MAX_BINS)
            b = HTML_MAX_BINS - 1;
        hb->count[b] += c;
        hb->rows[b]++;
        if (iv && is_interval("share_ci90", iv)) {
            hb->has_ci[b] = 1;
            hb->ci[b][0] = num(json_array_get(iv, 0));
            hb->ci[b][1] = num(json_array_get(iv, 1));
            hb->share[b] = num(json_object_get(r, "share"));
        }
        if (b + 1 > n)
            n = b + 1;
    }
    return n;
}

static void bin_label(FILE *out, int b)
{
    if (b == 0)
        fputs("0", out);
    else if (b <= 10)
        fprintf(out, "%ld", 1L << (b - 1));
    else if (b <= 20)
        fprintf(out, "%ldK", 1L << (b - 11));
    else if (b <= 30)
        fprintf(out, "%ldM", 1L << (b - 21));
    else
        fprintf(out, "2^%d", b - 1);
}

/* A bar's 90 % interval as a whisker: the bar's height is its share times
 * `per_share` (share -> pixels), so the interval's ends sit at lo and hi
 * times that above the baseline, clipped to the plot's top. */
static void whisker(FILE *out, int s, int b, double x, double base, double top, double per_share,
                    const double ci[2])
{
    double ylo = base - ci[0] * per_share, yhi = base - ci[1] * per_share;
    if (ylo < top)
        ylo = top;
    if (yhi < top)
        yhi = top;
    fprintf(out,
            "<path class=\"ci\" data-series=\"%d\" data-bin=\"%d\" d=\"M%.2f %.4fV%.4fM%.2f "
            "%.4fH%.2fM%.2f %.4fH%.2f\"/>\n",
            s, b, x, ylo, yhi, x - 3, ylo, x + 3, x - 3, yhi, x + 3);
}

/* One reuse-distance chart: one or two series (two: --compare's sampled and
 * full, overlaid side by side, the second hatched). Each series is scaled to
 * its own maximum: a bar's height is count / max * plot height. */
/* ------------------------------------------------------------ titles
 * A chart's or table's title in words, from the JSON path of what it draws
 * ("configs[cores=2].simulation.sites" -> "Simulated caches, 2 cores:
 * access sites"): the path stays in the element's data-source. */

static const struct {
    const char *key, *words;
} title_words[] = {
    {"simulation", "simulated caches"},
    {"sites", "access sites"},
    {"cache_lines", "cache lines (c2c)"},
    {"offsets", "offsets in the line"},
    {"communication", "communication"},
    {"comm", "communication"},
    {"levels", "cache levels"},
    {"model", "model"},
    {"miss_ratio_curve", "miss-ratio curve"},
    {"intra", "intra-thread reuse"},
    {"shared", "shared-cache reuse"},
    {"line_time_histogram", "reuse time per line"},
    {"time_histogram", "reuse time"},
    {"stack_histogram", "stack distance"},
    {"per_thread", "per thread"},
    {"bytes_by_thread", "bytes per thread"},
    {"objects", "data objects"},
    {"histograms", "histograms"},
};

/* The words of one path element (its key, then its bracket). */
static void title_element(const struct html *h, const char *key, size_t klen, const char *br,
                          size_t blen, char *words, size_t wn, char *ctx, size_t cn)
{
    char k[128], b[256];
    snprintf(k, sizeof k, "%.*s", (int)klen, key);
    snprintf(b, sizeof b, "%.*s", (int)blen, br);
    *words = '\0';
    long long v = 0;
    const char *at;
    if (!strcmp(k, "configs")) {
        if ((at = strstr(b, "cores=")) && sscanf(at + 6, "%lld", &v) == 1)
            snprintf(ctx, cn, "%lld %s%s", v, strstr(b, "mimicked=true") ? "mimicked core" : "core",
                     v == 1 ? "" : "s");
        else if (*b)
            snprintf(ctx, cn, "configuration %s", b);
        return;
    }
    if (!strcmp(k, "prd") || !strcmp(k, "crd")) {
        int prd = k[0] == 'p';
        if ((at = strstr(b, prd ? "stream=" : "group=")) &&
            sscanf(at + (prd ? 7 : 6), "%lld", &v) == 1)
            snprintf(words, wn, "%s reuse distances (%s) of %s %lld", prd ? "private" : "shared",
                     prd ? "PRD" : "CRD", prd ? "thread" : "shared cache", v);
        else
            snprintf(words, wn, "%s reuse distances (%s)", prd ? "private" : "shared",
                     prd ? "PRD" : "CRD");
        return;
    }
    const char *w = NULL;
    if (!strcmp(k, "groups")) {
        const json_t *cf = json_array_get(json_object_get(h->root, "configs"), 0);
        const char *by = json_string_value(json_object_get(cf ? cf : h->root, "by"));
        w = !by || !strcmp(by, "line") ? "source lines"
            : !strcmp(by, "function")  ? "functions"
            : !strcmp(by, "object")    ? "data objects"
            : !strcmp(by, "callpath")  ? "source lines by call path"
                                       : "access sites";
    }
    for (size_t i = 0; !w && i < sizeof title_words / sizeof title_words[0]; i++)
        if (!strcmp(k, title_words[i].key))
            w = title_words[i].words;
    size_t o = 0;
    if (w)
        o = (size_t)snprintf(words, wn, "%s", w);
    else /* a key without words of its own: its underscores as spaces */
        for (const char *c = k; *c && o + 1 < wn; c++)
            words[o++] = *c == '_' ? ' ' : *c, words[o] = '\0';
    if (*b && o + 1 < wn) { /* a row's key: "address=…" as a line's address */
        if ((at = strstr(b, "address=")) && sscanf(at + 8, "%lld", &v) == 1)
            snprintf(words + o, wn - o, " of line 0x%llx", v);
        else {
            snprintf(words + o, wn - o, " (%s)", b);
            for (char *c = words + o; *c; c++)
                if (*c == '=')
                    *c = ' ';
        }
    }
}

static void human_title(const struct html *h, const char *path, char *out, size_t n)
{
    char parts[8][300], ctx[96] = "";
    int np = 0;
    const char *p = path;
    while (*p && np < 8) {
        const char *key = p;
        while (*p && *p != '.' && *p != '[')
            p++;
        size_t klen = (size_t)(p - key);
        const char *br = "";
        size_t blen = 0;
        if (*p == '[') {
            br = ++p;
            while (*p && *p != ']')
                p++;
            blen = (size_t)(p - br);
            if (*p == ']')
                p++;
            if (*p == '[') /* an index after a key ("x[3][4]"): skipped */
                while (*p && *p != '.')
                    p++;
        }
        if (*p == '.')
            p++;
        title_element(h, key, klen, br, blen, parts[np], sizeof parts[np], ctx, sizeof ctx);
        if (*parts[np])
            np++;
    }
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < np && o + 1 < n; i++) {
        o += (size_t)snprintf(out + o, n - o, "%s%s", i == 0 ? "" : i == 1 ? ": " : ", ", parts[i]);
        if (i == 0 && *ctx && o + 1 < n)
            o += (size_t)snprintf(out + o, n - o, ", %s", ctx);
    }
    if (!np)
        snprintf(out, n, "%s", *ctx ? ctx : "report");
    if (out[0] >= 'a' && out[0] <= 'z')
        out[0] = (char)(out[0] - 'a' + 'A');
}

static void histogram_chart(struct html *h, const char *title, const char *names[],
                            const json_t *rows[], const char *srcs[], int nser, int mark_caches,
                            const char *xunit)
{
    if (h->charts >= HTML_MAX_CHARTS)
        return;
    h->charts++;
    FILE *out = h->out;
    struct hist_bins bins[2];
    double max[2] = {0, 0};
    int n = 1;
    for (int s = 0; s < nser; s++) {
        int k = bins_of(rows[s], &bins[s]);
        if (k > n)
            n = k;
        for (int b = 0; b < k; b++)
            if (bins[s].count[b] > max[s])
                max[s] = bins[s].count[b];
    }
    if (mark_caches && h->line > 0) { /* room for the largest cache's mark */
        size_t i;
        const json_t *l;
        json_array_foreach(h->levels, i, l)
        {
            int b = bin_of(num(json_object_get(l, "size")) / (double)h->line) + 1;
            if (b > n && b < HTML_MAX_BINS)
                n = b;
        }
    }
    double pw = CH_W - CH_L - 10, ph = CH_H, slot = pw / n, bw = slot * 0.8 / nser;
    int whiskers = 0;
    /* the plot keeps its size; the picture widens for a long title (and the legend beside it) */
    double width = 8 + TITLE_CHAR_PX * (double)strlen(title) + (nser == 2 ? 210 : 0);
    if (width < CH_W)
        width = CH_W;
    fprintf(out,
            "<figure><svg class=\"chart hist\" role=\"img\" width=\"%g\" height=\"%g\" viewBox=\"0 "
            "0 %g %g\" "
            "data-kind=\"histogram\" data-scale=\"linear\" data-plot-height=\"%g\" "
            "data-baseline=\"%g\" "
            "data-series=\"%d\"",
            width, CH_T + ph + CH_B, width, CH_T + ph + CH_B, ph, CH_T + ph, nser);
    for (int s = 0; s < nser; s++)
        fprintf(out, " data-source%d=\"%s\"", s, srcs[s]); /* JSON pointers */
    fputs(">\n", out);
    fputs("<title>", out);
    esc(out, title);
    fputs("</title>\n<text x=\"4\" y=\"16\" class=\"t\">", out);
    esc(out, title);
    fputs("</text>\n", out);
    /* axes */
    fprintf(out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>", CH_L, CH_T, CH_L,
            CH_T + ph);
    fprintf(out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>\n", CH_L, CH_T + ph,
            CH_L + pw, CH_T + ph);
    for (int t = 0; t <= 4; t++) {
        double y = CH_T + ph - ph * t / 4;
        fprintf(out, "<text x=\"%g\" y=\"%g\" class=\"yl\">%d%%</text>", CH_L - 4, y + 4, t * 25);
    }
    fprintf(out,
            "\n<text x=\"12\" y=\"%g\" class=\"u\" text-anchor=\"middle\" transform=\"rotate(-90 "
            "12 %g)\">"
            "accesses (%% of largest bin)</text>\n",
            CH_T + ph / 2, CH_T + ph / 2);
    fprintf(out, "<text x=\"%g\" y=\"%g\" class=\"u\">%s</text>\n", CH_L + pw / 2 - 140,
            CH_T + ph + 40, xunit);
    for (int b = 0; b < n; b++) {
        if (n > 24 && b % 2)
            continue;
        fprintf(out, "<text x=\"%.2f\" y=\"%g\" class=\"xl\">", CH_L + slot * b + slot / 2,
                CH_T + ph + 14);
        bin_label(out, b);
        fputs("</text>", out);
    }
    fputc('\n', out);
    for (int s = 0; s < nser; s++) {
        for (int b = 0; b < n; b++) {
            double c = bins[s].count[b];
            if (c <= 0)
                continue;
            double hh = max[s] > 0 ? c / max[s] * ph : 0;
            int with_ci = bins[s].rows[b] == 1 && bins[s].has_ci[b];
            fprintf(out,
                    "<rect class=\"bar s%d\" x=\"%.2f\" y=\"%.4f\" width=\"%.2f\" height=\"%.4f\" "
                    "data-series=\"%d\" data-bin=\"%d\" data-count=\"%.17g\"",
                    s, CH_L + slot * b + slot * 0.1 + bw * s, CH_T + ph - hh, bw, hh, s, b, c);
            if (with_ci)
                fprintf(out, " data-ci90=\"%.6g %.6g\"", bins[s].ci[b][0], bins[s].ci[b][1]);
            fputs("><title>", out);
            esc(out, names[s]);
            fputs(" distance ", out);
            bin_label(out, b);
            fprintf(out, "&#8230;: %.17g accesses", c);
            if (with_ci)
                fprintf(out, " (share of the histogram: 90 %% interval [%.3g, %.3g])",
                        bins[s].ci[b][0], bins[s].ci[b][1]);
            fputs("</title></rect>\n", out);
            if (with_ci && bins[s].share[b] > 0) {
                whisker(out, s, b, CH_L + slot * b + slot * 0.1 + bw * s + bw / 2, CH_T + ph, CH_T,
                        hh / bins[s].share[b], bins[s].ci[b]);
                whiskers++;
            }
        }
    }
    if (mark_caches && h->line > 0) { /* each cache level's size in lines */
        size_t i;
        const json_t *l;
        json_array_foreach(h->levels, i, l)
        {
            double lines = num(json_object_get(l, "size")) / (double)h->line;
            double b = lines < 1 ? 0 : log2(lines) + 1;
            double x = CH_L + slot * b;
            fprintf(out,
                    "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" class=\"mark\"/>"
                    "<text x=\"%.2f\" y=\"%g\" class=\"ml\"%s>L%lld %g KiB</text>\n",
                    x, CH_T, x, CH_T + ph, x > CH_W - 80 ? x - 2 : x + 2, CH_T + 10 + 12.0 * i,
                    x > CH_W - 80 ? " text-anchor=\"end\"" : "",
                    (long long)json_integer_value(json_object_get(l, "level")),
                    num(json_object_get(l, "size")) / 1024);
        }
    }
    if (nser == 2)
        fprintf(out,
                "<rect x=\"%g\" y=\"4\" width=\"12\" height=\"10\" class=\"bar s0\"/><text "
                "x=\"%g\" y=\"13\">%s</text>"
                "<rect x=\"%g\" y=\"4\" width=\"12\" height=\"10\" class=\"bar s1\"/><text "
                "x=\"%g\" y=\"13\">%s</text>\n",
                width - 200, width - 185, names[0], width - 100, width - 85, names[1]);
    fputs("</svg>", out);
    if (whiskers)
        fputs("<figcaption>Whiskers: the 90 % interval of a bin's share of the histogram (Wilson "
              "score "
              "interval with Kish's effective sample size; docs/accuracy.md, \"Stated "
              "uncertainty\").</figcaption>",
              out);
    fputs("</figure>\n", out);
}

/* Miss-ratio curves as the report holds them (configs[].miss_ratio_curve,
 * computed by the analyses): one curve per series, the points' `key`
 * ("fully_associative" or "sdcm") against the cache size, 1, 2, 4, ...
 * lines on a log2 axis. */
static void mrc_chart(struct html *h, const char *title, const char *key, int nser,
                      const json_t *curves[], const char *names[], const char *srcs[])
{
    int n = 2;
    for (int s = 0; s < nser; s++) {
        int k = (int)json_array_size(json_object_get(curves[s], "points"));
        if (k > n)
            n = k;
    }
    if (n > HTML_MAX_BINS)
        n = HTML_MAX_BINS;
    FILE *out = h->out;
    double pw = CH_W - CH_L - 60, ph = CH_H, dx = pw / (n - 1);
    fprintf(out,
            "<figure><svg class=\"chart mrc\" role=\"img\" width=\"%g\" height=\"%g\" "
            "data-kind=\"mrc\" "
            "data-key=\"%s\" data-plot-height=\"%g\" data-baseline=\"%g\"><title>",
            CH_W, CH_T + ph + CH_B, key, ph, CH_T + ph);
    esc(out, title);
    fputs("</title><text x=\"4\" y=\"16\" class=\"t\">", out);
    esc(out, title);
    fprintf(out,
            "</text>\n<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>"
            "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>\n"
            "<text x=\"4\" y=\"%g\" class=\"u\">miss ratio (%%)</text>"
            "<text x=\"%g\" y=\"%g\" class=\"u\">cache size (lines, log2 scale)</text>\n",
            CH_L, CH_T, CH_L, CH_T + ph, CH_L, CH_T + ph, CH_L + pw, CH_T + ph, CH_T - 10,
            CH_L + pw / 2 - 80, CH_T + ph + 40);
    for (int t = 0; t <= 4; t++)
        fprintf(out, "<text x=\"%g\" y=\"%g\" class=\"yl\">%d%%</text>", CH_L - 4,
                CH_T + ph - ph * t / 4 + 4, t * 25);
    for (int k = 0; k < n; k++)
        if (n <= 16 || k % 2 == 0) { /* labels of 4 characters need 2 points beyond 16 */
            fprintf(out, "<text x=\"%.2f\" y=\"%g\" class=\"xl\">", CH_L + dx * k, CH_T + ph + 14);
            bin_label(out, k + 1);
            fputs("</text>", out);
        }
    for (int s = 0; s < nser;
         s++) { /* one curve per series: dash pattern and legend tell them apart */
        const json_t *pts = json_object_get(curves[s], "points");
        int np = (int)json_array_size(pts);
        if (np > n)
            np = n;
        fprintf(out,
                "<g class=\"series\" data-source=\"%s\"><polyline class=\"curve c%d\" points=\"",
                srcs[s], s % 4);
        for (int k = 0; k < np; k++) /* point k is a cache of 2^k lines */
            fprintf(out, "%.2f,%.2f ", CH_L + dx * k,
                    CH_T + ph - num(json_object_get(json_array_get(pts, k), key)) * ph);
        fputs("\"/>\n", out);
        for (int k = 0; k < np; k++) {
            const json_t *p = json_array_get(pts, k);
            double mr = num(json_object_get(p, key)), lines = num(json_object_get(p, "size_lines"));
            fprintf(out,
                    "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" data-lines=\"%.0f\" "
                    "data-miss-ratio=\"%.17g\">"
                    "<title>%s, %.0f lines: %.3g%% misses</title></circle>",
                    CH_L + dx * k, CH_T + ph - mr * ph, lines, mr, names[s], lines, 100 * mr);
        }
        double ly = CH_T + 10 + 13.0 * s; /* legend: the curve's dash pattern, then its name */
        fprintf(out,
                "<line class=\"curve c%d\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                "<text x=\"%.2f\" y=\"%.2f\">%s</text></g>\n",
                s % 4, CH_L + pw - 90, ly - 4, CH_L + pw - 60, ly - 4, CH_L + pw - 56, ly,
                names[s]);
    }
    fputs("</svg></figure>\n", out);
}

/* The miss-ratio curves of each core count: fully associative, then SDCM
 * at the associativity of the level the profile models. */
static void mrc_by_cores(struct html *h, const json_t *configs)
{
    int ncfg = (int)json_array_size(configs), m = 0;
    if (ncfg == 0)
        return;
    const json_t **cs = calloc((size_t)ncfg, sizeof *cs), *first = NULL;
    const char **nm = calloc((size_t)ncfg, sizeof *nm), **src = calloc((size_t)ncfg, sizeof *src);
    char(*buf)[96] = calloc((size_t)ncfg, sizeof *buf),
    (*sbuf)[96] = calloc((size_t)ncfg, sizeof *sbuf);
    if (cs && nm && src && buf && sbuf) {
        for (int c = 0; c < ncfg; c++) {
            const json_t *cfg = json_array_get(configs, c),
                         *curve = json_object_get(cfg, "miss_ratio_curve");
            if (!json_array_size(json_object_get(curve, "points")))
                continue;
            if (!first)
                first = curve;
            snprintf(buf[m], sizeof buf[m], "%lld cores",
                     (long long)json_integer_value(json_object_get(cfg, "cores")));
            snprintf(sbuf[m], sizeof sbuf[m], "/configs/%d/miss_ratio_curve", c);
            cs[m] = curve, nm[m] = buf[m], src[m] = sbuf[m], m++;
        }
        if (m) {
            const char *prof = json_string_value(json_object_get(first, "profile"));
            int crd = prof && !strcmp(prof, "crd");
            long long level = json_integer_value(json_object_get(first, "level")),
                      ways = json_integer_value(json_object_get(first, "ways"));
            fprintf(
                h->out,
                "<h2 id=\"mrc\">Miss-ratio curves</h2>\n<p>Miss ratio (cold misses included) of a "
                "cache "
                "of each size, from the reuse profile the model uses for L%lld (%s): fully "
                "associative LRU "
                "(the accesses whose reuse distance is at least the size), and the set-associative "
                "estimate of SDCM (PPT-Multicore Eq. 1&#8211;3) at L%lld's associativity, ",
                level, crd ? "the CRD of the shared caches" : "the PRD of the streams", level);
            if (ways)
                fprintf(h->out, "%lld ways", ways);
            else
                fputs("fully associative", h->out);
            fputs(" (a cache of no more lines than ways is one set). The report's JSON holds the "
                  "points "
                  "(<code>configs[].miss_ratio_curve</code>).</p>\n",
                  h->out);
            mrc_chart(h, "miss ratio vs cache size, per core count: fully associative LRU",
                      "fully_associative", m, cs, nm, src);
            char t[160];
            if (ways)
                snprintf(t, sizeof t, "miss ratio vs cache size, per core count: SDCM, %lld-way",
                         ways);
            else
                snprintf(t, sizeof t,
                         "miss ratio vs cache size, per core count: SDCM, fully associative");
            mrc_chart(h, t, "sdcm", m, cs, nm, src);
        }
    }
    free(cs);
    free(nm);
    free(src);
    free(buf);
    free(sbuf);
}

/* A thread x thread matrix as grey cells with their values; beyond
 * HTML_MAX_CELLS threads a side, threads are grouped into HTML_MAX_CELLS
 * buckets and the cells summed. */
static void heatmap(struct html *h, const char *title, const json_t *m, const char *src)
{
    FILE *out = h->out;
    size_t n = json_array_size(m);
    if (n == 0)
        return;
    size_t k = n > HTML_MAX_CELLS ? HTML_MAX_CELLS : n;
    double *cell = calloc(k * k, sizeof *cell), max = 0;
    if (!cell)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n && j < json_array_size(json_array_get(m, i)); j++)
            cell[(i * k / n) * k + j * k / n] += num(json_array_get(json_array_get(m, i), j));
    for (size_t i = 0; i < k * k; i++)
        if (cell[i] > max)
            max = cell[i];
    double cs = k <= 8 ? 40 : k <= 16 ? 24 : 8, side = cs * k;
    /* wide enough for the whole title (13-pixel bold: under 8 pixels a character) */
    double width = side + 80, tw = 8 + TITLE_CHAR_PX * (double)strlen(title);
    if (tw > width)
        width = tw;
    fprintf(out,
            "<figure><svg class=\"chart heat\" role=\"img\" width=\"%g\" height=\"%g\" "
            "data-kind=\"heatmap\" "
            "data-threads=\"%zu\" data-cells=\"%zu\" data-source=\"%s\">\n<title>",
            width, side + 70, n, k, src);
    esc(out, title);
    fputs("</title><text x=\"4\" y=\"16\" class=\"t\">", out);
    esc(out, title);
    fprintf(out,
            "</text>\n<text x=\"60\" y=\"%g\" class=\"u\">consumer thread%s</text>"
            "<text x=\"12\" y=\"%g\" class=\"u\" text-anchor=\"middle\" transform=\"rotate(-90 12 "
            "%g)\">producer thread%s</text>\n",
            side + 60, k < n ? " group" : "", 30 + side / 2, 30 + side / 2, k < n ? " group" : "");
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < k; j++) {
            double v = cell[i * k + j];
            int g = max > 0 ? 255 - (int)(200 * v / max) : 255;
            fprintf(out,
                    "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"rgb(%d,%d,%d)\" "
                    "data-count=\"%.17g\"><title>%zu &#8594; %zu: %.17g transfers</title></rect>",
                    40 + cs * j, 30 + cs * i, cs, cs, g, g, g, v, i, j, v);
            if (cs >= 24)
                fprintf(out, "<text x=\"%g\" y=\"%g\" class=\"cv%s\">%.0f</text>",
                        40 + cs * j + cs / 2, 30 + cs * i + cs / 2 + 4, g < 128 ? " inv" : "", v);
        }
    fputs("\n</svg></figure>\n", out);
    free(cell);
}

/* Bars of values against the core count (the model's predicted and the
 * simulation's hit rates per level, the predicted runtime). */
static void core_chart(struct html *h, const char *title, const char *unit, int nser,
                       const char *names[], const double *v /* [config][series] */,
                       const long *cores, int ncfg)
{
    FILE *out = h->out;
    double max = 0;
    for (int i = 0; i < ncfg * nser; i++)
        if (v[i] > max)
            max = v[i];
    if (max <= 0)
        max = 1;
    double pw = CH_W - CH_L - 10, ph = CH_H, slot = pw / ncfg, bw = slot * 0.8 / nser;
    fprintf(out,
            "<figure><svg class=\"chart cores\" role=\"img\" width=\"%g\" height=\"%g\" "
            "data-kind=\"cores\">"
            "<title>",
            CH_W, CH_T + ph + CH_B + 14.0 * ((nser + 2) / 3));
    esc(out, title);
    fputs("</title><text x=\"4\" y=\"16\" class=\"t\">", out);
    esc(out, title);
    fprintf(out,
            "</text>\n<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>"
            "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>\n",
            CH_L, CH_T, CH_L, CH_T + ph, CH_L, CH_T + ph, CH_L + pw, CH_T + ph);
    fprintf(out,
            "<text x=\"%g\" y=\"%g\" class=\"yl\">%.4g</text><text x=\"%g\" y=\"%g\" "
            "class=\"yl\">0</text>"
            "<text x=\"4\" y=\"%g\" class=\"u\">%s</text>\n",
            CH_L - 4, CH_T + 4, max, CH_L - 4, CH_T + ph + 4, CH_T - 10, unit);
    for (int c = 0; c < ncfg; c++) {
        fprintf(out, "<text x=\"%.2f\" y=\"%g\" class=\"xl\">%ld cores</text>",
                CH_L + slot * c + slot / 2, CH_T + ph + 14, cores[c]);
        for (int s = 0; s < nser; s++) {
            double x = v[c * nser + s], hh = x / max * ph;
            fprintf(out,
                    "<rect class=\"bar p%d\" x=\"%.2f\" y=\"%.4f\" width=\"%.2f\" height=\"%.4f\" "
                    "data-value=\"%.17g\">"
                    "<title>%ld cores, %s: %.6g</title></rect>",
                    s % 6, CH_L + slot * c + slot * 0.1 + bw * s, CH_T + ph - hh, bw, hh, x,
                    cores[c], names[s], x);
            if (hh < 1) /* a bar of (almost) 0: a hairline on the axis, so that it is seen */
                fprintf(out,
                        "<line class=\"zero\" x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" "
                        "data-value=\"%.17g\"/>",
                        CH_L + slot * c + slot * 0.1 + bw * s, CH_T + ph - 1.5,
                        CH_L + slot * c + slot * 0.1 + bw * s + bw, CH_T + ph - 1.5, x);
            if (bw >= 40)
                fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" class=\"bl\">%s</text>",
                        CH_L + slot * c + slot * 0.1 + bw * s + bw / 2, CH_T + ph - hh - 2,
                        names[s]);
        }
        fputc('\n', out);
    }
    for (int s = 0; s < nser; s++) /* legend: pattern and name */
        fprintf(out,
                "<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"10\" class=\"bar p%d\"/><text "
                "x=\"%g\" y=\"%g\">%s</text>",
                CH_L + 200.0 * (s % 3), CH_T + ph + 26 + 14.0 * (s / 3), s % 6,
                CH_L + 200.0 * (s % 3) + 16, CH_T + ph + 35 + 14.0 * (s / 3), names[s]);
    fputs("\n</svg></figure>\n", out);
}

/* How far the predicted runtime can be trusted, as the text report says it:
 * the runtime model, the machine description's status and, when measured on
 * its host, the error band (docs/model.md, "Validation"). */
static void runtime_trust(struct html *h, const json_t *rt)
{
    const char *model = json_string_value(json_object_get(rt, "model"));
    const char *status = json_string_value(json_object_get(rt, "validation"));
    const json_t *band = json_object_get(rt, "error_band");
    fputs("<p class=\"trust\">Runtime model <code>", h->out);
    esc(h->out, model ? model : "?");
    fputs("</code>; machine description ", h->out);
    esc(h->out, status ? status : "?");
    const char *band_model = json_string_value(json_object_get(band, "model"));
    if (band && band_model && model && !strcmp(band_model, model))
        fprintf(h->out,
                "; measured error on this host: mean %.0f %%, max %.0f %% over %lld runs "
                "(bench/model_vs_host.py)",
                100 * num(json_object_get(band, "mean")), 100 * num(json_object_get(band, "max")),
                (long long)json_integer_value(json_object_get(band, "runs")));
    else
        fputs("; no measured error band for it: read the runtime as a relative figure", h->out);
    fputs(".</p>\n", h->out);
}

/* The runtime model's terms per core count, in ms, and the one that bounds
 * the total (docs/model.md §3; the text report's terms table). */
static void runtime_terms(struct html *h, const json_t *configs)
{
    static const char *const term[] = {"compute",   "chain",   "issue", "fill",
                                       "bandwidth", "exposed", "tlb",   "parallel"};
    FILE *out = h->out;
    if (!json_object_get(
            json_object_get(json_object_get(json_array_get(configs, 0), "model"), "runtime"),
            "terms"))
        return;
    fprintf(out,
            "<h3>Runtime terms per core <small>(ms; T = max(max(issue, fill, bandwidth) + exposed "
            "+ tlb, max(compute, chain)) + parallel; a term without its trace fact or machine "
            "value is 0)</small></h3>\n<div class=\"tw\"><table class=\"sortable\" "
            "id=\"t%d\"><thead><tr><th>cores</th>",
            h->tables++);
    for (size_t k = 0; k < sizeof term / sizeof *term; k++)
        fprintf(out, "<th>%s</th>", term[k]);
    fputs("<th>bound</th></tr></thead><tbody>\n", out);
    size_t c;
    const json_t *cfg;
    json_array_foreach(configs, c, cfg)
    {
        const json_t *rt = json_object_get(json_object_get(cfg, "model"), "runtime");
        const json_t *terms = json_object_get(rt, "terms");
        fprintf(out, "<tr><td class=\"n\">%lld</td>",
                (long long)json_integer_value(json_object_get(cfg, "cores")));
        for (size_t k = 0; k < sizeof term / sizeof *term; k++)
            fprintf(out, "<td class=\"n\">%.4g</td>",
                    1e3 * num(json_object_get(json_object_get(terms, term[k]), "seconds")));
        const char *bound = json_string_value(json_object_get(rt, "bound"));
        fputs("<td>", out);
        esc(out, bound ? bound : "");
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
}

/* The simulation's misses of each level by cause, per configuration (the
 * text report's simulation table). */
static void miss_causes(struct html *h, const json_t *configs)
{
    static const char *const cause[] = {"compulsory", "capacity", "conflict", "coherence"};
    FILE *out = h->out;
    size_t c;
    const json_t *cfg;
    int any = 0;
    json_array_foreach(configs, c, cfg)
    {
        const json_t *sl = json_object_get(json_object_get(cfg, "simulation"), "levels");
        const json_t *hit = json_object_get(json_object_get(cfg, "model"), "hit_local");
        if (!json_array_size(sl))
            continue;
        if (!any++) {
            fputs("<h3>Misses by cause <small>(compulsory: first touch; capacity: a fully "
                  "associative cache of the level's size misses too; conflict: it would hit; "
                  "coherence: the line was invalidated)</small></h3>\n",
                  out);
            fprintf(out,
                    "<div class=\"tw\"><table class=\"sortable\" id=\"t%d\"><thead><tr><th>"
                    "cores</th><th>level</th><th>accesses</th><th>hit (%%)</th><th>model "
                    "(%%)</th><th>compulsory</th><th>capacity</th><th>conflict</th><th>"
                    "coherence</th></tr></thead><tbody>\n",
                    h->tables++);
        }
        size_t l;
        const json_t *lv;
        json_array_foreach(sl, l, lv)
        {
            double a = num(json_object_get(lv, "accesses"));
            fprintf(out,
                    "<tr><td class=\"n\">%lld</td><td>L%zu</td><td class=\"n\">%.0f</td><td "
                    "class=\"n\">%.2f</td><td class=\"n\">",
                    (long long)json_integer_value(json_object_get(cfg, "cores")), l + 1, a,
                    a > 0 ? 100 * num(json_object_get(lv, "hits")) / a : 0.0);
            if (json_array_get(hit, l))
                fprintf(out, "%.2f", 100 * num(json_array_get(hit, l)));
            fputs("</td>", out);
            for (size_t k = 0; k < sizeof cause / sizeof *cause; k++)
                fprintf(out, "<td class=\"n\">%.0f</td>", num(json_object_get(lv, cause[k])));
            fputs("</tr>\n", out);
        }
    }
    if (any)
        fputs("</tbody></table></div>\n", out);
}

/* Why a level's warning is outside SDCM's assumptions: the configuration's
 * "model_assumptions" entries of the level (assumptions.c), as the text
 * report words them. */
static const char *count_of(char buf[32], const json_t *e, const char *key)
{
    double v = num(json_object_get(e, key));
    report_count(buf, 32, v > 0 ? (uint64_t)(v + 0.5) : 0);
    return buf;
}
#define COUNT(e, key) count_of((char[32]){0}, (e), (key))

static void outside_model(FILE *out, const json_t *list, size_t level)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        if ((size_t)json_integer_value(json_object_get(e, "level")) != level)
            continue;
        const char *reason = json_string_value(json_object_get(e, "reason"));
        if (reason && !strcmp(reason, "set_conflicts")) {
            fprintf(out,
                    "; %.0f %% of its misses are conflict misses: set conflicts, outside the "
                    "model's assumptions (SDCM places lines in sets at random)",
                    100 * num(json_object_get(e, "conflict_share")));
            const char *site = json_string_value(json_object_get(e, "site"));
            if (site) {
                fputs("; most at <code>", out);
                esc(out, site);
                fprintf(out, "</code> (%s of them)", COUNT(e, "site_conflict_misses"));
            }
            if (json_object_get(e, "stride_bytes"))
                fprintf(out, ", whose accesses step %s bytes and reach %.0f of the %.0f sets",
                        COUNT(e, "stride_bytes"), num(json_object_get(e, "sets_reached")),
                        num(json_object_get(e, "sets")));
        } else if (reason && !strcmp(reason, "cyclic_at_capacity")) {
            const json_t *band = json_object_get(e, "band_lines");
            char lo[32], hi[32];
            report_count(lo, sizeof lo, (uint64_t)num(json_array_get(band, 0)));
            report_count(hi, sizeof hi, (uint64_t)num(json_array_get(band, 1)));
            fprintf(out,
                    "; reuses at the capacity, outside the model's assumptions: %.0f %% of the "
                    "accesses reaching it reuse a line after %s..%s other lines (the level holds "
                    "%s), where SDCM's hit probability is between %.0f %% and %.0f %%, but "
                    "lines spread evenly over the sets all hit below the capacity and all miss "
                    "above; they alone move the hit rate by %+.1f pp",
                    100 * num(json_object_get(e, "band_share")), lo, hi, COUNT(e, "capacity_lines"),
                    100 * PES_ASSUMPTIONS_BAND_EDGE, 100 * (1 - PES_ASSUMPTIONS_BAND_EDGE),
                    100 * num(json_object_get(e, "band_shift")));
            if (json_is_true(json_object_get(e, "binned")))
                fputs(" (most of these distances are known only to their power-of-two bin of "
                      "the profile, taken as spread evenly over it, as the model takes them)",
                      out);
        } else if (reason && !strcmp(reason, "level_above")) {
            fprintf(out,
                    "; inherited from L%.0f, outside the model's assumptions: this level's "
                    "accesses are the misses of the levels above, which differ between the "
                    "model and the simulation",
                    num(json_object_get(e, "above")));
        }
    }
}

/* Where the model and the simulation disagree (report_util.h, as the text
 * report warns): a warning per configuration and level, with the reason
 * where it is outside SDCM's assumptions. */
static void disagreements(struct html *h, const json_t *configs)
{
    size_t c;
    const json_t *cfg;
    json_array_foreach(configs, c, cfg)
    {
        const json_t *hit = json_object_get(json_object_get(cfg, "model"), "hit_local");
        const json_t *sl = json_object_get(json_object_get(cfg, "simulation"), "levels");
        for (size_t l = 0; hit && l < json_array_size(sl) && l < json_array_size(hit); l++) {
            const json_t *lv = json_array_get(sl, l);
            double a = num(json_object_get(lv, "accesses")),
                   hits = num(json_object_get(lv, "hits"));
            double model = num(json_array_get(hit, l)), sim = a > 0 ? hits / a : 0;
            if (a <= 0 || fabs(sim - model) * 100 <= REPORT_DISAGREE_PP)
                continue;
            fprintf(h->out,
                    "<p class=\"warn\">Warning: %lld cores, L%zu: the model (SDCM) says %.1f %% "
                    "hits, the simulation %.1f %% (%+.1f pp)",
                    (long long)json_integer_value(json_object_get(cfg, "cores")), l + 1,
                    100 * model, 100 * sim, 100 * (sim - model));
            outside_model(h->out, json_object_get(cfg, "model_assumptions"), l + 1);
            fputs(".</p>\n", h->out);
        }
    }
}

/* The model vs simulation chart and the runtime chart of a full report. */
static void model_charts(struct html *h, const json_t *configs)
{
    int ncfg = (int)json_array_size(configs), nlev = (int)json_array_size(h->levels);
    if (ncfg == 0 || nlev == 0 || nlev > 8)
        return;
    double *v = calloc((size_t)ncfg * 2 * nlev, sizeof *v), *rt = calloc((size_t)ncfg, sizeof *rt);
    long *cores = calloc((size_t)ncfg, sizeof *cores);
    int sim = 0, model = 0;
    char names[16][24];
    const char *np[16];
    for (int l = 0; l < nlev; l++) {
        snprintf(names[2 * l], sizeof names[0], "L%d predicted", l + 1);
        snprintf(names[2 * l + 1], sizeof names[0], "L%d simulated", l + 1);
        np[2 * l] = names[2 * l];
        np[2 * l + 1] = names[2 * l + 1];
    }
    if (v && rt && cores) {
        for (int c = 0; c < ncfg; c++) {
            const json_t *cfg = json_array_get(configs, c);
            cores[c] = (long)json_integer_value(json_object_get(cfg, "cores"));
            const json_t *hit = json_object_get(json_object_get(cfg, "model"), "hit_local");
            const json_t *sl = json_object_get(json_object_get(cfg, "simulation"), "levels");
            for (int l = 0; l < nlev; l++) {
                if (hit)
                    model = 1, v[(c * nlev + l) * 2] = 100 * num(json_array_get(hit, l));
                const json_t *lv = json_array_get(sl, l);
                double a = num(json_object_get(lv, "accesses"));
                if (lv)
                    sim = 1;
                if (a > 0)
                    v[(c * nlev + l) * 2 + 1] = 100 * num(json_object_get(lv, "hits")) / a;
            }
            rt[c] =
                1e3 * num(json_object_get(json_object_get(json_object_get(cfg, "model"), "runtime"),
                                          "total_seconds"));
        }
        if (model || sim) {
            fputs("<h2 id=\"accuracy\">Predicted vs simulated hit rates</h2>\n<p>Hit rate of each "
                  "level (% of the "
                  "accesses reaching the level hit in it): the model's prediction from the reuse "
                  "distances and, "
                  "with <code>--simulate</code>, the cache simulation's.</p>\n",
                  h->out);
            core_chart(h, "hit rate per level and core count", "hit rate (%)", 2 * nlev, np, v,
                       cores, ncfg);
            miss_causes(h, configs);
            disagreements(h, configs);
        }
        if (model) {
            const char *rn[] = {"predicted runtime"};
            fputs("<h2 id=\"runtime\">Predicted runtime</h2>\n", h->out);
            runtime_trust(h, json_object_get(json_object_get(json_array_get(configs, 0), "model"),
                                             "runtime"));
            core_chart(h, "predicted runtime vs core count", "runtime (ms)", 1, rn, rt, cores,
                       ncfg);
            runtime_terms(h, configs);
        }
    }
    free(v);
    free(rt);
    free(cores);
}

/* ------------------------------------------------------------ annotated source
 * The --annotate rows (per source line: accesses, and with --simulate misses
 * per level, invalidations and coherence misses, true / false) of the first
 * configuration, which the command has the analyses publish for the page.
 * The HTML_SRC_FILES files with the most accesses are listed, in each the
 * HTML_SRC_HOT lines with the most accesses with HTML_SRC_CONTEXT lines of
 * context either side: at most 5 x 20 x 7 rows, whatever the program.
 * O(n log n) in the rows. */

static int by_accesses_then_line(const void *a, const void *b)
{
    const struct src_line *x = *(const struct src_line *const *)a,
                          *y = *(const struct src_line *const *)b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return (x->line > y->line) - (x->line < y->line);
}

static int by_file_line(const void *a, const void *b)
{
    const struct pes_rnode *x = *(const struct pes_rnode *const *)a,
                           *y = *(const struct pes_rnode *const *)b;
    int c = strcmp(pes_r_get_s(x, "file"), pes_r_get_s(y, "file"));
    if (c)
        return c;
    uint64_t p = pes_r_get_u(x, "line"), q = pes_r_get_u(y, "line");
    return (p > q) - (p < q);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static void src_free(struct html *h)
{
    for (int f = 0; f < h->nsrc; f++)
        free(h->src[f].lines);
}

/* Picks the files and lines of the section from the report's rows. */
static void src_collect(struct html *h, const struct pes_report *r)
{
    if (!r) {
        h->src_why = "A --diff page compares two reports: run pes-replay on one trace for its "
                     "annotated source";
        return;
    }
    const struct pes_rnode *c = pes_r_at(pes_r_get(pes_report_tree(r), "configs"), 0);
    if (!c) {
        h->src_why =
            "A sampled report has no per-line counts of every access: replay a full trace for them";
        return;
    }
    const struct pes_rnode *rows = pes_r_get(pes_r_get(c, "simulation"), "annotate");
    h->src_sim = rows != NULL;
    if (!rows)
        rows = pes_r_get(c, "annotate");
    size_t n = pes_r_count(rows);
    if (!rows || n == 0) {
        h->src_why = !rows || !strcmp(pes_r_get_s(c, "by"), "object")
                         ? "No per-line counts: not with --by object or --sample-rate"
                         : "No access has a source line (the program was built without -g?)";
        return;
    }
    h->src_levels = pes_r_count(pes_r_get(pes_r_at(rows, 0), "misses"));
    if (h->src_levels > 4)
        h->src_levels = 4;
    /* the rows by file, then line: each file a run, each line's rows together */
    const struct pes_rnode **by = malloc(n * sizeof *by);
    if (!by)
        return;
    for (size_t i = 0; i < n; i++)
        by[i] = pes_r_at(rows, i);
    qsort(by, n, sizeof *by, by_file_line);
    size_t start[HTML_SRC_FILES], end[HTML_SRC_FILES];
    for (size_t i = 0, j; i < n;
         i = j) { /* the files with the most accesses, by name among equals */
        const char *file = pes_r_get_s(by[i], "file");
        uint64_t acc = 0;
        for (j = i; j < n && !strcmp(pes_r_get_s(by[j], "file"), file); j++)
            acc += pes_r_get_u(by[j], "accesses");
        int at = h->nsrc;
        while (at > 0 && h->src[at - 1].accesses < acc)
            at--;
        if (at >= HTML_SRC_FILES)
            continue;
        if (h->nsrc < HTML_SRC_FILES)
            h->nsrc++;
        memmove(&h->src[at + 1], &h->src[at], sizeof *h->src * (size_t)(h->nsrc - 1 - at));
        memmove(&start[at + 1], &start[at], sizeof *start * (size_t)(h->nsrc - 1 - at));
        memmove(&end[at + 1], &end[at], sizeof *end * (size_t)(h->nsrc - 1 - at));
        h->src[at] = (struct src_file){.path = file, .accesses = acc};
        start[at] = i, end[at] = j;
    }
    for (int f = 0; f < h->nsrc; f++) {
        struct src_file *sf = &h->src[f];
        if (!(sf->lines = calloc(end[f] - start[f], sizeof *sf->lines)))
            continue;
        for (size_t i = start[f]; i < end[f];
             i++) { /* rows of one line (inlined into two functions) add up */
            const struct pes_rnode *row = by[i];
            uint64_t line = pes_r_get_u(row, "line");
            if (!sf->n || sf->lines[sf->n - 1].line != line)
                sf->lines[sf->n++].line = line;
            struct src_line *l = &sf->lines[sf->n - 1];
            l->accesses += pes_r_get_u(row, "accesses");
            for (size_t v = 0; v < h->src_levels; v++)
                l->misses[v] += pes_r_u(pes_r_at(pes_r_get(row, "misses"), v));
            l->inval[0] += pes_r_get_u(pes_r_get(row, "invalidations"), "true");
            l->inval[1] += pes_r_get_u(pes_r_get(row, "invalidations"), "false");
            l->coh[0] += pes_r_get_u(pes_r_get(row, "coherence_misses"), "true");
            l->coh[1] += pes_r_get_u(pes_r_get(row, "coherence_misses"), "false");
        }
        struct src_line **hot = malloc((sf->n ? sf->n : 1) * sizeof *hot);
        if (!hot)
            continue;
        for (size_t k = 0; k < sf->n; k++)
            hot[k] = &sf->lines[k];
        qsort(hot, sf->n, sizeof *hot, by_accesses_then_line);
        for (size_t k = 0; k < sf->n && k < HTML_SRC_HOT; k++)
            hot[k]->hot = 1;
        free(hot);
        if (sf->n && sf->lines[0].line == 0) /* the unidentified lines' row is always listed */
            sf->lines[0].shown = 1;
        /* counted lines within HTML_SRC_CONTEXT of a hot one are shown: a
         * pass each way carries the distance to the nearest hot line */
        uint64_t last = 0;
        int seen = 0;
        for (size_t k = 0; k < sf->n; k++) {
            if (sf->lines[k].hot)
                last = sf->lines[k].line, seen = 1;
            if (seen && sf->lines[k].line - last <= HTML_SRC_CONTEXT)
                sf->lines[k].shown = 1;
        }
        seen = 0;
        for (size_t k = sf->n; k-- > 0;) {
            if (sf->lines[k].hot)
                last = sf->lines[k].line, seen = 1;
            if (seen && last - sf->lines[k].line <= HTML_SRC_CONTEXT)
                sf->lines[k].shown = 1;
        }
    }
    free(by);
}

/* Where a table's file:line links to: the line's row in the section, else
 * the file's heading, else the section. */
static void src_href(const struct html *h, FILE *out, const char *file, uint64_t line)
{
    for (int f = 0; f < h->nsrc; f++) {
        if (strcmp(h->src[f].path, file))
            continue;
        for (size_t k = 0; k < h->src[f].n; k++)
            if (h->src[f].lines[k].line == line && h->src[f].lines[k].shown) {
                fprintf(out, "#src-%d-L%llu", f, (unsigned long long)line);
                return;
            }
        fprintf(out, "#src-%d", f);
        return;
    }
    fputs("#src", out);
}

static void src_count(FILE *out, uint64_t v)
{
    if (v)
        fprintf(out, "<td class=\"n\">%llu</td>", (unsigned long long)v);
    else
        fputs("<td class=\"n\">.</td>", out);
}

/* One row: the line's number and counts (blank for context), then its text. */
static void src_row(const struct html *h, int f, uint64_t lineno, const struct src_line *l,
                    const char *text)
{
    FILE *out = h->out;
    if (l)
        fprintf(out, "<tr id=\"src-%d-L%llu\" class=\"hot\" data-line=\"%llu\">", f,
                (unsigned long long)lineno, (unsigned long long)lineno);
    else
        fprintf(out, "<tr data-line=\"%llu\">", (unsigned long long)lineno);
    if (lineno)
        fprintf(out, "<td class=\"n\">%llu</td>", (unsigned long long)lineno);
    else
        fputs("<td class=\"n\">?</td>", out);
    int cols = 1 + (h->src_sim ? (int)h->src_levels + 4 : 0);
    if (!l)
        fprintf(out, "<td colspan=\"%d\"></td>", cols);
    else {
        src_count(out, l->accesses);
        for (size_t v = 0; h->src_sim && v < h->src_levels; v++)
            src_count(out, l->misses[v]);
        if (h->src_sim) {
            src_count(out, l->inval[0]);
            src_count(out, l->inval[1]);
            src_count(out, l->coh[0]);
            src_count(out, l->coh[1]);
        }
    }
    fputs("<td class=\"code\">", out);
    esc(out, text);
    fputs("</td></tr>\n", out);
}

/* A source line as page text: valid UTF-8 (pes_report_utf8), no character
 * HTML forbids in text (C0 but tab, DEL, C1, the noncharacters U+FDD0..FDEF,
 * U+FFFE, U+FFFF: each becomes '?'), at most HTML_SRC_BYTES bytes ("..."
 * then, cut between characters). Returns a malloc'd string or NULL. */
static char *src_text(const char *raw)
{
    char *t = pes_report_utf8(raw), *o = malloc(HTML_SRC_BYTES + 4);
    if (!t || !o) {
        free(t);
        free(o);
        return NULL;
    }
    size_t n = 0;
    const unsigned char *u = (const unsigned char *)t;
    for (size_t i = 0; u[i];) { /* t is valid UTF-8: a lead byte gives the length */
        size_t len = u[i] < 0x80 ? 1 : u[i] < 0xE0 ? 2 : u[i] < 0xF0 ? 3 : 4;
        int bad = (u[i] < 0x20 && u[i] != '\t') || u[i] == 0x7f ||
                  (u[i] == 0xC2 && u[i + 1] <= 0x9F) ||
                  (u[i] == 0xEF && u[i + 1] == 0xB7 && u[i + 2] >= 0x90 && u[i + 2] <= 0xAF) ||
                  (u[i] == 0xEF && u[i + 1] == 0xBF && u[i + 2] >= 0xBE);
        if (n + (bad ? 1 : len) > HTML_SRC_BYTES) {
            memcpy(o + n, "...", 3);
            n += 3;
            break;
        }
        if (bad)
            o[n++] = '?';
        else
            memcpy(o + n, t + i, len), n += len;
        i += len;
    }
    o[n] = '\0';
    free(t);
    return o;
}

/* The section: per file its heading and a table of the shown lines. */
static void src_section(struct html *h, const json_t *j)
{
    FILE *out = h->out;
    fputs("<h2 id=\"src\">Annotated source</h2>\n", out);
    if (h->src_why || h->nsrc == 0) {
        fputs("<p>", out);
        esc(out, h->src_why ? h->src_why : "No source line to show");
        fputs(".</p>\n", out);
        return;
    }
    const json_t *c0 = json_array_get(json_object_get(j, "configs"), 0);
    fprintf(out,
            "<p>Per source line, the counts of the first configuration (%lld %s) summed over the "
            "line's sites: "
            "line accesses%s. The %d files with the most accesses; in each, its %d lines with the "
            "most accesses "
            "and %d lines of context either side (<code>pes-replay --annotate FILE</code> lists a "
            "whole file). "
            "&#8220;.&#8221;: none.</p>\n",
            (long long)json_integer_value(json_object_get(c0, "cores")),
            json_is_true(json_object_get(c0, "mimicked"))
                ? (json_integer_value(json_object_get(c0, "cores")) == 1 ? "mimicked core"
                                                                         : "mimicked cores")
            : json_integer_value(json_object_get(c0, "cores")) == 1 ? "thread"
                                                                    : "threads",
            h->src_sim ? "; the misses at each level (Ln: accesses that missed Ln); the "
                         "invalidations the line's stores "
                         "caused in other cores and the coherence misses of its accesses, true (T) "
                         "and false (F) sharing"
                       : "",
            HTML_SRC_FILES, HTML_SRC_HOT, HTML_SRC_CONTEXT);
    for (int f = 0; f < h->nsrc; f++) {
        const struct src_file *sf = &h->src[f];
        fprintf(out, "<h3 id=\"src-%d\">", f);
        esc(out, *sf->path ? sf->path : "No source file (accesses without a debug location)");
        fprintf(out, " <small>(%llu line accesses)</small></h3>\n",
                (unsigned long long)sf->accesses);
        FILE *src = *sf->path ? report_open_source(sf->path) : NULL;
        if (!src && *sf->path) {
            fputs("<p class=\"warn\">The source file cannot be read here (", out);
            esc(out, strerror(errno));
            fputs("): the counts of its lines follow without their text.</p>\n", out);
        }
        fputs("<div class=\"tw\"><table class=\"src\"><thead><tr><th>line</th><th>accesses</th>",
              out);
        for (size_t v = 0; h->src_sim && v < h->src_levels; v++)
            fprintf(out, "<th>L%zu misses</th>", v + 1);
        if (h->src_sim)
            fputs("<th>inval T</th><th>inval F</th><th>coh T</th><th>coh F</th>", out);
        fputs("<th>source</th></tr></thead><tbody>\n", out);
        int cols = 3 + (h->src_sim ? (int)h->src_levels + 4 : 0);
        uint64_t lineno = 0, last = 0, end = 0, prev = 0;
        size_t kc = 0, kh = 0; /* the next counted line, the next hot line */
        int behind = 0;        /* prev is a hot line already passed */
        for (size_t i = 0; i < sf->n; i++)
            if (sf->lines[i].hot && sf->lines[i].line + HTML_SRC_CONTEXT > end)
                end = sf->lines[i].line + HTML_SRC_CONTEXT;
        if (sf->n && sf->lines[0].line == 0) {
            /* sites without a line (clang gives a store it merges from two
             * branches line 0): their counts first, as the text report and
             * cg_annotate list them */
            char label[300];
            if (*sf->path)
                snprintf(label, sizeof label, "<counts for unidentified lines of %s>",
                         base_name(sf->path));
            else
                snprintf(label, sizeof label, "<counts for accesses without a source location>");
            src_row(h, f, 0, &sf->lines[0], label); /* shown: tables' file:0 links land here */
        }
        char *raw = NULL;
        size_t cap = 0;
        while (src && lineno < end && getline(&raw, &cap, src) >= 0) {
            lineno++;
            size_t len = strlen(raw);
            if (len && raw[len - 1] == '\n')
                raw[--len] = '\0';
            while (kc < sf->n && sf->lines[kc].line < lineno)
                kc++;
            while (kh < sf->n && (sf->lines[kh].line < lineno || !sf->lines[kh].hot)) {
                if (sf->lines[kh].hot)
                    prev = sf->lines[kh].line, behind = 1;
                kh++;
            }
            int near = (kh < sf->n && sf->lines[kh].line - lineno <= HTML_SRC_CONTEXT) ||
                       (behind && lineno - prev <= HTML_SRC_CONTEXT);
            if (!near)
                continue;
            if (last + 1 != lineno)
                fprintf(out, "<tr class=\"gap\"><td colspan=\"%d\">&#8942; line %llu</td></tr>\n",
                        cols, (unsigned long long)lineno);
            char *text = src_text(raw);
            src_row(h, f, lineno,
                    kc < sf->n && sf->lines[kc].line == lineno ? &sf->lines[kc] : NULL,
                    text ? text : "");
            free(text);
            last = lineno;
        }
        free(raw);
        if (src)
            fclose(src);
        for (size_t i = 0; i < sf->n; i++) /* shown lines the file does not have (or no file) */
            if (sf->lines[i].shown && sf->lines[i].line > lineno && sf->lines[i].line > 0)
                src_row(h, f, sf->lines[i].line, &sf->lines[i],
                        src ? "(past the end of the file: it changed since the run?)" : "");
        fputs("</tbody></table></div>\n", out);
    }
}

/* Table columns of a row: its scalars and its objects' scalars one level down
 * ("invalidations.true"). */
static int is_column(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

/* Where site `id` is in the source, from the report's rows that say it
 * (the simulated sites, the groups and their sites); 0 if none does. */
static int site_label(const struct html *h, json_int_t id, char *buf, size_t n)
{
    size_t i, k;
    const json_t *c, *row, *x;
    json_array_foreach(json_object_get(h->root, "configs"), i, c)
    {
        json_array_foreach(json_object_get(json_object_get(c, "simulation"), "sites"), k, row)
        {
            if (json_integer_value(json_object_get(row, "site")) == id &&
                json_is_string(json_object_get(row, "file"))) {
                snprintf(buf, n, "%s:%lld %s", json_string_value(json_object_get(row, "file")),
                         (long long)json_integer_value(json_object_get(row, "line")),
                         json_string_value(json_object_get(row, "function"))
                             ? json_string_value(json_object_get(row, "function"))
                             : "");
                return 1;
            }
        }
        json_array_foreach(json_object_get(c, "groups"), k, row)
        {
            size_t m;
            const json_t *file = json_object_get(row, "file");
            if (!json_is_string(file))
                continue;
            json_array_foreach(json_object_get(row, "sites"), m, x) if (json_integer_value(x) == id)
            {
                const json_t *fn = json_object_get(row, "function");
                snprintf(buf, n, "%s:%lld %s", json_string_value(file),
                         (long long)json_integer_value(json_object_get(row, "line")),
                         json_is_string(fn) ? json_string_value(fn) : "");
                return 1;
            }
        }
    }
    return 0;
}

static void table(struct html *h, const char *title, const json_t *rows)
{
    FILE *out = h->out;
    const json_t *first = json_array_get(rows, 0);
    if (!json_is_object(first))
        return;
    size_t n = json_array_size(rows);
    fprintf(out, "<h3>");
    esc(out, title);
    fprintf(out, " <small>(%zu rows", n);
    if (n > HTML_TOP_ROWS)
        fprintf(out, ", the first %d listed", HTML_TOP_ROWS);
    fprintf(out,
            "; click a column to sort)</small></h3>\n<div class=\"tw\"><table class=\"sortable\" "
            "id=\"t%d\" data-rows=\"%zu\"><thead><tr>",
            h->tables++, n);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)first, k, v)
    {
        if (is_column(v)) {
            fputs("<th>", out);
            esc(out, k);
            fputs("</th>", out);
        } else if (!strcmp(k, "callpaths") && json_is_array(v)) {
            fputs("<th>call paths</th>", out);
        } else if (json_is_object(v)) {
            const char *k2;
            const json_t *v2;
            json_object_foreach((json_t *)v, k2, v2) if (is_column(v2))
            {
                fputs("<th>", out);
                esc(out, k);
                fputc('.', out);
                esc(out, k2);
                fputs("</th>", out);
            }
        }
    }
    fputs("</tr></thead><tbody>\n", out);
    for (size_t i = 0; i < n && i < HTML_TOP_ROWS; i++) {
        const json_t *r = json_array_get(rows, i);
        fputs("<tr>", out);
        json_object_foreach((json_t *)first, k, v)
        {
            const json_t *x = json_object_get(r, k);
            if (is_column(v)) {
                /* a bare site id: where the site is, then the id */
                char where[600];
                int labelled = !strcmp(k, "site") && json_is_integer(x) &&
                               !json_object_get(r, "file") && !json_object_get(r, "label") &&
                               site_label(h, json_integer_value(x), where, sizeof where);
                if (json_is_string(x) && strlen(json_string_value(x)) > HTML_LONG_CELL) {
                    /* a long name (C++): cut to the column by CSS, whole in its title */
                    fputs("<td class=\"long\" title=\"", out);
                    esc(out, json_string_value(x));
                    fputs("\">", out);
                } else
                    fputs(json_is_number(x) && !labelled ? "<td class=\"n\">" : "<td>", out);
                if (labelled) {
                    esc(out, where);
                    fprintf(out, " <small>(site %lld)</small>", (long long)json_integer_value(x));
                } else if (!strcmp(k, "file") && json_is_string(x)) {
                    fputs("<a href=\"", out);
                    src_href(h, out, json_string_value(x),
                             (uint64_t)json_integer_value(json_object_get(r, "line")));
                    fputs("\">", out);
                    scalar(out, x);
                    fputs("</a>", out);
                } else
                    scalar(out, x);
                fputs("</td>", out);
            } else if (!strcmp(k, "callpaths") && json_is_array(v)) {
                /* a row's top call paths (docs/replay.md, "Call paths"), one a line */
                size_t m;
                const json_t *p;
                fputs("<td class=\"paths\">", out);
                json_array_foreach(x, m, p)
                {
                    fprintf(out, "%s%.1f%% ", m ? "<br>" : "",
                            100.0 * json_number_value(json_object_get(p, "share")));
                    const char *path = json_string_value(json_object_get(p, "path"));
                    esc(out, path ? path : "");
                }
                fputs("</td>", out);
            } else if (json_is_object(v)) {
                const char *k2;
                const json_t *v2;
                json_object_foreach((json_t *)v, k2, v2) if (is_column(v2))
                {
                    const json_t *y = json_object_get(x, k2);
                    fputs(json_is_number(y) ? "<td class=\"n\">" : "<td>", out);
                    scalar(out, y);
                    fputs("</td>", out);
                }
            }
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
}

/* --diff: a table of rows (diff.h, pes_diff_row_table) as the text diff
 * lists it: each row that differs, where it went in B when it was matched
 * across an edit, and its largest changes, A, B, delta and relative. */
static void diff_rows(struct html *h, const json_t *t)
{
    FILE *out = h->out;
    const json_t *rows = json_object_get(t, "rows");
    fputs("<h3>", out);
    esc(out, json_string_value(json_object_get(t, "table")));
    fprintf(
        out,
        " <small>(%lld changed, %lld only in A, %lld only in B)</small></h3>\n<div "
        "class=\"tw\"><table class=\"sortable\" id=\"t%d\"><thead><tr><th>row (A)</th><th>in "
        "B</th><th>status</th><th>column</th><th>A</th><th>B</th><th>delta</th><th>relative</th>"
        "</tr></thead><tbody>\n",
        (long long)json_integer_value(json_object_get(t, "changed")),
        (long long)json_integer_value(json_object_get(t, "only_a")),
        (long long)json_integer_value(json_object_get(t, "only_b")), h->tables++);
    size_t i, shown = 0;
    const json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *status = json_string_value(json_object_get(r, "status"));
        if (!status || !strcmp(status, "same") || shown == HTML_TOP_ROWS)
            continue;
        shown++;
        size_t best[3], n = pes_diff_row_changes(r, best, 3);
        for (size_t k = 0; k < (n ? n : 1); k++) {
            const json_t *v = n ? json_array_get(json_object_get(r, "values"), best[k]) : NULL;
            const char *key_b = json_string_value(json_object_get(r, "key_b"));
            const char *how = json_string_value(json_object_get(r, "matched_by"));
            fputs("<tr><td>", out);
            esc(out, json_string_value(json_object_get(r, "key")));
            fputs("</td><td>", out);
            if (key_b) {
                esc(out, key_b);
                fputs(how && !strcmp(how, "source") ? " (same source text)"
                                                    : " (same place in the function)",
                      out);
            }
            fputs("</td><td>", out);
            esc(out, status);
            fputs("</td><td>", out);
            if (v) {
                esc(out, json_string_value(json_object_get(v, "column")));
                static const char *const f[] = {"a", "b", "delta", "relative"};
                for (int c = 0; c < 4; c++) {
                    fputs("</td><td class=\"n\">", out);
                    scalar(out, json_object_get(v, f[c]));
                }
            } else
                fputs("</td><td></td><td></td><td></td><td>", out);
            fputs("</td></tr>\n", out);
        }
    }
    fputs("</tbody></table></div>\n", out);
}

/* --diff: A and B side by side for the rows of a table of lines or objects
 * (its rank column, or accesses). */
static void diff_bars(struct html *h, const json_t *t)
{
    char name[400];
    human_title(h,
                json_string_value(json_object_get(t, "table"))
                    ? json_string_value(json_object_get(t, "table"))
                    : "",
                name, sizeof name);
    const char *col = json_string_value(json_object_get(t, "rank"));
    if (!col)
        col = "accesses";
    const json_t *rows = json_object_get(t, "rows");
    size_t n = json_array_size(rows);
    if (!n)
        return;
    if (n > 20)
        n = 20;
    double max = 0, *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    if (!a || !b)
        goto done;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        const json_t *c;
        json_array_foreach(json_object_get(json_array_get(rows, i), "values"), j, c)
        {
            const char *cn = json_string_value(json_object_get(c, "column"));
            if (cn && !strcmp(cn, col)) {
                a[i] = num(json_object_get(c, "a"));
                b[i] = num(json_object_get(c, "b"));
            }
        }
        if (a[i] > max)
            max = a[i];
        if (b[i] > max)
            max = b[i];
    }
    if (max <= 0)
        goto done;
    FILE *out = h->out;
    double rh = 18, lw = 300, pw = 300;
    fprintf(out,
            "<figure><svg class=\"chart diff\" role=\"img\" width=\"%g\" height=\"%g\" "
            "data-kind=\"diff\"><title>",
            lw + pw + 20, 40 + rh * 2 * n + 20);
    esc(out, name);
    fputs("</title><text x=\"4\" y=\"16\" class=\"t\">", out);
    esc(out, name);
    fprintf(out, ": %s, A (plain) and B (hatched)</text>\n", col);
    for (size_t i = 0; i < n; i++) {
        double y = 30 + rh * 2 * i;
        fprintf(out, "<text x=\"%g\" y=\"%g\" class=\"yl\">", lw - 4, y + rh);
        esc(out, json_string_value(json_object_get(json_array_get(rows, i), "key")));
        fputs("</text>", out);
        fprintf(out,
                "<rect class=\"bar s0\" x=\"%g\" y=\"%g\" width=\"%.3f\" height=\"%g\" "
                "data-value=\"%.17g\">"
                "<title>A: %.17g</title></rect>"
                "<rect class=\"bar s1\" x=\"%g\" y=\"%g\" width=\"%.3f\" height=\"%g\" "
                "data-value=\"%.17g\">"
                "<title>B: %.17g</title></rect>\n",
                lw, y, a[i] / max * pw, rh - 2, a[i], a[i], lw, y + rh - 2, b[i] / max * pw, rh - 2,
                b[i], b[i]);
    }
    fputs("</svg></figure>\n", out);
done:
    free(a);
    free(b);
}

/* Every histogram, heatmap and table under v, titled by its path. */
/* path: the title's words; ptr: the JSON pointer of v (charts carry it, so
 * that a test finds the data each one draws). */
static void walk(struct html *h, const json_t *v, const char *path, const char *ptr, int depth)
{
    if (depth > 6)
        return;
    char sub[512], sptr[512];
    if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
            snprintf(sptr, sizeof sptr, "%s/%s", ptr, k);
            if (!strcmp(k, "histogram") && json_is_object(x)) {
                /* both halves: exact rows below the exact range's end, log2
                 * rows beyond it (a chart of one half drops the other's) */
                json_t *rows = json_array();
                json_t *ex = json_object_get(x, "exact"), *lg = json_object_get(x, "log2");
                if (rows && json_is_array(ex))
                    json_array_extend(rows, ex);
                if (rows && json_is_array(lg))
                    json_array_extend(rows, lg);
                const char *nm[] = {"accesses"};
                const json_t *rs[] = {rows};
                const char *ss[] = {sptr}; /* the histogram object: exact and log2 */
                char t[600], words[400];
                human_title(h, path, words, sizeof words);
                snprintf(t, sizeof t, "%s: %.0f accesses, %.0f cold", words,
                         num(json_object_get(x, "accesses")), num(json_object_get(x, "cold")));
                if (rows)
                    histogram_chart(h, t, nm, rs, ss, 1, 1, DIST_UNIT);
                json_decref(rows);
            } else if (!strcmp(k, "histograms") &&
                       json_is_object(x)) { /* --compare: sampled_K with full_K */
                const char *k2;
                const json_t *s;
                json_object_foreach((json_t *)x, k2, s) if (!strncmp(k2, "sampled_", 8))
                {
                    char fk[128], t[600], words[400];
                    human_title(h, sub, words, sizeof words);
                    snprintf(fk, sizeof fk, "full_%s", k2 + 8);
                    const char *nm[] = {"sampled", "full"};
                    const json_t *rs[] = {s, json_object_get(x, fk)};
                    char s0[600], s1[600];
                    snprintf(s0, sizeof s0, "%s/%s", sptr, k2);
                    snprintf(s1, sizeof s1, "%s/%s", sptr, fk);
                    const char *ss[] = {s0, s1};
                    char sk[128];
                    snprintf(sk, sizeof sk, "s_%s", k2 + 8);
                    const json_t *sv = json_object_get(h->root, sk);
                    if (json_is_number(sv))
                        snprintf(t, sizeof t, "%s, %s: sampled vs full, S = %.4g", words, k2 + 8,
                                 num(sv));
                    else
                        snprintf(t, sizeof t, "%s, %s: sampled vs full", words, k2 + 8);
                    histogram_chart(h, t, nm, rs, ss, rs[1] ? 2 : 1, 0, DIST_UNIT);
                }
            } else if ((!strcmp(k, "communication") || !strcmp(k, "comm")) && json_is_object(x)) {
                const char *k2;
                const json_t *m;
                json_object_foreach((json_t *)x, k2,
                                    m) if (json_is_array(m) &&
                                           (!strcmp(k2, "true") || !strcmp(k2, "false")))
                {
                    char t[600], words[400]; /* the section's words: "Simulated caches, 2 cores" */
                    human_title(h, *path ? path : sub, words, sizeof words);
                    /* a sampled report's matrices: which --comm-estimator scaled them */
                    const char *est = json_string_value(json_object_get(x, "estimator"));
                    if (est)
                        snprintf(t, sizeof t,
                                 "%s: %s-sharing transfers, thread to thread (estimator %s)", words,
                                 k2, est);
                    else
                        snprintf(t, sizeof t, "%s: %s-sharing transfers, thread to thread", words,
                                 k2);
                    char src[600];
                    snprintf(src, sizeof src, "%s/%s", sptr, k2);
                    heatmap(h, t, m, src);
                }
            } else if (json_is_array(x) && json_array_size(x) && strlen(k) > 9 &&
                       !strcmp(k + strlen(k) - 9,
                               "histogram")) { /* a sampled report's {lo, hi, count} rows */
                const char *nm[] = {"accesses"}, *ss[] = {sptr};
                const json_t *rs[] = {x};
                char t[600];
                human_title(h, sub, t, sizeof t);
                int dist = strstr(k, "time") == NULL;
                histogram_chart(h, t, nm, rs, ss, 1, dist, dist ? DIST_UNIT : TIME_UNIT);
            } else if (json_is_array(x) && json_is_object(json_array_get(x, 0))) {
                const json_t *r0 = json_array_get(x, 0);
                if (json_object_get(r0, "histogram") || json_object_get(r0, "prd") ||
                    json_object_get(r0, "simulation")) {
                    size_t i;
                    const json_t *e;
                    json_array_foreach(x, i, e)
                    {
                        char p[512], q[600];
                        snprintf(q, sizeof q, "%s/%zu", sptr, i);
                        const char *kk = json_object_get(e, "cores")    ? "cores"
                                         : json_object_get(e, "stream") ? "stream"
                                         : json_object_get(e, "group")  ? "group"
                                                                        : NULL;
                        if (kk)
                            snprintf(p, sizeof p, "%s[%s=%lld]", sub, kk,
                                     (long long)json_integer_value(json_object_get(e, kk)));
                        else
                            snprintf(p, sizeof p, "%s[%zu]", sub, i);
                        walk(h, e, p, q, depth + 1);
                    }
                } else if (!strcmp(k, "tables")) { /* --diff */
                    size_t i;
                    const json_t *t;
                    json_array_foreach(x, i, t)
                    {
                        /* by the table's path without indices: rows of sites, lines (groups), objects
                         * and cache lines, not their nested tables (a cache line's offsets) */
                        const char *tn = json_string_value(json_object_get(t, "name"));
                        const char *last = tn ? strrchr(tn, '.') : NULL;
                        last = last ? last + 1 : tn;
                        if (last && (!strcmp(last, "groups") || !strcmp(last, "objects") ||
                                     !strcmp(last, "cache_lines") || !strcmp(last, "sites")))
                            diff_bars(h, t);
                        if (pes_diff_row_table(t) &&
                            (json_integer_value(json_object_get(t, "changed")) ||
                             json_integer_value(json_object_get(t, "only_a")) ||
                             json_integer_value(json_object_get(t, "only_b"))))
                            diff_rows(h, t);
                    }
                } else if (!strcmp(k, "headline")) { /* --diff: the changes it leads with */
                    table(h, "Largest changes (B - A)", x);
                } else if (strcmp(k, "levels") != 0 && strcmp(k, "findings") != 0) {
                    char words[400]; /* findings: their own section, first */
                    human_title(h, sub, words, sizeof words);
                    table(h, words, x);
                }
            } else if (json_is_object(x) && strcmp(k, "trace") && strcmp(k, "machine"))
                walk(h, x, sub, sptr, depth + 1);
        }
    }
}

static const char *CSS =
    "body{font-family:sans-serif;margin:1em 2em;color:#111;max-width:1100px}"
    ".card{border:1px solid #444;padding:.5em 1em;border-radius:4px;background:#f6f6f6}"
    ".card dt{font-weight:bold;float:left;clear:left;width:9em}.card dd{margin-left:10em}"
    ".warn{font-weight:bold}"
    "svg text{font-size:11px}svg .t{font-size:13px;font-weight:bold}svg .u{font-style:italic}"
    "svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .bl{text-anchor:middle;font-size:9px}"
    "svg .ax{stroke:#000}svg .ci{stroke:#000;fill:none}svg .mark{stroke:#000;stroke-dasharray:4 "
    "3}svg .ml{font-size:10px}"
    "svg .s0{fill:#4a6fa5;stroke:#000;stroke-width:.5}svg "
    ".s1{fill:url(#hatch);stroke:#000;stroke-width:.5}"
    "svg .p0{fill:#4a6fa5}svg .p1{fill:url(#hatch);stroke:#000;stroke-width:.5}svg "
    ".p2{fill:#9bbf6a}"
    "svg .p3{fill:url(#dots);stroke:#000;stroke-width:.5}svg .p4{fill:#d08c3a}"
    "svg .p5{fill:url(#cross);stroke:#000;stroke-width:.5}"
    "svg.cores .bar{stroke:#000;stroke-width:.5}svg .zero{stroke:#000;stroke-width:2}"
    ".findings{border:2px solid #000;padding:.5em 1em;border-radius:4px;background:#fffbe6;"
    "margin-bottom:1em}"
    ".findings li{margin:.4em 0}.findings .fix{margin:.2em 0}.findings dl{font-size:12px}"
    ".findings dt{font-weight:bold;float:left;clear:left;width:14em}.findings dd{margin-left:15em}"
    "svg .curve{fill:none;stroke:#000;stroke-width:1.5}svg .c1{stroke-dasharray:6 3}svg "
    ".c2{stroke-dasharray:2 2}svg .c3{stroke-dasharray:8 2 2 2}svg.heat "
    "rect{stroke:#888;stroke-width:.3}svg .cv{text-anchor:middle;font-size:9px}svg "
    ".cv.inv{fill:#fff}"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #bbb;padding:2px 5px}"
    "th{cursor:pointer;background:#eee}td.n{text-align:right}.tw{overflow-x:auto;max-height:30em}"
    "figure{margin:.5em 0}"
    "table.src td.code{white-space:pre;font-family:monospace;text-align:left}table.src tr.hot "
    "td{background:#fff3c4}"
    "table.src tr.gap td{color:#555;border:none}table.src tr:target td{outline:2px solid #000}"
    "td.long{max-width:48em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}";

/* Sortable tables: a click on a header sorts its column, again reverses. */
static const char *JS =
    "document.querySelectorAll('table.sortable "
    "th').forEach(function(th,i){th.addEventListener('click',function(){"
    "var "
    "tb=th.closest('table').tBodies[0],rows=Array.prototype.slice.call(tb.rows),d=th.dataset.dir==="
    "'a'?-1:1;"
    "th.dataset.dir=d>0?'a':'d';rows.sort(function(a,b){var "
    "x=a.cells[i].textContent,y=b.cells[i].textContent,"
    "p=parseFloat(x),q=parseFloat(y);return d*(isNaN(p)||isNaN(q)?x.localeCompare(y):p-q);});"
    "rows.forEach(function(r){tb.appendChild(r);});});});";

static void item(FILE *out, const char *dt, const json_t *v)
{
    if (!v || json_is_null(v))
        return;
    fprintf(out, "<dt>%s</dt><dd>", dt);
    if (json_is_integer(v) && json_integer_value(v) >= 0) { /* a count, as the text prints it */
        char b[32];
        report_count(b, sizeof b, (uint64_t)json_integer_value(v));
        fputs(b, out);
    } else
        scalar(out, v);
    fputs("</dd>\n", out);
}

/* The scalars of a sampled or --compare report (its estimates, S, coverage,
 * false positives), and of its objects one level down. */
static void scalars(struct html *h, const json_t *j)
{
    FILE *out = h->out;
    fputs("<h2 id=\"figures\">Figures</h2>\n<table class=\"sortable\" "
          "id=\"figs\"><thead><tr><th>figure</th><th>value</th>"
          "</tr></thead><tbody>\n",
          out);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)j, k, v)
    {
        if (is_column(v) || is_interval(k, v)) {
            fputs("<tr><td>", out);
            esc(out, k);
            fputs(json_is_number(v) ? "</td><td class=\"n\">" : "</td><td>", out);
            if (is_interval(k, v))
                interval(out, v);
            else
                scalar(out, v);
            fputs("</td></tr>\n", out);
        } else if (json_is_object(v) && strcmp(k, "histograms") != 0) {
            const char *k2;
            const json_t *v2;
            json_object_foreach((json_t *)v, k2, v2) if (is_column(v2) || is_interval(k2, v2))
            {
                fputs("<tr><td>", out);
                esc(out, k);
                fputc('.', out);
                esc(out, k2);
                fputs(json_is_number(v2) ? "</td><td class=\"n\">" : "</td><td>", out);
                if (is_interval(k2, v2))
                    interval(out, v2);
                else
                    scalar(out, v2);
                fputs("</td></tr>\n", out);
            }
        }
    }
    fputs("</tbody></table>\n", out);
}

/* The findings (findings.h) first: what to fix, in the JSON's words and
 * order, each with its evidence. Nothing for a report without them (--diff,
 * --compare). */
static void findings_section(struct html *h, const json_t *j)
{
    FILE *out = h->out;
    const json_t *f = json_object_get(j, "findings");
    if (!json_is_array(f))
        return;
    fputs("<section class=\"findings\" id=\"findings\"><h2>Findings</h2>\n", out);
    if (!json_array_size(f)) {
        fputs("<p class=\"none\">", out);
        esc(out, pes_findings_none());
        fputs("</p></section>\n", out);
        return;
    }
    fputs("<p>Ranked by the share of the accesses each problem costs (docs/report.md, "
          "&#8220;Findings&#8221;).</p>\n<ol>\n",
          out);
    size_t i;
    const json_t *o;
    json_array_foreach(f, i, o)
    {
        fprintf(out, "<li data-rule=\"");
        esc(out, json_string_value(json_object_get(o, "rule")));
        fputs("\"><p class=\"finding\">", out);
        esc(out, json_string_value(json_object_get(o, "text")));
        fputs("</p><p class=\"fix\"><b>Fix:</b> ", out);
        esc(out, json_string_value(json_object_get(o, "fix")));
        fputs("</p><details><summary>Evidence</summary><dl>", out);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(o, "evidence"), k, v)
        {
            fputs("<dt>", out);
            esc(out, k);
            fputs("</dt><dd>", out);
            scalar(out, v);
            fputs("</dd>", out);
        }
        fputs("</dl></details></li>\n", out);
    }
    fputs("</ol></section>\n", out);
}

/* The summary card: what was run on what, and its warnings in words. */
static void summary(struct html *h, const json_t *j)
{
    FILE *out = h->out;
    const json_t *t = json_object_get(j, "trace"), *d = json_object_get(j, "pes_diff_json");
    if (!json_is_object(t))
        t = NULL; /* a sampled report names its trace by a string */
    const char *what =
        d ? "--diff: two runs compared"
        : json_object_get(j, "full")
            ? "--compare: a sampled trace against the full trace of the same execution"
        : json_object_get(j, "configs")
            ? "full trace: reuse distances, model (and simulation if asked)"
            : "sampled trace: sampled analyses";
    fputs("<section class=\"card\" id=\"summary\"><h2>Summary</h2><dl>\n", out);
    fprintf(out, "<dt>report</dt><dd>%s</dd>\n", what);
    if (d) {
        item(out, "A", json_object_get(json_object_get(j, "a"), "path"));
        item(out, "B", json_object_get(json_object_get(j, "b"), "path"));
        item(out, "kind", json_object_get(json_object_get(j, "a"), "kind"));
        double rows = 0, tables = num(json_object_get(j, "truncated_tables"));
        size_t i;
        const json_t *t;
        json_array_foreach(json_object_get(j, "tables"), i, t) rows +=
            num(json_object_get(t, "truncated_rows"));
        if (rows > 0 || tables > 0)
            fprintf(
                out,
                "<dt>embedded JSON</dt><dd>cut to the first %d rows of each table and %d tables of "
                "each "
                "name: %.0f rows and %.0f tables left out (<code>truncated_rows</code>, "
                "<code>truncated_tables</code>); <code>--format json</code> writes them all</dd>\n",
                PES_HTML_TOP_ROWS, PES_HTML_DIFF_TABLES, rows, tables);
    } else if (t) {
        item(out, "trace", json_object_get(t, "path"));
        item(out, "program", json_object_get(t, "command"));
        item(out, "kind", json_object_get(t, "kind"));
        item(out, "threads", json_object_get(t, "threads"));
        item(out, "accesses", json_object_get(t, "accesses"));
    } else {
        item(out, "sampled trace", json_object_get(j, "sampled"));
        item(out, "trace", json_object_get(j, "trace"));
        item(out, "full trace", json_object_get(j, "full"));
        item(out, "mode", json_object_get(j, "mode"));
        item(out, "threads", json_object_get(j, "threads"));
        item(out, "accesses", json_object_get(j, "accesses"));
        item(out, "samples", json_object_get(j, "samples"));
    }
    const json_t *m = json_object_get(j, "machine");
    if (m) {
        fputs("<dt>machine</dt><dd>", out);
        scalar(out, json_object_get(m, "name"));
        size_t i;
        const json_t *l;
        json_array_foreach(json_object_get(m, "levels"), i, l)
            fprintf(out, "; L%lld %g KiB %lld-way%s",
                    (long long)json_integer_value(json_object_get(l, "level")),
                    num(json_object_get(l, "size")) / 1024,
                    (long long)json_integer_value(json_object_get(l, "ways")),
                    json_is_true(json_object_get(l, "shared")) ? " shared" : "");
        fputs("</dd>\n", out);
    }
    const json_t *src = t ? t : j;
    int warned = 0;
    fputs("<dt>warnings</dt><dd>", out);
    if (json_is_true(json_object_get(src, "truncated")) ||
        json_is_true(json_object_get(src, "sampled_truncated")) ||
        json_is_true(json_object_get(src, "full_truncated")))
        warned = 1,
        fputs(
            "<p class=\"warn\">&#9888; The trace is truncated: the program ended (or the collector "
            "stopped) before the trace was complete; the counts cover only what was recorded.</p>",
            out);
    if (num(json_object_get(src, "skipped_blocks")) > 0)
        warned = 1,
        fprintf(out, "<p class=\"warn\">&#9888; %.0f damaged blocks of the trace were skipped.</p>",
                num(json_object_get(src, "skipped_blocks")));
    if (num(json_object_get(src, "clipped_ranges")) > 0)
        warned = 1, fprintf(out, "<p class=\"warn\">&#9888; %.0f address ranges were clipped.</p>",
                            num(json_object_get(src, "clipped_ranges")));
    const json_t *lost = json_object_get(src, "lost");
    if (json_is_number(lost) && num(lost) > 0)
        warned = 1,
        fprintf(out,
                "<p class=\"warn\">&#9888; %.0f samples were lost (the collector's buffers were "
                "full); the sampled estimates undercount.</p>",
                num(lost));
    if (!warned)
        fputs("none: the trace is complete, no sample was lost", out);
    fputs("</dd></dl></section>\n", out);
}

int pes_report_write_html(FILE *out, const json_t *j, const struct pes_report *r)
{
    struct html h = {.out = out, .root = j};
    const json_t *m = json_object_get(j, "machine");
    h.levels = json_object_get(m, "levels");
    h.line = (long)json_integer_value(json_object_get(j, "line"));
    char title[512];
    const json_t *t = json_object_get(j, "trace");
    snprintf(title, sizeof title, "pes report: %s",
             json_is_string(t)               ? json_string_value(t)
             : t                             ? json_string_value(json_object_get(t, "path"))
             : json_object_get(j, "sampled") ? json_string_value(json_object_get(j, "sampled"))
             : json_object_get(j, "a")       ? "diff"
                                             : "report");
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", out);
    esc(out, title);
    fprintf(out, "</title>\n<style>%s</style></head><body>\n<h1>", CSS);
    esc(out, title);
    fputs("</h1>\n", out);
    /* the patterns that tell series apart without colour */
    fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
          "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\">"
          "<rect width=\"6\" height=\"6\" fill=\"#fff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" "
          "stroke=\"#c0392b\" stroke-width=\"3\"/></pattern>"
          "<pattern id=\"dots\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\"><rect "
          "width=\"5\" height=\"5\" fill=\"#fff\"/>"
          "<circle cx=\"2.5\" cy=\"2.5\" r=\"1.5\" fill=\"#333\"/></pattern>"
          "<pattern id=\"cross\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"><rect "
          "width=\"6\" height=\"6\" fill=\"#fff\"/>"
          "<path d=\"M0 0L6 6M6 0L0 6\" stroke=\"#333\"/></pattern></defs></svg>\n",
          out);
    struct html *hp = &h;
    src_collect(hp, r);
    findings_section(hp, j);
    summary(hp, j);
    model_charts(hp, json_object_get(j, "configs"));
    mrc_by_cores(hp, json_object_get(j, "configs"));
    if (!json_object_get(j, "configs") && !json_object_get(j, "pes_diff_json"))
        scalars(hp, j);
    fputs("<h2 id=\"details\">Reuse distances, sharing and tables</h2>\n<p>Reuse-distance "
          "histograms: PRD per "
          "stream, CRD per shared cache; dashed lines mark each cache level's size in lines. "
          "Heatmaps: cache-line "
          "transfers from thread to thread (darker: more; each cell's value is written in it or in "
          "its tooltip).</p>\n",
          out);
    walk(hp, j, "", "", 0);
    src_section(hp, j);
    src_free(hp);
    fputs("<script type=\"application/json\" id=\"pes-data\">", out);
    /* JSON_ESCAPE_SLASH: no "</script>" can appear inside */
    if (json_dumpf(j, out, PES_REPORT_JSON_FLAGS | JSON_ESCAPE_SLASH) < 0)
        return -1;
    fprintf(out, "</script>\n<script>%s</script>\n</body></html>\n", JS);
    return ferror(out) ? -1 : 0;
}

int pes_report_write_html_file(const char *path, const json_t *j, const struct pes_report *r,
                               char *msg, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, n, "--html %s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    int rc = pes_report_write_html(f, j, r);
    if (fclose(f) != 0)
        rc = -1;
    if (rc < 0)
        snprintf(msg, n, "--html %s: write failed: %s", path, strerror(errno));
    return rc;
}
