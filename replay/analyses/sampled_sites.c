/*
 * sampled_sites.c — a sampled trace's events per site (raw counts: samples,
 * reuses, invalidations, communication events with true and false sharing).
 * Publishes the report's "sites" (the top sites) and, unless --by object
 * (sampled_objects.c), "by" and "groups": the sites' counts summed per
 * source line, function or site (groups.h). The accuracy join ranks the
 * sites' source lines against the full trace's (Marathe's top-k).
 *
 * Samples that carry a call stack (version 3, pes_event.stack) are also
 * counted per (site, stack): each site and group row then lists its top
 * call paths ("callpaths": up to PATHS_PER_ROW, with their share of the row's
 * samples), and --by callpath ranks the call paths themselves. Stacks are
 * symbolized through the data objects' MAPS and DWARF (objects.h); paths
 * that symbolize alike are one path. A trace without stacks publishes
 * exactly what it did before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "objects.h"
#include "report_util.h"
#include "sampled_publish.h"
#include "sampled_results.h"

#define MAX_DENSE_SITE (1u << 22)
#define PATHS_PER_ROW  3

/* The samples of one site row taken with one call stack. */
struct stack_pair {
    uint32_t row; /* rows[] index during the batches; sites[] index after finish */
    uint32_t stack;
    uint64_t samples;
    const char *path; /* symbolized at publish */
};

struct sites {
    const struct pes_stream_info *si;
    uint32_t top;
    enum replay_by by;
    /* rows in first-event order, found through a 4-byte index by id, so a
     * high id costs index entries, not rows; events without a site
     * (PEBS/IBS in uninstrumented code, common) and ids from MAX_DENSE_SITE on
     * share one row outside the index, which would otherwise grow to
     * MAX_DENSE_SITE entries */
    uint32_t *site_row; /* [site_n] row + 1, 0 = none yet */
    size_t site_n;
    uint32_t pooled_row; /* row + 1 of the shared row, 0 = none yet */
    struct replay_sampled_site *rows;
    size_t n_rows, cap_rows;
    /* after finish: the rows with events by site id, the shared row last */
    struct replay_sampled_site *sites;
    size_t n_sites;
    /* (row, stack) -> samples: an open-addressing index of pairs[] (entry + 1) */
    struct stack_pair *pairs;
    size_t n_pairs, cap_pairs;
    uint32_t *pair_slot;
    size_t cap_slots;
    size_t *pair_start; /* after finish: site i's pairs are pairs[pair_start[i] .. [i+1]) */
    char **paths;       /* at publish: each pair's symbolized path (owned) */
};

static int oom(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct sites *a = calloc(1, sizeof *a);
    if (!a) {
        oom(err);
        return NULL;
    }
    a->si = si;
    a->top = k->top;
    a->by = replay_by_parse(k->by);
    return a;
}

static struct replay_sampled_site *site_of(struct sites *c, uint32_t site, struct pes_error *err)
{
    uint32_t *slot = &c->pooled_row;
    if (site < MAX_DENSE_SITE) {
        if (site >= c->site_n) {
            size_t n = c->site_n ? c->site_n : 256;
            while (n <= site)
                n *= 2;
            uint32_t *idx = realloc(c->site_row, n * sizeof *idx);
            if (!idx) {
                oom(err);
                return NULL;
            }
            memset(idx + c->site_n, 0, (n - c->site_n) * sizeof *idx);
            c->site_row = idx;
            c->site_n = n;
        }
        slot = &c->site_row[site];
    }
    if (*slot)
        return &c->rows[*slot - 1];
    if (c->n_rows == c->cap_rows) {
        size_t cap = c->cap_rows ? c->cap_rows * 2 : 64;
        struct replay_sampled_site *r = realloc(c->rows, cap * sizeof *r);
        if (!r) {
            oom(err);
            return NULL;
        }
        c->rows = r;
        c->cap_rows = cap;
    }
    struct replay_sampled_site *d = &c->rows[c->n_rows++];
    memset(d, 0, sizeof *d);
    d->site = site < MAX_DENSE_SITE ? site : UINT32_MAX;
    *slot = (uint32_t)c->n_rows;
    return d;
}

static size_t pair_hash(uint32_t row, uint32_t stack, size_t cap)
{
    return (size_t)pes_hash_fib((uint64_t)row << 32 | stack, 32) & (cap - 1);
}

/* Counts a sample of rows[row] with a call stack. */
static int add_pair(struct sites *a, uint32_t row, uint32_t stack, struct pes_error *err)
{
    if ((a->n_pairs + 1) * 2 > a->cap_slots) {
        size_t cap = a->cap_slots ? a->cap_slots * 2 : 256;
        uint32_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return oom(err);
        for (size_t i = 0; i < a->n_pairs; i++) {
            size_t h = pair_hash(a->pairs[i].row, a->pairs[i].stack, cap);
            while (slot[h])
                h = (h + 1) & (cap - 1);
            slot[h] = (uint32_t)i + 1;
        }
        free(a->pair_slot);
        a->pair_slot = slot;
        a->cap_slots = cap;
    }
    size_t h = pair_hash(row, stack, a->cap_slots);
    for (; a->pair_slot[h]; h = (h + 1) & (a->cap_slots - 1)) {
        struct stack_pair *p = &a->pairs[a->pair_slot[h] - 1];
        if (p->row == row && p->stack == stack) {
            p->samples++;
            return 0;
        }
    }
    if (a->n_pairs == a->cap_pairs) {
        size_t cap = a->cap_pairs ? a->cap_pairs * 2 : 64;
        struct stack_pair *np = realloc(a->pairs, cap * sizeof *np);
        if (!np)
            return oom(err);
        a->pairs = np;
        a->cap_pairs = cap;
    }
    a->pairs[a->n_pairs] = (struct stack_pair){row, stack, 1, NULL};
    a->pair_slot[h] = (uint32_t)++a->n_pairs;
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct sites *a = self;
    for (size_t i = 0; i < b->n_events; i++) {
        const struct pes_event *e = &b->events[i];
        if (e->kind != PES_EV_SAMPLE && e->kind != PES_EV_REUSE && e->kind != PES_EV_INVALIDATION &&
            e->kind != PES_EV_COMM)
            continue;
        struct replay_sampled_site *site = site_of(a, e->site, err);
        if (!site)
            return -1;
        switch (e->kind) {
        case PES_EV_SAMPLE:
            site->samples++;
            if (pes_stack_known(e->stack) &&
                add_pair(a, (uint32_t)(site - a->rows), e->stack, err) < 0)
                return -1;
            break;
        case PES_EV_REUSE:
            site->reuses++;
            break;
        case PES_EV_INVALIDATION:
            site->invalidations++;
            break;
        default:
            if (e->flags & PES_EVF_FALSE_SHARING)
                site->comm_false++;
            else
                site->comm_true++;
            break;
        }
    }
    return 0;
}

static int has_events(const struct replay_sampled_site *d)
{
    return d->samples || d->reuses || d->invalidations || d->comm_true || d->comm_false;
}

static int by_site_then_samples(const void *x, const void *y)
{
    const struct stack_pair *p = x, *q = y;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    if (p->samples != q->samples)
        return p->samples > q->samples ? -1 : 1;
    return (p->stack > q->stack) - (p->stack < q->stack);
}

/* The pairs renumbered from rows to sites (every row with a sample is a
 * site), grouped by site. */
static int finish_pairs(struct sites *a, struct pes_error *err)
{
    free(a->pair_slot);
    a->pair_slot = NULL;
    a->cap_slots = 0;
    if (!a->n_pairs)
        return 0;
    uint32_t *site_of_row = malloc(a->n_rows * sizeof *site_of_row);
    if (!site_of_row || !(a->pair_start = calloc(a->n_sites + 1, sizeof *a->pair_start))) {
        free(site_of_row);
        return oom(err);
    }
    for (size_t i = 0; i < a->n_rows; i++)
        site_of_row[i] = UINT32_MAX;
    uint32_t next = 0; /* the order finish gives the sites */
    for (size_t i = 0; i <= a->site_n; i++) {
        uint32_t row = i < a->site_n ? a->site_row[i] : a->pooled_row;
        if (row && has_events(&a->rows[row - 1]))
            site_of_row[row - 1] = next++;
    }
    for (size_t i = 0; i < a->n_pairs; i++) /* a row with a sample has events: a site */
        a->pairs[i].row = site_of_row[a->pairs[i].row];
    free(site_of_row);
    qsort(a->pairs, a->n_pairs, sizeof *a->pairs, by_site_then_samples);
    for (size_t i = 0; i < a->n_pairs; i++)
        a->pair_start[a->pairs[i].row + 1]++;
    for (size_t i = 0; i < a->n_sites; i++)
        a->pair_start[i + 1] += a->pair_start[i];
    return 0;
}

static int finish(void *self, struct pes_error *err)
{
    struct sites *a = self;
    size_t n = 0;
    for (size_t i = 0; i < a->n_rows; i++)
        n += has_events(&a->rows[i]);
    if (!(a->sites = calloc(n ? n : 1, sizeof *a->sites)))
        return oom(err);
    for (size_t i = 0; i <= a->site_n; i++) { /* by site id, as reported; the shared row last */
        uint32_t row = i < a->site_n ? a->site_row[i] : a->pooled_row;
        if (!row || !has_events(&a->rows[row - 1]))
            continue;
        struct replay_sampled_site *o = &a->sites[a->n_sites++];
        *o = a->rows[row - 1];
        o->line_key = replay_site_line_key(a->si->site(a->si->site_ctx, o->site), o->site);
    }
    return finish_pairs(a, err);
}

int replay_sampled_sites_export(const void *self, struct replay_sampled *s, struct pes_error *err)
{
    const struct sites *a = self;
    free(s->sites);
    if (!(s->sites = malloc((a->n_sites ? a->n_sites : 1) * sizeof *s->sites)))
        return oom(err);
    memcpy(s->sites, a->sites, a->n_sites * sizeof *s->sites);
    s->n_sites = a->n_sites;
    return 0;
}

/* A row's counts (a site's, a --by group's). */
static void publish_counts(struct pes_report *r, struct pes_rnode *row,
                           const struct replay_sampled_site *p)
{
    pes_r_u64(r, row, "samples", p->samples);
    pes_r_u64(r, row, "reuses", p->reuses);
    pes_r_u64(r, row, "invalidations", p->invalidations);
    pes_r_u64(r, row, "comm_true", p->comm_true);
    pes_r_u64(r, row, "comm_false", p->comm_false);
}

/* ------------------------------------------------------------ call paths */

/* Each pair's path, symbolized once per stack. 0, or -1 without memory. */
static int symbolize(struct sites *a)
{
    if (a->paths || !a->n_pairs)
        return 0;
    size_t cap = 64;
    while (cap < 2 * a->n_pairs)
        cap *= 2;
    uint32_t *first = calloc(cap, sizeof *first); /* stack -> its first pair + 1 */
    if (!first || !(a->paths = calloc(a->n_pairs, sizeof *a->paths))) {
        free(first);
        return -1;
    }
    for (size_t i = 0; i < a->n_pairs; i++) {
        uint32_t stack = a->pairs[i].stack;
        size_t h = (size_t)pes_hash_fib(stack, 32) & (cap - 1);
        while (first[h] && a->pairs[first[h] - 1].stack != stack)
            h = (h + 1) & (cap - 1);
        if (first[h]) {
            a->pairs[i].path = a->pairs[first[h] - 1].path;
            continue;
        }
        first[h] = (uint32_t)i + 1;
        char buf[1024];
        if (!pes_objects_callpath(a->si->objects, stack, buf, sizeof buf))
            snprintf(buf, sizeof buf, "(call stack %u)", stack); /* objects not resolved */
        if (!(a->paths[i] = strdup(buf))) {
            free(first);
            return -1;
        }
        a->pairs[i].path = a->paths[i];
    }
    free(first);
    return 0;
}

struct path_sum {
    const char *path;
    uint64_t samples;
};

static int by_path(const void *x, const void *y)
{
    return strcmp(((const struct path_sum *)x)->path, ((const struct path_sum *)y)->path);
}

static int by_samples_then_path(const void *x, const void *y)
{
    const struct path_sum *p = x, *q = y;
    if (p->samples != q->samples)
        return p->samples > q->samples ? -1 : 1;
    return strcmp(p->path, q->path);
}

/* The samples of the sites site_idx[0..n) (NULL: every site) per call path,
 * most samples first; *out is malloc'd. The number of paths, or -1. */
static long path_sums(const struct sites *a, const uint32_t *site_idx, size_t n,
                      struct path_sum **out)
{
    size_t m = 0;
    for (size_t k = 0; k < (site_idx ? n : 1); k++)
        m += site_idx ? a->pair_start[site_idx[k] + 1] - a->pair_start[site_idx[k]] : a->n_pairs;
    struct path_sum *p = malloc((m ? m : 1) * sizeof *p);
    if (!p)
        return -1;
    size_t j = 0;
    for (size_t k = 0; k < (site_idx ? n : 1); k++) {
        size_t from = site_idx ? a->pair_start[site_idx[k]] : 0;
        size_t to = site_idx ? a->pair_start[site_idx[k] + 1] : a->n_pairs;
        for (size_t i = from; i < to; i++)
            p[j++] = (struct path_sum){a->pairs[i].path, a->pairs[i].samples};
    }
    qsort(p, m, sizeof *p, by_path);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u && strcmp(p[u - 1].path, p[i].path) == 0)
            p[u - 1].samples += p[i].samples;
        else
            p[u++] = p[i];
    }
    qsort(p, u, sizeof *p, by_samples_then_path);
    *out = p;
    return (long)u;
}

/* A row's top call paths: "callpaths", each with its samples and its share of
 * the row's `samples`. Nothing for a trace without stacks. */
static void publish_paths(struct sites *a, struct pes_report *r, struct pes_rnode *row,
                          const uint32_t *site_idx, size_t n, uint64_t samples)
{
    if (!a->n_pairs)
        return;
    struct path_sum *p = NULL;
    long u = symbolize(a) < 0 ? -1 : path_sums(a, site_idx, n, &p);
    if (u < 0) {
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    struct pes_rnode *arr = pes_r_array(r, row, "callpaths");
    for (long k = 0; k < u && k < PATHS_PER_ROW; k++) {
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        pes_r_str(r, o, "path", p[k].path);
        pes_r_u64(r, o, "samples", p[k].samples);
        pes_r_f64(r, o, "share", samples ? (double)p[k].samples / (double)samples : 0.0, "%.6g");
    }
    free(p);
}

/* --by callpath: the call paths ranked by their samples, each with its
 * share of all samples (samples without a stack are in no row). */
static void publish_callpaths(struct sites *a, struct pes_report *r, struct pes_rnode *o)
{
    pes_r_str(r, o, "by", replay_by_name(a->by));
    struct pes_rnode *arr = pes_r_array(r, o, "groups");
    if (!a->n_pairs)
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < a->n_sites; i++)
        total += a->sites[i].samples;
    struct path_sum *p = NULL;
    long u = symbolize(a) < 0 ? -1 : path_sums(a, NULL, 0, &p);
    if (u < 0) {
        pes_r_array(r, NULL, NULL);
        return;
    }
    uint32_t top = a->top < 256 ? a->top : 256;
    for (long k = 0; k < u && k < (long)top; k++) {
        struct pes_rnode *row = pes_r_object(r, arr, NULL);
        pes_r_str(r, row, "key", p[k].path);
        pes_r_u64(r, row, "samples", p[k].samples);
        pes_r_f64(r, row, "share", total ? (double)p[k].samples / (double)total : 0.0, "%.6g");
    }
    free(p);
}

/* Rows of --by: the sites' counts added per group, ranked as the sites are. */
static void publish_groups(struct sites *a, struct pes_report *r, struct pes_rnode *o)
{
    pes_r_str(r, o, "by", replay_by_name(a->by));
    struct pes_rnode *arr = pes_r_array(r, o, "groups");
    uint32_t *keys = malloc((a->n_sites ? a->n_sites : 1) * sizeof *keys);
    struct replay_groups g;
    for (size_t i = 0; keys && i < a->n_sites; i++)
        keys[i] = a->sites[i].site;
    if (!keys || replay_groups_make(&g, a->si, a->by, keys, a->n_sites) < 0) {
        free(keys);
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    struct replay_sampled_site *rows = calloc(g.n ? g.n : 1, sizeof *rows);
    size_t *idx = malloc((g.n ? g.n : 1) * sizeof *idx);
    if (!rows || !idx)
        pes_r_array(r, NULL, NULL);
    for (size_t i = 0; rows && idx && i < a->n_sites; i++) {
        struct replay_sampled_site *w = &rows[g.of[i]];
        const struct replay_sampled_site *x = &a->sites[i];
        w->samples += x->samples;
        w->reuses += x->reuses;
        w->invalidations += x->invalidations;
        w->comm_true += x->comm_true;
        w->comm_false += x->comm_false;
    }
    size_t n =
        rows && idx ? replay_sampled_top_rows(rows, g.n, a->top < 256 ? a->top : 256, idx) : 0;
    for (size_t k = 0; k < n; k++) {
        struct pes_rnode *row = pes_r_object(r, arr, NULL);
        replay_group_publish(r, row, a->si, a->by, &g, idx[k], keys);
        publish_counts(r, row, &rows[idx[k]]);
        publish_paths(a, r, row, g.member + g.start[idx[k]], g.start[idx[k] + 1] - g.start[idx[k]],
                      rows[idx[k]].samples);
    }
    free(rows);
    free(idx);
    free(keys);
    replay_groups_free(&g);
}

static void publish(void *self, const struct pes_publish *to)
{
    struct sites *a = self;
    if (a->si->paired)
        return; /* --compare: the report is accuracy.c's */
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    struct pes_rnode *sites = pes_r_array(r, o, "sites");
    size_t idx[256];
    size_t n = replay_sampled_top_rows(a->sites, a->n_sites, a->top < 256 ? a->top : 256, idx);
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &a->sites[idx[k]];
        struct pes_rnode *row = pes_r_object(r, sites, NULL);
        if (p->site == UINT32_MAX)
            pes_r_null(r, row, "site");
        else
            pes_r_u64(r, row, "site", p->site);
        char label[128];
        report_site_label(label, sizeof label, a->si->site(a->si->site_ctx, p->site), p->site);
        pes_r_str(r, row, "label", label);
        publish_counts(r, row, p);
        uint32_t at = (uint32_t)idx[k];
        publish_paths(a, r, row, &at, 1, p->samples);
    }
    if (a->by == REPLAY_BY_CALLPATH)
        publish_callpaths(a, r, o);
    else if (a->by != REPLAY_BY_OBJECT)
        publish_groups(a, r, o); /* by object: sampled_objects.c */
}

static void destroy(void *self)
{
    struct sites *a = self;
    free(a->site_row);
    free(a->rows);
    free(a->sites);
    for (size_t i = 0; a->paths && i < a->n_pairs; i++)
        free(a->paths[i]);
    free(a->paths);
    free(a->pairs);
    free(a->pair_slot);
    free(a->pair_start);
    free(a);
}

const struct pes_analysis pes_analysis_sampled_sites = {
    .name = "sampled_sites",
    .help = "events per site of a sampled trace, and per --by group",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
