/*
 * groups.h — `--by line|site|function|object|callpath`: the rows of a ranked
 * site table merged into one row per source line (the default), per function
 * or per data object, or kept one per site with labels that tell sites
 * apart. callpath: a full trace's rows are a line per call path reaching it
 * (callpaths.h); a sampled trace's rows are its samples' call paths
 * (sampled_sites.c ranks them; these groups do not apply).
 *
 * An analysis keeps its counts per key (a site id, or with --by object an
 * object id: it then keys its per-site engine by the batch's object column);
 * replay_groups_make says which group each key falls in, the analysis sums
 * its counts per group (means recomputed from the sums, never averaged) and
 * replay_group_publish writes the group's identity. docs/replay.md, "Rows".
 */
#ifndef PES_REPLAY_GROUPS_H
#define PES_REPLAY_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stream.h"

enum replay_by {
    REPLAY_BY_LINE = 0,
    REPLAY_BY_SITE = 1,
    REPLAY_BY_FUNCTION = 2,
    REPLAY_BY_OBJECT = 3,
    REPLAY_BY_CALLPATH = 4 /* full: a line per call path (callpaths.h); sampled: sampled_sites.c */
};

/* The --by value (NULL: line). */
enum replay_by replay_by_parse(const char *name);
const char *replay_by_name(enum replay_by by);

struct replay_groups {
    size_t n;         /* groups */
    uint32_t *of;     /* [keys] group of each key */
    uint32_t *member; /* key indexes, grouped: group g's are member[start[g] .. start[g+1]-1] */
    uint32_t *start;  /* [n + 1] */
    char **label;     /* [n] "file.c:32 main", "counters", ... */
};

/* Groups the n keys (site ids, or object ids with REPLAY_BY_OBJECT;
 * UINT32_MAX: unknown sites). 0, or -1 without memory (g then empty). */
int replay_groups_make(struct replay_groups *g, const struct pes_stream_info *si, enum replay_by by,
                       const uint32_t *keys, size_t n);
void replay_groups_free(struct replay_groups *g);

/* Group grp's identity into the row object o: "key" (its label), "file",
 * "line", "function" (of its first key's site; "" / 0 by object or when
 * unknown), "object" (by object: its id) and "sites" (its site ids, -1 for unknown
 * sites; empty by object, whose rows are not kept per site). */
void replay_group_publish(struct pes_report *r, struct pes_rnode *o,
                          const struct pes_stream_info *si, enum replay_by by,
                          const struct replay_groups *g, size_t grp, const uint32_t *keys);

/* An object's name ("counters", "heap@a.c:14 (f)"), "unknown" for id 0 or
 * without resolved objects. */
void replay_object_name(const struct pes_stream_info *si, uint32_t id, char *buf, size_t n);
/* The part of object id at byte offset ("counters.hot", "adjacent[1]", "+40"); "" when unknown. */
void replay_object_part(const struct pes_stream_info *si, uint32_t id, uint64_t offset, char *buf,
                        size_t n);

#endif
