/*
 * pes/model.h — machine descriptions and the analytical cache/runtime model.
 *
 *  - struct pes_machine: a CPU's cache hierarchy, latencies/throughputs and
 *    instruction costs; loaded from presets (model/machines/NAME.machine), read
 *    from the host's sysfs, or overridden by a cache spec "L1=32K:8,L2=256K:8".
 *    The cache simulator (replay) uses the same description.
 *  - SDCM hit rates (PPT-Multicore Eq. 1–3, after Brehob & Enbody) from reuse
 *    profiles; the hierarchy latency/throughput and runtime model (Eq. 4–8).
 *
 * Errors: functions return 0 / -1 and fill struct pes_error (pes/trace.h).
 */
#ifndef PES_MODEL_H
#define PES_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PES_MAX_LEVELS 4

/* One cache level of the modelled machine. */
struct pes_cache_config {
    uint64_t size;              /* bytes */
    uint32_t ways;              /* associativity; 1 = direct-mapped; 0 = fully associative */
    uint32_t line;              /* bytes */
    uint32_t shared;            /* 0: private per core; 1: shared by the cores of a socket */
    double latency;             /* cycles for a hit at this level (delta_i, Eq. 6) */
    double recip_throughput;    /* cycles per line at this level (beta_i, Eq. 7) */
};

struct pes_machine {
    char name[64];
    double ghz;                 /* core clock */
    uint32_t sockets;
    uint32_t cores_per_socket;
    uint32_t n_levels;          /* data/unified levels, L1 first */
    struct pes_cache_config level[PES_MAX_LEVELS];
    double mem_latency;         /* cycles */
    double mem_recip_throughput;/* cycles per line from DRAM */
    /* Instruction costs for T_CPU (PPT-Multicore Eq. 8), cycles, per enum pes_op_class. */
    double op_latency[PES_OP_COUNT];
    double op_recip_throughput[PES_OP_COUNT];
};

#ifdef __cplusplus
}
#endif
#endif /* PES_MODEL_H */
