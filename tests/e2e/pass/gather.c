/*
 * gather.c — code the -O2 vectoriser turns into llvm.masked.gather/scatter and
 * masked load/store (built with -march=skylake-avx512 or -march=skylake by
 * the driver, depending on the CPU). Hand expectations with n = 1024 (a
 * multiple of every VF x interleave, so no scalar epilogue runs):
 *   gather:   one GATHER record per lane, n in total, covering a[] once
 *             (idx is a permutation), lane index in extra;
 *   cgather:  only active lanes: i % 3 != 0, i.e. n - ceil(n/3) = 682 records;
 *   scatter:  n SCATTER records covering s[] once (AVX-512 only);
 *   masked:   masked store/load records cover d[] and a[] whole (MASKED flag).
 */
#include "pass_check.h"

#define N 1024
enum { L_GATHER = 22, L_CGATHER = 29, L_SCATTER = 36, L_MASKED = 42 };

int a[N], idx[N], c[N], d[N], s[N];

__attribute__((noinline)) int gather(int n) {
    int sum = 0;
    for (int i = 0; i < n; i++) {
        sum += a[idx[i]]; _Static_assert(__LINE__ == L_GATHER, "");
    }
    return sum;
}
__attribute__((noinline)) int cgather(int n) {
    int sum = 0;
    for (int i = 0; i < n; i++) {
        sum += c[i] ? a[idx[i]] : 0; _Static_assert(__LINE__ == L_CGATHER, "");
    }
    return sum;
}

__attribute__((noinline)) void scatter(int n) {
    for (int i = 0; i < n; i++) {
        s[idx[i]] = i; _Static_assert(__LINE__ == L_SCATTER, "");
    }
}

__attribute__((noinline)) void masked(int n) {
    for (int i = 0; i < n; i++) {
        if (c[i]) d[i] = a[i]; _Static_assert(__LINE__ == L_MASKED, "");
    }
}

struct lane_ctx { unsigned line; unsigned max_extra; unsigned seen_mask; };
NOINSTR static void lane_visit(const struct mock_rec *r, void *p) {
    struct lane_ctx *l = p;
    if (r->site && r->site->line == l->line && r->site->kind == PES_KIND_GATHER) {
        if (r->extra > l->max_extra)
            l->max_extra = r->extra;
        if (r->extra < 32)
            l->seen_mask |= 1u << r->extra;
    }
}

NOINSTR static int run_checks(void) {
    struct agg g = query(.function = "gather", .line = L_GATHER, .kind = PES_KIND_GATHER);
    CHECK_EQ("gather records (one per lane)", g.n, N);
    CHECK_EQ("gather bytes", g.bytes, 4 * N);
    CHECK("gathers cover a[] once",
          covers_exactly_once((struct sel){.function = "gather", .line = L_GATHER,
                                           .kind = PES_KIND_GATHER}, a, sizeof a));
    struct lane_ctx l = {L_GATHER, 0, 0};
    mock_foreach(lane_visit, &l);
    CHECK("lane index below 16", l.max_extra < 16);
    CHECK_EQ("every lane 0..max seen", l.seen_mask, (2u << l.max_extra) - 1);
    CHECK("vector width > 1", l.max_extra >= 1);

    struct agg cg = query(.function = "cgather", .line = L_CGATHER, .kind = PES_KIND_GATHER);
    CHECK_EQ("conditional gather: active lanes only", cg.n, N - (N + 2) / 3);

#ifdef __AVX512F__
    struct agg sc = query(.function = "scatter", .line = L_SCATTER, .kind = PES_KIND_SCATTER);
    CHECK_EQ("scatter records", sc.n, N);
    CHECK("scatters cover s[] once",
          covers_exactly_once((struct sel){.function = "scatter", .line = L_SCATTER,
                                           .kind = PES_KIND_SCATTER}, s, sizeof s));
#endif
    struct agg ms = query(.function = "masked", .line = L_MASKED, .kind = PES_KIND_STORE,
                          .need_flags = PES_SITE_MASKED);
    CHECK("masked store records", ms.n > 0);
    CHECK_EQ("masked store flags", ms.flags_and & (PES_SITE_MASKED | PES_SITE_VECTOR),
             PES_SITE_MASKED | PES_SITE_VECTOR);
    CHECK("masked stores cover d[] once (whole vectors)",
          covers_exactly_once((struct sel){.function = "masked", .line = L_MASKED,
                                           .kind = PES_KIND_STORE}, d, sizeof d));
    CHECK("masked loads cover a[] once (whole vectors)",
          covers_exactly_once((struct sel){.function = "masked", .line = L_MASKED,
                                           .kind = PES_KIND_LOAD, .lo = a, .hi = a + N},
                              a, sizeof a));
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        idx[i] = (i * 7) % N; /* 7 is odd: a permutation of 0..N-1 */
        c[i] = i % 3 != 0;
    }
    int n = N + argc - 1;
    if (gather(n) != N * (N - 1) / 2)
        return 2;
    cgather(n);
    scatter(n);
    masked(n);
    return run_checks();
}
