/*
 * frame.c — stack bytes per level of a small recursive function, for
 * e2e.pass.frame.* (frame_test.cmake builds it with clang and with pes-clang
 * and compares the two).
 *
 *   frame            prints bytes_per_level=N: the distance between the
 *                    deepest frames of two recursions, 1000 levels apart
 *   frame --run N    recurses N levels and exits 0 (or overflows the stack)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long a[1024];
static uintptr_t deepest;

/* Called from the deepest level: notes where the stack got to. */
__attribute__((noinline, disable_sanitizer_instrumentation)) static void mark(void) {
    deepest = (uintptr_t)__builtin_frame_address(0);
}

/* A few values live across the recursive call, array accesses before and
 * after it (so records in both clones and a segment cut after the call). */
__attribute__((noinline)) long walk(long n, long x) {
    if (n == 0) {
        mark();
        return x;
    }
    long i = (n * 7) & 1023, j = (n * 13) & 1023;
    long v = a[i] + x;
    a[j] += v;
    long r = walk(n - 1, v ^ n);
    return r + v * a[i] + j;
}

int main(int argc, char **argv) {
    for (int k = 0; k < 1024; k++)
        a[k] = k;
    if (argc == 3 && strcmp(argv[1], "--run") == 0) {
        printf("%ld\n", walk(atol(argv[2]), 1));
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: frame [--run DEPTH]\n");
        return 2;
    }
    long sum = walk(1000, 1);
    uintptr_t at1000 = deepest;
    sum += walk(2000, 1);
    uintptr_t at2000 = deepest;
    if (at1000 <= at2000 || (at1000 - at2000) % 1000) {
        fprintf(stderr, "frame: uneven frames: %lu bytes for 1000 levels\n",
                (unsigned long)(at1000 - at2000));
        return 1;
    }
    printf("bytes_per_level=%lu (%ld)\n", (unsigned long)(at1000 - at2000) / 1000, sum);
    return 0;
}
