/*
 * diff.h — `pes-replay --diff A B`: two reports of one kind compared table
 * by table, rows matched by their key (tables.h), every value as A, B,
 * delta and relative change; then written as text (like cg_diff), JSON
 * (docs/diff.schema.json) or one long CSV table.
 *
 * The reports are jansson values: a JSON report as read, or a replayed
 * trace's report through pes_report_to_json, so that diffing two traces and
 * diffing their JSON reports is the same computation on the same values.
 */
#ifndef PES_REPLAY_DIFF_H
#define PES_REPLAY_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define PES_DIFF_JSON_VERSION 1

/* The kind of a pes-replay JSON report: "full" (a full or text trace's),
 * "sampled" or "compare"; NULL (msg filled, naming path) when j is not a
 * pes-replay report of the version this build writes. */
const char *pes_diff_report_kind(const json_t *j, const char *path, char *msg, size_t n);

/* The diff of report a against b (a new value, NULL without memory).
 * a_info, b_info: what each side was ({"path", "input", "kind"}), copied.
 * Its "headline" (full reports) is pes_diff_headline's. Rows of a table are
 * matched by key; rows left over on both sides that name a function and a
 * source line are then matched across an edit: by function and the line's
 * text (read from the source file when it is readable), else by function,
 * site kind and order in the function; such a row has "key_b" (B's key)
 * and "matched_by" ("source" or "order"). */
json_t *pes_diff_reports(const json_t *a, const json_t *b, const json_t *a_info,
                         const json_t *b_info);

/* A bounded copy of a diff, for the HTML page's embedded JSON
 * (docs/report.md): each table's rows cut to the first max_rows (the
 * table's ranked order) with "truncated_rows": the rows left out, and at
 * most max_tables tables of each name (the first in the diff's order) with
 * "truncated_tables": the tables left out, at the top; both keys only where
 * something was cut. It shares its values with diff (reference counted:
 * change neither). NULL without memory. */
json_t *pes_diff_cut(const json_t *diff, size_t max_rows, size_t max_tables);

/* The largest changes of the metrics people read first (full reports: per
 * configuration each level's simulated misses, invalidations, coherence
 * misses, transfers, writebacks, the model's hit rates and runtime; the
 * trace's accesses), changed ones only, counts by |delta| first, then the
 * others by |relative|: an array of {metric, config, unit, a, b, delta,
 * relative}; NULL without memory. */
json_t *pes_diff_headline(const json_t *a, const json_t *b);
/* A number as a report spells it (integral values as integers, others
 * with 15 digits), and delta / |a| with 6 digits (0 when both are 0, null
 * when only a is). */
json_t *pes_diff_number(double d);
json_t *pes_diff_relative(double a, double b);

/* Whether a diff table is one of rows a person acts on: sites, source
 * lines / functions / objects (--by groups), cache lines. */
int pes_diff_row_table(const json_t *table);
/* The indices in row's "values" of its (up to) max numeric columns with the
 * largest |delta|, largest first, leaving out columns that say where a row
 * is (line, column, site, address, ...); their number. */
size_t pes_diff_row_changes(const json_t *row, size_t *best, size_t max);

/* Text: first the headline, one line per metric ("L1 misses  -2,752,360
 * (-97.1 %)  A ... B ..."), then the tables of rows (sites, source lines,
 * functions, objects, cache lines) with changes, their rows ranked, at
 * most top each (0: all), each with its largest changes; with all, then
 * every changed value of every table by path (--diff-all). 0 or -1. */
int pes_diff_write_text(FILE *out, const json_t *diff, unsigned top, int all);
/* CSV: one row per value, table,key,status,column,unit,a,b,delta,relative. */
int pes_diff_write_csv(FILE *out, const json_t *diff);

#endif
