/*
 * nbody_allpairs — all-pairs forces on N bodies (positions read by every
 * thread, each thread accumulates the forces of its own bodies), then a
 * position update; a few steps.
 * Why: every thread streams the whole shared position array per body (read
 * sharing, reuse distance N), and the update phase writes it, so each step
 * invalidates every reader's copy.
 */
#include "corpus.h"

struct body { double x, y, z, m; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    int nt = c.threads;
    long n = 256 * nt;
    long steps = c.scale * 1000 / (4 * 256 * n);
    if (steps < 1) steps = 1;
    struct body *b = corpus_alloc(n * sizeof *b);
    double *f = corpus_alloc(3 * n * sizeof *f);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++)
        b[i] = (struct body){(double)(corpus_rand(&s) % 1000), (double)(corpus_rand(&s) % 1000),
                             (double)(corpus_rand(&s) % 1000), 1.0 + (double)(corpus_rand(&s) % 4)};
    for (long t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) {
            double fx = 0, fy = 0, fz = 0;
            for (long j = 0; j < n; j++) {
                double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
                double d2 = dx * dx + dy * dy + dz * dz + 1.0;
                double w = b[j].m / (d2 * d2);
                fx += dx * w; fy += dy * w; fz += dz * w;
            }
            f[3 * i] = fx; f[3 * i + 1] = fy; f[3 * i + 2] = fz;
        }
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) {
            b[i].x += f[3 * i] * 100; b[i].y += f[3 * i + 1] * 100; b[i].z += f[3 * i + 2] * 100;
        }
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i++) h = corpus_mix(corpus_mix(h, corpus_fix(b[i].x)), corpus_fix(b[i].z));
    corpus_done("nbody_allpairs", &c, h);
    free(b); free(f);
    return 0;
}
