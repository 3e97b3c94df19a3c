/*
 * objects_int.h — what objects.c (the table, the live blocks, the lookup)
 * and dwarf.c (globals, types and symbols from the traced binaries, through
 * elfutils libdwfl / libdw) share. Not installed.
 */
#ifndef PES_REPLAY_OBJECTS_INT_H
#define PES_REPLAY_OBJECTS_INT_H

#include "objects.h"

/* A global or static variable: [start, start + size) at run time. */
struct objects_global {
    uint64_t start, size;
    uint32_t obj;      /* its object id */
    uint32_t module;   /* index into the modules' DWARF (type_die valid) */
    uint64_t type_die; /* DIE offset of its type in that module's DWARF; 0: none */
};

struct objects_dwarf; /* dwarf.c: the Dwfl session of the traced modules */

/* Adds an object; its strings are copied. The new id, or 0 if out of memory. */
uint32_t objects_add(struct pes_objects *o, enum pes_object_kind kind, const char *name,
                     const char *where, const char *stack, uint64_t size);
/* Appends a global (sorted later by objects.c). 0 or -1. */
int objects_add_global(struct pes_objects *o, const struct objects_global *g);
struct objects_dwarf *objects_dwarf_of(struct pes_objects *o);
void objects_set_dwarf(struct pes_objects *o, struct objects_dwarf *d);

/* dwarf.c */
size_t objects_dwarf_load(struct pes_objects *o, const struct pes_mapping *m, size_t n, char *warn,
                          size_t warn_size);
void objects_dwarf_free(struct objects_dwarf *d);
/* One source frame of a code address. */
struct objects_frame {
    char func[160]; /* "" if unknown */
    char file[160]; /* basename, "" if unknown */
    int line;       /* 0 if unknown */
};
/* The frames of a return address (looked up at ip - 1), innermost first,
 * inlined calls expanded: at most max; 0 if no module holds it. */
size_t objects_dwarf_frames(struct objects_dwarf *d, uint64_t ip, struct objects_frame *f,
                            size_t max);
/* Appends to buf (used bytes *len of n) the member / element path of offset
 * inside the type, "+off" for what no member or element covers. */
void objects_dwarf_describe(struct objects_dwarf *d, const struct objects_global *g,
                            uint64_t offset, char *buf, size_t n, size_t *len);

#endif
