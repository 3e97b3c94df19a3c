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
    char **fmts; /* the formats of unpacked doubles (a node only points at its format) */
    size_t n_fmts;
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
    for (size_t i = 0; i < r->n_fmts; i++)
        free(r->fmts[i]);
    free(r->fmts);
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

/* ------------------------------------------------------------ packed
 * A node: kind (1 byte), flags (4), key, then by kind: a u64, i64 or bool
 * (8 bytes), a double (8) and its format, a string, or the children's count
 * (8) and the children. Strings (key, format, value) are a 4-byte length,
 * UINT32_MAX for none, then the bytes. Host byte order: the processes of one
 * build on one machine type (pes-replay-mpi). */

struct packer {
    unsigned char *buf;
    size_t n, cap;
    int failed;
};

static void put(struct packer *p, const void *v, size_t n)
{
    if (p->failed)
        return;
    if (p->n + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->n + n)
            cap *= 2;
        unsigned char *b = realloc(p->buf, cap);
        if (!b) {
            p->failed = 1;
            return;
        }
        p->buf = b;
        p->cap = cap;
    }
    memcpy(p->buf + p->n, v, n);
    p->n += n;
}

static void put_str(struct packer *p, const char *s)
{
    uint32_t len = s ? (uint32_t)strlen(s) : UINT32_MAX;
    put(p, &len, sizeof len);
    if (s)
        put(p, s, len);
}

static void pack_node(struct packer *p, const struct pes_rnode *n)
{
    uint8_t kind = (uint8_t)n->kind;
    uint32_t flags = n->flags;
    put(p, &kind, 1);
    put(p, &flags, sizeof flags);
    put_str(p, n->key);
    switch (n->kind) {
    case PES_R_OBJECT:
    case PES_R_ARRAY: {
        uint64_t count = n->n;
        put(p, &count, sizeof count);
        for (size_t i = 0; i < n->n; i++)
            pack_node(p, n->child[i]);
        break;
    }
    case PES_R_F64:
        put(p, &n->v.f, sizeof n->v.f);
        put_str(p, n->fmt);
        break;
    case PES_R_STR:
        put_str(p, n->v.s);
        break;
    case PES_R_NULL:
        break;
    default: /* U64, I64, BOOL */
        put(p, &n->v.u, sizeof n->v.u);
    }
}

void *pes_report_pack(const struct pes_rnode *n, size_t *len)
{
    struct packer p = {0};
    pack_node(&p, n);
    if (p.failed) {
        free(p.buf);
        return NULL;
    }
    *len = p.n;
    return p.buf ? p.buf : malloc(1);
}

struct unpacker {
    const unsigned char *at, *end;
    const char *why; /* the first defect, or NULL */
};

static int take(struct unpacker *u, void *v, size_t n)
{
    if ((size_t)(u->end - u->at) < n) {
        u->why = "cut short";
        return -1;
    }
    memcpy(v, u->at, n);
    u->at += n;
    return 0;
}

/* A string as a new malloc'd copy in *s (NULL: none); 0 or -1. */
static int take_str(struct unpacker *u, char **s)
{
    uint32_t len;
    *s = NULL;
    if (take(u, &len, sizeof len) < 0)
        return -1;
    if (len == UINT32_MAX)
        return 0;
    if ((size_t)(u->end - u->at) < len) {
        u->why = "a string cut short";
        return -1;
    }
    if (memchr(u->at, '\0', len)) {
        u->why = "a string with a NUL byte";
        return -1;
    }
    if (!(*s = malloc((size_t)len + 1))) {
        u->why = "out of memory";
        return -1;
    }
    memcpy(*s, u->at, len);
    (*s)[len] = '\0';
    u->at += len;
    return 0;
}

/* The report's copy of fmt (one per distinct format), or NULL. */
static const char *intern_fmt(struct pes_report *r, char *fmt)
{
    for (size_t i = 0; i < r->n_fmts; i++)
        if (!strcmp(r->fmts[i], fmt)) {
            free(fmt);
            return r->fmts[i];
        }
    char **f = realloc(r->fmts, (r->n_fmts + 1) * sizeof *f);
    if (!f) {
        free(fmt);
        return NULL;
    }
    r->fmts = f;
    return r->fmts[r->n_fmts++] = fmt;
}

/* A double's format must print one double and nothing else that printf reads. */
static int fmt_ok(const char *fmt)
{
    int convs = 0;
    for (const char *c = fmt; *c; c++) {
        if (*c != '%')
            continue;
        if (c[1] == '%') {
            c++;
            continue;
        }
        c++;
        while (*c && strchr("0123456789.-+ #", *c))
            c++;
        if (!*c || !strchr("eEfFgG", *c))
            return 0;
        convs++;
    }
    return convs == 1;
}

static int unpack_node(struct pes_report *r, struct pes_rnode *parent, struct unpacker *u,
                       int depth)
{
    uint8_t kind;
    uint32_t flags;
    char *key = NULL;
    if (depth > 64) {
        u->why = "nested too deeply";
        return -1;
    }
    if (take(u, &kind, 1) < 0 || take(u, &flags, sizeof flags) < 0 || take_str(u, &key) < 0)
        return -1;
    if (kind > PES_R_NULL || (parent->kind == PES_R_OBJECT) != (key != NULL)) {
        u->why = kind > PES_R_NULL ? "an unknown node kind" : "a key where none belongs";
        free(key);
        return -1;
    }
    struct pes_rnode *n = add(r, parent, key, (enum pes_rnode_kind)kind);
    free(key);
    if (!n) {
        u->why = "out of memory";
        return -1;
    }
    n->flags = flags;
    switch (n->kind) {
    case PES_R_OBJECT:
    case PES_R_ARRAY: {
        uint64_t count;
        if (take(u, &count, sizeof count) < 0)
            return -1;
        for (uint64_t i = 0; i < count; i++) /* each child takes at least 9 bytes */
            if (unpack_node(r, n, u, depth + 1) < 0)
                return -1;
        return 0;
    }
    case PES_R_F64: {
        char *fmt;
        if (take(u, &n->v.f, sizeof n->v.f) < 0 || take_str(u, &fmt) < 0)
            return -1;
        if (fmt && !fmt_ok(fmt)) {
            free(fmt);
            u->why = "a number format that is not one double's";
            return -1;
        }
        if (fmt && !(n->fmt = intern_fmt(r, fmt))) {
            u->why = "out of memory";
            return -1;
        }
        return 0;
    }
    case PES_R_STR: {
        char *s;
        if (take_str(u, &s) < 0)
            return -1;
        n->v.s = s ? s : strdup("");
        if (!n->v.s) {
            n->kind = PES_R_U64;
            u->why = "out of memory";
            return -1;
        }
        return 0;
    }
    case PES_R_NULL:
        return 0;
    default:
        if (take(u, &n->v.u, sizeof n->v.u) < 0)
            return -1;
        if (n->kind == PES_R_BOOL && n->v.u > 1) {
            u->why = "a boolean that is neither 0 nor 1";
            return -1;
        }
        return 0;
    }
}

const char *pes_report_unpack(struct pes_report *r, struct pes_rnode *parent, const void *buf,
                              size_t len)
{
    struct unpacker u = {.at = buf, .end = (const unsigned char *)buf + len};
    if (!parent || (parent->kind != PES_R_OBJECT && parent->kind != PES_R_ARRAY))
        return "no object or array to add to";
    if (unpack_node(r, parent, &u, 0) < 0) {
        r->failed = 1;
        return u.why ? u.why : "malformed";
    }
    if (u.at != u.end) {
        r->failed = 1;
        return "bytes after the node";
    }
    return NULL;
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
