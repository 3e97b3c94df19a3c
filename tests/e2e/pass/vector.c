/*
 * vector.c — a loop the -O2 vectoriser turns into vector loads/stores (plus a
 * scalar epilogue: N is not a multiple of the vector width). Whatever the
 * code shape, the store records of line L_ADD must cover a[] exactly once
 * (N*4 bytes) and the load records must cover b[] and c[] exactly once each.
 */
#include "pass_check.h"

#define N 1003
enum { L_ADD = 16 };

float a[N], b[N], c[N];

__attribute__((noinline)) void add(int n) {
    for (int i = 0; i < n; i++) {
        a[i] = b[i] + c[i]; _Static_assert(__LINE__ == L_ADD, "L_ADD");
    }
}

NOINSTR static int run_checks(int vectorised) {
    struct sel st = {.function = "add", .line = L_ADD, .kind = PES_KIND_STORE};
    /* At -O0 the line also loads the counter i from the stack: select by address. */
    struct sel ldb = {.function = "add", .line = L_ADD, .kind = PES_KIND_LOAD, .lo = b, .hi = b + N};
    struct sel ldc = {.function = "add", .line = L_ADD, .kind = PES_KIND_LOAD, .lo = c, .hi = c + N};
    CHECK("stores cover a[] exactly once", covers_exactly_once(st, a, sizeof a));
    CHECK_EQ("bytes stored", query_file(st, __FILE__).bytes, N * sizeof(float));
    CHECK_EQ("bytes loaded from b", query_file(ldb, __FILE__).bytes, N * sizeof(float));
    CHECK_EQ("bytes loaded from c", query_file(ldc, __FILE__).bytes, N * sizeof(float));
    CHECK("loads cover b[] exactly once", covers_exactly_once(ldb, b, sizeof b));
    CHECK("loads cover c[] exactly once", covers_exactly_once(ldc, c, sizeof c));
    for (int i = 0; i < N; i++)
        if (a[i] != 3.0f * i)
            CHECK_EQ("a[i]", i, -1);
    struct agg v = query_file((struct sel){.function = "add", .line = L_ADD,
                                           .need_flags = PES_SITE_VECTOR}, __FILE__);
    if (vectorised) {
        CHECK("some vector records at -O2", v.n > 0);
        CHECK_EQ("vector records are 16 or 32 bytes", v.bytes % 16, 0);
    } else {
        CHECK_EQ("no vector records at -O0", v.n, 0);
        CHECK_EQ("scalar stores at -O0", query_file(st, __FILE__).n, N);
    }
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    for (int i = 0; i < N; i++) {
        b[i] = i;
        c[i] = 2.0f * i;
    }
    add(N + argc - 1);
#ifdef __OPTIMIZE__
    return run_checks(1);
#else
    return run_checks(0);
#endif
}
