/* count_prog — programs with hand-derived load and store counts for the
 * exact-count tests of the two-clone contract (rt_abi.h): the per-thread
 * totals of every collector mode must equal these counts, and the full trace
 * of the same program. Every counted access is volatile, so the compiler keeps
 * each one. `count_prog SCENARIO R` runs the scenario R times; the tests take
 * the difference of two R values, which removes main's own accesses.
 * Per repetition (loads / stores):
 *   straight   4 / 2     one block, no branch
 *   early      K+1 / 2   a search loop left by `break` at index K = 37
 *   switch     4 / 4     cases 0..3 in turn: 1/1, 2/1, 1/1 (falls through), 0/1
 *   longjmp    9 / 2     a store, 8 loads in the callee (7 + `armed`), longjmp past a
 *                        store, 1 / 1 after
 *   recursion  D / D     depth D = 50, one load and one store per level
 *   memcpy     1 / 1     memcpy of a run-time length: one source, one destination record
 *   calls      4 / 4     two iterations of: a load, a call (1 / 1), a store
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 37
#define D 50

volatile long g[256];
static jmp_buf env;
char src[4096], dst[4096]; /* global: the copies are not dead */

__attribute__((noinline)) static void straight(void)
{
    long a = g[1], b = g[2];
    g[3] = a + b + g[4];
    g[5] = a + g[6];
}

__attribute__((noinline)) static void early(void)
{
    g[K] = -1;
    for (long i = 0;; i++)
        if (g[i] == -1)
            break;
    g[K] = 0;
}

__attribute__((noinline)) static void sw(int c)
{
    switch (c) {
    case 0:
        g[0]++;
        break;
    case 1:
        g[1] = g[2] + g[3];
        break;
    case 2:
        (void)g[4];
        /* fall through */
    default:
        g[5] = 1;
    }
}

int armed; /* set in main: the compiler cannot tell that jumper never returns */

__attribute__((noinline)) static void jumper(void)
{
    for (int i = 0; i < 7; i++)
        (void)g[i];
    if (armed)
        longjmp(env, 1);
}

/* no setjmp here: this function gets a check clone, and its block is cut
 * after the call so the store after it is not counted in advance */
__attribute__((noinline)) static void hop(void)
{
    g[10] = 1;
    jumper();
    g[11] = 1; /* never runs */
}

__attribute__((noinline)) static void lj(void)
{
    if (!setjmp(env))
        hop();
    else
        g[12] = g[13];
}

__attribute__((noinline)) static long rec(long d)
{
    if (d == 0)
        return 0;
    g[d & 255] = g[(d + 1) & 255];
    return 1 + rec(d - 1);
}

__attribute__((noinline)) static void cpy(size_t n)
{
    memcpy(dst, src, n);
}

__attribute__((noinline)) static void leaf(void)
{
    g[20] = g[21];
}

__attribute__((noinline)) static void calls(void)
{
    for (int i = 0; i < 2; i++) {
        (void)g[22]; /* the call cuts this block: 1 load before, 1 store after */
        leaf();
        g[23] = 0;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: count_prog SCENARIO R\n");
        return 2;
    }
    const char *s = argv[1];
    armed = argc == 3;
    long r = atol(argv[2]);
    for (long i = 0; i < r; i++) {
        if (!strcmp(s, "straight"))
            straight();
        else if (!strcmp(s, "early"))
            early();
        else if (!strcmp(s, "switch"))
            for (int c = 0; c < 4; c++)
                sw(c);
        else if (!strcmp(s, "longjmp"))
            lj();
        else if (!strcmp(s, "recursion"))
            rec(D);
        else if (!strcmp(s, "memcpy"))
            cpy((size_t)(i % 4000) + 1);
        else if (!strcmp(s, "calls"))
            calls();
        else
            return 2;
    }
    printf("count_prog: %s %ld\n", s, r);
    return 0;
}
