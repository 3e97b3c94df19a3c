/*
 * progress.h — a progress line on stderr for replays that take a while: the
 * share done, the rate and the time left, redrawn a few times a second once
 * the work has run for a second, and only when stderr is a terminal (so logs,
 * pipes and CI output never hold it). PES_PROGRESS=0 turns it off,
 * PES_PROGRESS=always draws it at once (tests).
 */
#ifndef PES_REPLAY_PROGRESS_H
#define PES_REPLAY_PROGRESS_H

#include <stdint.h>

struct replay_progress;

/* A progress line for `total` units (0: unknown; then no share and no time
 * left) of `what` ("accesses", "events"); NULL when no line is to be drawn
 * (or without memory): every call below takes NULL and does nothing. */
struct replay_progress *replay_progress_start(const char *name, uint64_t total, const char *what);
/* Another n units done; cheap (the clock is read every 64th call). */
void replay_progress_add(struct replay_progress *p, uint64_t n);
/* The total grew (another configuration to replay). */
void replay_progress_more(struct replay_progress *p, uint64_t total);
/* Erases the line before a message goes to stderr (it is drawn again later). */
void replay_progress_clear(struct replay_progress *p);
/* Clears the line (the report follows on stdout, warnings on stderr). */
void replay_progress_end(struct replay_progress *p);

#endif
