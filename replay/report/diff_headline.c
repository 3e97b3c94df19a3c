/*
 * diff_headline.c — the few numbers a diff leads with (diff.h,
 * pes_diff_headline): per simulated configuration the misses of each level,
 * the coherence events and writebacks, the model's hit rates and predicted
 * runtime, and the trace's accesses, as A, B, delta and relative change;
 * the changed ones ranked. Unlike diff.c this knows the full report's
 * layout (docs/replay.schema.json): the headline is what a person reads
 * first, so it names the metrics people act on, in their words.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

struct metric {
    char name[64];
    char config[64]; /* "cores=2", "cores=4 mimicked"; "" for the trace */
    const char *unit;
    double a, b;
    size_t order; /* listing order: ties keep it */
};

struct list {
    struct metric *m;
    size_t n, cap;
    int failed;
};

static void add(struct list *l, const char *name, const char *config, const char *unit, double a,
                double b)
{
    if (a == b || !isfinite(a) || !isfinite(b))
        return; /* only changes lead */
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct metric *m = realloc(l->m, cap * sizeof *m);
        if (!m) {
            l->failed = 1;
            return;
        }
        l->m = m;
        l->cap = cap;
    }
    struct metric *m = &l->m[l->n++];
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->config, sizeof m->config, "%s", config);
    m->unit = unit;
    m->a = a;
    m->b = b;
    m->order = l->n;
}

static double num(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : 0;
}

static double pair_sum(const json_t *o)
{
    return num(json_object_get(o, "true")) + num(json_object_get(o, "false"));
}

/* B's configuration matching A's c (same cores and mimicked), or NULL. */
static const json_t *config_in(const json_t *configs, const json_t *c)
{
    size_t i;
    const json_t *x;
    json_array_foreach(configs, i, x)
    {
        if (json_equal(json_object_get(x, "cores"), json_object_get(c, "cores")) &&
            json_equal(json_object_get(x, "mimicked"), json_object_get(c, "mimicked")))
            return x;
    }
    return NULL;
}

static void config_metrics(struct list *l, const json_t *ca, const json_t *cb)
{
    char label[64];
    snprintf(label, sizeof label, "cores=%lld%s",
             (long long)json_integer_value(json_object_get(ca, "cores")),
             json_is_true(json_object_get(ca, "mimicked")) ? " mimicked" : "");
    const json_t *sa = json_object_get(ca, "simulation"), *sb = json_object_get(cb, "simulation");
    if (sa && sb) {
        const json_t *la = json_object_get(sa, "levels"), *lb = json_object_get(sb, "levels");
        for (size_t k = 0; k < json_array_size(la) && k < json_array_size(lb); k++) {
            const json_t *x = json_array_get(la, k), *y = json_array_get(lb, k);
            char name[32];
            snprintf(name, sizeof name, "L%zu misses", k + 1);
            add(l, name, label, "count",
                num(json_object_get(x, "accesses")) - num(json_object_get(x, "hits")),
                num(json_object_get(y, "accesses")) - num(json_object_get(y, "hits")));
        }
        static const char *const pairs[][2] = {{"invalidations", "invalidations"},
                                               {"coherence_misses", "coherence misses"},
                                               {"transfers", "line transfers"}};
        for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
            add(l, pairs[i][1], label, "count", pair_sum(json_object_get(sa, pairs[i][0])),
                pair_sum(json_object_get(sb, pairs[i][0])));
        add(l, "writebacks", label, "count", num(json_object_get(sa, "writebacks")),
            num(json_object_get(sb, "writebacks")));
    }
    const json_t *ma = json_object_get(ca, "model"), *mb = json_object_get(cb, "model");
    if (ma && mb) {
        const json_t *ha = json_object_get(ma, "hit_local"), *hb = json_object_get(mb, "hit_local");
        for (size_t k = 0; k < json_array_size(ha) && k < json_array_size(hb); k++) {
            char name[48];
            snprintf(name, sizeof name, "L%zu hit rate (model)", k + 1);
            add(l, name, label, "ratio", num(json_array_get(ha, k)), num(json_array_get(hb, k)));
        }
        add(l, "predicted runtime", label, "s",
            num(json_object_get(json_object_get(ma, "runtime"), "total_seconds")),
            num(json_object_get(json_object_get(mb, "runtime"), "total_seconds")));
    }
}

/* Counts first, by |delta| (they share one unit, events, so the largest
 * change in events leads); then the other metrics by |relative|. Ties keep
 * the order they were listed in (a stable rank: level order). */
static int is_count(const struct metric *m)
{
    return strcmp(m->unit, "count") == 0;
}

static double weight(const struct metric *m)
{
    if (is_count(m))
        return fabs(m->b - m->a);
    return m->a != 0 ? fabs((m->b - m->a) / m->a) : INFINITY;
}

static int by_change(const void *x, const void *y)
{
    const struct metric *a = x, *b = y;
    if (is_count(a) != is_count(b))
        return is_count(a) ? -1 : 1;
    double wa = weight(a), wb = weight(b);
    if (wa != wb)
        return wa < wb ? 1 : -1;
    return a->order < b->order ? -1 : a->order > b->order;
}

json_t *pes_diff_headline(const json_t *a, const json_t *b)
{
    struct list l = {0};
    add(&l, "accesses", "", "count", num(json_object_get(json_object_get(a, "trace"), "accesses")),
        num(json_object_get(json_object_get(b, "trace"), "accesses")));
    size_t i;
    const json_t *ca;
    json_array_foreach(json_object_get(a, "configs"), i, ca)
    {
        const json_t *cb = config_in(json_object_get(b, "configs"), ca);
        if (cb)
            config_metrics(&l, ca, cb);
    }
    json_t *out = json_array();
    if (l.failed || !out) {
        free(l.m);
        json_decref(out);
        return NULL;
    }
    if (l.n)
        qsort(l.m, l.n, sizeof *l.m, by_change);
    for (size_t k = 0; k < l.n; k++) {
        const struct metric *m = &l.m[k];
        json_t *o = json_object();
        double d = m->b - m->a;
        if (!o || json_array_append_new(out, o) < 0) {
            json_decref(o);
            json_decref(out);
            free(l.m);
            return NULL;
        }
        json_object_set_new(o, "metric", json_string(m->name));
        json_object_set_new(o, "config", json_string(m->config));
        json_object_set_new(o, "unit", json_string(m->unit));
        json_object_set_new(o, "a", pes_diff_number(m->a));
        json_object_set_new(o, "b", pes_diff_number(m->b));
        json_object_set_new(o, "delta", pes_diff_number(d));
        json_object_set_new(o, "relative", pes_diff_relative(m->a, m->b));
    }
    free(l.m);
    return out;
}
