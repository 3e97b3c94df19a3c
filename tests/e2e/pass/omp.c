/*
 * omp.c — an OpenMP parallel loop run by 4 threads (OMP_NUM_THREADS=4).
 * Hand expectations: the loop stores a[i] (a is main's stack array, shared)
 * N times in total, each element once, N/4 per thread under the default
 * static schedule; b[] (a shared pointer variable) is loaded N times; both
 * sites are SHARED and their blocks PARALLEL; the thread's private stack
 * array priv[] is not SHARED. Each of the 4 threads records one REGION_BEGIN
 * and one REGION_END with the same region id, which names a block of the
 * outlined function. The sequential reference loop has no SHARED sites.
 */
#include <omp.h>
#include "pass_check.h"

#define N 1000
#define T 4
enum { L_STORE = 24, L_PRIV = 25, L_SEQ = 32 };

__attribute__((noinline)) static void parallel_part(int *a, int *b) {
#pragma omp parallel
    {
        volatile int priv[2];
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++) {
            a[i] = b[i] * 2; _Static_assert(__LINE__ == L_STORE, "");
            priv[i & 1] = i; _Static_assert(__LINE__ == L_PRIV, "");
        }
    }
}

__attribute__((noinline)) static void sequential_part(int *a, int *b) {
    for (int i = 0; i < N; i++) {
        a[i] = b[i] * 2; _Static_assert(__LINE__ == L_SEQ, "");
    }
}

struct region_ctx {
    int begins[64], ends[64];
    uint64_t begin_id[64];
    int mismatched, not_outlined;
};

NOINSTR static void region_visit(const struct mock_rec *r, void *p) {
    struct region_ctx *c = p;
    if (r->thread >= 64 || (r->id != PES_ID_REGION_BEGIN && r->id != PES_ID_REGION_END))
        return;
    if (r->id == PES_ID_REGION_BEGIN) {
        c->begins[r->thread]++;
        c->begin_id[r->thread] = r->addr;
        struct mock_rec blk;
        if (!mock_lookup((uint32_t)r->addr, &blk) || !blk.bb || blk.site ||
            !strstr(mock_str(blk.module, blk.bb->function), "omp_outlined"))
            c->not_outlined++;
    } else {
        c->ends[r->thread]++;
        if (r->addr != c->begin_id[r->thread])
            c->mismatched++;
    }
}

NOINSTR static int run_checks(int *a, int *b) {
    struct agg all = query(.line = L_STORE, .kind = PES_KIND_STORE, .lo = a, .hi = a + N);
    CHECK_EQ("parallel stores to a[]", all.n, N);
    CHECK("a[] covered exactly once",
          covers_exactly_once((struct sel){.line = L_STORE, .kind = PES_KIND_STORE}, a,
                              N * sizeof(int)));
    CHECK_EQ("a[] store sites all SHARED", all.flags_and & PES_SITE_SHARED, PES_SITE_SHARED);
    struct agg ld = query(.line = L_STORE, .kind = PES_KIND_LOAD, .lo = b, .hi = b + N);
    CHECK_EQ("parallel loads of b[]", ld.n, N);
    CHECK_EQ("b[] load sites all SHARED", ld.flags_and & PES_SITE_SHARED, PES_SITE_SHARED);
    struct agg pv = query(.line = L_PRIV, .kind = PES_KIND_STORE, .need_flags = PES_SITE_VOLATILE);
    CHECK_EQ("private stores", pv.n, N);
    CHECK_EQ("private stores not SHARED", pv.flags_or & PES_SITE_SHARED, 0);
    const struct pes_rt_bb *bb = NULL;
    bb_entries((struct sel){.line = L_STORE, .kind = PES_KIND_STORE, .lo = a, .hi = a + N}, &bb,
               NULL);
    CHECK_EQ("a[] store block PARALLEL", bb ? bb->flags & PES_BB_PARALLEL : 0, PES_BB_PARALLEL);

    struct agg seq = query(.line = L_SEQ, .kind = PES_KIND_STORE, .lo = a, .hi = a + N);
    /* -O2 vectorises the sequential loop: compare bytes, not records. */
    CHECK_EQ("sequential bytes = parallel total", seq.bytes, all.bytes);
    CHECK_EQ("sequential sites not SHARED", seq.flags_or & PES_SITE_SHARED, 0);
    bb_entries((struct sel){.line = L_SEQ, .kind = PES_KIND_STORE, .lo = a, .hi = a + N}, &bb, NULL);
    CHECK_EQ("sequential block not PARALLEL", bb ? bb->flags & PES_BB_PARALLEL : 99, 0);

    int with_stores = 0;
    for (int t = 1; t <= mock_threads(); t++) {
        struct agg th = query(.line = L_STORE, .kind = PES_KIND_STORE, .lo = a, .hi = a + N,
                              .thread = t);
        if (th.n) {
            with_stores++;
            CHECK_EQ("static schedule: N/T stores per thread", th.n, N / T);
        }
    }
    CHECK_EQ("threads storing to a[]", with_stores, T);

    struct region_ctx rc;
    memset(&rc, 0, sizeof rc);
    mock_foreach(region_visit, &rc);
    int in_region = 0;
    for (int t = 0; t < 64; t++) {
        if (!rc.begins[t] && !rc.ends[t])
            continue;
        in_region++;
        CHECK_EQ("REGION_BEGIN per thread", rc.begins[t], 1);
        CHECK_EQ("REGION_END per thread", rc.ends[t], 1);
        CHECK_EQ("same region id on all threads", rc.begin_id[t], rc.begin_id[1]);
    }
    CHECK_EQ("threads with region records", in_region, T);
    CHECK_EQ("END id = BEGIN id", rc.mismatched, 0);
    CHECK_EQ("region id names an outlined block", rc.not_outlined, 0);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    int a[N];
    int *b = malloc(N * sizeof *b);
    for (int i = 0; i < N; i++)
        b[i] = i + argc;
    parallel_part(a, b);
    for (int i = 0; i < N; i++)
        if (a[i] != 2 * (i + argc))
            return 2;
    sequential_part(a, b);
    int rc = run_checks(a, b);
    free(b);
    return rc;
}
