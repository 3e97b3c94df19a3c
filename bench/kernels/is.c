/* Integer-sort-like kernel (after NAS IS): ranks n random integer keys in
 * [0, max_key) by bucket sort, for a few iterations, then sorts by the ranks
 * and checks the order. Per iteration: a histogram of the keys' buckets per
 * thread, prefix sums over (bucket, thread), a scatter of the keys into their
 * buckets, and a counting sort inside each bucket that turns key counts into
 * ranks. The access patterns are NAS IS's: streaming reads, scattered writes
 * and increments into a table of counts. Keys are the average of four
 * uniform draws (roughly Gaussian), as in NAS IS, so buckets are uneven. */
#include <omp.h>
#include "kernel_common.h"

enum {
    ITERATIONS = 10,
    MAX_BUCKET_BITS = 10,
    TEST_KEYS = 5, /* keys whose ranks go into the checksum at every iteration */
};
static const uint64_t KEY_SEED = 0x6973; /* "is" */

struct sorter {
    long n, max_key, buckets;
    int shift;      /* bucket of key k: k >> shift */
    int chunks;     /* key ranges, one per thread: the histogram owners */
    int *key;       /* n keys */
    int *by_bucket; /* n keys grouped by bucket, input order kept in a bucket */
    long *count;    /* chunks * buckets: histograms, then scatter positions */
    long *bucket_start; /* buckets + 1 */
    long *rank;     /* max_key: number of keys < k, once ranked */
};

static long chunk_begin(const struct sorter *s, int c) { return s->n * c / s->chunks; }

/* Each chunk is a fixed key range handled by one iteration of a parallel
 * for, so the histograms, and with them the scatter order, do not depend on
 * which thread runs which chunk. */
static void histogram(struct sorter *s) {
#pragma omp parallel for schedule(static)
    for (int c = 0; c < s->chunks; c++) {
        long *h = s->count + (long)c * s->buckets;
        memset(h, 0, sizeof(long) * s->buckets);
        for (long i = chunk_begin(s, c); i < chunk_begin(s, c + 1); i++) h[s->key[i] >> s->shift]++;
    }
}

/* count[c][b] becomes where chunk c's first key of bucket b goes: after all
 * keys of smaller buckets and after bucket b's keys of chunks before c. A
 * sequential pass: it is chunks * buckets additions, small next to n. */
static void prefix_sums(struct sorter *s) {
    long pos = 0;
    for (long b = 0; b < s->buckets; b++) {
        s->bucket_start[b] = pos;
        for (int c = 0; c < s->chunks; c++) {
            long *cnt = &s->count[(long)c * s->buckets + b];
            long k = *cnt;
            *cnt = pos;
            pos += k;
        }
    }
    s->bucket_start[s->buckets] = pos;
}

static void scatter(struct sorter *s) {
#pragma omp parallel for schedule(static)
    for (int c = 0; c < s->chunks; c++) {
        long *next = s->count + (long)c * s->buckets;
        for (long i = chunk_begin(s, c); i < chunk_begin(s, c + 1); i++) {
            int k = s->key[i];
            s->by_bucket[next[k >> s->shift]++] = k;
        }
    }
}

/* Buckets own disjoint key ranges of the rank table, so they are ranked in
 * parallel: count each key, then an exclusive prefix sum from the bucket's
 * start gives rank[k] = number of keys smaller than k. */
static void rank_buckets(struct sorter *s) {
    long width = 1L << s->shift;
#pragma omp parallel for schedule(dynamic, 8)
    for (long b = 0; b < s->buckets; b++) {
        long *rank = s->rank + b * width;
        memset(rank, 0, sizeof(long) * width);
        for (long i = s->bucket_start[b]; i < s->bucket_start[b + 1]; i++) rank[s->by_bucket[i] - b * width]++;
        long pos = s->bucket_start[b];
        for (long k = 0; k < width; k++) {
            long cnt = rank[k];
            rank[k] = pos;
            pos += cnt;
        }
    }
}

/* Keys by rank: key k goes to rank[k], rank[k] + 1, ... Each bucket fills
 * only its own range of the output, so buckets run in parallel. Returns the
 * number of out-of-order neighbours in the output (0 when sorted). */
static long sort_and_check(struct sorter *s, int *out) {
    long width = 1L << s->shift;
#pragma omp parallel for schedule(dynamic, 8)
    for (long b = 0; b < s->buckets; b++)
        for (long i = s->bucket_start[b]; i < s->bucket_start[b + 1]; i++) {
            int k = s->by_bucket[i];
            out[s->rank[k]++] = k;
        }
    long bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static)
    for (long i = 1; i < s->n; i++) bad += out[i - 1] > out[i];
    /* placing moved each key's rank to the next key's start, so the last key
     * of a bucket must end where the next bucket starts: counts and ranks agree */
    for (long b = 0; b < s->buckets; b++) bad += s->rank[b * width + width - 1] != s->bucket_start[b + 1];
    return bad;
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 1L << 16, 1L << 21);
    /* at least 1024 keys: key values then outnumber the iterations, which the
     * per-iteration key changes need */
    if (n < 1024 || n > 0x7fffffffL) {
        fprintf(stderr, "%s: n must be in [1024, 2^31)\n", argv[0]);
        return 2;
    }
    /* NAS IS's ratio: keys 16 times as many as key values (rounded to 2^k) */
    int key_bits = 0;
    while ((2L << key_bits) <= n / 16) key_bits++;
    int bucket_bits = key_bits < MAX_BUCKET_BITS ? key_bits : MAX_BUCKET_BITS;
    struct sorter s = {.n = n, .max_key = 1L << key_bits, .buckets = 1L << bucket_bits,
                       .shift = key_bits - bucket_bits, .chunks = omp_get_max_threads()};
    s.key = kernel_alloc(sizeof(int) * n);
    s.by_bucket = kernel_alloc(sizeof(int) * n);
    s.count = kernel_alloc(sizeof(long) * s.chunks * s.buckets);
    s.bucket_start = kernel_alloc(sizeof(long) * (s.buckets + 1));
    s.rank = kernel_alloc(sizeof(long) * s.max_key);
    int *sorted = kernel_alloc(sizeof(int) * n);

    uint64_t seed = KEY_SEED;
    for (long i = 0; i < n; i++) {
        double u = kernel_rand_unit(&seed) + kernel_rand_unit(&seed) + kernel_rand_unit(&seed) +
                   kernel_rand_unit(&seed);
        s.key[i] = (int)(u * 0.25 * (double)s.max_key);
    }
    long test_index[TEST_KEYS];
    for (int t = 0; t < TEST_KEYS; t++) test_index[t] = kernel_rand_below(&seed, n);

    unsigned long long checksum = 0;
    kernel_region_begin();
    for (int it = 1; it <= ITERATIONS; it++) {
        /* as NAS IS does, change two keys per iteration so that no two rankings
         * are the same computation */
        s.key[it] = it;
        s.key[it + ITERATIONS] = (int)(s.max_key - it);
        histogram(&s);
        prefix_sums(&s);
        scatter(&s);
        rank_buckets(&s);
        for (int t = 0; t < TEST_KEYS; t++) checksum = checksum * 31 + (unsigned long long)s.rank[s.key[test_index[t]]];
    }
    kernel_region_end();
    long bad = sort_and_check(&s, sorted);
    for (long i = 0; i < n; i++) checksum += (unsigned long long)sorted[i] * (unsigned long long)((i % 7) + 1);
    printf("is n=%ld max_key=%ld buckets=%ld iterations=%d %s checksum=%llu\n", n, s.max_key, s.buckets,
           (int)ITERATIONS, bad ? "NOT SORTED" : "sorted", checksum);
    free(s.key); free(s.by_bucket); free(s.count); free(s.bucket_start); free(s.rank); free(sorted);
    return bad != 0;
}
