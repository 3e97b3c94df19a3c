/*
 * ribench.c — RIBench, the reuse-invalidation benchmark of ReuseTracker
 * (Dissertation §6.5.1, Listing 6.1), written from its description.
 *
 * Every thread runs `outer` rounds of five phases p = a..e. Phase p repeats
 * c_p times: `inv` stores to a shared array, then a sweep over its private
 * array p of l_p 8-byte elements (load element k, store element k+1, k += 2).
 * A private element is therefore reused after l_p + inv - 1 accesses of its
 * thread (time distance, accesses strictly between) within a phase, and after
 * the rest of the round between rounds; shared elements are invalidated by
 * the other threads' stores (or, alone, reused). Table 6.4 gives the reuse
 * counts as threads x outer x c_p x l_p; this program prints the EXACT
 * expected intra-thread histogram (first uses and round boundaries counted)
 * computed from its parameters, as JSON on stdout (or --expected FILE).
 *
 * usage: ribench [--pattern increasing|decreasing|bell|multimodal]
 *                [--length short|long] [--divide N] [--outer N] [--inv N]
 *                [--case 1|2|3] [--threads N] [--expected FILE]
 * Patterns and lengths are Table 6.5's; --case 2 and 3 are Tables 6.6/6.7's
 * invalidation cases: inv = (case - 1) x l_a and every l_p shortened by
 * (case - 1) x l_a / 2 (l_a = a1, 1000 short, 100000 long). --divide N divides
 * every length (and inv) by N (CI-sized runs), --outer overrides the round
 * count, --inv sets inv directly.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHASES 5

struct params {
    long outer, inv;
    long count[PHASES], len[PHASES];
};

/* Table 6.5 (a, b, c, d, e for each pattern; l_p = 1000 * 2^p short, 100000 * 2^p long) */
static const long table_counts[4][PHASES] = {
    {20, 20, 20, 20, 20},   /* increasing (short); long uses 10s */
    {200, 60, 15, 4, 2},    /* decreasing (short); long: 100, 30, 12, 5, 2 */
    {50, 40, 40, 10, 3},    /* bell */
    {100, 30, 24, 8, 7},    /* multi-modal */
};
static const long long_counts[4][PHASES] = {
    {10, 10, 10, 10, 10}, {100, 30, 12, 5, 2}, {50, 40, 40, 10, 3}, {100, 30, 24, 8, 7},
};
static const char *const patterns[4] = {"increasing", "decreasing", "bell", "multimodal"};

static void usage(void) {
    fprintf(stderr, "usage: ribench [--pattern increasing|decreasing|bell|multimodal] [--length short|long]\n"
                    "               [--divide N] [--outer N] [--inv N] [--case 1|2|3] [--threads N] [--expected FILE]\n");
    exit(2);
}

static long arg_long(const char *flag, const char *v, long min) {
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < min) {
        fprintf(stderr, "ribench: %s: expected an integer >= %ld, got '%s'\n", flag, min, v ? v : "");
        exit(2);
    }
    return x;
}

/* One (distance, count) pair of the expected histogram. */
struct bin {
    long long distance, count;
};

static void add(struct bin *b, int *n, long long d, long long c) {
    if (c <= 0) return;
    for (int i = 0; i < *n; i++)
        if (b[i].distance == d) {
            b[i].count += c;
            return;
        }
    b[*n].distance = d;
    b[*n].count = c;
    (*n)++;
}

/*
 * Expected intra-thread reuses of ONE thread at address granularity (time
 * distance = accesses of the thread strictly between; every access is one
 * load or one store of 8 bytes at its own address):
 *  private: within a phase, (c_p - 1) x l_p reuses per round at l_p + inv - 1;
 *    between rounds, (outer - 1) x l_p at P - (c_p - 1)(l_p + inv) - 1, P being
 *    the accesses of one round.
 *  shared (only when the thread runs alone, threads == 1): every use of
 *    shared[k] is reused after the private sweep that follows it, at
 *    inv - 1 + l_p; the last inv uses are never reused.
 */
static int expected(const struct params *p, int threads, struct bin *b, long long *shared_uses) {
    int n = 0;
    long long round = 0;
    for (int i = 0; i < PHASES; i++) round += (long long)p->count[i] * (p->len[i] + p->inv);
    *shared_uses = 0;
    for (int i = 0; i < PHASES; i++) {
        long long c = p->count[i], l = p->len[i];
        if (!c) continue;
        if (l) {
            add(b, &n, l + p->inv - 1, p->outer * (c - 1) * l);
            add(b, &n, round - (c - 1) * (l + p->inv) - 1, (p->outer - 1) * l);
        }
        *shared_uses += p->outer * c * p->inv;
        if (threads == 1 && p->inv) add(b, &n, p->inv - 1 + l, p->outer * c * p->inv);
    }
    if (threads == 1 && p->inv) {
        /* the last round's last uses of shared[] (after the last phase's
         * sweep) are never reused */
        for (int i = PHASES - 1; i >= 0; i--)
            if (p->count[i]) {
                for (int k = 0; k < n; k++)
                    if (b[k].distance == p->inv - 1 + p->len[i]) b[k].count -= p->inv;
                break;
            }
    }
    return n;
}

int main(int argc, char **argv) {
    int pat = 0, longrd = 0, threads = 0, tcase = 1;
    long divide = 1, outer = -1, inv = 0;
    const char *exp_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--pattern")) {
            pat = -1;
            for (int k = 0; k < 4; k++)
                if (v && !strcmp(v, patterns[k])) pat = k;
            if (pat < 0) usage();
            i++;
        } else if (!strcmp(a, "--length")) {
            if (!v || (strcmp(v, "short") && strcmp(v, "long"))) usage();
            longrd = !strcmp(v, "long");
            i++;
        } else if (!strcmp(a, "--divide")) divide = arg_long(a, v, 1), i++;
        else if (!strcmp(a, "--outer")) outer = arg_long(a, v, 1), i++;
        else if (!strcmp(a, "--inv")) inv = arg_long(a, v, 0), i++;
        else if (!strcmp(a, "--case")) tcase = (int)arg_long(a, v, 1), i++;
        else if (!strcmp(a, "--threads")) threads = (int)arg_long(a, v, 1), i++;
        else if (!strcmp(a, "--expected")) exp_path = v, i++;
        else usage();
    }
    if (tcase > 3) usage();
    long la = longrd ? 100000L : 1000L;
    if (tcase > 1) inv = (tcase - 1) * la / divide;
    struct params p = {.outer = outer > 0 ? outer : 10, .inv = inv};
    for (int k = 0; k < PHASES; k++) {
        p.count[k] = longrd ? long_counts[pat][k] : table_counts[pat][k];
        long base = (la << k) - (tcase - 1) * la / 2;
        p.len[k] = base / divide;
        if (p.len[k] < 2) p.len[k] = tcase > 1 && base <= 0 ? 0 : 2;
        p.len[k] &= ~1L;   /* the sweep touches pairs */
    }
    if (threads) omp_set_num_threads(threads);
    int nthreads = 1;
    volatile uint64_t *shared = calloc((size_t)(inv ? inv : 1), sizeof *shared);
    uint64_t checksum = 0;
#pragma omp parallel reduction(+ : checksum)
    {
#pragma omp single
        nthreads = omp_get_num_threads();
        volatile uint64_t *priv[PHASES];
        for (int k = 0; k < PHASES; k++) priv[k] = calloc((size_t)p.len[k], sizeof(uint64_t));
        uint64_t sum = (uint64_t)omp_get_thread_num();
        /* locals only (registers): the instrumented accesses are exactly the
         * volatile ones, so the trace matches the expected histogram */
        const long rounds = p.outer, ninv = p.inv;
        for (long o = 0; o < rounds; o++)
            for (int ph = 0; ph < PHASES; ph++) {
                volatile uint64_t *a = priv[ph];
                const long c = p.count[ph], l = p.len[ph];
                for (long j = 0; j < c; j++) {
                    for (long k = 0; k < ninv; k++) shared[k] = sum;
                    for (long k = 0; k < l; k += 2) {
                        sum += a[k];
                        a[k + 1] = sum;
                    }
                }
            }
        checksum += sum;
        for (int k = 0; k < PHASES; k++) free((void *)priv[k]);
    }
    struct bin b[4 * PHASES];
    long long shared_uses;
    int n = expected(&p, nthreads, b, &shared_uses);
    FILE *out = exp_path ? fopen(exp_path, "w") : stdout;
    if (!out) {
        perror(exp_path);
        return 1;
    }
    fprintf(out, "{\"benchmark\": \"ribench\", \"pattern\": \"%s\", \"length\": \"%s\", \"threads\": %d, "
                 "\"outer\": %ld, \"inv\": %ld, \"lengths\": [%ld, %ld, %ld, %ld, %ld], "
                 "\"counts\": [%ld, %ld, %ld, %ld, %ld],\n",
            patterns[pat], longrd ? "long" : "short", nthreads, p.outer, p.inv, p.len[0], p.len[1], p.len[2],
            p.len[3], p.len[4], p.count[0], p.count[1], p.count[2], p.count[3], p.count[4]);
    fprintf(out, " \"expected_intra_reuses\": [");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s{\"distance\": %lld, \"count\": %lld}", i ? ", " : "", b[i].distance,
                b[i].count * nthreads);
        total += b[i].count * nthreads;
    }
    /* with other threads, every use of shared[] is expected to end in an invalidation */
    fprintf(out, "],\n \"expected_reuses\": %lld, \"shared_uses\": %lld, \"expected_invalidations\": %lld, "
                 "\"checksum\": %llu}\n",
            total, shared_uses * nthreads, nthreads > 1 ? shared_uses * nthreads : 0LL,
            (unsigned long long)(checksum & 0xff));
    if (out != stdout) fclose(out);
    return 0;
}
