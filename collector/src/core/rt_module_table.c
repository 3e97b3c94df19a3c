/* rt_module_table.c — id ranges and table conversion for instrumented modules.
 * Pure functions (no global state) so they can be unit-tested. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

int pes_rt_assign_range(uint32_t *next, uint32_t n_sites, uint32_t n_bbs, uint32_t *base)
{
    uint64_t end = (uint64_t)*next + n_sites + n_bbs;
    if (end > PES_ID_CONTROL_FIRST)
        return -1;
    *base = *next;
    *next = (uint32_t)end;
    return 0;
}

/* A string of the module's strtab; "" if the offset or its terminator is out of range. */
static const char *strtab_at(const struct pes_rt_module *m, uint32_t off)
{
    if (!m->strtab || off >= m->strtab_size)
        return "";
    if (!memchr(m->strtab + off, '\0', m->strtab_size - off))
        return "";
    return m->strtab + off;
}

/* The converted tables own copies of the module's strings: the writer encodes
 * them later, possibly after a dlclose unmapped the module. */
struct pes_module *pes_rt_module_convert(const struct pes_rt_module *m, uint32_t id_base)
{
    const char *name = m->name ? m->name : "";
    size_t name_len = strlen(name) + 1;
    size_t strtab_size = m->strtab ? m->strtab_size : 0;
    size_t size = sizeof(struct pes_module) + (size_t)m->n_sites * sizeof(struct pes_site) +
                  (size_t)m->n_bbs * sizeof(struct pes_bb) + strtab_size + name_len;
    char *block = calloc(1, size);
    if (!block)
        return NULL;
    struct pes_module *out = (struct pes_module *)block;
    struct pes_site *sites = (struct pes_site *)(out + 1);
    struct pes_bb *bbs = (struct pes_bb *)(sites + m->n_sites);
    char *strings = (char *)(bbs + m->n_bbs);
    memcpy(strings, m->strtab ? m->strtab : "", strtab_size);
    memcpy(strings + strtab_size, name, name_len);
    struct pes_rt_module copy = *m; /* strtab_at reads the copy */
    copy.strtab = strings;
    m = &copy;

    out->id_base = id_base;
    out->n_sites = m->n_sites;
    out->n_bbs = m->n_bbs;
    out->name = strings + strtab_size;
    out->sites = sites;
    out->bbs = bbs;
    for (uint32_t i = 0; i < m->n_sites; i++) {
        const struct pes_rt_site *s = &m->sites[i];
        sites[i].id = id_base + i;
        /* an out-of-range block index cannot name a real block: mark it unknown */
        sites[i].bb = s->bb < m->n_bbs ? id_base + m->n_sites + s->bb : UINT32_MAX;
        sites[i].kind = s->kind;
        sites[i].flags = s->flags;
        sites[i].column = s->column;
        sites[i].size = s->size;
        sites[i].line = s->line;
        sites[i].file = strtab_at(m, s->file);
        sites[i].function = strtab_at(m, s->function);
    }
    for (uint32_t i = 0; i < m->n_bbs; i++) {
        const struct pes_rt_bb *b = &m->bbs[i];
        bbs[i].id = id_base + m->n_sites + i;
        bbs[i].n_sites = b->n_sites;
        memcpy(bbs[i].ops, b->ops, sizeof bbs[i].ops);
        bbs[i].flags = b->flags;
        bbs[i].forks = b->forks;
        bbs[i].barriers = b->barriers;
        memcpy(bbs[i].instrs, b->instrs, sizeof bbs[i].instrs);
        memcpy(bbs[i].chain, b->chain, sizeof bbs[i].chain);
        bbs[i].function = strtab_at(m, b->function);
        bbs[i].label = strtab_at(m, b->label);
    }
    return out;
}
