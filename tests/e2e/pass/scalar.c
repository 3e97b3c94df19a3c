/*
 * scalar.c — loads and stores of a scalar loop, per source line, at -O0 and -O2.
 * volatile keeps every access at -O2; the non-volatile ones (loop counter at
 * -O0) are only covered by the mock's block invariant.
 * Hand counts per iteration: line L_STORE: 1 volatile store va[i] (4 bytes);
 * line L_ACC: volatile loads va[i] and vs, volatile store vs (4 bytes each).
 */
#include "pass_check.h"

#define N 1000
enum { L_STORE = 18, L_ACC = 19 }; /* lines of the two statements in kernel() */

volatile int va[N];
volatile int vs;

__attribute__((noinline)) static void kernel(int n) {
    for (int i = 0; i < n; i++) {
        va[i] = i; _Static_assert(__LINE__ == L_STORE, "L_STORE");
        vs += va[i]; _Static_assert(__LINE__ == L_ACC, "L_ACC");
    }
}

NOINSTR static int run_checks(void) {
    const unsigned V = PES_SITE_VOLATILE;
    struct agg st = query(.function = "kernel", .line = L_STORE, .kind = PES_KIND_STORE,
                          .need_flags = V);
    CHECK_EQ("volatile stores on L_STORE", st.n, N);
    CHECK_EQ("bytes stored on L_STORE", st.bytes, 4 * N);
    CHECK_EQ("lowest address stored", st.addr_min, (uintptr_t)&va[0]);
    CHECK_EQ("end of highest store", st.addr_max_end, (uintptr_t)&va[N]);
    CHECK_EQ("site file is __FILE__", st.file_mismatch, 0);
    CHECK("va covered exactly once",
          covers_exactly_once((struct sel){.function = "kernel", .line = L_STORE,
                                           .kind = PES_KIND_STORE, .need_flags = V},
                              (const void *)va, sizeof va));
    struct agg ld = query(.function = "kernel", .line = L_ACC, .kind = PES_KIND_LOAD,
                          .need_flags = V);
    CHECK_EQ("volatile loads on L_ACC", ld.n, 2 * N);
    CHECK_EQ("volatile load bytes on L_ACC", ld.bytes, 8 * N);
    CHECK_EQ("load flags are only VOLATILE", ld.flags_or, V);
    struct agg acc = query(.function = "kernel", .line = L_ACC, .kind = PES_KIND_STORE,
                           .need_flags = V);
    CHECK_EQ("volatile stores on L_ACC", acc.n, N);
    CHECK_EQ("they all hit vs", acc.addr_max_end - acc.addr_min, 4);
    CHECK_EQ("vs address", acc.addr_min, (uintptr_t)&vs);
    CHECK_EQ("final vs", vs, (unsigned)(N * (N - 1) / 2));
    CHECK_EQ("no site in the NOINSTR checker", query(.function = "run_checks").n, 0);
    CHECK("slow path was exercised", mock_slow_calls() > 10);
    CHECK_EQ("one module registered", mock_modules(), 1);
    CHECK_EQ("mock errors", mock_errors(), 0);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    kernel(N + argc - 1);
    return run_checks();
}
