/* The false-sharing program of issue 28: two OpenMP threads each add to
 * their own field of one struct, which share a cache line. At -O2 clang
 * merges the two field stores (and loads) of the branches into one whose
 * location has line 0: the report must still show where the invalidations
 * are. ROUNDS barrier-separated rounds: the line moves between the cores at
 * least once a round. usage: fs_fields_omp [iterations per round] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROUNDS = 20 };

struct counters {
    long a; /* thread 0's */
    long b; /* thread 1's: the same line as a */
} cnt;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        for (int r = 0; r < ROUNDS; r++) {
            for (long i = 0; i < n; i++) {
                if (t == 0)
                    cnt.a += i;
                else
                    cnt.b += i;
            }
#pragma omp barrier
        }
    }
    printf("%ld %ld\n", cnt.a, cnt.b);
    return 0;
}
