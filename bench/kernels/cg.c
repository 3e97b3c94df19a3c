/* Conjugate-gradient-like kernel (after NAS CG): a fixed number of
 * unpreconditioned CG iterations on a random sparse symmetric positive-definite
 * matrix in CSR, for a few random right-hand sides. It has NAS CG's three
 * access patterns: the mat-vec's indirect loads x[col[k]] scattered over the
 * whole vector, dot products as OpenMP reductions, and streaming vector
 * updates. */
#include "kernel_common.h"

/* Iterations are fixed rather than run to convergence, so that every run
 * does the same work; several solves so that CG, not the set-up, dominates. */
enum {
    OFFDIAG_PER_ROW = 12, /* on average; plus the diagonal: ~13 nonzeros per row */
    ITERS = 25,           /* per solve */
    SOLVES = 3,
};
static const uint64_t MATRIX_SEED = 0x6367; /* "cg" */

struct csr {
    long n, nnz;
    long *rowptr; /* n + 1 */
    int *col;     /* 32-bit column indices, as sparse codes usually store them */
    double *val;
};

/* One random off-diagonal pair (i, j), i != j, with a negative weight. */
static void random_pair(uint64_t *s, long n, long *i, long *j, double *w) {
    *i = kernel_rand_below(s, n);
    *j = kernel_rand_below(s, n - 1);
    if (*j >= *i) (*j)++;
    *w = -(0.1 + 0.9 * kernel_rand_unit(s));
}

/* n * OFFDIAG_PER_ROW / 2 random pairs, each stored at (i, j) and (j, i), so
 * the pattern and values are symmetric. The diagonal is one more than the sum
 * of the row's |off-diagonals|: strictly diagonally dominant with a positive
 * diagonal, hence positive definite, so CG converges. The pairs are drawn
 * twice from the same seed (count the row lengths, then fill) rather than
 * stored. */
static struct csr make_matrix(long n) {
    long pairs = n * OFFDIAG_PER_ROW / 2;
    struct csr a = {.n = n, .nnz = n + 2 * pairs};
    a.rowptr = kernel_alloc(sizeof(long) * (n + 1));
    a.col = kernel_alloc(sizeof(int) * a.nnz);
    a.val = kernel_alloc(sizeof(double) * a.nnz);
    long *next = kernel_alloc(sizeof(long) * n);
    memset(next, 0, sizeof(long) * n);
    uint64_t s = MATRIX_SEED;
    for (long p = 0; p < pairs; p++) {
        long i, j;
        double w;
        random_pair(&s, n, &i, &j, &w);
        next[i]++;
        next[j]++;
    }
    a.rowptr[0] = 0;
    for (long i = 0; i < n; i++) {
        a.rowptr[i + 1] = a.rowptr[i] + 1 + next[i];
        next[i] = a.rowptr[i] + 1; /* the diagonal goes first in its row */
        a.col[a.rowptr[i]] = (int)i;
        a.val[a.rowptr[i]] = 1.0;
    }
    s = MATRIX_SEED;
    for (long p = 0; p < pairs; p++) {
        long i, j;
        double w;
        random_pair(&s, n, &i, &j, &w);
        a.col[next[i]] = (int)j;
        a.val[next[i]++] = w;
        a.col[next[j]] = (int)i;
        a.val[next[j]++] = w;
        a.val[a.rowptr[i]] -= w;
        a.val[a.rowptr[j]] -= w;
    }
    free(next);
    return a;
}

static void spmv(const struct csr *a, const double *restrict x, double *restrict y) {
    const long *rowptr = a->rowptr;
    const int *col = a->col;
    const double *val = a->val;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < a->n; i++) {
        double s = 0.0;
        for (long k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}

static double dot(long n, const double *restrict x, const double *restrict y) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (long i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* y += alpha * x */
static void axpy(long n, double alpha, const double *restrict x, double *restrict y) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) y[i] += alpha * x[i];
}

/* p = r + beta * p */
static void xpby(long n, const double *restrict r, double beta, double *restrict p) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
}

/* Solves A x = b from x = 0 for ITERS iterations; returns |b - A x|^2 as CG's
 * recurrence tracks it. */
static double cg(const struct csr *a, const double *b, double *restrict x, double *restrict r,
                 double *restrict p, double *restrict q) {
    long n = a->n;
    memset(x, 0, sizeof(double) * n);
    memcpy(r, b, sizeof(double) * n);
    memcpy(p, b, sizeof(double) * n);
    double rho = dot(n, r, r);
    for (int it = 0; it < ITERS; it++) {
        spmv(a, p, q);
        double alpha = rho / dot(n, p, q);
        axpy(n, alpha, p, x);
        axpy(n, -alpha, q, r);
        double rho_next = dot(n, r, r);
        xpby(n, r, rho_next / rho, p);
        rho = rho_next;
    }
    return rho;
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 3000, 80000);
    if (n < 2 || n > 0x7fffffffL) {
        fprintf(stderr, "%s: n must be in [2, 2^31)\n", argv[0]);
        return 2;
    }
    struct csr a = make_matrix(n);
    double *b = kernel_alloc(sizeof(double) * n);
    double *x = kernel_alloc(sizeof(double) * n);
    double *r = kernel_alloc(sizeof(double) * n);
    double *p = kernel_alloc(sizeof(double) * n);
    double *q = kernel_alloc(sizeof(double) * n);
    uint64_t s = MATRIX_SEED + 1;
    /* Fresh right-hand sides rather than NAS CG's inverse iteration: this
     * matrix is a weighted graph Laplacian plus I, whose smallest eigenvector
     * is the constant vector; inverse iteration converges to it, so each solve
     * would start from an easier right-hand side than the last. */
    double worst = 0.0, sum = 0.0;
    kernel_region_begin();
    for (int solve = 0; solve < SOLVES; solve++) {
        for (long i = 0; i < n; i++) b[i] = 0.5 + kernel_rand_unit(&s);
        double rel_res2 = cg(&a, b, x, r, p, q) / dot(n, b, b);
        if (rel_res2 > worst) worst = rel_res2;
        sum += kernel_checksum(x, n);
    }
    kernel_region_end();
    /* the residual gets 3 digits: its last bits depend on the reductions' order */
    printf("cg n=%ld nnz=%ld iters=%dx%d rel_residual^2=%.3e checksum=%.6e\n", n, a.nnz, (int)SOLVES,
           (int)ITERS, worst, sum);
    free(a.rowptr); free(a.col); free(a.val);
    free(b); free(x); free(r); free(p); free(q);
    return 0;
}
