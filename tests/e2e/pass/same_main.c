/*
 * same_main.c — call edges add records, never change the others: the kernels
 * of same_work.c built with call edges and without (-mllvm -pes-no-call-edges)
 * run on the same data; the first one's records without its CALL and RETURN
 * records must be the second one's, record for record: the same site (line,
 * column, kind, size, flags) with the same address and extra, or the same
 * block (function, label). Stack addresses are compared as "on the stack":
 * the two builds' -O0 frames differ. Not instrumented itself.
 */
#include <stdlib.h>
#include "pass_check.h"

void edges_warm(volatile int *sink);
void plain_warm(volatile int *sink);
int edges_work(int *a, int n);
int plain_work(int *a, int n);

#define N 256

struct norm {
    int bb; /* block record */
    unsigned line, column, kind, size, flags, extra;
    uint64_t addr; /* 0: on the stack */
    const char *function, *label;
};

struct collect {
    struct norm *v;
    size_t n, cap, calls;
    uintptr_t stack_lo, stack_hi;
};

/* "edges_work" and "plain_work" are one function */
NOINSTR static const char *unprefixed(const char *f) {
    if (!strncmp(f, "edges_", 6))
        return f + 6;
    if (!strncmp(f, "plain_", 6))
        return f + 6;
    return f;
}

NOINSTR static void collect_visit(const struct mock_rec *r, void *p) {
    struct collect *c = p;
    if (r->thread != 1)
        return;
    if (r->id == PES_ID_CALL || r->id == PES_ID_RETURN) {
        c->calls++;
        return;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4096;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
    }
    struct norm *x = &c->v[c->n++];
    memset(x, 0, sizeof *x);
    if (!r->module) { /* another control record */
        x->kind = r->id;
        x->addr = r->addr;
        return;
    }
    if (r->site) {
        x->line = r->site->line;
        x->column = r->site->column;
        x->kind = r->site->kind;
        x->size = r->site->size;
        x->flags = r->site->flags;
        x->extra = r->extra;
        x->addr = r->addr >= c->stack_lo && r->addr < c->stack_hi ? 0 : r->addr;
        x->function = unprefixed(mock_str(r->module, r->site->function));
    } else {
        x->bb = 1;
        x->function = unprefixed(mock_str(r->module, r->bb->function));
        x->label = mock_str(r->module, r->bb->label);
    }
}

NOINSTR static int same(const struct norm *a, const struct norm *b) {
    return a->bb == b->bb && a->line == b->line && a->column == b->column && a->kind == b->kind &&
           a->size == b->size && a->flags == b->flags && a->extra == b->extra &&
           a->addr == b->addr && !strcmp(a->function ? a->function : "", b->function ? b->function : "") &&
           !strcmp(a->label ? a->label : "", b->label ? b->label : "");
}

NOINSTR static void fill(int *a) {
    for (int i = 0; i < N; i++)
        a[i] = N - i;
}

NOINSTR int main(void) {
    static volatile int sink;
    static int a[N];
    int here;
    edges_warm(&sink); /* from now on every function starts recording */
    struct collect c;
    memset(&c, 0, sizeof c);
    c.stack_hi = (uintptr_t)&here + 4096;
    c.stack_lo = (uintptr_t)&here - (8u << 20);
    mock_foreach(collect_visit, &c);
    size_t before = c.n;

    fill(a);
    int s1 = edges_work(a, N);
    c.n = 0;
    c.calls = 0;
    mock_foreach(collect_visit, &c);
    size_t mid = c.n, calls_with = c.calls;
    fill(a);
    int s2 = plain_work(a, N);
    c.n = 0;
    c.calls = 0;
    mock_foreach(collect_visit, &c);
    size_t end = c.n;

    CHECK_EQ("same result", s1, s2);
    size_t n1 = mid - before, n2 = end - mid;
    CHECK_EQ("records but CALL/RETURN, with edges vs without", n1, n2);
    CHECK("the edges build wrote CALL/RETURN records", calls_with > 0);
    CHECK_EQ("the build without edges wrote none", c.calls, calls_with);
    size_t first_diff = n1 < n2 ? n1 : n2;
    for (size_t i = 0; i < (n1 < n2 ? n1 : n2); i++)
        if (!same(&c.v[before + i], &c.v[mid + i])) {
            first_diff = i;
            break;
        }
    CHECK_EQ("first record that differs", first_diff, n1 < n2 ? n1 : n2);
    for (size_t i = first_diff; i < first_diff + 3 && i < (n1 < n2 ? n1 : n2); i++)
        for (int k = 0; k < 2; k++) {
            const struct norm *x = &c.v[(k ? mid : before) + i];
            printf("  %s record %zu: %s %s:%s line %u:%u kind %u size %u extra %u addr 0x%llx\n",
                   k ? "without" : "with", i, x->bb ? "bb" : "access", x->function ? x->function : "",
                   x->label ? x->label : "", x->line, x->column, x->kind, x->size, x->extra,
                   (unsigned long long)x->addr);
        }
    CHECK("enough records to mean something", n1 > 3 * N);
    printf("%zu records each, %zu CALL/RETURN records\n", n1, calls_with);
    free(c.v);
    return check_done();
}
