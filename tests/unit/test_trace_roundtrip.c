/*
 * test_trace_roundtrip.c — everything written through the pes_trace writer
 * comes back field by field: every block type, every record/event kind,
 * randomised contents (fixed seeds) and edge values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "trace_test_util.h"

/* ------------------------------------------------------------ test data */

#define N_MODULES 40
#define MAX_STR   64

struct gen_module {
    struct pes_module m;
    struct pes_site *sites;
    struct pes_bb *bbs;
    char *strings; /* backing store */
};

static char *gen_str(uint64_t *s, char **pool, const char *prefix)
{
    char *p = *pool;
    int len = (int)(tt_rand(s) % 20);
    int n = sprintf(p, "%s", prefix);
    for (int i = 0; i < len; i++)
        p[n++] = (char)('a' + tt_rand(s) % 26);
    p[n] = '\0';
    *pool += n + 1;
    return p;
}

static void gen_module(struct gen_module *g, uint64_t *s, uint32_t base, uint32_t ns, uint32_t nb)
{
    g->sites = calloc(ns + 1, sizeof *g->sites);
    g->bbs = calloc(nb + 1, sizeof *g->bbs);
    g->strings = malloc((size_t)(ns * 2 + nb * 2 + 1) * MAX_STR);
    char *pool = g->strings;
    g->m.id_base = base;
    g->m.n_sites = ns;
    g->m.n_bbs = nb;
    g->m.name = gen_str(s, &pool, "mod_");
    for (uint32_t i = 0; i < ns; i++) {
        struct pes_site *x = &g->sites[i];
        x->id = base + i;
        x->bb = base + ns + (nb ? (uint32_t)(tt_rand(s) % nb) : 0);
        x->kind = (uint8_t)(1 + tt_rand(s) % 9);
        x->flags = (uint8_t)(tt_rand(s) & 0x1f);
        x->column = (uint16_t)tt_rand(s);
        x->size = (uint32_t)(tt_rand(s) % 65);
        x->line = (uint32_t)tt_rand(s);
        x->file = gen_str(s, &pool, "f_");
        x->function = i % 5 == 0 ? "" : gen_str(s, &pool, "fn_");
    }
    for (uint32_t i = 0; i < nb; i++) {
        struct pes_bb *b = &g->bbs[i];
        b->id = base + ns + i;
        b->n_sites = (uint32_t)tt_rand(s);
        for (int k = 0; k < PES_OP_COUNT; k++)
            b->ops[k] = (uint32_t)tt_rand(s);
        b->flags = (uint32_t)(tt_rand(s) & (PES_BB_PARALLEL | PES_BB_MODEL_FACTS));
        b->forks = (uint32_t)tt_rand(s);
        b->barriers = (uint32_t)tt_rand(s);
        for (int k = 0; k < PES_OP_COUNT; k++) {
            b->instrs[k] = (uint32_t)tt_rand(s);
            b->chain[k] = (uint32_t)tt_rand(s);
        }
        b->function = gen_str(s, &pool, "fn_");
        b->label = gen_str(s, &pool, "bb");
    }
    g->m.sites = g->sites;
    g->m.bbs = g->bbs;
}

static void free_module(struct gen_module *g)
{
    free(g->sites);
    free(g->bbs);
    free(g->strings);
}

/* A random id of one of the modules (sites, or sites and basic blocks):
 * records and events may only name ids a MODULE block before them defines
 * (docs/trace-format.md §6). */
static uint32_t module_id(uint64_t *s, const struct gen_module *mods, int sites_only)
{
    for (;;) {
        const struct pes_module *m = &mods[tt_rand(s) % N_MODULES].m;
        uint32_t n = sites_only ? m->n_sites : m->n_sites + m->n_bbs;
        if (n)
            return m->id_base + (uint32_t)(tt_rand(s) % n);
    }
}

/* Records with the patterns the codec predicts (strided loops, BB entries,
 * time marks) mixed with random ids/addresses and edge values. */
static struct pes_record *gen_records(uint64_t *s, size_t n, const struct gen_module *mods)
{
    struct pes_record *r = calloc(n + 1, sizeof *r);
    static const uint64_t edge_addr[] = {
        0, 1, UINT64_MAX, UINT64_MAX - 1, 1ull << 63, 0x7fffffffffffffffull, 0x8000000000000001ull};
    /* the lowest and highest module ids (the last module ends right below
     * the control ids), control ids, unknown control ids */
    const struct pes_module *first = &mods[0].m, *last = &mods[N_MODULES - 1].m;
    uint32_t lowest = first->n_sites + first->n_bbs ? first->id_base : module_id(s, mods, 0);
    uint32_t highest =
        last->n_sites + last->n_bbs ? PES_ID_CONTROL_FIRST - 1 : module_id(s, mods, 0);
    uint32_t middle = module_id(s, mods, 0);
    const uint32_t edge_id[] = {lowest,
                                highest,
                                PES_ID_TIME,
                                PES_ID_REGION_BEGIN,
                                PES_ID_REGION_END,
                                PES_ID_THREAD_END,
                                UINT32_MAX,
                                0xFFFFFF80u,
                                middle};
    uint32_t bb = module_id(s, mods, 0), site_a = module_id(s, mods, 0);
    uint32_t site_b = module_id(s, mods, 0), strided = module_id(s, mods, 0);
    uint64_t a = 0x7ffd00001000ull, b = 0x10000000ull;
    /* one clock for every block of the file: a thread's time marks never
     * decrease (docs/trace-format.md §1), and readers check it */
    static uint64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        uint64_t mode = tt_rand(s) % 16;
        if (i % 97 == 0) {
            r[i].id = PES_ID_TIME;
            t += tt_rand(s) % 5000;
            r[i].addr = t;
        } else if (mode < 8) { /* loop body: bb, load a (stride 8), load b (stride 8192) */
            switch (i % 3) {
            case 0:
                r[i].id = bb;
                r[i].addr = 0;
                break;
            case 1:
                r[i].id = site_a;
                r[i].addr = a += 8;
                break;
            default:
                r[i].id = site_b;
                r[i].addr = b += 8192;
                break;
            }
        } else if (mode < 11) {
            r[i].id = module_id(s, mods, 0);
            r[i].addr = tt_rand(s);
            r[i].extra = (uint32_t)tt_rand(s);
        } else if (mode < 13) {
            r[i].id = edge_id[tt_rand(s) % (sizeof edge_id / sizeof edge_id[0])];
            r[i].addr = edge_addr[tt_rand(s) % (sizeof edge_addr / sizeof edge_addr[0])];
            r[i].extra = tt_rand(s) & 1 ? UINT32_MAX : 0;
            if (r[i].id == PES_ID_TIME || r[i].id == PES_ID_THREAD_END)
                r[i].addr = t; /* edge addresses go to the other ids */
        } else {               /* huge and negative strides on one id */
            r[i].id = strided;
            r[i].addr = (tt_rand(s) & 1) ? r[i ? i - 1 : 0].addr - (tt_rand(s) % 100000)
                                         : (uint64_t)(i * 0x100000000ull);
            r[i].extra = (uint32_t)(tt_rand(s) % 4096);
        }
    }
    return r;
}

static struct pes_event *gen_events(uint64_t *s, size_t n, const struct gen_module *mods)
{
    struct pes_event *e = calloc(n + 1, sizeof *e);
    uint64_t t = 0, ld = 0, st = 0;
    for (size_t i = 0; i < n; i++) {
        e[i].kind = (uint8_t)(1 + i % 9); /* every kind */
        e[i].flags = (uint8_t)(tt_rand(s) & 0x3f);
        e[i].size = (uint16_t)tt_rand(s);
        e[i].thread = (uint32_t)(tt_rand(s) % 8);
        e[i].other_thread = tt_rand(s) & 1 ? UINT32_MAX : (uint32_t)(tt_rand(s) % 8);
        e[i].site = tt_rand(s) & 1 ? UINT32_MAX : module_id(s, mods, 1);
        e[i].addr = tt_rand(s);
        e[i].ip = tt_rand(s);
        t += tt_rand(s) % 100000;
        ld += tt_rand(s) % 1000;
        st += tt_rand(s) % 1000;
        e[i].time = i % 50 == 7 ? t - 10 : t; /* occasionally non-monotonic */
        e[i].loads = i == 3 ? UINT64_MAX : ld;
        e[i].stores = st;
        e[i].distance = tt_rand(s);
        e[i].aux = tt_rand(s);
    }
    return e;
}

/* ------------------------------------------------------------ comparisons */

static void check_site(const struct pes_site *a, const struct pes_site *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->bb, b->bb);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->column, b->column);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->line, b->line);
    assert_string_equal(a->file, b->file);
    assert_string_equal(a->function, b->function);
}

static void check_bb(const struct pes_bb *a, const struct pes_bb *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->n_sites, b->n_sites);
    assert_memory_equal(a->ops, b->ops, sizeof a->ops);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->forks, b->forks);
    assert_int_equal(a->barriers, b->barriers);
    assert_memory_equal(a->instrs, b->instrs, sizeof a->instrs);
    assert_memory_equal(a->chain, b->chain, sizeof a->chain);
    assert_string_equal(a->function, b->function);
    assert_string_equal(a->label, b->label);
}

static void check_event(const struct pes_event *a, const struct pes_event *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->thread, b->thread);
    assert_int_equal(a->other_thread, b->other_thread);
    assert_int_equal(a->site, b->site);
    assert_int_equal(a->addr, b->addr);
    assert_int_equal(a->ip, b->ip);
    assert_int_equal(a->time, b->time);
    assert_int_equal(a->loads, b->loads);
    assert_int_equal(a->stores, b->stores);
    assert_int_equal(a->distance, b->distance);
    assert_int_equal(a->aux, b->aux);
}

/* ------------------------------------------------------------ the big trace */

/* What was written, in order, to compare against what is read. */
struct expected_block {
    uint32_t type, thread;
    size_t n;
    const void *data;
};

struct fixture {
    char *path;
    struct gen_module mods[N_MODULES];
    struct pes_thread threads[4];
    struct pes_record *recs[6];
    size_t nrecs[6];
    struct pes_event *ev;
    size_t nev;
    struct pes_mapping maps[3];
    struct pes_thread_totals totals[4];
    struct expected_block exp[128];
    size_t nexp;
};

static void expect(struct fixture *f, uint32_t type, uint32_t thread, size_t n, const void *d)
{
    f->exp[f->nexp++] = (struct expected_block){type, thread, n, d};
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    uint64_t s = 42;
    struct pes_error err;
    struct pes_trace_info info;
    tt_default_info(&info);
    f->path = tt_temp_path("rt");
    struct pes_trace_writer *w = pes_trace_writer_open(f->path, 0, &info, NULL, &err);
    assert_non_null(w);
    uint32_t base = 0;
    for (int i = 0; i < N_MODULES; i++) {
        uint32_t ns = (uint32_t)(tt_rand(&s) % 30), nb = (uint32_t)(tt_rand(&s) % 10);
        if (i == 3)
            ns = nb = 0;        /* empty module */
        if (i == N_MODULES - 1) /* last module ends right below the control ids */
            base = PES_ID_CONTROL_FIRST - ns - nb;
        gen_module(&f->mods[i], &s, base, ns, nb);
        assert_int_equal(pes_trace_writer_module(w, &f->mods[i].m, &err), 0);
        expect(f, PES_BLOCK_MODULE, 0, ns + nb, &f->mods[i]);
        base += ns + nb + (uint32_t)(tt_rand(&s) % 1000); /* gaps between modules */
    }
    for (int i = 0; i < 4; i++) {
        f->threads[i] =
            (struct pes_thread){(uint32_t)i, i ? 0 : UINT32_MAX, 1000 + (uint64_t)i,
                                i - 1,       i == 2 ? -1 : 0,    5000 + (uint64_t)i * 7};
        assert_int_equal(pes_trace_writer_thread(w, &f->threads[i], &err), 0);
        expect(f, PES_BLOCK_THREAD, (uint32_t)i, 1, &f->threads[i]);
    }
    size_t sizes[6] = {65536, 0, 1, 3, 70000, 12345};
    for (int i = 0; i < 6; i++) {
        f->nrecs[i] = sizes[i];
        f->recs[i] = gen_records(&s, sizes[i], f->mods);
        assert_int_equal(pes_trace_writer_records(w, (uint32_t)(i % 4), f->recs[i], sizes[i], &err),
                         0);
        expect(f, PES_BLOCK_ACCESS, (uint32_t)(i % 4), sizes[i], f->recs[i]);
    }
    f->nev = 1000;
    f->ev = gen_events(&s, f->nev, f->mods);
    assert_int_equal(pes_trace_writer_events(w, 2, f->ev, f->nev, &err), 0);
    expect(f, PES_BLOCK_EVENTS, 2, f->nev, f->ev);
    assert_int_equal(pes_trace_writer_events(w, 1, f->ev, 0, &err), 0);
    expect(f, PES_BLOCK_EVENTS, 1, 0, f->ev);
    f->maps[0] = (struct pes_mapping){0x400000, 0x401000, 0, "/usr/bin/app"};
    f->maps[1] = (struct pes_mapping){0x7f0000000000, 0x7f0000200000, 0x1000, "/lib/libc.so.6"};
    f->maps[2] = (struct pes_mapping){0, UINT64_MAX, UINT64_MAX, ""};
    assert_int_equal(pes_trace_writer_mappings(w, f->maps, 3, &err), 0);
    expect(f, PES_BLOCK_MAPS, 0, 3, f->maps);
    /* records = what the file holds per thread (readers check it, §6) */
    for (int i = 0; i < 4; i++)
        f->totals[i] = (struct pes_thread_totals){
            (uint32_t)i, 0, 20, 30, 40, (uint64_t)i, UINT64_MAX - (uint64_t)i};
    for (int i = 0; i < 6; i++)
        f->totals[i % 4].records += sizes[i];
    assert_int_equal(pes_trace_writer_close(w, f->totals, 4, 987654321, &err), 0);
    expect(f, PES_BLOCK_FOOTER, 0, 4, f->totals);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    unlink(f->path);
    free(f->path);
    for (int i = 0; i < N_MODULES; i++)
        free_module(&f->mods[i]);
    for (int i = 0; i < 6; i++)
        free(f->recs[i]);
    free(f->ev);
    free(f);
    return 0;
}

static void check_block(const struct fixture *f, const struct expected_block *e,
                        const struct pes_block *b)
{
    assert_int_equal(b->type, e->type);
    assert_int_equal(b->n, e->n);
    if (e->type == PES_BLOCK_ACCESS || e->type == PES_BLOCK_EVENTS || e->type == PES_BLOCK_THREAD)
        assert_int_equal(b->thread, e->thread);
    switch (e->type) {
    case PES_BLOCK_MODULE: {
        const struct gen_module *g = e->data;
        assert_non_null(b->module);
        assert_int_equal(b->module->id_base, g->m.id_base);
        assert_int_equal(b->module->n_sites, g->m.n_sites);
        assert_int_equal(b->module->n_bbs, g->m.n_bbs);
        assert_string_equal(b->module->name, g->m.name);
        for (uint32_t i = 0; i < g->m.n_sites; i++)
            check_site(&b->module->sites[i], &g->sites[i]);
        for (uint32_t i = 0; i < g->m.n_bbs; i++)
            check_bb(&b->module->bbs[i], &g->bbs[i]);
        break;
    }
    case PES_BLOCK_THREAD:
        assert_memory_equal(b->thread_info, e->data, sizeof(struct pes_thread));
        break;
    case PES_BLOCK_ACCESS: {
        const struct pes_record *r = e->data;
        for (size_t i = 0; i < e->n; i++) {
            assert_int_equal(b->records[i].id, r[i].id);
            assert_int_equal(b->records[i].addr, r[i].addr);
            assert_int_equal(b->records[i].extra, r[i].extra);
        }
        break;
    }
    case PES_BLOCK_EVENTS:
        for (size_t i = 0; i < e->n; i++)
            check_event(&b->events[i], &((const struct pes_event *)e->data)[i]);
        break;
    case PES_BLOCK_MAPS:
        for (size_t i = 0; i < e->n; i++) {
            const struct pes_mapping *m = &((const struct pes_mapping *)e->data)[i];
            assert_int_equal(b->mappings[i].start, m->start);
            assert_int_equal(b->mappings[i].end, m->end);
            assert_int_equal(b->mappings[i].file_offset, m->file_offset);
            assert_string_equal(b->mappings[i].path, m->path);
        }
        break;
    case PES_BLOCK_FOOTER:
        assert_int_equal(b->end_ticks, 987654321);
        for (size_t i = 0; i < e->n; i++) {
            const struct pes_thread_totals *t = &((const struct pes_thread_totals *)e->data)[i];
            assert_int_equal(b->totals[i].thread, t->thread);
            assert_int_equal(b->totals[i].records, t->records);
            assert_int_equal(b->totals[i].loads, t->loads);
            assert_int_equal(b->totals[i].stores, t->stores);
            assert_int_equal(b->totals[i].samples, t->samples);
            assert_int_equal(b->totals[i].lost, t->lost);
            assert_int_equal(b->totals[i].end_ticks, t->end_ticks);
        }
        break;
    }
    (void)f;
}

static void check_header(const struct pes_trace_info *got)
{
    struct pes_trace_info want;
    tt_default_info(&want);
    assert_int_equal(got->version, PES_TRACE_VERSION);
    assert_int_equal(got->kind, want.kind);
    assert_string_equal(got->command, want.command);
    assert_string_equal(got->hostname, want.hostname);
    assert_string_equal(got->cpu_model, want.cpu_model);
    assert_int_equal(got->n_cpus, want.n_cpus);
    assert_int_equal(got->n_sockets, want.n_sockets);
    assert_int_equal(got->n_cache_levels, want.n_cache_levels);
    for (uint32_t i = 0; i < want.n_cache_levels;
         i++) { /* field by field: the struct has padding */
        assert_int_equal(got->caches[i].level, want.caches[i].level);
        assert_int_equal(got->caches[i].type, want.caches[i].type);
        assert_int_equal(got->caches[i].ways, want.caches[i].ways);
        assert_int_equal(got->caches[i].line_size, want.caches[i].line_size);
        assert_int_equal(got->caches[i].size, want.caches[i].size);
        assert_int_equal(got->caches[i].shared_by, want.caches[i].shared_by);
    }
    assert_int_equal(got->ticks_per_second, want.ticks_per_second);
    assert_int_equal(got->start_ticks, want.start_ticks);
    assert_int_equal(got->pid, want.pid);
    assert_string_equal(got->config, want.config);
}

static void test_sequential(void **state)
{
    struct fixture *f = *state;
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(f->path, &err);
    assert_non_null(r);
    check_header(pes_trace_reader_info(r));
    struct pes_block b;
    size_t i = 0;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        assert_true(i < f->nexp);
        check_block(f, &f->exp[i], &b);
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, f->nexp);
    assert_false(pes_trace_reader_truncated(r, NULL));
    /* merged tables: every site and BB by global id, unknown ids give NULL */
    for (int m = 0; m < N_MODULES; m++) {
        const struct gen_module *g = &f->mods[m];
        for (uint32_t k = 0; k < g->m.n_sites; k++) {
            check_site(pes_trace_reader_site(r, g->sites[k].id), &g->sites[k]);
            assert_null(pes_trace_reader_bb(r, g->sites[k].id));
        }
        for (uint32_t k = 0; k < g->m.n_bbs; k++) {
            check_bb(pes_trace_reader_bb(r, g->bbs[k].id), &g->bbs[k]);
            assert_null(pes_trace_reader_site(r, g->bbs[k].id));
        }
        uint32_t end = g->m.id_base + g->m.n_sites + g->m.n_bbs;
        if (m + 1 < N_MODULES && end < f->mods[m + 1].m.id_base) { /* in a gap */
            assert_null(pes_trace_reader_site(r, end));
            assert_null(pes_trace_reader_bb(r, end));
        }
    }
    assert_null(pes_trace_reader_site(r, PES_ID_TIME));
    assert_null(pes_trace_reader_bb(r, UINT32_MAX));
    assert_int_equal(pes_trace_reader_thread_count(r), 4);
    for (uint32_t t = 0; t < 4; t++)
        assert_memory_equal(pes_trace_reader_thread(r, t), &f->threads[t], sizeof f->threads[t]);
    assert_null(pes_trace_reader_thread(r, 4));
    pes_trace_reader_close(r);
}

static void test_index_and_block_at(void **state)
{
    struct fixture *f = *state;
    struct pes_error err;
    size_t size;
    uint8_t *data = tt_read_file(f->path, &size);
    assert_non_null(data);
    struct pes_trace_reader *r = pes_trace_reader_open_memory(data, size, "mem", &err);
    assert_non_null(r);
    struct pes_block_ref *refs;
    size_t n;
    assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
    assert_int_equal(n, f->nexp + 1); /* + HEADER */
    assert_int_equal(refs[0].type, PES_BLOCK_HEADER);
    assert_int_equal(refs[0].offset, 0);
    /* offsets chain: each block = 24-byte index frame + frame_size */
    for (size_t i = 1; i < n; i++)
        assert_int_equal(refs[i].offset, refs[i - 1].offset + 24 + refs[i - 1].frame_size);
    assert_int_equal(refs[n - 1].offset + 24 + refs[n - 1].frame_size, size);
    /* decode in reverse order: blocks are independent */
    for (size_t i = n - 1; i >= 1; i--) {
        struct pes_block b;
        assert_int_equal(refs[i].type, f->exp[i - 1].type);
        assert_int_equal(refs[i].count, f->exp[i - 1].n);
        assert_int_equal(pes_trace_reader_block_at(r, &refs[i], &b, &err), 1);
        assert_int_equal(b.file_offset, refs[i].offset);
        check_block(f, &f->exp[i - 1], &b);
    }
    free(refs);
    pes_trace_reader_close(r);
    free(data);
}

static void test_load_tables(void **state)
{
    struct fixture *f = *state;
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(f->path, &err);
    assert_non_null(r);
    assert_null(pes_trace_reader_site(r, f->mods[0].sites[0].id));
    assert_int_equal(pes_trace_reader_load_tables(r, &err), 0);
    const struct gen_module *g = &f->mods[N_MODULES - 1];
    if (g->m.n_sites)
        check_site(pes_trace_reader_site(r, g->sites[0].id), &g->sites[0]);
    check_site(pes_trace_reader_site(r, f->mods[0].sites[0].id), &f->mods[0].sites[0]);
    assert_int_equal(pes_trace_reader_thread_count(r), 4);
    /* reading still starts at the first block after the header */
    struct pes_block b;
    size_t i = 0;
    while (pes_trace_reader_next(r, &b, &err) == 1)
        check_block(f, &f->exp[i++], &b);
    assert_int_equal(i, f->nexp);
    pes_trace_reader_close(r);
}

/* A batch larger than one block is split; the pieces concatenate to the input. */
static void test_large_batch_split(void **state)
{
    (void)state;
    uint64_t s = 7;
    size_t n = (1u << 20) + 1000;
    struct pes_record *r = calloc(n, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].id = (uint32_t)(i % 7);
        r[i].addr = i * 8 + (tt_rand(&s) % 3 == 0 ? tt_rand(&s) : 0);
    }
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("big");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tt_write_tables(w, 7, 1, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, r, n, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    struct pes_trace_reader *rd = pes_trace_reader_open(path, &err);
    assert_non_null(rd);
    struct pes_block b;
    size_t got = 0, blocks = 0;
    while (pes_trace_reader_next(rd, &b, &err) == 1) {
        if (b.type != PES_BLOCK_ACCESS)
            continue; /* the tables */
        for (size_t i = 0; i < b.n; i++) {
            assert_int_equal(b.records[i].addr, r[got + i].addr);
            assert_int_equal(b.records[i].id, r[got + i].id);
        }
        got += b.n;
        blocks++;
    }
    assert_int_equal(got, n);
    assert_int_equal(blocks, 2);
    /* written without a FOOTER: flagged, with a message */
    const char *msg = NULL;
    assert_true(pes_trace_reader_truncated(rd, &msg));
    assert_non_null(strstr(msg, "FOOTER"));
    pes_trace_reader_close(rd);
    unlink(path);
    free(path);
    free(r);
}

static void test_writer_refuses(void **state)
{
    (void)state;
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("ref");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    /* existing file without overwrite */
    assert_null(pes_trace_writer_open(path, 0, &info, NULL, &err));
    assert_int_equal(err.code, PES_ERR_IO);
    assert_non_null(strstr(err.message, path));
    /* a module whose range reaches into the control ids */
    struct pes_site site = {PES_ID_CONTROL_FIRST - 1, 0, 1, 0, 0, 4, 1, "a.c", "f"};
    struct pes_bb bb = {.id = PES_ID_CONTROL_FIRST,
                        .n_sites = 1,
                        .ops = {0},
                        .flags = 0,
                        .function = "f",
                        .label = "entry"};
    struct pes_module m = {PES_ID_CONTROL_FIRST - 1, 1, 1, "a.c", &site, &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    /* a site id outside its module */
    site.id = 5;
    struct pes_module m2 = {0, 1, 0, "a.c", &site, NULL};
    assert_int_equal(pes_trace_writer_module(w, &m2, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    unlink(path);
    free(path);
    /* a full device: the error surfaces at the latest when closing */
    if (access("/dev/full", W_OK) == 0) {
        w = pes_trace_writer_open("/dev/full", 1, &info, NULL, &err);
        int rc = -1;
        if (w) { /* the HEADER is still in the stdio buffer */
            struct pes_record rec[4096] = {{0}};
            for (int i = 0; i < 300; i++)
                if (pes_trace_writer_records(w, 0, rec, 4096, &err))
                    break; /* the buffer was flushed: failed now, close fails too */
            struct pes_thread_totals tot = {0};
            rc = pes_trace_writer_close(w, &tot, 1, 0, &err);
        }
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, PES_ERR_IO);
        assert_non_null(strstr(err.message, "/dev/full"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sequential, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_and_block_at, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_tables, setup, teardown),
        cmocka_unit_test(test_large_batch_split),
        cmocka_unit_test(test_writer_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
