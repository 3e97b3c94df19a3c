/*
 * tables.c — a JSON report as tables (tables.h): what identifies, ranks and
 * measures each table's rows, declared once here, and --csv-dir.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tables.h"

/* The key of a table's rows: comma-separated columns, each a '|'-separated
 * list of alternatives of which the first the row has is used (a cache line
 * is its object and offset when known, else its address). Columns a row
 * lacks are left out, so one default serves every table whose rows say what
 * they are by "site", "line", "object" or "function". */
#define KEY_DEFAULT                                                                                \
    "cores,mimicked,level,stream,group,thread,lo,hi,object,offset|address,file,line,column,"       \
    "function,"                                                                                    \
    "label,site"

/* One line per table that needs more than the default. name matches a
 * table whose name is it or ends in "." and it; the longest match wins.
 * rank: the columns whose change orders a diff's rows (summed; NULL: the
 * row's largest change). tuple: the report stores the table as an array of
 * arrays, each inner array one row of these columns (histogram bins); with
 * matrix, the array is a matrix whose cell [i][j] is the row {i, j, value}
 * (row, column and value named by tuple). */
static const struct decl {
    const char *name, *key, *rank, *tuple;
    int matrix;
} decls[] = {
    {"histogram.exact", "distance", "count", "distance,count", 0},
    {"histogram.log2", "lo,hi", "count", "lo,hi,count", 0},
    {"communication.all", "thread_a,thread_b", "transfers", "thread_a,thread_b,transfers", 1},
    {"communication.true", "thread_a,thread_b", "transfers", "thread_a,thread_b,transfers", 1},
    {"communication.false", "thread_a,thread_b", "transfers", "thread_a,thread_b,transfers", 1},
    {"comm.true", "thread_a,thread_b", "transfers", "thread_a,thread_b,transfers", 1},
    {"comm.false", "thread_a,thread_b", "transfers", "thread_a,thread_b,transfers", 1},
    {"configs", "cores,mimicked", NULL, NULL, 0},
    {"levels", "level", "hits", NULL, 0},
    {"miss_ratio_curve.points", "size_lines", "sdcm", NULL, 0},
    {"prd", "stream", "histogram.accesses", NULL, 0},
    {"crd", "group", "histogram.accesses", NULL, 0},
    {"sites", KEY_DEFAULT, "accesses", NULL, 0},
    {"simulation.sites", KEY_DEFAULT, "invalidations.true+invalidations.false", NULL, 0},
    {"per_thread", "thread", "samples", NULL, 0},
    {"groups", "key", "accesses", NULL, 0}, /* --by line|site|function|object rows */
    {"simulation.groups", "key", "invalidations.true+invalidations.false", NULL, 0},
    {"callpaths", "path", "share", NULL, 0}, /* a row's top call paths (a trace with call edges) */
    /* a contended line by the object part it starts with (its address moves
     * between runs and with padding), by address when no object is known */
    {"cache_lines", "part|address", "invalidations.true+invalidations.false", NULL, 0},
    {"cache_lines.offsets", "offset,size", "invalidations.true+invalidations.false", NULL, 0},
    {"tables", "table", NULL, NULL, 0}, /* a diff's own tables (docs/diff.schema.json) */
    {"tables.rows", "key", NULL, NULL, 0},
    {"tables.rows.values", "column", NULL, NULL, 0},
};

static const struct decl *decl_of(const char *name)
{
    const struct decl *best = NULL;
    size_t n = strlen(name), best_len = 0;
    for (size_t i = 0; i < sizeof decls / sizeof *decls; i++) {
        size_t k = strlen(decls[i].name);
        if (k > n || k <= best_len || strcmp(name + n - k, decls[i].name) != 0)
            continue;
        if (k < n && name[n - k - 1] != '.')
            continue;
        best = &decls[i];
        best_len = k;
    }
    return best;
}

const char *pes_table_rank(const char *name)
{
    const struct decl *d = decl_of(name);
    return d ? d->rank : NULL;
}

size_t pes_table_key_columns(const char *name, const json_t *row, const char **cols, size_t max)
{
    const struct decl *d = decl_of(name);
    const char *spec = d ? d->key : KEY_DEFAULT;
    size_t n = 0;
    char word[64];
    /* walk the spec: groups by ',', alternatives by '|' */
    for (const char *p = spec; *p && n < max;) {
        const char *group_end = strchr(p, ',');
        if (!group_end)
            group_end = p + strlen(p);
        for (const char *q = p; q < group_end;) {
            const char *alt_end = memchr(q, '|', (size_t)(group_end - q));
            if (!alt_end)
                alt_end = group_end;
            size_t len = (size_t)(alt_end - q);
            if (len < sizeof word) {
                memcpy(word, q, len);
                word[len] = '\0';
                const char *key;
                json_t *v;
                /* the key name as stored in the row (a stable pointer) */
                json_object_foreach((json_t *)row, key, v)
                {
                    /* an empty string or null says "not known": try the next alternative */
                    if (strcmp(key, word) == 0 && !json_is_object(v) && !json_is_array(v) &&
                        !json_is_null(v) && !(json_is_string(v) && !*json_string_value(v))) {
                        cols[n++] = key;
                        q = group_end; /* this group is done */
                        break;
                    }
                }
            }
            if (q != group_end)
                q = alt_end + (alt_end < group_end);
        }
        p = *group_end ? group_end + 1 : group_end;
    }
    return n;
}

/* A scalar as text: strings as they are, numbers as JSON prints them. */
static char *scalar_text(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    return s ? s : strdup("");
}

char *pes_table_key_label(const char *name, const json_t *row)
{
    const char *cols[32];
    /* the report's root (the table "" of one row) needs no key */
    size_t n = *name ? pes_table_key_columns(name, row, cols, 32) : 0;
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char *v = scalar_text(json_object_get(row, cols[i]));
        if (!v) {
            free(out);
            return NULL;
        }
        /* "file:line:column" reads as a source location; the rest name=value */
        int loc = strcmp(cols[i], "line") == 0 || strcmp(cols[i], "column") == 0;
        int after_loc =
            loc && i > 0 && (strcmp(cols[i - 1], "file") == 0 || strcmp(cols[i - 1], "line") == 0);
        int bare = strcmp(cols[i], "file") == 0 || strcmp(cols[i], "label") == 0 ||
                   strcmp(cols[i], "function") == 0 || strcmp(cols[i], "object") == 0;
        size_t need = len + strlen(cols[i]) + strlen(v) + 4;
        if (need > cap) {
            while (need > cap)
                cap *= 2;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(v);
                free(out);
                return NULL;
            }
            out = grown;
        }
        if (after_loc)
            len += (size_t)sprintf(out + len, ":%s", v);
        else if (bare)
            len += (size_t)sprintf(out + len, "%s%s", len ? " " : "", v);
        else
            len += (size_t)sprintf(out + len, "%s%s=%s", len ? " " : "", cols[i], v);
        free(v);
    }
    return out;
}

/* ------------------------------------------------------------ columns */

int pes_table_is(const json_t *a)
{
    size_t i;
    json_t *v;
    if (!json_is_array(a))
        return 0;
    json_array_foreach(a, i, v) if (json_is_object(v)) return 1;
    return 0;
}

/* A declared array-of-arrays table (decls' tuple) as an array of row
 * objects, a new value; NULL if name declares none or v is not one. */
static json_t *tuple_table(const char *name, const json_t *v)
{
    const struct decl *d = decl_of(name);
    if (!d || !d->tuple || !json_is_array(v) || json_array_size(v) == 0)
        return NULL;
    char cols[3][64] = {{0}};
    size_t n_cols = 0;
    for (const char *p = d->tuple; *p && n_cols < 3;) {
        size_t len = strcspn(p, ",");
        snprintf(cols[n_cols++], sizeof cols[0], "%.*s", (int)len, p);
        p += len + (p[len] == ',');
    }
    json_t *rows = json_array();
    size_t i, j;
    json_t *inner, *cell;
    json_array_foreach(v, i, inner)
    {
        if (!json_is_array(inner)) {
            json_decref(rows);
            return NULL;
        }
        if (d->matrix) {
            json_array_foreach(inner, j, cell)
            {
                json_t *r = json_object();
                json_object_set_new(r, cols[0], json_integer((json_int_t)i));
                json_object_set_new(r, cols[1], json_integer((json_int_t)j));
                json_object_set(r, cols[2], cell);
                json_array_append_new(rows, r);
            }
        } else {
            json_t *r = json_object();
            json_array_foreach(inner, j, cell)
            {
                if (j < n_cols)
                    json_object_set(r, cols[j], cell);
            }
            json_array_append_new(rows, r);
        }
    }
    return rows;
}

struct walk {
    pes_table_column_fn column;
    pes_table_nested_fn nested;
    void *ctx;
};

static void walk_value(struct walk *w, char *name, size_t len, size_t cap, const json_t *v);

static void walk_members(struct walk *w, char *name, size_t len, size_t cap, const json_t *obj)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t k = strlen(key);
        if (len + k + 2 > cap)
            continue; /* a path longer than any report's: left out */
        size_t at = len;
        if (len)
            name[at++] = '.';
        memcpy(name + at, key, k + 1);
        walk_value(w, name, at + k, cap, v);
        name[len] = '\0';
    }
}

static void walk_value(struct walk *w, char *name, size_t len, size_t cap, const json_t *v)
{
    json_t *tuples = NULL;
    if (json_is_object(v))
        walk_members(w, name, len, cap, v);
    else if ((tuples = tuple_table(name, v))) {
        if (w->nested)
            w->nested(w->ctx, name, tuples);
        json_decref(tuples);
    } else if (pes_table_is(v)) {
        if (w->nested)
            w->nested(w->ctx, name, v);
    } else if (json_is_array(v) && json_array_size(v) == 0) {
        /* an empty array: a table without rows or a list without values;
         * either way nothing to write */
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            int k = snprintf(name + len, cap - len, "[%zu]", i);
            if (k > 0 && (size_t)k < cap - len)
                walk_value(w, name, len + (size_t)k, cap, e);
            name[len] = '\0';
        }
    } else if (w->column)
        w->column(w->ctx, name, v);
}

void pes_table_columns(const json_t *row, pes_table_column_fn column, pes_table_nested_fn nested,
                       void *ctx)
{
    char name[1024] = "";
    struct walk w = {column, nested, ctx};
    walk_members(&w, name, 0, sizeof name, row);
}

/* ------------------------------------------------------------ units */

/* Units by column name (the last part of a path, array indices removed):
 * exact names first, then endings. Declared only where the report's docs
 * say what a value measures; labels and ids have none. */
static const struct unit {
    const char *column, *unit;
} exact_units[] = {
    {"levels.line", "bytes"},    {"levels.size", "bytes"},    {"trace.bytes", "bytes"},
    {"bytes", "bytes"},          {"size", "bytes"},           {"ghz", "GHz"},
    {"accesses", "count"},       {"reads", "count"},          {"writes", "count"},
    {"records", "count"},        {"hits", "count"},           {"l1_misses", "count"},
    {"compulsory", "count"},     {"capacity", "count"},       {"coherence", "count"},
    {"conflict", "count"},       {"writebacks", "count"},     {"bb_executions", "count"},
    {"samples", "count"},        {"reuses", "count"},         {"loads", "count"},
    {"stores", "count"},         {"lost", "count"},           {"count", "count"},
    {"prd_cold", "count"},       {"crd_cold", "count"},       {"prd_mean", "lines"},
    {"crd_mean", "lines"},       {"hit_global", "ratio"},     {"hit_local", "ratio"},
    {"relative", "ratio"},       {"clipped_ranges", "count"}, {"skipped_blocks", "count"},
    {"comm_true", "count"},      {"comm_false", "count"},     {"mem_cycles", "cycles"},
    {"cpu_cycles", "cycles"},    {"total_cycles", "cycles"},  {"transfers", "count"},
    {"histogram.cold", "count"}, {"histogram.mean", "lines"}, {"distance", "lines"},
};
static const struct unit suffix_units[] = {
    {"_seconds", "s"},
    {"_cycles", "cycles"},
    {"_bytes", "bytes"},
};
/* Whole subtrees of counts. */
static const char *const count_parents[] = {"invalidations", "coherence_misses", "transfers", "ops",
                                            "l1_miss_classes"};

const char *pes_table_unit(const char *table, const char *column)
{
    char path[1100];
    snprintf(path, sizeof path, "%s.%s", table, column);
    /* indices out: "hits[0]" is measured as "hits" */
    char clean[1100];
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < sizeof clean; p++) {
        if (*p == '[') {
            while (*p && *p != ']')
                p++;
            if (!*p)
                break;
            continue;
        }
        clean[n++] = *p;
    }
    clean[n] = '\0';
    const char *dot = strrchr(clean, '.'), *last = dot ? dot + 1 : clean;
    for (size_t i = 0; i < sizeof exact_units / sizeof *exact_units; i++) {
        const char *c = exact_units[i].column;
        size_t k = strlen(c);
        if (strchr(c, '.')
                ? (n >= k && strcmp(clean + n - k, c) == 0 && (n == k || clean[n - k - 1] == '.'))
                : strcmp(last, c) == 0)
            return exact_units[i].unit;
    }
    for (size_t i = 0; i < sizeof suffix_units / sizeof *suffix_units; i++) {
        size_t k = strlen(suffix_units[i].column), m = strlen(last);
        if (m > k && strcmp(last + m - k, suffix_units[i].column) == 0)
            return suffix_units[i].unit;
    }
    for (size_t i = 0; i < sizeof count_parents / sizeof *count_parents; i++) {
        char part[64];
        snprintf(part, sizeof part, ".%s.", count_parents[i]);
        char wrapped[1104];
        snprintf(wrapped, sizeof wrapped, ".%s", clean);
        if (strstr(wrapped, part) && strcmp(last, "threads") != 0)
            return "count";
    }
    return NULL;
}

/* ------------------------------------------------------------ CSV */

void pes_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void pes_csv_value(FILE *out, const json_t *v)
{
    if (!v || json_is_null(v))
        return;
    if (json_is_string(v)) {
        pes_csv_field(out, json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    if (s)
        pes_csv_field(out, s);
    free(s);
}

/* Every row of one table name, from every parent row, before its columns
 * (their union, in the order first seen) are known. */
struct csv_table {
    char *name;
    json_t *rows;    /* array of flat objects: column -> value */
    json_t *columns; /* array of column names */
};

struct csv_dir {
    struct csv_table *t;
    size_t n, cap;
    json_t *summary; /* flat object: path -> value */
    int failed;
};

static struct csv_table *table_named(struct csv_dir *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->t[i].name, name) == 0)
            return &d->t[i];
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        struct csv_table *t = realloc(d->t, cap * sizeof *t);
        if (!t)
            return NULL;
        d->t = t;
        d->cap = cap;
    }
    struct csv_table *t = &d->t[d->n];
    *t = (struct csv_table){.name = strdup(name), .rows = json_array(), .columns = json_array()};
    if (!t->name || !t->rows || !t->columns) {
        free(t->name);
        json_decref(t->rows);
        json_decref(t->columns);
        return NULL;
    }
    d->n++;
    return t;
}

static void add_column(struct csv_table *t, const char *col)
{
    size_t i;
    json_t *c;
    json_array_foreach(t->columns, i, c) if (strcmp(json_string_value(c), col) == 0) return;
    json_array_append_new(t->columns, json_string(col));
}

struct row_ctx {
    struct csv_dir *d;
    size_t t;                  /* the table's index in d (nested tables may move the array) */
    json_t *flat;              /* the row being flattened: parents' keys, then its columns */
    const json_t *row;         /* the row as in the report */
    const char *name;          /* the table's name */
    const json_t *parent_keys; /* flat object of the parents' key columns */
};

static void add_table(struct csv_dir *d, const char *name, const json_t *table,
                      const json_t *parent_keys);

static void row_column(void *ctx, const char *column, const json_t *v)
{
    struct row_ctx *c = ctx;
    if (json_object_set(c->flat, column, (json_t *)v) < 0)
        c->d->failed = 1;
    add_column(&c->d->t[c->t], column);
}

static void row_nested(void *ctx, const char *name, const json_t *table)
{
    struct row_ctx *c = ctx;
    /* the nested table's rows carry this row's key (and its parents') */
    json_t *keys = json_deep_copy(c->parent_keys);
    const char *cols[32];
    size_t n = pes_table_key_columns(c->name, c->row, cols, 32);
    const json_t *first = json_array_get(table, 0);
    for (size_t i = 0; keys && i < n; i++) {
        char col[512];
        /* a parent key the child rows also have is named after its table */
        if (json_object_get(keys, cols[i]) || json_object_get(first, cols[i]))
            snprintf(col, sizeof col, "%s.%s", c->name, cols[i]);
        else
            snprintf(col, sizeof col, "%s", cols[i]);
        json_object_set(keys, col, json_object_get(c->row, cols[i]));
    }
    char full[1024];
    snprintf(full, sizeof full, "%s.%s", c->name, name);
    if (keys)
        add_table(c->d, full, table, keys);
    else
        c->d->failed = 1;
    json_decref(keys);
}

static void add_table(struct csv_dir *d, const char *name, const json_t *table,
                      const json_t *parent_keys)
{
    struct csv_table *t = table_named(d, name);
    if (!t) {
        d->failed = 1;
        return;
    }
    size_t ti = (size_t)(t - d->t);
    const char *pk;
    json_t *pv;
    json_object_foreach((json_t *)parent_keys, pk, pv) add_column(t, pk);
    size_t i;
    json_t *row;
    json_array_foreach(table, i, row)
    {
        if (!json_is_object(row))
            continue;
        json_t *flat = json_deep_copy(parent_keys);
        if (!flat || json_array_append_new(d->t[ti].rows, flat) < 0) {
            d->failed = 1;
            return;
        }
        struct row_ctx c = {
            .d = d, .t = ti, .flat = flat, .row = row, .name = name, .parent_keys = parent_keys};
        pes_table_columns(row, row_column, NULL, &c); /* the row's columns first: */
        pes_table_columns(row, NULL, row_nested, &c); /* then the tables inside it */
    }
}

/* The root's scalars outside tables go to summary.csv (path, value); its
 * tables are the files. */
static void summary_column(void *ctx, const char *column, const json_t *v)
{
    struct csv_dir *d = ctx;
    if (json_object_set(d->summary, column, (json_t *)v) < 0)
        d->failed = 1;
}

static void summary_nested(void *ctx, const char *name, const json_t *table)
{
    struct csv_dir *d = ctx;
    json_t *none = json_object();
    if (none)
        add_table(d, name, table, none);
    else
        d->failed = 1;
    json_decref(none);
}

/* "configs.simulation.sites" -> "configs.simulation.sites.csv"; a name that
 * could leave the directory (a report's keys are ours, but a JSON report
 * given to --diff is anyone's) has its '/' replaced. */
static int write_file(const char *dir, const char *name, void (*body)(FILE *, const void *),
                      const void *arg, char *msg, size_t n)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/", dir);
    size_t at = k > 0 ? (size_t)k : 0;
    for (const char *p = name; *p && at + 5 < sizeof path; p++)
        path[at++] = *p == '/' ? '_' : *p;
    snprintf(path + at, sizeof path - at, ".csv");
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, n, "--csv-dir: %s: %s", path, strerror(errno));
        return -1;
    }
    body(f, arg);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(msg, n, "--csv-dir: %s: write failed", path);
        return -1;
    }
    return 0;
}

static void header_cell(FILE *out, const char *table, const char *column)
{
    const char *unit = pes_table_unit(table, column);
    if (!unit) {
        pes_csv_field(out, column);
        return;
    }
    char cell[1200];
    snprintf(cell, sizeof cell, "%s [%s]", column, unit);
    pes_csv_field(out, cell);
}

static void table_body(FILE *out, const void *arg)
{
    const struct csv_table *t = arg;
    size_t i, r;
    json_t *c, *row;
    json_array_foreach(t->columns, i, c)
    {
        if (i)
            fputc(',', out);
        /* a parent's key column is measured in its own table */
        const char *col = json_string_value(c);
        header_cell(out, t->name, col);
    }
    fputs("\r\n", out);
    json_array_foreach(t->rows, r, row)
    {
        json_array_foreach(t->columns, i, c)
        {
            if (i)
                fputc(',', out);
            pes_csv_value(out, json_object_get(row, json_string_value(c)));
        }
        fputs("\r\n", out);
    }
}

static void summary_body(FILE *out, const void *arg)
{
    const json_t *summary = arg;
    const char *k;
    json_t *v;
    fputs("path,value,unit\r\n", out);
    json_object_foreach((json_t *)summary, k, v)
    {
        pes_csv_field(out, k);
        fputc(',', out);
        pes_csv_value(out, v);
        fputc(',', out);
        const char *dot = strchr(k, '.');
        char table[512];
        snprintf(table, sizeof table, "%.*s", dot ? (int)(dot - k) : 0, k);
        const char *unit = pes_table_unit(table, dot ? dot + 1 : k);
        fputs(unit ? unit : "", out);
        fputs("\r\n", out);
    }
}

int pes_report_write_csv_dir(const json_t *j, const char *dir, char *msg, size_t n)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        snprintf(msg, n, "--csv-dir %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, n, "--csv-dir %s: not a directory", dir);
        return -1;
    }
    struct csv_dir d = {.summary = json_object()};
    if (!d.summary)
        d.failed = 1;
    else
        pes_table_columns(j, summary_column, summary_nested, &d);
    int rc = 0;
    if (d.failed) {
        snprintf(msg, n, "--csv-dir %s: out of memory", dir);
        rc = -1;
    }
    if (rc == 0)
        rc = write_file(dir, "summary", summary_body, d.summary, msg, n);
    for (size_t i = 0; i < d.n; i++) {
        if (rc == 0)
            rc = write_file(dir, d.t[i].name, table_body, &d.t[i], msg, n);
        free(d.t[i].name);
        json_decref(d.t[i].rows);
        json_decref(d.t[i].columns);
    }
    free(d.t);
    json_decref(d.summary);
    return rc;
}
