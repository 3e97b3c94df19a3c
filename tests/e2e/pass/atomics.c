/*
 * atomics.c — atomicrmw and cmpxchg sites. Hand counts: L_ADD runs N
 * atomic_fetch_add (kind RMW, 8 bytes, ATOMIC); L_CAS runs N successful
 * compare-exchanges (kind CMPXCHG, 4 bytes); L_LOAD one atomic load per call.
 */
#include <stdatomic.h>
#include "pass_check.h"

#define N 500
enum { L_ADD = 17, L_CAS = 19, L_LOAD = 21 };

_Atomic long counter;
_Atomic int word;

__attribute__((noinline)) long bump(int n) {
    for (int i = 0; i < n; i++) {
        atomic_fetch_add(&counter, 1); _Static_assert(__LINE__ == L_ADD, "");
        int expected = i;
        atomic_compare_exchange_strong(&word, &expected, i + 1); _Static_assert(__LINE__ == L_CAS, "");
    }
    return atomic_load_explicit(&counter, memory_order_acquire); _Static_assert(__LINE__ == L_LOAD, "");
}

NOINSTR static int run_checks(long got) {
    CHECK_EQ("counter", got, N);
    struct agg rmw = query(.function = "bump", .line = L_ADD, .kind = PES_KIND_RMW);
    CHECK_EQ("RMW records", rmw.n, N);
    CHECK_EQ("RMW bytes", rmw.bytes, 8 * N);
    CHECK_EQ("RMW flags", rmw.flags_and & PES_SITE_ATOMIC, PES_SITE_ATOMIC);
    CHECK_EQ("RMW address", rmw.addr_min, (uintptr_t)&counter);
    struct agg cas = query(.function = "bump", .line = L_CAS, .kind = PES_KIND_CMPXCHG);
    CHECK_EQ("CMPXCHG records", cas.n, N);
    CHECK_EQ("CMPXCHG bytes", cas.bytes, 4 * N);
    CHECK_EQ("CMPXCHG address", cas.addr_min, (uintptr_t)&word);
    CHECK_EQ("CMPXCHG flags", cas.flags_and & PES_SITE_ATOMIC, PES_SITE_ATOMIC);
    struct agg ld = query(.function = "bump", .line = L_LOAD, .kind = PES_KIND_LOAD,
                          .need_flags = PES_SITE_ATOMIC);
    CHECK_EQ("atomic load records", ld.n, 1);
    CHECK_EQ("atomic load address", ld.addr_min, (uintptr_t)&counter);
    CHECK_EQ("final word", atomic_load(&word), N);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    return run_checks(bump(N + argc - 1));
}
