/*
 * page_prd.h — the PRD of every stream at page granularity (the runtime
 * model's TLB term, reuse.c) when pes-replay-mpi reads the trace in parts:
 * the process of the first part pushes its pages straight into one engine
 * per stream; a later part makes, per stream, a PARDA summary of its pages
 * (parda.h: final distances of the reuses inside the part, its first access
 * to each page pending, its pages by last access), which the first part's
 * process resolves against its engines part after part. The histograms are
 * those of one engine over the whole stream.
 */
#ifndef PES_REPLAY_PAGE_PRD_H
#define PES_REPLAY_PAGE_PRD_H

#include "histogram.h"
#include "stream.h"

struct replay_page_prd;

/* page: bytes, a power of two; later: this process reads a part after the
 * first. NULL with err filled. */
struct replay_page_prd *replay_page_prd_create(uint32_t page, uint32_t n_streams, int later,
                                               struct pes_error *err);
void replay_page_prd_destroy(struct replay_page_prd *p);
/* The batch's accesses, in order (each page an access touches). 0 or -1. */
int replay_page_prd_batch(struct replay_page_prd *p, const struct pes_batch *b,
                          struct pes_error *err);
/* A later part, after its last batch: its summaries, ready to pack. 0 or -1. */
int replay_page_prd_end(struct replay_page_prd *p, struct pes_error *err);
/* The summaries as bytes (after end): the size, and the bytes when cap holds them. */
size_t replay_page_prd_pack(const struct replay_page_prd *p, void *buf, size_t cap);
/* The first part's process: a later part's bytes, parts in stream order. 0 or -1. */
int replay_page_prd_merge(struct replay_page_prd *p, const void *buf, size_t len,
                          struct pes_error *err);
/* All streams' histogram so far into h (initialised here). 0 or -1. */
int replay_page_prd_total(struct replay_page_prd *p, struct pes_rd_hist *h, struct pes_error *err);

#endif
