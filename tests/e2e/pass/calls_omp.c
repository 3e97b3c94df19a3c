/*
 * calls_omp.c — call edges with OpenMP at 2 threads (OMP_NUM_THREADS=2),
 * derived by hand: the master's __kmpc_fork_call (the `#pragma omp parallel`
 * line) is bracketed, so inside the region the master's accesses have the
 * path [par's call, the pragma]; the worker entered the outlined function
 * from libomp before it recorded anything: its path there is empty. The
 * outlined function's omp_get_thread_num call is bracketed (not a library
 * function TLI knows); on the worker it may run before its first segment
 * switched it to recording (-O2), so only its path at the access is checked.
 * The region's first statement is an access, so that each thread records
 * the outlined function's entry block whole (the mock's invariant).
 */
#include <omp.h>
#include "pass_check.h"

#define NOINL __attribute__((noinline))
enum { L_PRAGMA = 25, L_TID = 28, L_OUT = 29, L_MAIN_FIRST = 56, L_TO_PAR = 57, L_CHECKS = 58 };

static volatile int sink;
static volatile int out[2];
static int entered;

// clang-format off
NOINL static void par(void) {
#pragma omp parallel /* L_PRAGMA */
    {
        __atomic_fetch_add(&entered, 1, __ATOMIC_RELAXED); /* an access before the first call */
        int t = omp_get_thread_num(); _Static_assert(__LINE__ == L_TID, "");
        out[t & 1] = t + 1; _Static_assert(__LINE__ == L_OUT, "");
    }
}
// clang-format on

NOINSTR static int run_checks(void) {
    CHECK_EQ("threads", mock_threads(), 2);
    CHECK_EQ("both threads ran the region", out[0] + out[1], 3);
    struct path_ctx c;
    path_walk(&c, 1, &out[0]);
    char want[256];
    snprintf(want, sizeof want, "C%u C%u C%u R R R C%u ", L_TO_PAR, L_PRAGMA, L_TID, L_CHECKS);
    check_str("CALL/RETURN sequence of the master", c.edges, want);
    snprintf(want, sizeof want, "%u:%u,%u;", L_OUT, L_TO_PAR, L_PRAGMA);
    check_str("call path of the master's access in the region", c.paths, want);
    CHECK_EQ("master: RETURNs that close no frame", c.unmatched_returns, 0);
    CHECK_EQ("master: frames dropped", c.dropped, 0);
    path_walk(&c, 2, &out[1]);
    snprintf(want, sizeof want, "%u:;", L_OUT);
    check_str("call path of the worker's access in the region", c.paths, want);
    CHECK_EQ("worker: RETURNs that close no frame", c.unmatched_returns, 0);
    CHECK_EQ("CALLs naming no call site", c.not_call_site, 0);
    return check_done();
}

// clang-format off
int main(void) {
    sink = 1; _Static_assert(__LINE__ == L_MAIN_FIRST, "");
    par(); _Static_assert(__LINE__ == L_TO_PAR, "");
    return run_checks(); _Static_assert(__LINE__ == L_CHECKS, "");
}
// clang-format on
