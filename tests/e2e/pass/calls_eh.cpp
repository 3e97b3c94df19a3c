// calls_eh.cpp — call edges through a C++ exception, derived by hand: main
// calls outer twice; outer calls mid inside a try; mid holds a Guard (a
// destructor: mid's call of thrower is an invoke with a cleanup landing pad)
// and calls thrower, which throws on its second run. The throw is two calls
// (__cxa_allocate_exception returns, __cxa_throw does not; neither is a library
// function TLI knows, so both are bracketed). The unwinder enters mid's
// cleanup pad, whose RETURN drops __cxa_throw's frame (below mid's stack
// pointer) and closes thrower's; the destructor runs; outer's landing pad's
// RETURN closes mid's frame; the catch handler's __cxa_begin_catch and
// __cxa_end_catch calls are bracketed too.
#include "pass_check.h"

#define NOINL __attribute__((noinline))
enum {
    L_GUARD = 25, L_THROWER = 29, L_THROW = 30, L_MID_IN = 35, L_TO_THROWER = 36, L_MID_AFTER = 37,
    L_MID_END = 38, L_TO_MID = 42, L_CATCH_BEGIN = 43, L_CATCH = 44, L_CATCH_END = 45, L_MAIN_FIRST = 82, L_O1 = 83,
    L_O2 = 84, L_MAIN_LAST = 85, L_CHECKS = 86
};

static volatile int sink;

// clang-format off
struct Guard {
    int v;
    NOINL ~Guard() { sink = v; static_assert(__LINE__ == L_GUARD, ""); }
};

NOINL static void thrower(int n) {
    sink = n; static_assert(__LINE__ == L_THROWER, "");
    if (n > 0) { throw n; static_assert(__LINE__ == L_THROW, ""); }
}

NOINL static void mid(int n) {
    Guard g{n};
    sink = n; static_assert(__LINE__ == L_MID_IN, "");
    thrower(n); static_assert(__LINE__ == L_TO_THROWER, "");
    sink = n + 1; static_assert(__LINE__ == L_MID_AFTER, "");
} static_assert(__LINE__ == L_MID_END, "");

NOINL static int outer(int n) {
    try {
        mid(n); static_assert(__LINE__ == L_TO_MID, "");
    } catch (int e) { static_assert(__LINE__ == L_CATCH_BEGIN, "");
        sink = e + 100; static_assert(__LINE__ == L_CATCH, "");
    } static_assert(__LINE__ == L_CATCH_END, "");
    return n;
}
// clang-format on

NOINSTR static int run_checks() {
    path_ctx c;
    path_walk(&c, 1, &sink);
    static char want[4096];
    snprintf(want, sizeof want,
             "C%u C%u C%u R C%u R R R "                 /* outer(0): no throw */
             "C%u C%u C%u C%u R C%u R C%u R R C%u R C%u R R " /* outer(5) */
             "C%u ",
             L_O1, L_TO_MID, L_TO_THROWER, L_MID_END, /**/
             L_O2, L_TO_MID, L_TO_THROWER, L_THROW, L_THROW, L_MID_END, L_CATCH_BEGIN, L_CATCH_END,
             L_CHECKS);
    check_str("CALL/RETURN sequence of main's thread", c.edges, want);
    snprintf(want, sizeof want,
             "%u:;"
             "%u:%u,%u;%u:%u,%u,%u;%u:%u,%u;%u:%u,%u,%u;"
             "%u:%u,%u;%u:%u,%u,%u;%u:%u,%u,%u;%u:%u;"
             "%u:;",
             L_MAIN_FIRST, /* outer(0) */
             L_MID_IN, L_O1, L_TO_MID, L_THROWER, L_O1, L_TO_MID, L_TO_THROWER, L_MID_AFTER, L_O1,
             L_TO_MID, L_GUARD, L_O1, L_TO_MID, L_MID_END, /* outer(5) */
             L_MID_IN, L_O2, L_TO_MID, L_THROWER, L_O2, L_TO_MID, L_TO_THROWER, L_GUARD, L_O2,
             L_TO_MID, L_MID_END, L_CATCH, L_O2, L_MAIN_LAST);
    check_str("call paths at the accesses to sink", c.paths, want);
    CHECK_EQ("frames dropped (__cxa_throw's)", c.dropped, 1);
    CHECK_EQ("RETURNs that close no frame of their stack pointer", c.unmatched_returns, 0);
    CHECK_EQ("CALLs naming no call site", c.not_call_site, 0);
    CHECK_EQ("path strings overflowed", c.overflow, 0);
    return check_done();
}

// clang-format off
int main() {
    sink = 1; static_assert(__LINE__ == L_MAIN_FIRST, "");
    outer(0); static_assert(__LINE__ == L_O1, "");
    outer(5); static_assert(__LINE__ == L_O2, "");
    sink = 2; static_assert(__LINE__ == L_MAIN_LAST, "");
    return run_checks(); static_assert(__LINE__ == L_CHECKS, "");
}
// clang-format on
