/* loop_check — reads a trace of loop_prog (loop_pattern.h) as stored (loop
 * descriptor groups unexpanded: pes_trace_reader_set_raw), expands every
 * group itself by brute force (pes/trace.h, "Loop descriptors"), and checks
 * the result against the pattern, not against anything the runtime computed:
 *
 *   loop_check TRACE --interval I --buffer B --threads T --descriptors D
 *              [--groups | --no-groups] [--mixed] [--canon FILE] [--prefix]
 *
 * - each worker's records (control records aside) are the ones its loops
 *   stand for, in order;
 * - a time mark first, then exactly I records between marks, as the
 *   per-access path puts them (one record early before an ALLOC/ALLOC_SIZE
 *   pair it would split), and at most I after the last;
 * - groups are whole inside their block, each block's header count is the
 *   records it expands to, at most B;
 * - the footer's records, loads and stores are the expanded ones;
 * - the header's config says descriptors=D; --groups: at least one group per
 *   worker, --no-groups: none at all; --mixed: also at least one mixed group
 *   (irregular addresses) per worker.
 * --prefix: each worker's records are a prefix of its pattern followed by
 * the endless loop (loop_prog running), at least the whole pattern.
 * --canon writes each worker's expanded records and block sizes (time and
 * heap addresses left out) in worker order: a trace recorded with
 * descriptors and its twin recorded without must write the same file. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_pattern.h"
#include "pes/trace.h"

#define MAX_THREADS 80

struct stream {
    struct pes_record *r;
    size_t n, cap;
    uint64_t *blocks; /* expanded records of each ACCESS block */
    size_t n_blocks, cap_blocks;
    uint64_t groups;
    uint64_t irregular; /* records of groups stored as they are (irregular positions) */
};

static const char *trace_path;

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "loop_check: %s: ", trace_path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    *cap = need * 2;
    p = realloc(p, *cap * size);
    if (!p)
        fail("out of memory");
    return p;
}

static void push(struct stream *s, struct pes_record r)
{
    s->r = grow(s->r, &s->cap, s->n + 1, sizeof *s->r);
    s->r[s->n++] = r;
}

/* One stored ACCESS block: plain records copied, groups expanded the slow way. */
static uint64_t expand_block(struct stream *s, uint32_t thread, const struct pes_record *rec,
                             size_t n)
{
    uint64_t expanded = 0;
    for (size_t i = 0; i < n; i++) {
        if (rec[i].id == PES_ID_LOOP_STEP)
            fail("thread %u: a LOOP_STEP record outside a group", thread);
        if (rec[i].id != PES_ID_LOOP) {
            push(s, rec[i]);
            expanded++;
            continue;
        }
        uint64_t R = rec[i].addr;
        uint32_t m = rec[i].extra & 0xffff, phase = rec[i].extra >> 16;
        if (m < 1 || m > PES_LOOP_MAX_RECORDS || phase >= m || R < 1)
            fail("thread %u: bad group {%" PRIu64 ", m %u, phase %u}", thread, R, m, phase);
        if (i + 2 * (size_t)m >= n)
            fail("thread %u: a group straddles two blocks", thread);
        const struct pes_record *tmpl = &rec[i + 1], *step = &rec[i + 1 + m];
        for (uint32_t j = 0; j < m; j++)
            if (tmpl[j].id >= PES_ID_CONTROL_FIRST || step[j].id != PES_ID_LOOP_STEP ||
                (step[j].extra && (step[j].extra != PES_LOOP_STEP_IRREGULAR || step[j].addr)))
                fail("thread %u: group template/step %u malformed", thread, j);
        /* a mixed group's irregular records follow its steps, as they are */
        size_t a = i + 1 + 2 * (size_t)m;
        for (uint64_t q = 0; q < R; q++) {
            uint64_t u = phase + q, j = u % m, it = u / m;
            struct pes_record r = tmpl[j];
            if (step[j].extra) {
                if (a >= n || rec[a].id != tmpl[j].id || rec[a].extra != tmpl[j].extra)
                    fail("thread %u: group at %zu: irregular record %zu missing", thread, i, a);
                if (q < m && rec[a].addr != tmpl[j].addr) /* the position's first record */
                    fail("thread %u: group at %zu: irregular template %u is not its first record",
                         thread, i, (unsigned)j);
                r.addr = rec[a++].addr;
            } else {
                r.addr = tmpl[j].addr + it * step[j].addr;
            }
            push(s, r);
            if (step[j].extra)
                s->irregular++;
        }
        expanded += R;
        s->groups++;
        i = a - 1;
    }
    return expanded;
}

/* Worker k's records in order, one at a time. */
struct expect {
    uint32_t k;
    int step;
    uint64_t i;
    uint32_t j;
    struct lp_step s;
};

static int expect_next(struct expect *e, uint32_t base, struct pes_record *out, int endless)
{
    while (e->step < LP_STEPS + endless) {
        uint32_t m = e->s.m ? e->s.m : 1;
        uint64_t iterations = e->s.m ? e->s.iterations : 1;
        if (e->i < iterations) {
            const struct lp_tmpl *t = &e->s.tmpl[e->j];
            *out = (struct pes_record){lp_addr(e->k, t, e->i), base + t->local, t->extra};
            if (++e->j == m) {
                e->j = 0;
                e->i++;
            }
            return 1;
        }
        if (++e->step < LP_STEPS + endless)
            e->s = lp_step(e->k, e->step);
        e->i = 0;
        e->j = 0;
    }
    return 0;
}

/* Worker k's records in its pattern (the endless loop aside). */
static uint64_t pattern_accesses(uint32_t k)
{
    uint64_t n = 0;
    for (int i = 0; i < LP_STEPS; i++) {
        struct lp_step s = lp_step(k, i);
        n += s.m ? s.m * s.iterations : 1;
    }
    return n;
}

static int is_heap(uint32_t id)
{
    return id == PES_ID_ALLOC || id == PES_ID_ALLOC_SIZE || id == PES_ID_FREE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: loop_check TRACE --interval I --buffer B --threads T "
                        "--descriptors D [--groups|--no-groups] [--canon FILE]\n");
        return 2;
    }
    trace_path = argv[1];
    uint64_t interval = 0, buffer = 0;
    uint32_t workers = 0;
    int want_groups = -1, descriptors = -1, prefix = 0, want_mixed = 0;
    const char *canon = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--interval") && i + 1 < argc)
            interval = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--buffer") && i + 1 < argc)
            buffer = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            workers = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--descriptors") && i + 1 < argc)
            descriptors = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--canon") && i + 1 < argc)
            canon = argv[++i];
        else if (!strcmp(argv[i], "--groups"))
            want_groups = 1;
        else if (!strcmp(argv[i], "--no-groups"))
            want_groups = 0;
        else if (!strcmp(argv[i], "--mixed"))
            want_mixed = 1;
        else if (!strcmp(argv[i], "--prefix"))
            prefix = 1;
        else
            fail("bad argument '%s'", argv[i]);
    }
    if (!interval || !buffer || !workers || workers >= MAX_THREADS || descriptors < 0)
        fail("--interval, --buffer, --threads and --descriptors are required");

    struct pes_error err = {0};
    struct pes_trace_reader *r = pes_trace_reader_open(trace_path, &err);
    if (!r)
        fail("open: %s", err.message);
    pes_trace_reader_set_raw(r, 1);
    const struct pes_trace_info *info = pes_trace_reader_info(r);
    char want[64];
    snprintf(want, sizeof want, "descriptors=%d\n", descriptors);
    if (info->kind != PES_TRACE_FULL || !strstr(info->config, want))
        fail("header: kind %u, config lacks '%s': %s", info->kind, want, info->config);

    static struct stream streams[MAX_THREADS];
    uint32_t n_threads = 0, base = UINT32_MAX;
    struct pes_thread_totals totals[MAX_THREADS];
    size_t n_totals = 0;
    int footer = 0;
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type == PES_BLOCK_MODULE && !strcmp(b.module->name, "loop_prog.c")) {
            base = b.module->id_base;
        } else if (b.type == PES_BLOCK_THREAD) {
            if (++n_threads >= MAX_THREADS)
                fail("too many threads");
        } else if (b.type == PES_BLOCK_ACCESS) {
            if (b.thread >= n_threads)
                fail("records of thread %u before its THREAD block", b.thread);
            struct stream *s = &streams[b.thread];
            uint64_t x = expand_block(s, b.thread, b.records, b.n);
            if (x != b.count)
                fail("thread %u: a block of %" PRIu64 " records says %" PRIu64, b.thread, x,
                     (uint64_t)b.count);
            if (x > buffer)
                fail("thread %u: a block of %" PRIu64 " records, more than a buffer (%" PRIu64 ")",
                     b.thread, x, buffer);
            s->blocks = grow(s->blocks, &s->cap_blocks, s->n_blocks + 1, sizeof *s->blocks);
            s->blocks[s->n_blocks++] = x;
        } else if (b.type == PES_BLOCK_FOOTER) {
            footer = 1;
            n_totals = b.n < MAX_THREADS ? b.n : MAX_THREADS;
            memcpy(totals, b.totals, n_totals * sizeof *totals);
        }
    }
    if (rc < 0)
        fail("%s", err.message);
    if (base == UINT32_MAX || !footer)
        fail("no module loop_prog.c or no footer");

    int32_t thread_of[MAX_THREADS];
    for (uint32_t k = 0; k < MAX_THREADS; k++)
        thread_of[k] = -1;
    uint64_t groups_all = 0;
    for (uint32_t t = 0; t < n_threads; t++) {
        struct stream *s = &streams[t];
        groups_all += s->groups;
        /* the worker: the first access's address; threads without any (main) have heap records */
        size_t first = 0;
        while (first < s->n && s->r[first].id >= PES_ID_CONTROL_FIRST)
            first++;
        uint64_t k64 = first < s->n ? s->r[first].addr >> 40 : 0;
        if (first < s->n && (k64 < 1 || k64 > workers || thread_of[k64] >= 0))
            fail("thread %u: worker %" PRIu64 " unexpected or twice", t, k64);
        if (first < s->n)
            thread_of[k64] = (int32_t)t;
        struct expect e = {(uint32_t)k64, 0, 0, 0, lp_step((uint32_t)k64, 0)};
        uint64_t since = 0, loads = 0, stores = 0, accesses = 0, marks = 0;
        for (size_t j = 0; j < s->n; j++) {
            const struct pes_record *rec = &s->r[j];
            if (rec->id == PES_ID_TIME) {
                int early = since + 1 == interval && j + 2 < s->n &&
                            s->r[j + 1].id == PES_ID_ALLOC && s->r[j + 2].id == PES_ID_ALLOC_SIZE;
                if (j > 0 && since != interval && !early)
                    fail("thread %u: %" PRIu64 " records between time marks (record %zu), "
                         "expected %" PRIu64,
                         t, since, j, interval);
                since = 0;
                marks++;
                continue;
            }
            if (j == 0)
                fail("thread %u: the first record is not a time mark", t);
            if (rec->id == PES_ID_THREAD_END) {
                if (j + 1 != s->n)
                    fail("thread %u: THREAD_END is not last", t);
                continue;
            }
            since++;
            if (is_heap(rec->id))
                continue;
            if (first >= s->n || rec->id >= PES_ID_CONTROL_FIRST)
                fail("thread %u record %zu: unexpected id 0x%x", t, j, rec->id);
            struct pes_record x;
            if (!expect_next(&e, base, &x, prefix))
                fail("thread %u (worker %" PRIu64 "): more records than the pattern's", t, k64);
            if (rec->addr != x.addr || rec->id != x.id || rec->extra != x.extra)
                fail("thread %u (worker %" PRIu64 ") access %" PRIu64 ": {0x%" PRIx64
                     ", %u, %u}, expected {0x%" PRIx64 ", %u, %u}",
                     t, k64, accesses, rec->addr, rec->id, rec->extra, x.addr, x.id, x.extra);
            lp_counts(rec->id - base, &loads, &stores);
            accesses++;
        }
        struct pes_record x;
        if (first < s->n && (prefix ? accesses < pattern_accesses((uint32_t)k64)
                                    : expect_next(&e, base, &x, 0)))
            fail("thread %u (worker %" PRIu64 "): only %" PRIu64 " accesses", t, k64, accesses);
        if (since > interval)
            fail("thread %u: %" PRIu64 " records after the last time mark", t, since);
        if (t >= n_totals || totals[t].records != s->n || totals[t].loads != loads ||
            totals[t].stores != stores)
            fail("footer thread %u: records %" PRIu64 " loads %" PRIu64 " stores %" PRIu64
                 ", expected %zu %" PRIu64 " %" PRIu64,
                 t, t < n_totals ? totals[t].records : 0, t < n_totals ? totals[t].loads : 0,
                 t < n_totals ? totals[t].stores : 0, s->n, loads, stores);
        if (first < s->n && want_groups == 1 && s->groups == 0)
            fail("thread %u: no loop descriptor group", t);
        if (first < s->n && want_mixed && s->irregular == 0)
            fail("thread %u: no mixed loop descriptor group", t);
        (void)marks;
    }
    for (uint32_t k = 1; k <= workers; k++)
        if (thread_of[k] < 0)
            fail("worker %u missing", k);
    if (want_groups == 0 && groups_all)
        fail("%" PRIu64 " loop descriptor groups, expected none", groups_all);

    if (canon) {
        FILE *f = fopen(canon, "w");
        if (!f)
            fail("cannot write %s", canon);
        for (uint32_t k = 1; k <= workers; k++) {
            const struct stream *s = &streams[thread_of[k]];
            fprintf(f, "worker %u\n", k);
            for (size_t i = 0; i < s->n_blocks; i++)
                fprintf(f, "block %" PRIu64 "\n", s->blocks[i]);
            for (size_t j = 0; j < s->n; j++) {
                const struct pes_record *rec = &s->r[j];
                int no_addr = rec->id == PES_ID_TIME || rec->id == PES_ID_THREAD_END ||
                              is_heap(rec->id);
                fprintf(f, "%" PRIx64 " %x %x\n", no_addr ? 0 : rec->addr, rec->id, rec->extra);
            }
        }
        if (fclose(f))
            fail("cannot write %s", canon);
    }
    for (uint32_t t = 0; t < n_threads; t++) {
        free(streams[t].r);
        free(streams[t].blocks);
    }
    pes_trace_reader_close(r);
    printf("loop_check: ok: %u threads, %" PRIu64 " groups\n", n_threads, groups_all);
    return 0;
}
