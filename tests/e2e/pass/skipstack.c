/*
 * skipstack.c — built with -mllvm -pes-skip-stack at -O0: accesses to
 * non-escaping locals (the loop counter i, spilled parameters) are not
 * recorded; accesses to globals and to a local whose address escapes are.
 * Hand counts on line L_BODY per iteration: without the option 2 loads of i
 * + 1 store to g[i]; with it only the store. Line L_ESC: 1 store to esc
 * (escapes through publish()), N times.
 */
#include "pass_check.h"

#define N 100
enum { L_BODY = 23, L_ESC = 24 };

int g[N];
int *volatile published;

__attribute__((noinline)) static void publish(int *p) { published = p; }

__attribute__((noinline)) static void kernel(int n) {
    int esc = 0;
    publish(&esc);
    for (int i = 0; i < n; i++) {
        g[i] = i; _Static_assert(__LINE__ == L_BODY, "");
        esc = i; _Static_assert(__LINE__ == L_ESC, "");
    }
}

NOINSTR static int run_checks(void) {
    struct agg body = query(.function = "kernel", .line = L_BODY);
    CHECK_EQ("records on L_BODY (stores to g only)", body.n, N);
    CHECK_EQ("no loads of i recorded", query(.function = "kernel", .line = L_BODY,
                                             .kind = PES_KIND_LOAD).n, 0);
    CHECK("g covered once", covers_exactly_once((struct sel){.function = "kernel", .line = L_BODY},
                                                g, sizeof g));
    struct agg esc = query(.function = "kernel", .line = L_ESC, .kind = PES_KIND_STORE);
    CHECK_EQ("escaping local still recorded", esc.n, N);
    CHECK_EQ("escaping local address", esc.addr_min, (uintptr_t)published);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    kernel(N + argc - 1);
    return run_checks();
}
