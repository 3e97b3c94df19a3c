/*
 * report.c — the report tree (report.h) and its JSON rendering.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_util.h"
#include "utf8.h"

struct pes_rnode {
    enum pes_rnode_kind kind;
    unsigned flags;
    char *key;
    union {
        uint64_t u;
        int64_t i;
        double f;
        char *s;
    } v;
    const char *fmt; /* F64: JSON format */
    struct pes_rnode **child;
    size_t n, cap;
};

struct pes_report {
    struct pes_rnode root;
    int failed;
};

struct pes_report *pes_report_create(void)
{
    struct pes_report *r = calloc(1, sizeof *r);
    if (r)
        r->root.kind = PES_R_OBJECT;
    return r;
}

static void node_free(struct pes_rnode *n)
{
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->child[i]);
        free(n->child[i]);
    }
    free(n->child);
    free(n->key);
    if (n->kind == PES_R_STR)
        free(n->v.s);
}

void pes_report_destroy(struct pes_report *r)
{
    if (!r)
        return;
    node_free(&r->root);
    free(r);
}

int pes_report_failed(const struct pes_report *r)
{
    return r->failed;
}
struct pes_rnode *pes_report_root(struct pes_report *r)
{
    return &r->root;
}
const struct pes_rnode *pes_report_tree(const struct pes_report *r)
{
    return &r->root;
}

/* A new child of parent; NULL (and r->failed) without memory or parent. The
 * calls below then do nothing: a report built without memory is refused. */
static struct pes_rnode *add(struct pes_report *r, struct pes_rnode *parent, const char *key,
                             enum pes_rnode_kind kind)
{
    if (!parent) {
        r->failed = 1;
        return NULL;
    }
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        struct pes_rnode **c = realloc(parent->child, cap * sizeof *c);
        if (!c) {
            r->failed = 1;
            return NULL;
        }
        parent->child = c;
        parent->cap = cap;
    }
    struct pes_rnode *n = calloc(1, sizeof *n);
    if (!n || (key && !(n->key = strdup(key)))) {
        free(n);
        r->failed = 1;
        return NULL;
    }
    n->kind = kind;
    parent->child[parent->n++] = n;
    return n;
}

struct pes_rnode *pes_r_object(struct pes_report *r, struct pes_rnode *p, const char *key)
{
    return add(r, p, key, PES_R_OBJECT);
}
struct pes_rnode *pes_r_array(struct pes_report *r, struct pes_rnode *p, const char *key)
{
    return add(r, p, key, PES_R_ARRAY);
}
struct pes_rnode *pes_r_u64(struct pes_report *r, struct pes_rnode *p, const char *key, uint64_t v)
{
    struct pes_rnode *n = add(r, p, key, PES_R_U64);
    if (n)
        n->v.u = v;
    return n;
}
struct pes_rnode *pes_r_i64(struct pes_report *r, struct pes_rnode *p, const char *key, int64_t v)
{
    struct pes_rnode *n = add(r, p, key, PES_R_I64);
    if (n)
        n->v.i = v;
    return n;
}
struct pes_rnode *pes_r_f64(struct pes_report *r, struct pes_rnode *p, const char *key, double v,
                            const char *fmt)
{
    struct pes_rnode *n = add(r, p, key, PES_R_F64);
    if (n) {
        n->v.f = v;
        n->fmt = fmt;
    }
    return n;
}
struct pes_rnode *pes_r_bool(struct pes_report *r, struct pes_rnode *p, const char *key, int v)
{
    struct pes_rnode *n = add(r, p, key, PES_R_BOOL);
    if (n)
        n->v.u = v != 0;
    return n;
}
struct pes_rnode *pes_r_str(struct pes_report *r, struct pes_rnode *p, const char *key,
                            const char *s)
{
    struct pes_rnode *n = add(r, p, key, PES_R_STR);
    if (n && !(n->v.s = strdup(s ? s : ""))) {
        n->kind = PES_R_U64; /* freed as a number */
        r->failed = 1;
    }
    return n;
}
struct pes_rnode *pes_r_null(struct pes_report *r, struct pes_rnode *p, const char *key)
{
    return add(r, p, key, PES_R_NULL);
}
struct pes_rnode *pes_r_flag(struct pes_rnode *n, unsigned flags)
{
    if (n)
        n->flags |= flags;
    return n;
}

enum pes_rnode_kind pes_r_kind(const struct pes_rnode *n)
{
    return n ? n->kind : PES_R_OBJECT;
}
unsigned pes_r_flags(const struct pes_rnode *n)
{
    return n ? n->flags : 0;
}
const char *pes_r_key(const struct pes_rnode *n)
{
    return n && n->key ? n->key : "";
}
size_t pes_r_count(const struct pes_rnode *n)
{
    return n ? n->n : 0;
}
const struct pes_rnode *pes_r_at(const struct pes_rnode *n, size_t i)
{
    return n && i < n->n ? n->child[i] : NULL;
}

const struct pes_rnode *pes_r_get(const struct pes_rnode *n, const char *key)
{
    for (size_t i = 0; n && i < n->n; i++)
        if (n->child[i]->key && strcmp(n->child[i]->key, key) == 0)
            return n->child[i];
    return NULL;
}

uint64_t pes_r_u(const struct pes_rnode *n)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case PES_R_U64:
    case PES_R_BOOL:
        return n->v.u;
    case PES_R_I64:
        return (uint64_t)n->v.i;
    case PES_R_F64:
        return (uint64_t)n->v.f;
    default:
        return 0;
    }
}
int64_t pes_r_i(const struct pes_rnode *n)
{
    return n && n->kind == PES_R_I64 ? n->v.i : (int64_t)pes_r_u(n);
}
double pes_r_f(const struct pes_rnode *n)
{
    if (!n)
        return NAN;
    switch (n->kind) {
    case PES_R_F64:
        return n->v.f;
    case PES_R_I64:
        return (double)n->v.i;
    case PES_R_U64:
    case PES_R_BOOL:
        return (double)n->v.u;
    default:
        return NAN;
    }
}
const char *pes_r_s(const struct pes_rnode *n)
{
    return n && n->kind == PES_R_STR ? n->v.s : "";
}
uint64_t pes_r_get_u(const struct pes_rnode *o, const char *key)
{
    return pes_r_u(pes_r_get(o, key));
}
double pes_r_get_f(const struct pes_rnode *o, const char *key)
{
    return pes_r_f(pes_r_get(o, key));
}
const char *pes_r_get_s(const struct pes_rnode *o, const char *key)
{
    return pes_r_s(pes_r_get(o, key));
}

/* ------------------------------------------------------------ JSON
 * Written through jansson: it escapes strings and never prints an invalid
 * number. What jansson would refuse or print differently is settled here:
 *  - strings (and keys) must be UTF-8: each byte of an invalid sequence
 *    becomes U+FFFD (a trace's command line or a file name can hold any bytes);
 *  - NaN and infinities are null;
 *  - a double is first rounded through its node's printf format and printed
 *    with 15 significant digits, which spells a value of up to 15 digits
 *    again exactly (the digits the format kept, without trailing zeros,
 *    exponents as "1e-5"); an integral value below 2^53 is an integer;
 *  - jansson integers are int64: a u64 above INT64_MAX (none of the
 *    report's counts come near) is written as a real, the nearest double.
 */

static json_t *json_str_utf8(const char *s)
{
    char *fixed = pes_report_utf8(s);
    json_t *j = fixed ? json_string(fixed) : NULL;
    free(fixed);
    return j;
}

static json_t *json_f64(double v, const char *fmt)
{
    if (isnan(v) || isinf(v))
        return json_null();
    char buf[512];
    snprintf(buf, sizeof buf, fmt ? fmt : "%.6g", v);
    double r = strtod(buf, NULL);
    /* integral: as the format printed it ("46400", not jansson's "46400.0") */
    if (r == floor(r) && fabs(r) < 0x1p53)
        return json_integer((json_int_t)r);
    /* the value the printed 15 digits read back as (a "%.0f" count above
     * 2^53 has more): a report diffed from its trace and from its JSON file
     * then holds the same doubles */
    snprintf(buf, sizeof buf, "%.15g", r);
    return json_real(strtod(buf, NULL));
}

static json_t *json_u64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char buf[64]; /* as json_f64: the double that the printed digits read back as */
    snprintf(buf, sizeof buf, "%.15g", (double)v);
    return json_real(strtod(buf, NULL));
}

/* n as a new jansson value, text-only children left out; NULL without memory. */
static json_t *to_json(const struct pes_rnode *n)
{
    switch (n->kind) {
    case PES_R_OBJECT:
    case PES_R_ARRAY: {
        int obj = n->kind == PES_R_OBJECT;
        json_t *j = obj ? json_object() : json_array();
        for (size_t i = 0; j && i < n->n; i++) {
            const struct pes_rnode *c = n->child[i];
            if (c->flags & PES_R_TEXT_ONLY)
                continue;
            json_t *v = to_json(c);
            int rc = -1;
            if (v && obj) {
                char *key = pes_report_utf8(c->key);
                rc = key ? json_object_set_new(j, key, v) : (json_decref(v), -1);
                free(key);
            } else if (v)
                rc = json_array_append_new(j, v);
            if (rc < 0) {
                json_decref(j);
                j = NULL;
            }
        }
        return j;
    }
    case PES_R_U64:
        return json_u64(n->v.u);
    case PES_R_I64:
        return json_integer((json_int_t)n->v.i);
    case PES_R_F64:
        return json_f64(n->v.f, n->fmt);
    case PES_R_BOOL:
        return json_boolean(n->v.u);
    case PES_R_STR:
        return json_str_utf8(n->v.s);
    case PES_R_NULL:
        return json_null();
    }
    return NULL;
}

json_t *pes_report_to_json(const struct pes_report *r)
{
    return r->failed ? NULL : to_json(&r->root);
}

int pes_report_dump_json(FILE *out, const json_t *j)
{
    if (!j || json_dumpf(j, out, PES_REPORT_JSON_FLAGS) < 0)
        return -1;
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}

int pes_report_write_json(FILE *out, const struct pes_report *r)
{
    json_t *j = pes_report_to_json(r);
    int rc = pes_report_dump_json(out, j);
    json_decref(j);
    return rc;
}
