/* Private helpers of the model library (not installed, not part of the API). */
#ifndef PES_MODEL_INTERNAL_H
#define PES_MODEL_INTERNAL_H

#include "pes/model.h"

#define PES_HIDDEN __attribute__((visibility("hidden")))

/* Fills err (may be NULL) with code and a printf-style one-line message; returns -1. */
PES_HIDDEN int pes_model_fail(struct pes_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Generic costs used for the host and for levels added by a cache spec
 * (documented in docs/model.md as generic, not measured). */
PES_HIDDEN void pes_model_generic_level(struct pes_cache_config *c, unsigned level);
PES_HIDDEN void pes_model_generic_costs(struct pes_machine *m);

/* Parses "32K", "20M", "1G", "4096" (binary suffixes, optional trailing 'B').
 * Returns 0, or -1 if s is not such a size or overflows. */
PES_HIDDEN int pes_model_parse_size(const char *s, uint64_t *out);
/* Parses a finite double that fills the whole string. */
PES_HIDDEN int pes_model_parse_double(const char *s, double *out);
/* Parses a decimal unsigned integer that fills the whole string. */
PES_HIDDEN int pes_model_parse_u64(const char *s, uint64_t *out);

#endif
