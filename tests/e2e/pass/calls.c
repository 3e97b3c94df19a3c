/*
 * calls.c — call edges (pes/trace.h, "Call edges") of main's thread, derived
 * by hand from the program below, at -O0 and -O2 (every callee is noinline;
 * the recursion stores after its call, so it stays a recursion):
 * - depth(3) recurses 3 times from line L_RECURSE;
 * - helper() is called from three lines of main and once through a function
 *   pointer (volatile: never made direct);
 * - qsort (a library function, bracketed because its comparator is a function)
 *   calls the instrumented comparator from uninstrumented code: no edges in
 *   between, every comparator access is inside the qsort call;
 * - jump_test -> middle -> jumper -> longjmp back to jump_test's setjmp: the
 *   calls of middle, jumper and longjmp never return; jump_test's next call
 *   drops them by the stack-pointer rule (3 frames), its RETURN closes it.
 *   (No access follows a call that longjmps away in its block: the mock's
 *   invariant counts whole blocks.)
 * setjmp (returns_twice) and the library functions without a function
 * argument (none here but setjmp) have no edges. Every RETURN must close an
 * open frame with its own stack pointer.
 */
#include <setjmp.h>
#include <stdlib.h>
#include "pass_check.h"

#define NOINL __attribute__((noinline))
enum {
    L_HELPER = 37, L_DEPTH_IN = 42, L_RECURSE = 45, L_DEPTH_OUT = 46, L_CMP = 52, L_JUMPER = 60,
    L_LONGJMP = 61, L_MIDDLE = 65, L_TO_JUMPER = 66, L_TO_MIDDLE = 71, L_AFTER_JUMP = 74,
    L_JUMP_DONE = 75, L_MAIN_FIRST = 128, L_TO_DEPTH = 129, L_H1 = 130, L_H2 = 131, L_H3 = 132, L_FP = 133,
    L_QSORT = 135, L_TO_JT = 136, L_MAIN_LAST = 137, L_CHECKS = 138
};

static volatile int sink;     /* the watched accesses: one store per statement */
static volatile int cmp_sink; /* the comparator's */

// clang-format off
NOINL static int helper(int x) {
    sink = x; _Static_assert(__LINE__ == L_HELPER, "");
    return x + 1;
}

NOINL static int depth(int n) {
    sink = n; _Static_assert(__LINE__ == L_DEPTH_IN, "");
    if (n == 0)
        return 0;
    int r = depth(n - 1); _Static_assert(__LINE__ == L_RECURSE, "");
    sink = r; _Static_assert(__LINE__ == L_DEPTH_OUT, "");
    return r + 1;
}

static int cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    cmp_sink = x; _Static_assert(__LINE__ == L_CMP, "");
    return (x > y) - (x < y);
}

static int (*volatile fp)(int) = helper;
static jmp_buf env;

NOINL static void jumper(int n) {
    sink = n; _Static_assert(__LINE__ == L_JUMPER, "");
    longjmp(env, 1); _Static_assert(__LINE__ == L_LONGJMP, "");
}

NOINL static void middle(int n) {
    sink = n; _Static_assert(__LINE__ == L_MIDDLE, "");
    jumper(n + 1); _Static_assert(__LINE__ == L_TO_JUMPER, "");
}

NOINL static void jump_test(void) {
    if (setjmp(env) == 0) {
        middle(20); _Static_assert(__LINE__ == L_TO_MIDDLE, "");
        return;
    }
    helper(30); _Static_assert(__LINE__ == L_AFTER_JUMP, "");
    sink = 31; _Static_assert(__LINE__ == L_JUMP_DONE, "");
}
// clang-format on

NOINSTR static int run_checks(void) {
    struct path_ctx c;
    path_walk(&c, 1, &sink);
    static char want[4096];
    snprintf(want, sizeof want,
             "C%u C%u C%u C%u R R R R C%u R C%u R C%u R C%u R C%u R C%u C%u C%u C%u C%u R R C%u ",
             L_TO_DEPTH, L_RECURSE, L_RECURSE, L_RECURSE, L_H1, L_H2, L_H3, L_FP, L_QSORT, L_TO_JT,
             L_TO_MIDDLE, L_TO_JUMPER, L_LONGJMP, L_AFTER_JUMP, L_CHECKS);
    check_str("CALL/RETURN sequence of main's thread", c.edges, want);
    snprintf(want, sizeof want,
             "%u:;"
             "%u:%u;%u:%u,%u;%u:%u,%u,%u;%u:%u,%u,%u,%u;"
             "%u:%u,%u,%u;%u:%u,%u;%u:%u;"
             "%u:%u;%u:%u;%u:%u;%u:%u;"
             "%u:%u,%u;%u:%u,%u,%u;"
             "%u:%u,%u;%u:%u;"
             "%u:;",
             L_MAIN_FIRST, /* depth(3) .. depth(0), then back up */
             L_DEPTH_IN, L_TO_DEPTH, L_DEPTH_IN, L_TO_DEPTH, L_RECURSE, L_DEPTH_IN, L_TO_DEPTH,
             L_RECURSE, L_RECURSE, L_DEPTH_IN, L_TO_DEPTH, L_RECURSE, L_RECURSE, L_RECURSE,
             L_DEPTH_OUT, L_TO_DEPTH, L_RECURSE, L_RECURSE, L_DEPTH_OUT, L_TO_DEPTH, L_RECURSE,
             L_DEPTH_OUT, L_TO_DEPTH, /* helper from 3 lines and the pointer */
             L_HELPER, L_H1, L_HELPER, L_H2, L_HELPER, L_H3, L_HELPER, L_FP,
             /* middle, jumper, then after the longjmp */
             L_MIDDLE, L_TO_JT, L_TO_MIDDLE, L_JUMPER, L_TO_JT, L_TO_MIDDLE, L_TO_JUMPER,
             L_HELPER, L_TO_JT, L_AFTER_JUMP, L_JUMP_DONE, L_TO_JT, L_MAIN_LAST);
    check_str("call paths at the accesses to sink", c.paths, want);
    CHECK_EQ("frames dropped (the longjmp's three)", c.dropped, 3);
    CHECK_EQ("RETURNs that close no frame of their stack pointer", c.unmatched_returns, 0);
    CHECK_EQ("CALLs naming no call site", c.not_call_site, 0);
    CHECK_EQ("path strings overflowed", c.overflow, 0);

    /* the comparator: only inside qsort */
    path_walk(&c, 1, &cmp_sink);
    int k = 0;
    for (const char *s = c.paths; *s; s++)
        k += *s == ';';
    char tok[64];
    snprintf(tok, sizeof tok, "%u:%u;", L_CMP, L_QSORT);
    want[0] = '\0';
    for (int i = 0; i < k && strlen(want) + strlen(tok) < sizeof want; i++)
        strcat(want, tok);
    CHECK("the comparator ran", k >= 1);
    check_str("call paths in the comparator", c.paths, want);
    return check_done();
}

// clang-format off
int main(void) {
    sink = 1; _Static_assert(__LINE__ == L_MAIN_FIRST, "");
    depth(3); _Static_assert(__LINE__ == L_TO_DEPTH, "");
    helper(11); _Static_assert(__LINE__ == L_H1, "");
    helper(12); _Static_assert(__LINE__ == L_H2, "");
    helper(13); _Static_assert(__LINE__ == L_H3, "");
    fp(14); _Static_assert(__LINE__ == L_FP, "");
    int data[4] = {3, 1, 2, 0};
    qsort(data, 4, sizeof data[0], cmp); _Static_assert(__LINE__ == L_QSORT, "");
    jump_test(); _Static_assert(__LINE__ == L_TO_JT, "");
    sink = 2; _Static_assert(__LINE__ == L_MAIN_LAST, "");
    return run_checks(); _Static_assert(__LINE__ == L_CHECKS, "");
}
// clang-format on
