/*
 * call_heavy.c — the call-edge cost in full traces (docs/llvm-pass.md, "Call
 * edges"): a loop calls a noinline getter that makes one access, ROUNDS times
 * over 100000 elements, then fib(24) makes 75024 calls that make none. With
 * call edges each call adds a CALL and a RETURN record to the block and access
 * records. Built with pes-clang -O2, with and without -mllvm
 * -pes-no-call-edges, and timed under pes-collect --full in pairs (README).
 *
 *   call_heavy [ROUNDS]   default 20; prints a checksum
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINL __attribute__((noinline))

NOINL static long get(const long *a, long i)
{
    return a[i];
}

NOINL static long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    long n = 100000, rounds = argc > 1 ? atol(argv[1]) : 20;
    long *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = i;
    long s = 0;
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < n; i++)
            s += get(a, i);
    s += fib(24);
    printf("%ld\n", s);
    free(a);
    return 0;
}
