/*
 * sampled_sites.c — a sampled trace's events per site (raw counts: samples,
 * reuses, invalidations, communication events with true and false sharing).
 * Publishes the report's "sites" (the top sites) and, unless --by object
 * (sampled_objects.c), "by" and "groups": the sites' counts summed per
 * source line, function or site (groups.h). The accuracy join ranks the
 * sites' source lines against the full trace's (Marathe's top-k).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "report_util.h"
#include "sampled_publish.h"
#include "sampled_results.h"

#define MAX_DENSE_SITE (1u << 22)

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
    return 0;
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
    }
    if (a->by != REPLAY_BY_OBJECT)
        publish_groups(a, r, o); /* by object: sampled_objects.c */
}

static void destroy(void *self)
{
    struct sites *a = self;
    free(a->site_row);
    free(a->rows);
    free(a->sites);
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
