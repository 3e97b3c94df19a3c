/*
 * sampled_results.h — what the sampled analyses export to the analyses after
 * them in the registry (analysis.h: such an analysis finds the other with
 * pes_sibling in its link and reads it from its finish on), and all of
 * their results gathered in one record (struct replay_sampled, sampled.h)
 * for the accuracy join (accuracy.c) and the tests.
 *
 * A sampled analysis that only publishes exports nothing and has no line
 * here (sampled_bytes.c).
 */
#ifndef PES_REPLAY_SAMPLED_RESULTS_H
#define PES_REPLAY_SAMPLED_RESULTS_H

#include "analysis.h"
#include "sampled.h"

/* sampled_counts.c: each thread's counts (struct replay_sampled_thread's
 * loads to lost; valid as the events come, final after the last batch) and
 * the trace's samples. */
const struct replay_sampled_thread *replay_sampled_counts_threads(const void *counts);
uint64_t replay_sampled_counts_samples(const void *counts);
/* Its fields of the record (sampled.h names them); s->thread has n_threads rows. */
void replay_sampled_counts_export(const void *counts, struct replay_sampled *s);

/* sampled_reuse.c: a thread's N-hat (Kac), after finish. */
double replay_sampled_reuse_n_distinct(const void *reuse, uint32_t thread);
void replay_sampled_reuse_export(const void *reuse, struct replay_sampled *s);

/* sampled_comm.c: its fields, the matrices copied (0, or -1 without memory). */
int replay_sampled_comm_export(const void *comm, struct replay_sampled *s, struct pes_error *err);

/* sampled_sites.c: the sites with events, copied (0, or -1 without memory). */
int replay_sampled_sites_export(const void *sites, struct replay_sampled *s, struct pes_error *err);

/* The record of the sampled analyses that ran on the stream si (their
 * finish done): the settings of si's header, the intervals' terms ci, the
 * periods of si's weights, then each analysis's export. s owns its arrays
 * (replay_sampled_free) when this returns 0; -1 with err filled (out of
 * memory, or one of them did not run). */
int replay_sampled_gather(const struct pes_siblings *sib, const struct pes_stream_info *si,
                          const struct replay_ci *ci, struct replay_sampled *s,
                          struct pes_error *err);

#endif
