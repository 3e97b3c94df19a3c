/*
 * callpaths.h — call paths in the ranked tables (a trace with call edges,
 * stream/callpath.h). An analysis that breaks its rows down by call path
 * keys its per-key engine by (key, path) pairs, interned here as dense ids
 * in stream order (the same ids for every --jobs); at the end it adds the
 * pairs of a key back into the key's row, so the rows are those of a run
 * without call paths, and lists under each row its top paths
 * (replay_callpaths_publish). docs/replay.md, "Call paths".
 */
#ifndef PES_REPLAY_CALLPATHS_H
#define PES_REPLAY_CALLPATHS_H

#include <stddef.h>
#include <stdint.h>

#include "groups.h"
#include "report.h"
#include "stream.h"

/* Paths listed under a row. */
enum { REPLAY_TOP_CALLPATHS = 3 };

struct replay_pathkeys;
struct replay_pathkeys *replay_pathkeys_create(void);
void replay_pathkeys_destroy(struct replay_pathkeys *pk);
/* out[i] = the id of (keys[i], paths[i], sites[i]), i < n: the row's key
 * (a site, or an object with --by object; keys NULL: 0), the access's path
 * (paths NULL: 0) and its site (whose function ends the path's name). 0, or -1 without
 * memory. */
int replay_pathkeys_map(struct replay_pathkeys *pk, const uint32_t *keys, const uint32_t *paths,
                        const uint32_t *sites, size_t n, uint32_t *out);
/* Triples so far (ids 0 .. count - 1), and the triple of id. */
uint32_t replay_pathkeys_count(const struct replay_pathkeys *pk);
uint32_t replay_pathkeys_key(const struct replay_pathkeys *pk, uint32_t id);
uint32_t replay_pathkeys_path(const struct replay_pathkeys *pk, uint32_t id);
uint32_t replay_pathkeys_site(const struct replay_pathkeys *pk, uint32_t id);

/* Whether the stream's rows get call paths: it has a table with at least
 * one recorded call (a trace without call edges gets no empty sections). */
int replay_callpaths_shown(const struct pes_stream_info *si);

/* Path `path` ending in the accessing site's function: "main (a.c:40) >
 * solve (a.c:22) > helper"; "... > " first when outer calls were cut off. */
void replay_callpath_name(const struct pes_stream_info *si, uint32_t path, uint32_t site, char *buf,
                          size_t n);

/* A row's top paths: n contributions (the accessing site and path of each,
 * and its value of the row's metric), added per named path; the first
 * REPLAY_TOP_CALLPATHS by value (then by name) as row."callpaths":
 * [{"path", metric, "share" of row_total}]. Marks the report failed
 * without memory. */
void replay_callpaths_publish(struct pes_report *r, struct pes_rnode *row,
                              const struct pes_stream_info *si, const char *metric,
                              const uint32_t *sites, const uint32_t *paths, const uint64_t *values,
                              size_t n, uint64_t row_total);

/* --by callpath: the n (site, path) keys grouped per source line and path,
 * labelled "main (a.c:40) > helper (a.c:12)" (the path, then the line).
 * 0, or -1 without memory (g then empty). */
int replay_groups_make_paths(struct replay_groups *g, const struct pes_stream_info *si,
                             const uint32_t *sites, const uint32_t *paths, size_t n);

#endif
