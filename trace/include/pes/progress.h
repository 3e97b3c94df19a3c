/*
 * pes/progress.h — a progress line on stderr for work that takes a while
 * (pes-replay's replays, pes-dump --stats, the runtime finishing a trace
 * after the program exited): the share done, the rate and the time left,
 * redrawn a few times a second once the work has run for a second, and only
 * when stderr is a terminal (so logs, pipes and CI output never hold it).
 * PES_PROGRESS=0 turns it off, PES_PROGRESS=always draws it at once (tests).
 * Part of libpes_trace so that every command (and the runtime) shares it; not
 * installed.
 */
#ifndef PES_PROGRESS_H
#define PES_PROGRESS_H

#include <stdint.h>

struct pes_progress;

/* A progress line for `total` units (0: unknown; then no share and no time
 * left) of `what` ("accesses", "events"); NULL when no line is to be drawn
 * (or without memory): every call below takes NULL and does nothing. */
struct pes_progress *pes_progress_start(const char *name, uint64_t total, const char *what);
/* Another n units done; cheap (the clock is read every 64th call). */
void pes_progress_add(struct pes_progress *p, uint64_t n);
/* The work done so far is `done` units (for callers that poll a few times a
 * second instead of adding as they go: the clock is read on every call). */
void pes_progress_update(struct pes_progress *p, uint64_t done);
/* The total grew (another configuration to replay). */
void pes_progress_more(struct pes_progress *p, uint64_t total);
/* Erases the line before a message goes to stderr (it is drawn again later). */
void pes_progress_clear(struct pes_progress *p);
/* Clears the line (the report follows on stdout, warnings on stderr). */
void pes_progress_end(struct pes_progress *p);

#endif
