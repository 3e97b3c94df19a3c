/*
 * callpaths.c — (key, path, site) triples as dense ids, call path names and
 * the rows' top paths (callpaths.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callpath.h"
#include "callpaths.h"
#include "groups.h"

struct triple {
    uint32_t key, path, site;
};

enum { MEMO_SLOTS = 256 };

struct replay_pathkeys {
    struct triple *ids; /* [n] */
    uint32_t n, cap;
    uint32_t *slot; /* open addressing: id + 1, 0 empty */
    uint32_t n_slots;
    struct triple last; /* the previous access's triple and id: loops repeat theirs */
    uint32_t last_id;
    /* the triples seen lately, by their site's low bits plus a mix of path
     * and key: a loop's accesses cycle through a few sites (one path per
     * thread) and each finds its id here without the hash table (id
     * UINT32_MAX: empty) */
    struct triple memo[MEMO_SLOTS];
    uint32_t memo_id[MEMO_SLOTS];
};

static uint32_t hash3(struct triple t)
{
    uint64_t h = ((uint64_t)t.key * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)t.path << 21) ^ t.site;
    h *= 0xff51afd7ed558ccdull;
    return (uint32_t)(h ^ (h >> 32));
}

struct replay_pathkeys *replay_pathkeys_create(void)
{
    struct replay_pathkeys *pk = calloc(1, sizeof *pk);
    if (!pk)
        return NULL;
    pk->last_id = UINT32_MAX;
    for (int i = 0; i < MEMO_SLOTS; i++)
        pk->memo_id[i] = UINT32_MAX;
    return pk;
}

void replay_pathkeys_destroy(struct replay_pathkeys *pk)
{
    if (!pk)
        return;
    free(pk->ids);
    free(pk->slot);
    free(pk);
}

static int grow(struct replay_pathkeys *pk)
{
    uint32_t n = pk->n_slots ? 2 * pk->n_slots : 1024;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (uint32_t id = 0; id < pk->n; id++) {
        uint32_t h = hash3(pk->ids[id]) & (n - 1);
        while (t[h])
            h = (h + 1) & (n - 1);
        t[h] = id + 1;
    }
    free(pk->slot);
    pk->slot = t;
    pk->n_slots = n;
    return 0;
}

static uint32_t intern(struct replay_pathkeys *pk, struct triple t)
{
    if (pk->last_id != UINT32_MAX && pk->last.key == t.key && pk->last.path == t.path &&
        pk->last.site == t.site)
        return pk->last_id;
    uint32_t m = (t.site + (t.path * 0x9E3779B1u >> 24) + (t.key * 0x85EBCA6Bu >> 24)) % MEMO_SLOTS;
    if (pk->memo_id[m] != UINT32_MAX && pk->memo[m].key == t.key && pk->memo[m].path == t.path &&
        pk->memo[m].site == t.site) {
        pk->last = t;
        return pk->last_id = pk->memo_id[m];
    }
    if (2 * (pk->n + 1) > pk->n_slots && grow(pk) < 0)
        return UINT32_MAX;
    uint32_t h = hash3(t) & (pk->n_slots - 1);
    for (; pk->slot[h]; h = (h + 1) & (pk->n_slots - 1)) {
        const struct triple *x = &pk->ids[pk->slot[h] - 1];
        if (x->key == t.key && x->path == t.path && x->site == t.site)
            break;
    }
    if (!pk->slot[h]) {
        if (pk->n == pk->cap) {
            uint32_t cap = pk->cap ? 2 * pk->cap : 256;
            struct triple *x = realloc(pk->ids, cap * sizeof *x);
            if (!x)
                return UINT32_MAX;
            pk->ids = x;
            pk->cap = cap;
        }
        pk->ids[pk->n] = t;
        pk->slot[h] = ++pk->n;
    }
    pk->last = t;
    pk->memo[m] = t;
    pk->memo_id[m] = pk->slot[h] - 1;
    return pk->last_id = pk->slot[h] - 1;
}

int replay_pathkeys_map(struct replay_pathkeys *pk, const uint32_t *keys, const uint32_t *paths,
                        const uint32_t *sites, size_t n, uint32_t *out)
{
    for (size_t i = 0; i < n; i++) {
        struct triple t = {keys ? keys[i] : 0, paths ? paths[i] : 0, sites[i]};
        if ((out[i] = intern(pk, t)) == UINT32_MAX)
            return -1;
    }
    return 0;
}

uint32_t replay_pathkeys_count(const struct replay_pathkeys *pk)
{
    return pk->n;
}

uint32_t replay_pathkeys_key(const struct replay_pathkeys *pk, uint32_t id)
{
    return id < pk->n ? pk->ids[id].key : UINT32_MAX;
}

uint32_t replay_pathkeys_path(const struct replay_pathkeys *pk, uint32_t id)
{
    return id < pk->n ? pk->ids[id].path : 0;
}

uint32_t replay_pathkeys_site(const struct replay_pathkeys *pk, uint32_t id)
{
    return id < pk->n ? pk->ids[id].site : UINT32_MAX;
}

int replay_callpaths_shown(const struct pes_stream_info *si)
{
    return si->callpaths && pes_callpaths_count(si->callpaths) > 1;
}

static const struct pes_site *site_of(const struct pes_stream_info *si, uint32_t id)
{
    return id == UINT32_MAX || !si->site ? NULL : si->site(si->site_ctx, id);
}

static const char *base_name(const char *file)
{
    const char *b = file ? strrchr(file, '/') : NULL;
    return b ? b + 1 : file ? file : "";
}

void replay_callpath_name(const struct pes_stream_info *si, uint32_t path, uint32_t site, char *buf,
                          size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (at < n) {                                                                              \
            int w = snprintf(buf + at, n - at, __VA_ARGS__);                                       \
            at += w > 0 ? (size_t)w : 0;                                                           \
        }                                                                                          \
    } while (0)
    uint32_t depth = 0;
    int cut = 0;
    const uint32_t *calls =
        si->callpaths ? pes_callpaths_sites(si->callpaths, path, &depth, &cut) : NULL;
    if (cut)
        PUT("... > ");
    for (uint32_t i = 0; calls && i < depth; i++) {
        const struct pes_site *c = site_of(si, calls[i]);
        const char *fn = c && c->function && *c->function ? c->function : "(unknown function)";
        if (c && c->file && *c->file && c->line)
            PUT("%s (%s:%u) > ", fn, base_name(c->file), c->line);
        else
            PUT("%s > ", fn);
    }
    const struct pes_site *s = site_of(si, site);
    PUT("%s", s && s->function && *s->function ? s->function : "(unknown function)");
#undef PUT
}

struct named {
    char *name;
    uint64_t value;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static int by_value_desc(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    return strcmp(x->name, y->name);
}

void replay_callpaths_publish(struct pes_report *r, struct pes_rnode *row,
                              const struct pes_stream_info *si, const char *metric,
                              const uint32_t *sites, const uint32_t *paths, const uint64_t *values,
                              size_t n, uint64_t row_total)
{
    struct pes_rnode *arr = pes_r_array(r, row, "callpaths");
    struct named *v = calloc(n ? n : 1, sizeof *v);
    int ok = v != NULL;
    char buf[1024];
    for (size_t i = 0; ok && i < n; i++) {
        replay_callpath_name(si, paths[i], sites[i], buf, sizeof buf);
        v[i].value = values[i];
        ok = (v[i].name = strdup(buf)) != NULL;
    }
    size_t m = 0; /* distinct names, values added */
    if (ok && n) {
        qsort(v, n, sizeof *v, by_name);
        for (size_t i = 0; i < n; i++) {
            if (m && strcmp(v[i].name, v[m - 1].name) == 0) {
                v[m - 1].value += v[i].value;
                free(v[i].name);
            } else
                v[m++] = v[i];
        }
        qsort(v, m, sizeof *v, by_value_desc);
    }
    for (size_t i = 0; ok && i < m && i < REPLAY_TOP_CALLPATHS; i++) {
        if (v[i].value == 0)
            break;
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        pes_r_str(r, o, "path", v[i].name);
        pes_r_u64(r, o, metric, v[i].value);
        pes_r_f64(r, o, "share", row_total ? (double)v[i].value / (double)row_total : 0.0, "%.6g");
    }
    if (!ok)
        pes_r_array(r, NULL, NULL); /* marks the report failed */
    for (size_t i = 0; v && i < (ok ? m : n); i++)
        free(v[i].name);
    free(v);
}

int replay_groups_make_paths(struct replay_groups *g, const struct pes_stream_info *si,
                             const uint32_t *sites, const uint32_t *paths, size_t n)
{
    struct replay_groups line;
    memset(g, 0, sizeof *g);
    if (replay_groups_make(&line, si, REPLAY_BY_LINE, sites, n) < 0)
        return -1;
    /* members of each line group ordered by path (then index): one group per (line, path) */
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    uint32_t *member = malloc((n ? n : 1) * sizeof *member);
    g->of = malloc((n ? n : 1) * sizeof *g->of);
    g->member = malloc((n ? n : 1) * sizeof *g->member);
    g->start = malloc((n + 1) * sizeof *g->start);
    g->label = calloc(n ? n : 1, sizeof *g->label);
    int ok = order && member && g->of && g->member && g->start && g->label;
    size_t k = 0;
    for (size_t grp = 0; ok && grp < line.n; grp++) {
        size_t from = k;
        for (uint32_t m = line.start[grp]; m < line.start[grp + 1]; m++)
            member[k] = line.member[m],
            order[k++] = (uint64_t)paths[line.member[m]] << 32 | line.member[m];
        /* a line group's members are few: insertion sort by (path, index) */
        for (size_t i = from + 1; i < k; i++)
            for (size_t j = i; j > from && order[j - 1] > order[j]; j--) {
                uint64_t t = order[j];
                order[j] = order[j - 1], order[j - 1] = t;
            }
        for (size_t i = from; i < k; i++) {
            uint32_t idx = (uint32_t)order[i], path = (uint32_t)(order[i] >> 32);
            if (i == from || path != (uint32_t)(order[i - 1] >> 32)) {
                char name[1024], label[1400];
                replay_callpath_name(si, path, sites[idx], name, sizeof name);
                const struct pes_site *s = site_of(si, sites[idx]);
                if (s && s->file && *s->file && s->line)
                    snprintf(label, sizeof label, "%s (%s:%u)", name, base_name(s->file), s->line);
                else
                    snprintf(label, sizeof label, "%s (%s)", name, line.label[grp]);
                g->start[g->n] = (uint32_t)i;
                if (!(g->label[g->n++] = strdup(label))) {
                    ok = 0;
                    break;
                }
            }
            g->member[i] = idx;
            g->of[idx] = (uint32_t)(g->n - 1);
        }
    }
    if (ok)
        g->start[g->n] = (uint32_t)n;
    free(order);
    free(member);
    replay_groups_free(&line);
    if (!ok) {
        replay_groups_free(g);
        return -1;
    }
    return 0;
}
