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
 * In parts (pes-replay --parts, pes-replay-mpi) each part starts with no
 * runs, where the whole stream may have open ones (a wait cut by the part's
 * start). So every part but the last reads on after its end (carry): its
 * runs go on from its state and, beside them, a shadow's from no runs, as
 * the next part's did, until both states agree (usually within a few
 * thousand accesses of each thread: a closed run's slack); from there on the
 * next part's runs are the whole stream's. Parts other than 0 keep their
 * waits as notes at their place in the stream (the part's and the carry's),
 * and part 0, merging them in order, drops each note made where an earlier
 * part's carry saw the stream, whose notes stand for it. The waits are then
 * the whole stream's, cut or not (test_timing_parts).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "profiles.h" /* struct pes_profiles_split: which part this is */

enum {
    SPIN_MIN_LOADS = 3,
    SPIN_SLACK = 4096,     /* the waiter's own accesses: a few time-mark segments */
    SPIN_RUN_SITES = 4,    /* sites remembered per wait (an unrolled loop has several) */
    SPIN_MAX_BYTES = 64,   /* wider loads are no polls (memcpy sources) */
    FLAT_SITES = 1u << 20, /* site ids counted in an array; larger ones in a hash */
};
#define CARRY_ALL UINT64_MAX /* a carry that read to the stream's end */

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

/* A wait's site, where it was found (parts other than 0): the index of the
 * batch entry that ended it, in the part or in its carry. */
struct note {
    uint64_t pos;
    uint64_t site;
    uint64_t loads;
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
    /* reading in parts */
    uint32_t part;         /* this part; part 0 counts its waits in spin at once */
    int last;              /* the part that ends the stream (or no parts) */
    uint64_t seen;         /* batch entries of the part, then of its carry */
    uint64_t n_local;      /* the part's entries (once its carry began, or at sync) */
    int carrying;          /* reading the stream after the part */
    int discard;           /* the shadow: its waits are no one's */
    uint64_t carry_end;    /* entries after the part until the states agreed, or CARRY_ALL */
    struct timing *shadow; /* the next part's runs, from no runs */
    struct note *notes[2]; /* parts > 0: [0] in the part, [1] in its carry */
    size_t n_notes[2], cap_notes[2];
    uint64_t offset, cover; /* part 0 merging: the next part's first entry; the carries' reach */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return !si->mimicked && si->kind != PES_TRACE_SAMPLED && si->n_streams > 1;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct timing *t = calloc(1, sizeof *t);
    uint64_t slots = 4096;
    while (slots < (uint64_t)si->n_streams * 64)
        slots *= 2;
    if (t) {
        const struct pes_profiles_split *sp = k ? k->split : NULL;
        int parts = sp && sp->parts && sp->ranks > 1;
        t->part = parts ? sp->rank : 0;
        t->last = !parts || sp->rank + 1 == sp->ranks;
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

static void add_wait(struct timing *t, uint32_t site, uint64_t loads)
{
    struct spin_site *s = spin_site(t, site);
    if (!s)
        return;
    s->waits++;
    if (loads > s->longest)
        s->longest = loads;
}

/* A part's note of a wait at its place (part_pack). */
static void add_note(struct timing *t, uint32_t site, uint64_t loads)
{
    int c = t->carrying;
    if (t->n_notes[c] == t->cap_notes[c]) {
        size_t cap = t->cap_notes[c] ? 2 * t->cap_notes[c] : 16;
        struct note *p = realloc(t->notes[c], cap * sizeof *p);
        if (!p) {
            t->nomem = 1;
            return;
        }
        t->notes[c] = p;
        t->cap_notes[c] = cap;
    }
    t->notes[c][t->n_notes[c]++] = (struct note){.pos = t->seen, .site = site, .loads = loads};
}

static void note_wait(struct timing *t, const struct run *r)
{
    for (unsigned i = 0; i < r->n_sites && !t->discard; i++) {
        if (!r->again[i])
            continue;
        if (t->part == 0)
            add_wait(t, r->sites[i], r->loads);
        else
            add_note(t, r->sites[i], r->loads);
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

/* The runs through b's accesses; `count`: the accesses per site too (not
 * in a carry, whose accesses are a later part's). */
static int step(struct timing *t, const struct pes_batch *b, int count, struct pes_error *err)
{
    for (size_t i = 0; i < b->n; i++, t->seen++) {
        uint32_t u = b->stream[i];
        if (u >= t->n_streams)
            return pes_error_set(err, PES_ERR_ARG, 0, "timing: stream %u out of range (%u streams)",
                                 u, t->n_streams);
        struct thread *th = &t->thr[u];
        uint32_t site = b->site[i];
        if (!count)
            ;
        else if (site < t->n_flat)
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
    /* an ended thread's open run of too few loads gets no more: it is no
     * wait, as at the end (and a carry's states agree sooner) */
    for (size_t i = 0; i < b->n_ended; i++)
        if (b->ended[i] < t->n_streams && t->thr[b->ended[i]].open.loads < SPIN_MIN_LOADS)
            close_run(t, &t->thr[b->ended[i]]);
    if (count)
        t->accesses += b->n + b->dropped_reads + b->dropped_writes;
    if (t->nomem)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    return step(self, b, 1, err);
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

/* The stream ends: open runs close, slacks end. */
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

/* ------------------------------------------------------------ across parts */

static int same_run(const struct run *a, const struct run *b)
{
    if (!a->loads || !b->loads)
        return a->loads == b->loads;
    if (a->addr != b->addr || a->size != b->size || a->loads != b->loads ||
        a->written != b->written || a->released != b->released || a->n_sites != b->n_sites)
        return 0;
    for (unsigned i = 0; i < a->n_sites; i++)
        if (a->sites[i] != b->sites[i] || a->again[i] != b->again[i])
            return 0;
    return 1;
}

/* Whether a and b will find the same waits from here on, whatever follows:
 * the same runs (a closed one with as much of its slack left). */
static int agree(const struct timing *a, const struct timing *b)
{
    for (uint32_t v = 0; v < a->n_streams; v++) {
        const struct thread *x = &a->thr[v], *y = &b->thr[v];
        if (!same_run(&x->open, &y->open) || !same_run(&x->closed, &y->closed))
            return 0;
        if (x->closed.loads && x->closed.deadline - x->accesses != y->closed.deadline - y->accesses)
            return 0;
    }
    return 1;
}

/* No runs (the later parts' from here on). */
static void forget_runs(struct timing *t)
{
    memset(t->thr, 0, t->n_streams * sizeof *t->thr);
    memset(t->watch, 0, (t->watch_mask + 1) * sizeof *t->watch);
}

static void destroy(void *self);

static int carry(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct timing *t = self;
    if (!t->carrying) {
        t->n_local = t->seen;
        t->seen = 0;
        t->carrying = 1;
        if (!(t->shadow = create(t->si, NULL, err)))
            return -1;
        t->shadow->discard = 1;
    }
    int rc = 0;
    if (!b) { /* the stream's end: the runs end as the whole stream's */
        rc = finish(t, err) < 0 ? -1 : 1;
        t->carry_end = CARRY_ALL;
    } else if (step(t, b, 0, err) < 0 || step(t->shadow, b, 0, err) < 0) {
        return -1;
    } else if (agree(t, t->shadow)) {
        rc = 1;
        t->carry_end = t->seen;
        forget_runs(t);
    }
    if (rc != 0) {
        destroy(t->shadow);
        t->shadow = NULL;
    }
    if (rc == 1 && t->nomem)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return rc;
}

/* After the part (and its carry): the last part's runs end with the stream;
 * part 0 is where the merge of the others starts. */
static int sync(void *self, struct pes_error *err)
{
    struct timing *t = self;
    if (!t->carrying)
        t->n_local = t->seen;
    if (t->last && finish(t, err) < 0)
        return -1;
    t->offset = t->n_local;
    t->cover = !t->carrying                ? 0
               : t->carry_end == CARRY_ALL ? UINT64_MAX
                                           : t->n_local + t->carry_end;
    forget_runs(t); /* pes_pipeline_finish finds no runs (the carry's were for later parts) */
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

/* A part (not part 0): accesses, entries (the part's batch entries),
 * carry_end, n_notes[0] and its notes (pos, site, loads), n_notes[1] and
 * its notes, n_counts and n_counts × (site, count); u64 words. */
static size_t part_pack(void *self, void *buf, size_t cap)
{
    struct timing *t = self;
    size_t n_counts = t->hn;
    for (uint32_t s = 0; s < t->n_flat; s++)
        n_counts += t->flat[s] != 0;
    size_t len = 8 * (6 + 3 * (t->n_notes[0] + t->n_notes[1]) + 2 * n_counts), w = 0;
    if (!buf || cap < len)
        return len;
    put(buf, w++, t->accesses);
    put(buf, w++, t->n_local);
    put(buf, w++, t->carrying ? t->carry_end : 0);
    for (int c = 0; c < 2; c++) {
        put(buf, w++, t->n_notes[c]);
        for (size_t i = 0; i < t->n_notes[c]; i++) {
            put(buf, w++, t->notes[c][i].pos);
            put(buf, w++, t->notes[c][i].site);
            put(buf, w++, t->notes[c][i].loads);
        }
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

/* Part 0, each later part in order: its waits where no earlier part's carry
 * saw the stream (the carry's stand for them), then its carry's reach. */
static int part_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct timing *t = self;
    size_t n = len / 8, at = 3, notes[2] = {0, 0}, first[2] = {0, 0}, n_counts = 0;
    /* the layout first, then the counts: a part that does not parse changes nothing */
    int ok = len % 8 == 0 && n >= 6;
    for (int c = 0; ok && c < 2; c++) {
        notes[c] = (size_t)get(buf, at);
        ok = notes[c] <= (n - at - 1) / 3;
        first[c] = at + 1;
        at += 1 + (ok ? 3 * notes[c] : 0);
        ok = ok && at < n;
    }
    if (ok) {
        n_counts = (size_t)get(buf, at);
        ok = n_counts <= (n - at - 1) / 2 && n == at + 1 + 2 * n_counts;
    }
    for (int c = 0; c < 2; c++)
        for (size_t i = 0; ok && i < notes[c]; i++)
            ok = get(buf, first[c] + 3 * i + 1) <= UINT32_MAX;
    for (size_t i = 0; ok && i < n_counts; i++)
        ok = get(buf, at + 1 + 2 * i) <= UINT32_MAX;
    if (!ok)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "timing: a part's counts of %zu bytes do not parse", len);
    t->accesses += get(buf, 0);
    uint64_t entries = get(buf, 1), carry_end = get(buf, 2);
    for (int c = 0; c < 2; c++) {
        uint64_t base = t->offset + (c ? entries : 0);
        for (size_t i = 0; i < notes[c]; i++) {
            const size_t w = first[c] + 3 * i;
            if (base + get(buf, w) >= t->cover)
                add_wait(t, (uint32_t)get(buf, w + 1), get(buf, w + 2));
        }
    }
    uint64_t reach = carry_end == CARRY_ALL ? UINT64_MAX : t->offset + entries + carry_end;
    if (reach > t->cover)
        t->cover = reach;
    t->offset += entries;
    for (size_t i = 0; i < n_counts; i++)
        if (site_add(t, (uint32_t)get(buf, at + 1 + 2 * i), get(buf, at + 2 + 2 * i)) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    if (t->nomem)
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
    free(t->notes[0]);
    free(t->notes[1]);
    if (t->shadow)
        destroy(t->shadow);
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
    .sync = sync,
    .part_pack = part_pack,
    .part_merge = part_merge,
    .carry = carry,
};
