/*
 * writers.h — pes-replay's report writers: they format the report tree
 * (report.h) and compute nothing but display ratios.
 */
#ifndef PES_REPLAY_WRITERS_H
#define PES_REPLAY_WRITERS_H

#include <stdio.h>

#include "pes/trace.h"
#include "report.h"

#define REPLAY_JSON_VERSION 1

/* A report and what formatting it needs besides: site labels, and how many
 * rows of the reuse site table the text report lists (--top). */
struct pes_report_view {
    const struct pes_report *r;
    const struct pes_site *(*site)(const void *ctx, uint32_t id);
    const void *site_ctx;
    uint32_t top;
    const char *annotate; /* --annotate FILE or "all" (NULL: none) */
};

/* A sampled trace's report, or --compare's (analyses/sampled_*.c and
 * accuracy.c: their layout has no configurations, docs/accuracy.md). */
int pes_report_is_sampled(const struct pes_report *r);
int pes_report_is_compare(const struct pes_report *r);

/* Each returns 0, or -1 if the report is incomplete or a write failed. */
int pes_report_write_text(FILE *out, const struct pes_report_view *v);
/* The text of a sampled or --compare report (text_sampled.c; pes_report_write_text calls it). */
int pes_report_write_sampled_text(FILE *out, const struct pes_report *r);
/* The cache-line table of a report section (its "cache_lines"), titled by
 * what ranks the lines (text.c; the sampled text report prints it too). */
void report_print_cache_lines(FILE *out, const struct pes_rnode *parent, const char *what);
/* The report's findings (findings.h), ranked, each with its fix, or the
 * sentence that none passed the thresholds; nothing if it has none (--compare). */
void report_print_findings(FILE *out, const struct pes_rnode *root);
/* One row per configuration and cache level: model and simulation. */
int pes_report_write_csv(FILE *out, const struct pes_report_view *v);
/* --comm-csv: the communication matrix of the last simulated configuration. */
int pes_report_write_comm_csv(FILE *out, const struct pes_report_view *v);
/* --sites-csv: every simulated site of every configuration. */
int pes_report_write_sites_csv(FILE *out, const struct pes_report_view *v);

/* The page's bounds (docs/report.md): rows listed per table; for --diff,
 * the embedded JSON's rows per table and tables per name (pes_diff_cut). */
#define PES_HTML_TOP_ROWS    50
#define PES_HTML_DIFF_TABLES 20

/* --html FILE: one self-contained page (inline SVG charts, tables, the JSON
 * tree embedded as <script type="application/json" id="pes-data">) of any
 * report's JSON tree: full, sampled, --compare or --diff (html.c). r is the
 * report j was made from, for what only the text reports see (the per-line
 * rows of --annotate, for the annotated-source section); NULL for a --diff. */
int pes_report_write_html(FILE *out, const json_t *j, const struct pes_report *r);
/* The same into PATH; -1 with MSG naming the file if it fails. */
int pes_report_write_html_file(const char *path, const json_t *j, const struct pes_report *r,
                               char *msg, size_t n);

#endif
