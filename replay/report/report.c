/*
 * report.c — the report tree (report.h) and its JSON rendering.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_util.h"

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
    const char *fmt;              /* F64: JSON format */
    struct pes_rnode **child;
    size_t n, cap;
};

struct pes_report {
    struct pes_rnode root;
    int failed;
};

struct pes_report *pes_report_create(void) {
    struct pes_report *r = calloc(1, sizeof *r);
    if (r) r->root.kind = PES_R_OBJECT;
    return r;
}

static void node_free(struct pes_rnode *n) {
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->child[i]);
        free(n->child[i]);
    }
    free(n->child);
    free(n->key);
    if (n->kind == PES_R_STR) free(n->v.s);
}

void pes_report_destroy(struct pes_report *r) {
    if (!r) return;
    node_free(&r->root);
    free(r);
}

int pes_report_failed(const struct pes_report *r) { return r->failed; }
struct pes_rnode *pes_report_root(struct pes_report *r) { return &r->root; }
const struct pes_rnode *pes_report_tree(const struct pes_report *r) { return &r->root; }

/* A new child of parent; NULL (and r->failed) without memory or parent. The
 * calls below then do nothing: a report built without memory is refused. */
static struct pes_rnode *add(struct pes_report *r, struct pes_rnode *parent, const char *key,
                             enum pes_rnode_kind kind) {
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

struct pes_rnode *pes_r_object(struct pes_report *r, struct pes_rnode *p, const char *key) {
    return add(r, p, key, PES_R_OBJECT);
}
struct pes_rnode *pes_r_array(struct pes_report *r, struct pes_rnode *p, const char *key) {
    return add(r, p, key, PES_R_ARRAY);
}
struct pes_rnode *pes_r_u64(struct pes_report *r, struct pes_rnode *p, const char *key, uint64_t v) {
    struct pes_rnode *n = add(r, p, key, PES_R_U64);
    if (n) n->v.u = v;
    return n;
}
struct pes_rnode *pes_r_i64(struct pes_report *r, struct pes_rnode *p, const char *key, int64_t v) {
    struct pes_rnode *n = add(r, p, key, PES_R_I64);
    if (n) n->v.i = v;
    return n;
}
struct pes_rnode *pes_r_f64(struct pes_report *r, struct pes_rnode *p, const char *key, double v, const char *fmt) {
    struct pes_rnode *n = add(r, p, key, PES_R_F64);
    if (n) {
        n->v.f = v;
        n->fmt = fmt;
    }
    return n;
}
struct pes_rnode *pes_r_bool(struct pes_report *r, struct pes_rnode *p, const char *key, int v) {
    struct pes_rnode *n = add(r, p, key, PES_R_BOOL);
    if (n) n->v.u = v != 0;
    return n;
}
struct pes_rnode *pes_r_str(struct pes_report *r, struct pes_rnode *p, const char *key, const char *s) {
    struct pes_rnode *n = add(r, p, key, PES_R_STR);
    if (n && !(n->v.s = strdup(s ? s : ""))) {
        n->kind = PES_R_U64;   /* freed as a number */
        r->failed = 1;
    }
    return n;
}
struct pes_rnode *pes_r_null(struct pes_report *r, struct pes_rnode *p, const char *key) {
    return add(r, p, key, PES_R_NULL);
}
struct pes_rnode *pes_r_flag(struct pes_rnode *n, unsigned flags) {
    if (n) n->flags |= flags;
    return n;
}

enum pes_rnode_kind pes_r_kind(const struct pes_rnode *n) { return n ? n->kind : PES_R_OBJECT; }
unsigned pes_r_flags(const struct pes_rnode *n) { return n ? n->flags : 0; }
const char *pes_r_key(const struct pes_rnode *n) { return n && n->key ? n->key : ""; }
size_t pes_r_count(const struct pes_rnode *n) { return n ? n->n : 0; }
const struct pes_rnode *pes_r_at(const struct pes_rnode *n, size_t i) { return n && i < n->n ? n->child[i] : NULL; }

const struct pes_rnode *pes_r_get(const struct pes_rnode *n, const char *key) {
    for (size_t i = 0; n && i < n->n; i++)
        if (n->child[i]->key && strcmp(n->child[i]->key, key) == 0) return n->child[i];
    return NULL;
}

uint64_t pes_r_u(const struct pes_rnode *n) {
    if (!n) return 0;
    switch (n->kind) {
    case PES_R_U64:
    case PES_R_BOOL: return n->v.u;
    case PES_R_I64: return (uint64_t)n->v.i;
    case PES_R_F64: return (uint64_t)n->v.f;
    default: return 0;
    }
}
int64_t pes_r_i(const struct pes_rnode *n) { return n && n->kind == PES_R_I64 ? n->v.i : (int64_t)pes_r_u(n); }
double pes_r_f(const struct pes_rnode *n) {
    if (!n) return NAN;
    switch (n->kind) {
    case PES_R_F64: return n->v.f;
    case PES_R_I64: return (double)n->v.i;
    case PES_R_U64:
    case PES_R_BOOL: return (double)n->v.u;
    default: return NAN;
    }
}
const char *pes_r_s(const struct pes_rnode *n) { return n && n->kind == PES_R_STR ? n->v.s : ""; }
uint64_t pes_r_get_u(const struct pes_rnode *o, const char *key) { return pes_r_u(pes_r_get(o, key)); }
double pes_r_get_f(const struct pes_rnode *o, const char *key) { return pes_r_f(pes_r_get(o, key)); }
const char *pes_r_get_s(const struct pes_rnode *o, const char *key) { return pes_r_s(pes_r_get(o, key)); }

/* ------------------------------------------------------------ JSON */

static void json_node(FILE *out, const struct pes_rnode *n) {
    switch (n->kind) {
    case PES_R_OBJECT:
    case PES_R_ARRAY: {
        int obj = n->kind == PES_R_OBJECT, first = 1;
        fputc(obj ? '{' : '[', out);
        for (size_t i = 0; i < n->n; i++) {
            const struct pes_rnode *c = n->child[i];
            if (c->flags & PES_R_TEXT_ONLY) continue;
            if (!first) fputc(',', out);
            first = 0;
            if (obj) {
                pes_json_string(out, c->key);
                fputc(':', out);
            }
            json_node(out, c);
        }
        fputc(obj ? '}' : ']', out);
        break;
    }
    case PES_R_U64: fprintf(out, "%" PRIu64, n->v.u); break;
    case PES_R_I64: fprintf(out, "%" PRId64, n->v.i); break;
    case PES_R_F64:
        if (isnan(n->v.f) || isinf(n->v.f)) fputs("null", out);
        else fprintf(out, n->fmt ? n->fmt : "%.6g", n->v.f);
        break;
    case PES_R_BOOL: fputs(n->v.u ? "true" : "false", out); break;
    case PES_R_STR: pes_json_string(out, n->v.s); break;
    case PES_R_NULL: fputs("null", out); break;
    }
}

int pes_report_write_json(FILE *out, const struct pes_report *r) {
    if (r->failed) return -1;
    json_node(out, &r->root);
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}
