/* Shared by the probe files of pes_calibrate (not installed): the clock,
 * how long a repeat runs, a figure from repeats, and the streaming kernel. */
#ifndef PES_CALIBRATE_PROBE_H
#define PES_CALIBRATE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "pes/calibrate.h"

/* Probe kernels are measured as written: no sanitizer checks inside them. */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define PROBE __attribute__((noinline, no_sanitize("address", "thread", "undefined")))
#else
#define PROBE __attribute__((noinline))
#endif

#define MAX_REPEATS  64
#define PROBE_HIDDEN __attribute__((visibility("hidden")))

/* CLOCK_MONOTONIC in seconds. */
PROBE_HIDDEN double pes_calib_now(void);
/* The target duration of one repeat. */
PROBE_HIDDEN double pes_calib_repeat_seconds(const struct pes_calib_plan *p);
/* Fills f from the per-repeat costs v[0..n) (lower is better). */
PROBE_HIDDEN void pes_calib_figure_from(struct pes_calib_figure *f, double *v, unsigned n,
                                        const char *method);
/* Reads `bytes` bytes, one load per 64-byte line, of the window [0, window)
 * of w (window a multiple of 4 KiB) from byte offset *off on, wrapping;
 * *off moves on. */
PROBE_HIDDEN void pes_calib_stream_lines(const volatile uint64_t *w, size_t window, size_t *off,
                                         size_t bytes);

#endif
