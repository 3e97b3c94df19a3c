/*
 * objects.c — the object table, the live heap blocks and thread stacks (a
 * treap keyed by start address), the globals (a sorted array) and the
 * per-access lookup with its per-site cache. DWARF and symbols: dwarf.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects_int.h"

/* Site ids below this get a cache slot (ids are dense from 0). */
#define CACHE_SITES (UINT32_C(1) << 22)
/* A treap node's object for a thread's stack: the object is then the
 * accessing site's function's. */
#define STACK_MARK UINT32_MAX

struct node {
    uint64_t start, end;
    uint64_t born; /* time of its ALLOC event (sampled traces), else 0 */
    uint32_t obj;
    uint32_t prio;
    uint32_t l, r; /* 0: none (node 0 is never used) */
};

/* The last object a site touched: most accesses of a site hit the same
 * variable or block, so the tree and the binary search are skipped. Also
 * the gap between objects an unknown access fell in (an unresolved heap
 * array: every access of the site). An entry holds while the counter it
 * names still has the value it was filled with: a global's (a constant
 * zero), a live block's (bumped when a block goes), a gap's (bumped when a
 * block comes). */
struct site_cache {
    uint64_t lo, len; /* the range; len 0: empty */
    uint64_t stamp;
    const uint64_t *counter;
    uint32_t obj;
    uint32_t stack_obj; /* the site's function's stack object (0: not yet named) */
};

struct pending { /* an ALLOC waiting for its ALLOC_SIZE */
    uint64_t addr;
    uint32_t site;
    int set;
};

struct site_slot { /* allocation site id -> heap object */
    uint32_t key1; /* id + 1; 0 empty */
    uint32_t obj;
};

/* The live blocks and thread stacks as one stream of records sees them, and
 * that stream's per-site cache and pending ALLOCs. Lane 0 serves a recorded
 * run; mimicked cores each walk the sequential trace with a lane of their
 * own (pes_objects_set_lanes). */
struct lane {
    struct node *nodes;
    uint32_t n_nodes, cap_nodes, free_list, root;
    uint32_t rng;
    uint64_t epoch;           /* bumped whenever a live block goes: cached blocks older are stale */
    uint64_t alloc_epoch;     /* bumped whenever a block comes: cached gaps older are stale */
    struct site_cache *cache; /* per access site */
    uint32_t n_cache;
    struct pending *pend; /* per thread */
    uint32_t n_pend;
};

struct pes_objects {
    struct pes_object *obj;
    uint32_t n_obj, cap_obj;
    uint32_t *obj_global; /* [n_obj] index into globals, UINT32_MAX if none */
    struct objects_global *globals;
    size_t n_globals, cap_globals;
    int globals_sorted;
    struct objects_dwarf *dwarf;
    struct lane *lanes; /* [n_lanes], at least one */
    uint32_t n_lanes;
    uint64_t zero; /* the counter of cached globals */
    /* heap objects by allocation site, and by name (kept unique) */
    uint32_t *names; /* open addressing: object ids, 0 empty */
    uint32_t n_names, cap_names;
    struct site_slot *sites;
    uint32_t n_sites, cap_sites; /* cap a power of two */
    const struct pes_site *(*site)(const void *ctx, uint32_t id);
    const void *site_ctx;
    const uint64_t *(*alloc_site)(const void *ctx, uint32_t id, uint32_t *depth);
    const void *alloc_ctx;
    /* names given to all allocation sites of the trace in id order
     * (pes_objects_name_heap_sites), sorted by site */
    struct prenamed *pre;
    size_t n_pre;
};

struct prenamed {
    uint32_t site;
    char *name, *where, *stack;
};

static const struct pes_object unknown_object = {
    .id = 0, .kind = PES_OBJ_UNKNOWN, .name = "unknown", .where = "", .stack = ""};

/* ------------------------------------------------------------ the table */

uint32_t objects_add(struct pes_objects *o, enum pes_object_kind kind, const char *name,
                     const char *where, const char *stack, uint64_t size)
{
    if (o->n_obj == o->cap_obj) {
        uint32_t cap = o->cap_obj * 2;
        struct pes_object *t = realloc(o->obj, (size_t)cap * sizeof *t);
        if (!t)
            return 0;
        o->obj = t;
        uint32_t *g = realloc(o->obj_global, (size_t)cap * sizeof *g);
        if (!g)
            return 0;
        o->obj_global = g;
        o->cap_obj = cap;
    }
    char *n = strdup(name), *w = strdup(where ? where : ""), *s = strdup(stack ? stack : "");
    if (!n || !w || !s) {
        free(n), free(w), free(s);
        return 0;
    }
    uint32_t id = o->n_obj++;
    o->obj[id] = (struct pes_object){
        .id = id, .kind = kind, .name = n, .where = w, .stack = s, .size = size};
    o->obj_global[id] = UINT32_MAX;
    return id;
}

int objects_add_global(struct pes_objects *o, const struct objects_global *g)
{
    if (o->n_globals == o->cap_globals) {
        size_t cap = o->cap_globals ? o->cap_globals * 2 : 256;
        struct objects_global *t = realloc(o->globals, cap * sizeof *t);
        if (!t)
            return -1;
        o->globals = t;
        o->cap_globals = cap;
    }
    o->globals[o->n_globals++] = *g;
    o->globals_sorted = 0;
    return 0;
}

struct objects_dwarf *objects_dwarf_of(struct pes_objects *o)
{
    return o->dwarf;
}
void objects_set_dwarf(struct pes_objects *o, struct objects_dwarf *d)
{
    o->dwarf = d;
}

static void lanes_free(struct pes_objects *o)
{
    for (uint32_t i = 0; i < o->n_lanes; i++) {
        free(o->lanes[i].nodes);
        free(o->lanes[i].cache);
        free(o->lanes[i].pend);
    }
    free(o->lanes);
    o->lanes = NULL;
    o->n_lanes = 0;
}

int pes_objects_set_lanes(struct pes_objects *o, uint32_t n)
{
    if (n == 0)
        n = 1;
    struct lane *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        struct lane *L = &t[i];
        L->cap_nodes = 64;
        if (!(L->nodes = calloc(L->cap_nodes, sizeof *L->nodes))) {
            for (uint32_t k = 0; k < i; k++)
                free(t[k].nodes);
            free(t);
            return -1;
        }
        L->n_nodes = 1; /* node 0 is "none" */
        L->rng = 0x9E3779B9u;
        L->epoch = 1;
    }
    lanes_free(o);
    o->lanes = t;
    o->n_lanes = n;
    for (uint32_t i = 1; i < o->n_obj; i++) /* lane 0 counts the blocks again */
        if (o->obj[i].kind == PES_OBJ_HEAP)
            o->obj[i].blocks = 0, o->obj[i].size = 0;
    return 0;
}

uint32_t pes_objects_lanes(const struct pes_objects *o)
{
    return o->n_lanes;
}

struct pes_objects *pes_objects_create(void)
{
    struct pes_objects *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->cap_obj = 64;
    o->obj = malloc(o->cap_obj * sizeof *o->obj);
    o->obj_global = malloc(o->cap_obj * sizeof *o->obj_global);
    o->cap_sites = 64;
    o->sites = calloc(o->cap_sites, sizeof *o->sites);
    if (!o->obj || !o->obj_global || !o->sites || pes_objects_set_lanes(o, 1) < 0) {
        pes_objects_destroy(o);
        return NULL;
    }
    o->obj[0] = unknown_object;
    o->obj_global[0] = UINT32_MAX;
    o->n_obj = 1;
    o->globals_sorted = 1;
    return o;
}

void pes_objects_destroy(struct pes_objects *o)
{
    if (!o)
        return;
    for (uint32_t i = 1; i < o->n_obj; i++) {
        free((char *)o->obj[i].name);
        free((char *)o->obj[i].where);
        free((char *)o->obj[i].stack);
    }
    free(o->obj);
    free(o->obj_global);
    free(o->globals);
    objects_dwarf_free(o->dwarf);
    lanes_free(o);
    free(o->sites);
    free(o->names);
    for (size_t i = 0; i < o->n_pre; i++)
        free(o->pre[i].name), free(o->pre[i].where), free(o->pre[i].stack);
    free(o->pre);
    free(o);
}

uint32_t pes_objects_count(const struct pes_objects *o)
{
    return o ? o->n_obj : 1;
}

const struct pes_object *pes_objects_get(const struct pes_objects *o, uint32_t id)
{
    if (!o || id >= o->n_obj)
        return id == 0 ? &unknown_object : NULL;
    return &o->obj[id];
}

void pes_objects_set_sites(struct pes_objects *o,
                           const struct pes_site *(*site)(const void *ctx, uint32_t id),
                           const void *ctx)
{
    o->site = site;
    o->site_ctx = ctx;
}

void pes_objects_set_alloc_sites(struct pes_objects *o,
                                 const uint64_t *(*alloc_site)(const void *ctx, uint32_t id,
                                                               uint32_t *depth),
                                 const void *ctx)
{
    o->alloc_site = alloc_site;
    o->alloc_ctx = ctx;
}

/* ------------------------------------------------------------ globals */

static int global_cmp(const void *a, const void *b)
{
    const struct objects_global *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    /* at one address: the one with a type (DWARF) first, then the larger */
    if ((x->type_die != 0) != (y->type_die != 0))
        return x->type_die ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size;
}

/* Sorted by start, without overlaps (the first of overlapping ones stays:
 * aliases and a symbol behind its DWARF variable), and obj_global set. */
static void sort_globals(struct pes_objects *o)
{
    if (o->globals_sorted)
        return;
    qsort(o->globals, o->n_globals, sizeof *o->globals, global_cmp);
    size_t k = 0;
    for (size_t i = 0; i < o->n_globals; i++) {
        struct objects_global *g = &o->globals[i];
        if (k > 0 && g->start < o->globals[k - 1].start + o->globals[k - 1].size)
            continue;
        if (k > 0 &&
            g->start ==
                o->globals[k - 1].start) { /* a DWARF variable of unknown size: the symbol's */
            if (!o->globals[k - 1].size)
                o->globals[k - 1].size = g->size;
            continue;
        }
        o->globals[k++] = *g;
    }
    o->n_globals = k;
    for (size_t i = 0; i < k; i++)
        if (o->globals[i].obj < o->n_obj)
            o->obj_global[o->globals[i].obj] = (uint32_t)i;
    o->globals_sorted = 1;
}

size_t pes_objects_load_mappings(struct pes_objects *o, const struct pes_mapping *m, size_t n,
                                 char *warn, size_t warn_size)
{
    if (warn && warn_size)
        warn[0] = '\0';
    size_t k = objects_dwarf_load(o, m, n, warn, warn_size);
    sort_globals(o);
    return k;
}

/* The global holding addr, or NULL and the gap [*gap_lo, *gap_hi) between
 * globals that addr is in. */
static const struct objects_global *find_global(const struct pes_objects *o, uint64_t addr,
                                                uint64_t *gap_lo, uint64_t *gap_hi)
{
    size_t lo = 0, hi = o->n_globals;
    while (lo < hi) { /* the first global starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (o->globals[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    *gap_lo = 0;
    *gap_hi = lo < o->n_globals ? o->globals[lo].start : UINT64_MAX;
    if (lo == 0)
        return NULL;
    const struct objects_global *g = &o->globals[lo - 1];
    uint64_t size = g->size ? g->size : 1;
    if (addr - g->start < size)
        return g;
    *gap_lo = g->start + size;
    return NULL;
}

/* ------------------------------------------------------------ the treap */

static uint32_t node_new(struct lane *L, uint64_t start, uint64_t end, uint32_t obj)
{
    uint32_t i = L->free_list;
    if (i) {
        L->free_list = L->nodes[i].l;
    } else {
        if (L->n_nodes == L->cap_nodes) {
            uint32_t cap = L->cap_nodes * 2;
            struct node *t = realloc(L->nodes, (size_t)cap * sizeof *t);
            if (!t)
                return 0;
            L->nodes = t;
            L->cap_nodes = cap;
        }
        i = L->n_nodes++;
    }
    L->rng ^= L->rng << 13, L->rng ^= L->rng >> 17, L->rng ^= L->rng << 5;
    L->nodes[i] = (struct node){.start = start, .end = end, .obj = obj, .prio = L->rng};
    return i;
}

static void node_release(struct lane *L, uint32_t t)
{ /* t and its subtree */
    while (t) {
        node_release(L, L->nodes[t].r);
        uint32_t l = L->nodes[t].l;
        L->nodes[t].l = L->free_list;
        L->free_list = t;
        t = l;
    }
}

/* Splits t into keys < key (*a) and >= key (*b). */
static void split(struct node *nd, uint32_t t, uint64_t key, uint32_t *a, uint32_t *b)
{
    if (!t) {
        *a = *b = 0;
        return;
    }
    if (nd[t].start < key) {
        split(nd, nd[t].r, key, &nd[t].r, b);
        *a = t;
    } else {
        split(nd, nd[t].l, key, a, &nd[t].l);
        *b = t;
    }
}

/* Every key of a before every key of b. */
static uint32_t merge(struct node *nd, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    if (nd[a].prio > nd[b].prio) {
        nd[a].r = merge(nd, nd[a].r, b);
        return a;
    }
    nd[b].l = merge(nd, a, nd[b].l);
    return b;
}

/* The live block with the greatest start <= addr (0: none). */
static uint32_t pred(const struct lane *L, uint64_t addr)
{
    uint32_t t = L->root, best = 0;
    const struct node *nd = L->nodes;
    while (t) {
        if (nd[t].start <= addr) {
            best = t;
            t = nd[t].r;
        } else {
            t = nd[t].l;
        }
    }
    return best;
}

/* The live block with the least start > addr (0: none). */
static uint32_t succ(const struct lane *L, uint64_t addr)
{
    uint32_t t = L->root, best = 0;
    const struct node *nd = L->nodes;
    while (t) {
        if (nd[t].start > addr) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

/* Removes the blocks overlapping [start, end); 1 if any. */
static int remove_range(struct lane *L, uint64_t start, uint64_t end)
{
    int removed = 0;
    uint32_t p = pred(L, start);
    if (p && L->nodes[p].end > start)
        start = L->nodes[p].start; /* one that began before */
    uint32_t a, b, mid, c;
    split(L->nodes, L->root, start, &a, &b);
    split(L->nodes, b, end, &mid, &c);
    if (mid) {
        node_release(L, mid);
        removed = 1;
    }
    L->root = merge(L->nodes, a, c);
    return removed;
}

static void insert_block(struct lane *L, uint64_t start, uint64_t end, uint32_t obj, uint64_t born)
{
    if (remove_range(L, start, end))
        L->epoch++;
    L->alloc_epoch++;
    uint32_t t = node_new(L, start, end, obj);
    if (!t)
        return; /* out of memory: the block reads as unknown */
    L->nodes[t].born = born;
    uint32_t a, b;
    split(L->nodes, L->root, start, &a, &b);
    L->root = merge(L->nodes, merge(L->nodes, a, t), b);
}

/* ------------------------------------------------------------ heap objects */

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16, x *= 0x7feb352dU, x ^= x >> 15, x *= 0x846ca68bU, x ^= x >> 16;
    return x;
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* The heap object named name, or 0. */
static uint32_t heap_named(const struct pes_objects *o, const char *name)
{
    if (!o->cap_names)
        return 0;
    for (uint32_t i = hash_str(name) & (o->cap_names - 1); o->names[i];
         i = (i + 1) & (o->cap_names - 1))
        if (strcmp(o->obj[o->names[i]].name, name) == 0)
            return o->names[i];
    return 0;
}

static void add_name(struct pes_objects *o, uint32_t id)
{
    if ((o->n_names + 1) * 2 > o->cap_names) {
        uint32_t cap = o->cap_names ? o->cap_names * 2 : 256;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return; /* names may then repeat: only less clear */
        for (uint32_t k = 0; k < o->cap_names; k++) {
            if (!o->names[k])
                continue;
            uint32_t j = hash_str(o->obj[o->names[k]].name) & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = o->names[k];
        }
        free(o->names);
        o->names = t;
        o->cap_names = cap;
    }
    uint32_t j = hash_str(o->obj[id].name) & (o->cap_names - 1);
    while (o->names[j])
        j = (j + 1) & (o->cap_names - 1);
    o->names[j] = id;
    o->n_names++;
}

static void frame_text(char *buf, size_t n, const struct objects_frame *f, uint64_t ip)
{
    if (f->file[0])
        snprintf(buf, n, "%s %s:%d", f->func[0] ? f->func : "?", f->file, f->line);
    else if (f->func[0])
        snprintf(buf, n, "%s", f->func);
    else
        snprintf(buf, n, "0x%" PRIx64, ip);
}

/* "heap@alloc.c:14 (make_rows)" from the innermost source frame of the
 * site's first return address, and the call stack from all of them
 * (inlined calls expanded). Two sites whose names would be the same (one
 * helper called, or inlined, from two places) are told apart by their
 * callers: "heap@kernel.h:25 (kernel_alloc < main gemm.c:19)". */
/* Whether a heap object's name is taken: by the objects made so far, or
 * (pes_objects_name_heap_sites) by the sites named before. */
typedef int (*name_taken_fn)(const void *ctx, const char *name);

static int object_named(const void *o, const char *name)
{
    return heap_named(o, name) != 0;
}

static void heap_name(struct pes_objects *o, uint32_t site, name_taken_fn taken, const void *ctx,
                      char *name, size_t name_size, char *where, size_t where_size, char *stack,
                      size_t stack_size)
{
    uint32_t depth = 0;
    const uint64_t *ips = o->alloc_site ? o->alloc_site(o->alloc_ctx, site, &depth) : NULL;
    where[0] = stack[0] = '\0';
    enum { MAX_FRAMES = 32 };
    struct objects_frame fr[MAX_FRAMES];
    uint64_t fr_ip[MAX_FRAMES];
    size_t nf = 0;
    for (uint32_t i = 0; ips && i < depth && i < PES_ALLOC_MAX_DEPTH && nf < MAX_FRAMES; i++) {
        size_t k = objects_dwarf_frames(o->dwarf, ips[i], fr + nf, MAX_FRAMES - nf);
        if (k == 0)
            memset(&fr[nf], 0, sizeof fr[nf]), k = 1;
        for (size_t j = 0; j < k; j++)
            fr_ip[nf + j] = ips[i];
        nf += k;
    }
    size_t len = 0;
    for (size_t i = 0; i < nf; i++) {
        char part[400];
        frame_text(part, sizeof part, &fr[i], fr_ip[i]);
        int w = snprintf(stack + len, stack_size - len, "%s%s", i ? " < " : "", part);
        if (w < 0 || (size_t)w >= stack_size - len)
            break;
        len += (size_t)w;
    }
    if (nf == 0) {
        snprintf(name, name_size, "heap@site %" PRIu32, site);
    } else {
        char first[400];
        frame_text(first, sizeof first, &fr[0], fr_ip[0]);
        if (fr[0].file[0])
            snprintf(where, where_size, "%s:%d", fr[0].file, fr[0].line);
        for (size_t k = 0;; k++) { /* callers added until the name is new */
            size_t at = fr[0].file[0] ? (size_t)snprintf(name, name_size, "heap@%s (%s", where,
                                                         fr[0].func[0] ? fr[0].func : "?")
                                      : (size_t)snprintf(name, name_size, "heap@%s", first);
            for (size_t j = 1; j <= k && j < nf && at < name_size; j++) {
                char part[400];
                frame_text(part, sizeof part, &fr[j], fr_ip[j]);
                at += (size_t)snprintf(name + at, name_size - at, " < %s", part);
            }
            if (fr[0].file[0] && at < name_size)
                snprintf(name + at, name_size - at, ")");
            if (!taken(ctx, name))
                break;
            if (k + 1 >= nf) { /* the same whole stack: the site's number */
                size_t l = strlen(name);
                snprintf(name + l, name_size - l, " #%" PRIu32, site);
                break;
            }
        }
    }
}

static int by_site(const void *a, const void *b)
{
    uint32_t x = ((const struct prenamed *)a)->site, y = ((const struct prenamed *)b)->site;
    return (x > y) - (x < y);
}

static uint32_t new_heap_object(struct pes_objects *o, uint32_t site)
{
    struct prenamed key = {.site = site};
    const struct prenamed *p =
        o->n_pre ? bsearch(&key, o->pre, o->n_pre, sizeof key, by_site) : NULL;
    uint32_t id;
    if (p) {
        id = objects_add(o, PES_OBJ_HEAP, p->name, p->where, p->stack, 0);
    } else {
        char name[1024], where[200], stack[2048];
        heap_name(o, site, object_named, o, name, sizeof name, where, sizeof where, stack,
                  sizeof stack);
        id = objects_add(o, PES_OBJ_HEAP, name, where, stack, 0);
    }
    if (id)
        add_name(o, id);
    return id;
}

/* The names given so far (pre[0 .. n)), as a set for heap_name. */
struct pre_set {
    const struct prenamed *pre;
    uint32_t *slot; /* index + 1; 0 empty */
    uint32_t cap;
};

static int pre_named(const void *ctx, const char *name)
{
    const struct pre_set *t = ctx;
    for (uint32_t i = hash_str(name) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
        if (strcmp(t->pre[t->slot[i] - 1].name, name) == 0)
            return 1;
    return 0;
}

void pes_objects_name_heap_sites(struct pes_objects *o, const uint32_t *sites, size_t n)
{
    if (!n || o->n_pre || o->n_sites)
        return; /* once, before any heap object */
    struct prenamed *pre = calloc(n, sizeof *pre);
    uint32_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    struct pre_set set = {.pre = pre, .slot = calloc(cap, sizeof(uint32_t)), .cap = cap};
    if (!pre || !set.slot) {
        free(pre), free(set.slot);
        return; /* names then follow the order objects are met */
    }
    for (size_t i = 0; i < n; i++)
        pre[i].site = sites[i];
    qsort(pre, n, sizeof *pre, by_site);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && pre[m - 1].site == pre[i].site)
            continue;
        char name[1024], where[200], stack[2048];
        heap_name(o, pre[i].site, pre_named, &set, name, sizeof name, where, sizeof where, stack,
                  sizeof stack);
        pre[m].site = pre[i].site;
        pre[m].name = strdup(name), pre[m].where = strdup(where), pre[m].stack = strdup(stack);
        if (!pre[m].name || !pre[m].where || !pre[m].stack) {
            free(pre[m].name), free(pre[m].where), free(pre[m].stack);
            break;
        }
        uint32_t j = hash_str(name) & (cap - 1);
        while (set.slot[j])
            j = (j + 1) & (cap - 1);
        set.slot[j] = (uint32_t)m + 1;
        m++;
    }
    free(set.slot);
    o->pre = pre;
    o->n_pre = m;
}

static uint32_t heap_object(struct pes_objects *o, uint32_t site)
{
    uint32_t mask = o->cap_sites - 1, i = hash32(site) & mask;
    while (o->sites[i].key1) {
        if (o->sites[i].key1 == site + 1)
            return o->sites[i].obj;
        i = (i + 1) & mask;
    }
    uint32_t obj = new_heap_object(o, site);
    if (!obj)
        return 0;
    o->sites[i] = (struct site_slot){.key1 = site + 1, .obj = obj};
    if (++o->n_sites * 2 > o->cap_sites) { /* grow: rehash at twice the size */
        uint32_t cap = o->cap_sites * 2;
        struct site_slot *t = calloc(cap, sizeof *t);
        if (t) {
            for (uint32_t k = 0; k < o->cap_sites; k++) {
                if (!o->sites[k].key1)
                    continue;
                uint32_t j = hash32(o->sites[k].key1 - 1) & (cap - 1);
                while (t[j].key1)
                    j = (j + 1) & (cap - 1);
                t[j] = o->sites[k];
            }
            free(o->sites);
            o->sites = t;
            o->cap_sites = cap;
        }
    }
    return obj;
}

uint32_t pes_objects_heap_block(struct pes_objects *o, uint32_t alloc_site, uint64_t size)
{
    if (alloc_site == PES_ALLOC_SITE_STACK)
        return 0;
    uint32_t obj = heap_object(o, alloc_site);
    if (obj && size > o->obj[obj].size)
        o->obj[obj].size = size;
    return obj;
}

/* A block in lane L; only lane 0 counts heap blocks (every lane sees the
 * same allocation records). */
static void lane_alloc(struct pes_objects *o, struct lane *L, uint64_t addr, uint64_t size,
                       uint32_t alloc_site, uint64_t time)
{
    uint64_t end = addr + (size ? size : 1);
    if (end < addr)
        end = UINT64_MAX;
    if (alloc_site == PES_ALLOC_SITE_STACK) {
        insert_block(L, addr, end, STACK_MARK, time);
        return;
    }
    uint32_t obj = heap_object(o, alloc_site);
    if (!obj)
        return;
    if (L == &o->lanes[0]) {
        o->obj[obj].blocks++;
        if (size > o->obj[obj].size)
            o->obj[obj].size = size;
    }
    insert_block(L, addr, end, obj, time);
}

static void lane_free(struct lane *L, uint64_t addr, uint64_t time)
{
    uint32_t p = pred(L, addr);
    if (!p || L->nodes[p].start != addr || L->nodes[p].obj == STACK_MARK)
        return;
    if (L->nodes[p].born > time)
        return; /* a late FREE of the block that lived here before */
    remove_range(L, addr, addr + 1);
    L->epoch++;
}

void pes_objects_alloc(struct pes_objects *o, uint64_t addr, uint64_t size, uint32_t alloc_site)
{
    lane_alloc(o, &o->lanes[0], addr, size, alloc_site, 0);
}

void pes_objects_alloc_at(struct pes_objects *o, uint64_t addr, uint64_t size, uint32_t alloc_site,
                          uint64_t time)
{
    lane_alloc(o, &o->lanes[0], addr, size, alloc_site, time);
}

void pes_objects_free(struct pes_objects *o, uint64_t addr)
{
    lane_free(&o->lanes[0], addr, UINT64_MAX);
}

void pes_objects_free_at(struct pes_objects *o, uint64_t addr, uint64_t time)
{
    lane_free(&o->lanes[0], addr, time);
}

void pes_objects_record_lane(struct pes_objects *o, uint32_t lane, uint32_t thread,
                             const struct pes_record *r)
{
    if (lane >= o->n_lanes)
        return;
    struct lane *L = &o->lanes[lane];
    if (r->id == PES_ID_FREE) {
        lane_free(L, r->addr, UINT64_MAX);
        return;
    }
    if (r->id != PES_ID_ALLOC && r->id != PES_ID_ALLOC_SIZE)
        return;
    if (thread >= L->n_pend) {
        uint32_t n = L->n_pend ? L->n_pend : 16;
        while (n <= thread)
            n *= 2;
        struct pending *t = realloc(L->pend, (size_t)n * sizeof *t);
        if (!t)
            return;
        memset(t + L->n_pend, 0, (size_t)(n - L->n_pend) * sizeof *t);
        L->pend = t;
        L->n_pend = n;
    }
    struct pending *p = &L->pend[thread];
    if (r->id == PES_ID_ALLOC) {
        *p = (struct pending){.addr = r->addr, .site = r->extra, .set = 1};
    } else if (p->set) {
        p->set = 0;
        lane_alloc(o, L, p->addr, r->addr, p->site, 0);
    }
}

void pes_objects_record(struct pes_objects *o, uint32_t thread, const struct pes_record *r)
{
    pes_objects_record_lane(o, 0, thread, r);
}

void pes_objects_reset(struct pes_objects *o)
{
    for (uint32_t i = 0; i < o->n_lanes; i++) {
        struct lane *L = &o->lanes[i];
        node_release(L, L->root);
        L->root = 0;
        L->epoch++;
        L->alloc_epoch++;
        if (L->pend)
            memset(L->pend, 0, L->n_pend * sizeof *L->pend);
    }
    for (uint32_t i = 1; i < o->n_obj; i++)
        if (o->obj[i].kind == PES_OBJ_HEAP)
            o->obj[i].blocks = 0, o->obj[i].size = 0;
}

/* ------------------------------------------------------------ lookup */

/* "stack:<function>" of the access site (one object per function). */
static uint32_t stack_object(struct pes_objects *o, uint32_t site)
{
    const struct pes_site *s = o->site ? o->site(o->site_ctx, site) : NULL;
    char name[320];
    snprintf(name, sizeof name, "stack:%s", s && s->function && s->function[0] ? s->function : "?");
    for (uint32_t i = 1; i < o->n_obj; i++) /* once per site (cached): a scan is enough */
        if (o->obj[i].kind == PES_OBJ_STACK && strcmp(o->obj[i].name, name) == 0)
            return i;
    return objects_add(o, PES_OBJ_STACK, name, "", "", 0);
}

static struct site_cache *cache_of(struct lane *L, uint32_t site)
{
    if (site < L->n_cache)
        return &L->cache[site];
    if (site >= CACHE_SITES)
        return NULL;
    uint32_t n = L->n_cache ? L->n_cache : 1024;
    while (n <= site)
        n *= 2;
    struct site_cache *t = realloc(L->cache, (size_t)n * sizeof *t);
    if (!t)
        return NULL;
    memset(t + L->n_cache, 0, (size_t)(n - L->n_cache) * sizeof *t);
    L->cache = t;
    L->n_cache = n;
    return &L->cache[site];
}

void pes_objects_freeze(struct pes_objects *o)
{
    if (!o->globals_sorted)
        sort_globals(o);
}

uint32_t pes_objects_lookup(struct pes_objects *o, uint64_t addr, uint32_t access_site,
                            uint64_t *offset)
{
    return pes_objects_lookup_lane(o, 0, addr, access_site, offset);
}

uint32_t pes_objects_lookup_lane(struct pes_objects *o, uint32_t lane, uint64_t addr,
                                 uint32_t access_site, uint64_t *offset)
{
    if (lane >= o->n_lanes) {
        *offset = 0;
        return 0;
    }
    struct lane *L = &o->lanes[lane];
    struct site_cache *c =
        access_site < L->n_cache ? &L->cache[access_site] : cache_of(L, access_site);
    if (c && addr - c->lo < c->len && *c->counter == c->stamp) {
        *offset = c->obj ? addr - c->lo : 0;
        return c->obj;
    }
    uint64_t lo = 0, len = 0;
    const uint64_t *counter = &L->epoch;
    uint32_t obj = 0;
    uint32_t p = pred(L, addr);
    if (p && addr < L->nodes[p].end) {
        lo = L->nodes[p].start;
        len = L->nodes[p].end - lo;
        obj = L->nodes[p].obj;
        if (obj == STACK_MARK) {
            if (c && !c->stack_obj)
                c->stack_obj = stack_object(o, access_site);
            obj = c ? c->stack_obj : stack_object(o, access_site);
        }
    } else {
        if (!o->globals_sorted)
            sort_globals(o);
        uint64_t gap_lo, gap_hi;
        const struct objects_global *g = find_global(o, addr, &gap_lo, &gap_hi);
        if (g) {
            lo = g->start;
            len = g->size ? g->size : 1;
            obj = g->obj;
            counter = &o->zero;
        } else { /* unknown: the gap between blocks and globals, until a block comes */
            uint32_t q = succ(L, addr);
            if (p && L->nodes[p].end > gap_lo)
                gap_lo = L->nodes[p].end;
            if (q && L->nodes[q].start < gap_hi)
                gap_hi = L->nodes[q].start;
            lo = gap_lo;
            len = gap_hi - gap_lo;
            counter = &L->alloc_epoch;
        }
    }
    if (c) {
        c->lo = lo;
        c->len = len;
        c->counter = counter;
        c->stamp = *counter;
        c->obj = obj;
    }
    *offset = obj ? addr - lo : 0;
    return obj;
}

void pes_objects_lookup_many(struct pes_objects *o, const uint64_t *addr, const uint32_t *site,
                             size_t n, uint32_t *object, uint64_t *offset)
{
    if (o->n_lanes == 0) {
        memset(object, 0, n * sizeof *object);
        memset(offset, 0, n * sizeof *offset);
        return;
    }
    const struct lane *L = &o->lanes[0];
    for (size_t i = 0; i < n; i++) {
        /* pes_objects_lookup_lane's first test, inline; the cache may grow on a miss */
        const struct site_cache *c = site[i] < L->n_cache ? &L->cache[site[i]] : NULL;
        if (c && addr[i] - c->lo < c->len && *c->counter == c->stamp) {
            offset[i] = c->obj ? addr[i] - c->lo : 0;
            object[i] = c->obj;
        } else {
            object[i] = pes_objects_lookup_lane(o, 0, addr[i], site[i], &offset[i]);
        }
    }
}

/* ------------------------------------------------------------ describe */

int pes_objects_untyped_global(const struct pes_objects *o, uint32_t id)
{
    const struct pes_object *ob = pes_objects_get(o, id);
    uint32_t gi = o && id < o->n_obj ? o->obj_global[id] : UINT32_MAX;
    return ob && ob->kind == PES_OBJ_GLOBAL && (gi == UINT32_MAX || !o->globals[gi].type_die);
}

size_t pes_objects_describe(const struct pes_objects *o, uint32_t id, uint64_t offset, char *buf,
                            size_t n)
{
    if (!buf || n == 0)
        return 0;
    const struct pes_object *ob = pes_objects_get(o, id);
    if (!ob)
        ob = &unknown_object;
    int w = snprintf(buf, n, "%s", ob->name);
    size_t len = w < 0 ? 0 : (size_t)w >= n ? n - 1 : (size_t)w;
    uint32_t gi = o && id < o->n_obj ? o->obj_global[id] : UINT32_MAX;
    if (ob->kind == PES_OBJ_GLOBAL && gi != UINT32_MAX && o->globals[gi].type_die) {
        objects_dwarf_describe(o->dwarf, &o->globals[gi], offset, buf, n, &len);
    } else if (offset != 0 && ob->kind != PES_OBJ_UNKNOWN) {
        w = snprintf(buf + len, n - len, "+%" PRIu64, offset);
        len = w < 0 ? len : (size_t)w >= n - len ? n - 1 : len + (size_t)w;
    }
    return len;
}

/* ------------------------------------------------------------ call paths */

size_t pes_objects_callpath(const struct pes_objects *co, uint32_t stack, char *buf, size_t n)
{
    /* the DWARF session caches what it reads; the table itself is unchanged */
    struct pes_objects *o = (struct pes_objects *)co;
    uint32_t depth = 0;
    const uint64_t *ips = o && o->alloc_site ? o->alloc_site(o->alloc_ctx, stack, &depth) : NULL;
    if (n)
        buf[0] = '\0';
    if (!ips || depth == 0)
        return 0;
    enum { MAX_FRAMES = 32 };
    struct objects_frame fr[MAX_FRAMES];
    uint64_t fr_ip[MAX_FRAMES];
    size_t nf = 0;
    /* innermost first, inlined calls expanded, as for allocation sites */
    for (uint32_t i = 0; i < depth && i < PES_ALLOC_MAX_DEPTH && nf < MAX_FRAMES; i++) {
        size_t k = objects_dwarf_frames(o->dwarf, ips[i], fr + nf, MAX_FRAMES - nf);
        if (k == 0)
            memset(&fr[nf], 0, sizeof fr[nf]), k = 1;
        for (size_t j = 0; j < k; j++)
            fr_ip[nf + j] = ips[i];
        nf += k;
    }
    /* the path starts at the outermost frame with a source line: the frames
     * above it are the C library's start-up or a threads library's */
    size_t top = nf;
    while (top > 1 && !fr[top - 1].file[0])
        top--;
    if (top == 1 && !fr[0].file[0])
        top = nf; /* no frame has a line: all of them, as they are */
    size_t len = 0;
    for (size_t i = top; i-- > 0;) { /* outermost first */
        char part[400];
        const struct objects_frame *f = &fr[i];
        if (i == 0 && f->func[0]) /* the sampled function: the row says its line */
            snprintf(part, sizeof part, "%s", f->func);
        else if (f->file[0])
            snprintf(part, sizeof part, "%s (%s:%d)", f->func[0] ? f->func : "?", f->file, f->line);
        else
            frame_text(part, sizeof part, f, fr_ip[i]);
        int w = snprintf(buf + len, n > len ? n - len : 0, "%s%s", len ? " > " : "", part);
        if (w < 0 || len + (size_t)w >= n)
            return n ? n - 1 : 0;
        len += (size_t)w;
    }
    return len;
}
