/*
 * pes/rt_abi.h — the contract between code instrumented by the pes LLVM pass
 * and the pes runtime (libpes-rt). The pass emits IR that matches these
 * layouts byte for byte (llvm-pass/pes_emit.cpp, pes_clone.cpp); change both
 * together and bump PES_RT_ABI_VERSION.
 *
 * Every instrumented function exists twice (Arnold & Ryder, PLDI 2001):
 *
 * - the CHECK clone keeps only a per-thread countdown. At the start of each
 *   segment (a basic block, cut after every call and before every gather or
 *   scatter whose lane count is dynamic, so a longjmp or exception never
 *   leaves a segment half counted) it subtracts the segment's weight:
 *
 *       if ((__pes_tls.countdown -= W) < 0)        // rare
 *           if (__pes_check_due(W))                // sample due in this segment,
 *               goto same segment in RECORDING;    // full trace, ...
 *
 *   W = (loads + stores) << 24 | stores over the segment's accesses (an access
 *   that reads and writes counts in both). The runtime decodes the countdown's
 *   drop into exact load and store counts (the stores field borrows into the
 *   other; the difference of two countdown values stays exact), so per-thread
 *   counts stay exact without a record per access.
 *
 * - the RECORDING clone is the full-trace path, emitted inline *after* every
 *   instrumented access (so a sample is taken after the access, as PEBS
 *   reports it), plus a basic-block record at each block entry:
 *
 *       struct pes_record *cur = __pes_tls.cursor;
 *       if (cur >= __pes_tls.limit)            // rare: buffer full, time mark, sample due
 *           __pes_record_slow(addr, id | (uint64_t)extra << 32);
 *       else {
 *           cur->addr = addr; cur->id = id; cur->extra = extra;
 *           __pes_tls.cursor = cur + 1;
 *       }
 *
 * Switching: a function starts in RECORDING if __pes_tls.recording is non-zero,
 * else in CHECK; the check path enters RECORDING only through
 * __pes_check_due; the recording clone returns to CHECK at loop headers (and
 * calls) once the runtime cleared `recording`. A full trace keeps `recording`
 * set for the whole run; sampling sets it for the one segment that holds the
 * sampled access; with the collector off the countdown never runs out and
 * the program runs its check clones: one subtract and branch per segment.
 *
 * A new thread's __pes_tls is all zero: its first segment finds the countdown
 * negative and __pes_check_due sets the thread up. A function the pass could
 * not clone (address-taken blocks) has only the recording form; its records
 * then land in a per-thread scratch buffer whose limit keeps the counts exact.
 *
 * Call edges (ABI 5): the recording clone also brackets each call that can
 * reach instrumented code with {sp, PES_ID_CALL, call site} before it and
 * {sp, PES_ID_RETURN, 0} where it returns or unwinds (pes/trace.h, "Call
 * edges"), through the same inline path. Call sites (kind PES_KIND_CALL) sit
 * in the site table after their block's access sites, weigh nothing in the
 * check path and are never a record's id.
 *
 * Block facts for the runtime model (ABI 6): struct pes_rt_bb gains forks,
 * barriers, instrs[] and chain[] (pes/trace.h, struct pes_bb). The runtime
 * registers only modules of its own ABI version (rt_modules.c): a module
 * built by an older pass is refused with a message naming both versions, so
 * such a program must be rebuilt with the matching pes-clang.
 *
 * Ids: `id` is global: *module->id_base + local id, where local ids
 * 0..n_sites-1 are sites and n_sites..n_sites+n_bbs-1 are basic blocks.
 * Control ids (PES_ID_TIME, region markers) are defined in pes/trace.h.
 */
#ifndef PES_RT_ABI_H
#define PES_RT_ABI_H

#include <stdint.h>
#include "pes/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PES_RT_ABI_VERSION 6u

/* Per-thread state read inline by instrumented code (initial-exec TLS). */
struct pes_rt_tls {
    struct pes_record *cursor; /* next free record */
    struct pes_record *limit;  /* slow path when cursor >= limit */
    int64_t countdown;         /* check path: __pes_check_due when it drops below 0 */
    uint32_t recording;        /* non-zero: functions start in their recording clone */
    uint32_t descriptors;      /* non-zero: loops the pass gave descriptors write loop
                                  descriptors (__pes_loop_flush) instead of their records */
};

/*
 * A loop chunk as the recording clone of a descriptor loop fills it on its
 * stack (llvm-pass/pes_loops.cpp): the loop's body is one block with m
 * records per iteration (its block record, then one per access). tmpl[j] is
 * the j-th record of the chunk's first iteration; step[j] (stored right after
 * tmpl[m-1]) is the change of tmpl[j].addr from one iteration to the next (0
 * for the block record; unset when iterations is 1). The chunk's records are,
 * in order, for i = 0 .. iterations-1 and j = 0 .. m-1:
 * {tmpl[j].addr + i * step[j], tmpl[j].id, tmpl[j].extra}.
 *
 * A mixed body (ABI 5) also has records whose address is not affine (an
 * indirect a[idx[i]], a pointer chase): bit j of `irregular` set. Their
 * addresses follow the steps, one per irregular record and iteration,
 * iteration-major: addr[i * k + r] for the r-th irregular position of
 * iteration i, k = popcount(irregular); tmpl[j].addr and step[j] of such a
 * position are unused. The address array holds PES_RT_LOOP_ADDRS, so a chunk
 * of a mixed body has at most PES_RT_LOOP_ADDRS / k iterations.
 */
#define PES_RT_LOOP_MAX   PES_LOOP_MAX_RECORDS
#define PES_RT_LOOP_ADDRS 128u /* 1 KiB of stack per mixed loop */
struct pes_rt_loop {
    uint64_t iterations; /* complete iterations in the chunk, >= 1 */
    uint32_t m;          /* records per iteration, 1 .. PES_RT_LOOP_MAX */
    uint32_t reserved;
    uint64_t irregular;       /* bit j: record j's addresses are in the address array */
    struct pes_record tmpl[]; /* m templates, then m int64_t steps, then the addresses */
};
static inline int64_t *pes_rt_loop_steps(struct pes_rt_loop *d)
{
    return (int64_t *)(void *)&d->tmpl[d->m];
}
static inline uint64_t *pes_rt_loop_addrs(struct pes_rt_loop *d)
{
    return (uint64_t *)(void *)(pes_rt_loop_steps(d) + d->m);
}

/* Segment weight of the check path: (loads + stores) << PES_RT_WEIGHT_SHIFT | stores. */
#define PES_RT_WEIGHT_SHIFT 24

/* A site as the pass emits it (constant data in the instrumented module). */
struct pes_rt_site {
    uint32_t line;
    uint16_t column;
    uint8_t kind;      /* enum pes_access_kind */
    uint8_t flags;     /* enum pes_site_flags */
    uint32_t size;     /* bytes, 0 = variable (length in record.extra) */
    uint32_t bb;       /* module-local basic-block index (0..n_bbs-1) */
    uint32_t file;     /* offset into strtab */
    uint32_t function; /* offset into strtab */
};

/* A basic block as the pass emits it. The fields after ops (ABI 6) are
 * pes_bb's of the same names (pes/trace.h); flags has PES_BB_MODEL_FACTS
 * when the pass filled them. */
struct pes_rt_bb {
    uint32_t function; /* offset into strtab */
    uint32_t label;    /* offset into strtab */
    uint32_t n_sites;
    uint32_t flags; /* PES_BB_PARALLEL, PES_BB_MODEL_FACTS */
    uint32_t ops[PES_OP_COUNT];
    uint32_t forks;
    uint32_t barriers;
    uint32_t instrs[PES_OP_COUNT];
    uint32_t chain[PES_OP_COUNT];
};

/* One instrumented translation unit; registered by a module constructor. */
struct pes_rt_module {
    uint32_t abi_version; /* PES_RT_ABI_VERSION */
    uint32_t n_sites;
    uint32_t n_bbs;
    uint32_t strtab_size;
    const struct pes_rt_site *sites;
    const struct pes_rt_bb *bbs;
    const char *strtab; /* NUL-separated strings */
    const char *name;   /* translation unit source file */
    uint32_t *id_base;  /* written by __pes_register_module before any record */
};

extern __thread struct pes_rt_tls __pes_tls __attribute__((tls_model("initial-exec")));

/* The two slow paths below follow clang's preserve_most convention on x86-64:
 * they save every general-purpose register they use except r11 (vector
 * registers are not saved), so instrumented code keeps its values in
 * caller-saved registers across these rare calls instead of holding them in
 * more callee-saved registers or spilling them, which would make its stack
 * frames larger (docs/llvm-pass.md, "Stack frames"). Arguments and results are
 * passed as in the C convention, so a caller that assumes the C convention is
 * correct too. A preserve_most caller must not reach them through a lazily
 * bound PLT entry: the dynamic linker's resolver follows the C convention and
 * clobbers r10 (LLVM issue 105588). The pass calls them through the GOT
 * (nonlazybind); C callers compile with -fno-plt or link with -z now. The
 * runtime's definitions must carry the attribute: it is built with clang. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(preserve_most)
#define PES_RT_SLOW_CC __attribute__((preserve_most))
#endif
#endif
#ifndef PES_RT_SLOW_CC
#define PES_RT_SLOW_CC
#endif

/* Records one access (or BB/control record) when the inline check fails. */
PES_RT_SLOW_CC void __pes_record_slow(uint64_t addr, uint64_t id_and_extra);
/* The check path's countdown dropped below 0 at the start of a segment of
 * weight `weight` (already subtracted, nothing of the segment executed yet).
 * Returns non-zero if the segment must run in the recording clone. */
PES_RT_SLOW_CC int __pes_check_due(int64_t weight);
/* A chunk of a descriptor loop is complete (at most one time interval of
 * records, or the loop ended): appends its records, as a loop descriptor
 * (pes/trace.h) cut where time marks and buffer ends fall. The recording clone
 * sizes its next chunk from __pes_tls: max(0, limit - cursor) / m + 1 iterations
 * (limit - cursor in records), at most PES_RT_LOOP_ADDRS / k for a mixed body,
 * so a chunk reaches past the next time mark or buffer end by less than one
 * iteration, and the runtime cuts it there.
 * Called only while __pes_tls.descriptors is set. */
PES_RT_SLOW_CC void __pes_loop_flush(struct pes_rt_loop *d);

/* Assigns the module its id range and adds its tables to the trace(s).
 * Called from a constructor with priority PES_RT_CTOR_PRIORITY. */
void __pes_register_module(struct pes_rt_module *m);
#define PES_RT_CTOR_PRIORITY 101

/* The PES_* environment the runtime reads at start-up (set by pes-collect):
 * one row each in trace/src/settings.c (pes/settings.h). */

#ifdef __cplusplus
}
#endif
#endif /* PES_RT_ABI_H */
