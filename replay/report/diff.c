/*
 * diff.c — two reports compared table by table (diff.h). Nothing here knows
 * a report's layout: tables, keys and ranking columns come from tables.c, so
 * a new table in a report is diffed as soon as it exists (and ranked as
 * declared there, with one line).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report_util.h"
#include "tables.h"
#include "writers.h"

const char *pes_diff_report_kind(const json_t *j, const char *path, char *msg, size_t n)
{
    if (!json_is_object(j)) {
        snprintf(msg, n, "%s: JSON but not a pes-replay report (not an object)", path);
        return NULL;
    }
    if (json_object_get(j, "pes_diff_json")) {
        snprintf(
            msg, n,
            "%s: a pes-replay --diff report; --diff compares the reports (or traces) it came from",
            path);
        return NULL;
    }
    const json_t *v = json_object_get(j, "pes_replay_json");
    if (!v) {
        snprintf(msg, n,
                 "%s: JSON but not a pes-replay report (no \"pes_replay_json\" key; pes-replay "
                 "--format json "
                 "writes one)",
                 path);
        return NULL;
    }
    if (!json_is_integer(v) || json_integer_value(v) != REPLAY_JSON_VERSION) {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        snprintf(msg, n,
                 "%s: a pes-replay report of format version %s; this pes-replay reads version %d",
                 path, s ? s : "?", REPLAY_JSON_VERSION);
        free(s);
        return NULL;
    }
    /* the layouts of docs/replay.schema.json and docs/sampled.schema.json */
    if (json_object_get(j, "full"))
        return "compare";
    const json_t *kind = json_object_get(j, "kind");
    if (json_is_string(kind) && strcmp(json_string_value(kind), "sampled") == 0)
        return "sampled";
    if (json_is_object(json_object_get(j, "trace")) && json_is_array(json_object_get(j, "configs")))
        return "full";
    snprintf(msg, n,
             "%s: a pes-replay report of an unknown layout (neither a trace's nor a sampled one)",
             path);
    return NULL;
}

/* ------------------------------------------------------------ diffing */

struct diff {
    json_t *tables; /* the result's "tables" */
    int failed;
};

/* The flattened columns of one row: names and values in order. */
struct cols {
    json_t *names;  /* array of strings */
    json_t *values; /* object name -> value */
    json_t *nested; /* object name -> table */
};

static void col_add(void *ctx, const char *column, const json_t *v)
{
    struct cols *c = ctx;
    json_array_append_new(c->names, json_string(column));
    json_object_set(c->values, column, (json_t *)v);
}

static void nested_add(void *ctx, const char *name, const json_t *t)
{
    struct cols *c = ctx;
    json_object_set(c->nested, name, (json_t *)t);
}

static int cols_of(const json_t *row, struct cols *c)
{
    c->names = json_array();
    c->values = json_object();
    c->nested = json_object();
    if (!c->names || !c->values || !c->nested)
        return -1;
    if (row)
        pes_table_columns(row, col_add, nested_add, c);
    return 0;
}

static void cols_free(struct cols *c)
{
    json_decref(c->names);
    json_decref(c->values);
    json_decref(c->nested);
}

static int is_num(const json_t *v)
{
    return json_is_integer(v) || json_is_real(v);
}

/* A computed number as the reports spell theirs (report.c): integral values
 * as integers, others with the 15 digits a JSON report keeps (so that
 * 0.99429 - 0.98837 is 0.00592, not 0.005919999999999970). */
static json_t *number(double d)
{
    if (!isfinite(d))
        return json_null(); /* jansson holds no NaN or infinity */
    if (d == floor(d) && fabs(d) < 0x1p53)
        return json_integer((json_int_t)d);
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", d);
    return json_real(strtod(buf, NULL));
}

/* b - a: an integer when both are and it fits, else a real. */
static json_t *delta_of(const json_t *a, const json_t *b)
{
    if (!is_num(a) || !is_num(b))
        return json_null();
    if (json_is_integer(a) && json_is_integer(b)) {
        long long d;
        if (!__builtin_sub_overflow(json_integer_value(b), json_integer_value(a), &d))
            return json_integer(d);
    }
    return number(json_number_value(b) - json_number_value(a));
}

static json_t *relative_of(const json_t *a, const json_t *b)
{
    if (!is_num(a) || !is_num(b))
        return json_null();
    double x = json_number_value(a), y = json_number_value(b);
    if (x == 0)
        return y == 0 ? json_integer(0) : json_null();
    char buf[64]; /* 6 digits: a ratio for people, not for computing */
    snprintf(buf, sizeof buf, "%.6g", (y - x) / fabs(x));
    return number(strtod(buf, NULL));
}

/* The rank columns ("a+b") of a row's values: how many it holds, and their
 * sum in *sum (missing ones count 0). */
static int rank_columns(const char *rank, const json_t *values, double *sum)
{
    int found = 0;
    char col[256];
    *sum = 0;
    for (const char *p = rank; p && *p;) {
        const char *plus = strchr(p, '+');
        size_t len = plus ? (size_t)(plus - p) : strlen(p);
        if (len < sizeof col) {
            memcpy(col, p, len);
            col[len] = '\0';
            const json_t *v = json_object_get(values, col);
            if (v)
                found++;
            if (is_num(v))
                *sum += json_number_value(v);
        }
        p = plus ? plus + 1 : NULL;
    }
    return found;
}

static double rank_sum(const char *rank, const json_t *values)
{
    double s;
    rank_columns(rank, values, &s);
    return s;
}

static int has_rank_column(const char *rank, const json_t *values)
{
    double s;
    return rank_columns(rank, values, &s) > 0;
}

/* The rows of one side, with their key labels (the second row of a key gets
 * " #2", the third " #3", ...) and an index of the labels (jansson's hash
 * table: matching is linear in the rows). */
struct side {
    size_t n;
    const json_t **row;
    char **key;
    int *matched;
    json_t *index; /* label -> position */
};

static int side_of(const char *name, const json_t *table, struct side *s)
{
    size_t cap = json_array_size(table);
    s->n = 0;
    s->row = calloc(cap + 1, sizeof *s->row);
    s->key = calloc(cap + 1, sizeof *s->key);
    s->matched = calloc(cap + 1, sizeof *s->matched);
    s->index = json_object();
    json_t *seen = json_object(); /* label -> rows with it so far */
    int rc = s->row && s->key && s->matched && s->index && seen ? 0 : -1;
    size_t i;
    json_t *r;
    json_array_foreach(table, i, r)
    {
        if (rc < 0)
            break;
        if (!json_is_object(r))
            continue;
        char *k = pes_table_key_label(name, r);
        if (!k) {
            rc = -1;
            break;
        }
        json_int_t same = json_integer_value(json_object_get(seen, k)) + 1;
        json_object_set_new(seen, k, json_integer(same));
        if (same > 1) {
            char *k2 = malloc(strlen(k) + 24);
            if (k2)
                sprintf(k2, "%s #%lld", k, (long long)same);
            free(k);
            if (!(k = k2)) {
                rc = -1;
                break;
            }
        }
        json_object_set_new(s->index, k, json_integer((json_int_t)s->n));
        s->row[s->n] = r;
        s->key[s->n++] = k;
    }
    json_decref(seen);
    return rc;
}

static void side_free(struct side *s)
{
    for (size_t i = 0; s->key && i < s->n; i++)
        free(s->key[i]);
    free(s->key);
    free(s->row);
    free(s->matched);
    json_decref(s->index);
}

static void diff_table(struct diff *d, const char *display, const char *name, const json_t *ta,
                       const json_t *tb);

/* One row's values (A's columns in order, then B's others), and the tables
 * inside it diffed under display[key]. Returns the row object. */
static json_t *diff_row(struct diff *d, const char *display, const char *name, const char *key,
                        const json_t *ra, const json_t *rb, const char *rank, int *ranked_any)
{
    struct cols a, b;
    json_t *row = json_object(), *values = json_array();
    if (cols_of(ra, &a) < 0 || cols_of(rb, &b) < 0 || !row || !values) {
        d->failed = 1;
        json_decref(row);
        json_decref(values);
        return NULL;
    }
    int changed = 0;
    for (int pass = 0; pass < 2; pass++) {
        const json_t *names = pass ? b.names : a.names;
        size_t i;
        json_t *c;
        json_array_foreach(names, i, c)
        {
            const char *col = json_string_value(c);
            if (pass && json_object_get(a.values, col))
                continue; /* done in pass 0 */
            json_t *va = json_object_get(a.values, col), *vb = json_object_get(b.values, col);
            json_t *v = json_object();
            if (!v) {
                d->failed = 1;
                continue;
            }
            json_object_set_new(v, "column", json_string(col));
            json_object_set(v, "a", va ? va : json_null());
            json_object_set(v, "b", vb ? vb : json_null());
            json_object_set_new(v, "delta", va && vb ? delta_of(va, vb) : json_null());
            json_object_set_new(v, "relative", va && vb ? relative_of(va, vb) : json_null());
            if (ra && rb && (!va || !vb || !json_equal(va, vb)))
                changed = 1;
            if (json_array_append_new(values, v) < 0)
                d->failed = 1;
        }
    }
    const char *status = !ra ? "only_b" : !rb ? "only_a" : changed ? "changed" : "same";
    /* the rank: the change of the declared columns, else (none declared, or a
     * table of that name without them: a sampled report's sites) the row's
     * largest change */
    double r = 0;
    int ranked = rank && (has_rank_column(rank, a.values) || has_rank_column(rank, b.values));
    if (ranked) {
        r = fabs(rank_sum(rank, b.values) - rank_sum(rank, a.values));
        *ranked_any = 1;
    } else {
        size_t i;
        json_t *v;
        json_array_foreach(values, i, v)
        {
            const json_t *x = json_object_get(v, "a"), *y = json_object_get(v, "b");
            double dx = is_num(x) ? json_number_value(x) : 0,
                   dy = is_num(y) ? json_number_value(y) : 0;
            if ((is_num(x) || is_num(y)) && fabs(dy - dx) > r)
                r = fabs(dy - dx);
        }
    }
    json_object_set_new(row, "key", json_string(key));
    json_object_set_new(row, "status", json_string(status));
    json_object_set_new(row, "rank", number(r));
    json_object_set_new(row, "values", values);
    /* tables inside the row: A's, then B's others */
    for (int pass = 0; pass < 2; pass++) {
        const json_t *nested = pass ? b.nested : a.nested;
        const char *nm;
        json_t *t;
        json_object_foreach((json_t *)nested, nm, t)
        {
            if (pass && json_object_get(a.nested, nm))
                continue;
            size_t dl = strlen(display) + strlen(key) + strlen(nm) + 8,
                   nl = strlen(name) + strlen(nm) + 2;
            char *sub = malloc(dl), *subname = malloc(nl);
            if (sub && subname) {
                /* "configs[cores=2 mimicked=false].simulation.sites"; under the root, the name alone */
                if (!*display)
                    snprintf(sub, dl, "%s", nm);
                else if (*key)
                    snprintf(sub, dl, "%s[%s].%s", display, key, nm);
                else
                    snprintf(sub, dl, "%s.%s", display, nm);
                if (*name)
                    snprintf(subname, nl, "%s.%s", name, nm);
                else
                    snprintf(subname, nl, "%s", nm);
                diff_table(d, sub, subname, json_object_get(a.nested, nm),
                           json_object_get(b.nested, nm));
            } else
                d->failed = 1;
            free(sub);
            free(subname);
        }
    }
    cols_free(&a);
    cols_free(&b);
    return row;
}

static int by_rank(const void *x, const void *y)
{
    const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    double ra = json_number_value(json_object_get(a, "rank")),
           rb = json_number_value(json_object_get(b, "rank"));
    if (ra != rb)
        return ra < rb ? 1 : -1;
    /* stable: the order of A, then B's other rows */
    long long ia = json_integer_value(json_object_get(a, "_order")),
              ib = json_integer_value(json_object_get(b, "_order"));
    return (ia > ib) - (ia < ib);
}

static void diff_table(struct diff *d, const char *display, const char *name, const json_t *ta,
                       const json_t *tb)
{
    struct side a = {0}, b = {0};
    json_t *t = json_object(), *rows = json_array();
    if (!t || !rows || json_array_append(d->tables, t) < 0 || side_of(name, ta, &a) < 0 ||
        side_of(name, tb, &b) < 0) {
        d->failed = 1;
        goto done;
    }
    const char *rank = pes_table_rank(name);
    json_object_set_new(t, "table", json_string(display));
    json_object_set_new(t, "name", json_string(name));
    int ranked_any = 0; /* whether the rows have the declared rank columns */
    /* rows are built first (nested tables append after this one) */
    size_t n = 0;
    json_t **list = calloc(a.n + b.n + 1, sizeof *list);
    if (!list) {
        d->failed = 1;
        goto done;
    }
    for (size_t i = 0; i < a.n; i++) {
        const json_t *rb = NULL, *at = json_object_get(b.index, a.key[i]);
        if (at) {
            size_t j = (size_t)json_integer_value(at);
            b.matched[j] = 1;
            rb = b.row[j];
        }
        json_t *r = diff_row(d, display, name, a.key[i], a.row[i], rb, rank, &ranked_any);
        if (r) {
            json_object_set_new(r, "_order", json_integer((json_int_t)n));
            list[n++] = r;
        }
    }
    for (size_t j = 0; j < b.n; j++) {
        if (b.matched[j])
            continue;
        json_t *r = diff_row(d, display, name, b.key[j], NULL, b.row[j], rank, &ranked_any);
        if (r) {
            json_object_set_new(r, "_order", json_integer((json_int_t)n));
            list[n++] = r;
        }
    }
    qsort(list, n, sizeof *list, by_rank);
    json_object_set_new(t, "rank", rank && ranked_any ? json_string(rank) : json_null());
    size_t counts[4] = {0};
    static const char *const statuses[4] = {"changed", "same", "only_a", "only_b"};
    for (size_t i = 0; i < n; i++) {
        json_object_del(list[i], "_order");
        const char *s = json_string_value(json_object_get(list[i], "status"));
        for (int k = 0; k < 4; k++)
            if (strcmp(s, statuses[k]) == 0)
                counts[k]++;
        if (json_array_append_new(rows, list[i]) < 0)
            d->failed = 1;
    }
    free(list);
    for (int k = 0; k < 4; k++)
        json_object_set_new(t, statuses[k], json_integer((json_int_t)counts[k]));
    json_object_set(t, "rows", rows);
done:
    json_decref(rows);
    json_decref(t);
    side_free(&a);
    side_free(&b);
}

json_t *pes_diff_reports(const json_t *a, const json_t *b, const json_t *a_info,
                         const json_t *b_info)
{
    struct diff d = {.tables = json_array()};
    json_t *out = json_object(), *ta = json_array(), *tb = json_array();
    if (!d.tables || !out || !ta || !tb)
        d.failed = 1;
    else {
        json_object_set_new(out, "pes_diff_json", json_integer(PES_DIFF_JSON_VERSION));
        json_object_set_new(out, "a", json_deep_copy(a_info));
        json_object_set_new(out, "b", json_deep_copy(b_info));
        /* the report's root is the one row of the table "totals"; without its
         * findings (findings.h): sentences drawn from the numbers compared here */
        json_t *ra = json_copy((json_t *)a), *rb = json_copy((json_t *)b);
        if (!ra || !rb)
            d.failed = 1;
        json_object_del(ra, "findings");
        json_object_del(rb, "findings");
        json_array_append_new(ta, ra);
        json_array_append_new(tb, rb);
        diff_table(&d, "", "", ta, tb);
        json_t *root = json_array_get(d.tables, 0);
        json_object_set_new(root, "table", json_string("totals"));
        json_object_set_new(root, "name", json_string("totals"));
        json_object_set(out, "tables", d.tables);
    }
    json_decref(ta);
    json_decref(tb);
    json_decref(d.tables);
    if (d.failed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *pes_diff_cut(const json_t *diff, size_t max_rows, size_t max_tables)
{
    json_t *out = json_object(), *tables = json_array(),
           *seen = json_object(); /* seen: name -> tables kept */
    size_t dropped = 0;
    int failed = !out || !tables || !seen;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)diff, k, v) if (!failed && strcmp(k, "tables")) failed |=
        json_object_set(out, k, v) < 0;
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(diff, "tables"), i, t)
    {
        if (failed)
            break;
        const char *name = json_string_value(json_object_get(t, "name"));
        json_int_t kept = json_integer_value(json_object_get(seen, name ? name : ""));
        if ((size_t)kept >= max_tables) {
            dropped++;
            continue;
        }
        failed |= json_object_set_new(seen, name ? name : "", json_integer(kept + 1)) < 0;
        const json_t *rows = json_object_get(t, "rows");
        size_t n = json_array_size(rows);
        if (n <= max_rows) {
            failed |=
                json_array_append(tables, (json_t *)t) < 0; /* shared: the copy is read only */
            continue;
        }
        json_t *c = json_object(), *cut = json_array();
        failed |= !c || !cut;
        json_object_foreach((json_t *)t, k, v) if (!failed && strcmp(k, "rows")) failed |=
            json_object_set(c, k, v) < 0;
        for (size_t r = 0; !failed && r < max_rows; r++)
            failed |= json_array_append(cut, json_array_get(rows, r)) < 0;
        if (!failed) {
            failed |= json_object_set(c, "rows", cut) < 0;
            failed |= json_object_set_new(c, "truncated_rows",
                                          json_integer((json_int_t)(n - max_rows))) < 0;
            failed |= json_array_append(tables, c) < 0;
        }
        json_decref(c);
        json_decref(cut);
    }
    if (!failed)
        failed |= json_object_set(out, "tables", tables) < 0;
    if (!failed && dropped)
        failed |=
            json_object_set_new(out, "truncated_tables", json_integer((json_int_t)dropped)) < 0;
    json_decref(tables);
    json_decref(seen);
    if (failed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------ text */

/* hex: the value is an address (a cache line's), which people read in hex */
static void cell(char *buf, size_t len, const json_t *v, int sign, int hex)
{
    if (!v || json_is_null(v))
        snprintf(buf, len, "-");
    else if (hex && json_is_integer(v) && !sign)
        snprintf(buf, len, "0x%llx", (unsigned long long)json_integer_value(v));
    else if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        char c[40];
        report_count(c, sizeof c,
                     (uint64_t)(x < 0 ? -(unsigned long long)x : (unsigned long long)x));
        snprintf(buf, len, "%s%s", x < 0 ? "-" : sign && x > 0 ? "+" : "", c);
    } else if (json_is_real(v))
        snprintf(buf, len, sign ? "%+.6g" : "%.6g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, len, "%s", report_safe(json_string_value(v)));
    else if (json_is_true(v))
        snprintf(buf, len, "true");
    else if (json_is_false(v))
        snprintf(buf, len, "false");
    else
        snprintf(buf, len, "?");
}

static void side_line(FILE *out, const char *which, const json_t *info)
{
    fprintf(
        out, "  %s  %s (%s %s report%s)\n", which,
        report_safe(json_string_value(json_object_get(info, "path"))),
        json_string_value(json_object_get(info, "kind")),
        strcmp(json_string_value(json_object_get(info, "input")), "json") == 0 ? "JSON" : "trace's",
        strcmp(json_string_value(json_object_get(info, "input")), "json") == 0 ? "" : ", replayed");
}

int pes_diff_write_text(FILE *out, const json_t *diff, unsigned top)
{
    fputs("pes-replay --diff: B against A (delta = B - A; relative = delta / |A|)\n", out);
    side_line(out, "A", json_object_get(diff, "a"));
    side_line(out, "B", json_object_get(diff, "b"));
    size_t t, unchanged = 0, n_tables = 0;
    json_t *table;
    json_array_foreach(json_object_get(diff, "tables"), t, table)
    {
        n_tables++;
        long long changed = json_integer_value(json_object_get(table, "changed")),
                  same = json_integer_value(json_object_get(table, "same")),
                  only_a = json_integer_value(json_object_get(table, "only_a")),
                  only_b = json_integer_value(json_object_get(table, "only_b"));
        if (!changed && !only_a && !only_b) {
            unchanged++;
            continue;
        }
        const json_t *rank = json_object_get(table, "rank");
        fprintf(out, "\n%s — %lld rows: %lld changed, %lld same, %lld only in A, %lld only in B",
                report_safe(json_string_value(json_object_get(table, "table"))),
                changed + same + only_a + only_b, changed, same, only_a, only_b);
        if (json_array_size(json_object_get(table, "rows")) > 1)
            fprintf(out, "; by |delta| of %s",
                    json_is_string(rank) ? json_string_value(rank) : "the row's largest change");
        fputc('\n', out);
        fprintf(out, "    %-40s %14s %14s %14s %9s\n", "column", "A", "B", "delta", "relative");
        size_t r, shown = 0, left = 0;
        json_t *row;
        json_array_foreach(json_object_get(table, "rows"), r, row)
        {
            const char *status = json_string_value(json_object_get(row, "status"));
            if (strcmp(status, "same") == 0)
                continue;
            if (top && shown == top) {
                left++;
                continue;
            }
            shown++;
            const char *key = json_string_value(json_object_get(row, "key"));
            fprintf(out, "  %s%s\n", *key ? report_safe(key) : "(the report)",
                    strcmp(status, "only_a") == 0   ? "  [only in A]"
                    : strcmp(status, "only_b") == 0 ? "  [only in B]"
                                                    : "");
            size_t i;
            json_t *v;
            json_array_foreach(json_object_get(row, "values"), i, v)
            {
                const json_t *a = json_object_get(v, "a"), *b = json_object_get(v, "b");
                if (strcmp(status, "changed") == 0 && json_equal(a, b))
                    continue;
                char ca[64], cb[64], cd[64], cr[32];
                const char *column = json_string_value(json_object_get(v, "column"));
                int hex = column && strcmp(column, "address") == 0;
                cell(ca, sizeof ca, a, 0, hex);
                cell(cb, sizeof cb, b, 0, hex);
                cell(cd, sizeof cd, json_object_get(v, "delta"), 1, hex);
                const json_t *rel = json_object_get(v, "relative");
                if (hex)
                    snprintf(cd, sizeof cd, "-"); /* addresses: moved, not more or less */
                if (json_is_number(rel) && !hex)
                    snprintf(cr, sizeof cr, "%+.2f%%", 100 * json_number_value(rel));
                else
                    snprintf(cr, sizeof cr, "-");
                fprintf(out, "    %-40s %14s %14s %14s %9s\n", report_safe(column), ca, cb, cd, cr);
            }
        }
        if (left)
            fprintf(out, "  (%zu more rows differ: --top N, or --format json)\n", left);
    }
    fprintf(out, "\n%zu tables compared, %zu identical%s\n", n_tables, unchanged,
            n_tables == unchanged ? ": the reports are the same" : "");
    return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------ CSV */

int pes_diff_write_csv(FILE *out, const json_t *diff)
{
    fputs("table,key,status,column,unit,a,b,delta,relative [ratio]\r\n", out);
    size_t t, r, i;
    json_t *table, *row, *v;
    json_array_foreach(json_object_get(diff, "tables"), t, table)
    {
        const char *display = json_string_value(json_object_get(table, "table"));
        const char *name = json_string_value(json_object_get(table, "name"));
        json_array_foreach(json_object_get(table, "rows"), r, row)
        {
            json_array_foreach(json_object_get(row, "values"), i, v)
            {
                const char *col = json_string_value(json_object_get(v, "column"));
                pes_csv_field(out, display);
                fputc(',', out);
                pes_csv_field(out, json_string_value(json_object_get(row, "key")));
                fprintf(out, ",%s,", json_string_value(json_object_get(row, "status")));
                pes_csv_field(out, col);
                fputc(',', out);
                const char *unit = pes_table_unit(name, col);
                fputs(unit ? unit : "", out);
                static const char *const f[] = {"a", "b", "delta", "relative"};
                for (int k = 0; k < 4; k++) {
                    fputc(',', out);
                    pes_csv_value(out, json_object_get(v, f[k]));
                }
                fputs("\r\n", out);
            }
        }
    }
    return ferror(out) ? -1 : 0;
}
