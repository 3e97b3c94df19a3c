/*
 * report_util.h — formatting shared by the report writers.
 */
#ifndef PES_REPLAY_REPORT_UTIL_H
#define PES_REPLAY_REPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pes/trace.h"
#include "report.h"

/* A level where the model (SDCM) and the simulation disagree on the local
 * hit rate by more than REPORT_DISAGREE_PP points: its rates. Set conflicts
 * are named as the cause (assumptions.c) from REPORT_CONFLICT_SHARE of the
 * level's misses on. */
#define REPORT_DISAGREE_PP    5.0
#define REPORT_CONFLICT_SHARE 0.25
struct report_disagreement {
    unsigned level; /* 1 = L1 */
    double model, sim;
};
/* The disagreements of configuration c (a "configs" entry with "model" and
 * "simulation"), up to cap of them, L1 first; their number. */
size_t report_model_disagreements(const struct pes_rnode *c, struct report_disagreement *out,
                                  size_t cap);

/* The "all_sites" row of a simulation with the most conflict misses at
 * level index l (0 = L1); NULL when no site has any. */
const struct pes_rnode *report_top_conflict_site(const struct pes_rnode *sim, size_t l);

/* 1234567 -> "1,234,567" */
void report_count(char *buf, size_t len, uint64_t v);
/* 32768 -> "32 KiB" */
void report_bytes(char *buf, size_t len, uint64_t v);
/* 0.0123 -> "12.3 ms" */
void report_seconds(char *buf, size_t len, double s);
/* "file.c:12:5 load fn", or "site 17 load fn" without a debug location. */
void report_site_label(char *buf, size_t len, const struct pes_site *s, uint32_t id);
/* Text tables keep their columns whatever a name's length: s in exactly
 * width columns (UTF-8 code points), padded with spaces, or, when longer,
 * its start and end around "..." (the middle of a long C++ name is its
 * template arguments and namespaces; JSON and HTML keep the whole name). */
void report_fit(char *buf, size_t len, const char *s, int width);
/* The widest label column a text table gives its names. */
enum { REPORT_LABEL_MAX = 80 };
/* Thread numbers (a report array) as a bitmask (bit t%64). */
uint64_t report_thread_mask(const struct pes_rnode *threads);
/* Threads of a bitmask (bit t%64) as "T0,T3". */
void report_thread_list(char *buf, size_t len, uint64_t mask);
/* s (from a trace, an input file or the command line) with what a terminal
 * could act on escaped, for the text reports: pes_escape_text_tmp (valid for
 * up to 4 per printf). */
const char *report_safe(const char *s);
/* What a text report prints for a part of the tree it has no layout for (a
 * new analysis's): a value as a count, number, string, list or
 * "name value" pairs; an array of objects as a table, one column per key of
 * its first row. */
void report_print_value(FILE *out, const struct pes_rnode *n);
void report_print_table(FILE *out, const struct pes_rnode *rows);
/* A source file named by the trace's site table, for reading (--annotate,
 * the HTML page's annotated source): only a regular file (a FIFO would block,
 * /dev/zero never end); NULL with errno set else. */
FILE *report_open_source(const char *file);
/* One line on stderr: "pes-replay: " and the message, escaped as a whole
 * (file names and strings in messages come from traces and the command line). */
void replay_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The command named on those lines (default "pes-replay"), and whether they
 * are printed at all: MPI ranks other than 0 print none, rank 0 speaks for all. */
void replay_message_setup(const char *name, int quiet);
/* The same for the calling thread only: pes-replay's parts other than 0. */
void replay_message_thread_quiet(int quiet);

#endif
