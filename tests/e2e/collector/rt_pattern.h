/* rt_pattern.h — the record stream rt_prog emits and rt_check expects.
 * Worker k's i-th record (k = 0 for the main thread) is, by i % 5:
 *   0: module A site 0 (load)    1: A site 1 (store)    2: A site 2 (atomicrmw)
 *   3: module B site 0 (load, variable size, extra = i & 0xffff)
 *   4: basic-block record of A's block 1 (addr 0)
 * addr = (k + 1) << 40 | i * 8, so a trace thread names its worker. */
#ifndef RT_PATTERN_H
#define RT_PATTERN_H

#include <stdint.h>

#define RT_A_SITES 3u
#define RT_A_BBS 2u
#define RT_B_SITES 1u
#define RT_B_BBS 1u

struct rt_expect {
    int module;   /* 0 = A, 1 = B */
    uint32_t local;
    uint64_t addr;
    uint32_t extra;
};

static inline struct rt_expect rt_pattern(uint32_t k, uint64_t i)
{
    struct rt_expect e = {0, 0, ((uint64_t)(k + 1) << 40) | (i * 8), 0};
    switch (i % 5) {
    case 0: e.local = 0; break;
    case 1: e.local = 1; break;
    case 2: e.local = 2; break;
    case 3: e.module = 1; e.local = 0; e.extra = (uint32_t)(i & 0xffff); break;
    default: e.local = RT_A_SITES + 1; e.addr = 0; break;
    }
    return e;
}

#endif
