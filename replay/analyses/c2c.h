/*
 * c2c.h — the cache-line table (in the manner of perf c2c): the lines with
 * the most coherence traffic, and per line the offsets touched, by which
 * threads, from which source lines and data objects, with true/false
 * sharing counts, so that the fix (padding, moving a field) can be read off.
 *
 * Fed with coherence events (the simulator's, sim.c, or a sampled trace's
 * communication events, sampled_c2c.c) and with accesses. A line is tracked
 * from its first event on (its accesses before the one causing it are not counted), at
 * most REPLAY_C2C_MAX_LINES lines and REPLAY_C2C_MAX_OFFSETS offset rows
 * per line (later ones are counted as "untracked"): state stays bounded.
 * docs/simulation.md, "Cache-line table".
 */
#ifndef PES_REPLAY_C2C_H
#define PES_REPLAY_C2C_H

#include <stdint.h>

#include "report.h"
#include "stream.h"

#define REPLAY_C2C_MAX_LINES   (1u << 16)
#define REPLAY_C2C_MAX_OFFSETS 16u

enum replay_c2c_event {
    REPLAY_C2C_INVALIDATION = 0,
    REPLAY_C2C_COHERENCE_MISS = 1,
    REPLAY_C2C_TRANSFER = 2
};

struct replay_c2c_access {
    uint64_t addr;
    uint32_t size; /* bytes, 0 counts as 1 */
    uint32_t thread;
    uint32_t site;          /* UINT32_MAX: unknown */
    uint32_t object;        /* 0: unknown */
    uint64_t object_offset; /* of addr inside the object */
    uint8_t is_read, is_write;
};

struct replay_c2c;

/* NULL without memory. line: the line size in bytes (a power of two). */
struct replay_c2c *replay_c2c_create(uint32_t line);
void replay_c2c_destroy(struct replay_c2c *c);
/* A coherence event on the line whose first byte is line_addr, caused by
 * access a (the writer of an invalidation, the missing access of a
 * coherence miss, the requester of a transfer), the seq-th access of the
 * stream (counting from 0 as replay_c2c_access does; the caller may report
 * events of accesses it passes to replay_c2c_access later). */
void replay_c2c_event(struct replay_c2c *c, uint64_t line_addr, const struct replay_c2c_access *a,
                      enum replay_c2c_event kind, int is_true, uint64_t seq);
/* The next access, counted on the tracked lines it touches whose first
 * event came from it or an earlier access: the counts do not depend on how
 * the stream is cut into batches. Call it for every access, in order. */
void replay_c2c_access(struct replay_c2c *c, const struct replay_c2c_access *a);
/* L1 misses of a tracked line by cause, in the order of enum
 * pes_sim_miss_class (mesi.h: compulsory, capacity, coherence, conflict),
 * counted as its accesses are (from its first event on); a line not tracked
 * counts nothing. The seq-th access of the stream missed, after its events. */
#define REPLAY_C2C_MISS_CAUSES 4
void replay_c2c_miss(struct replay_c2c *c, uint64_t line_addr, unsigned cause, uint64_t seq);
/* The rows publish those counts ("l1_miss_classes"): the simulation's table. */
void replay_c2c_count_misses(struct replay_c2c *c);
/* Accesses passed so far (the seq of the next one). */
uint64_t replay_c2c_now(const struct replay_c2c *c);

/* Whether any line is tracked yet (replay_c2c_access counts nothing before). */
int replay_c2c_tracking(const struct replay_c2c *c);
/* One address partition of the simulation (mesi.h): this table takes only
 * the lines whose low `bits` bits of the line number are `part`. Before the
 * first event. */
void replay_c2c_set_partition(struct replay_c2c *c, uint32_t bits, uint32_t part);
/* replay_c2c_access for the seq-th access of the stream, when the table
 * sees only some of them (a partition's). */
void replay_c2c_access_at(struct replay_c2c *c, const struct replay_c2c_access *a, uint64_t seq);
/* Adds the table of another partition of the same stream: the lines of
 * both, and of the lines beyond REPLAY_C2C_MAX_LINES those the whole
 * stream would have met last (by first event, then address) untracked, as
 * one table fed the whole stream would hold them. 0, or -1 without memory. */
int replay_c2c_absorb(struct replay_c2c *dst, struct replay_c2c *src);
/* The table as bytes (host byte order: pes-replay-mpi), their size (buf
 * NULL or cap too small: only the size); and replay_c2c_absorb of a table
 * so packed: 0, or -1 (cut short: PES_ERR_FORMAT; no memory). */
size_t replay_c2c_pack(const struct replay_c2c *c, void *buf, size_t cap);
int replay_c2c_absorb_packed(struct replay_c2c *dst, const void *buf, size_t len,
                             struct pes_error *err);
/* The top lines by invalidations + coherence misses + transfers as the
 * array "cache_lines" of parent, and "cache_lines_untracked" (events on
 * lines beyond the cap). */
void replay_c2c_publish(const struct replay_c2c *c, struct pes_report *r, struct pes_rnode *parent,
                        const struct pes_stream_info *si, uint32_t top);

#endif
