/*
 * loops.c — loop descriptors (docs/llvm-pass.md "Loop descriptors") against
 * the per-access records of the same code. Each loop shape runs twice on this
 * thread, first with __pes_tls.descriptors clear (one record per access),
 * then set (affine loop bodies hand chunks to __pes_loop_flush, which the mock
 * expands record by record); a store to marks[] before each run separates the
 * runs in the record stream. Both runs must give the same records, access for
 * access, and the shapes that qualify must really have used descriptors
 * (at -O1 and above; at -O0 no loop qualifies), mixed ones (affine and
 * irregular addresses in one body) with chunks that carry irregular
 * addresses. The mock's buffers hold 61 records, so chunks are cut often, as
 * by a short time interval.
 */
#include "pass_check.h"

#include <setjmp.h>
#include <string.h>

#define N 3001
double a[N], b[N], c[N];
double A[48][48];
int idx[N];
long acc;
long count[64];
struct node {
    long v;
    struct node *next;
} nodes[N];
volatile int marks[64];
static jmp_buf jb;

__attribute__((noinline)) void mark(int k) {
    marks[k] = k;
}

__attribute__((noinline)) void simple(void) {
    for (int i = 0; i < N; i++)
        a[i] = b[i] + c[i];
}
__attribute__((noinline)) void triangular(void) {
    double s = 0;
    for (int i = 0; i < 48; i++)
        for (int j = 0; j < i; j++)
            s += A[i][j];
    acc += (long)s;
}
__attribute__((noinline)) void negative(void) {
    for (int i = N - 1; i >= 0; i--)
        c[i] = c[i] * 0.5 + 1;
}
__attribute__((noinline)) void strided_by(int st) {
    for (int i = 0; i * st < N; i++)
        b[i * st] += 1.0;
}
__attribute__((noinline)) void strided(void) {
    strided_by(3);
    strided_by(37);
    strided_by(N + 5); /* one iteration */
}
__attribute__((noinline)) void colmajor(void) {
    double s = 0;
    for (int j = 0; j < 48; j++)
        for (int i = 0; i < 48; i++)
            s += A[i][j];
    acc += (long)s;
}
__attribute__((noinline)) void invariant_store(void) {
    for (int i = 0; i < N; i++) { /* acc may alias nothing, marks[] is volatile */
        acc += (long)a[i];
        marks[63] = i;
    }
}
__attribute__((noinline)) void aliasing(double *p, int n) {
    for (int i = 0; i < n - 1; i++)
        p[i + 1] = p[i] * 0.5 + 1;
}
__attribute__((noinline)) void alias(void) {
    aliasing(c, N);
    aliasing(c + 7, 100);
}
__attribute__((noinline)) void copies(void) {
    for (int i = 0; i + 4 <= N; i += 4)
        memcpy(&c[i], &b[i], 32);
}
__attribute__((noinline)) void trips_of(int n) {
    for (int i = 0; i < n; i++)
        b[i] = i;
}
__attribute__((noinline)) void trips(void) {
    trips_of(0);
    trips_of(1);
    trips_of(2);
    trips_of(N);
}
__attribute__((noinline)) void stencil2d(void) {
    for (int i = 1; i < 47; i++)
        for (int j = 1; j < 47; j++)
            A[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
__attribute__((noinline)) void reduce_int(void) {
    long s = 0;
    for (int i = 0; i < N; i++)
        s += idx[i];
    acc += s;
}
/* mixed: affine and irregular addresses in one body */
__attribute__((noinline)) void gather(void) {
    for (int i = 0; i < N; i++)
        a[idx[i]] += 1.0;
}
__attribute__((noinline)) void sparse_dot(void) {
    double s = 0; /* x[col[k]] * v[k], rows of 1, 7 and 300 entries */
    for (int r = 0; r < 3; r++) {
        int lo = r == 0 ? 0 : r == 1 ? 1 : 8, hi = r == 0 ? 1 : r == 1 ? 8 : 308;
        for (int k = lo; k < hi; k++)
            s += b[k] * c[idx[k]];
    }
    acc += (long)s;
}
__attribute__((noinline)) void histogram(void) {
    for (int i = 0; i < N; i++)
        count[idx[i] & 63]++;
}
__attribute__((noinline)) void half_index(void) {
    for (int i = 0; i < N; i++)
        c[i] = b[i / 2] * 0.5;
}
__attribute__((noinline)) void chase(void) {
    long s = 0; /* a pointer chase inside an affine loop */
    struct node *p = &nodes[0];
    for (int i = 0; i < N - 1; i++) {
        s += p->v;
        p = p->next;
        idx[i] = (int)(s & 0xffff) % N;
    }
    acc += s;
}
/* not affine: conditional, early exit, a call in the body */
__attribute__((noinline)) void conditional(void) {
    for (int i = 0; i < N; i++) {
        if (i & 1)
            continue;
        c[i] = a[i] * 3;
    }
}
__attribute__((noinline)) int search(double key) {
    for (int i = 0; i < N; i++)
        if (b[i] == key)
            return i;
    return -1;
}
__attribute__((noinline)) void early(void) {
    acc += search(b[1234]);
}
__attribute__((noinline)) void jumper(int i) {
    if (i == 37)
        longjmp(jb, 1);
}
__attribute__((noinline)) void with_call(void) {
    for (int i = 0; i < 100; i++) {
        a[i] += 1;
        jumper(i);
    }
}
__attribute__((noinline)) void left_by_longjmp(void) {
    if (!setjmp(jb))
        with_call();
}

struct shape {
    const char *name;
    void (*run)(void);
    int affine; /* descriptors at -O1 and above: 1 expected, 0 never, -1 as the
                   optimiser shapes it (unrolled with a mid exit, a memcpy, a
                   subscript ScalarEvolution cannot prove affine, vectorised
                   into a gather) */
    int mixed;  /* descriptors with irregular addresses: 1 expected where
                   affine is 1 (where it is -1: whenever descriptors are
                   used), 0 never, -1 as the optimiser shapes it (a
                   vectorised i / 2 is affine) */
};
static const struct shape shapes[] = {
    {"simple", simple, 1, 0},           {"triangular", triangular, 1, 0},
    {"negative", negative, 1, 0},       {"strided", strided, -1, -1},
    {"colmajor", colmajor, 1, 0},       {"invariant_store", invariant_store, -1, 0},
    {"alias", alias, 1, 0},             {"copies", copies, -1, 0},
    {"trips", trips, 1, 0},             {"stencil2d", stencil2d, 1, 0},
    {"reduce_int", reduce_int, 1, 0},   {"gather", gather, -1, 1},
    {"sparse_dot", sparse_dot, 1, 1}, {"histogram", histogram, -1, 1},
    {"half_index", half_index, -1, -1}, {"chase", chase, 1, 1},
    {"conditional", conditional, 0, 0}, {"early", early, 0, 0},
    {"left_by_longjmp", left_by_longjmp, 0, 0},
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

/* The thread's records, cut at the stores to marks[k] (k = 2 * shape + run). */
struct split {
    const void *lo, *hi;
    int cur;                   /* segment being filled, -1 before the first mark */
    struct pes_record *seg[2 * NSHAPES + 1];
    size_t n[2 * NSHAPES + 1], cap[2 * NSHAPES + 1];
};

NOINSTR static void split_visit(const struct mock_rec *r, void *p) {
    struct split *s = p;
    if (r->thread != 1)
        return;
    if (r->site && r->site->kind == PES_KIND_STORE && r->addr >= (uintptr_t)s->lo &&
        r->addr < (uintptr_t)s->hi) {
        s->cur = (int)((r->addr - (uintptr_t)s->lo) / sizeof(int));
        return;
    }
    if (s->cur < 0 || s->cur > 2 * NSHAPES)
        return;
    int k = s->cur;
    if (s->n[k] == s->cap[k]) {
        s->cap[k] = s->cap[k] ? 2 * s->cap[k] : 1024;
        s->seg[k] = realloc(s->seg[k], s->cap[k] * sizeof *s->seg[k]);
    }
    s->seg[k][s->n[k]++] = (struct pes_record){r->addr, r->id, r->extra};
}

/* A record of mark() itself (its block, its store) ends the segment before
 * it: the visitor sees the block record first, so drop mark's records here. */
NOINSTR static size_t trim_mark(const struct pes_record *seg, size_t n) {
    while (n > 0) {
        struct mock_rec m;
        if (!mock_lookup(seg[n - 1].id, &m) || !m.module ||
            strcmp(mock_str(m.module, m.bb->function), "mark") != 0)
            break;
        n--;
    }
    return n;
}

NOINSTR static int run_checks(const uint64_t *chunks, const uint64_t *mixed) {
    static struct split s;
    s.lo = (const void *)marks;
    s.hi = (const void *)(marks + 2 * NSHAPES + 1);
    s.cur = -1;
    mock_foreach(split_visit, &s);
#ifdef __OPTIMIZE__
    const int optimised = 1;
#else
    const int optimised = 0;
#endif
    for (int k = 0; k < NSHAPES; k++) {
        size_t n0 = trim_mark(s.seg[2 * k], s.n[2 * k]);
        size_t n1 = trim_mark(s.seg[2 * k + 1], s.n[2 * k + 1]);
        char what[96];
        snprintf(what, sizeof what, "%s: records with descriptors", shapes[k].name);
        CHECK_EQ(what, n1, n0);
        size_t same = 0;
        while (same < n0 && same < n1 && s.seg[2 * k][same].addr == s.seg[2 * k + 1][same].addr &&
               s.seg[2 * k][same].id == s.seg[2 * k + 1][same].id &&
               s.seg[2 * k][same].extra == s.seg[2 * k + 1][same].extra)
            same++;
        snprintf(what, sizeof what, "%s: first record that differs", shapes[k].name);
        CHECK_EQ(what, same, n0);
        snprintf(what, sizeof what, "%s: some records", shapes[k].name);
        CHECK(what, n0 > 0);
        snprintf(what, sizeof what, "%s: used descriptors", shapes[k].name);
#ifdef LOOPS_EQUALITY_ONLY /* wide vectors reshape the loops (unrolled by 2, masked stores) */
        if (0)
#else
        if (shapes[k].affine >= 0 || !optimised)
#endif
            CHECK_EQ(what, chunks[k] > 0, optimised && shapes[k].affine);
        snprintf(what, sizeof what, "%s: used mixed descriptors", shapes[k].name);
#ifdef LOOPS_EQUALITY_ONLY
        (void)mixed;
#else
        if (shapes[k].mixed < 0 && optimised)
            continue;
        if (shapes[k].affine > 0 || !optimised || !shapes[k].mixed)
            CHECK_EQ(what, mixed[k] > 0, optimised && shapes[k].mixed && shapes[k].affine > 0);
        else /* as the optimiser shapes it: mixed whenever it used descriptors at all */
            CHECK_EQ(what, mixed[k] > 0, chunks[k] > 0);
#endif
    }
    return check_done();
}

/* Not instrumented: between two marks only the shape's own records. */
NOINSTR static int drive(void) {
    for (int i = 0; i < N; i++) {
        b[i] = i;
        c[i] = N - i;
        idx[i] = (int)((i * 7919L) % N);
    }
    for (int i = 0; i < N; i++) { /* nodes linked in a scattered order */
        nodes[i].v = i;
        nodes[i].next = &nodes[(i * 7919L + 1) % N];
    }
    for (int i = 0; i < 48; i++)
        for (int j = 0; j < 48; j++)
            A[i][j] = i + j;
    uint64_t chunks[NSHAPES], mixed[NSHAPES];
    for (int k = 0; k < NSHAPES; k++) {
        mark(2 * k); /* the thread's first record sets descriptors up: clear them after */
        mock_set_descriptors(0);
        shapes[k].run();
        mock_set_descriptors(1);
        uint64_t before = mock_loop_chunks(), before_mixed = mock_mixed_chunks();
        mark(2 * k + 1);
        shapes[k].run();
        chunks[k] = mock_loop_chunks() - before;
        mixed[k] = mock_mixed_chunks() - before_mixed;
    }
    mark(2 * NSHAPES);
    return run_checks(chunks, mixed);
}

int main(void) {
    return drive();
}
