/* loop_pattern.h — what loop_prog's workers record and loop_check expects:
 * a fixed list of steps, each a plain record or a loop of m records per
 * iteration whose addresses are affine in the iteration, or irregular (a
 * mixed body: addresses the chunk carries, pes/rt_abi.h, struct pes_rt_loop). Worker k (1..) uses addresses from (k << 40) on; its
 * first record is a plain one at LP_BASE(k), which names the worker.
 *
 * A loop is either handed to the runtime as chunks the test chose (`chunks`
 * iterations each, 0 = the whole loop at once: larger than any buffer or
 * time interval of the tests) or cut as the pass cuts it (`pass_cut`): each
 * chunk max(1, (limit - cursor) / m) iterations, from __pes_tls, and at
 * most PES_RT_LOOP_ADDRS / k for k irregular records per iteration. */
#ifndef LOOP_PATTERN_H
#define LOOP_PATTERN_H

#include <stdint.h>

/* module sites (local ids), then its blocks */
enum { LP_LOAD, LP_STORE, LP_RMW, LP_COPY, LP_SITES };
enum { LP_BB_ENTRY = LP_SITES, LP_BB_BODY, LP_IDS };

#define LP_BASE(k) ((uint64_t)(k) << 40)
#define LP_MAX_M   64u
#define LP_STEPS   17

struct lp_tmpl {
    uint32_t local; /* site or block, module-local */
    uint64_t off;   /* address: LP_BASE(k) + off (blocks: 0) */
    int64_t step;
    uint32_t extra;
    int irregular; /* the address jumps about (lp_addr): not affine */
};

struct lp_step {
    uint32_t m; /* 0: a plain record (tmpl[0]) */
    uint64_t iterations;
    uint64_t chunks; /* iterations per chunk the test hands over; 0 = all */
    int pass_cut;    /* chunks as the pass sizes them */
    int inline_only; /* a loop the pass does not describe: a record per access, inline */
    struct lp_tmpl tmpl[LP_MAX_M];
};

/* Loads and stores of one record of a local id (the sites' kinds). */
static inline void lp_counts(uint32_t local, uint64_t *loads, uint64_t *stores)
{
    *loads += local == LP_LOAD || local == LP_RMW || local == LP_COPY;
    *stores += local == LP_STORE || local == LP_RMW;
}

/* The i-th step of worker k's list (i < LP_STEPS; LP_STEPS: the endless
 * loop loop_prog running adds). */
static inline struct lp_step lp_step(uint32_t k, int i)
{
    struct lp_step s = {0};
    (void)k;
    switch (i) {
    case 0: /* names the worker */
        s.tmpl[0] = (struct lp_tmpl){LP_LOAD, 0, 0, 0, 0};
        break;
    case 1: /* m = 1, one chunk of 1000 iterations */
        s.m = 1;
        s.iterations = 1000;
        s.tmpl[0] = (struct lp_tmpl){LP_LOAD, 0x1000, 8, 0, 0};
        break;
    case 2: /* m = 3: the block record, a load stepping down, a store stepping up */
        s.m = 3;
        s.iterations = 500;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_LOAD, 0x100000, -16, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_STORE, 0x200000, 4, 0, 0};
        break;
    case 3: /* one iteration: the steps are unset (junk here) */
        s.m = 3;
        s.iterations = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 12345, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_RMW, 0x300000, -777, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_COPY, 0x300100, 99, 24, 0};
        break;
    case 4:
        s.tmpl[0] = (struct lp_tmpl){LP_STORE, 8, 0, 0, 0};
        break;
    case 5: /* m = 64, the most a descriptor takes, handed over 5 iterations at a time */
        s.m = LP_MAX_M;
        s.iterations = 37;
        s.chunks = 5;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        for (uint32_t j = 1; j < LP_MAX_M; j++)
            s.tmpl[j] = (struct lp_tmpl){j % 4 == 0 ? LP_RMW : j % 2 ? LP_LOAD : LP_STORE,
                                         0x400000 + j * 0x1000, (int64_t)j * 8 - 200, 0, 0};
        break;
    case 6: /* cut as the pass cuts it */
        s.m = 2;
        s.iterations = 5000;
        s.pass_cut = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_RMW, 0x500000, 8, 0, 0};
        break;
    case 7: /* addresses wrap around 2^64 (relative to the base: offset near the top) */
        s.m = 2;
        s.iterations = 300;
        s.tmpl[0] = (struct lp_tmpl){LP_LOAD, (uint64_t)0 - LP_BASE(k) - 1000, 64, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_COPY, 0x600000, 0, 16, 0};
        break;
    case 8: /* small chunks of 2 iterations (shorter than a descriptor) */
        s.m = 3;
        s.iterations = 40;
        s.chunks = 2;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_LOAD, 0x700000, 8, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_LOAD, 0x700008, 8, 0, 0};
        break;
    case 9:
        s.tmpl[0] = (struct lp_tmpl){LP_RMW, 16, 0, 0, 0};
        break;
    case 11: /* inline records right after chunks: the limit must count the groups */
    case 13:
        s.m = 2;
        s.iterations = 3000;
        s.inline_only = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_STORE, 0xb00000, 24, 0, 0};
        break;
    case 12:
        s.m = 1;
        s.iterations = 777;
        s.tmpl[0] = (struct lp_tmpl){LP_LOAD, 0xc00000, -8, 0, 0};
        break;
    case LP_STEPS: /* loop_prog running: a loop that runs until the process exits */
        s.m = 4;
        s.iterations = UINT64_MAX / 8;
        s.pass_cut = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_LOAD, 0xd00000, 8, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_RMW, 0xe00000, 16, 0, 0};
        s.tmpl[3] = (struct lp_tmpl){LP_COPY, 0xf00000, -8, 32, 0};
        break;
    case 14: /* a mixed body cut as the pass cuts it: x[col[k]] * v[k], a histogram store */
        s.m = 5;
        s.iterations = 4000;
        s.pass_cut = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_LOAD, 0x1000000, 4, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_LOAD, 0x1100000, 0, 0, 1};
        s.tmpl[3] = (struct lp_tmpl){LP_LOAD, 0x1200000, 8, 0, 0};
        s.tmpl[4] = (struct lp_tmpl){LP_RMW, 0x1300000, 0, 0, 1};
        break;
    case 15: /* a mixed body in chunks of 7 iterations: the irregular record first */
        s.m = 2;
        s.iterations = 600;
        s.chunks = 7;
        s.tmpl[0] = (struct lp_tmpl){LP_STORE, 0x1400000, 0, 0, 1};
        s.tmpl[1] = (struct lp_tmpl){LP_COPY, 0x1500000, -24, 8, 0};
        break;
    case 10: /* a long loop cut as the pass cuts it: many buffers at default sizes */
        s.m = 4;
        s.iterations = 20000;
        s.pass_cut = 1;
        s.tmpl[0] = (struct lp_tmpl){LP_BB_BODY, 0, 0, 0, 0};
        s.tmpl[1] = (struct lp_tmpl){LP_LOAD, 0x800000, 8, 0, 0};
        s.tmpl[2] = (struct lp_tmpl){LP_LOAD, 0x900000, 8, 0, 0};
        s.tmpl[3] = (struct lp_tmpl){LP_STORE, 0xa00000, 8, 0, 0};
        break;
    default: /* the loop's exit block */
        s.tmpl[0] = (struct lp_tmpl){LP_BB_ENTRY, 0, 0, 0, 0};
        break;
    }
    return s;
}

/* The address of template j of step s in iteration i of worker k: an
 * irregular one is a hash of i in 64 KiB above its offset. */
static inline uint64_t lp_addr(uint32_t k, const struct lp_tmpl *t, uint64_t i)
{
    if (t->local >= LP_SITES)
        return 0;
    if (t->irregular)
        return LP_BASE(k) + t->off + ((i * 0x9E3779B97F4A7C15u) >> 48);
    return LP_BASE(k) + t->off + i * (uint64_t)t->step;
}

#endif
