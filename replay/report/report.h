/*
 * report.h — the format-neutral report: a tree of named values that analyses
 * fill (their publish step) and writers format (text, JSON, CSV).
 *
 * A node is an object (named children, in insertion order), an array
 * (unnamed children) or a value: an unsigned or signed integer, a double
 * with the printf format the JSON report uses for it, a boolean, a string
 * (copied) or null (a value that does not apply). The JSON writer prints the tree as it is, so the insertion order
 * is the report's key order (docs/replay.schema.json). A node marked
 * PES_R_TEXT_ONLY is a display aid (a share, a label) that only the text and
 * CSV writers read.
 *
 * Writers only look values up and format them: a writer that needs a figure
 * the tree lacks is wrong, not the analysis.
 */
#ifndef PES_REPLAY_REPORT_H
#define PES_REPLAY_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

enum pes_rnode_kind {
    PES_R_OBJECT,
    PES_R_ARRAY,
    PES_R_U64,
    PES_R_I64,
    PES_R_F64,
    PES_R_BOOL,
    PES_R_STR,
    PES_R_NULL
};
enum { PES_R_TEXT_ONLY = 1 };

struct pes_rnode;
struct pes_report;

/* An empty report whose root is an object; NULL without memory. Building
 * calls never fail: without memory the report remembers it and
 * pes_report_failed says so (the writers then refuse). */
struct pes_report *pes_report_create(void);
void pes_report_destroy(struct pes_report *r);
int pes_report_failed(const struct pes_report *r);
struct pes_rnode *pes_report_root(struct pes_report *r);
/* The root, for reading. */
const struct pes_rnode *pes_report_tree(const struct pes_report *r);

/* Children of an object (key) or an array (key NULL). Each returns the new node. */
struct pes_rnode *pes_r_object(struct pes_report *r, struct pes_rnode *parent, const char *key);
struct pes_rnode *pes_r_array(struct pes_report *r, struct pes_rnode *parent, const char *key);
struct pes_rnode *pes_r_u64(struct pes_report *r, struct pes_rnode *parent, const char *key,
                            uint64_t v);
struct pes_rnode *pes_r_i64(struct pes_report *r, struct pes_rnode *parent, const char *key,
                            int64_t v);
/* fmt: the JSON rendering, e.g. "%.6g"; NaN and infinities print as null. */
struct pes_rnode *pes_r_f64(struct pes_report *r, struct pes_rnode *parent, const char *key,
                            double v, const char *fmt);
struct pes_rnode *pes_r_bool(struct pes_report *r, struct pes_rnode *parent, const char *key,
                             int v);
struct pes_rnode *pes_r_str(struct pes_report *r, struct pes_rnode *parent, const char *key,
                            const char *s);
struct pes_rnode *pes_r_null(struct pes_report *r, struct pes_rnode *parent, const char *key);
/* Marks n (PES_R_TEXT_ONLY); returns n. */
struct pes_rnode *pes_r_flag(struct pes_rnode *n, unsigned flags);

/* ------------------------------------------------------------ reading (writers) */

enum pes_rnode_kind pes_r_kind(const struct pes_rnode *n);
unsigned pes_r_flags(const struct pes_rnode *n);
const char *pes_r_key(const struct pes_rnode *n);
size_t pes_r_count(const struct pes_rnode *n); /* children */
const struct pes_rnode *pes_r_at(const struct pes_rnode *n, size_t i);
/* The child named key of an object (NULL if none or n is NULL). */
const struct pes_rnode *pes_r_get(const struct pes_rnode *n, const char *key);
/* Values, 0 / "" / NaN if missing or of another kind (numbers convert). */
uint64_t pes_r_u(const struct pes_rnode *n);
int64_t pes_r_i(const struct pes_rnode *n);
double pes_r_f(const struct pes_rnode *n);
const char *pes_r_s(const struct pes_rnode *n);
/* Shorthands for pes_r_u(pes_r_get(obj, key)) and so on. */
uint64_t pes_r_get_u(const struct pes_rnode *obj, const char *key);
double pes_r_get_f(const struct pes_rnode *obj, const char *key);
const char *pes_r_get_s(const struct pes_rnode *obj, const char *key);

/* ------------------------------------------------------------ packed */

/* Node n and its subtree as bytes (host byte order: processes of one build,
 * pes-replay-mpi), malloc'd, *len its size; NULL without memory. */
void *pes_report_pack(const struct pes_rnode *n, size_t *len);
/* A packed node added as the last child of parent (an object or array of
 * r): NULL, or what is wrong with buf (cut short, malformed, no memory),
 * after which r is marked failed (part of the node may have been added). */
const char *pes_report_unpack(struct pes_report *r, struct pes_rnode *parent, const void *buf,
                              size_t len);

/* ------------------------------------------------------------ writers */

/* The whole tree as one JSON line (text-only nodes left out), through jansson
 * (report.c says how strings, doubles and large integers are written). */
int pes_report_write_json(FILE *out, const struct pes_report *r);
/* The tree as the jansson value that pes_report_write_json prints (a new
 * reference), NULL if the report is incomplete or without memory. */
json_t *pes_report_to_json(const struct pes_report *r);
/* j as one JSON line, as pes_report_write_json prints a report; 0 or -1. */
#define PES_REPORT_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
int pes_report_dump_json(FILE *out, const json_t *j);

#endif
