/*
 * part_link.h — pes-replay --parts: the parts of pes-replay-mpi's ranks
 * (replay_run.h, struct replay_hooks) as threads of one process, with an
 * in-process transport in place of MPI (docs/replay.md, "Replay threads").
 *
 * Part k of P reads only its time range of the trace, runs the engines over
 * its windows and hands each window summary, then its part's counts, to
 * part 0 by pointer (no copy); part 0 resolves them in order after its own
 * part, exactly as rank 0 does. A part that fails hands its error over in
 * place of its next message; when part 0 fails, the others stop at their
 * next batch, and part 0 frees what they still hand over.
 */
#ifndef PES_REPLAY_PART_LINK_H
#define PES_REPLAY_PART_LINK_H

#include "replay_run.h"

struct replay_part_link;

/* A link between `parts` (>= 2) parts whose windows hold `window` accesses.
 * NULL with err filled (out of memory). */
struct replay_part_link *replay_part_link_create(uint32_t parts, uint64_t window,
                                                 struct pes_error *err);
void replay_part_link_destroy(struct replay_part_link *l);
/* Part k's hooks and split, pointing into the link (parts_begin and
 * parts_end stay NULL: the caller starts the threads). */
const struct replay_hooks *replay_part_link_hooks(struct replay_part_link *l, uint32_t k);

/* pes-replay --parts yes --jobs N: the report of replay_full(o, m, NULL),
 * read in `parts` parts on as many threads where the report allows it
 * (else on this thread alone, with o's workers). 0, or 1 after printing
 * the error, as replay_full. */
int replay_parts_run(const struct replay_options *o, const struct pes_machine *m, uint32_t parts);

#endif
