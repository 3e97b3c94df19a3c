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
 * a_info, b_info: what each side was ({"path", "input", "kind"}), copied. */
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

/* Text: tables with changes, their changed or unmatched rows ranked, at most
 * top rows each (0: all); unchanged tables counted at the end. 0 or -1. */
int pes_diff_write_text(FILE *out, const json_t *diff, unsigned top);
/* CSV: one row per value, table,key,status,column,unit,a,b,delta,relative. */
int pes_diff_write_csv(FILE *out, const json_t *diff);

#endif
