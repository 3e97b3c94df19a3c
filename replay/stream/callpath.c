/*
 * callpath.c — per-thread call stacks from CALL/RETURN records and the
 * shared table of distinct call paths (callpath.h).
 */
#include <stdlib.h>
#include <string.h>

#include "callpath.h"

struct frame {
    uint64_t sp;   /* the caller's stack pointer at the call */
    uint32_t path; /* the thread's path inside the call */
};

struct thread {
    struct frame *frames;
    uint32_t n, cap;
    uint32_t base;         /* a worker inside a region: its opener's path; else 0 */
    uint32_t level;        /* parallel regions entered and not left */
    uint32_t worker_level; /* the level at which base was set (0: none) */
    int entered;           /* region/region_path are set */
    uint64_t region;       /* the last region entered */
    uint32_t region_path;  /* the thread's path when it entered it */
};

struct entry {
    uint32_t at; /* first site in sites[] */
    uint32_t n;
    int cut;
};

struct pes_callpaths {
    struct pes_callpaths_view view; /* first: pes_callpaths_current reads it */
    uint32_t depth;
    uint32_t *now;
    struct thread *threads;
    uint32_t *parent;
    struct entry *paths;
    uint32_t n_paths, cap_paths;
    uint32_t *sites;
    size_t n_sites, cap_sites;
    uint32_t *slot; /* open addressing: path id + 1, 0 empty */
    uint32_t n_slots;
};

static uint32_t hash_path(const uint32_t *s, uint32_t n, int cut)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)cut;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static int same(const struct pes_callpaths *cp, uint32_t id, const uint32_t *s, uint32_t n, int cut)
{
    const struct entry *e = &cp->paths[id];
    return e->n == n && e->cut == cut && memcmp(cp->sites + e->at, s, n * sizeof *s) == 0;
}

static int grow_slots(struct pes_callpaths *cp)
{
    uint32_t n = cp->n_slots ? 2 * cp->n_slots : 256;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (uint32_t id = 1; id < cp->n_paths; id++) {
        const struct entry *e = &cp->paths[id];
        uint32_t h = hash_path(cp->sites + e->at, e->n, e->cut) & (n - 1);
        while (t[h])
            h = (h + 1) & (n - 1);
        t[h] = id + 1;
    }
    free(cp->slot);
    cp->slot = t;
    cp->n_slots = n;
    return 0;
}

/* The id of the path s[0..n) (outermost first), added if new; UINT32_MAX without memory. */
static uint32_t intern(struct pes_callpaths *cp, const uint32_t *s, uint32_t n, int cut)
{
    if (n == 0)
        return 0;
    if (2 * (cp->n_paths + 1) > cp->n_slots && grow_slots(cp) < 0)
        return UINT32_MAX;
    uint32_t h = hash_path(s, n, cut) & (cp->n_slots - 1);
    for (; cp->slot[h]; h = (h + 1) & (cp->n_slots - 1))
        if (same(cp, cp->slot[h] - 1, s, n, cut))
            return cp->slot[h] - 1;
    if (cp->n_paths == cp->cap_paths) {
        uint32_t cap = 2 * cp->cap_paths;
        struct entry *p = realloc(cp->paths, cap * sizeof *p);
        if (!p)
            return UINT32_MAX;
        cp->paths = p;
        cp->cap_paths = cap;
    }
    if (cp->n_sites + n > cp->cap_sites) {
        size_t cap = cp->cap_sites ? 2 * cp->cap_sites : 1024;
        while (cap < cp->n_sites + n)
            cap *= 2;
        uint32_t *t = realloc(cp->sites, cap * sizeof *t);
        if (!t)
            return UINT32_MAX;
        cp->sites = t;
        cp->cap_sites = cap;
    }
    memcpy(cp->sites + cp->n_sites, s, n * sizeof *s);
    uint32_t id = cp->n_paths++;
    cp->paths[id] = (struct entry){.at = (uint32_t)cp->n_sites, .n = n, .cut = cut};
    cp->n_sites += n;
    cp->slot[h] = id + 1;
    return id;
}

struct pes_callpaths *pes_callpaths_create(uint32_t depth, uint32_t n_threads,
                                           const uint32_t *parent)
{
    if (depth == 0 || depth > PES_CALLPATH_MAX_DEPTH)
        return NULL;
    struct pes_callpaths *cp = calloc(1, sizeof *cp);
    if (!cp)
        return NULL;
    cp->depth = depth;
    cp->now = calloc(n_threads ? n_threads : 1, sizeof *cp->now);
    cp->threads = calloc(n_threads ? n_threads : 1, sizeof *cp->threads);
    cp->parent = malloc((n_threads ? n_threads : 1) * sizeof *cp->parent);
    cp->cap_paths = 64;
    cp->paths = calloc(cp->cap_paths, sizeof *cp->paths);
    if (!cp->now || !cp->threads || !cp->parent || !cp->paths) {
        pes_callpaths_destroy(cp);
        return NULL;
    }
    for (uint32_t t = 0; t < n_threads; t++)
        cp->parent[t] = parent && parent[t] < n_threads && parent[t] != t ? parent[t] : UINT32_MAX;
    cp->n_paths = 1; /* id 0: no recorded call */
    cp->view = (struct pes_callpaths_view){.n_threads = n_threads, .now = cp->now};
    return cp;
}

void pes_callpaths_destroy(struct pes_callpaths *cp)
{
    if (!cp)
        return;
    for (uint32_t t = 0; cp->threads && t < cp->view.n_threads; t++)
        free(cp->threads[t].frames);
    free(cp->threads);
    free(cp->now);
    free(cp->parent);
    free(cp->paths);
    free(cp->sites);
    free(cp->slot);
    free(cp);
}

void pes_callpaths_reset(struct pes_callpaths *cp)
{
    for (uint32_t t = 0; t < cp->view.n_threads; t++) {
        struct frame *f = cp->threads[t].frames;
        uint32_t cap = cp->threads[t].cap;
        cp->threads[t] = (struct thread){.frames = f, .cap = cap};
        cp->now[t] = 0;
    }
}

uint32_t pes_callpaths_count(const struct pes_callpaths *cp)
{
    return cp->n_paths;
}

const uint32_t *pes_callpaths_sites(const struct pes_callpaths *cp, uint32_t id, uint32_t *n,
                                    int *cut)
{
    *n = 0;
    *cut = 0;
    if (id == 0 || id >= cp->n_paths)
        return NULL;
    *n = cp->paths[id].n;
    *cut = cp->paths[id].cut;
    return cp->sites + cp->paths[id].at;
}

static uint32_t path_of(const struct thread *th)
{
    return th->n ? th->frames[th->n - 1].path : th->base;
}

/* The contract's repair: frames opened below sp (callees a longjmp or an
 * exception left) are gone once the thread is back at sp. */
static void drop_below(struct thread *th, uint64_t sp)
{
    while (th->n && th->frames[th->n - 1].sp < sp)
        th->n--;
}

static int call(struct pes_callpaths *cp, struct thread *th, uint64_t sp, uint32_t site)
{
    /* A caller has one call open at a time, and a callee's stack pointer is
     * below its caller's: an open call made at sp itself is over too (a
     * longjmp back into that caller left it open). The contract's rule
     * alone (frames below sp) would keep it under the new call. */
    while (th->n && th->frames[th->n - 1].sp <= sp)
        th->n--;
    uint32_t n, s[PES_CALLPATH_MAX_DEPTH + 1];
    int cut;
    const uint32_t *outer = pes_callpaths_sites(cp, path_of(th), &n, &cut);
    if (n) /* id 0: no sites */
        memcpy(s, outer, n * sizeof *s);
    s[n++] = site;
    uint32_t from = 0;
    if (n > cp->depth) { /* the innermost depth calls */
        from = n - cp->depth;
        cut = 1;
    }
    uint32_t id = intern(cp, s + from, n - from, cut);
    if (id == UINT32_MAX)
        return -1;
    if (th->n == th->cap) {
        uint32_t cap = th->cap ? 2 * th->cap : 16;
        struct frame *f = realloc(th->frames, cap * sizeof *f);
        if (!f)
            return -1;
        th->frames = f;
        th->cap = cap;
    }
    th->frames[th->n++] = (struct frame){.sp = sp, .path = id};
    return 0;
}

static void ret(struct thread *th, uint64_t sp)
{
    drop_below(th, sp);
    if (th->n && th->frames[th->n - 1].sp == sp)
        th->n--; /* else a RETURN without its CALL: ignored */
}

static void region_begin(struct pes_callpaths *cp, uint32_t t, uint64_t region)
{
    struct thread *th = &cp->threads[t];
    th->level++;
    if (th->n == 0 && th->worker_level == 0) { /* no open call: a worker of the region */
        uint32_t p = cp->parent[t];
        const struct thread *pt = p != UINT32_MAX ? &cp->threads[p] : NULL;
        th->base = !pt ? 0 : pt->entered && pt->region == region ? pt->region_path : path_of(pt);
        th->worker_level = th->level;
    }
    th->entered = 1;
    th->region = region;
    th->region_path = path_of(th);
}

static void region_end(struct thread *th)
{
    if (th->worker_level && th->level == th->worker_level) {
        th->base = 0;
        th->n = 0;
        th->worker_level = 0;
    }
    if (th->level)
        th->level--;
}

int pes_callpaths_record(struct pes_callpaths *cp, uint32_t thread, const struct pes_record *r)
{
    if (thread >= cp->view.n_threads)
        return 0;
    struct thread *th = &cp->threads[thread];
    switch (r->id) {
    case PES_ID_CALL:
        if (call(cp, th, r->addr, r->extra) < 0)
            return -1;
        break;
    case PES_ID_RETURN:
        ret(th, r->addr);
        break;
    case PES_ID_REGION_BEGIN:
        region_begin(cp, thread, r->addr);
        break;
    case PES_ID_REGION_END:
        region_end(th);
        break;
    default:
        return 0;
    }
    cp->now[thread] = path_of(th);
    return 0;
}

/* ------------------------------------------------------------ parts */

/* A part's effect is a log, in merged order, of what its records did to the
 * state they started from (unknown to the part): a thread's open calls are
 * always ordered by stack pointer (a CALL first ends those at or below its
 * sp), so a record reaching below the calls the part opened itself ends
 * exactly the starting calls at or below its sp (POP). Calls the part opened
 * stay the part's own (local) until something reads the thread's state: a
 * parallel region of the thread or of a thread it created (OPEN them, then
 * BEGIN or END). A thread's POPs that nothing read in between merge (the
 * larger sp), so a loop of calls costs no entries. */
enum effect_op { EFFECT_POP, EFFECT_OPEN, EFFECT_BEGIN, EFFECT_END };

struct effect_entry {
    uint32_t op, thread;
    uint64_t arg;    /* POP: sp; BEGIN: the region */
    size_t first, n; /* OPEN: frames[first .. first + n) */
};

struct effect_frame {
    uint64_t sp;
    uint32_t site;
    uint32_t sym; /* the thread's symbolic path inside the call */
};

/* What a thread's part-local paths start from: its state after its entry
 * `entry` (index + 1; 0: the part's start), and when that entry is a POP,
 * after the pop at or below pop_sp (a POP's sp grows as later pops merge). */
struct anchor {
    uint32_t thread;
    uint32_t unused; /* 0: the bytes a part sends are all set */
    size_t entry;
    uint64_t pop_sp;
};

struct effect_thread {
    struct effect_frame *open; /* the calls the part opened and not yet logged */
    uint32_t n, cap;
    size_t last_pop;   /* its last entry, if a POP: index + 1; 0: none */
    size_t last_entry; /* its last entry: index + 1; 0: none */
    uint32_t anchored; /* the symbolic path of its anchor alone; 0: none yet */
};

/* Symbolic paths (part-local ids, pes_callpaths_effect_current): an
 * anchor's token (its index + 1), then the call sites the part opened on
 * it, outermost first; or, when those are more than depth, token 0 and the
 * innermost depth of them, cut (the anchor no longer shows). */
struct pes_callpaths_effect {
    struct pes_callpaths_view view; /* first: pes_callpaths_effect_current reads it */
    uint32_t n_threads, depth;
    uint32_t *now;
    uint32_t *parent;
    struct pes_callpaths *sym; /* the table of symbolic paths */
    struct anchor *anchors;
    uint32_t n_anchors, cap_anchors;
    struct effect_thread *threads;
    struct effect_entry *log;
    size_t n_log, cap_log;
    struct effect_frame *frames;
    size_t n_frames, cap_frames;
};

static uint32_t anchored(struct pes_callpaths_effect *e, uint32_t t);

struct pes_callpaths_effect *pes_callpaths_effect_create(uint32_t depth, uint32_t n_threads,
                                                         const uint32_t *parent)
{
    if (depth == 0 || depth > PES_CALLPATH_MAX_DEPTH)
        return NULL;
    struct pes_callpaths_effect *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->n_threads = n_threads;
    e->depth = depth;
    e->now = calloc(n_threads ? n_threads : 1, sizeof *e->now);
    e->parent = malloc((n_threads ? n_threads : 1) * sizeof *e->parent);
    e->threads = calloc(n_threads ? n_threads : 1, sizeof *e->threads);
    e->sym = pes_callpaths_create(1, 0, NULL);
    if (!e->now || !e->parent || !e->threads || !e->sym) {
        pes_callpaths_effect_destroy(e);
        return NULL;
    }
    for (uint32_t t = 0; t < n_threads; t++) /* as pes_callpaths_create */
        e->parent[t] = parent && parent[t] < n_threads && parent[t] != t ? parent[t] : UINT32_MAX;
    e->view = (struct pes_callpaths_view){.n_threads = n_threads, .now = e->now};
    for (uint32_t t = 0; t < n_threads; t++) /* each thread's path at the start */
        if ((e->now[t] = anchored(e, t)) == UINT32_MAX) {
            pes_callpaths_effect_destroy(e);
            return NULL;
        }
    return e;
}

void pes_callpaths_effect_destroy(struct pes_callpaths_effect *e)
{
    if (!e)
        return;
    for (uint32_t t = 0; e->threads && t < e->n_threads; t++)
        free(e->threads[t].open);
    free(e->threads);
    free(e->now);
    free(e->parent);
    pes_callpaths_destroy(e->sym);
    free(e->anchors);
    free(e->log);
    free(e->frames);
    free(e);
}

size_t pes_callpaths_effect_size(const struct pes_callpaths_effect *e)
{
    return e->n_log + e->n_frames;
}

static int effect_log(struct pes_callpaths_effect *e, struct effect_entry x)
{
    if (e->n_log == e->cap_log) {
        size_t cap = e->cap_log ? 2 * e->cap_log : 64;
        struct effect_entry *l = realloc(e->log, cap * sizeof *l);
        if (!l)
            return -1;
        e->log = l;
        e->cap_log = cap;
    }
    e->log[e->n_log++] = x;
    struct effect_thread *th = &e->threads[x.thread];
    th->last_pop = x.op == EFFECT_POP ? e->n_log : 0;
    th->last_entry = e->n_log;
    th->anchored = 0;
    return 0;
}

/* Thread t's own open calls into the log (something reads its state now). */
static int effect_open(struct pes_callpaths_effect *e, uint32_t t)
{
    struct effect_thread *th = &e->threads[t];
    if (th->n == 0)
        return 0;
    if (e->n_frames + th->n > e->cap_frames) {
        size_t cap = e->cap_frames ? 2 * e->cap_frames : 64;
        while (cap < e->n_frames + th->n)
            cap *= 2;
        struct effect_frame *f = realloc(e->frames, cap * sizeof *f);
        if (!f)
            return -1;
        e->frames = f;
        e->cap_frames = cap;
    }
    memcpy(e->frames + e->n_frames, th->open, th->n * sizeof *th->open);
    struct effect_entry x = {.op = EFFECT_OPEN, .thread = t, .first = e->n_frames, .n = th->n};
    e->n_frames += th->n;
    th->n = 0;
    return effect_log(e, x);
}

/* The part's calls at or below sp end; when none of its own stays open, so
 * do the starting calls at or below sp. */
static int effect_pop(struct pes_callpaths_effect *e, uint32_t t, uint64_t sp)
{
    struct effect_thread *th = &e->threads[t];
    while (th->n && th->open[th->n - 1].sp <= sp)
        th->n--;
    if (th->n)
        return 0;
    if (th->last_pop) { /* nothing read the thread since its last POP */
        struct effect_entry *x = &e->log[th->last_pop - 1];
        if (sp > x->arg) {
            x->arg = sp;
            th->anchored = 0; /* a new anchor for the paths from now on */
        }
        return 0;
    }
    return effect_log(e, (struct effect_entry){.op = EFFECT_POP, .thread = t, .arg = sp});
}

static int effect_step(struct pes_callpaths_effect *e, uint32_t thread, const struct pes_record *r);

/* Thread t's symbolic path with none of the part's calls open above its
 * anchor: the anchor's token alone (a new anchor if its state changed).
 * UINT32_MAX without memory. */
static uint32_t anchored(struct pes_callpaths_effect *e, uint32_t t)
{
    struct effect_thread *th = &e->threads[t];
    if (th->anchored)
        return th->anchored;
    if (e->n_anchors == e->cap_anchors) {
        uint32_t cap = e->cap_anchors ? 2 * e->cap_anchors : 16;
        struct anchor *a = realloc(e->anchors, cap * sizeof *a);
        if (!a)
            return UINT32_MAX;
        e->anchors = a;
        e->cap_anchors = cap;
    }
    uint64_t pop_sp = th->last_pop ? e->log[th->last_pop - 1].arg : 0;
    e->anchors[e->n_anchors] =
        (struct anchor){.thread = t, .entry = th->last_entry, .pop_sp = pop_sp};
    uint32_t token = ++e->n_anchors;
    return th->anchored = intern(e->sym, &token, 1, 0);
}

/* Thread t's symbolic path now; UINT32_MAX without memory. */
static uint32_t effect_path(struct pes_callpaths_effect *e, uint32_t t)
{
    struct effect_thread *th = &e->threads[t];
    return th->n ? th->open[th->n - 1].sym : anchored(e, t);
}

/* The symbolic path of a call at `site` made on symbolic path `outer`. */
static uint32_t effect_call_path(struct pes_callpaths_effect *e, uint32_t outer, uint32_t site)
{
    uint32_t n, s[PES_CALLPATH_MAX_DEPTH + 2];
    int cut;
    const uint32_t *o = pes_callpaths_sites(e->sym, outer, &n, &cut);
    memcpy(s, o, n * sizeof *s);
    s[n++] = site;
    if (n - 1 > e->depth) { /* token 0 and the innermost depth sites */
        memmove(s + 1, s + n - e->depth, e->depth * sizeof *s);
        s[0] = 0;
        n = e->depth + 1;
        cut = 1;
    }
    return intern(e->sym, s, n, cut);
}

int pes_callpaths_effect_record(struct pes_callpaths_effect *e, uint32_t thread,
                                const struct pes_record *r)
{
    if (thread >= e->n_threads)
        return 0;
    int rc = effect_step(e, thread, r);
    uint32_t p = e->parent[thread];
    if (rc == 0 && (e->now[thread] = effect_path(e, thread)) == UINT32_MAX)
        rc = -1;
    if (rc == 0 && r->id == PES_ID_REGION_BEGIN && p != UINT32_MAX &&
        (e->now[p] = effect_path(e, p)) == UINT32_MAX)
        rc = -1;
    return rc;
}

static int effect_step(struct pes_callpaths_effect *e, uint32_t thread, const struct pes_record *r)
{
    struct effect_thread *th = &e->threads[thread];
    switch (r->id) {
    case PES_ID_CALL: {
        if (effect_pop(e, thread, r->addr) < 0)
            return -1;
        uint32_t outer = effect_path(e, thread);
        uint32_t sym = outer == UINT32_MAX ? UINT32_MAX : effect_call_path(e, outer, r->extra);
        if (sym == UINT32_MAX)
            return -1;
        if (th->n == th->cap) {
            uint32_t cap = th->cap ? 2 * th->cap : 16;
            struct effect_frame *f = realloc(th->open, cap * sizeof *f);
            if (!f)
                return -1;
            th->open = f;
            th->cap = cap;
        }
        th->open[th->n++] = (struct effect_frame){.sp = r->addr, .site = r->extra, .sym = sym};
        return 0;
    }
    case PES_ID_RETURN:
        /* on calls ordered by sp, "those below sp and the one at sp" are
         * those at or below sp */
        return effect_pop(e, thread, r->addr);
    case PES_ID_REGION_BEGIN: {
        uint32_t p = e->parent[thread];
        if (p != UINT32_MAX) { /* a worker reads its creator's path */
            if (effect_open(e, p) < 0)
                return -1;
            e->threads[p].last_pop = 0;
        }
        if (effect_open(e, thread) < 0)
            return -1;
        return effect_log(
            e, (struct effect_entry){.op = EFFECT_BEGIN, .thread = thread, .arg = r->addr});
    }
    case PES_ID_REGION_END:
        if (effect_open(e, thread) < 0)
            return -1;
        return effect_log(e, (struct effect_entry){.op = EFFECT_END, .thread = thread});
    default:
        return 0;
    }
}

static int apply_open(struct pes_callpaths *cp, uint32_t t, const struct effect_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (call(cp, &cp->threads[t], f[i].sp, f[i].site) < 0)
            return -1;
    return 0;
}

static int by_entry(const void *a, const void *b)
{
    const struct anchor *x = *(const struct anchor *const *)a,
                        *y = *(const struct anchor *const *)b;
    return x->entry < y->entry ? -1 : x->entry > y->entry ? 1 : x < y ? -1 : x > y;
}

/* Thread th's path after the pop at or below sp, without popping. */
static uint32_t path_after_pop(const struct thread *th, uint64_t sp)
{
    uint32_t n = th->n;
    while (n && th->frames[n - 1].sp <= sp)
        n--;
    return n ? th->frames[n - 1].path : th->base;
}

/* e applied to cp; with apath, each anchor's path (in cp's table) into
 * apath[anchor] as the log passes it. 0, or -1 without memory. */
static int run_effect(struct pes_callpaths *cp, const struct pes_callpaths_effect *e,
                      uint32_t *apath)
{
    if (e->n_threads != cp->view.n_threads)
        return -1;
    const struct anchor **order = NULL;
    uint32_t next = 0;
    if (apath && e->n_anchors) {
        if (!(order = malloc(e->n_anchors * sizeof *order)))
            return -1;
        for (uint32_t a = 0; a < e->n_anchors; a++)
            order[a] = &e->anchors[a];
        qsort(order, e->n_anchors, sizeof *order, by_entry);
    }
    for (; order && next < e->n_anchors && order[next]->entry == 0; next++)
        apath[order[next] - e->anchors] = path_of(&cp->threads[order[next]->thread]);
    int rc = 0;
    for (size_t i = 0; i < e->n_log && rc == 0; i++) {
        const struct effect_entry *x = &e->log[i];
        struct thread *th = &cp->threads[x->thread];
        switch (x->op) {
        case EFFECT_POP:
            /* anchors taken before later pops merged into this one */
            for (; order && next < e->n_anchors && order[next]->entry == i + 1; next++)
                apath[order[next] - e->anchors] = path_after_pop(th, order[next]->pop_sp);
            while (th->n && th->frames[th->n - 1].sp <= x->arg)
                th->n--;
            break;
        case EFFECT_OPEN:
            rc = apply_open(cp, x->thread, e->frames + x->first, x->n);
            break;
        case EFFECT_BEGIN:
            region_begin(cp, x->thread, x->arg);
            break;
        default:
            region_end(th);
            break;
        }
        for (; order && next < e->n_anchors && order[next]->entry == i + 1; next++)
            apath[order[next] - e->anchors] = path_of(th);
        cp->now[x->thread] = path_of(th);
    }
    free(order);
    for (uint32_t t = 0; t < e->n_threads && rc == 0; t++) { /* the calls still open at the end */
        rc = apply_open(cp, t, e->threads[t].open, e->threads[t].n);
        cp->now[t] = path_of(&cp->threads[t]);
    }
    return rc;
}

int pes_callpaths_apply(struct pes_callpaths *cp, const struct pes_callpaths_effect *e)
{
    return run_effect(cp, e, NULL);
}

int pes_callpaths_resolve(struct pes_callpaths *cp, const struct pes_callpaths_effect *e,
                          struct pes_callpaths *whole, uint32_t *map)
{
    if (whole->depth != e->depth)
        return -1;
    uint32_t *apath = malloc((e->n_anchors ? e->n_anchors : 1) * sizeof *apath);
    if (!apath || run_effect(cp, e, apath) < 0) {
        free(apath);
        return -1;
    }
    map[0] = 0;
    uint32_t count = pes_callpaths_count(e->sym);
    for (uint32_t id = 1; id < count; id++) {
        uint32_t n, na, s[2 * PES_CALLPATH_MAX_DEPTH];
        int cut, acut;
        const uint32_t *q = pes_callpaths_sites(e->sym, id, &n, &cut);
        if (q[0] == 0) { /* the part's own calls alone, cut */
            map[id] = intern(whole, q + 1, n - 1, 1);
        } else {
            const uint32_t *a = pes_callpaths_sites(cp, apath[q[0] - 1], &na, &acut);
            if (na) /* id 0: no sites */
                memcpy(s, a, na * sizeof *s);
            memcpy(s + na, q + 1, (n - 1) * sizeof *s);
            uint32_t total = na + n - 1, from = total > e->depth ? total - e->depth : 0;
            map[id] = intern(whole, s + from, total - from, acut || from > 0);
        }
        if (map[id] == UINT32_MAX) {
            free(apath);
            return -1;
        }
    }
    free(apath);
    return 0;
}

uint32_t pes_callpaths_effect_count(const struct pes_callpaths_effect *e)
{
    return pes_callpaths_count(e->sym);
}

/* ------------------------------------------------------------ effect bytes */

/* [u32 depth, threads, anchors, symbolic paths][u64 entries, frames]
 * [u32 open calls per thread][open frames][entries][frames][anchors]
 * [per symbolic path from id 1: u32 n, u32 cut, n x u32]; host order. */
struct packer {
    unsigned char *at, *end;
    size_t need;
};

static void put(struct packer *p, const void *v, size_t n)
{
    if (p->at && (size_t)(p->end - p->at) >= n) {
        memcpy(p->at, v, n);
        p->at += n;
    } else {
        p->at = NULL;
    }
    p->need += n;
}

size_t pes_callpaths_effect_pack(const struct pes_callpaths_effect *e, void *buf, size_t cap)
{
    struct packer p = {.at = buf, .end = buf ? (unsigned char *)buf + cap : NULL};
    uint32_t count = pes_callpaths_count(e->sym);
    uint32_t head[4] = {e->depth, e->n_threads, e->n_anchors, count};
    uint64_t sizes[2] = {e->n_log, e->n_frames};
    put(&p, head, sizeof head);
    put(&p, sizes, sizeof sizes);
    for (uint32_t t = 0; t < e->n_threads; t++)
        put(&p, &e->threads[t].n, sizeof e->threads[t].n);
    for (uint32_t t = 0; t < e->n_threads; t++)
        for (uint32_t i = 0; i < e->threads[t].n; i++)
            put(&p, &e->threads[t].open[i], sizeof(struct effect_frame));
    for (size_t i = 0; i < e->n_log; i++)
        put(&p, &e->log[i], sizeof *e->log);
    for (size_t i = 0; i < e->n_frames; i++)
        put(&p, &e->frames[i], sizeof *e->frames);
    for (uint32_t a = 0; a < e->n_anchors; a++)
        put(&p, &e->anchors[a], sizeof *e->anchors);
    for (uint32_t id = 1; id < count; id++) {
        uint32_t n;
        int cut;
        const uint32_t *s = pes_callpaths_sites(e->sym, id, &n, &cut);
        uint32_t nc[2] = {n, (uint32_t)cut};
        put(&p, nc, sizeof nc);
        put(&p, s, n * sizeof *s);
    }
    return p.need;
}

struct unpacker {
    const unsigned char *at, *end;
    int bad;
};

static const void *take(struct unpacker *u, size_t n)
{
    if (u->bad || (size_t)(u->end - u->at) < n) {
        u->bad = 1;
        return NULL;
    }
    const void *v = u->at;
    u->at += n;
    return v;
}

struct pes_callpaths_effect *pes_callpaths_effect_unpack(const void *buf, size_t len,
                                                         struct pes_error *err)
{
    struct unpacker u = {.at = buf, .end = (const unsigned char *)buf + len};
    uint32_t head[4];
    uint64_t sizes[2];
    const void *h = take(&u, sizeof head), *z = take(&u, sizeof sizes);
    if (!h || !z) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "call paths of a part: %zu bytes", len);
        return NULL;
    }
    memcpy(head, h, sizeof head);
    memcpy(sizes, z, sizeof sizes);
    /* every count must fit in what is left before anything is allocated */
    size_t left = (size_t)(u.end - u.at);
    if ((uint64_t)head[1] * 4 > left || sizes[0] > left / sizeof(struct effect_entry) ||
        sizes[1] > left / sizeof(struct effect_frame) ||
        (uint64_t)head[2] > left / sizeof(struct anchor) || (uint64_t)head[3] > left / 8 + 1) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "call paths of a part: %zu bytes", len);
        return NULL;
    }
    struct pes_callpaths_effect *e = pes_callpaths_effect_create(head[0], head[1], NULL);
    if (!e) {
        pes_error_set(err,
                      head[0] && head[0] <= PES_CALLPATH_MAX_DEPTH ? PES_ERR_NOMEM : PES_ERR_FORMAT,
                      0, "call paths of a part: depth %u", head[0]);
        return NULL;
    }
    /* the fresh effect made an anchor per thread: the packed ones replace them */
    pes_callpaths_destroy(e->sym);
    free(e->anchors);
    e->anchors = NULL;
    e->n_anchors = e->cap_anchors = 0;
    int nomem = !(e->sym = pes_callpaths_create(1, 0, NULL));
    for (uint32_t t = 0; !nomem && !u.bad && t < e->n_threads; t++) {
        const void *v = take(&u, sizeof(uint32_t));
        if (v)
            memcpy(&e->threads[t].n, v, sizeof(uint32_t));
        if (v && e->threads[t].n > (size_t)(u.end - u.at) / sizeof(struct effect_frame))
            u.bad = 1;
    }
    for (uint32_t t = 0; !nomem && !u.bad && t < e->n_threads; t++) {
        struct effect_thread *th = &e->threads[t];
        const void *v = take(&u, (size_t)th->n * sizeof *th->open);
        if (!v || !th->n)
            continue;
        if (!(th->open = malloc(th->n * sizeof *th->open)))
            nomem = 1;
        else
            memcpy(th->open, v, th->n * sizeof *th->open);
        th->cap = th->n;
    }
    const void *lv = take(&u, (size_t)sizes[0] * sizeof *e->log),
               *fv = take(&u, (size_t)sizes[1] * sizeof *e->frames),
               *av = take(&u, (size_t)head[2] * sizeof *e->anchors);
    if (!nomem && !u.bad) {
        e->log = malloc((sizes[0] ? sizes[0] : 1) * sizeof *e->log);
        e->frames = malloc((sizes[1] ? sizes[1] : 1) * sizeof *e->frames);
        e->anchors = malloc((head[2] ? head[2] : 1) * sizeof *e->anchors);
        nomem = !e->log || !e->frames || !e->anchors;
    }
    if (!nomem && !u.bad) {
        memcpy(e->log, lv, (size_t)sizes[0] * sizeof *e->log);
        memcpy(e->frames, fv, (size_t)sizes[1] * sizeof *e->frames);
        memcpy(e->anchors, av, (size_t)head[2] * sizeof *e->anchors);
        e->n_log = e->cap_log = (size_t)sizes[0];
        e->n_frames = e->cap_frames = (size_t)sizes[1];
        e->n_anchors = e->cap_anchors = head[2];
    }
    /* what resolve trusts: entries name threads and frames in range, anchors
     * threads and entries in range */
    for (size_t i = 0; !nomem && !u.bad && i < e->n_log; i++) {
        const struct effect_entry *x = &e->log[i];
        u.bad = x->thread >= e->n_threads || x->op > EFFECT_END ||
                (x->op == EFFECT_OPEN && (x->first > e->n_frames || x->n > e->n_frames - x->first));
    }
    for (uint32_t a = 0; !nomem && !u.bad && a < e->n_anchors; a++)
        u.bad = e->anchors[a].thread >= e->n_threads || e->anchors[a].entry > e->n_log;
    for (uint32_t id = 1; !nomem && !u.bad && id < head[3]; id++) {
        uint32_t nc[2];
        const void *v = take(&u, sizeof nc);
        if (!v)
            break;
        memcpy(nc, v, sizeof nc);
        const uint32_t *s = nc[0] && nc[0] <= e->depth + 1 ? take(&u, nc[0] * sizeof *s) : NULL;
        uint32_t sites[PES_CALLPATH_MAX_DEPTH + 1];
        if (!s) {
            u.bad = 1;
            break;
        }
        memcpy(sites, s, nc[0] * sizeof *sites);
        /* a token names an anchor; the ids come back in order */
        if ((sites[0] && sites[0] > e->n_anchors) || nc[1] > 1) {
            u.bad = 1;
            break;
        }
        uint32_t got = intern(e->sym, sites, nc[0], (int)nc[1]);
        if (got == UINT32_MAX)
            nomem = 1;
        else if (got != id)
            u.bad = 1;
    }
    if (!nomem && !u.bad && u.at != u.end)
        u.bad = 1;
    if (nomem || u.bad) {
        pes_callpaths_effect_destroy(e);
        if (nomem)
            pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory for call paths");
        else
            pes_error_set(err, PES_ERR_FORMAT, 0, "call paths of a part: %zu bytes", len);
        return NULL;
    }
    return e;
}
