/*
 * mesi — MESI coherence between the cores' private hierarchies, miss
 * classification, per-site/per-thread attribution and communication matrices
 * (definitions in mesi.h and docs/simulation.md).
 *
 * Directory: an open-addressing hash map keyed by line number, one slot per
 * line ever touched (slots are never freed: "ever touched" is what makes a
 * miss compulsory). A slot is 64 bytes; per-core byte masks move to a shared
 * record only once a second core takes the line (see struct dir_entry).
 */
#include "mesi.h"
#include "cachesim.h"
#include "shadow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NO_LINE UINT64_MAX

/* One directory slot (64 bytes, one host cache line). Byte masks, per core c:
 * while c holds the line, the bytes it accessed since (re)acquiring it
 * (Marathe §8 bit vector); while c has lost it, the bytes other cores wrote
 * since the invalidation (classifies the coherence miss). A line only one core
 * ever held keeps that core's mask inline (mask0 / owner); the first time a
 * second core takes it, a shared record with one mask per core plus the
 * invalidating core of each lost copy is allocated from s->pool. Most lines are
 * private, so this keeps the directory small and cache friendly. */
struct dir_entry {
    uint64_t line;
    uint64_t present;      /* cores whose private caches hold the line */
    uint64_t touched;      /* cores that ever held it */
    uint64_t lost;         /* cores that lost it to another core's write since holding it */
    uint64_t mask0;        /* owner's mask while ext == 0 */
    uint32_t ext;          /* 1 + index of the shared record, 0 = none */
    uint16_t sock_present; /* sockets whose shared levels may hold it (superset) */
    uint16_t sock_touched;
    uint16_t sock_lost;
    uint8_t owner; /* the only core that ever held it, while ext == 0 */
    uint8_t excl;  /* sole holder in E or M */
    uint8_t dirty; /* sole holder in M */
    uint8_t pad[7];
};

struct pes_sim {
    struct pes_hier *hier;
    uint32_t n_cores, n_sockets, n_threads, n_levels, n_private;
    uint32_t *core_socket;
    uint32_t *core_thread; /* thread that last ran on each core */
    uint32_t line_shift, gran_shift;
    /* directory */
    unsigned char *dir; /* cap slots of `stride` bytes */
    size_t stride;
    uint64_t *pool; /* shared records: n_cores masks, then n_cores inv_core bytes */
    size_t rec_words, pool_used, pool_cap;
    uint64_t cap, used;
    unsigned cap_bits;
    /* per core: line of its previous access and that line's slot (fast path) */
    uint64_t *last_line, *last_slot;
    /* results */
    struct pes_sim_stats totals, other_site;
    struct pes_sim_stats *threads;
    /* per site: dense rows in first-access order, found through an index by
     * id (4 bytes per id up to the highest seen), so sparse or high module
     * ids cost no full rows */
    struct pes_sim_stats *sites;
    uint32_t n_rows, cap_rows;
    uint32_t *site_row; /* [n_sites] row + 1, 0 = no access yet */
    uint32_t n_sites;   /* index entries allocated */
    uint64_t writebacks;
    uint64_t *comm_thread[2]; /* [0] true, [1] false; n_threads^2, row supplier */
    uint64_t *comm_core[2];
    /* cfg->on_event, and the access being simulated (for its events) */
    void (*on_event)(void *ctx, const struct pes_sim_event *ev);
    void *event_ctx;
    const struct pes_sim_access *cur;
    /* cfg->partition_bits: the lines simulated are those with (line & part_mask) == part */
    uint64_t part_mask, part;
    /* the capacity / conflict split: its own shadow (whole simulations), or
     * the bits pes_sim_access_batch_shadow hands over (NULL: none) */
    struct pes_sim_shadow *shadow;
    const uint8_t *shadow_hits, *shadow_more;
};

static inline void emit(const struct pes_sim *s, uint64_t line, uint32_t other, int kind,
                        int is_true)
{
    if (s->on_event) {
        struct pes_sim_event ev = {s->cur,        line << s->line_shift, other,
                                   (uint8_t)kind, (uint8_t)is_true,      0};
        s->on_event(s->event_ctx, &ev);
    }
}

static inline uint64_t hash_line(uint64_t line, unsigned bits)
{
    return pes_hash_fib(line, bits);
}

#define ENT(s, j) ((struct dir_entry *)((s)->dir + (size_t)(j) * (s)->stride))

static inline uint64_t *rec_of(const struct pes_sim *s, const struct dir_entry *e)
{
    return e->ext ? s->pool + (size_t)(e->ext - 1) * s->rec_words : NULL;
}

static inline uint8_t *inv_cores(const struct pes_sim *s, uint64_t *rec)
{
    return (uint8_t *)(rec + s->n_cores);
}

/* Core c's mask: in the shared record, or inline when c is the only holder ever. */
static inline uint64_t *mask_of(const struct pes_sim *s, struct dir_entry *e, uint32_t c)
{
    return e->ext ? rec_of(s, e) + c : &e->mask0;
}

/* A second core takes the line: move the owner's mask into a shared record. */
static int make_shared(struct pes_sim *s, struct dir_entry *e)
{
    if (s->pool_used == s->pool_cap) {
        size_t cap = s->pool_cap ? s->pool_cap * 2 : 1024;
        uint64_t *p = realloc(s->pool, cap * s->rec_words * sizeof *p);
        if (!p)
            return -1;
        s->pool = p;
        s->pool_cap = cap;
    }
    uint64_t *rec = s->pool + s->pool_used * s->rec_words;
    memset(rec, 0, s->rec_words * sizeof *rec);
    rec[e->owner] = e->mask0;
    e->ext = (uint32_t)++s->pool_used;
    return 0;
}

/* Large directories are touched at random: ask for transparent huge pages,
 * otherwise TLB misses dominate the run time (measured: ~2x on 16 cores). */
static void *big_alloc(size_t bytes)
{
    const size_t huge = 2u << 20;
    if (bytes < 2 * huge)
        return malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, huge, (bytes + huge - 1) & ~(huge - 1)) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE); /* a hint; failure is harmless */
#endif
    return p;
}

static int dir_alloc(struct pes_sim *s, unsigned bits)
{
    uint64_t cap = 1ull << bits;
    unsigned char *d = big_alloc(cap * s->stride);
    if (!d)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        ((struct dir_entry *)(d + i * s->stride))->line = NO_LINE;
    unsigned char *old = s->dir;
    uint64_t oldcap = s->cap;
    s->dir = d;
    s->cap = cap;
    s->cap_bits = bits;
    for (uint64_t i = 0; i < oldcap; i++) {
        const struct dir_entry *o = (const struct dir_entry *)(old + i * s->stride);
        if (o->line == NO_LINE)
            continue;
        uint64_t j = hash_line(o->line, bits);
        while (ENT(s, j)->line != NO_LINE)
            j = (j + 1) & (cap - 1);
        memcpy(ENT(s, j), o, s->stride);
    }
    free(old);
    return 0;
}

/* Index of line's slot, or cap if absent. */
static inline uint64_t dir_find(const struct pes_sim *s, uint64_t line)
{
    uint64_t j = hash_line(line, s->cap_bits);
    for (;;) {
        uint64_t l = ENT(s, j)->line;
        if (l == line)
            return j;
        if (l == NO_LINE)
            return s->cap;
        j = (j + 1) & (s->cap - 1);
    }
}

/* Index of line's slot, inserting a fresh one; cap on allocation failure. */
static inline uint64_t dir_get(struct pes_sim *s, uint64_t line)
{
    uint64_t j = hash_line(line, s->cap_bits);
    for (;;) {
        uint64_t l = ENT(s, j)->line;
        if (l == line)
            return j;
        if (l == NO_LINE)
            break;
        j = (j + 1) & (s->cap - 1);
    }
    if ((s->used + 1) * 2 > s->cap) {
        if (dir_alloc(s, s->cap_bits + 1) != 0)
            return s->cap;
        return dir_get(s, line);
    }
    s->used++;
    memset(ENT(s, j), 0, s->stride);
    ENT(s, j)->line = line;
    return j;
}

/* A line left core's private caches by eviction (not by coherence). */
static void on_evict(void *ctx, uint32_t core, uint64_t line)
{
    struct pes_sim *s = ctx;
    uint64_t j = dir_find(s, line);
    if (j == s->cap)
        return;
    struct dir_entry *e = ENT(s, j);
    uint64_t bit = 1ull << core;
    if (!(e->present & bit))
        return;
    e->present &= ~bit;
    if (e->dirty) {
        s->writebacks++;
        e->dirty = 0;
    }
    e->excl = 0; /* a remaining copy stays S (MESI does not upgrade silently) */
}

static uint64_t holders(void *ctx, uint64_t line)
{
    struct pes_sim *s = ctx;
    uint64_t j = dir_find(s, line);
    return j == s->cap ? 0 : ENT(s, j)->present;
}

void pes_sim_destroy(struct pes_sim *s)
{
    if (!s)
        return;
    pes_hier_destroy(s->hier);
    pes_sim_shadow_destroy(s->shadow);
    free(s->core_socket);
    free(s->core_thread);
    free(s->dir);
    free(s->pool);
    free(s->last_line);
    free(s->last_slot);
    free(s->threads);
    free(s->sites);
    free(s->site_row);
    for (int k = 0; k < 2; k++) {
        free(s->comm_thread[k]);
        free(s->comm_core[k]);
    }
    free(s);
}

struct pes_sim *pes_sim_create(const struct pes_sim_config *cfg, struct pes_error *err)
{
    if (!cfg || !cfg->machine) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: no machine description");
        return NULL;
    }
    const struct pes_machine *m = cfg->machine;
    uint32_t n_cores = cfg->n_cores ? cfg->n_cores : m->sockets * m->cores_per_socket;
    if (n_cores == 0 || n_cores > PES_SIM_MAX_CORES) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: %u cores, expected 1 .. %u", n_cores,
                      PES_SIM_MAX_CORES);
        return NULL;
    }
    if (cfg->n_threads == 0 || cfg->n_threads > PES_SIM_MAX_THREADS) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: %u threads, expected 1 .. %u", cfg->n_threads,
                      PES_SIM_MAX_THREADS);
        return NULL;
    }
    if (!cfg->core_socket && m->cores_per_socket == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: machine has 0 cores per socket");
        return NULL;
    }
    if (m->n_levels == 0 || m->n_levels > PES_MAX_LEVELS || m->level[0].line < 8 ||
        m->level[0].line > 4096 || (m->level[0].line & (m->level[0].line - 1))) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "sim: %u levels / line %u bytes (need 1..4, power of 2, 8..4096)",
                      m->n_levels, m->level[0].line);
        return NULL;
    }
    if (cfg->partition_bits > pes_sim_partition_bits(m, cfg->page_size) ||
        (cfg->partition_bits < 32 && cfg->partition >> cfg->partition_bits)) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "sim: partition %u of %u bits; this machine splits into at most %u bits",
                      cfg->partition, cfg->partition_bits,
                      pes_sim_partition_bits(m, cfg->page_size));
        return NULL;
    }
    struct pes_sim *s = calloc(1, sizeof *s);
    if (!s)
        goto nomem;
    s->part_mask = (UINT64_C(1) << cfg->partition_bits) - 1;
    s->part = cfg->partition;
    s->n_cores = n_cores;
    s->n_threads = cfg->n_threads;
    s->on_event = cfg->on_event;
    s->event_ctx = cfg->event_ctx;
    s->core_socket = malloc(n_cores * sizeof *s->core_socket);
    s->core_thread = calloc(n_cores, sizeof *s->core_thread);
    if (!s->core_socket || !s->core_thread)
        goto nomem;
    uint32_t n_sockets = 0;
    for (uint32_t c = 0; c < n_cores; c++) {
        uint32_t so = cfg->core_socket ? cfg->core_socket[c] : c / m->cores_per_socket;
        if (so >= PES_SIM_MAX_SOCKETS) {
            pes_error_set(err, PES_ERR_ARG, 0, "sim: core %u on socket %u (max 15)", c, so);
            pes_sim_destroy(s);
            return NULL;
        }
        s->core_socket[c] = so;
        if (so + 1 > n_sockets)
            n_sockets = so + 1;
    }
    s->n_sockets = n_sockets;
    struct pes_hier_config hc = {.n_cores = n_cores,
                                 .n_sockets = n_sockets,
                                 .core_socket = s->core_socket,
                                 .n_levels = m->n_levels,
                                 .non_inclusive = cfg->non_inclusive,
                                 .page_size = cfg->page_size,
                                 .index_shift = cfg->partition_bits};
    memcpy(hc.level, m->level, sizeof hc.level);
    s->hier = pes_hier_create(&hc, on_evict, s, err);
    if (!s->hier) {
        pes_sim_destroy(s);
        return NULL;
    }
    pes_hier_set_holders(s->hier, holders);
    if (cfg->partition_bits == 0 &&
        !(s->shadow = pes_sim_shadow_create(m, n_cores, s->core_socket, err))) {
        pes_sim_destroy(s);
        return NULL;
    }
    s->n_levels = m->n_levels;
    s->n_private = pes_hier_private_levels(s->hier);
    uint32_t line = m->level[0].line;
    while ((1u << s->line_shift) < line)
        s->line_shift++;
    s->gran_shift = s->line_shift > 6 ? s->line_shift - 6 : 0;
    s->stride = sizeof(struct dir_entry);
    s->rec_words = n_cores + (n_cores + 7) / 8;
    s->last_line = malloc(n_cores * sizeof *s->last_line);
    s->last_slot = calloc(n_cores, sizeof *s->last_slot);
    if (!s->last_line || !s->last_slot)
        goto nomem;
    memset(s->last_line, 0xff, n_cores * sizeof *s->last_line);
    if (dir_alloc(s, 12) != 0)
        goto nomem;
    s->threads = calloc(s->n_threads, sizeof *s->threads);
    if (!s->threads)
        goto nomem;
    for (int k = 0; k < 2; k++) {
        s->comm_thread[k] = calloc((size_t)s->n_threads * s->n_threads, sizeof(uint64_t));
        s->comm_core[k] = calloc((size_t)n_cores * n_cores, sizeof(uint64_t));
        if (!s->comm_thread[k] || !s->comm_core[k])
            goto nomem;
    }
    return s;
nomem:
    pes_sim_destroy(s);
    pes_error_set(err, PES_ERR_NOMEM, 0, "sim: out of memory");
    return NULL;
}

static struct pes_sim_stats *site_stats(struct pes_sim *s, uint32_t site)
{
    if (site >= PES_SIM_MAX_SITES)
        return &s->other_site;
    if (site < s->n_sites && s->site_row[site])
        return &s->sites[s->site_row[site] - 1];
    if (site >= s->n_sites) {
        uint32_t n = s->n_sites ? s->n_sites : 256;
        while (n <= site)
            n *= 2;
        uint32_t *idx = realloc(s->site_row, (size_t)n * sizeof *idx);
        if (!idx)
            return NULL;
        memset(idx + s->n_sites, 0, (size_t)(n - s->n_sites) * sizeof *idx);
        s->site_row = idx;
        s->n_sites = n;
    }
    if (s->n_rows == s->cap_rows) {
        uint32_t cap = s->cap_rows ? s->cap_rows * 2 : 64;
        struct pes_sim_stats *st = realloc(s->sites, (size_t)cap * sizeof *st);
        if (!st)
            return NULL;
        s->sites = st;
        s->cap_rows = cap;
    }
    struct pes_sim_stats *st = &s->sites[s->n_rows++];
    memset(st, 0, sizeof *st);
    s->site_row[site] = s->n_rows;
    return st;
}

/* Apply one update to the three attribution targets. */
#define ADD3(field, n)                                                                             \
    do {                                                                                           \
        tot->field += (n);                                                                         \
        th->field += (n);                                                                          \
        st->field += (n);                                                                          \
    } while (0)

static uint64_t byte_mask(const struct pes_sim *s, uint64_t lo, uint64_t hi)
{
    /* Offsets lo..hi-1 inside the line, at 1 bit per 2^gran_shift bytes. */
    uint64_t a = lo >> s->gran_shift, b = (hi - 1) >> s->gran_shift;
    uint64_t n = b - a + 1;
    uint64_t m = n >= 64 ? ~0ull : ((1ull << n) - 1);
    return m << a;
}

/* Write by core c (thread t) removes other cores' copies. */
static void invalidate_others(struct pes_sim *s, struct dir_entry *e, uint64_t *mask, uint32_t c,
                              uint32_t t, uint64_t bytes, uint64_t others, int transfer,
                              struct pes_sim_stats *tot, struct pes_sim_stats *th,
                              struct pes_sim_stats *st)
{
    while (others) {
        uint32_t o = (uint32_t)__builtin_ctzll(others);
        others &= others - 1;
        uint64_t obit = 1ull << o;
        int is_true = (mask[o] & bytes) != 0; /* Marathe §8 */
        uint32_t ot = s->core_thread[o];
        if (is_true)
            ADD3(inval_true, 1);
        else
            ADD3(inval_false, 1);
        emit(s, e->line, o, PES_SIM_EV_INVALIDATION, is_true);
        tot->victim_threads |= 1ull << (ot & 63);
        th->victim_threads |= 1ull << (ot & 63);
        st->victim_threads |= 1ull << (ot & 63);
        if (transfer) {
            /* Write miss: the line moves from the holder to the writer. */
            int k = is_true ? 0 : 1;
            if (is_true)
                ADD3(comm_true, 1);
            else
                ADD3(comm_false, 1);
            emit(s, e->line, o, PES_SIM_EV_TRANSFER, is_true);
            s->comm_core[k][(size_t)o * s->n_cores + c]++;
            if (ot != t)
                s->comm_thread[k][(size_t)ot * s->n_threads + t]++;
        }
        pes_hier_drop_private(s->hier, o, e->line);
        e->present &= ~obit;
        e->lost |= obit;
        mask[o] = bytes; /* from now on: bytes written by others since the loss */
        inv_cores(s, mask)[o] = (uint8_t)c;
    }
}

/* fa: the shadow's bits (shadow.h): bit k set when a fully associative
 * cache of level k's size held the line. */
static int access_line(struct pes_sim *s, uint32_t c, uint32_t t, uint64_t line, uint64_t bytes,
                       int rd, int wr, uint32_t fa, struct pes_sim_stats *st)
{
    struct pes_sim_stats *tot = &s->totals, *th = &s->threads[t];
    ADD3(accesses, 1);
    if (rd)
        ADD3(reads, 1);
    if (wr)
        ADD3(writes, 1);
    s->core_thread[c] = t;
    uint64_t cbit = 1ull << c;

    /* Fast path: the core's previous access was this line and it still holds
     * it, so the line is MRU in its L1 (only the core's own fills reorder its
     * L1; losing the line clears the present bit). A read, or a write in M
     * with nobody waiting on its bytes, changes no coherence state. */
    if (s->last_line[c] == line && s->last_slot[c] < s->cap) {
        struct dir_entry *e = ENT(s, s->last_slot[c]);
        if (e->line == line && (e->present & cbit) && (!wr || (e->dirty && !(e->lost & ~cbit)))) {
            ADD3(hits[0], 1);
            *mask_of(s, e, c) |= bytes;
            return 0;
        }
    }

    uint64_t j = dir_get(s, line);
    if (j == s->cap)
        return -1;
    uint32_t sock = s->core_socket[c];
    uint64_t sbit = 1ull << sock;
    /* Class of a private miss / a shared-level miss, from the state before the access. */
    int pclass, sclass;
    {
        struct dir_entry *e = ENT(s, j);
        pclass = !(e->touched & cbit) ? PES_SIM_COMPULSORY
                 : (e->lost & cbit)   ? PES_SIM_COHERENCE
                                      : PES_SIM_CAPACITY;
        sclass = !(e->sock_touched & sbit) ? PES_SIM_COMPULSORY
                 : (e->sock_lost & sbit)   ? PES_SIM_COHERENCE
                                           : PES_SIM_CAPACITY;
    }
    /* The fill may evict other lines (on_evict looks them up, never inserts),
     * so slot j stays valid. */
    uint32_t hit = pes_hier_access(s->hier, c, line);
    struct dir_entry *e = ENT(s, j);
    if (!e->touched)
        e->owner = (uint8_t)c;
    else if (!e->ext && e->touched != cbit && make_shared(s, e) != 0)
        return -1;
    /* Other cores' masks exist only in a shared record (NULL: c is the only core). */
    uint64_t *mask = rec_of(s, e);
    uint64_t *mine = mask_of(s, e, c);
    s->last_line[c] = line;
    s->last_slot[c] = j;
    int l1_cause = -1; /* the L1 miss's class, reported after the access's other events */
    for (uint32_t k = 0; k < hit; k++) {
        int cls;
        if (k < s->n_private)
            cls = hit < s->n_private ? PES_SIM_CAPACITY : pclass;
        else
            cls = hit < s->n_levels ? PES_SIM_CAPACITY : sclass;
        if (cls == PES_SIM_CAPACITY && (fa >> k & 1))
            cls = PES_SIM_CONFLICT;
        ADD3(misses[k][cls], 1);
        if (k == 0)
            l1_cause = cls;
    }
    if (hit < s->n_levels)
        ADD3(hits[hit], 1);

    /* Bytes written by this core count against every core that lost the line. */
    if (wr) {
        uint64_t l = e->lost & ~cbit;
        while (l) {
            uint32_t o = (uint32_t)__builtin_ctzll(l);
            l &= l - 1;
            mask[o] |= bytes;
        }
    }

    uint64_t others = e->present & ~cbit;
    if (!(e->present & cbit)) {
        /* Private miss. */
        if (e->lost & cbit) {
            int is_true = (*mine & bytes) != 0;
            if (is_true)
                ADD3(coh_true, 1);
            else
                ADD3(coh_false, 1);
            emit(s, line, inv_cores(s, mask)[c], PES_SIM_EV_COHERENCE_MISS, is_true);
            uint32_t src = s->core_thread[inv_cores(s, mask)[c]];
            tot->source_threads |= 1ull << (src & 63);
            th->source_threads |= 1ull << (src & 63);
            st->source_threads |= 1ull << (src & 63);
        }
        if (wr) {
            invalidate_others(s, e, mask, c, t, bytes, others, 1, tot, th, st);
            e->present = cbit;
            e->excl = 1;
            e->dirty = 1;
        } else {
            if (others && e->dirty) {
                /* M elsewhere: holder writes back, both end in S; the line moves. */
                uint32_t o = (uint32_t)__builtin_ctzll(others);
                uint32_t ot = s->core_thread[o];
                int is_true = (mask[o] & bytes) != 0;
                int k = is_true ? 0 : 1;
                ADD3(downgrades, 1);
                if (is_true)
                    ADD3(comm_true, 1);
                else
                    ADD3(comm_false, 1);
                emit(s, line, o, PES_SIM_EV_TRANSFER, is_true);
                s->writebacks++;
                s->comm_core[k][(size_t)o * s->n_cores + c]++;
                if (ot != t)
                    s->comm_thread[k][(size_t)ot * s->n_threads + t]++;
            }
            e->excl = others == 0;
            e->dirty = 0;
            e->present |= cbit;
        }
        e->touched |= cbit;
        e->lost &= ~cbit;
        *mine = bytes;
    } else {
        if (wr) {
            if (others) {
                ADD3(upgrades, 1);
                invalidate_others(s, e, mask, c, t, bytes, others, 0, tot, th, st);
            } else if (!e->excl) {
                ADD3(upgrades, 1); /* S with no other sharer: bus upgrade, nobody to invalidate */
            }
            e->present = cbit;
            e->excl = 1;
            e->dirty = 1;
        }
        *mine |= bytes;
    }

    /* Shared levels: a write makes other sockets' copies stale. */
    if (wr && (e->sock_present & ~sbit)) {
        uint64_t so = e->sock_present & ~sbit;
        while (so) {
            uint32_t x = (uint32_t)__builtin_ctzll(so);
            so &= so - 1;
            if (pes_hier_drop_shared(s->hier, x, line))
                e->sock_lost |= 1ull << x;
        }
        e->sock_present &= sbit;
    }
    if (hit >= s->n_private) {
        e->sock_present |= sbit;
        e->sock_touched |= sbit;
        e->sock_lost &= ~sbit;
    }
    if (l1_cause >= 0 && s->on_event) {
        struct pes_sim_event ev = {s->cur, line << s->line_shift, c, PES_SIM_EV_MISS,
                                   0,      (uint8_t)l1_cause};
        s->on_event(s->event_ctx, &ev);
    }
    return 0;
}

int pes_sim_access(struct pes_sim *s, const struct pes_sim_access *a, struct pes_error *err)
{
    if (a->core >= s->n_cores) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: core %u out of range (%u cores)", a->core,
                      s->n_cores);
        return -1;
    }
    if (a->thread >= s->n_threads) {
        pes_error_set(err, PES_ERR_ARG, 0, "sim: thread %u out of range (%u threads)", a->thread,
                      s->n_threads);
        return -1;
    }
    if (!s->shadow && !s->shadow_hits) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "sim: a partition's capacity / conflict split needs the shadow of every "
                      "line (pes_sim_access_batch_shadow)");
        return -1;
    }
    struct pes_sim_stats *st = NULL; /* its site's row, once it has a line here */
    s->cur = a;
    uint64_t size = a->size ? a->size : 1;
    uint64_t first = a->addr, last = a->addr + size - 1;
    if (last < first)
        last = UINT64_MAX; /* wraps past the end of the address space: clamp */
    uint64_t lsz = 1ull << s->line_shift;
    int rd = a->is_read != 0, wr = a->is_write != 0;
    if (!rd && !wr)
        rd = 1;
    const uint8_t *given = s->shadow_hits ? s->shadow_hits + a->shadow_at : NULL;
    const uint8_t *more = s->shadow_more ? s->shadow_more + a->shadow_at : NULL;
    for (uint64_t line = first >> s->line_shift; line <= last >> s->line_shift; line++) {
        /* the shadow sees every line, before the caches (its bits are the state before) */
        uint32_t fa = given ? (uint32_t)*given++ | (more ? *more++ : 0u)
                            : (uint32_t)pes_sim_shadow_access(s->shadow, a->core, line);
        if ((line & s->part_mask) != s->part) { /* another partition's line */
            if (line == UINT64_MAX >> s->line_shift)
                break;
            continue;
        }
        if (!st && !(st = site_stats(s, a->site)))
            goto nomem;
        uint64_t base = line << s->line_shift;
        uint64_t lo = first > base ? first - base : 0;
        uint64_t hi = last - base >= lsz ? lsz : last - base + 1;
        if (access_line(s, a->core, a->thread, line, byte_mask(s, lo, hi), rd, wr, fa, st) != 0)
            goto nomem;
        if (line == UINT64_MAX >> s->line_shift)
            break;
    }
    return 0;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "sim: out of memory (%llu lines in the directory)",
                  (unsigned long long)s->used);
    return -1;
}

int pes_sim_access_batch(struct pes_sim *s, const struct pes_sim_access *a, size_t n,
                         struct pes_error *err)
{
    /* The directory lookup is the dominant cost (a random host-memory access
     * per line); prefetching the slots a few accesses ahead overlaps those
     * misses. The home slot is a guess: collisions just probe on as usual. */
    enum { AHEAD = 8 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            const struct pes_sim_access *f = &a[i + AHEAD];
            const struct pes_sim_access *b = f - 1;
            /* the same core on the same line as just before: the fast path
             * will take it, nothing to fetch */
            int repeat = b->core == f->core && (b->addr ^ f->addr) >> s->line_shift == 0;
            if (!repeat && f->core < s->n_cores) {
                struct dir_entry *e = ENT(s, hash_line(f->addr >> s->line_shift, s->cap_bits));
                __builtin_prefetch(e);
                pes_hier_prefetch(s->hier, f->core, f->addr >> s->line_shift);
            }
        }
        if (pes_sim_access(s, &a[i], err) != 0) {
            if (err)
                err->offset = i;
            return -1;
        }
    }
    return 0;
}

int pes_sim_access_batch_shadow(struct pes_sim *s, const struct pes_sim_access *a, size_t n,
                                const uint8_t *hits, const uint8_t *more, struct pes_error *err)
{
    s->shadow_hits = hits;
    s->shadow_more = hits ? more : NULL;
    int rc = pes_sim_access_batch(s, a, n, err);
    s->shadow_hits = s->shadow_more = NULL;
    return rc;
}

uint32_t pes_sim_partition_bits(const struct pes_machine *m, uint64_t page_size)
{
    uint32_t bits = PES_SIM_MAX_PARTITION_BITS, line = m->level[0].line;
    unsigned page_bits = 0; /* log2 of lines per page, as pes_cache_set_page_index counts them */
    while (page_size && ((uint64_t)line << (page_bits + 1)) <= page_size)
        page_bits++;
    for (uint32_t k = 0; k < m->n_levels && k < PES_MAX_LEVELS; k++) {
        const struct pes_cache_config *c = &m->level[k];
        uint64_t ways = c->ways ? c->ways : (c->line ? c->size / c->line : 0);
        uint64_t sets = c->line && ways ? c->size / c->line / ways : 0;
        uint32_t tz = sets ? (uint32_t)__builtin_ctzll(sets) : 0;
        if (tz < bits)
            bits = tz;
        /* a physically indexed level: only the page offset is the same in both address spaces */
        if (page_size && sets > (UINT64_C(1) << page_bits) && page_bits < bits)
            bits = page_bits;
    }
    return bits;
}

void pes_sim_stats_add(struct pes_sim_stats *d, const struct pes_sim_stats *x)
{
    d->accesses += x->accesses;
    d->reads += x->reads;
    d->writes += x->writes;
    for (int l = 0; l < PES_MAX_LEVELS; l++) {
        d->hits[l] += x->hits[l];
        for (int c = 0; c < PES_SIM_MISS_CLASSES; c++)
            d->misses[l][c] += x->misses[l][c];
    }
    d->inval_true += x->inval_true;
    d->inval_false += x->inval_false;
    d->coh_true += x->coh_true;
    d->coh_false += x->coh_false;
    d->comm_true += x->comm_true;
    d->comm_false += x->comm_false;
    d->upgrades += x->upgrades;
    d->downgrades += x->downgrades;
    d->victim_threads |= x->victim_threads;
    d->source_threads |= x->source_threads;
}

int pes_sim_absorb(struct pes_sim *dst, const struct pes_sim *src, struct pes_error *err)
{
    if (dst->n_cores != src->n_cores || dst->n_threads != src->n_threads ||
        dst->n_levels != src->n_levels)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "sim: absorbing a simulation of other cores or levels");
    pes_sim_stats_add(&dst->totals, &src->totals);
    pes_sim_stats_add(&dst->other_site, &src->other_site);
    for (uint32_t t = 0; t < dst->n_threads; t++)
        pes_sim_stats_add(&dst->threads[t], &src->threads[t]);
    /* rows in id order: dst's own row order stays first-access order within
     * it, which no report reads */
    for (uint32_t id = 0; id < src->n_sites; id++) {
        if (!src->site_row[id] || !src->sites[src->site_row[id] - 1].accesses)
            continue;
        struct pes_sim_stats *d = site_stats(dst, id);
        if (!d)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "sim: out of memory");
        pes_sim_stats_add(d, &src->sites[src->site_row[id] - 1]);
    }
    dst->writebacks += src->writebacks;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < (size_t)dst->n_threads * dst->n_threads; i++)
            dst->comm_thread[k][i] += src->comm_thread[k][i];
        for (size_t i = 0; i < (size_t)dst->n_cores * dst->n_cores; i++)
            dst->comm_core[k][i] += src->comm_core[k][i];
    }
    dst->used += src->used;
    return 0;
}

/* Packed: {n_cores, n_threads, n_levels, rows} (u32), writebacks (u64),
 * totals, other_site, threads[n_threads], rows x {site id (u32), stats},
 * then the four communication matrices. */
struct packed_head {
    uint32_t n_cores, n_threads, n_levels, rows;
    uint64_t writebacks;
};

size_t pes_sim_pack(const struct pes_sim *s, void *buf, size_t cap)
{
    uint32_t rows = 0;
    for (uint32_t id = 0; id < s->n_sites; id++)
        rows += s->site_row[id] && s->sites[s->site_row[id] - 1].accesses;
    size_t st = sizeof(struct pes_sim_stats);
    size_t comm = 2 * ((size_t)s->n_threads * s->n_threads + (size_t)s->n_cores * s->n_cores) *
                  sizeof(uint64_t);
    size_t n =
        sizeof(struct packed_head) + (2 + (size_t)s->n_threads) * st + rows * (4 + st) + comm;
    if (!buf || cap < n)
        return n;
    unsigned char *at = buf;
    struct packed_head h = {s->n_cores, s->n_threads, s->n_levels, rows, s->writebacks};
    memcpy(at, &h, sizeof h), at += sizeof h;
    memcpy(at, &s->totals, st), at += st;
    memcpy(at, &s->other_site, st), at += st;
    memcpy(at, s->threads, s->n_threads * st), at += s->n_threads * st;
    for (uint32_t id = 0; id < s->n_sites; id++) {
        if (!s->site_row[id] || !s->sites[s->site_row[id] - 1].accesses)
            continue;
        memcpy(at, &id, 4), at += 4;
        memcpy(at, &s->sites[s->site_row[id] - 1], st), at += st;
    }
    for (int k = 0; k < 2; k++) {
        size_t t = (size_t)s->n_threads * s->n_threads * sizeof(uint64_t),
               c = (size_t)s->n_cores * s->n_cores * sizeof(uint64_t);
        memcpy(at, s->comm_thread[k], t), at += t;
        memcpy(at, s->comm_core[k], c), at += c;
    }
    return n;
}

int pes_sim_absorb_packed(struct pes_sim *dst, const void *buf, size_t len, struct pes_error *err)
{
    struct packed_head h;
    const unsigned char *at = buf, *end = at + len;
    size_t st = sizeof(struct pes_sim_stats);
    if (len < sizeof h)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "sim: packed counts cut short (%zu bytes)",
                             len);
    memcpy(&h, at, sizeof h), at += sizeof h;
    if (h.n_cores != dst->n_cores || h.n_threads != dst->n_threads || h.n_levels != dst->n_levels)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "sim: packed counts of other cores or levels");
    size_t comm =
        2 * ((size_t)h.n_threads * h.n_threads + (size_t)h.n_cores * h.n_cores) * sizeof(uint64_t);
    if ((size_t)(end - at) != (2 + (size_t)h.n_threads) * st + (size_t)h.rows * (4 + st) + comm)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "sim: packed counts of %zu bytes do not match their shape", len);
    struct pes_sim_stats x;
    memcpy(&x, at, st), at += st;
    pes_sim_stats_add(&dst->totals, &x);
    memcpy(&x, at, st), at += st;
    pes_sim_stats_add(&dst->other_site, &x);
    for (uint32_t t = 0; t < h.n_threads; t++, at += st) {
        memcpy(&x, at, st);
        pes_sim_stats_add(&dst->threads[t], &x);
    }
    for (uint32_t r = 0; r < h.rows; r++) {
        uint32_t id;
        memcpy(&id, at, 4), at += 4;
        memcpy(&x, at, st), at += st;
        struct pes_sim_stats *d = site_stats(dst, id);
        if (!d)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "sim: out of memory");
        pes_sim_stats_add(d, &x);
    }
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < (size_t)h.n_threads * h.n_threads; i++, at += 8) {
            uint64_t v;
            memcpy(&v, at, 8);
            dst->comm_thread[k][i] += v;
        }
        for (size_t i = 0; i < (size_t)h.n_cores * h.n_cores; i++, at += 8) {
            uint64_t v;
            memcpy(&v, at, 8);
            dst->comm_core[k][i] += v;
        }
    }
    dst->writebacks += h.writebacks;
    return 0;
}

uint32_t pes_sim_levels(const struct pes_sim *s)
{
    return s->n_levels;
}
uint32_t pes_sim_cores(const struct pes_sim *s)
{
    return s->n_cores;
}
uint32_t pes_sim_threads(const struct pes_sim *s)
{
    return s->n_threads;
}
uint64_t pes_sim_writebacks(const struct pes_sim *s)
{
    return s->writebacks;
}
const struct pes_sim_stats *pes_sim_totals(const struct pes_sim *s)
{
    return &s->totals;
}

const struct pes_sim_stats *pes_sim_thread(const struct pes_sim *s, uint32_t thread)
{
    return thread < s->n_threads ? &s->threads[thread] : NULL;
}

uint32_t pes_sim_sites(const struct pes_sim *s)
{
    return s->n_sites;
}

const struct pes_sim_stats *pes_sim_site(const struct pes_sim *s, uint32_t site)
{
    if (site >= PES_SIM_MAX_SITES)
        return s->other_site.accesses ? &s->other_site : NULL;
    if (site >= s->n_sites || !s->site_row[site])
        return NULL;
    return &s->sites[s->site_row[site] - 1];
}

int pes_sim_rekey_sites(struct pes_sim *s, const uint32_t *key_of, uint32_t n,
                        struct pes_sim_stats **before)
{
    struct pes_sim_stats *old = calloc(n ? n : 1, sizeof *old);
    if (!old)
        return -1;
    for (uint32_t id = 0; id < n; id++) {
        const struct pes_sim_stats *st = pes_sim_site(s, id);
        if (st)
            old[id] = *st;
    }
    struct pes_sim_stats *rows = s->sites, pooled = s->other_site;
    uint32_t *row = s->site_row, n_sites = s->n_sites, n_rows = s->n_rows, cap = s->cap_rows;
    s->sites = NULL;
    s->site_row = NULL;
    s->n_sites = s->n_rows = s->cap_rows = 0;
    memset(&s->other_site, 0, sizeof s->other_site);
    int ok = 1;
    for (uint32_t id = 0; ok && id < n; id++) {
        struct pes_sim_stats *d = old[id].accesses ? site_stats(s, key_of[id]) : NULL;
        if (d)
            pes_sim_stats_add(d, &old[id]);
        ok = !old[id].accesses || d;
    }
    if (ok && pooled.accesses) /* ids past PES_SIM_MAX_SITES stay pooled */
        pes_sim_stats_add(&s->other_site, &pooled);
    if (!ok) { /* back as it was */
        free(s->sites);
        free(s->site_row);
        s->sites = rows, s->site_row = row, s->other_site = pooled;
        s->n_sites = n_sites, s->n_rows = n_rows, s->cap_rows = cap;
        free(old);
        return -1;
    }
    free(rows);
    free(row);
    *before = old;
    return 0;
}

char pes_sim_state(const struct pes_sim *s, uint32_t core, uint64_t addr)
{
    if (core >= s->n_cores)
        return 'I';
    uint64_t j = dir_find(s, addr >> s->line_shift);
    if (j == s->cap)
        return 'I';
    const struct dir_entry *e = ENT(s, j);
    if (!(e->present & (1ull << core)))
        return 'I';
    if (e->excl)
        return e->dirty ? 'M' : 'E';
    return 'S';
}

void pes_sim_comm_ordered(const struct pes_sim *s, enum pes_sim_comm_kind kind, int by_core,
                          uint64_t *out)
{
    size_t n = by_core ? s->n_cores : s->n_threads;
    uint64_t *const *m = by_core ? s->comm_core : s->comm_thread;
    for (size_t i = 0; i < n * n; i++)
        out[i] =
            (kind != PES_SIM_COMM_FALSE ? m[0][i] : 0) + (kind != PES_SIM_COMM_TRUE ? m[1][i] : 0);
}

void pes_sim_comm_symmetric(const struct pes_sim *s, enum pes_sim_comm_kind kind, int by_core,
                            uint64_t *out)
{
    size_t n = by_core ? s->n_cores : s->n_threads;
    pes_sim_comm_ordered(s, kind, by_core, out);
    for (size_t i = 0; i < n; i++) {
        out[i * n + i] = 0;
        for (size_t j = i + 1; j < n; j++) {
            uint64_t v = out[i * n + j] + out[j * n + i];
            out[i * n + j] = out[j * n + i] = v;
        }
    }
}
