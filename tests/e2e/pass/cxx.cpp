// cxx.cpp — C++ through pes-clang++: demangled function names in the tables,
// templates, and exceptions (landing pads get block records after the pad).
// Hand counts: Box<long>::add runs N times with one store of 8 bytes to v
// (line L_ADD); the catch handler runs for the N/10 values divisible by 10.
#include <stdexcept>
#include "pass_check.h"

enum { L_ADD = 13, L_CATCH = 27 };
constexpr int N = 200;

template <typename T> struct Box {
    volatile T v = 0;
    __attribute__((noinline)) void add(T x) { v = v + x; static_assert(__LINE__ == L_ADD, ""); }
};

__attribute__((noinline)) static int check_value(int i) {
    if (i % 10 == 0)
        throw std::runtime_error("multiple of ten");
    return i;
}

static volatile int caught;
__attribute__((noinline)) static void run(Box<long> &box) {
    for (int i = 0; i < N; i++) {
        try {
            box.add(check_value(i));
        } catch (const std::exception &) { caught = caught + 1; static_assert(__LINE__ == L_CATCH, ""); }
    }
}

NOINSTR static int run_checks(Box<long> &box) {
    struct sel s;
    memset(&s, 0, sizeof s);
    s.function = "Box<long>::add(long)";
    s.line = L_ADD;
    s.kind = PES_KIND_STORE;
    s.need_flags = PES_SITE_VOLATILE;
    struct agg a = query_file(s, __FILE__);
    CHECK_EQ("stores in Box<long>::add(long) (demangled)", a.n, N - N / 10);
    CHECK_EQ("store address", a.addr_min, (uintptr_t)&box.v);
    memset(&s, 0, sizeof s);
    s.line = L_CATCH;
    s.kind = PES_KIND_STORE;
    s.need_flags = PES_SITE_VOLATILE;
    const struct pes_rt_bb *bb = nullptr;
    CHECK_EQ("catch handler stores", query_file(s, __FILE__).n, N / 10);
    CHECK_EQ("catch block entries", bb_entries(s, &bb, nullptr), N / 10);
    CHECK_EQ("caught", caught, N / 10);
    return check_done();
}

int main() {
    Box<long> box;
    run(box);
    return run_checks(box);
}
