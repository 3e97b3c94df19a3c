/*
 * timing.c — sites whose access counts depend on thread timing: spin-waits.
 *
 * A thread that polls a flag loads the same address again and again until
 * another thread writes it, so the number of loads at the polling site is
 * set by the schedule, not by the program's input (NPB LU's pipelined
 * sweeps: two runs of one build differ there). A wait, in the recorded
 * stream: at least SPIN_MIN_LOADS consecutive loads of one address by one
 * thread (no other access of that thread in between, so none of its own
 * stores), with a store by another thread to those bytes after the first of
 * them, no later than SPIN_SLACK of the waiting thread's own accesses after
 * the last (the merged order interpolates between time marks, so the store
 * that ended a wait may be placed just after the load that saw it). The
 * sites that made more than one of a wait's loads are named (a rotated loop's
 * test before the loop makes one, however long the wait); their accesses
 * over the whole trace are the counts that depend on timing.
 *
 * Found only where this run waited: a poll whose flag was always set already
 * is not named. Not seen: waits whose loop body makes other accesses (each iteration then
 * loads other addresses between the polls), waits on read-modify-writes
 * (compare-and-swap loops), waits shorter than SPIN_MIN_LOADS, and the other
 * accesses inside a wait's loop. Named wrongly: a loop of only loads of one
 * address that another thread happens to write meanwhile, though its trip
 * count is fixed.
 *
 * In parts (pes-replay-mpi) each part's waits are found in that part: a wait
 * cut by a part boundary counts as two pieces, and a piece without the store
 * is not a wait (docs/replay.md, "Distributed replay (MPI)").
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

enum {
    SPIN_MIN_LOADS = 3,
    SPIN_SLACK = 4096,     /* the waiter's own accesses: a few time-mark segments */
    SPIN_RUN_SITES = 4,    /* sites remembered per wait (an unrolled loop has several) */
    SPIN_MAX_BYTES = 64,   /* wider loads are no polls (memcpy sources) */
    FLAT_SITES = 1u << 20, /* site ids counted in an array; larger ones in a hash */
};

/* A thread's loads of one address: the open run, or a closed one still
 * waiting for a store (its slack). */
struct run {
    uint64_t addr;
    uint32_t size;
    uint64_t loads;
    uint8_t written;  /* another thread stored to the bytes since the last load */
    uint8_t released; /* ... before a later load of the run */
    uint8_t n_sites;
    uint32_t sites[SPIN_RUN_SITES];
    uint8_t again[SPIN_RUN_SITES]; /* the site loaded more than once in the run */
    uint64_t deadline;             /* closed: the thread's access count that ends the slack */
};

struct thread {
    struct run open;   /* loads == 0: the last access was no poll */
    struct run closed; /* loads == 0: none waiting */
    uint64_t accesses;
};

struct spin_site {
    uint32_t site;
    uint64_t waits;    /* waits seen */
    uint64_t longest;  /* loads of the longest */
    uint64_t accesses; /* publish: the site's accesses */
};

struct timing {
    const struct pes_stream_info *si;
    uint32_t n_streams;
    struct thread *thr;
    /* lines watched by the threads' runs: a counting filter, so that most
     * stores need no look at the threads */
    uint32_t *watch;
    uint64_t watch_mask;
    /* accesses per site: ids below FLAT_SITES in flat[], others in an open hash */
    uint64_t *flat;
    uint32_t n_flat;
    uint64_t *hkey, *hcount; /* key: id + 1, 0 = empty */
    uint64_t hcap, hn;
    uint64_t accesses;
    struct spin_site *spin;
    size_t n_spin, cap_spin;
    int nomem;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return !si->mimicked && si->kind != PES_TRACE_SAMPLED && si->n_streams > 1;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    (void)k;
    struct timing *t = calloc(1, sizeof *t);
    uint64_t slots = 4096;
    while (slots < (uint64_t)si->n_streams * 64)
        slots *= 2;
    if (t) {
        t->si = si;
        t->n_streams = si->n_streams;
        t->thr = calloc(si->n_streams, sizeof *t->thr);
        t->watch = calloc(slots, sizeof *t->watch);
        t->watch_mask = slots - 1;
    }
    if (!t || !t->thr || !t->watch) {
        if (t)
            free(t->thr), free(t->watch);
        free(t);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    return t;
}

static inline uint64_t slot_of(const struct timing *t, uint64_t line)
{
    return (line * 0x9E3779B97F4A7C15ull >> 32) & t->watch_mask;
}

static void watch(struct timing *t, const struct run *r, int add)
{
    for (uint64_t l = r->addr >> 6; l <= (r->addr + r->size - 1) >> 6; l++)
        t->watch[slot_of(t, l)] += add ? 1 : -1;
}

static int site_add(struct timing *t, uint32_t site, uint64_t n);

/* The entry of a site named by a wait (created, with no waits yet); NULL
 * without memory. */
static struct spin_site *spin_site(struct timing *t, uint32_t site)
{
    for (size_t j = 0; j < t->n_spin; j++)
        if (t->spin[j].site == site)
            return &t->spin[j];
    if (t->n_spin == t->cap_spin) {
        size_t cap = t->cap_spin ? 2 * t->cap_spin : 8;
        struct spin_site *p = realloc(t->spin, cap * sizeof *p);
        if (!p) {
            t->nomem = 1;
            return NULL;
        }
        t->spin = p;
        t->cap_spin = cap;
    }
    struct spin_site *s = &t->spin[t->n_spin++];
    *s = (struct spin_site){.site = site};
    return s;
}

static void note_wait(struct timing *t, const struct run *r)
{
    for (unsigned i = 0; i < r->n_sites; i++) {
        if (!r->again[i])
            continue;
        struct spin_site *s = spin_site(t, r->sites[i]);
        if (!s)
            return;
        s->waits++;
        if (r->loads > s->longest)
            s->longest = r->loads;
    }
}

/* Ends a closed run's slack: it was a wait or it was not. */
static void settle(struct timing *t, struct run *c)
{
    if (!c->loads)
        return;
    watch(t, c, 0);
    if (c->released)
        note_wait(t, c);
    c->loads = 0;
}

/* The thread's open run ends: long enough and released, a wait at once;
 * long enough, it waits out its slack; else nothing. */
static void close_run(struct timing *t, struct thread *th)
{
    struct run *o = &th->open;
    if (!o->loads)
        return;
    if (o->loads < SPIN_MIN_LOADS) {
        watch(t, o, 0);
    } else if (o->released) {
        watch(t, o, 0);
        note_wait(t, o);
    } else {
        settle(t, &th->closed);
        th->closed = *o;
        th->closed.deadline = th->accesses - 1 + SPIN_SLACK; /* counted from the last load */
    }
    o->loads = 0;
}

static inline int overlaps(const struct run *r, uint64_t a, uint32_t n)
{
    return r->loads && a < r->addr + r->size && r->addr < a + n;
}

/* A store by thread u to [a, a+n): the other threads' runs on those bytes
 * are written. */
static void stored(struct timing *t, uint32_t u, uint64_t a, uint32_t n)
{
    if (!n)
        return;
    uint64_t first = a >> 6, last = (a + n - 1) >> 6;
    int hit = last - first > t->watch_mask;
    for (uint64_t l = first; !hit && l <= last; l++)
        hit = t->watch[slot_of(t, l)] != 0;
    if (!hit)
        return;
    for (uint32_t v = 0; v < t->n_streams; v++) {
        if (v == u)
            continue;
        struct thread *th = &t->thr[v];
        if (overlaps(&th->open, a, n))
            th->open.written = 1;
        if (overlaps(&th->closed, a, n))
            th->closed.released = 1;
    }
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct timing *t = self;
    for (size_t i = 0; i < b->n; i++) {
        uint32_t u = b->stream[i];
        if (u >= t->n_streams)
            return pes_error_set(err, PES_ERR_ARG, 0, "timing: stream %u out of range (%u streams)",
                                 u, t->n_streams);
        struct thread *th = &t->thr[u];
        uint32_t site = b->site[i];
        if (site < t->n_flat)
            t->flat[site]++;
        else if (site_add(t, site, 1) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        th->accesses++;
        if (th->closed.loads && th->accesses > th->closed.deadline)
            settle(t, &th->closed);
        uint64_t a = b->addr[i];
        uint32_t n = b->size[i];
        if (b->rw[i] & PES_BATCH_WRITE)
            stored(t, u, a, n);
        struct run *o = &th->open;
        if (b->rw[i] != PES_BATCH_READ || n == 0 || n > SPIN_MAX_BYTES) {
            close_run(t, th);
            continue;
        }
        if (o->loads && o->addr == a && o->size == n) {
            o->loads++;
            if (o->written)
                o->released = 1;
            o->written = 0;
        } else {
            close_run(t, th);
            *o = (struct run){.addr = a, .size = n, .loads = 1};
            watch(t, o, 1);
        }
        unsigned k = 0;
        while (k < o->n_sites && o->sites[k] != site)
            k++;
        if (k < o->n_sites)
            o->again[k] = 1;
        else if (k < SPIN_RUN_SITES)
            o->sites[o->n_sites++] = site;
    }
    t->accesses += b->n + b->dropped_reads + b->dropped_writes;
    if (t->nomem)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

/* ------------------------------------------------------------ accesses per site */

static int hash_grow(struct timing *t)
{
    uint64_t cap = t->hcap ? 2 * t->hcap : 64;
    uint64_t *key = calloc(cap, sizeof *key), *count = calloc(cap, sizeof *count);
    if (!key || !count) {
        free(key);
        free(count);
        return -1;
    }
    for (uint64_t i = 0; i < t->hcap; i++) {
        if (!t->hkey[i])
            continue;
        uint64_t j = (t->hkey[i] * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
        while (key[j])
            j = (j + 1) & (cap - 1);
        key[j] = t->hkey[i];
        count[j] = t->hcount[i];
    }
    free(t->hkey);
    free(t->hcount);
    t->hkey = key;
    t->hcount = count;
    t->hcap = cap;
    return 0;
}

static uint64_t *hash_slot(struct timing *t, uint32_t site, int add)
{
    uint64_t key = (uint64_t)site + 1;
    if (add && (t->hn + 1) * 2 > t->hcap && hash_grow(t) < 0)
        return NULL;
    if (!t->hcap)
        return NULL;
    uint64_t j = (key * 0x9E3779B97F4A7C15ull >> 20) & (t->hcap - 1);
    while (t->hkey[j] && t->hkey[j] != key)
        j = (j + 1) & (t->hcap - 1);
    if (!t->hkey[j]) {
        if (!add)
            return NULL;
        t->hkey[j] = key;
        t->hn++;
    }
    return &t->hcount[j];
}

/* n more accesses at site; ids below FLAT_SITES grow the array. */
static int site_add(struct timing *t, uint32_t site, uint64_t n)
{
    if (site < FLAT_SITES) {
        if (site >= t->n_flat) {
            uint32_t cap = t->n_flat ? t->n_flat : 1024;
            while (cap <= site)
                cap *= 2;
            uint64_t *p = realloc(t->flat, (size_t)cap * sizeof *p);
            if (!p)
                return -1;
            memset(p + t->n_flat, 0, (size_t)(cap - t->n_flat) * sizeof *p);
            t->flat = p;
            t->n_flat = cap;
        }
        t->flat[site] += n;
        return 0;
    }
    uint64_t *c = hash_slot(t, site, 1);
    if (!c)
        return -1;
    *c += n;
    return 0;
}

static uint64_t site_count(struct timing *t, uint32_t site)
{
    if (site < t->n_flat)
        return t->flat[site];
    uint64_t *c = site < FLAT_SITES ? NULL : hash_slot(t, site, 0);
    return c ? *c : 0;
}

/* ------------------------------------------------------------ end, parts, report */

/* The stream (or this part of it) ends: open runs close, slacks end. */
static int finish(void *self, struct pes_error *err)
{
    struct timing *t = self;
    for (uint32_t v = 0; v < t->n_streams; v++) {
        close_run(t, &t->thr[v]);
        settle(t, &t->thr[v].closed);
    }
    if (t->nomem)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

/* A part's words: the pipeline packs analyses back to back, so a part's
 * bytes need not be aligned. */
static inline void put(void *buf, size_t i, uint64_t x)
{
    memcpy((char *)buf + 8 * i, &x, 8);
}
static inline uint64_t get(const void *buf, size_t i)
{
    uint64_t x;
    memcpy(&x, (const char *)buf + 8 * i, 8);
    return x;
}

/* A part: accesses (u64), n_spin (u64) and n_spin × (site u64, waits,
 * longest), n_counts (u64) and n_counts × (site u64, count). */
static size_t part_pack(void *self, void *buf, size_t cap)
{
    struct timing *t = self;
    size_t n_counts = t->hn;
    for (uint32_t s = 0; s < t->n_flat; s++)
        n_counts += t->flat[s] != 0;
    size_t len = 8 * (3 + 3 * t->n_spin + 2 * n_counts), w = 0;
    if (!buf || cap < len)
        return len;
    put(buf, w++, t->accesses);
    put(buf, w++, t->n_spin);
    for (size_t i = 0; i < t->n_spin; i++) {
        put(buf, w++, t->spin[i].site);
        put(buf, w++, t->spin[i].waits);
        put(buf, w++, t->spin[i].longest);
    }
    put(buf, w++, n_counts);
    for (uint32_t s = 0; s < t->n_flat; s++)
        if (t->flat[s])
            put(buf, w++, s), put(buf, w++, t->flat[s]);
    for (uint64_t i = 0; i < t->hcap; i++)
        if (t->hkey[i])
            put(buf, w++, t->hkey[i] - 1), put(buf, w++, t->hcount[i]);
    return len;
}

static int part_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct timing *t = self;
    size_t n = len / 8, at = 2;
    /* the layout first, then the counts: a part that does not parse changes nothing */
    int ok = len % 8 == 0 && n >= 3 && get(buf, 1) <= (n - 3) / 3;
    size_t n_spin = ok ? (size_t)get(buf, 1) : 0, n_counts = 0;
    if (ok) {
        at += 3 * n_spin;
        n_counts = (size_t)get(buf, at);
        ok = n_counts <= (n - at - 1) / 2 && n == at + 1 + 2 * n_counts;
    }
    for (size_t i = 0; ok && i < n_spin; i++)
        ok = get(buf, 2 + 3 * i) <= UINT32_MAX;
    for (size_t i = 0; ok && i < n_counts; i++)
        ok = get(buf, at + 1 + 2 * i) <= UINT32_MAX;
    if (!ok)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "timing: a part's counts of %zu bytes do not parse", len);
    t->accesses += get(buf, 0);
    for (size_t i = 0; i < n_spin; i++) {
        struct spin_site *s = spin_site(t, (uint32_t)get(buf, 2 + 3 * i));
        if (!s)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        s->waits += get(buf, 3 + 3 * i);
        if (get(buf, 4 + 3 * i) > s->longest)
            s->longest = get(buf, 4 + 3 * i);
    }
    for (size_t i = 0; i < n_counts; i++)
        if (site_add(t, (uint32_t)get(buf, at + 1 + 2 * i), get(buf, at + 2 + 2 * i)) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

static int by_accesses(const void *a, const void *b)
{
    const struct spin_site *x = a, *y = b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return (x->site > y->site) - (x->site < y->site);
}

/* Only where waits were found: "timing_dependent" in the trace section,
 * its sites most accesses first (docs/replay.schema.json). */
static void publish(void *self, const struct pes_publish *to)
{
    struct timing *t = self;
    if (!t->n_spin)
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < t->n_spin; i++)
        total += t->spin[i].accesses = site_count(t, t->spin[i].site);
    qsort(t->spin, t->n_spin, sizeof *t->spin, by_accesses);
    struct pes_report *r = to->r;
    struct pes_rnode *o = pes_r_object(r, to->trace, "timing_dependent");
    pes_r_u64(r, o, "sites", t->n_spin);
    pes_r_u64(r, o, "accesses", total);
    pes_r_f64(r, o, "share", t->accesses ? (double)total / (double)t->accesses : 0, "%.6g");
    struct pes_rnode *arr = pes_r_array(r, o, "spin_waits");
    for (size_t i = 0; i < t->n_spin; i++) {
        const struct spin_site *s = &t->spin[i];
        const struct pes_site *d = t->si->site ? t->si->site(t->si->site_ctx, s->site) : NULL;
        struct pes_rnode *e = pes_r_object(r, arr, NULL);
        pes_r_u64(r, e, "site", s->site);
        pes_r_str(r, e, "file", d && d->file ? d->file : "");
        pes_r_u64(r, e, "line", d ? d->line : 0);
        pes_r_str(r, e, "function", d && d->function ? d->function : "");
        pes_r_u64(r, e, "accesses", s->accesses);
        pes_r_u64(r, e, "waits", s->waits);
        pes_r_u64(r, e, "longest_wait", s->longest);
    }
}

static void destroy(void *self)
{
    struct timing *t = self;
    free(t->thr);
    free(t->watch);
    free(t->flat);
    free(t->hkey);
    free(t->hcount);
    free(t->spin);
    free(t);
}

const struct pes_analysis pes_analysis_timing = {
    .name = "timing",
    .help =
        "sites whose access counts depend on thread timing (spin-waits on another thread's store)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
    .sync = finish,
    .part_pack = part_pack,
    .part_merge = part_merge,
};
