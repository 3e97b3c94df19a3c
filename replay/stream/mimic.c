/* mimic.c — PPT-Multicore Alg. 1 and Alg. 2, streamed; see mimic.h. */
#include "mimic.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_account.h"
#include "scheduler.h"

#define CURSOR_BUF     4096
#define DEFAULT_OFFSET (UINT64_C(1) << 48)

/* ------------------------------------------------------------ array source */

struct array_cursor {
    const struct pes_mimic_array *a;
    size_t pos;
};

static void *array_open(void *ctx, struct pes_error *err)
{
    struct array_cursor *c = calloc(1, sizeof *c);
    if (!c) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "mimic: out of memory");
        return NULL;
    }
    c->a = ctx;
    return c;
}

static long array_read(void *cursor, struct pes_record *out, size_t max, struct pes_error *err)
{
    (void)err;
    struct array_cursor *c = cursor;
    size_t n = c->a->n_records - c->pos;
    if (n > max)
        n = max;
    if (n)
        memcpy(out, c->a->records + c->pos, n * sizeof *out);
    c->pos += n;
    return (long)n;
}

static void array_close(void *cursor)
{
    free(cursor);
}

/* Binary search by id in an array sorted by id; both struct pes_site and
 * struct pes_bb start with their uint32_t id. */
_Static_assert(offsetof(struct pes_site, id) == 0 && offsetof(struct pes_bb, id) == 0,
               "find_by_id reads the id at the start of the element");
static const void *find_by_id(const void *base, size_t n, size_t size, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t mid_id = *(const uint32_t *)((const char *)base + mid * size);
        if (mid_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    const uint32_t *found = lo < n ? (const uint32_t *)((const char *)base + lo * size) : NULL;
    return found && *found == id ? found : NULL;
}

static const struct pes_site *array_site(void *ctx, uint32_t id)
{
    const struct pes_mimic_array *a = ctx;
    return find_by_id(a->sites, a->n_sites, sizeof *a->sites, id);
}

static const struct pes_bb *array_bb(void *ctx, uint32_t id)
{
    const struct pes_mimic_array *a = ctx;
    return find_by_id(a->bbs, a->n_bbs, sizeof *a->bbs, id);
}

void pes_mimic_array_source(const struct pes_mimic_array *a, struct pes_mimic_source *src)
{
    src->ctx = (void *)a;
    src->open = array_open;
    src->read = array_read;
    src->close = array_close;
    src->site = array_site;
    src->bb = array_bb;
}

/* ------------------------------------------------------------ records */

enum rec_kind { REC_SKIP, REC_ACCESS, REC_BB, REC_REGION_BEGIN, REC_REGION_END };

static int classify(const struct pes_mimic_source *src, const struct pes_record *r, uint64_t index,
                    const struct pes_site **site, const struct pes_bb **bb, struct pes_error *err)
{
    if (r->id == PES_ID_REGION_BEGIN)
        return REC_REGION_BEGIN;
    if (r->id == PES_ID_REGION_END)
        return REC_REGION_END;
    if (r->id >= PES_ID_CONTROL_FIRST)
        return REC_SKIP;
    /* a call site names CALL records only (pes/trace.h): never a record's id */
    if ((*site = src->site(src->ctx, r->id)) && (*site)->kind != PES_KIND_CALL)
        return REC_ACCESS;
    if ((*bb = src->bb(src->ctx, r->id)))
        return REC_BB;
    pes_error_set(err, PES_ERR_FORMAT, index,
                  "mimic: record %llu: id %u is neither an access site nor a basic block",
                  (unsigned long long)index, r->id);
    return -1;
}

static uint32_t access_size(const struct pes_site *s, const struct pes_record *r)
{
    return s->size ? s->size : r->extra;
}

/* ------------------------------------------------------------ counts */

struct pes_mimic_counts {
    uint32_t *keys; /* bb id + 1; 0 = empty */
    uint32_t *idx;
    uint64_t mask;
    uint64_t *count; /* by dense index */
    uint32_t n_bbs, cap;
    uint64_t accesses;
    uint64_t max_private; /* highest byte of a private access */
    int has_private;
    /* per outermost region instance r: (dense BB, count) pairs
     * reg_bb/reg_count[reg_start[r] .. reg_start[r+1]) */
    uint32_t *reg_bb;
    uint64_t *reg_count;
    size_t n_reg_entries, cap_reg_entries;
    size_t *reg_start; /* n_regions + 1 */
    size_t n_regions, cap_regions;
    /* count-pass scratch: counts inside the open region, BBs touched there */
    uint64_t *tmp;
    uint32_t *touched;
    uint32_t n_touched;
};

static uint64_t bb_hash(uint32_t id, uint64_t mask)
{
    return pes_hash_fib(id, 32) & mask;
}

static int64_t bb_find(const struct pes_mimic_counts *c, uint32_t id)
{
    uint64_t i = bb_hash(id, c->mask);
    while (c->keys[i]) {
        if (c->keys[i] == id + 1)
            return c->idx[i];
        i = (i + 1) & c->mask;
    }
    return -1;
}

static int bb_insert(struct pes_mimic_counts *c, uint32_t id)
{
    if ((uint64_t)(c->n_bbs + 1) * 2 > c->mask + 1) {
        uint64_t nmask = c->mask * 2 + 1;
        uint32_t *keys = calloc(nmask + 1, sizeof *keys), *idx = calloc(nmask + 1, sizeof *idx);
        if (!keys || !idx) {
            free(keys);
            free(idx);
            return -1;
        }
        for (uint64_t i = 0; i <= c->mask; i++) {
            if (!c->keys[i])
                continue;
            uint64_t j = bb_hash(c->keys[i] - 1, nmask);
            while (keys[j])
                j = (j + 1) & nmask;
            keys[j] = c->keys[i];
            idx[j] = c->idx[i];
        }
        free(c->keys);
        free(c->idx);
        c->keys = keys;
        c->idx = idx;
        c->mask = nmask;
    }
    if (c->n_bbs == c->cap) {
        uint32_t ncap = c->cap ? c->cap * 2 : 64;
        uint64_t *cnt = realloc(c->count, ncap * sizeof *cnt);
        if (!cnt)
            return -1;
        c->count = cnt;
        uint64_t *tmp = realloc(c->tmp, ncap * sizeof *tmp);
        if (!tmp)
            return -1;
        c->tmp = tmp;
        uint32_t *touched = realloc(c->touched, ncap * sizeof *touched);
        if (!touched)
            return -1;
        c->touched = touched;
        c->cap = ncap;
    }
    uint64_t i = bb_hash(id, c->mask);
    while (c->keys[i])
        i = (i + 1) & c->mask;
    c->keys[i] = id + 1;
    c->idx[i] = c->n_bbs;
    c->count[c->n_bbs] = 0;
    c->tmp[c->n_bbs] = 0;
    return (int)c->n_bbs++;
}

/* Closes the open outermost region: appends its (BB, count) pairs. */
static int region_flush(struct pes_mimic_counts *c)
{
    if (c->n_regions + 2 > c->cap_regions) {
        size_t nc = c->cap_regions ? c->cap_regions * 2 : 64;
        size_t *st = realloc(c->reg_start, nc * sizeof *st);
        if (!st)
            return -1;
        c->reg_start = st;
        c->cap_regions = nc;
    }
    if (c->n_reg_entries + c->n_touched > c->cap_reg_entries) {
        size_t nc = c->cap_reg_entries ? c->cap_reg_entries : 256;
        while (nc < c->n_reg_entries + c->n_touched)
            nc *= 2;
        uint32_t *bb = realloc(c->reg_bb, nc * sizeof *bb);
        if (!bb)
            return -1;
        c->reg_bb = bb;
        uint64_t *cnt = realloc(c->reg_count, nc * sizeof *cnt);
        if (!cnt)
            return -1;
        c->reg_count = cnt;
        c->cap_reg_entries = nc;
    }
    c->reg_start[c->n_regions] = c->n_reg_entries;
    for (uint32_t i = 0; i < c->n_touched; i++) {
        uint32_t d = c->touched[i];
        c->reg_bb[c->n_reg_entries] = d;
        c->reg_count[c->n_reg_entries++] = c->tmp[d];
        c->tmp[d] = 0;
    }
    c->n_touched = 0;
    c->n_regions++;
    c->reg_start[c->n_regions] = c->n_reg_entries;
    return 0;
}

void pes_mimic_counts_free(struct pes_mimic_counts *c)
{
    if (!c)
        return;
    free(c->keys);
    free(c->idx);
    free(c->count);
    free(c->tmp);
    free(c->touched);
    free(c->reg_bb);
    free(c->reg_count);
    free(c->reg_start);
    free(c);
}

struct pes_mimic_counts *pes_mimic_count(const struct pes_mimic_source *src, struct pes_error *err)
{
    struct pes_mimic_counts *c = calloc(1, sizeof *c);
    struct pes_record *buf = malloc(CURSOR_BUF * sizeof *buf);
    void *cur = NULL;
    if (!c || !buf)
        goto nomem;
    c->mask = 255;
    c->keys = calloc(c->mask + 1, sizeof *c->keys);
    c->idx = calloc(c->mask + 1, sizeof *c->idx);
    if (!c->keys || !c->idx)
        goto nomem;
    if (!(cur = src->open(src->ctx, err)))
        goto fail;
    uint64_t index = 0;
    uint32_t depth = 0;
    for (;;) {
        long n = src->read(cur, buf, CURSOR_BUF, err);
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        for (long i = 0; i < n; i++, index++) {
            const struct pes_site *site = NULL;
            const struct pes_bb *bb = NULL;
            int k = classify(src, &buf[i], index, &site, &bb, err);
            if (k < 0)
                goto fail;
            if (k == REC_BB) {
                int64_t d = bb_find(c, bb->id);
                if (d < 0 && (d = bb_insert(c, bb->id)) < 0)
                    goto nomem;
                c->count[d]++;
                if (depth > 0 && c->tmp[d]++ == 0)
                    c->touched[c->n_touched++] = (uint32_t)d;
            } else if (k == REC_REGION_BEGIN) {
                depth++;
            } else if (k == REC_REGION_END) {
                /* an unmatched end (cut trace start) is ignored */
                if (depth > 0 && --depth == 0 && region_flush(c) < 0)
                    goto nomem;
            } else if (k == REC_ACCESS) {
                c->accesses++;
                uint32_t size = access_size(site, &buf[i]);
                if (!(site->flags & PES_SITE_SHARED) && size) {
                    uint64_t end = buf[i].addr + (size - 1);
                    if (end < buf[i].addr)
                        end = UINT64_MAX;
                    if (!c->has_private || end > c->max_private)
                        c->max_private = end;
                    c->has_private = 1;
                }
            }
        }
    }
    if (depth > 0 && region_flush(c) < 0) /* trace cut inside a region */
        goto nomem;
    src->close(cur);
    free(buf);
    return c;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "mimic: out of memory");
fail:
    if (cur)
        src->close(cur);
    free(buf);
    pes_mimic_counts_free(c);
    return NULL;
}

uint64_t pes_mimic_bb_count(const struct pes_mimic_counts *c, uint32_t bb_id)
{
    int64_t d = bb_find(c, bb_id);
    return d < 0 ? 0 : c->count[d];
}

uint64_t pes_mimic_accesses(const struct pes_mimic_counts *c)
{
    return c->accesses;
}
size_t pes_mimic_regions(const struct pes_mimic_counts *c)
{
    return c->n_regions;
}

/* ------------------------------------------------------------ per-core cursors */

/* Core `core`'s private trace (Alg. 1), generated lazily from the sequential one. */
struct core_cursor {
    void *cur;
    struct pes_record *buf;
    size_t pos, n;
    uint64_t index;   /* records consumed */
    uint64_t *inst;   /* instances seen per dense BB */
    uint64_t *rcount; /* per_region: counts of the current region per BB */
    size_t region;    /* per_region: regions entered so far */
    uint32_t depth;
    uint32_t core;
    int active; /* the current BB instance runs on this core */
    int done;
};

struct run {
    const struct pes_mimic_source *src;
    const struct pes_mimic_counts *counts;
    const struct pes_mimic_options *opt;
    uint32_t n;
    uint64_t offset;
};

/* per_region: loads (begin) or clears (end) the counts of region c->region
 * and restarts its instance numbering, as each execution of an OpenMP
 * worksharing loop is scheduled on its own. */
static void cursor_region(const struct run *r, struct core_cursor *c, int begin)
{
    const struct pes_mimic_counts *k = r->counts;
    if (c->region >= k->n_regions)
        return;
    for (size_t i = k->reg_start[c->region]; i < k->reg_start[c->region + 1]; i++) {
        c->rcount[k->reg_bb[i]] = begin ? k->reg_count[i] : 0;
        c->inst[k->reg_bb[i]] = 0;
    }
    if (!begin)
        c->region++;
}

static int cursor_enter_bb(const struct run *r, struct core_cursor *c, const struct pes_bb *bb)
{
    if (r->opt->per_region && c->depth == 0)
        return c->core == 0; /* serial code between regions: the master */
    int64_t d = bb_find(r->counts, bb->id);
    uint64_t count = d < 0 ? 0 : r->opt->per_region ? c->rcount[d] : r->counts->count[d];
    uint64_t k = d < 0 ? 0 : c->inst[d]++;
    if (r->opt->serial_on_master && !(bb->flags & PES_BB_PARALLEL))
        return c->core == 0;
    if (count < r->n || k >= count)
        return 1; /* copied to every core (PPT-Multicore Alg. 1 line 7) */
    uint64_t owner = r->opt->chunk ? (k / r->opt->chunk) % r->n
                                   : (uint64_t)((unsigned __int128)k * r->n / count);
    return owner == c->core;
}

/* Next access of this core: 1 with the outputs filled, 0 at the end, -1 error. */
static int cursor_next(const struct run *r, struct core_cursor *c, uint64_t *addr,
                       uint64_t *recorded, uint32_t *size, uint32_t *site_id, struct pes_error *err)
{
    for (;;) {
        if (c->pos == c->n) {
            long got = r->src->read(c->cur, c->buf, CURSOR_BUF, err);
            if (got < 0)
                return -1;
            if (got == 0)
                return 0;
            c->pos = 0;
            c->n = (size_t)got;
        }
        const struct pes_record *rec = &c->buf[c->pos++];
        uint64_t index = c->index++;
        const struct pes_site *site = NULL;
        const struct pes_bb *bb = NULL;
        int k = classify(r->src, rec, index, &site, &bb, err);
        if (k < 0)
            return -1;
        if (k == REC_SKIP && r->opt->control) {
            r->opt->control(r->opt->emit_ctx, c->core, rec);
        } else if (k == REC_BB) {
            c->active = cursor_enter_bb(r, c, bb);
        } else if (k == REC_REGION_BEGIN && r->opt->per_region) {
            if (c->depth++ == 0)
                cursor_region(r, c, 1);
        } else if (k == REC_REGION_END && r->opt->per_region) {
            if (c->depth > 0 && --c->depth == 0) {
                cursor_region(r, c, 0);
                c->active = c->core == 0;
            }
        } else if (k == REC_ACCESS && c->active) {
            uint32_t sz = access_size(site, rec);
            if (sz == 0)
                continue;
            if (!site->size && r->opt->max_range && sz > r->opt->max_range)
                sz = r->opt->max_range;
            *size = sz;
            *site_id = site->id;
            *recorded = rec->addr;
            *addr = (site->flags & PES_SITE_SHARED) ? rec->addr
                                                    : rec->addr + (uint64_t)c->core * r->offset;
            return 1;
        }
    }
}

static int choose_offset(struct run *r, struct pes_error *err)
{
    const struct pes_mimic_counts *c = r->counts;
    uint32_t granule = r->opt->granule ? r->opt->granule : 64;
    uint64_t off = r->opt->offset;
    if (off == 0) {
        off = DEFAULT_OFFSET;
        if (c->has_private && c->max_private >= off) {
            if (c->max_private >= (UINT64_C(1) << 63)) {
                pes_error_set(err, PES_ERR_ARG, 0,
                              "mimic: private address 0x%llx leaves no room for core offsets",
                              (unsigned long long)c->max_private);
                return -1;
            }
            while (off <= c->max_private)
                off <<= 1;
        }
    } else if (off % granule) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "mimic: offset 0x%llx is not a multiple of the %u-byte granule",
                      (unsigned long long)off, granule);
        return -1;
    } else if (c->has_private && c->max_private >= off) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "mimic: private address 0x%llx is not below the core offset 0x%llx",
                      (unsigned long long)c->max_private, (unsigned long long)off);
        return -1;
    }
    unsigned __int128 top =
        (unsigned __int128)(r->n - 1) * off + (c->has_private ? c->max_private : 0);
    if (c->has_private && top > UINT64_MAX) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "mimic: %u cores x offset 0x%llx overflow 64-bit addresses", r->n,
                      (unsigned long long)off);
        return -1;
    }
    r->offset = off;
    return 0;
}

/* ------------------------------------------------------------ cores made ahead */

/* With opt->sched, a task per chunk of a core's private stream: RING chunks
 * per core, refilled as the interleaving empties them, each core's on an
 * urgent strand of its own (its cursor's state is the strand's). */
enum { AHEAD_CHUNK = 4096, AHEAD_RING = 3 };

struct ahead_access {
    uint64_t addr, recorded, offset;
    uint32_t size, site, object;
};

struct ahead_chunk {
    const struct run *r;
    struct core_cursor *c;
    struct ahead_access *e; /* [AHEAD_CHUNK] */
    size_t n;
    int rc; /* 1: more follow; 0: the core's end; -1: err (after the n) */
    struct pes_error err;
    atomic_int ready;
};

struct core_ahead {
    struct ahead_chunk ring[AHEAD_RING];
    uint64_t take; /* chunks taken so far: ring[take % AHEAD_RING] is next */
    size_t pos;    /* in it */
    struct pes_strand *strand;
};

/* The next access of cursor c with its object, 1 / 0 (end) / -1. */
static int located_next(const struct run *r, struct core_cursor *c, struct ahead_access *a,
                        struct pes_error *err)
{
    int got = cursor_next(r, c, &a->addr, &a->recorded, &a->size, &a->site, err);
    a->object = 0;
    a->offset = 0;
    if (got > 0 && r->opt->locate)
        r->opt->locate(r->opt->emit_ctx, c->core, a->recorded, a->site, &a->object, &a->offset);
    return got;
}

static void fill_chunk(void *arg)
{
    struct ahead_chunk *k = arg;
    k->n = 0;
    k->rc = 1;
    while (k->n < AHEAD_CHUNK) {
        int got = located_next(k->r, k->c, &k->e[k->n], &k->err);
        if (got <= 0) {
            k->rc = got;
            break;
        }
        k->n++;
    }
    atomic_store_explicit(&k->ready, 1, memory_order_release);
}

static int chunk_ready(void *ctx)
{
    return atomic_load_explicit(&((struct ahead_chunk *)ctx)->ready, memory_order_acquire);
}

static int chunk_submit(struct core_ahead *a, struct ahead_chunk *k, struct pes_error *err)
{
    atomic_store_explicit(&k->ready, 0, memory_order_relaxed);
    return pes_sched_submit(a->strand, fill_chunk, k, err);
}

/* The core's next access from its chunks: 1 / 0 (end) / -1. */
static int ahead_next(const struct run *r, struct core_ahead *a, struct ahead_access *out,
                      struct pes_error *err)
{
    for (;;) {
        struct ahead_chunk *k = &a->ring[a->take % AHEAD_RING];
        if (!chunk_ready(k))
            pes_sched_wait_urgent(r->opt->sched, chunk_ready, k);
        if (a->pos < k->n) {
            *out = k->e[a->pos++];
            return 1;
        }
        if (k->rc <= 0) {
            if (k->rc < 0)
                *err = k->err;
            return k->rc;
        }
        a->pos = 0; /* emptied: it makes the chunk after the ones in flight */
        a->take++;
        if (chunk_submit(a, k, err) < 0)
            return -1;
    }
}

/* Alg. 2 over the cores' private streams (Alg. 1): every access goes to
 * opt->emit and, when prof is not NULL, to core c's PRD and the CRD. */
static int interleave(const struct pes_mimic_source *src, const struct pes_mimic_counts *counts,
                      const struct pes_mimic_options *opt, struct pes_profiles *prof,
                      struct pes_error *err)
{
    if (!opt || opt->n_cores == 0)
        return pes_error_set(err, PES_ERR_ARG, 0, "mimic: need at least one core");
    struct run r = {.src = src, .counts = counts, .opt = opt, .n = opt->n_cores};
    if (choose_offset(&r, err) < 0)
        return -1;
    int rc = -1;
    struct core_cursor *cs = calloc(r.n, sizeof *cs);
    uint32_t *active = malloc(r.n * sizeof *active);
    struct core_ahead *ah = opt->sched ? calloc(r.n, sizeof *ah) : NULL;
    if (!cs || !active || (opt->sched && !ah))
        goto nomem;
    for (uint32_t i = 0; i < r.n; i++) {
        cs[i].core = i;
        cs[i].active = i == 0; /* before any BB entry: the master only */
        cs[i].buf = malloc(CURSOR_BUF * sizeof *cs[i].buf);
        cs[i].inst = calloc(counts->n_bbs ? counts->n_bbs : 1, sizeof *cs[i].inst);
        cs[i].rcount = calloc(counts->n_bbs ? counts->n_bbs : 1, sizeof *cs[i].rcount);
        if (!cs[i].buf || !cs[i].inst || !cs[i].rcount)
            goto nomem;
        if (!(cs[i].cur = src->open(src->ctx, err)))
            goto out;
        active[i] = i;
    }
    for (uint32_t i = 0; ah && i < r.n; i++) {
        if (!(ah[i].strand =
                  pes_strand_create(opt->sched, pes_cpu_stage("mimicked cores", PES_CPU_PARALLEL))))
            goto nomem;
        pes_strand_set_urgent(ah[i].strand);
        for (int j = 0; j < AHEAD_RING; j++) {
            ah[i].ring[j] = (struct ahead_chunk){.r = &r, .c = &cs[i]};
            if (!(ah[i].ring[j].e = malloc(AHEAD_CHUNK * sizeof *ah[i].ring[j].e)))
                goto nomem;
        }
        for (int j = 0; j < AHEAD_RING; j++)
            if (chunk_submit(&ah[i], &ah[i].ring[j], err) < 0)
                goto out;
    }
    uint32_t n_active = r.n, turn = 0;
    uint64_t rng = opt->seed;
    while (n_active > 0) {
        /* Alg. 2: the position in `active` of the core that goes next */
        uint32_t slot;
        if (opt->strategy == PES_INTERLEAVE_UNIFORM)
            slot = (uint32_t)(((unsigned __int128)pes_splitmix64(&rng) * n_active) >> 64);
        else
            slot = turn < n_active ? turn : 0;
        struct core_cursor *c = &cs[active[slot]];
        struct ahead_access a;
        int got = ah ? ahead_next(&r, &ah[active[slot]], &a, err) : located_next(&r, c, &a, err);
        if (got < 0)
            goto out;
        if (got == 0) {
            /* finished: drop it, keeping the round-robin order of the others */
            memmove(&active[slot], &active[slot + 1], (n_active - slot - 1) * sizeof *active);
            n_active--;
            turn = slot;
            continue;
        }
        turn = slot + 1;
        if (opt->emit_located)
            opt->emit_located(opt->emit_ctx, c->core, a.addr, a.size, a.site, a.recorded, a.object,
                              a.offset);
        else if (opt->emit)
            opt->emit(opt->emit_ctx, c->core, a.addr, a.size, a.site, a.recorded);
        if (prof && pes_profiles_push(prof, c->core, a.addr, a.size, a.site, NULL, NULL, err) < 0)
            goto out;
    }
    rc = 0;
    goto out;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "mimic: out of memory");
out:
    for (uint32_t i = 0; ah && i < r.n; i++) { /* the tasks still running use the cursors */
        pes_strand_destroy(ah[i].strand);
        for (int j = 0; j < AHEAD_RING; j++)
            free(ah[i].ring[j].e);
    }
    free(ah);
    for (uint32_t i = 0; cs && i < r.n; i++) {
        if (cs[i].cur)
            src->close(cs[i].cur);
        free(cs[i].buf);
        free(cs[i].inst);
        free(cs[i].rcount);
    }
    free(cs);
    free(active);
    return rc;
}

int pes_mimic_interleave(const struct pes_mimic_source *src, const struct pes_mimic_counts *counts,
                         const struct pes_mimic_options *opt, struct pes_error *err)
{
    return interleave(src, counts, opt, NULL, err);
}

struct pes_profiles *pes_mimic_run(const struct pes_mimic_source *src,
                                   const struct pes_mimic_counts *counts,
                                   const struct pes_mimic_options *opt, struct pes_error *err)
{
    if (!opt || opt->n_cores == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "mimic: need at least one core");
        return NULL;
    }
    struct pes_profiles_options po = {
        .granule = opt->granule,
        .n_streams = opt->n_cores,
        .n_groups = 1,
        .exact_limit = opt->exact_limit,
        .per_site = opt->per_site,
        .min_window = opt->min_window,
    };
    struct pes_profiles *prof = pes_profiles_create(&po, err);
    if (!prof)
        return NULL; /* err names the bad option */
    if (interleave(src, counts, opt, prof, err) < 0) {
        pes_profiles_destroy(prof);
        return NULL;
    }
    pes_profiles_finish(prof); /* the next core count's engines take the room */
    return prof;
}

int pes_mimic_run_many(const struct pes_mimic_source *src, const struct pes_mimic_counts *counts,
                       const struct pes_mimic_options *opt, const uint32_t *cores, size_t n,
                       struct pes_profiles **out, struct pes_error *err)
{
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    for (size_t i = 0; i < n; i++) {
        struct pes_mimic_options o = *opt;
        o.n_cores = cores[i];
        if (!(out[i] = pes_mimic_run(src, counts, &o, err))) {
            for (size_t j = 0; j < i; j++) {
                pes_profiles_destroy(out[j]);
                out[j] = NULL;
            }
            return -1;
        }
    }
    return 0;
}
