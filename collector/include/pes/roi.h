/*
 * pes/roi.h — regions of interest: mark the part of a program whose memory
 * accesses pes-collect should record.
 *
 *     #include <pes/roi.h>
 *     init(a);              // not recorded
 *     pes_roi_begin();
 *     compute(a);           // recorded
 *     pes_roi_end();
 *
 * Compiled by pes-clang (which defines __PES_CLANG__), the two calls go to
 * the pes runtime, and the program then records nothing before its first
 * pes_roi_begin() and nothing after the matching pes_roi_end(); begin/end
 * pairs nest (only the outermost pair counts) and may repeat; the region is
 * one per process and applies to all threads. Compiled by any other compiler
 * they are empty inline functions: no symbol is referenced, nothing more is
 * linked. Semantics and limits: docs/collector.md, "Regions of interest";
 * `pes-collect --no-roi` records the whole run in spite of the markers.
 */
#ifndef PES_ROI_H
#define PES_ROI_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__PES_CLANG__)
/* The runtime's entry points (libpes-rt). Weak: a program linked without the
 * runtime (PES_CLANG_NO_RT=1) still links and runs, with the markers inert. */
extern void __pes_roi_begin(void) __attribute__((weak));
extern void __pes_roi_end(void) __attribute__((weak));
/* Tells the runtime, before the first access is recorded, that this program
 * uses markers (it looks this symbol up at start-up). Weak: one definition
 * however many translation units include the header. */
extern char __pes_roi_used; /* declared first: -Wmissing-variable-declarations */
__attribute__((weak, used, visibility("default"))) char __pes_roi_used = 1;

static inline __attribute__((always_inline)) void pes_roi_begin(void)
{
    if (__pes_roi_begin)
        __pes_roi_begin();
}
static inline __attribute__((always_inline)) void pes_roi_end(void)
{
    if (__pes_roi_end)
        __pes_roi_end();
}
#else
static inline void pes_roi_begin(void) {}
static inline void pes_roi_end(void) {}
#endif

#ifdef __cplusplus
}
#endif
#endif /* PES_ROI_H */
