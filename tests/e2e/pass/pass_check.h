/*
 * pass_check.h — small helpers for the pass test programs: select records by
 * function / source line / kind / thread and aggregate them; CHECK macros.
 * Expected values live in each test program and are derived by hand.
 */
#ifndef PES_PASS_CHECK_H
#define PES_PASS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mock_rt.h"

/* The checking code must not add records while it walks them (noinline: once
 * inlined into an instrumented caller it would be instrumented as its code). */
#define NOINSTR __attribute__((disable_sanitizer_instrumentation, noinline, unused))

static int check_failures, check_count;

#define CHECK_EQ(what, got, want)                                                            \
    do {                                                                                     \
        unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want); \
        check_count++;                                                                       \
        if (g_ != w_) {                                                                      \
            printf("FAIL %s:%d: %s = %llu, want %llu\n", __FILE__, __LINE__, what, g_, w_); \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)
#define CHECK(what, cond) CHECK_EQ(what, !!(cond), 1)

NOINSTR static int check_done(void) {
    printf("%d checks, %d failed\n", check_count, check_failures);
    if (check_failures == 0)
        printf("checks passed\n");
    return check_failures ? 1 : 0;
}

/* Which access records to aggregate; 0 / NULL fields match anything. */
struct sel {
    const char *function;   /* exact (demangled) function name */
    unsigned line;
    int kind;               /* enum pes_access_kind */
    int thread;             /* mock thread number */
    unsigned need_flags;    /* site must have all of these flags */
    const void *lo, *hi;    /* if hi: record address must be in [lo, hi) */
};

struct agg {
    unsigned long long n;          /* records */
    unsigned long long bytes;      /* sum of size (extra when size is 0) */
    unsigned flags_or, flags_and;  /* over the matching records' sites */
    unsigned long long addr_min, addr_max_end;
    int file_mismatch;             /* sites whose file differs from sel_file */
    int sites_seen;
    const char *file;              /* set by the caller before the query */
    const struct mock_rec *last;
};

NOINSTR static int sel_match(const struct sel *s, const struct mock_rec *r) {
    if (!r->site)
        return 0;
    if (s->function && strcmp(mock_str(r->module, r->site->function), s->function) != 0)
        return 0;
    if (s->line && r->site->line != s->line)
        return 0;
    if (s->kind && r->site->kind != s->kind)
        return 0;
    if (s->thread && r->thread != s->thread)
        return 0;
    if ((r->site->flags & s->need_flags) != s->need_flags)
        return 0;
    if (s->hi && (r->addr < (uintptr_t)s->lo || r->addr >= (uintptr_t)s->hi))
        return 0;
    return 1;
}

/* The pass writes the DIFile name as given, prefixed with the compilation
 * directory when relative; __FILE__ is the name as given. */
NOINSTR static int file_matches(const char *site_file, const char *file) {
    if (file[0] == '/')
        return strcmp(site_file, file) == 0;
    size_t ls = strlen(site_file), lf = strlen(file);
    return site_file[0] == '/' && ls > lf + 1 && site_file[ls - lf - 1] == '/' &&
           strcmp(site_file + ls - lf, file) == 0;
}

struct agg_ctx {
    struct sel s;
    struct agg a;
};

NOINSTR static void agg_visit(const struct mock_rec *r, void *p) {
    struct agg_ctx *c = (struct agg_ctx *)p;
    if (!sel_match(&c->s, r))
        return;
    struct agg *a = &c->a;
    unsigned long long len = r->site->size ? r->site->size : r->extra;
    if (a->n == 0) {
        a->flags_and = r->site->flags;
        a->addr_min = r->addr;
        a->addr_max_end = r->addr + len;
    }
    a->n++;
    a->bytes += len;
    a->flags_or |= r->site->flags;
    a->flags_and &= r->site->flags;
    if (r->addr < a->addr_min)
        a->addr_min = r->addr;
    if (r->addr + len > a->addr_max_end)
        a->addr_max_end = r->addr + len;
    if (c->a.file && !file_matches(mock_str(r->module, r->site->file), c->a.file))
        a->file_mismatch++;
}

NOINSTR static struct agg query_file(struct sel s, const char *file) {
    struct agg_ctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.a.file = file;
    mock_foreach(agg_visit, &c);
    return c.a;
}
#ifndef __cplusplus
#define query(...) query_file((struct sel){__VA_ARGS__}, __FILE__)
#endif

/* Marks each byte of [lo, lo+len) covered by a matching record; counts overlaps/outside. */
struct cover_ctx {
    struct sel s;
    unsigned long long lo, len;
    unsigned char *hits;
    unsigned long long outside;
};

NOINSTR static void cover_visit(const struct mock_rec *r, void *p) {
    struct cover_ctx *c = (struct cover_ctx *)p;
    if (!sel_match(&c->s, r))
        return;
    unsigned long long len = r->site->size ? r->site->size : r->extra;
    for (unsigned long long b = r->addr; b < r->addr + len; b++) {
        if (b < c->lo || b >= c->lo + c->len)
            c->outside++;
        else if (c->hits[b - c->lo] < 255)
            c->hits[b - c->lo]++;
    }
}

/* 1 if matching records cover [lo, lo+len) exactly once each byte and nothing else. */
NOINSTR static int covers_exactly_once(struct sel s, const void *lo, unsigned long long len) {
    struct cover_ctx c = {s, (unsigned long long)(uintptr_t)lo, len, (unsigned char *)calloc(len, 1), 0};
    mock_foreach(cover_visit, &c);
    int ok = c.outside == 0;
    for (unsigned long long i = 0; i < len; i++)
        if (c.hits[i] != 1)
            ok = 0;
    free(c.hits);
    return ok;
}

/* Block entries of the block holding the first site that matches s. */
struct bb_ctx {
    struct sel s;
    const struct pes_rt_module *m;
    uint32_t bb;
    int found;
    unsigned long long entries;
};

NOINSTR static void bb_find(const struct mock_rec *r, void *p) {
    struct bb_ctx *c = (struct bb_ctx *)p;
    if (!c->found && sel_match(&c->s, r)) {
        c->found = 1;
        c->m = r->module;
        c->bb = r->bb_local;
    }
}

NOINSTR static void bb_count(const struct mock_rec *r, void *p) {
    struct bb_ctx *c = (struct bb_ctx *)p;
    if (!r->site && r->module == c->m && r->bb && r->bb_local == c->bb)
        c->entries++;
}

/* Fills *bb (may be NULL) and returns the entry count; -1 if no such site ran. */
NOINSTR static long long bb_entries(struct sel s, const struct pes_rt_bb **bb, const struct pes_rt_module **m) {
    struct bb_ctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    mock_foreach(bb_find, &c);
    if (!c.found)
        return -1;
    mock_foreach(bb_count, &c);
    if (bb)
        *bb = &c.m->bbs[c.bb];
    if (m)
        *m = c.m;
    return (long long)c.entries;
}

/* Call paths (pes/trace.h, "Call edges") of one thread: its CALL and RETURN
 * records as "C<line of the call> " and "R " tokens in `edges`, and at each
 * access to watch the thread's open calls by the trace.h repair rule as
 * "<line>:<call line>,<call line>;" (outermost call first) in `paths`. */
#define PATH_DEPTH 64
struct path_ctx {
    int thread;
    uintptr_t watch;
    char edges[16384], paths[16384];
    size_t ne, np;
    uint64_t sp[PATH_DEPTH];
    unsigned line[PATH_DEPTH];
    int depth;
    int overflow, not_call_site, unmatched_returns, dropped, calls, returns;
};

#define PATH_APPEND(buf, n, ...)                                              \
    do {                                                                     \
        int k_ = snprintf(c->buf + c->n, sizeof c->buf - c->n, __VA_ARGS__); \
        if (k_ < 0 || (size_t)k_ >= sizeof c->buf - c->n)                    \
            c->overflow++;                                                   \
        else                                                                 \
            c->n += (size_t)k_;                                              \
    } while (0)

NOINSTR static void path_visit(const struct mock_rec *r, void *p) {
    struct path_ctx *c = (struct path_ctx *)p;
    if (r->thread != c->thread)
        return;
    if (r->id == PES_ID_CALL) {
        struct mock_rec s;
        unsigned line = 0;
        if (mock_lookup(r->extra, &s) && s.site && s.site->kind == PES_KIND_CALL)
            line = s.site->line;
        else
            c->not_call_site++;
        c->calls++;
        PATH_APPEND(edges, ne, "C%u ", line);
        /* open frames at or below the caller's stack pointer were left by a
         * longjmp: the caller's own earlier call, and what it called */
        while (c->depth > 0 && c->sp[c->depth - 1] <= r->addr) {
            c->depth--;
            c->dropped++;
        }
        if (c->depth == PATH_DEPTH) {
            c->overflow++;
            return;
        }
        c->sp[c->depth] = r->addr;
        c->line[c->depth++] = line;
    } else if (r->id == PES_ID_RETURN) {
        c->returns++;
        PATH_APPEND(edges, ne, "R ");
        while (c->depth > 0 && c->sp[c->depth - 1] < r->addr) {
            c->depth--;
            c->dropped++;
        }
        if (c->depth > 0 && c->sp[c->depth - 1] == r->addr)
            c->depth--;
        else
            c->unmatched_returns++;
    } else if (r->site && r->addr == c->watch) {
        PATH_APPEND(paths, np, "%u:", r->site->line);
        for (int i = 0; i < c->depth; i++)
            PATH_APPEND(paths, np, "%s%u", i ? "," : "", c->line[i]);
        PATH_APPEND(paths, np, ";");
    }
}

NOINSTR static void path_walk(struct path_ctx *c, int thread, const volatile void *watch) {
    memset(c, 0, sizeof *c);
    c->thread = thread;
    c->watch = (uintptr_t)watch;
    mock_foreach(path_visit, c);
}

/* Prints both strings when they differ. */
NOINSTR static void check_str(const char *what, const char *got, const char *want) {
    check_count++;
    if (strcmp(got, want) != 0) {
        printf("FAIL %s:\n  got  %s\n  want %s\n", what, got, want);
        check_failures++;
    }
}

#endif
