/*
 * mock_rt.h — query side of the mock pes runtime used by the pass tests
 * (tests/e2e/pass/mock_rt.c). The mock keeps every record in one big static
 * array; the test program walks it after its kernels ran and compares with
 * hand-derived expectations.
 */
#ifndef PES_MOCK_RT_H
#define PES_MOCK_RT_H

#include <stdint.h>
#include "pes/rt_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One decoded record as the mock saw it. */
struct mock_rec {
    int thread;                        /* 1-based, order of first record */
    uint64_t addr;
    uint32_t id, extra;
    const struct pes_rt_module *module; /* NULL for control records */
    const struct pes_rt_site *site;    /* access records */
    const struct pes_rt_bb *bb;        /* BB entry records (and the site's block) */
    uint32_t bb_local;                 /* module-local block index */
};

typedef void (*mock_visit_fn)(const struct mock_rec *r, void *ctx);
/* Calls fn for every record, thread by thread, each thread in program order. */
void mock_foreach(mock_visit_fn fn, void *ctx);

/* Decodes a global id (site, block; control ids give module == NULL). 0 if unknown. */
int mock_lookup(uint32_t id, struct mock_rec *out);

/* String of a module's string table. */
const char *mock_str(const struct pes_rt_module *m, uint32_t off);

uint64_t mock_slow_calls(void);
/* Loop chunks handed to __pes_loop_flush so far (all threads). */
uint64_t mock_loop_chunks(void);
/* Those among them of mixed bodies (irregular addresses, pes/rt_abi.h). */
uint64_t mock_mixed_chunks(void);
/* The calling thread's __pes_tls.descriptors (after its first record). */
void mock_set_descriptors(int on);
int mock_threads(void);
int mock_modules(void);
/* The i-th registered module (0 .. mock_modules() - 1), NULL beyond. */
const struct pes_rt_module *mock_module(int i);
/* Registration / decoding problems found so far (0 = none). */
int mock_errors(void);

#ifdef __cplusplus
}
#endif

#endif
