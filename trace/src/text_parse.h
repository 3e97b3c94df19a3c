/*
 * text_parse.h — the line parsers of the plain-text trace reader
 * (text_reader.c; docs/trace-format.md §9), shared by its single-thread path
 * and its parallel block workers. Not installed.
 *
 * A parse runs over a range of complete lines: [p, end) where end[-1] is
 * '\n' (the reader appends one to a last line that has none: a line means
 * the same with or without it). The parsers may read up to TEXT_PARSE_SLACK
 * bytes past end, so every buffer they see has that many readable bytes
 * after its data. They never print and never format a message: on a bad
 * line they stop in front of it and say why, and the reader, which knows the
 * file name and the line number, builds the message (text_parse_message).
 */
#ifndef PES_TEXT_PARSE_H
#define PES_TEXT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "pes/trace.h"

#define TEXT_PARSE_SLACK 128u

enum text_parse_error {
    TEXT_OK = 0,
    TEXT_BAD_LINE,    /* malformed for the format */
    TEXT_LONG_LINE,   /* longer than PES_TEXT_MAX_LINE bytes */
    TEXT_READ_FAILED, /* read(2) failed (the reader's, never a parser's) */
    TEXT_NO_MEMORY,   /* a block's records did not fit (the reader's) */
};

struct text_parse {
    const char *p;   /* the next line; on error, the bad line */
    const char *end; /* after the last complete line */
    uint64_t lines;  /* lines consumed: incremented per line, the bad one not counted */
    int error;       /* enum text_parse_error */
    size_t bad_len;  /* the bad line's length without its newline */
    int has_pending; /* lackey: an "M" line's store did not fit in out */
    struct pes_record pending;
};

/* Parse lines from s->p into out (at most max records) until out is full,
 * s->p reaches s->end or a line is bad; returns the number of records. An
 * "M" lackey line with one slot left puts its load in out and its store in
 * s->pending. */
size_t text_parse_addr(struct text_parse *s, struct pes_record *out, size_t max);
size_t text_parse_lackey(struct text_parse *s, struct pes_record *out, size_t max);

/* A lackey data line (" L ", " S " or " M " and at least one more byte) or
 * an instruction fetch ("I  "); n is the line's length. */
int text_lackey_shape(const char *l, size_t n);

/* The one-line message of an error at line `lineno` of `path` (line: the bad
 * line, for TEXT_BAD_LINE), in err with code and offset as the reader has
 * always set them. Returns -1. */
int text_parse_message(struct pes_error *err, int error, enum pes_text_format format,
                       const char *path, uint64_t lineno, const char *line, size_t len,
                       int read_errno);

#endif
