// count_cxx — C++ exceptions for the exact-count tests (see count_prog.c).
// Per repetition: 7 loads, 3 stores: a store before the call, the thrower's
// 5 + 1 (`armed`) loads and its write of 42 into the exception object, then
// the throw skips the store after the call; the handler copies one element.
#include <cstdio>
#include <cstdlib>

volatile long g[64];

int armed; // set in main: the compiler cannot tell that thrower never returns

__attribute__((noinline)) static void thrower(int k)
{
    for (int i = 0; i < k; i++)
        (void)g[i];
    if (armed)
        throw 42;
}

// no handler here: a plain call, and the block is cut after it so the store
// after it is not counted in advance
__attribute__((noinline)) static void mid()
{
    g[0] = 1;
    thrower(5);
    g[1] = 1; // never runs
}

__attribute__((noinline)) static void catcher()
{
    try {
        mid();
    } catch (...) {
        g[2] = g[3];
    }
}

int main(int argc, char **argv)
{
    long r = argc > 1 ? std::atol(argv[1]) : 1;
    armed = argc > 1;
    for (long i = 0; i < r; i++)
        catcher();
    std::printf("count_cxx: %ld\n", r);
    return 0;
}
