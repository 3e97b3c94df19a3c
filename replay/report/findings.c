/*
 * findings.c — the rules that turn a report's numbers into findings in words
 * (findings.h; docs/report.md, "Findings"). Every rule, its threshold and its
 * sentence is in this file: the table `rules` below.
 *
 * A rule reads one section of the report (a configuration of a full report,
 * or the root of a sampled one) and proposes candidates. Each candidate has
 * a score: the share of the run's accesses (a sampled report: of its
 * samples) that the problem turns into misses or line transfers. Every rule
 * counts events of the same kind (a line brought into a cache that an
 * access had to wait for), so scores of different rules compare, and
 * findings are ranked by it. The same problem seen in several
 * configurations (--cores 1,2,4) is listed once, where its score is
 * highest.
 *
 * Thresholds, and where they come from (not from the test programs):
 *  - MIN_SHARE = 0.5 % of the accesses: a miss served by another core or
 *    by memory costs some 20 times an L1 hit (Haswell: ~4 cycles for an L1
 *    hit, ~60-80 for a cross-core snoop or an L3 miss; Intel's optimization
 *    manual, table 2-8), so 0.5 % of the accesses missing adds about 10 % to
 *    the time an all-hit run spends in memory: below that, a fix is not
 *    worth a developer's time.
 *  - MIN_EVENTS = 20: fewer events are one-off hand-overs (a result read
 *    after a parallel region's join, a thread start) that every parallel
 *    program has; twenty is an order of magnitude above those.
 *  - a false-sharing line: more of its transfers false than true (the
 *    simulation's classification, docs/simulation.md); a true-sharing line
 *    the reverse.
 *  - a strided source line: at least half of a thread's accesses that move
 *    (not the store of a += to its load's address) land on another line
 *    than the nearest of its previous ones (stride.c) and the smallest
 *    non-zero step is at least a line, whereas a unit-stride walk crosses a
 *    line once every line / size accesses (one in 8 for doubles), and the
 *    step is larger than the access (a walk without gaps, vectors as wide
 *    as a line, uses all it fetches); and its
 *    mean reuse distance (PRD) is at least the L1's lines, so that under LRU
 *    a line is evicted before the walk comes back for its next element, or,
 *    where the run was simulated, at least half of its line changes missed
 *    in the L1 (set conflicts evict it sooner than LRU capacity would):
 *    each line fetched then serves one access (8 of 64 bytes for a double).
 *    A strided walk over data that stays in the L1 costs nothing.
 *  - reuse beyond the last-level cache: reuses whose distance (in lines, the
 *    LLC's profile: CRD for a shared one, PRD for a private one) is at least
 *    the LLC's lines miss in an LRU cache of that size, whatever its
 *    associativity; the rule counts them from the histograms.
 *  - conflict misses (only where the report has them: levels[].conflict or
 *    levels[].misses.conflict, a simulation that classifies misses by
 *    cause): at least a quarter of a level's misses, the share at which a
 *    set-associative cache loses more to its mapping than the usual few
 *    percent that separate it from a fully associative one (Hill & Smith's
 *    measurements of 8-way caches are within ~5 %).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "report_util.h"

#define MIN_SHARE        0.005
#define MIN_EVENTS       20
#define STRIDE_CROSS     0.5
#define CONFLICT_OF_MISS 0.25

enum { MAX_CAND = 64, MAX_EV = 16 };

struct ev {
    char key[32];
    int is_str;
    double v;
    char s[256];
};

struct cand {
    const char *rule;
    double score;
    char subject[256]; /* what the finding is about: one finding per rule and subject */
    char text[1024];
    char fix[1024];
    struct ev ev[MAX_EV];
    int n_ev;
};

struct found {
    struct cand c[MAX_CAND];
    int n;
};

/* What a rule reads: one section and what the report says around it. */
struct scope {
    const struct pes_rnode *root;
    const struct pes_rnode *section; /* a configuration, or a sampled report's root */
    const struct pes_rnode *sim;     /* its simulation (NULL: none); sampled: the root */
    const char *where;               /* "2 cores", "sampled" */
    double accesses;                 /* the denominator of scores */
    const char *unit;                /* what it counts: "accesses", "samples" */
    uint64_t line;                   /* bytes */
};

static void ev_num(struct cand *c, const char *key, double v)
{
    if (c->n_ev < MAX_EV) {
        struct ev *e = &c->ev[c->n_ev++];
        snprintf(e->key, sizeof e->key, "%s", key);
        e->v = v;
    }
}

static void ev_str(struct cand *c, const char *key, const char *s)
{
    if (c->n_ev < MAX_EV) {
        struct ev *e = &c->ev[c->n_ev++];
        snprintf(e->key, sizeof e->key, "%s", key);
        e->is_str = 1;
        snprintf(e->s, sizeof e->s, "%s", s);
    }
}

static void ev_hex(struct cand *c, const char *key, uint64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "0x%" PRIx64, v);
    ev_str(c, key, s);
}

static void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

/* A count as the tables print it ("12,345"); buf lives as long as the caller's block. */
static const char *num(char buf[32], double v)
{
    report_count(buf, 32, v > 0 ? (uint64_t)(v + 0.5) : 0);
    return buf;
}
#define NUM(v) num((char[32]){0}, (v))

/* Keeps c unless the same rule and subject scored higher already; when
 * full, c replaces the lowest score if it is higher. */
static void propose(struct found *f, const struct cand *c)
{
    for (int i = 0; i < f->n; i++)
        if (f->c[i].rule == c->rule && strcmp(f->c[i].subject, c->subject) == 0) {
            if (c->score > f->c[i].score)
                f->c[i] = *c;
            return;
        }
    if (f->n < MAX_CAND) {
        f->c[f->n++] = *c;
        return;
    }
    int low = 0;
    for (int i = 1; i < f->n; i++)
        if (f->c[i].score < f->c[low].score)
            low = i;
    if (c->score > f->c[low].score)
        f->c[low] = *c;
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int significant(const struct scope *s, double events)
{
    return events >= MIN_EVENTS && s->accesses > 0 && events / s->accesses >= MIN_SHARE;
}

/* ------------------------------------------------------------ sharing */

/* How an offset of a cache-line row is named: its field or element, else
 * the object and byte, else its source line. */
static void offset_name(char *buf, size_t n, const struct pes_rnode *line,
                        const struct pes_rnode *o)
{
    const char *part = pes_r_get_s(o, "part");
    const char *obj = pes_r_get_s(line, "object");
    uint64_t off = pes_r_get_u(o, "offset");
    const char *src = pes_r_s(pes_r_at(pes_r_get(o, "sources"), 0));
    if (*part)
        fmt(buf, n, "%s (byte %" PRIu64 " of the line)", part, off);
    else if (*obj && strcmp(obj, "unknown") != 0)
        fmt(buf, n, "%s+%" PRIu64 " (byte %" PRIu64 " of the line)", obj, off, off);
    else
        fmt(buf, n, "the %" PRIu64 "-byte word at byte %" PRIu64 "%s%s%s", pes_r_get_u(o, "size"),
            off, *src ? " (" : "", src, *src ? ")" : "");
}

/* The name of an offset without its position, for the fix's sentence. */
static void short_name(char *buf, size_t n, const struct pes_rnode *line, const struct pes_rnode *o)
{
    const char *part = pes_r_get_s(o, "part");
    const char *obj = pes_r_get_s(line, "object");
    uint64_t off = pes_r_get_u(o, "offset");
    if (*part)
        fmt(buf, n, "%s", part);
    else if (*obj && strcmp(obj, "unknown") != 0)
        fmt(buf, n, "%s+%" PRIu64, obj, off);
    else
        fmt(buf, n, "the word at byte %" PRIu64, off);
}

/* "counters (cache line 0x…, 2 threads)": the line and the section it is of. */
static void line_name(char *buf, size_t n, const struct pes_rnode *line, const char *where)
{
    const char *obj = pes_r_get_s(line, "object");
    if (*obj && strcmp(obj, "unknown") != 0)
        fmt(buf, n, "%s (cache line 0x%" PRIx64 ", %s)", obj, pes_r_get_u(line, "address"), where);
    else
        fmt(buf, n, "the cache line at 0x%" PRIx64 " (%s)", pes_r_get_u(line, "address"), where);
}

static double transfers(const struct pes_rnode *n, const char *kind)
{
    return pes_r_get_f(pes_r_get(n, "transfers"), kind);
}

static void rule_false_sharing(const struct scope *s, struct found *f)
{
    const struct pes_rnode *lines = pes_r_get(s->sim, "cache_lines");
    for (size_t i = 0; i < pes_r_count(lines); i++) {
        const struct pes_rnode *l = pes_r_at(lines, i);
        double fs = transfers(l, "false"), ts = transfers(l, "true");
        if (!significant(s, fs) || fs <= ts)
            continue;
        /* the two most written offsets that different threads write */
        const struct pes_rnode *offs = pes_r_get(l, "offsets"), *a = NULL, *b = NULL;
        for (size_t k = 0; k < pes_r_count(offs); k++) {
            const struct pes_rnode *o = pes_r_at(offs, k);
            if (!pes_r_get_u(o, "writes"))
                continue;
            if (!a || pes_r_get_u(o, "writes") > pes_r_get_u(a, "writes"))
                a = o;
        }
        for (size_t k = 0; a && k < pes_r_count(offs); k++) {
            const struct pes_rnode *o = pes_r_at(offs, k);
            if (o == a ||
                report_thread_mask(pes_r_get(o, "threads")) ==
                    report_thread_mask(pes_r_get(a, "threads")) ||
                pes_r_get_u(o, "offset") == pes_r_get_u(a, "offset"))
                continue;
            if (pes_r_get_u(o, "writes") + pes_r_get_u(o, "reads") > 0 &&
                (!b || pes_r_get_u(o, "writes") > pes_r_get_u(b, "writes")))
                b = o;
        }
        struct cand c = {.rule = "false_sharing", .score = fs / s->accesses};
        char ln[320], na[300], nb[300];
        line_name(ln, sizeof ln, l, s->where);
        fmt(c.subject, sizeof c.subject, "%" PRIu64, pes_r_get_u(l, "address"));
        ev_str(&c, "where", s->where);
        ev_str(&c, "object", pes_r_get_s(l, "object"));
        ev_hex(&c, "address", pes_r_get_u(l, "address"));
        ev_num(&c, "false_transfers", fs);
        ev_num(&c, "true_transfers", ts);
        ev_num(&c, "share", fs / s->accesses);
        ev_num(&c, "line_bytes", (double)s->line);
        if (a && b) {
            if (pes_r_get_u(b, "offset") < pes_r_get_u(a, "offset")) {
                const struct pes_rnode *t = a;
                a = b, b = t;
            }
            uint64_t oa = pes_r_get_u(a, "offset"), ob = pes_r_get_u(b, "offset");
            uint64_t gap = ob - oa, pad = gap < s->line ? s->line - gap : 0;
            offset_name(na, sizeof na, l, a);
            offset_name(nb, sizeof nb, l, b);
            char pa[300], pb[300], ta[128], tb[128]; /* short names for the fix; threads */
            report_thread_list(ta, sizeof ta, report_thread_mask(pes_r_get(a, "threads")));
            report_thread_list(tb, sizeof tb, report_thread_mask(pes_r_get(b, "threads")));
            short_name(pa, sizeof pa, l, a);
            short_name(pb, sizeof pb, l, b);
            ev_str(&c, "first", na);
            ev_num(&c, "first_offset", (double)oa);
            ev_str(&c, "second", nb);
            ev_num(&c, "second_offset", (double)ob);
            ev_num(&c, "padding", (double)pad);
            fmt(c.text, sizeof c.text,
                "False sharing on %s: %s, written by %s, and %s, written by %s, share one "
                "%" PRIu64 "-byte line; %s false-sharing transfers, %.1f %% of the %s.",
                ln, na, ta, nb, tb, s->line, NUM(fs), 100 * fs / s->accesses, s->unit);
            fmt(c.fix, sizeof c.fix,
                "Put %s and %s on separate cache lines: they are %" PRIu64
                " bytes apart (bytes %" PRIu64 " and %" PRIu64 " of the line), so add %" PRIu64
                " bytes of padding between them (or align each to %" PRIu64 " bytes, e.g. "
                "_Alignas(%" PRIu64 ") or a per-thread struct padded to %" PRIu64 " bytes).",
                pa, pb, gap, oa, ob, pad, s->line, s->line, s->line);
        } else {
            fmt(c.text, sizeof c.text,
                "False sharing on %s: threads write different bytes of one %" PRIu64
                "-byte line; %s false-sharing transfers, %.1f %% of the %s.",
                ln, s->line, NUM(fs), 100 * fs / s->accesses, s->unit);
            fmt(c.fix, sizeof c.fix,
                "Give each thread's data its own %" PRIu64 "-byte line: pad or align what each "
                "thread writes to %" PRIu64 " bytes (the line's offsets table lists them).",
                s->line, s->line);
        }
        propose(f, &c);
    }
}

static void rule_true_sharing(const struct scope *s, struct found *f)
{
    const struct pes_rnode *lines = pes_r_get(s->sim, "cache_lines");
    for (size_t i = 0; i < pes_r_count(lines); i++) {
        const struct pes_rnode *l = pes_r_at(lines, i);
        double fs = transfers(l, "false"), ts = transfers(l, "true");
        if (!significant(s, ts) || ts < fs)
            continue;
        /* migratory: one offset written by several threads, which take turns */
        const struct pes_rnode *offs = pes_r_get(l, "offsets"), *hot = NULL;
        for (size_t k = 0; k < pes_r_count(offs); k++) {
            const struct pes_rnode *o = pes_r_at(offs, k);
            if (pes_r_get_u(o, "writes") && pes_r_count(pes_r_get(o, "threads")) >= 2 &&
                (!hot || pes_r_get_u(o, "writes") > pes_r_get_u(hot, "writes")))
                hot = o;
        }
        struct cand c = {.rule = "true_sharing", .score = ts / s->accesses};
        char ln[320], nh[300] = "", sh[300] = "";
        line_name(ln, sizeof ln, l, s->where);
        fmt(c.subject, sizeof c.subject, "%" PRIu64, pes_r_get_u(l, "address"));
        ev_str(&c, "where", s->where);
        ev_str(&c, "object", pes_r_get_s(l, "object"));
        ev_hex(&c, "address", pes_r_get_u(l, "address"));
        ev_num(&c, "true_transfers", ts);
        ev_num(&c, "false_transfers", fs);
        ev_num(&c, "share", ts / s->accesses);
        ev_num(&c, "threads", (double)pes_r_count(pes_r_get(l, "threads")));
        if (hot) {
            offset_name(nh, sizeof nh, l, hot);
            short_name(sh, sizeof sh, l, hot);
            ev_str(&c, "written_by_several", nh);
            ev_num(&c, "offset", (double)pes_r_get_u(hot, "offset"));
        }
        fmt(c.text, sizeof c.text,
            "%s on %s: %s%s%s; %s true-sharing transfers, %.1f %% of the %s.",
            hot ? "Migratory line (true sharing)" : "True sharing", ln,
            hot ? "threads take turns writing " : "threads read what others write on this line",
            hot ? nh : "", hot ? " and the line moves with each turn" : "", NUM(ts),
            100 * ts / s->accesses, s->unit);
        fmt(c.fix, sizeof c.fix,
            "Share %s less often: let each thread work on a private copy (a local accumulator, "
            "an OpenMP reduction) and combine once at the end, or batch the updates; a lock or "
            "counter every thread writes can be split per thread.",
            hot ? sh : "this line");
        propose(f, &c);
    }
}

/* ------------------------------------------------------------ sites */

/* The source line of a site: from the rows that name it (the strides table,
 * the groups, the simulated sites), "site N" if none does. */
static void site_where(char *buf, size_t n, const struct scope *s, uint64_t id)
{
    const struct pes_rnode *tables[] = {pes_r_get(s->section, "site_strides"),
                                        s->sim ? pes_r_get(s->sim, "sites") : NULL};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < pes_r_count(tables[t]); i++) {
            const struct pes_rnode *row = pes_r_at(tables[t], i);
            if (pes_r_get_u(row, "site") == id && *pes_r_get_s(row, "file")) {
                fmt(buf, n, "%s:%" PRIu64 " %s", base(pes_r_get_s(row, "file")),
                    pes_r_get_u(row, "line"), pes_r_get_s(row, "function"));
                return;
            }
        }
    const struct pes_rnode *groups = pes_r_get(s->section, "groups");
    for (size_t i = 0; i < pes_r_count(groups); i++) {
        const struct pes_rnode *g = pes_r_at(groups, i), *ids = pes_r_get(g, "sites");
        for (size_t k = 0; k < pes_r_count(ids); k++)
            if (pes_r_u(pes_r_at(ids, k)) == id && *pes_r_get_s(g, "file")) {
                fmt(buf, n, "%s:%" PRIu64 " %s", base(pes_r_get_s(g, "file")),
                    pes_r_get_u(g, "line"), pes_r_get_s(g, "function"));
                return;
            }
    }
    fmt(buf, n, "site %" PRIu64, id);
}

/* What the simulation counted for one source line: the all_sites rows
 * (every site that accessed memory) of file:line, or of the site alone where
 * it has no line. 0: the section has no simulation. */
struct line_sim {
    double accesses, l1_misses;
    double conflict[8]; /* per level */
};

static int same_line(const struct pes_rnode *row, const char *file, uint64_t line, uint64_t site)
{
    if (line == 0 || !*file)
        return pes_r_get_u(row, "site") == site;
    return pes_r_get_u(row, "line") == line && strcmp(pes_r_get_s(row, "file"), file) == 0;
}

static int line_sim(const struct scope *s, const char *file, uint64_t line, uint64_t site,
                    struct line_sim *out)
{
    memset(out, 0, sizeof *out);
    const struct pes_rnode *all = s->sim ? pes_r_get(s->sim, "all_sites") : NULL;
    if (!all)
        return 0;
    for (size_t i = 0; i < pes_r_count(all); i++) {
        const struct pes_rnode *row = pes_r_at(all, i);
        if (!same_line(row, file, line, site))
            continue;
        double acc = pes_r_get_f(row, "accesses");
        out->accesses += acc;
        out->l1_misses += acc - pes_r_f(pes_r_at(pes_r_get(row, "hits"), 0));
        const struct pes_rnode *cf = pes_r_get(row, "conflict");
        for (size_t l = 0; l < pes_r_count(cf) && l < 8; l++)
            out->conflict[l] += pes_r_f(pes_r_at(cf, l));
    }
    return 1;
}

/* The site_strides row of a source line (NULL: none). */
static const struct pes_rnode *stride_row(const struct scope *s, const char *file, uint64_t line,
                                          uint64_t site)
{
    const struct pes_rnode *rows = pes_r_get(s->section, "site_strides");
    for (size_t i = 0; i < pes_r_count(rows); i++)
        if (same_line(pes_r_at(rows, i), file, line, site))
            return pes_r_at(rows, i);
    return NULL;
}

static void rule_stride(const struct scope *s, struct found *f)
{
    const struct pes_rnode *rows = pes_r_get(s->section, "site_strides");
    for (size_t i = 0; i < pes_r_count(rows); i++) {
        const struct pes_rnode *r = pes_r_at(rows, i);
        /* pairs that move: a += repeats its load's address, which says
         * nothing about the walk */
        double pairs = pes_r_get_f(r, "pairs") - (double)pes_r_get_u(r, "repeats");
        double cross = pes_r_get_f(r, "cross");
        uint64_t stride = pes_r_get_u(r, "min_stride");
        double acc = pes_r_get_f(r, "accesses");
        double size = acc > 0 ? pes_r_get_f(r, "bytes") / acc : 0;
        /* a walk without gaps (the step no larger than the access: vectors
         * as wide as a line) uses every byte it fetches */
        if (!significant(s, cross) || cross < STRIDE_CROSS * pairs || stride < s->line ||
            (double)stride <= size)
            continue;
        /* its lines leave the L1 before the next element is used: the site's
         * mean reuse distance (its thread's PRD) is at least the L1's lines,
         * or, where the run was simulated, at least half of its line changes
         * missed in the L1 (set conflicts evict lines a fully associative
         * cache would keep) */
        const struct pes_rnode *sites = pes_r_get(s->section, "sites"), *site = NULL;
        for (size_t k = 0; k < pes_r_count(sites) && !site; k++)
            if (pes_r_get_u(pes_r_at(sites, k), "site") == pes_r_get_u(r, "site"))
                site = pes_r_at(sites, k);
        const struct pes_rnode *l1 =
            pes_r_at(pes_r_get(pes_r_get(s->root, "machine"), "levels"), 0);
        double l1_lines = (double)pes_r_get_u(l1, "size") / (double)s->line;
        double distance = pes_r_get_f(site, "prd_mean");
        struct line_sim sim;
        int simulated = line_sim(s, pes_r_get_s(r, "file"), pes_r_get_u(r, "line"),
                                 pes_r_get_u(r, "site"), &sim);
        int far = site && distance >= l1_lines;
        int missed = simulated && sim.l1_misses >= STRIDE_CROSS * cross;
        if (!far && !missed)
            continue;
        char where[512], why[512];
        site_where(where, sizeof where, s, pes_r_get_u(r, "site"));
        struct cand c = {.rule = "strided_access", .score = cross / s->accesses};
        fmt(c.subject, sizeof c.subject, "%s", where);
        ev_str(&c, "where", s->where);
        ev_str(&c, "site", where);
        ev_num(&c, "stride_bytes", (double)stride);
        ev_num(&c, "accesses", acc);
        ev_num(&c, "line_crossing", cross);
        ev_num(&c, "line_crossing_share", pairs > 0 ? cross / pairs : 0);
        ev_num(&c, "access_bytes", size);
        ev_num(&c, "mean_reuse_distance_lines", distance);
        ev_num(&c, "l1_lines", l1_lines);
        if (simulated)
            ev_num(&c, "l1_misses", sim.l1_misses);
        ev_num(&c, "share", cross / s->accesses);
        if (far)
            fmt(why, sizeof why,
                "a line is used again only after %.0f others on average (the L1 holds %.0f)",
                distance, l1_lines);
        else
            fmt(why, sizeof why,
                "set conflicts evict a line before its next element is used: %s of its %s "
                "accesses miss in the L1",
                NUM(sim.l1_misses), NUM(sim.accesses));
        fmt(c.text, sizeof c.text,
            "Strided walk at %s (%s): each access of a thread that moves is at least %s bytes "
            "from the line's previous ones and %.0f %% of them land on another %" PRIu64
            "-byte line, and %s, so each line fetched serves about %.0f of its %" PRIu64
            " bytes; %s line changes, %.1f %% of the accesses.",
            where, s->where, NUM((double)stride), pairs > 0 ? 100 * cross / pairs : 0, s->line, why,
            size, s->line, NUM(cross), 100 * cross / s->accesses);
        fmt(c.fix, sizeof c.fix,
            "Make the innermost loop at %s walk consecutive addresses: interchange the loops (the "
            "index that moves by %s bytes goes outside), or change the layout (transpose "
            "the array, or a struct of arrays) so that what the inner loop touches is contiguous.",
            where, NUM((double)stride));
        propose(f, &c);
    }
}

/* Reuses of distance >= lines in a histogram ({exact: [[d, n]], log2:
 * [[lo, hi, n]]}); a log2 bin that straddles lines counts the share above,
 * distances in it taken as uniform (as the model takes them). */
static double beyond(const struct pes_rnode *h, double lines)
{
    double n = 0;
    const struct pes_rnode *ex = pes_r_get(h, "exact"), *lg = pes_r_get(h, "log2");
    for (size_t i = 0; i < pes_r_count(ex); i++) {
        const struct pes_rnode *row = pes_r_at(ex, i);
        if (pes_r_f(pes_r_at(row, 0)) >= lines)
            n += pes_r_f(pes_r_at(row, 1));
    }
    for (size_t i = 0; i < pes_r_count(lg); i++) {
        const struct pes_rnode *row = pes_r_at(lg, i);
        double lo = pes_r_f(pes_r_at(row, 0)), hi = pes_r_f(pes_r_at(row, 1));
        double cnt = pes_r_f(pes_r_at(row, 2));
        if (lo >= lines)
            n += cnt;
        else if (hi > lines && hi > lo)
            n += cnt * (hi - lines) / (hi - lo);
    }
    return n;
}

static void rule_llc(const struct scope *s, struct found *f)
{
    const struct pes_rnode *levels = pes_r_get(pes_r_get(s->root, "machine"), "levels");
    const struct pes_rnode *llc = pes_r_at(levels, pes_r_count(levels) - 1);
    if (!llc || !s->line)
        return;
    int shared = pes_r_get_u(llc, "shared") != 0;
    double lines = (double)pes_r_get_u(llc, "size") / (double)s->line;
    const struct pes_rnode *hists = pes_r_get(s->section, shared ? "crd" : "prd");
    double far = 0, cold = 0;
    for (size_t i = 0; i < pes_r_count(hists); i++) {
        const struct pes_rnode *h = pes_r_get(pes_r_at(hists, i), "histogram");
        far += beyond(h, lines);
        cold += pes_r_get_f(h, "cold");
    }
    if (!significant(s, far))
        return;
    /* the site with the most distance to cover: mean distance x reuses (a
     * sweep reuses most lines at distance 0 within the line and the rest at
     * the sweep's length, so the product, not the mean, marks it) */
    const char *mean_key = shared ? "crd_mean" : "prd_mean",
               *cold_key = shared ? "crd_cold" : "prd_cold";
    const struct pes_rnode *sites = pes_r_get(s->section, "sites"), *top = NULL;
    double top_w = 0;
    for (size_t i = 0; i < pes_r_count(sites); i++) {
        const struct pes_rnode *st = pes_r_at(sites, i);
        double w =
            pes_r_get_f(st, mean_key) * (pes_r_get_f(st, "accesses") - pes_r_get_f(st, cold_key));
        if (w > top_w)
            top_w = w, top = st;
    }
    char where[512] = "";
    if (top)
        site_where(where, sizeof where, s, pes_r_get_u(top, "site"));
    char llc_b[32], ws_b[32], half_b[32];
    report_bytes(llc_b, sizeof llc_b, pes_r_get_u(llc, "size"));
    report_bytes(ws_b, sizeof ws_b, (uint64_t)(cold * (double)s->line));
    report_bytes(half_b, sizeof half_b, pes_r_get_u(llc, "size") / 2);
    struct cand c = {.rule = "beyond_llc", .score = far / s->accesses};
    fmt(c.subject, sizeof c.subject, "%s", where);
    ev_str(&c, "where", s->where);
    if (top) {
        ev_str(&c, "site", where);
        ev_num(&c, "site_mean_distance_lines", pes_r_get_f(top, mean_key));
    }
    ev_num(&c, "llc_level", (double)pes_r_get_u(llc, "level"));
    ev_num(&c, "llc_bytes", (double)pes_r_get_u(llc, "size"));
    ev_num(&c, "llc_lines", lines);
    ev_num(&c, "reuses_beyond_llc", far);
    ev_num(&c, "footprint_bytes", cold * (double)s->line);
    ev_num(&c, "share", far / s->accesses);
    fmt(c.text, sizeof c.text,
        "Reuse beyond the last-level cache (%s): %s reuses (%.1f %% of the accesses) come "
        "after %s or more other lines were touched, more than the L%" PRIu64
        " holds (%s); the data touched is %s%s%s.",
        s->where, NUM(far), 100 * far / s->accesses, NUM(lines), pes_r_get_u(llc, "level"), llc_b,
        ws_b, top ? "; the longest reuses are at " : "", top ? where : "");
    fmt(c.fix, sizeof c.fix,
        "Block (tile) the loops%s%s so that the data a tile reuses fits in the L%" PRIu64
        " (at most about %s, half of it, leaves room for the rest), or reorder the work so that "
        "each line is used again before %s other lines are.",
        top ? " at " : "", top ? where : "", pes_r_get_u(llc, "level"), half_b, NUM(lines));
    propose(f, &c);
}

/* A level's conflict misses, where the report has them (absent: no rule). */
static const struct pes_rnode *conflict_of(const struct pes_rnode *lv)
{
    const struct pes_rnode *c = pes_r_get(lv, "conflict");
    return c ? c : pes_r_get(pes_r_get(lv, "misses"), "conflict");
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* A level whose conflict misses pass the rule, and the source line behind most of them. */
struct conflict_level {
    uint64_t level;
    double conflict, misses, here; /* here: the culprit line's conflict misses at this level */
    const struct pes_rnode *row;   /* an all_sites row of the culprit line (NULL: unknown) */
};

/* One finding per culprit source line, naming every level where it is the
 * line with the most conflict misses (the L1 and L2 of a column walk are one
 * problem); without a per-site table (--by object), one per level. */
static void rule_conflict(const struct scope *s, struct found *f)
{
    const struct pes_rnode *levels = s->sim ? pes_r_get(s->sim, "levels") : NULL;
    const struct pes_rnode *geometry = pes_r_get(pes_r_get(s->root, "machine"), "levels");
    struct conflict_level q[8];
    int n = 0;
    for (size_t i = 0; i < pes_r_count(levels) && n < 8; i++) {
        const struct pes_rnode *lv = pes_r_at(levels, i), *cn = conflict_of(lv);
        if (!cn)
            continue;
        double conflict = pes_r_f(cn);
        double misses = pes_r_get_f(lv, "accesses") - pes_r_get_f(lv, "hits");
        if (!significant(s, conflict) || conflict < CONFLICT_OF_MISS * misses)
            continue;
        q[n++] = (struct conflict_level){.level = pes_r_get_u(lv, "level"),
                                         .conflict = conflict,
                                         .misses = misses,
                                         .row = report_top_conflict_site(s->sim, i)};
    }
    for (int i = 0; i < n; i++) {
        if (!q[i].conflict)
            continue; /* folded into an earlier level's finding */
        /* the levels whose culprit is the same source line as level i's */
        const struct pes_rnode *row = q[i].row;
        const char *file = row ? pes_r_get_s(row, "file") : "";
        uint64_t line = row ? pes_r_get_u(row, "line") : 0,
                 site = row ? pes_r_get_u(row, "site") : 0;
        struct line_sim here = {0};
        if (row)
            line_sim(s, file, line, site, &here);
        struct conflict_level mine[8];
        int m = 0;
        for (int j = i; j < n; j++)
            if (j == i || (row && q[j].row && same_line(q[j].row, file, line, site))) {
                mine[m] = q[j];
                mine[m].here = here.conflict[q[j].level - 1 < 8 ? q[j].level - 1 : 0];
                m++;
                if (j != i)
                    q[j].conflict = 0;
            }
        double score = 0;
        for (int k = 0; k < m; k++)
            if (mine[k].conflict / s->accesses > score)
                score = mine[k].conflict / s->accesses;
        struct cand c = {.rule = "conflict_misses", .score = score};
        char where[512] = "", levels_b[64] = "", counts[512] = "", sets[256] = "";
        if (row)
            fmt(where, sizeof where, "%s:%" PRIu64 " %s", base(file), line,
                pes_r_get_s(row, "function"));
        for (int k = 0; k < m; k++) {
            size_t u = strlen(levels_b), v = strlen(counts);
            fmt(levels_b + u, sizeof levels_b - u, "%sL%" PRIu64,
                k == 0       ? ""
                : k == m - 1 ? " and "
                             : ", ",
                mine[k].level);
            fmt(counts + v, sizeof counts - v, "%sL%" PRIu64 ": %s of %s misses (%.0f %%)%s%s%s",
                k ? "; " : "", mine[k].level, NUM(mine[k].conflict), NUM(mine[k].misses),
                mine[k].misses > 0 ? 100 * mine[k].conflict / mine[k].misses : 0, row ? ", " : "",
                row ? NUM(mine[k].here) : "", row ? " of them here" : "");
        }
        fmt(c.subject, sizeof c.subject, "%s", row ? where : levels_b);
        ev_str(&c, "where", s->where);
        ev_num(&c, "level", (double)mine[0].level);
        ev_num(&c, "conflict_misses", mine[0].conflict);
        ev_num(&c, "misses", mine[0].misses);
        if (row) {
            ev_str(&c, "site", where);
            ev_num(&c, "site_conflict_misses", mine[0].here);
        }
        /* the walk's stride and the sets it reaches (set index = line number
         * mod sets: a step of k lines visits sets / gcd(k, sets) of them) */
        const struct pes_rnode *sr = row ? stride_row(s, file, line, site) : NULL;
        uint64_t stride = sr ? pes_r_get_u(sr, "min_stride") : 0;
        double elem = sr && pes_r_get_f(sr, "accesses") > 0
                          ? pes_r_get_f(sr, "bytes") / pes_r_get_f(sr, "accesses")
                          : 0;
        const struct pes_rnode *g = pes_r_at(geometry, mine[0].level - 1);
        uint64_t ways = pes_r_get_u(g, "ways"), lsize = pes_r_get_u(g, "line");
        uint64_t nsets = ways && lsize ? pes_r_get_u(g, "size") / (ways * lsize) : 0;
        int strided = stride >= s->line && lsize && stride % lsize == 0 && nsets > 1;
        if (strided) {
            uint64_t k = (stride / lsize) % nsets, used = k ? nsets / gcd(k, nsets) : 1;
            ev_num(&c, "stride_bytes", (double)stride);
            ev_num(&c, "sets_reached", (double)used);
            ev_num(&c, "sets", (double)nsets);
            fmt(sets, sizeof sets,
                "; its accesses step %s bytes, so they reach at most %s of the L%" PRIu64
                "'s %s sets (%" PRIu64 " ways each)",
                NUM((double)stride), NUM((double)used), mine[0].level, NUM((double)nsets), ways);
        }
        ev_num(&c, "share", score);
        fmt(c.text, sizeof c.text,
            "Set conflicts%s%s in the %s (%s): misses that a fully associative cache of the same "
            "size would hit. %s%s; %.1f %% of the accesses.",
            row ? " at " : "", where, levels_b, s->where, counts, sets, 100 * score);
        if (strided) {
            uint64_t pad = lsize, padded = stride + pad;
            char pad_elems[64] = "";
            if (elem >= 1 && fmod(pad, elem) == 0)
                fmt(pad_elems, sizeof pad_elems, ", %s more elements of %.0f bytes",
                    NUM(pad / elem), elem);
            fmt(c.fix, sizeof c.fix,
                "Make the walk at %s use all the sets: interchange the loops so that it walks "
                "consecutive addresses, or pad each row by one line (%" PRIu64 " bytes%s) so that "
                "its step, %s bytes, is an odd number of lines.",
                where, pad, pad_elems, NUM((double)padded));
        } else
            fmt(c.fix, sizeof c.fix,
                "Break the power-of-two spacing of the data used together%s%s: pad each row of "
                "the array (a leading dimension of N + %" PRIu64 " bytes' worth of elements "
                "instead of a power of two) or offset the arrays' starts by a line or more.",
                row ? " at " : "", where, s->line);
        propose(f, &c);
    }
}

/* ------------------------------------------------------------ the table */

struct rule {
    const char *name;
    void (*find)(const struct scope *s, struct found *f);
};

static const struct rule rules[] = {
    {"false_sharing", rule_false_sharing}, {"true_sharing", rule_true_sharing},
    {"strided_access", rule_stride},       {"beyond_llc", rule_llc},
    {"conflict_misses", rule_conflict},
};

const char *pes_findings_none(void)
{
    return "No locality problem found above the thresholds: a finding needs at least 20 events "
           "and 0.5 % of the accesses in false- or true-sharing transfers of one cache line, "
           "line changes of one strided source line (a step of a line or more on half of its "
           "accesses, a reuse distance of the L1's lines or more), reuses beyond the last-level "
           "cache, or conflict misses (a quarter of a level's misses).";
}

static void run_rules(const struct scope *s, struct found *f)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        rules[i].find(s, f);
}

static int by_score(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    int r = strcmp(x->rule, y->rule);
    return r ? r : strcmp(x->subject, y->subject);
}

static void publish(struct pes_report *r, struct found *f)
{
    qsort(f->c, (size_t)f->n, sizeof f->c[0], by_score);
    struct pes_rnode *arr = pes_r_array(r, pes_report_root(r), "findings");
    for (int i = 0; i < f->n && i < PES_FINDINGS_MAX; i++) {
        const struct cand *c = &f->c[i];
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        pes_r_str(r, o, "rule", c->rule);
        pes_r_u64(r, o, "rank", (uint64_t)i + 1);
        pes_r_f64(r, o, "score", c->score, "%.4g");
        pes_r_str(r, o, "text", c->text);
        struct pes_rnode *ev = pes_r_object(r, o, "evidence");
        for (int k = 0; k < c->n_ev; k++) {
            if (c->ev[k].is_str)
                pes_r_str(r, ev, c->ev[k].key, c->ev[k].s);
            else /* counts whole, ratios to 6 digits */
                pes_r_f64(r, ev, c->ev[k].key, c->ev[k].v,
                          c->ev[k].v == floor(c->ev[k].v) && fabs(c->ev[k].v) < 0x1p53 ? "%.0f"
                                                                                       : "%.6g");
        }
        pes_r_str(r, o, "fix", c->fix);
    }
}

void pes_findings_add(struct pes_report *r)
{
    const struct pes_rnode *root = pes_report_tree(r);
    if (pes_r_get(root, "full")) /* --compare */
        return;
    struct found *f = calloc(1, sizeof *f);
    if (!f) {
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    uint64_t line = pes_r_get_u(root, "line");
    if (!strcmp(pes_r_get_s(root, "kind"), "sampled")) {
        struct scope s = {.root = root,
                          .section = root,
                          .sim = root,
                          .where = "sampled",
                          .accesses = pes_r_get_f(root, "samples"),
                          .unit = "samples",
                          .line = line ? line : 64};
        run_rules(&s, f);
    } else {
        const struct pes_rnode *configs = pes_r_get(root, "configs");
        double accesses = pes_r_get_f(pes_r_get(root, "trace"), "accesses");
        for (size_t i = 0; i < pes_r_count(configs); i++) {
            const struct pes_rnode *c = pes_r_at(configs, i);
            char where[64];
            uint64_t cores = pes_r_get_u(c, "cores");
            fmt(where, sizeof where, "%" PRIu64 " %s%s", cores,
                pes_r_get_u(c, "mimicked") ? "mimicked core" : "thread", cores == 1 ? "" : "s");
            struct scope s = {.root = root,
                              .section = c,
                              .sim = pes_r_get(c, "simulation"),
                              .where = where,
                              .accesses = accesses,
                              .unit = "accesses",
                              .line = line};
            run_rules(&s, f);
        }
    }
    publish(r, f);
    free(f);
}
