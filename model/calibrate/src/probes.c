/*
 * probes.c — the timed measurements of pes-calibrate (pes/calibrate.h).
 *
 * Every probe runs a kernel whose cost per step is the figure sought, times
 * it with CLOCK_MONOTONIC, repeats it, and keeps the fastest repeat: on a
 * shared machine interference (other processes, interrupts, the hypervisor)
 * only ever adds time, so the minimum is the least disturbed estimate; the
 * median and the spread of the repeats are reported beside it.
 * Seconds become cycles with the clock measured by the dependent add chain,
 * in the same run. The instruction chains are x86-64 assembly (a compiler
 * would fold a C chain of adds); elsewhere only the clock is measured and the
 * instruction costs keep documented defaults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pes/calibrate.h"
#include "probe.h"

#define R2(s)  s s
#define R4(s)  R2(R2(s))
#define R8(s)  R2(R4(s))
#define R16(s) R2(R8(s))
#define R32(s) R2(R16(s))
#define R64(s) R2(R32(s))

double pes_calib_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pes_calib_plan_default(struct pes_calib_plan *p, int quick, double llc_bytes)
{
    memset(p, 0, sizeof *p);
    p->quick = quick;
    /* many short repeats rather than a few long ones: a process sharing its
     * CPU is descheduled every few milliseconds, and a repeat of a quarter
     * of a millisecond often runs undisturbed */
    p->repeats = quick ? 9 : 25;
    p->points_per_octave = quick ? 2 : 3;
    p->min_ws = 4096;
    /* memory latency: a working set well beyond the last cache (4x, 2x when
     * quick), at least 64 MiB, at most 512 MiB */
    double ws = (quick ? 2.0 : 4.0) * llc_bytes;
    double lo = 64.0 * 1024 * 1024, hi = 512.0 * 1024 * 1024;
    p->max_ws = ws < lo ? lo : ws > hi ? hi : ws;
}

void pes_calib_figure_from(struct pes_calib_figure *f, double *v, unsigned n, const char *method)
{
    f->value = pes_calib_min(v, n);
    f->median = pes_calib_median(v, n);
    f->spread = f->value > 0 ? 100.0 * (f->median - f->value) / f->value : NAN;
    f->repeats = n;
    f->measured = 1;
    snprintf(f->method, sizeof f->method, "%s", method);
}

double pes_calib_repeat_seconds(const struct pes_calib_plan *p)
{
    return p->quick ? 0.0002 : 0.00025;
}

/* ---------------------------------------------------------------- the clock */

#if defined(__x86_64__)
#define HAVE_CHAINS 1
/* 64 dependent adds per iteration; the loop's own dec/jnz run beside them. */
PROBE static void add_chain(uint64_t iters)
{
    uint64_t x = 0, one = 1;
    __asm__ volatile("1:\n\t" R64("add %[one], %[x]\n\t") "dec %[n]\n\tjnz 1b"
                     : [x] "+r"(x), [n] "+r"(iters)
                     : [one] "r"(one)
                     : "cc");
}
#elif defined(__aarch64__)
#define HAVE_CHAINS 0
PROBE static void add_chain(uint64_t iters)
{
    uint64_t x = 0;
    __asm__ volatile("1:\n\t" R64("add %[x], %[x], #1\n\t") "subs %[n], %[n], #1\n\tb.ne 1b"
                     : [x] "+r"(x), [n] "+r"(iters)
                     :
                     : "cc");
}
#else
#define HAVE_CHAINS    0
#define NO_CLOCK_PROBE 1
#endif

#ifndef NO_CLOCK_PROBE
/* Times kernel(iters) with iters grown until one call takes `target`
 * seconds; returns the iteration count. */
static uint64_t size_iters(void (*kernel)(uint64_t), double target)
{
    uint64_t iters = 64;
    for (;;) {
        double t0 = pes_calib_now();
        kernel(iters);
        double t = pes_calib_now() - t0;
        if (t >= target / 4 || iters > (1ull << 40))
            return t > 0 ? (uint64_t)((double)iters * target / t) + 1 : iters;
        iters *= 4;
    }
}
#endif

int pes_calib_measure_ghz(const struct pes_calib_plan *p, struct pes_calib_figure *f,
                          struct pes_error *err)
{
#ifdef NO_CLOCK_PROBE
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0,
                         "no clock probe for this architecture (x86-64, aarch64)");
#else
    (void)err;
    /* wake the core up to its working clock before measuring it */
    double until = pes_calib_now() + (p->quick ? 0.02 : 0.1);
    while (pes_calib_now() < until)
        add_chain(10000);
    uint64_t iters = size_iters(add_chain, pes_calib_repeat_seconds(p));
    unsigned n = p->repeats * 2 < MAX_REPEATS ? p->repeats * 2 : MAX_REPEATS;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < n; r++) {
        double t0 = pes_calib_now();
        add_chain(iters);
        v[r] =
            (pes_calib_now() - t0) / (64.0 * (double)iters) * 1e9; /* ns per add, lower is better */
    }
    char method[160];
    snprintf(method, sizeof method,
             "dependent 64-bit add chain (1 cycle per add), %.3g M adds per repeat, fastest of %u",
             64.0 * (double)iters / 1e6, n);
    pes_calib_figure_from(f, v, n, method);
    /* ns per add -> GHz; the spread is the same in either unit */
    f->value = 1.0 / f->value;
    f->median = 1.0 / f->median;
    return 0;
#endif
}

/* ---------------------------------------------------------------- buffers */

int pes_calib_buffer_alloc(struct pes_calib_buffer *b, size_t bytes, struct pes_error *err)
{
    return pes_calib_buffer_alloc_pages(b, bytes, 1, err);
}

int pes_calib_buffer_alloc_pages(struct pes_calib_buffer *b, size_t bytes, int want_huge,
                                 struct pes_error *err)
{
    memset(b, 0, sizeof *b);
    size_t huge = 2u << 20;
    size_t len = (bytes + huge - 1) / huge * huge + huge; /* room to align to 2 MiB */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "cannot map %zu MiB for the memory probes: %s",
                             bytes >> 20, strerror(errno));
    uintptr_t a = ((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1);
    if (a > (uintptr_t)m)
        munmap(m, a - (uintptr_t)m);
    uintptr_t end = (uintptr_t)m + len, want = a + (bytes + huge - 1) / huge * huge;
    if (end > want)
        munmap((void *)want, end - want);
    b->base = (void *)a;
    b->bytes = want - a;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    /* TLB misses would add a page walk to every load of the larger working
     * sets; the TLB probe wants exactly those */
    madvise(b->base, b->bytes, want_huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
    (void)want_huge;
#endif
    memset(b->base, 1, b->bytes); /* fault it in now, not while timing */
    b->huge_share = -1;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f) {
        char line[256];
        unsigned long lo, hi;
        int in = 0;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
                in = lo <= (unsigned long)a && (unsigned long)a < hi;
            unsigned long kb;
            if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
                b->huge_share = (double)kb * 1024.0 / (double)b->bytes;
                if (b->huge_share > 1)
                    b->huge_share = 1;
                break;
            }
        }
        fclose(f);
    }
    return 0;
}

void pes_calib_buffer_free(struct pes_calib_buffer *b)
{
    if (b->base)
        munmap(b->base, b->bytes);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- pointer chasing */

#define LINE 64

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Element i of a chase: line i of base, or with `spacing` (bytes, a multiple
 * of LINE) one line per spacing bytes, line i mod (spacing / LINE) of its
 * block, so that the lines fill the cache sets evenly. */
static char *element(char *base, size_t i, size_t spacing)
{
    return base + i * spacing + (i % (spacing / LINE)) * LINE;
}

/* Links n elements (element()) into one cycle in random order; the order is
 * left in *perm_out (the caller frees it) when perm_out is not NULL. */
static int link_cycle(void *base, size_t n, size_t spacing, uint32_t **perm_out,
                      struct pes_error *err)
{
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory for a %zu-line chase", n);
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    uint64_t s = 0x9e3779b97f4a7c15ull ^ n; /* fixed seed: the same chase every run */
    for (size_t i = n - 1; i > 0; i--) {    /* Fisher-Yates */
        size_t j = (size_t)(rng_next(&s) % (i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    char *b = base;
    for (size_t k = 0; k < n; k++)
        *(void **)element(b, perm[k], spacing) = element(b, perm[(k + 1) % n], spacing);
    if (perm_out)
        *perm_out = perm;
    else
        free(perm);
    return 0;
}

/* Links the first n lines of base into one cycle in random order. */
static int build_cycle(void *base, size_t n, struct pes_error *err)
{
    return link_cycle(base, n, LINE, NULL, err);
}

static void *volatile chase_sink;

PROBE static void *chase(void *p, uint64_t steps)
{
    for (uint64_t i = 0; i < steps; i += 16) {
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
    }
    return p;
}

/* Times the chase from start through a cycle of n elements: one warm lap
 * (at most 256 K loads), then the plan's repeats of about a repeat's time. */
static void chase_figure(void *start, size_t n, double ghz, const struct pes_calib_plan *p,
                         struct pes_calib_figure *f, const char *what)
{
    void *q = start;
    uint64_t warm = n < 262144 ? (n + 15) / 16 * 16 : 262144;
    double t0 = pes_calib_now();
    q = chase(q, warm);
    double per = (pes_calib_now() - t0) / (double)warm;
    double steps = per > 0 ? pes_calib_repeat_seconds(p) / per : 1e6;
    uint64_t st = (uint64_t)(steps < 16384 ? 16384 : steps > 4e6 ? 4e6 : steps) / 16 * 16;
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < rep; r++) {
        t0 = pes_calib_now();
        q = chase(q, st);
        v[r] = (pes_calib_now() - t0) * ghz * 1e9 / (double)st;
    }
    chase_sink = q;
    char method[160];
    snprintf(method, sizeof method, "%s, %llu loads, fastest of %u", what, (unsigned long long)st,
             rep);
    pes_calib_figure_from(f, v, rep, method);
}

int pes_calib_measure_chase(struct pes_calib_buffer *b, double ws, double ghz,
                            const struct pes_calib_plan *p, struct pes_calib_figure *f,
                            struct pes_error *err)
{
    size_t n = (size_t)(ws / LINE);
    if (n < 2 || (double)n * LINE > (double)b->bytes || n > UINT32_MAX)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "chase: working set %g bytes outside the %zu-byte buffer", ws,
                             b->bytes);
    if (build_cycle(b->base, n, err) < 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "pointer chase, random cyclic permutation of %zu lines (%g KiB)", n,
             ws / 1024.0);
    chase_figure(b->base, n, ghz, p, f, what);
    return 0;
}

#define PAGE 4096

int pes_calib_measure_tlb(struct pes_calib_buffer *b, struct pes_calib_buffer *ctl, size_t pages,
                          double ghz, const struct pes_calib_plan *p,
                          struct pes_calib_figure *paged, struct pes_calib_figure *control,
                          struct pes_error *err)
{
    if (pages < 2 || pages > UINT32_MAX || pages * PAGE > b->bytes || pages * LINE > ctl->bytes)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "TLB sweep: %zu pages outside the buffers (%zu and %zu bytes)", pages,
                             b->bytes, ctl->bytes);
    char what[96];
    if (link_cycle(b->base, pages, PAGE, NULL, err) < 0)
        return -1;
    snprintf(what, sizeof what, "pointer chase, one line in each of %zu 4 KiB pages", pages);
    chase_figure(b->base, pages, ghz, p, paged, what);
    if (link_cycle(ctl->base, pages, LINE, NULL, err) < 0)
        return -1;
    snprintf(what, sizeof what, "pointer chase, %zu contiguous lines", pages);
    chase_figure(ctl->base, pages, ghz, p, control, what);
    return 0;
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
int pes_calib_tlb_cpuid(uint32_t *entries, uint32_t *page)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return -1;
    unsigned max = a;
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    if (!strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine")) {
        /* EBX[27:16]: L2 data TLB entries for 4 KiB pages */
        if (!__get_cpuid(0x80000006, &a, &b, &c, &d) || ((b >> 16) & 0xfff) == 0)
            return -1;
        *entries = (b >> 16) & 0xfff;
        *page = PAGE;
        return 0;
    }
    if (max < 0x18)
        return -1;
    /* Intel: deterministic address translation parameters, one sub-leaf per
     * TLB; the highest level of data (1), unified (3) or load-only (4) TLB
     * that holds 4 KiB pages */
    __cpuid_count(0x18, 0, a, b, c, d);
    unsigned subleaves = a, best_level = 0, best = 0;
    for (unsigned i = 0; i <= subleaves && i < 64; i++) {
        __cpuid_count(0x18, i, a, b, c, d);
        unsigned type = d & 0x1f, level = (d >> 5) & 7;
        if ((type == 1 || type == 3 || type == 4) && (b & 1) && level >= best_level) {
            best_level = level;
            best = ((b >> 16) & 0xffff) * c;
        }
    }
    if (!best)
        return -1;
    *entries = best;
    *page = PAGE;
    return 0;
}
#else
int pes_calib_tlb_cpuid(uint32_t *entries, uint32_t *page)
{
    (void)entries;
    (void)page;
    return -1;
}
#endif

/* K independent chases, each pointer one step per iteration; K a constant,
 * so that the pointers stay in registers. */
#define CHASES(K)                                                                                  \
    PROBE static void chases##K(void **q, uint64_t steps)                                          \
    {                                                                                              \
        void *r[K];                                                                                \
        for (int j = 0; j < K; j++)                                                                \
            r[j] = q[j];                                                                           \
        for (uint64_t i = 0; i < steps; i++)                                                       \
            for (int j = 0; j < K; j++)                                                            \
                r[j] = *(void **)r[j];                                                             \
        for (int j = 0; j < K; j++)                                                                \
            q[j] = r[j];                                                                           \
    }
CHASES(1)
CHASES(2)
CHASES(4)
CHASES(6)
CHASES(8)
CHASES(12)
CHASES(16)
CHASES(20)
CHASES(24)

static void (*chases_kernel(unsigned k))(void **, uint64_t)
{
    switch (k) {
    case 1:
        return chases1;
    case 2:
        return chases2;
    case 4:
        return chases4;
    case 6:
        return chases6;
    case 8:
        return chases8;
    case 12:
        return chases12;
    case 16:
        return chases16;
    case 20:
        return chases20;
    case 24:
        return chases24;
    default:
        return NULL;
    }
}

int pes_calib_measure_chases(struct pes_calib_buffer *b, double ws, const unsigned *ks, size_t nk,
                             double ghz, const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err)
{
    size_t n = (size_t)(ws / LINE);
    if (n < 1024 || (double)n * LINE > (double)b->bytes || n > UINT32_MAX)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "chases: working set %g bytes outside the %zu-byte buffer", ws,
                             b->bytes);
    for (size_t i = 0; i < nk; i++)
        if (!chases_kernel(ks[i]))
            return pes_error_set(err, PES_ERR_ARG, 0,
                                 "chases: no kernel for %u chases (1, 2, 4, 6, 8, 12, 16, 20, 24)",
                                 ks[i]);
    uint32_t *perm;
    if (link_cycle(b->base, n, LINE, &perm, err) < 0)
        return -1;
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    for (size_t i = 0; i < nk; i++) {
        unsigned k = ks[i];
        void (*kernel)(void **, uint64_t) = chases_kernel(k);
        void *q[24];
        for (unsigned j = 0; j < k; j++) /* evenly spaced on the cycle: no chase catches up */
            q[j] = (char *)b->base + (size_t)perm[j * (n / k)] * LINE;
        /* warm the TLB and size a repeat */
        double t0 = pes_calib_now();
        kernel(q, 4096);
        double per = (pes_calib_now() - t0) / 4096.0;
        double steps = per > 0 ? pes_calib_repeat_seconds(p) / per : 1e5;
        uint64_t st = (uint64_t)(steps < 1024 ? 1024 : steps > 1e6 ? 1e6 : steps);
        double v[MAX_REPEATS];
        for (unsigned r = 0; r < rep; r++) {
            t0 = pes_calib_now();
            kernel(q, st);
            v[r] = (pes_calib_now() - t0) * ghz * 1e9 / ((double)st * k);
        }
        chase_sink = q[0];
        char method[160];
        snprintf(method, sizeof method,
                 "%u independent pointer chases over %g MiB, %llu loads each, fastest of %u", k,
                 ws / 1048576.0, (unsigned long long)st, rep);
        pes_calib_figure_from(&f[i], v, rep, method);
    }
    free(perm);
    return 0;
}

/* ---------------------------------------------------------------- streaming reads */

/* One 8-byte load per S words, 8 per iteration, over `words` words; S a
 * constant, so that the loads take immediate offsets from one address and
 * no chain of address additions paces them. */
#define STREAM_KERNEL(name, S)                                                                     \
    PROBE static void name(const volatile uint64_t *w, size_t words)                               \
    {                                                                                              \
        for (size_t i = 0; i + 8 * (S) <= words; i += 8 * (S)) {                                   \
            const volatile uint64_t *p = w + i;                                                    \
            (void)p[0];                                                                            \
            (void)p[(S)];                                                                          \
            (void)p[2 * (S)];                                                                      \
            (void)p[3 * (S)];                                                                      \
            (void)p[4 * (S)];                                                                      \
            (void)p[5 * (S)];                                                                      \
            (void)p[6 * (S)];                                                                      \
            (void)p[7 * (S)];                                                                      \
        }                                                                                          \
    }
STREAM_KERNEL(stream_words, 1)
STREAM_KERNEL(stream_lines, 8)

static void stream(const volatile uint64_t *w, size_t words, size_t stride_words)
{
    if (stride_words == 1)
        stream_words(w, words);
    else
        stream_lines(w, words);
}

/* Reads `bytes` bytes of the window [0, ws) from byte offset *off on,
 * wrapping at ws; *off moves on. */
static void stream_from(const volatile uint64_t *w, size_t ws, size_t *off, size_t bytes,
                        size_t stride_words)
{
    while (bytes) {
        size_t seg = ws - *off < bytes ? ws - *off : bytes;
        stream(w + *off / 8, seg / 8, stride_words);
        bytes -= seg;
        *off = (*off + seg) % ws;
    }
}

void pes_calib_stream_lines(const volatile uint64_t *w, size_t window, size_t *off, size_t bytes)
{
    stream_from(w, window, off, bytes, 8);
}

int pes_calib_measure_stream(struct pes_calib_buffer *b, double ws, unsigned stride, double ghz,
                             const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err)
{
    size_t chunk = 64u * stride; /* 8 loads of 8 strides */
    if ((stride != 8 && stride != 64) || ws > (double)b->bytes || ws < 8.0 * chunk)
        return pes_error_set(err, PES_ERR_ARG, 0, "stream: working set %g bytes, stride %u", ws,
                             stride);
    size_t window = (size_t)ws / chunk * chunk, sw = stride / 8, off = 0;
    const volatile uint64_t *w = b->base;
    /* warm (the window in its level) and size a repeat: ~target seconds of
     * reads from where the last one stopped, so that a memory-sized window
     * is read in turns and every read comes from memory */
    double t0 = pes_calib_now();
    stream_from(w, window, &off, window < (64u << 20) ? window : (64u << 20), sw);
    double per_byte =
        (pes_calib_now() - t0) / (double)(window < (64u << 20) ? window : (64u << 20));
    size_t bytes =
        per_byte > 0 ? (size_t)(pes_calib_repeat_seconds(p) / per_byte) / chunk * chunk : window;
    if (bytes < chunk)
        bytes = chunk;
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < rep; r++) {
        t0 = pes_calib_now();
        stream_from(w, window, &off, bytes, sw);
        v[r] = (pes_calib_now() - t0) * ghz * 1e9 / ((double)bytes / stride);
    }
    char method[160];
    snprintf(method, sizeof method,
             "streaming reads, one 8-byte load per %u bytes of %g KiB, "
             "%g KiB per repeat, fastest of %u",
             stride, (double)window / 1024.0, (double)bytes / 1024.0, rep);
    pes_calib_figure_from(f, v, rep, method);
    return 0;
}

/* One 8-byte load per s words, 8 per iteration: the loads are independent
 * and their addresses need no chain of additions. */
PROBE static void stride_read(const volatile uint64_t *w, size_t words, size_t s)
{
    for (size_t i = 0; i + 8 * s <= words; i += 8 * s) {
        const volatile uint64_t *q = w + i;
        (void)q[0];
        (void)q[s];
        (void)q[2 * s];
        (void)q[3 * s];
        (void)q[4 * s];
        (void)q[5 * s];
        (void)q[6 * s];
        (void)q[7 * s];
    }
}

int pes_calib_measure_stride(struct pes_calib_buffer *b, double ws, unsigned stride, double ghz,
                             const struct pes_calib_plan *p, struct pes_calib_figure *f,
                             struct pes_error *err)
{
    size_t chunk = 8u * stride;
    if (stride < LINE || stride % LINE || stride > 65536 || ws > (double)b->bytes ||
        ws < 16.0 * chunk)
        return pes_error_set(err, PES_ERR_ARG, 0, "stride read: working set %g bytes, stride %u",
                             ws, stride);
    size_t window = (size_t)ws / chunk * chunk, sw = stride / 8, off = 0;
    const volatile uint64_t *w = b->base;
    /* about a repeat's worth of accesses per repeat, from where the last
     * one stopped (a window beyond the caches is read in turns) */
    size_t per_pass = window / stride;
    double t0 = pes_calib_now();
    stride_read(w, window / 8, sw);
    double per = (pes_calib_now() - t0) / (double)per_pass;
    size_t accesses = per > 0 ? (size_t)(pes_calib_repeat_seconds(p) / per) : per_pass;
    accesses = (accesses < 64 ? 64 : accesses) / 8 * 8;
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < rep; r++) {
        t0 = pes_calib_now();
        for (size_t left = accesses; left;) {
            size_t n = (window - off) / stride < left ? (window - off) / stride : left;
            stride_read(w + off / 8, n * sw, sw);
            left -= n;
            off = (off + n * stride) % window;
        }
        v[r] = (pes_calib_now() - t0) * ghz * 1e9 / (double)accesses;
    }
    char method[160];
    snprintf(method, sizeof method,
             "streaming reads, one load per %u bytes of %g MiB, %zu loads per repeat, fastest of "
             "%u",
             stride, (double)window / 1048576.0, accesses, rep);
    pes_calib_figure_from(f, v, rep, method);
    return 0;
}

/* ---------------------------------------------------------------- instruction chains */

#if HAVE_CHAINS
/* Each kernel runs `iters` iterations of OPS operations: the latency kernels
 * one dependent chain, the throughput kernels 8 (integer) or 12 (floating
 * point) independent ones, more than latency x ports needs. OPS per
 * iteration but for the floating-point throughput kernels (24). */
#define OPS 32.0

PROBE static void add_thr(uint64_t n)
{
    uint64_t one = 1;
    __asm__ volatile("1:\n\t" R4("add %[one],%%r8\n\tadd %[one],%%r9\n\tadd %[one],%%r10\n\t"
                                 "add %[one],%%r11\n\tadd %[one],%%r12\n\tadd %[one],%%r13\n\t"
                                 "add %[one],%%r14\n\tadd %[one],%%r15\n\t") "dec %[n]\n\tjnz 1b"
                     : [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
}

PROBE static void add_lat32(uint64_t n)
{
    uint64_t x = 0, one = 1;
    __asm__ volatile("1:\n\t" R32("add %[one], %[x]\n\t") "dec %[n]\n\tjnz 1b"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
}

PROBE static void mul_lat(uint64_t n)
{
    uint64_t x = 3, one = 1;
    __asm__ volatile("1:\n\t" R32("imul %[one], %[x]\n\t") "dec %[n]\n\tjnz 1b"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
}

PROBE static void mul_thr(uint64_t n)
{
    uint64_t one = 1;
    __asm__ volatile("1:\n\t" R4("imul %[one],%%r8\n\timul %[one],%%r9\n\timul %[one],%%r10\n\t"
                                 "imul %[one],%%r11\n\timul %[one],%%r12\n\timul %[one],%%r13\n\t"
                                 "imul %[one],%%r14\n\timul %[one],%%r15\n\t") "dec %[n]\n\tjnz 1b"
                     : [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
}

/* 32-bit unsigned division, as for C's unsigned int: the quotient of
 * 123456789 / 1 is the next dividend (27 significant bits; dividers whose
 * latency depends on the quotient are timed on a mid-size one). */
PROBE static void div_lat(uint64_t n)
{
    uint32_t x = 123456789u, d = 1;
    __asm__ volatile("1:\n\t" R32("xor %%edx, %%edx\n\tdivl %[d]\n\t") "dec %[n]\n\tjnz 1b"
                     : "+a"(x), [n] "+r"(n)
                     : [d] "r"(d)
                     : "cc", "rdx");
}

PROBE static void div_thr(uint64_t n)
{
    uint32_t d = 1;
    __asm__ volatile(
        "1:\n\t" R32(
            "mov $123456789, %%eax\n\txor %%edx, %%edx\n\tdivl %[d]\n\t") "dec %[n]\n\tjnz 1b"
        : [n] "+r"(n)
        : [d] "r"(d)
        : "cc", "rax", "rdx");
}

#define FP_LAT(name, insn, start, operand)                                                         \
    PROBE static void name(uint64_t n)                                                             \
    {                                                                                              \
        double x = start, c = operand;                                                             \
        __asm__ volatile("1:\n\t" R32(insn " %[c], %[x]\n\t") "dec %[n]\n\tjnz 1b"                 \
                         : [x] "+x"(x), [n] "+r"(n)                                                \
                         : [c] "x"(c)                                                              \
                         : "cc");                                                                  \
    }
FP_LAT(fadd_lat, "addsd", 0.0, 1.0)
FP_LAT(fmul_lat, "mulsd", 1.5, 1.0000001)
FP_LAT(fdiv_lat, "divsd", 1.5, 1.0000001)

/* 12 independent chains in xmm0..xmm11, started at `start`. */
#define FP12(insn)                                                                                 \
    insn " %[c],%%xmm0\n\t" insn " %[c],%%xmm1\n\t" insn " %[c],%%xmm2\n\t" insn                   \
         " %[c],%%xmm3\n\t" insn " %[c],%%xmm4\n\t" insn " %[c],%%xmm5\n\t" insn                   \
         " %[c],%%xmm6\n\t" insn " %[c],%%xmm7\n\t" insn " %[c],%%xmm8\n\t" insn                   \
         " %[c],%%xmm9\n\t" insn " %[c],%%xmm10\n\t" insn " %[c],%%xmm11\n\t"
/* 24 operations per iteration: 2 x 12 independent chains, started at the operand. */
#define FP_THR(name, insn, operand)                                                                \
    PROBE static void name(uint64_t n)                                                             \
    {                                                                                              \
        double c = operand;                                                                        \
        __asm__ volatile(FP12("movsd") "1:\n\t" R2(FP12(insn)) "dec %[n]\n\tjnz 1b"                \
                         : [n] "+r"(n)                                                             \
                         : [c] "x"(c)                                                              \
                         : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",   \
                           "xmm8", "xmm9", "xmm10", "xmm11");                                      \
    }
FP_THR(fadd_thr, "addsd", 1.0)
FP_THR(fmul_thr, "mulsd", 1.0000001)
FP_THR(fdiv_thr, "divsd", 1.0000001)

static uint64_t store_area[64];

PROBE static void store_thr(uint64_t n)
{
    __asm__ volatile(
        "1:\n\t" R4("mov %%rax,0(%[p])\n\tmov %%rax,8(%[p])\n\tmov %%rax,16(%[p])\n\t"
                    "mov %%rax,24(%[p])\n\tmov %%rax,32(%[p])\n\tmov %%rax,40(%[p])\n\t"
                    "mov %%rax,48(%[p])\n\tmov %%rax,56(%[p])\n\t") "dec %[n]\n\tjnz 1b"
        : [n] "+r"(n)
        : [p] "r"(store_area)
        : "cc", "memory");
}

/* 32 taken jumps per iteration, each to the next one, 32 bytes apart: as
 * dense as branchy code gets (packed tighter, branch predictors that keep
 * a few branches per 64-byte line fall behind). */
PROBE static void branch_thr(uint64_t n)
{
    __asm__ volatile("2:\n\t" R32("jmp 1f\n\t.p2align 5\n\t1:\n\t") "dec %[n]\n\tjnz 2b"
                     : [n] "+r"(n)
                     :
                     : "cc");
}

/* 32 call/ret pairs per iteration; the red zone below rsp is stepped over. */
PROBE static void call_pair(uint64_t n)
{
    __asm__ volatile(
        "jmp 4f\n\t3:\n\tret\n\t4:\n\tsub $128, %%rsp\n\t"
        "2:\n\t" R32("call 3b\n\t.p2align 4\n\t") "dec %[n]\n\tjnz 2b\n\tadd $128, %%rsp"
        : [n] "+r"(n)
        :
        : "cc", "memory");
}
/* The issue width: 32 operations per iteration, integer adds, scalar FP
 * adds and L1 loads 4 : 2 : 2, every one independent of the others of its
 * iteration (8 add and 8 addsd chains, loads into renamed registers), so
 * that no single kind of unit is the limit and the core's front end is. */
#define MIX(a, b, c, d, x, y, l1, l2)                                                              \
    "add %[one]," a "\n\tadd %[one]," b "\n\tadd %[one]," c "\n\tadd %[one]," d "\n\t"             \
    "addsd %[c]," x "\n\taddsd %[c]," y "\n\tmovsd 0(%[p])," l1 "\n\tmovsd 8(%[p])," l2 "\n\t"
/* The same block with its loop starting `skip` bytes past a 64-byte line:
 * where a loop lies decides how the front end's decoded-op cache holds it
 * (Zen 3 here: 5.8 ops per cycle at most offsets, 5.3 at others), and the
 * SMT sibling's code evicts some placements for a while (then the 4-wide
 * decoders deliver about 4): one fixed placement is one draw of these. */
#define MIX_AT(skip)                                                                               \
    PROBE static void mix_thr_##skip(uint64_t n)                                                   \
    {                                                                                              \
        uint64_t one = 1;                                                                          \
        double c = 1.0;                                                                            \
        __asm__ volatile(                                                                          \
            "movsd %[c],%%xmm0\n\tmovsd %[c],%%xmm1\n\tmovsd %[c],%%xmm2\n\tmovsd %[c],%%xmm3\n\t" \
            "movsd %[c],%%xmm4\n\tmovsd %[c],%%xmm5\n\tmovsd %[c],%%xmm6\n\tmovsd %[c],%%xmm7\n\t" \
            "jmp 1f\n\t.p2align 6\n\t.fill " #skip ",1,0x90\n\t"                                   \
            "1:\n\t" MIX("%%r8", "%%r9", "%%r10", "%%r11", "%%xmm0", "%%xmm1", "%%xmm8", "%%xmm9") \
                MIX("%%r12", "%%r13", "%%r14", "%%r15", "%%xmm2", "%%xmm3", "%%xmm10", "%%xmm11")  \
                    MIX("%%r8", "%%r9", "%%r10", "%%r11", "%%xmm4", "%%xmm5", "%%xmm8", "%%xmm9")  \
                        MIX("%%r12", "%%r13", "%%r14", "%%r15", "%%xmm6", "%%xmm7", "%%xmm10",     \
                            "%%xmm11") "dec %[n]\n\tjnz 1b"                                        \
            : [n] "+r"(n)                                                                          \
            : [one] "r"(one), [c] "x"(c), [p] "r"(store_area)                                      \
            : "cc", "memory", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "xmm0",        \
              "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",     \
              "xmm11");                                                                            \
    }
MIX_AT(0)
MIX_AT(4)
MIX_AT(8)
MIX_AT(12)
MIX_AT(16)
MIX_AT(20)
MIX_AT(24)
MIX_AT(28)
MIX_AT(32)
MIX_AT(36)
MIX_AT(40)
MIX_AT(44)
MIX_AT(48)
MIX_AT(52)
MIX_AT(56)
MIX_AT(60)
static void (*const mix_layouts[])(uint64_t) = {
    mix_thr_0,  mix_thr_4,  mix_thr_8,  mix_thr_12, mix_thr_16, mix_thr_20, mix_thr_24, mix_thr_28,
    mix_thr_32, mix_thr_36, mix_thr_40, mix_thr_44, mix_thr_48, mix_thr_52, mix_thr_56, mix_thr_60};
enum { MIX_LAYOUTS = sizeof mix_layouts / sizeof mix_layouts[0] };

/* Cycles per operation of kernel (ops operations per iteration). */
static void time_ops(void (*kernel)(uint64_t), double ops, double ghz,
                     const struct pes_calib_plan *p, const char *what, struct pes_calib_figure *f)
{
    uint64_t iters = size_iters(kernel, pes_calib_repeat_seconds(p) / 2);
    unsigned rep = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double v[MAX_REPEATS];
    for (unsigned r = 0; r < rep; r++) {
        double t0 = pes_calib_now();
        kernel(iters);
        v[r] = (pes_calib_now() - t0) * ghz * 1e9 / (ops * (double)iters);
    }
    char method[160];
    snprintf(method, sizeof method, "%s, %.3g M ops, fastest of %u", what,
             ops * (double)iters / 1e6, rep);
    pes_calib_figure_from(f, v, rep, method);
}
#endif /* HAVE_CHAINS */

int pes_calib_measure_issue(double ghz, const struct pes_calib_plan *p, struct pes_calib_figure *f,
                            struct pes_error *err)
{
#if HAVE_CHAINS
    (void)err;
    /* Each round times every placement once, so a disturbed stretch (the
     * sibling's load, a preemption) falls on all of them alike. Interference
     * only slows a throughput block, so each placement keeps its fastest
     * round, and the figure is the fastest placement: the rate the front end
     * sustains when nothing takes its slots or its op cache. A round per
     * repeat of the plan, each placement a quarter as long as a repeat;
     * pes-calibrate runs this in each of its turns, seconds apart. */
    uint64_t iters = size_iters(mix_thr_0, pes_calib_repeat_seconds(p) / 4);
    unsigned rounds = p->repeats < MAX_REPEATS ? p->repeats : MAX_REPEATS;
    double best[MIX_LAYOUTS], v[MAX_REPEATS];
    for (unsigned k = 0; k < MIX_LAYOUTS; k++)
        best[k] = INFINITY;
    for (unsigned r = 0; r < rounds; r++) {
        /* rounds 2 ms apart: some of a sibling's busy spells last
         * milliseconds, and rounds spread out fall between them */
        if (r)
            nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
        double round_best = INFINITY;
        for (unsigned k = 0; k < MIX_LAYOUTS; k++) {
            double t0 = pes_calib_now();
            mix_layouts[k](iters);
            double c = (pes_calib_now() - t0) * ghz * 1e9 / (OPS * (double)iters);
            best[k] = fmin(best[k], c);
            round_best = fmin(round_best, c);
        }
        v[r] = round_best; /* the spread reported: of the rounds' best placements */
    }
    double fastest = INFINITY, slowest = 0; /* of the placements, each its fastest round */
    for (unsigned k = 0; k < MIX_LAYOUTS; k++) {
        fastest = fmin(fastest, best[k]);
        slowest = fmax(slowest, best[k]);
    }
    char method[160];
    snprintf(method, sizeof method,
             "independent adds, addsd and L1 loads 4:2:2, %u placements (the slowest %.0f %% "
             "slower), fastest of %u rounds",
             (unsigned)MIX_LAYOUTS, 100.0 * (slowest / fastest - 1.0), rounds);
    pes_calib_figure_from(f, v, rounds, method); /* the fastest round: the fastest placement */
    return 0;
#else
    (void)ghz;
    (void)p;
    (void)f;
    return pes_error_set(err, PES_ERR_ARG, 0, "no issue-width probe for this architecture");
#endif
}

static void keep(struct pes_calib_figure *f, double v, const char *why)
{
    memset(f, 0, sizeof *f);
    f->value = f->median = v;
    f->measured = 0;
    snprintf(f->method, sizeof f->method, "%s", why);
}

int pes_calib_measure_op(int op, double ghz, const struct pes_calib_plan *p,
                         const struct pes_machine *def, struct pes_calib_figure *lat,
                         struct pes_calib_figure *thr, struct pes_error *err)
{
    if (op < 0 || op >= PES_OP_COUNT || !def || !lat || !thr || !(ghz > 0))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_calib_measure_op: bad arguments");
    const char *kept = "kept: the documented default (docs/model.md, Calibration)";
    keep(lat, def->op_latency[op], kept);
    keep(thr, def->op_recip_throughput[op], kept);
#if HAVE_CHAINS
    switch (op) {
    case PES_OP_INT_ADD:
    case PES_OP_OTHER:
        time_ops(add_lat32, OPS, ghz, p, "dependent add chain (the clock's own: 1 by definition)",
                 lat);
        time_ops(add_thr, OPS, ghz, p, "8 independent add chains", thr);
        if (op == PES_OP_OTHER) {
            snprintf(lat->method, sizeof lat->method,
                     "as int_add: moves, logic, compares are 1-cycle ALU ops");
            snprintf(thr->method, sizeof thr->method, "as int_add (8 independent add chains)");
        }
        break;
    case PES_OP_INT_MUL:
        time_ops(mul_lat, OPS, ghz, p, "dependent imul r64 chain", lat);
        time_ops(mul_thr, OPS, ghz, p, "8 independent imul r64 chains", thr);
        break;
    case PES_OP_INT_DIV:
        time_ops(div_lat, OPS, ghz, p, "dependent 32-bit div chain (123456789 / 1)", lat);
        time_ops(div_thr, OPS, ghz, p, "independent 32-bit divs (123456789 / 1)", thr);
        break;
    case PES_OP_FP_ADD:
        time_ops(fadd_lat, OPS, ghz, p, "dependent addsd chain", lat);
        time_ops(fadd_thr, 24.0, ghz, p, "12 independent addsd chains", thr);
        break;
    case PES_OP_FP_MUL:
        time_ops(fmul_lat, OPS, ghz, p, "dependent mulsd chain", lat);
        time_ops(fmul_thr, 24.0, ghz, p, "12 independent mulsd chains", thr);
        break;
    case PES_OP_FP_DIV:
        time_ops(fdiv_lat, OPS, ghz, p, "dependent divsd chain", lat);
        time_ops(fdiv_thr, 24.0, ghz, p, "12 independent divsd chains", thr);
        break;
    case PES_OP_STORE:
        time_ops(store_thr, OPS, ghz, p, "8-byte stores to one L1 line", thr);
        keep(lat, def->op_latency[op],
             "kept: nothing waits on a store's result (Eq. 5 charges memory)");
        break;
    case PES_OP_BRANCH:
        time_ops(branch_thr, OPS, ghz, p, "taken jumps, always predicted", thr);
        keep(lat, def->op_latency[op], "kept: a predicted branch produces no value to wait for");
        break;
    case PES_OP_CALL:
        time_ops(call_pair, OPS, ghz, p, "call + ret pairs", thr);
        *lat = *thr;
        snprintf(lat->method, sizeof lat->method,
                 "as its throughput: call + ret pairs back to back");
        break;
    default: /* PES_OP_LOAD: the caller's L1 figures */
        break;
    }
#else
    (void)p;
    const char *none = "kept: no instruction probe for this architecture";
    snprintf(lat->method, sizeof lat->method, "%s", none);
    snprintf(thr->method, sizeof thr->method, "%s", none);
#endif
    return 0;
}
