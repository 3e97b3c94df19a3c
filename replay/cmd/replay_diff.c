/*
 * replay_diff.c — `pes-replay --diff A B [options]`: each input is a trace
 * (replayed with the options given, as pes-replay TRACE would) or a JSON
 * report of pes-replay --format json (told apart by content: a JSON report
 * starts with '{', no trace does); both become jansson values and diff.c
 * compares them. Writes text, JSON (docs/diff.schema.json) or CSV.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "replay_run.h"
#include "report_util.h"
#include "tables.h"
#include "utf8.h"
#include "writers.h"

/* Whether path holds JSON: its first byte after white space is '{'. */
static int is_json_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* opening it as a trace says what is wrong */
    int c;
    while ((c = fgetc(f)) != EOF && isspace(c)) {
    }
    fclose(f);
    return c == '{';
}

/* One side: its report and what it was. NULL after printing why not. */
static json_t *load(const struct replay_options *o, const struct pes_machine *m, const char *path,
                    json_t **info)
{
    struct pes_error err = {0};
    json_t *j = NULL;
    const char *input = "json";
    if (is_json_file(path)) {
        json_error_t je;
        /* JSON_REJECT_DUPLICATES: a report has none, so duplicates mean another file */
        if (!(j = json_load_file(path, JSON_REJECT_DUPLICATES, &je))) {
            replay_message("%s: not a valid JSON report: line %d, column %d: %s", path, je.line,
                           je.column, je.text);
            return NULL;
        }
    } else {
        input = "trace";
        struct replay_options one = *o;
        one.trace = path;
        one.full = NULL;
        one.diff = 0;
        one.compare = 0;
        one.output = NULL;
        one.csv_dir = NULL;
        one.html = NULL;
        /* every row, zeros included: a row that only one run lists would
         * read as "not ranked" instead of the 0 it is (after padding, false
         * sharing N -> 0 on the line that had it) */
        one.knobs.top = UINT32_MAX;
        one.knobs.all_rows = 1;
        struct pes_report *rep = NULL;
        if (replay_input_pes_kind(path) == PES_TRACE_SAMPLED) {
            if (o->full_only) {
                replay_message("%s: a sampled trace; --%s needs a full trace", path, o->full_only);
                return NULL;
            }
            if (!(rep = replay_sampled_report(&one, m, &err))) {
                replay_message("%s", err.message);
                return NULL;
            }
        } else {
            struct replay_hooks h = {.report = &rep};
            if (replay_full(&one, m, &h) != 0 || !rep)
                return NULL; /* replay_full printed why */
        }
        j = pes_report_to_json(rep);
        pes_report_destroy(rep);
        if (!j) {
            replay_message("%s: out of memory while building the report", path);
            return NULL;
        }
    }
    char msg[512];
    const char *kind = pes_diff_report_kind(j, path, msg, sizeof msg);
    if (!kind) {
        replay_message("%s", msg);
        json_decref(j);
        return NULL;
    }
    /* a path need not be UTF-8; JSON strings must */
    char *upath = pes_report_utf8(path);
    *info =
        upath ? json_pack("{s:s, s:s, s:s}", "path", upath, "input", input, "kind", kind) : NULL;
    free(upath);
    if (!*info) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static const char *kind_words(const char *kind)
{
    return strcmp(kind, "full") == 0      ? "a full-trace report"
           : strcmp(kind, "sampled") == 0 ? "a sampled report"
                                          : "a --compare report";
}

int replay_diff(const struct replay_options *o, const struct pes_machine *m)
{
    json_t *ia = NULL, *ib = NULL, *b = NULL, *d = NULL;
    int rc = 1;
    json_t *a = load(o, m, o->trace, &ia);
    if (a)
        b = load(o, m, o->full, &ib);
    if (!a || !b)
        goto done;
    const char *ka = json_string_value(json_object_get(ia, "kind")),
               *kb = json_string_value(json_object_get(ib, "kind"));
    if (strcmp(ka, kb) != 0) {
        replay_message("--diff: %s is %s and %s %s; --diff compares two reports of one kind",
                       o->trace, kind_words(ka), o->full, kind_words(kb));
        goto done;
    }
    if (!(d = pes_diff_reports(a, b, ia, ib))) {
        replay_message("--diff: out of memory");
        goto done;
    }
    FILE *out = stdout;
    if (o->output && !(out = fopen(o->output, "w"))) {
        replay_message("-o %s: %s", o->output, strerror(errno));
        goto done;
    }
    int wr = o->format == REPLAY_JSON  ? pes_report_dump_json(out, d)
             : o->format == REPLAY_CSV ? pes_diff_write_csv(out, d)
                                       : pes_diff_write_text(out, d, o->knobs.top, o->diff_all);
    if (wr < 0 || fflush(out) != 0)
        replay_message("%s: write failed: %s", o->output ? o->output : "stdout", strerror(errno));
    else
        rc = 0;
    if (out != stdout)
        fclose(out);
    char msg[512];
    if (rc == 0 && o->html) { /* the page embeds a bounded copy (docs/report.md) */
        json_t *page = pes_diff_cut(d, PES_HTML_TOP_ROWS, PES_HTML_DIFF_TABLES);
        if (!page)
            snprintf(msg, sizeof msg, "--html %s: out of memory", o->html);
        if (!page || pes_report_write_html_file(o->html, page, NULL, msg, sizeof msg) < 0) {
            replay_message("%s", msg);
            rc = 1;
        }
        json_decref(page);
    }
    if (rc == 0 && o->csv_dir && pes_report_write_csv_dir(d, o->csv_dir, msg, sizeof msg) < 0) {
        replay_message("%s", msg);
        rc = 1;
    }
done:
    json_decref(a);
    json_decref(b);
    json_decref(ia);
    json_decref(ib);
    json_decref(d);
    return rc;
}
