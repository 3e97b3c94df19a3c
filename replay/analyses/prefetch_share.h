/*
 * prefetch_share.h — the runtime model's prefetch fact (docs/model.md §3):
 * of the accesses that move a site to another line, the share made by sites
 * that walk memory with a constant stride the hardware prefetchers follow.
 *
 * A fill below L1 is nearly always an access to another line than its
 * site's previous one in that stream (an access to the same line hits the
 * line just brought in), so the line changes of a site stand for its fills.
 * A line change counts as prefetchable when the access's step from the
 * site's previous access equals the step before it (the stream's stride is
 * constant there) and is at most max_stride bytes either way. Per (stream,
 * site): the same site in two threads walks two streams.
 */
#ifndef PES_REPLAY_PREFETCH_SHARE_H
#define PES_REPLAY_PREFETCH_SHARE_H

#include "stream.h"

struct replay_prefetch;

/* line: bytes, a power of two; max_stride: bytes (> 0). NULL without memory. */
struct replay_prefetch *replay_prefetch_create(uint32_t line, double max_stride);
void replay_prefetch_destroy(struct replay_prefetch *p);
/* The batch's accesses, in order. 0, or -1 without memory. */
int replay_prefetch_batch(struct replay_prefetch *p, const struct pes_batch *b);
/* Parts (pes-replay-mpi): in a part after the first, each walk's first
 * access and its first access to another address need the state the parts
 * before left, so they wait (set_later before the first batch); the part
 * packs its counts and walks (pack: the size, and the bytes when cap holds
 * them), and the process of the first part merges each later part in
 * stream order: the waiting accesses counted against its walks, which then
 * take the part's last state. merge: 0, or -1 (malformed, or no memory). */
void replay_prefetch_set_later(struct replay_prefetch *p);
size_t replay_prefetch_pack(const struct replay_prefetch *p, void *buf, size_t cap);
int replay_prefetch_merge(struct replay_prefetch *p, const void *buf, size_t len);
/* Prefetchable line changes / all line changes (0 when there is none). */
double replay_prefetch_share(const struct replay_prefetch *p);
/* The counts behind the share. */
void replay_prefetch_counts(const struct replay_prefetch *p, uint64_t *changes,
                            uint64_t *prefetchable);

#endif
