/*
 * wavefront_sweep — a Gauss-Seidel-like sweep with true dependences
 * (a[i][j] from a[i-1][j] and a[i][j-1]), run as a wavefront over blocks:
 * all blocks on one anti-diagonal in parallel.
 * Why: which thread touches a block changes from diagonal to diagonal, so the
 * same data is produced by one thread and consumed by another at irregular
 * times (dynamic, dependence-driven sharing).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long bs = 32, nb = 8, n = bs * nb + 1;
    long sweeps = c.scale * 1000 * c.threads / (3 * (n - 1) * (n - 1));
    if (sweeps < 1) sweeps = 1;
    long *a = corpus_alloc(n * n * sizeof *a);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) a[i] = (long)(corpus_rand(&s) % 1000);
    for (long t = 0; t < sweeps; t++)
        for (long diag = 0; diag < 2 * nb - 1; diag++) {
            long lo = diag < nb ? 0 : diag - nb + 1, hi = diag < nb ? diag : nb - 1;
#pragma omp parallel for schedule(dynamic, 1)
            for (long bi = lo; bi <= hi; bi++) {
                long bj = diag - bi;
                for (long i = 1 + bi * bs; i <= (bi + 1) * bs; i++)
                    for (long j = 1 + bj * bs; j <= (bj + 1) * bs; j++)
                        a[i * n + j] = (a[(i - 1) * n + j] + a[i * n + j - 1] + a[i * n + j]) % 1000003;
            }
        }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, (uint64_t)a[i]);
    corpus_done("wavefront_sweep", &c, h);
    free(a);
    return 0;
}
