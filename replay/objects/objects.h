/*
 * objects.h — the data objects of one traced run, and which one each access
 * touches: globals and statics by symbol (DWARF variables of the executable
 * and its libraries, found through the trace's MAPS block, ELF data symbols
 * where there is no DWARF), heap blocks grouped by allocation site (the
 * ALLOC / ALLOC_SIZE / FREE control records or events, applied in record
 * order), thread stacks by the accessing site's function, "unknown" else.
 *
 * The replay streams (replay/stream/input.c) build one, feed it the trace's
 * allocation records in order and call pes_objects_lookup for every access;
 * reports read the table (pes_objects_get) and name the part of an object an
 * offset falls in (pes_objects_describe). docs/replay.md, "Data objects".
 */
#ifndef PES_REPLAY_OBJECTS_H
#define PES_REPLAY_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "pes/trace.h"

struct pes_objects; /* the data objects of one traced run */
enum pes_object_kind {
    PES_OBJ_UNKNOWN = 0,
    PES_OBJ_GLOBAL = 1 /* global or static variable */,
    PES_OBJ_HEAP = 2 /* the blocks allocated at one allocation site */,
    PES_OBJ_STACK = 3 /* the stack frames of one function */
};
struct pes_object {
    uint32_t id; /* 0 = the unknown object */
    enum pes_object_kind kind;
    const char
        *name; /* "adjacent", "counters", "heap@alloc.c:14 (make_rows)", "stack:main", "unknown" */
    const char *where; /* declaration or allocation site "alloc.c:14", or "" */
    const char *stack; /* allocation call stack "make_rows alloc.c:14 < main alloc.c:40", or "" */
    uint64_t size;     /* bytes (global: the symbol; heap: the largest block seen), 0 unknown */
    uint64_t blocks;   /* heap: blocks allocated at the site; else 0 */
};
/* Ids are 0 .. count-1 and stable; heap and stack objects are added as the
 * stream meets them, so a pes_object pointer holds only until the next
 * pes_objects_alloc / _record / _lookup (reports read them after the run). */
uint32_t pes_objects_count(const struct pes_objects *o); /* ids are 0 .. count-1 */
const struct pes_object *pes_objects_get(const struct pes_objects *o, uint32_t id);
/* The part of object id at byte offset: "table[3]", "counters.hot", "rows[2].sum" from DWARF
 * (member / array element), else "+40". Writes a NUL-terminated string; returns its length. */
size_t pes_objects_describe(const struct pes_objects *o, uint32_t id, uint64_t offset, char *buf,
                            size_t n);
/* 1 if object id is a global whose program has no DWARF type for it (built
 * without -g: pes-clang's default line tables name no type), so that
 * pes_objects_describe gives byte offsets ("cnt+8") where -g gives fields. */
int pes_objects_untyped_global(const struct pes_objects *o, uint32_t id);

/* The call path of a sampled event's call stack (pes_event.stack, an entry
 * of the allocation-site table of kind PES_ALLOC_CALLSTACK) from the
 * outermost frame to the sampled function, inlined calls expanded:
 * "main (a.c:40) > solve (a.c:22) > helper" (the last frame without its
 * line, which the sample's site gives; a frame without symbols as its
 * address). Frames above the outermost one with a source line (the C
 * library's start-up, a threads library's) are left out. Writes a NUL-terminated string (cut at n); returns its length,
 * 0 if the stack is unknown. */
size_t pes_objects_callpath(const struct pes_objects *o, uint32_t stack, char *buf, size_t n);

/* ------------------------------------------------------------ building */

/* An empty set: only the unknown object (id 0). NULL if out of memory. */
struct pes_objects *pes_objects_create(void);
void pes_objects_destroy(struct pes_objects *o);

/* The globals and statics of the modules of a trace's MAPS block (its
 * executable mappings; each file's load bias from its ELF program headers).
 * Files that cannot be read or have no symbols are passed over with a
 * one-line warning naming them in warn (the first such; "" if none), never
 * an error. Returns the number of modules read. Call before any lookup. */
size_t pes_objects_load_mappings(struct pes_objects *o, const struct pes_mapping *m, size_t n,
                                 char *warn, size_t warn_size);

/* How access sites and allocation sites are named: site(ctx, id) gives an
 * access site's description (its function names stack objects);
 * alloc_site(ctx, id, &depth) the site's call stack (ips[0] the return
 * address of the call into the allocator) or NULL. Either may be NULL. */
void pes_objects_set_sites(struct pes_objects *o,
                           const struct pes_site *(*site)(const void *ctx, uint32_t id),
                           const void *ctx);
void pes_objects_set_alloc_sites(struct pes_objects *o,
                                 const uint64_t *(*alloc_site)(const void *ctx, uint32_t id,
                                                               uint32_t *depth),
                                 const void *ctx);

/* Heap objects are named in the order allocation sites are met, a later
 * site whose name would repeat an earlier one's getting its callers added.
 * Given all the trace's allocation sites first (once, before any heap
 * object), they are named in site id order instead, whichever blocks the
 * stream meets: a sampled trace names the objects as its full trace does. */
void pes_objects_name_heap_sites(struct pes_objects *o, const uint32_t *sites, size_t n);
/* The heap object of alloc_site for a sample that names its block itself
 * (PES_EVF_HEAP_BLOCK; the block is not added to the live blocks). 0 if
 * none (a thread's stack is no heap object). */
uint32_t pes_objects_heap_block(struct pes_objects *o, uint32_t alloc_site, uint64_t size);
/* A block [addr, addr + size) allocated at alloc_site, live from now on
 * (alloc_site PES_ALLOC_SITE_STACK: a thread's stack). A block that
 * overlaps live ones replaces them (their FREE was not recorded). */
void pes_objects_alloc(struct pes_objects *o, uint64_t addr, uint64_t size, uint32_t alloc_site);
/* The live block that starts at addr is freed (no such block: nothing). */
void pes_objects_free(struct pes_objects *o, uint64_t addr);
/* The same with the events' times (a sampled trace: one thread's events may
 * reach the file after another's later ones): a FREE older than the live
 * block's ALLOC belongs to an earlier block at that address and is ignored. */
void pes_objects_alloc_at(struct pes_objects *o, uint64_t addr, uint64_t size, uint32_t alloc_site,
                          uint64_t time);
void pes_objects_free_at(struct pes_objects *o, uint64_t addr, uint64_t time);
/* A full trace's control records in one thread's record order: PES_ID_ALLOC
 * (held per thread until its PES_ID_ALLOC_SIZE), PES_ID_ALLOC_SIZE,
 * PES_ID_FREE; others ignored. */
void pes_objects_record(struct pes_objects *o, uint32_t thread, const struct pes_record *r);
/* Forgets the live blocks and stacks and the heap block counts (object ids
 * stay): before another pass over the same trace. */
void pes_objects_reset(struct pes_objects *o);

/* The object an access of access_site at addr touches (0: unknown), and
 * the offset inside its instance (the variable, the heap block, the thread
 * stack) in *offset (0 for unknown). */
uint32_t pes_objects_lookup(struct pes_objects *o, uint64_t addr, uint32_t access_site,
                            uint64_t *offset);
/* pes_objects_lookup of n accesses in order (object[i], offset[i]): the
 * same answers, without a call per access where a site's last range holds. */
void pes_objects_lookup_many(struct pes_objects *o, const uint64_t *addr, const uint32_t *site,
                             size_t n, uint32_t *object, uint64_t *offset);

/* Lanes: independent sets of live blocks over one object table, for
 * streams that walk the same allocation records apart (mimicked cores,
 * each at its own place in the sequential trace). Lane 0 is the one the
 * functions above use, and the only one that counts heap blocks. Setting
 * the count forgets every lane's live blocks (object ids stay); 0 or -1
 * (out of memory: the lanes are as they were). */
int pes_objects_set_lanes(struct pes_objects *o, uint32_t n);
/* Does now what lookups would do lazily on shared state (sorting the
 * globals), so that lanes may then be walked from several threads at once,
 * each lane by one thread, provided lane 0 met every allocation site and
 * stack before (a pass over the same records: then no lane adds objects). */
void pes_objects_freeze(struct pes_objects *o);
uint32_t pes_objects_lanes(const struct pes_objects *o);
/* pes_objects_record and pes_objects_lookup in one lane (a lane >= the
 * count: ignored / unknown). */
void pes_objects_record_lane(struct pes_objects *o, uint32_t lane, uint32_t thread,
                             const struct pes_record *r);
uint32_t pes_objects_lookup_lane(struct pes_objects *o, uint32_t lane, uint64_t addr,
                                 uint32_t access_site, uint64_t *offset);

#endif
