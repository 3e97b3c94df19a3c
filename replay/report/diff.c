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
    json_t *tables;  /* the result's "tables" */
    json_t *sources; /* path -> array of its lines (strings), or null: unreadable */
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
json_t *pes_diff_number(double d)
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
    return pes_diff_number(json_number_value(b) - json_number_value(a));
}

static json_t *relative_of(const json_t *a, const json_t *b)
{
    if (!is_num(a) || !is_num(b))
        return json_null();
    return pes_diff_relative(json_number_value(a), json_number_value(b));
}

json_t *pes_diff_relative(double x, double y)
{
    if (x == 0)
        return y == 0 ? json_integer(0) : json_null();
    char buf[64]; /* 6 digits: a ratio for people, not for computing */
    snprintf(buf, sizeof buf, "%.6g", (y - x) / fabs(x));
    return pes_diff_number(strtod(buf, NULL));
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

/* ------------------------------------------------------------ across an edit
 * Rows that no key matched, on both sides, are matched once more when they
 * name a function: an inserted comment moves every line below it, and the
 * fix that moved the hot line must not read as a row gone and a row new. */

enum { SOURCE_MAX_BYTES = 64 << 20 };

/* Line `line` (1-based) of path, white space runs as one space, trimmed;
 * NULL when the file cannot be read or the line is blank or missing. */
static const char *source_line(struct diff *d, const char *path, json_int_t line)
{
    json_t *lines = json_object_get(d->sources, path);
    if (!lines) {
        FILE *f = fopen(path, "rb");
        lines = f ? json_array() : json_null();
        char *buf = NULL;
        size_t cap = 0, total = 0;
        ssize_t n;
        while (f && json_is_array(lines) && (n = getline(&buf, &cap, f)) > 0 &&
               (total += (size_t)n) <= SOURCE_MAX_BYTES) {
            size_t o = 0;
            for (ssize_t i = 0; i < n; i++) { /* collapse white space */
                int space = buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r';
                if (!space)
                    buf[o++] = buf[i];
                else if (o && buf[o - 1] != ' ')
                    buf[o++] = ' ';
            }
            while (o && buf[o - 1] == ' ')
                o--;
            json_t *str = json_stringn_nocheck(buf, o);
            if (!str || json_array_append_new(lines, str) < 0)
                d->failed = 1;
        }
        free(buf);
        if (f)
            fclose(f);
        if (!lines || json_object_set_new(d->sources, path, lines) < 0) {
            d->failed = 1;
            return NULL;
        }
    }
    const char *text = line > 0 ? json_string_value(json_array_get(lines, (size_t)line - 1)) : NULL;
    return text && *text ? text : NULL;
}

struct edit_row {
    size_t i;         /* the row in its side */
    const char *fn;   /* its function */
    const char *file; /* its file's name without the directory ("" unknown) */
    char *base;       /* what matches across an edit, before the occurrence number */
    json_int_t line, column;
};

static int by_base(const void *x, const void *y)
{
    const struct edit_row *a = x, *b = y;
    int c = strcmp(a->base, b->base);
    if (c)
        return c;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->column != b->column)
        return a->column < b->column ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int by_position(const void *x, const void *y)
{
    const struct edit_row *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    if (!c)
        c = strcmp(a->fn, b->fn);
    if (c)
        return c;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->column != b->column)
        return a->column < b->column ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* The edit keys of a side's rows: index (key -> row) of the rows that have
 * one: by_source, file name, function and source text (rows whose text is
 * not known have none); else file name, function, access kind and place in
 * the function's rows. Rows of one such base are numbered in source order
 * (#0, #1, ...), so that two sites of one line match in order. NULL without
 * memory. */
static json_t *edit_keys(struct diff *d, const struct side *s, int by_source)
{
    struct edit_row *e = calloc(s->n + 1, sizeof *e);
    json_t *index = json_object();
    size_t n = 0;
    if (!e || !index) {
        d->failed = 1;
        goto done;
    }
    for (size_t i = 0; i < s->n; i++) {
        const char *fn = json_string_value(json_object_get(s->row[i], "function"));
        if (!fn || !*fn)
            continue;
        const char *file = json_string_value(json_object_get(s->row[i], "file"));
        const char *base = file ? strrchr(file, '/') : NULL;
        e[n] =
            (struct edit_row){.i = i,
                              .fn = fn,
                              .file = base   ? base + 1
                                      : file ? file
                                             : "",
                              .line = json_integer_value(json_object_get(s->row[i], "line")),
                              .column = json_integer_value(json_object_get(s->row[i], "column"))};
        n++;
    }
    /* the order of each row in its function (the fallback without source text) */
    qsort(e, n, sizeof *e, by_position);
    size_t ordinal = 0;
    for (size_t k = 0; k < n && !d->failed; k++) {
        ordinal = k && !strcmp(e[k].fn, e[k - 1].fn) && !strcmp(e[k].file, e[k - 1].file)
                      ? ordinal + 1
                      : 0;
        const json_t *row = s->row[e[k].i];
        const char *file = json_string_value(json_object_get(row, "file"));
        const char *text = file && *file ? source_line(d, file, e[k].line) : NULL;
        const char *kind = json_string_value(json_object_get(row, "kind"));
        /* the file's name without its directory: two checkouts of one file match */
        const char *base = e[k].file;
        size_t len = strlen(e[k].fn) + strlen(base) + (text ? strlen(text) : 0) +
                     (kind ? strlen(kind) : 0) + 64;
        if (by_source && !text)
            continue; /* no key this round */
        if (!(e[k].base = malloc(len))) {
            d->failed = 1;
            break;
        }
        if (by_source)
            snprintf(e[k].base, len, "%s\x1f%s\x1fsource\x1f%s", base, e[k].fn, text);
        else
            snprintf(e[k].base, len, "%s\x1f%s\x1forder\x1f%s\x1f%zu", base, e[k].fn,
                     kind ? kind : "", ordinal);
    }
    if (d->failed)
        goto done;
    size_t kept = 0; /* the rows with a key, first */
    for (size_t k = 0; k < n; k++)
        if (e[k].base) {
            struct edit_row x = e[kept];
            e[kept++] = e[k];
            e[k] = x;
        }
    qsort(e, kept, sizeof *e, by_base);
    for (size_t k = 0, occ = 0; k < kept; k++) {
        occ = k && !strcmp(e[k].base, e[k - 1].base) ? occ + 1 : 0;
        size_t len = strlen(e[k].base) + 24;
        char *key = malloc(len);
        if (!key) {
            d->failed = 1;
            break;
        }
        snprintf(key, len, "%s\x1f%zu", e[k].base, occ);
        /* source text need not be UTF-8: the index is only looked up */
        json_object_set_new_nocheck(index, key, json_integer((json_int_t)e[k].i));
        free(key);
    }
done:
    for (size_t k = 0; e && k < n; k++)
        free(e[k].base);
    free(e);
    if (d->failed) {
        json_decref(index);
        return NULL;
    }
    return index;
}

/* A row's source text (file and line, read when readable), or NULL. */
static const char *row_source(struct diff *d, const json_t *row)
{
    const char *file = json_string_value(json_object_get(row, "file"));
    const json_t *fn = json_object_get(row, "function");
    if (!file || !*file || !json_is_string(fn) || !*json_string_value(fn))
        return NULL;
    return source_line(d, file, json_integer_value(json_object_get(row, "line")));
}

/* pair[i]: B's row matched to A's row i by key, or SIZE_MAX; then the rows
 * left on both sides matched by edit key (how[i]: 1 source, 2 order). */
static void match_edits(struct diff *d, const struct side *a, const struct side *b, size_t *pair,
                        int *how)
{
    /* first by source text, then, for the rows left, by place */
    for (int round = 1; round <= 2 && !d->failed; round++) {
        json_t *ka = edit_keys(d, a, round == 1);
        json_t *kb = ka ? edit_keys(d, b, round == 1) : NULL;
        const char *key;
        json_t *v;
        if (ka && kb)
            json_object_foreach(ka, key, v)
            {
                size_t i = (size_t)json_integer_value(v);
                const json_t *w = json_object_get(kb, key);
                if (!w || pair[i] != SIZE_MAX)
                    continue;
                size_t j = (size_t)json_integer_value(w);
                if (b->matched[j])
                    continue;
                pair[i] = j;
                b->matched[j] = 1;
                how[i] = round;
            }
        json_decref(ka);
        json_decref(kb);
    }
}

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
    json_object_set_new(row, "rank", pes_diff_number(r));
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
    size_t *pair = malloc((a.n + 1) * sizeof *pair);
    int *how = calloc(a.n + 1, sizeof *how), left_a = 0;
    if (!pair || !how) {
        free(pair), free(how), free(list);
        d->failed = 1;
        goto done;
    }
    for (size_t i = 0; i < a.n; i++) {
        const json_t *at = json_object_get(b.index, a.key[i]);
        pair[i] = SIZE_MAX;
        if (at) {
            pair[i] = (size_t)json_integer_value(at);
            b.matched[pair[i]] = 1;
        } else
            left_a = 1;
    }
    /* a key names a line by number: where both lines' text is known and
     * differs, an edit moved them, and the text decides below */
    for (size_t i = 0; i < a.n; i++) {
        if (pair[i] == SIZE_MAX)
            continue;
        const char *ta = row_source(d, a.row[i]), *tb = ta ? row_source(d, b.row[pair[i]]) : NULL;
        if (ta && tb && strcmp(ta, tb) != 0) {
            b.matched[pair[i]] = 0;
            pair[i] = SIZE_MAX;
            left_a = 1;
        }
    }
    int left_b = 0;
    for (size_t j = 0; j < b.n; j++)
        left_b |= !b.matched[j];
    if (left_a && left_b)
        match_edits(d, &a, &b, pair, how);
    for (size_t i = 0; i < a.n; i++) {
        const json_t *rb = pair[i] != SIZE_MAX ? b.row[pair[i]] : NULL;
        json_t *r = diff_row(d, display, name, a.key[i], a.row[i], rb, rank, &ranked_any);
        if (r && how[i]) { /* matched across an edit: B's key says where it went */
            json_object_set_new(r, "key_b", json_string(b.key[pair[i]]));
            json_object_set_new(r, "matched_by", json_string(how[i] == 1 ? "source" : "order"));
        }
        if (r) {
            json_object_set_new(r, "_order", json_integer((json_int_t)n));
            list[n++] = r;
        }
    }
    free(pair);
    free(how);
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
    struct diff d = {.tables = json_array(), .sources = json_object()};
    json_t *out = json_object(), *ta = json_array(), *tb = json_array();
    if (!d.tables || !d.sources || !out || !ta || !tb)
        d.failed = 1;
    else {
        json_object_set_new(out, "pes_diff_json", json_integer(PES_DIFF_JSON_VERSION));
        json_object_set_new(out, "a", json_deep_copy(a_info));
        json_object_set_new(out, "b", json_deep_copy(b_info));
        json_t *head = pes_diff_headline(a, b);
        if (!head || json_object_set_new(out, "headline", head) < 0)
            d.failed = 1;
        /* the report's root is the one row of the table "totals"; without its
         * findings (findings.h): sentences drawn from the numbers compared here */
        json_t *ra = json_copy((json_t *)a), *rb = json_copy((json_t *)b);
        if (!ra || !rb)
            d.failed = 1;
        json_object_del(ra, "findings");
        json_object_del(rb, "findings");
        json_array_append_new((json_t *)ta, ra);
        json_array_append_new((json_t *)tb, rb);
        diff_table(&d, "", "", ta, tb);
        json_t *root = json_array_get(d.tables, 0);
        json_object_set_new(root, "table", json_string("totals"));
        json_object_set_new(root, "name", json_string("totals"));
        json_object_set(out, "tables", d.tables);
    }
    json_decref(ta);
    json_decref(tb);
    json_decref(d.tables);
    json_decref(d.sources);
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

/* Every changed value of every table by path (--diff-all); *unchanged and
 * *n_tables counted. */
static void dump_tables(FILE *out, const json_t *diff, unsigned top, size_t *unchanged_out,
                        size_t *n_tables_out)
{
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
    *unchanged_out = unchanged;
    *n_tables_out = n_tables;
}

/* ---- the headline and the tables of rows */

enum { HEADLINE_LINES = 12, ROW_COLUMNS = 3 };

/* A signed change as people read it: counts with thousands separators,
 * ratios in points, seconds with their unit. */
static void signed_value(char *buf, size_t len, double v, const char *unit, int sign)
{
    if (!strcmp(unit, "count")) {
        char c[40];
        report_count(c, sizeof c, (uint64_t)llround(fabs(v)));
        snprintf(buf, len, "%s%s", v < 0 ? "-" : sign && v > 0 ? "+" : "", c);
    } else if (!strcmp(unit, "ratio"))
        snprintf(buf, len, sign ? "%+.1f pp" : "%.1f %%", 100 * v);
    else
        snprintf(buf, len, sign ? "%+.3g %s" : "%.3g %s", v, unit);
}

static void headline(FILE *out, const json_t *diff)
{
    const json_t *h = json_object_get(diff, "headline");
    size_t n = json_array_size(h), i;
    const json_t *m;
    if (!json_is_array(h)) /* a diff of sampled reports: its tables say it */
        return;
    if (n == 0)
        fputs("no headline metric changed (misses, coherence events, runtime, accesses)\n", out);
    json_array_foreach(h, i, m)
    {
        if (i == HEADLINE_LINES) {
            fprintf(out, "(%zu more changed metrics: --format json)\n", n - i);
            break;
        }
        const char *unit = json_string_value(json_object_get(m, "unit"));
        const char *config = json_string_value(json_object_get(m, "config"));
        const json_t *rel = json_object_get(m, "relative");
        char d[48], a[48], b[48], r[32];
        unit = unit ? unit : "count";
        signed_value(d, sizeof d, json_number_value(json_object_get(m, "delta")), unit, 1);
        signed_value(a, sizeof a, json_number_value(json_object_get(m, "a")), unit, 0);
        signed_value(b, sizeof b, json_number_value(json_object_get(m, "b")), unit, 0);
        if (json_is_number(rel))
            snprintf(r, sizeof r, "(%+.1f %%)", 100 * json_number_value(rel));
        else
            snprintf(r, sizeof r, "(new)");
        fprintf(out, "%-22s %14s %10s   A %s  B %s%s%s%s\n",
                report_safe(json_string_value(json_object_get(m, "metric"))), d, r, a, b,
                config && *config ? "  [" : "", config && *config ? config : "",
                config && *config ? "]" : "");
    }
}

/* The tables of rows a person acts on: sites, source lines / functions /
 * objects (--by groups), cache lines; not their nested tables. */
int pes_diff_row_table(const json_t *t)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    const char *last = name ? strrchr(name, '.') : NULL;
    last = last ? last + 1 : name;
    return last && (!strcmp(last, "sites") || !strcmp(last, "groups") || !strcmp(last, "objects") ||
                    !strcmp(last, "cache_lines"));
}

/* Columns that say where a row is, not how much: never "largest changes". */
static int place_column(const char *c)
{
    static const char *const place[] = {"line",      "column", "site",   "address", "offset",
                                        "object_id", "group",  "stream", "cores"};
    for (size_t i = 0; i < sizeof place / sizeof *place; i++)
        if (!strcmp(c, place[i]))
            return 1;
    return 0;
}

size_t pes_diff_row_changes(const json_t *row, size_t *best, size_t max)
{
    const json_t *values = json_object_get(row, "values");
    size_t n = json_array_size(values), nb = 0;
    for (size_t i = 0; i < n && max; i++) {
        const json_t *v = json_array_get(values, i), *dl = json_object_get(v, "delta");
        const char *c = json_string_value(json_object_get(v, "column"));
        if (!json_is_number(dl) || json_number_value(dl) == 0 || !c || place_column(c))
            continue;
        double w = fabs(json_number_value(dl));
        size_t k = nb < max ? nb++ : max;
        /* insertion into the best max, largest first (ties: column order) */
        while (k > 0 && fabs(json_number_value(
                            json_object_get(json_array_get(values, best[k - 1]), "delta"))) < w) {
            if (k < max)
                best[k] = best[k - 1];
            k--;
        }
        if (k < max)
            best[k] = i;
    }
    return nb;
}

/* A row's ROW_COLUMNS numeric columns with the largest |delta|. */
static void row_changes(FILE *out, const json_t *row)
{
    const json_t *values = json_object_get(row, "values");
    size_t best[ROW_COLUMNS], nb = pes_diff_row_changes(row, best, ROW_COLUMNS);
    for (size_t k = 0; k < nb; k++) {
        const json_t *v = json_array_get(values, best[k]);
        char ca[64], cb[64], cd[64], cr[32];
        cell(ca, sizeof ca, json_object_get(v, "a"), 0, 0);
        cell(cb, sizeof cb, json_object_get(v, "b"), 0, 0);
        cell(cd, sizeof cd, json_object_get(v, "delta"), 1, 0);
        const json_t *rel = json_object_get(v, "relative");
        if (json_is_number(rel))
            snprintf(cr, sizeof cr, "%+.1f %%", 100 * json_number_value(rel));
        else
            snprintf(cr, sizeof cr, "-");
        fprintf(out, "      %-34s %14s -> %-14s %14s %9s\n",
                report_safe(json_string_value(json_object_get(v, "column"))), ca, cb, cd, cr);
    }
}

static void row_tables(FILE *out, const json_t *diff, unsigned top)
{
    size_t t;
    const json_t *table;
    json_array_foreach(json_object_get(diff, "tables"), t, table)
    {
        long long changed = json_integer_value(json_object_get(table, "changed")),
                  only_a = json_integer_value(json_object_get(table, "only_a")),
                  only_b = json_integer_value(json_object_get(table, "only_b"));
        if (!pes_diff_row_table(table) || (!changed && !only_a && !only_b))
            continue;
        size_t r, moved = 0, shown = 0, left = 0;
        const json_t *row;
        json_array_foreach(json_object_get(table, "rows"), r, row) moved +=
            json_object_get(row, "matched_by") != NULL;
        fprintf(out,
                "\n%s: %lld changed (%zu of them matched across an edit), %lld only in A, %lld "
                "only in B\n",
                report_safe(json_string_value(json_object_get(table, "table"))), changed, moved,
                only_a, only_b);
        json_array_foreach(json_object_get(table, "rows"), r, row)
        {
            const char *status = json_string_value(json_object_get(row, "status"));
            if (!strcmp(status, "same"))
                continue;
            if (top && shown == top) {
                left++;
                continue;
            }
            shown++;
            const char *key = json_string_value(json_object_get(row, "key"));
            const char *key_b = json_string_value(json_object_get(row, "key_b"));
            const char *how = json_string_value(json_object_get(row, "matched_by"));
            fprintf(out, "  %s", *key ? report_safe(key) : "(the row)");
            if (key_b) /* report_safe has one buffer: key_b on its own call */
                fprintf(out, "  -> B: %s (%s)", report_safe(key_b),
                        how && !strcmp(how, "source") ? "same source text"
                                                      : "same place in the function");
            fprintf(out, "%s\n",
                    !strcmp(status, "only_a")   ? "  [only in A]"
                    : !strcmp(status, "only_b") ? "  [only in B]"
                                                : "");
            row_changes(out, row);
        }
        if (left)
            fprintf(out, "  (%zu more rows differ: --top N, or --format json)\n", left);
    }
}

int pes_diff_write_text(FILE *out, const json_t *diff, unsigned top, int all)
{
    headline(out, diff);
    fputs("\npes-replay --diff: B against A (delta = B - A; relative = delta / |A|)\n", out);
    side_line(out, "A", json_object_get(diff, "a"));
    side_line(out, "B", json_object_get(diff, "b"));
    row_tables(out, diff, top);
    size_t unchanged = 0, n_tables = 0;
    if (all) {
        fputs("\nEvery changed value, table by table (--diff-all):\n", out);
        dump_tables(out, diff, top, &unchanged, &n_tables);
    } else {
        size_t t;
        const json_t *table;
        json_array_foreach(json_object_get(diff, "tables"), t, table)
        {
            n_tables++;
            unchanged += !json_integer_value(json_object_get(table, "changed")) &&
                         !json_integer_value(json_object_get(table, "only_a")) &&
                         !json_integer_value(json_object_get(table, "only_b"));
        }
    }
    fprintf(out, "\n%zu tables compared, %zu identical%s\n", n_tables, unchanged,
            n_tables == unchanged ? ": the reports are the same"
            : all                 ? ""
                                  : " (--diff-all: every changed value by path)");
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
