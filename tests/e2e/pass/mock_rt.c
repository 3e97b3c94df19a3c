/*
 * mock_rt.c — a tiny stand-in for libpes-rt used to test the LLVM pass alone.
 * It implements the rt_abi.h contract (__pes_tls, __pes_record_slow,
 * __pes_check_due, __pes_loop_flush, __pes_register_module), stores every record into one big static array in
 * chunks of MOCK_CHUNK records (so the slow path runs every MOCK_CHUNK
 * records), and at exit checks one invariant independent of any test:
 * each block's entries x its access sites = the records of its sites (call
 * sites name CALL records, never a record of their own).
 */
#include "mock_rt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread struct pes_rt_tls __pes_tls __attribute__((tls_model("initial-exec")));

#define MOCK_CAP (1u << 22)  /* records: 64 MiB of bss, touched only as used */
#define MOCK_CHUNK 61u       /* odd, small: the slow path runs often */
#define MOCK_NCHUNKS (MOCK_CAP / MOCK_CHUNK)
#define MOCK_MAX_MODULES 32

static struct pes_record recs[MOCK_NCHUNKS * MOCK_CHUNK];
static int owner[MOCK_NCHUNKS];          /* thread number of each chunk */
static atomic_uint next_chunk;
static atomic_int nthreads;
static atomic_ulong slow_calls;
static atomic_int nerrors;
static __thread int thread_no;
static __thread struct pes_record scratch[MOCK_CHUNK];

static struct pes_rt_module *mods[MOCK_MAX_MODULES];
static int nmods;
static uint32_t next_base = 1;          /* id 0 marks an empty slot */

static void error(const char *msg, unsigned long a, unsigned long b) {
    fprintf(stderr, "mock: %s (%lu, %lu)\n", msg, a, b);
    atomic_fetch_add(&nerrors, 1);
}

static void record_slow(uint64_t addr, uint64_t id_and_extra) {
    if (!thread_no)
        thread_no = atomic_fetch_add(&nthreads, 1) + 1;
    atomic_fetch_add(&slow_calls, 1);
    unsigned c = atomic_fetch_add(&next_chunk, 1);
    if (c >= MOCK_NCHUNKS) {             /* full: keep running, report at exit */
        if (c == MOCK_NCHUNKS)
            error("record array full", c, 0);
        __pes_tls.cursor = scratch;
        __pes_tls.limit = scratch + MOCK_CHUNK;
        return;
    }
    owner[c] = thread_no;
    struct pes_record *r = &recs[(size_t)c * MOCK_CHUNK];
    r->addr = addr;
    r->id = (uint32_t)id_and_extra;
    r->extra = (uint32_t)(id_and_extra >> 32);
    __pes_tls.cursor = r + 1;
    __pes_tls.limit = r + MOCK_CHUNK;
}

PES_RT_SLOW_CC void __pes_record_slow(uint64_t addr, uint64_t id_and_extra) {
    record_slow(addr, id_and_extra);
}

/* A loop chunk: its records, one by one, as the inline path stores them (so
 * the records of a run with descriptors are exactly those of a run without:
 * the tests compare the two). Called directly, not through the PLT: its
 * caller assumes preserve_most, which a lazy binding would break. */
static atomic_ulong loop_chunks, mixed_chunks;
static atomic_int descriptors_default = -1;
PES_RT_SLOW_CC void __pes_loop_flush(struct pes_rt_loop *d) {
    atomic_fetch_add(&loop_chunks, 1);
    if (d->irregular)
        atomic_fetch_add(&mixed_chunks, 1);
    if (!__pes_tls.descriptors)
        error("__pes_loop_flush while descriptors are off", d->m, 0);
    if (d->iterations == 0 || d->m == 0 || d->m > PES_RT_LOOP_MAX)
        error("bad loop chunk", d->iterations, d->m);
    uint32_t k = (uint32_t)__builtin_popcountll(d->irregular);
    if ((d->m < 64 && d->irregular >> d->m) || (k && d->iterations > PES_RT_LOOP_ADDRS / k))
        error("bad mixed loop chunk", d->iterations, d->irregular);
    const int64_t *step = pes_rt_loop_steps(d);
    const uint64_t *addr = pes_rt_loop_addrs(d);
    for (uint64_t i = 0; i < d->iterations; i++)
        for (uint32_t j = 0; j < d->m; j++) {
            uint64_t a = d->irregular >> j & 1 ? *addr++ : d->tmpl[j].addr + i * (uint64_t)step[j];
            struct pes_record *cur = __pes_tls.cursor;
            if (cur >= __pes_tls.limit) {
                record_slow(a, d->tmpl[j].id | (uint64_t)d->tmpl[j].extra << 32);
            } else {
                cur->addr = a;
                cur->id = d->tmpl[j].id;
                cur->extra = d->tmpl[j].extra;
                __pes_tls.cursor = cur + 1;
            }
        }
}

uint64_t mock_loop_chunks(void) {
    return atomic_load(&loop_chunks);
}

uint64_t mock_mixed_chunks(void) {
    return atomic_load(&mixed_chunks);
}

void mock_set_descriptors(int on) {
    __pes_tls.descriptors = (uint32_t)on;
}

/* The check clones lead here at a thread's first segment: from then on every
 * function runs its recording clone, so the records are the whole story. */
PES_RT_SLOW_CC int __pes_check_due(int64_t weight) {
    (void)weight;
    __pes_tls.recording = 1;
    __pes_tls.countdown = 0;
    /* descriptors on unless MOCK_DESCRIPTORS=0: every pass test runs the
     * descriptor copies of its loops against its own expectations */
    if (atomic_load(&descriptors_default) < 0) {
        const char *e = getenv("MOCK_DESCRIPTORS");
        atomic_store(&descriptors_default, !(e && e[0] == '0'));
    }
    __pes_tls.descriptors = (uint32_t)atomic_load(&descriptors_default);
    return 1;
}

void __pes_register_module(struct pes_rt_module *m) {
    if (m->abi_version != PES_RT_ABI_VERSION)
        error("bad abi_version", m->abi_version, PES_RT_ABI_VERSION);
    if (nmods == MOCK_MAX_MODULES) {
        error("too many modules", nmods, 0);
        return;
    }
    if (m->strtab_size == 0 || m->strtab[m->strtab_size - 1] != '\0')
        error("strtab not NUL-terminated", m->strtab_size, 0);
    uint64_t total = 0;
    for (uint32_t b = 0; b < m->n_bbs; b++) {
        total += m->bbs[b].n_sites;
        if (m->bbs[b].function >= m->strtab_size || m->bbs[b].label >= m->strtab_size)
            error("bb string offset out of range", b, 0);
        /* the block facts (ABI 6): filled for every block, and a vector
         * instruction counts at least once in ops (once per lane) */
        if (!(m->bbs[b].flags & PES_BB_MODEL_FACTS))
            error("bb without PES_BB_MODEL_FACTS", b, m->bbs[b].flags);
        for (int c = 0; c < PES_OP_COUNT; c++)
            if (m->bbs[b].instrs[c] > m->bbs[b].ops[c])
                error("bb instrs above ops", b, (uint64_t)c);
    }
    if (total != m->n_sites)
        error("sum of bb n_sites != n_sites", total, m->n_sites);
    for (uint32_t s = 0; s < m->n_sites; s++) {
        const struct pes_rt_site *st = &m->sites[s];
        if (st->bb >= m->n_bbs || st->file >= m->strtab_size || st->function >= m->strtab_size)
            error("site field out of range", s, st->bb);
        if (s > 0 && st->bb < m->sites[s - 1].bb)
            error("sites not grouped by block", s, st->bb);
        if (st->kind < PES_KIND_LOAD || st->kind > PES_KIND_CALL)
            error("bad site kind", s, st->kind);
    }
    *m->id_base = next_base;
    next_base += m->n_sites + m->n_bbs;
    mods[nmods++] = m;
}

const char *mock_str(const struct pes_rt_module *m, uint32_t off) {
    return off < m->strtab_size ? m->strtab + off : "?";
}

static int decode(const struct pes_record *r, int thread, struct mock_rec *out) {
    memset(out, 0, sizeof *out);
    out->thread = thread;
    out->addr = r->addr;
    out->id = r->id;
    out->extra = r->extra;
    if (r->id >= PES_ID_CONTROL_FIRST)
        return 1;
    for (int i = 0; i < nmods; i++) {
        const struct pes_rt_module *m = mods[i];
        uint32_t base = *m->id_base;
        if (r->id < base || r->id >= base + m->n_sites + m->n_bbs)
            continue;
        out->module = m;
        uint32_t local = r->id - base;
        if (local < m->n_sites) {
            out->site = &m->sites[local];
            out->bb_local = out->site->bb;
        } else {
            out->bb_local = local - m->n_sites;
            if (r->addr != 0)
                error("BB record with addr != 0", r->id, 0);
        }
        out->bb = &m->bbs[out->bb_local];
        return 1;
    }
    error("record id in no module", r->id, r->addr);
    return 0;
}

int mock_lookup(uint32_t id, struct mock_rec *out) {
    struct pes_record r = {0, id, 0};
    for (int i = 0; i < nmods; i++) {
        uint32_t base = *mods[i]->id_base;
        if (id >= base && id < base + mods[i]->n_sites + mods[i]->n_bbs)
            return decode(&r, 0, out);
    }
    memset(out, 0, sizeof *out);
    return id >= PES_ID_CONTROL_FIRST;
}

void mock_foreach(mock_visit_fn fn, void *ctx) {
    unsigned used = atomic_load(&next_chunk);
    if (used > MOCK_NCHUNKS)
        used = MOCK_NCHUNKS;
    int nt = atomic_load(&nthreads);
    for (int t = 1; t <= nt; t++)
        for (unsigned c = 0; c < used; c++) {
            if (owner[c] != t)
                continue;
            for (unsigned k = 0; k < MOCK_CHUNK; k++) {
                const struct pes_record *r = &recs[(size_t)c * MOCK_CHUNK + k];
                if (r->id == 0)
                    break;                /* rest of this thread's last chunk */
                struct mock_rec mr;
                if (!decode(r, t, &mr))
                    continue;
                if (mr.site && mr.site->kind == PES_KIND_CALL) /* names CALL records only */
                    error("record of a call site", r->id, r->addr);
                fn(&mr, ctx);
            }
        }
}

uint64_t mock_slow_calls(void) { return atomic_load(&slow_calls); }
int mock_threads(void) { return atomic_load(&nthreads); }
int mock_modules(void) { return nmods; }
const struct pes_rt_module *mock_module(int i) { return i >= 0 && i < nmods ? mods[i] : NULL; }
int mock_errors(void) { return atomic_load(&nerrors); }

/* ---- exit-time invariant: entries(bb) * n_sites(bb) == records of its sites */

struct inv {
    uint64_t *entries[MOCK_MAX_MODULES];
    uint64_t *site_recs[MOCK_MAX_MODULES];
    uint64_t records;
    int orphan;                           /* site record before any entry of its block */
};

static int mod_index(const struct pes_rt_module *m) {
    for (int i = 0; i < nmods; i++)
        if (mods[i] == m)
            return i;
    return -1;
}

static void inv_visit(const struct mock_rec *r, void *ctx) {
    struct inv *v = ctx;
    v->records++;
    if (!r->module)
        return;
    int i = mod_index(r->module);
    if (r->site) {
        if (r->site->kind == PES_KIND_GATHER || r->site->kind == PES_KIND_SCATTER)
            return;                       /* 0..lanes records per execution */
        if (v->entries[i][r->bb_local] == 0)
            v->orphan++;
        v->site_recs[i][r->bb_local]++;
    } else {
        v->entries[i][r->bb_local]++;
    }
}

__attribute__((destructor)) static void mock_check_at_exit(void) {
    if (atomic_load(&next_chunk) > MOCK_NCHUNKS) {
        fprintf(stderr, "mock: record array full: invariants not checked\n");
        fflush(stdout);
        _exit(99);
    }
    struct inv v;
    memset(&v, 0, sizeof v);
    for (int i = 0; i < nmods; i++) {
        v.entries[i] = calloc(mods[i]->n_bbs + 1, sizeof(uint64_t));
        v.site_recs[i] = calloc(mods[i]->n_bbs + 1, sizeof(uint64_t));
    }
    mock_foreach(inv_visit, &v);
    int bad = 0;
    for (int i = 0; i < nmods; i++) {
        const struct pes_rt_module *m = mods[i];
        for (uint32_t b = 0; b < m->n_bbs; b++) {
            uint64_t gathers = 0;
            for (uint32_t s = 0; s < m->n_sites; s++)
                if (m->sites[s].bb == b && (m->sites[s].kind == PES_KIND_GATHER ||
                                             m->sites[s].kind == PES_KIND_SCATTER ||
                                             m->sites[s].kind == PES_KIND_CALL))
                    gathers++;
            uint64_t want = v.entries[i][b] * (m->bbs[b].n_sites - gathers);
            if (want != v.site_recs[i][b]) {
                fprintf(stderr, "mock: %s:%s: %llu entries x %u sites != %llu site records\n",
                        mock_str(m, m->bbs[b].function), mock_str(m, m->bbs[b].label),
                        (unsigned long long)v.entries[i][b], m->bbs[b].n_sites,
                        (unsigned long long)v.site_recs[i][b]);
                bad++;
            }
        }
        free(v.entries[i]);
        free(v.site_recs[i]);
    }
    if (v.orphan) {
        fprintf(stderr, "mock: %d site records before their block was entered\n", v.orphan);
        bad++;
    }
    if (bad || mock_errors()) {
        fflush(stdout);
        _exit(99);
    }
    printf("mock: invariants ok (%llu records, %llu slow calls, %llu loop chunks, %d threads)\n",
           (unsigned long long)v.records, (unsigned long long)mock_slow_calls(),
           (unsigned long long)mock_loop_chunks(), mock_threads());
    fflush(stdout);
}
