/*
 * groups.c — --by: which row of a ranked table each site (or object) falls
 * in, and the row's label (groups.h).
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "report_util.h"

#include "objects.h"

static const char *const by_names[] = {"line", "site", "function", "object", "callpath"};

enum replay_by replay_by_parse(const char *name)
{
    for (int i = 0; name && i < 5; i++)
        if (strcmp(name, by_names[i]) == 0)
            return (enum replay_by)i;
    return REPLAY_BY_LINE;
}

const char *replay_by_name(enum replay_by by)
{
    return by_names[by <= REPLAY_BY_CALLPATH ? by : 0];
}

void replay_object_name(const struct pes_stream_info *si, uint32_t id, char *buf, size_t n)
{
    const struct pes_object *ob = si->objects && id ? pes_objects_get(si->objects, id) : NULL;
    if (ob && ob->name && *ob->name) {
        snprintf(buf, n, "%s", ob->name);
        return;
    }
    if (id == 0 || !si->objects)
        snprintf(buf, n, "unknown");
    else
        snprintf(buf, n, "object %u", id);
}

void replay_object_part(const struct pes_stream_info *si, uint32_t id, uint64_t offset, char *buf,
                        size_t n)
{
    buf[0] = '\0';
    if (!si->objects || !id)
        return;
    /* a stack's offset counts from the thread's lowest stack address: it
     * names no frame and moves from run to run, so a stack part is its name */
    const struct pes_object *ob = pes_objects_get(si->objects, id);
    if (ob && ob->kind == PES_OBJ_STACK)
        offset = 0;
    pes_objects_describe(si->objects, id, offset, buf, n);
}

static const struct pes_site *site_of(const struct pes_stream_info *si, uint32_t id)
{
    return id == UINT32_MAX || !si->site ? NULL : si->site(si->site_ctx, id);
}

struct keyed {
    char *sort;   /* what groups keys: equal strings, one group */
    uint32_t idx; /* the key's index */
};

static int by_sort(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->sort, y->sort);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The grouping string of key k: sites of one file and line, of one
 * function; each site or object alone. Sites without a location stay alone. */
static char *sort_key(const struct pes_stream_info *si, enum replay_by by, uint32_t k)
{
    if (by == REPLAY_BY_CALLPATH) /* keys without their paths: the lines (callpaths.h) */
        by = REPLAY_BY_LINE;
    const struct pes_site *s = by == REPLAY_BY_OBJECT ? NULL : site_of(si, k);
    char num[16];
    snprintf(num, sizeof num, "%010u", k);
    const char *file = s && s->file ? s->file : "";
    const char *fn = s && s->function ? s->function : "";
    size_t len = strlen(file) + strlen(fn) + 40;
    char *out = malloc(len);
    if (!out)
        return NULL;
    if (by == REPLAY_BY_LINE && *file && s->line)
        snprintf(out, len, "L%s\x01%010u", file, s->line);
    else if (by == REPLAY_BY_FUNCTION)
        snprintf(out, len, "F%s", fn);
    else
        snprintf(out, len, "%c%s", by == REPLAY_BY_OBJECT ? 'O' : 'S', num);
    return out;
}

static void label_of(const struct pes_stream_info *si, enum replay_by by, uint32_t k, char *buf,
                     size_t n)
{
    if (by == REPLAY_BY_CALLPATH)
        by = REPLAY_BY_LINE;
    const struct pes_site *s = by == REPLAY_BY_OBJECT ? NULL : site_of(si, k);
    const char *base = s && s->file && *s->file ? strrchr(s->file, '/') : NULL;
    base = base ? base + 1 : s ? s->file : NULL;
    switch (by) {
    case REPLAY_BY_OBJECT:
        replay_object_name(si, k, buf, n);
        break;
    case REPLAY_BY_FUNCTION:
        snprintf(buf, n, "%s",
                 s && s->function && *s->function ? s->function : "(unknown function)");
        break;
    case REPLAY_BY_LINE:
    case REPLAY_BY_CALLPATH:
        if (base && *base && s->line) {
            snprintf(buf, n, "%s:%u%s%s", base, s->line, s->function && *s->function ? " " : "",
                     s->function ? s->function : "");
            break;
        }
        /* fall through: no location, the site alone */
    case REPLAY_BY_SITE:
        report_site_label(buf, n, s, k);
        break;
    }
}

static int by_label(const void *a, const void *b, void *labels)
{
    char **l = labels;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(l[x], l[y]);
    return c ? c : (x > y) - (x < y);
}

void replay_groups_free(struct replay_groups *g)
{
    for (size_t i = 0; g->label && i < g->n; i++)
        free(g->label[i]);
    free(g->label);
    free(g->of);
    free(g->member);
    free(g->start);
    memset(g, 0, sizeof *g);
}

int replay_groups_make(struct replay_groups *g, const struct pes_stream_info *si, enum replay_by by,
                       const uint32_t *keys, size_t n)
{
    memset(g, 0, sizeof *g);
    struct keyed *kv = calloc(n ? n : 1, sizeof *kv);
    g->of = malloc((n ? n : 1) * sizeof *g->of);
    g->member = malloc((n ? n : 1) * sizeof *g->member);
    g->start = malloc((n + 1) * sizeof *g->start);
    g->label = calloc(n ? n : 1, sizeof *g->label);
    int ok = kv && g->of && g->member && g->start && g->label;
    for (size_t i = 0; ok && i < n; i++) {
        kv[i] = (struct keyed){sort_key(si, by, keys[i]), (uint32_t)i};
        ok = kv[i].sort != NULL;
    }
    if (ok)
        qsort(kv, n, sizeof *kv, by_sort);
    char buf[512];
    for (size_t i = 0; ok && i < n; i++) {
        if (i == 0 || strcmp(kv[i].sort, kv[i - 1].sort) != 0) {
            g->start[g->n] = (uint32_t)i;
            label_of(si, by, keys[kv[i].idx], buf, sizeof buf);
            if (!(g->label[g->n++] = strdup(buf)))
                ok = 0;
        }
        g->member[i] = kv[i].idx;
        g->of[kv[i].idx] = (uint32_t)(g->n - 1);
    }
    if (ok)
        g->start[g->n] = (uint32_t)n;
    /* --by site: sites of one line, column and kind in different functions
     * or basic blocks look alike; their ids tell them apart */
    if (ok && by == REPLAY_BY_SITE && g->n > 1) {
        uint32_t *order = malloc(g->n * sizeof *order);
        char *dup = calloc(g->n, 1);
        ok = order && dup;
        for (size_t i = 0; ok && i < g->n; i++)
            order[i] = (uint32_t)i;
        if (ok)
            qsort_r(order, g->n, sizeof *order, by_label, g->label);
        for (size_t i = 1; ok && i < g->n; i++)
            if (strcmp(g->label[order[i]], g->label[order[i - 1]]) == 0)
                dup[order[i]] = dup[order[i - 1]] = 1;
        for (size_t i = 0; ok && i < g->n; i++) {
            if (!dup[i])
                continue;
            uint32_t k = keys[g->member[g->start[i]]];
            snprintf(buf, sizeof buf, "%s #%u", g->label[i], k);
            char *s = strdup(buf);
            if (!s)
                ok = 0;
            else {
                free(g->label[i]);
                g->label[i] = s;
            }
        }
        free(order);
        free(dup);
    }
    for (size_t i = 0; kv && i < n; i++)
        free(kv[i].sort);
    free(kv);
    if (!ok) {
        replay_groups_free(g);
        return -1;
    }
    return 0;
}

void replay_group_publish(struct pes_report *r, struct pes_rnode *o,
                          const struct pes_stream_info *si, enum replay_by by,
                          const struct replay_groups *g, size_t grp, const uint32_t *keys)
{
    uint32_t first = keys[g->member[g->start[grp]]];
    const struct pes_site *s = by == REPLAY_BY_OBJECT ? NULL : site_of(si, first);
    pes_r_str(r, o, "key", g->label[grp]);
    pes_r_str(r, o, "file", s && s->file && by != REPLAY_BY_FUNCTION ? s->file : "");
    pes_r_u64(r, o, "line", s && by != REPLAY_BY_FUNCTION ? s->line : 0);
    pes_r_str(r, o, "function", s && s->function ? s->function : "");
    if (by == REPLAY_BY_OBJECT)
        pes_r_u64(r, o, "object", first);
    else
        pes_r_null(r, o, "object");
    struct pes_rnode *a = pes_r_array(r, o, "sites");
    for (uint32_t m = g->start[grp]; by != REPLAY_BY_OBJECT && m < g->start[grp + 1]; m++) {
        uint32_t k = keys[g->member[m]];
        pes_r_i64(r, a, NULL, k == UINT32_MAX ? -1 : (int64_t)k);
    }
}
