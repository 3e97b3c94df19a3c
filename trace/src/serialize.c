/*
 * serialize.c — payloads of the small blocks (HEADER, MODULE, THREAD, MAPS,
 * FOOTER): little-endian integers, strings as u32 length + bytes (no NUL).
 * Decoders check every length against what is left of the payload and
 * require the payload to be consumed exactly.
 */
#include <stdio.h>

#include "trace_internal.h"

#define MAX_OPS_STORED 64u /* MODULE: op-class count per BB we accept */

static const char *dup_str(struct pes_cur *c, struct pes_arena *a, int *nomem)
{
    uint32_t len;
    const uint8_t *s = pes_cur_str(c, &len);
    if (!s || len == 0)
        return ""; /* no allocation: modules may have millions of empty strings */
    const char *d = pes_arena_strdup(a, s, len);
    if (!d)
        *nomem = 1;
    return d ? d : "";
}

static int finish(const struct pes_cur *c, int nomem, const char *what, const char **why)
{
    if (nomem) {
        *why = "out of memory";
        return -1;
    }
    if (c->bad) {
        *why = what; /* "... payload ends inside a field" */
        return -1;
    }
    if (c->p != c->end) {
        *why = "payload has trailing bytes after its last field";
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- HEADER */

int pes_ser_info(struct pes_buf *b, const struct pes_trace_info *info)
{
    int e = 0;
    uint32_t nl =
        info->n_cache_levels > PES_MAX_CACHE_LEVELS ? PES_MAX_CACHE_LEVELS : info->n_cache_levels;
    e |= pes_buf_u32(b, info->kind);
    e |= pes_buf_str(b, info->command);
    e |= pes_buf_str(b, info->hostname);
    e |= pes_buf_str(b, info->cpu_model);
    e |= pes_buf_u32(b, info->n_cpus);
    e |= pes_buf_u32(b, info->n_sockets);
    e |= pes_buf_u32(b, nl);
    for (uint32_t i = 0; i < nl; i++) {
        const struct pes_cache_level *l = &info->caches[i];
        e |= pes_buf_u8(b, l->level);
        e |= pes_buf_u8(b, l->type);
        e |= pes_buf_u16(b, l->ways);
        e |= pes_buf_u32(b, l->line_size);
        e |= pes_buf_u64(b, l->size);
        e |= pes_buf_u32(b, l->shared_by);
    }
    e |= pes_buf_u64(b, info->ticks_per_second);
    e |= pes_buf_u64(b, info->start_ticks);
    e |= pes_buf_u64(b, info->pid);
    e |= pes_buf_str(b, info->config);
    return e ? -1 : 0;
}

int pes_de_info(const uint8_t *p, size_t size, struct pes_trace_info *info, struct pes_arena *a,
                const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    int nomem = 0;
    memset(info, 0, sizeof *info);
    info->kind = pes_cur_u32(&c);
    info->command = dup_str(&c, a, &nomem);
    info->hostname = dup_str(&c, a, &nomem);
    info->cpu_model = dup_str(&c, a, &nomem);
    info->n_cpus = pes_cur_u32(&c);
    info->n_sockets = pes_cur_u32(&c);
    info->n_cache_levels = pes_cur_u32(&c);
    if (info->n_cache_levels > PES_MAX_CACHE_LEVELS) {
        *why = "HEADER lists more than 8 cache levels";
        return -1;
    }
    for (uint32_t i = 0; i < info->n_cache_levels; i++) {
        struct pes_cache_level *l = &info->caches[i];
        l->level = pes_cur_u8(&c);
        l->type = pes_cur_u8(&c);
        l->ways = pes_cur_u16(&c);
        l->line_size = pes_cur_u32(&c);
        l->size = pes_cur_u64(&c);
        l->shared_by = pes_cur_u32(&c);
    }
    info->ticks_per_second = pes_cur_u64(&c);
    info->start_ticks = pes_cur_u64(&c);
    info->pid = pes_cur_u64(&c);
    info->config = dup_str(&c, a, &nomem);
    if (info->kind != PES_TRACE_FULL && info->kind != PES_TRACE_SAMPLED && !c.bad) {
        *why = "HEADER trace kind is neither 1 (full) nor 2 (sampled)";
        return -1;
    }
    return finish(&c, nomem, "HEADER payload ends inside a field", why);
}

/* ---------------------------------------------------------------- MODULE */

int pes_ser_module(struct pes_buf *b, const struct pes_module *m, unsigned version)
{
    int e = 0;
    e |= pes_buf_u32(b, m->id_base);
    e |= pes_buf_u32(b, m->n_sites);
    e |= pes_buf_u32(b, m->n_bbs);
    e |= pes_buf_str(b, m->name);
    for (uint32_t i = 0; i < m->n_sites; i++) {
        const struct pes_site *s = &m->sites[i];
        e |= pes_buf_u32(b, s->id);
        e |= pes_buf_u32(b, s->bb);
        e |= pes_buf_u8(b, s->kind);
        e |= pes_buf_u8(b, s->flags);
        e |= pes_buf_u16(b, s->column);
        e |= pes_buf_u32(b, s->size);
        e |= pes_buf_u32(b, s->line);
        e |= pes_buf_str(b, s->file);
        e |= pes_buf_str(b, s->function);
    }
    e |= pes_buf_u32(b, PES_OP_COUNT);
    for (uint32_t i = 0; i < m->n_bbs; i++) {
        const struct pes_bb *bb = &m->bbs[i];
        e |= pes_buf_u32(b, bb->id);
        e |= pes_buf_u32(b, bb->n_sites);
        for (int k = 0; k < PES_OP_COUNT; k++)
            e |= pes_buf_u32(b, bb->ops[k]);
        e |= pes_buf_u32(b, bb->flags);
        e |= pes_buf_str(b, bb->function);
        e |= pes_buf_str(b, bb->label);
        if (version >= 4) {
            e |= pes_buf_u32(b, bb->forks);
            e |= pes_buf_u32(b, bb->barriers);
            for (int k = 0; k < PES_OP_COUNT; k++)
                e |= pes_buf_u32(b, bb->instrs[k]);
            for (int k = 0; k < PES_OP_COUNT; k++)
                e |= pes_buf_u32(b, bb->chain[k]);
        }
    }
    return e ? -1 : 0;
}

/* n_ops u32s into v[0..PES_OP_COUNT): op classes added later are ignored by
 * this reader, ones it knows and the file lacks stay zero. */
static void op_counts(struct pes_cur *c, uint32_t n_ops, uint32_t *v)
{
    for (uint32_t k = 0; k < n_ops; k++) {
        uint32_t x = pes_cur_u32(c);
        if (k < PES_OP_COUNT)
            v[k] = x;
    }
}

int pes_de_module(const uint8_t *p, size_t size, struct pes_module *m, struct pes_arena *a,
                  unsigned version, const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    int nomem = 0;
    memset(m, 0, sizeof *m);
    m->id_base = pes_cur_u32(&c);
    m->n_sites = pes_cur_u32(&c);
    m->n_bbs = pes_cur_u32(&c);
    m->name = dup_str(&c, a, &nomem);
    if (c.bad)
        return finish(&c, nomem, "MODULE payload ends inside its header", why);
    /* Every site takes >= 28 bytes and every BB >= 16: bound counts before allocating. */
    if (m->n_sites > pes_cur_left(&c) / 28 || m->n_bbs > pes_cur_left(&c) / 16) {
        *why = "MODULE site/BB counts exceed the payload size";
        return -1;
    }
    uint64_t end = (uint64_t)m->id_base + m->n_sites + m->n_bbs;
    if (end > (uint64_t)PES_ID_CONTROL_FIRST) {
        *why = "MODULE id range overlaps the control ids (>= 0xFFFFFF00)";
        return -1;
    }
    struct pes_site *sites = pes_arena_alloc(a, (size_t)m->n_sites * sizeof *sites + 1);
    struct pes_bb *bbs = pes_arena_alloc(a, (size_t)m->n_bbs * sizeof *bbs + 1);
    if (!sites || !bbs) {
        *why = "out of memory";
        return -1;
    }
    for (uint32_t i = 0; i < m->n_sites && !c.bad; i++) {
        struct pes_site *s = &sites[i];
        s->id = pes_cur_u32(&c);
        s->bb = pes_cur_u32(&c);
        s->kind = pes_cur_u8(&c);
        s->flags = pes_cur_u8(&c);
        s->column = pes_cur_u16(&c);
        s->size = pes_cur_u32(&c);
        s->line = pes_cur_u32(&c);
        s->file = dup_str(&c, a, &nomem);
        s->function = dup_str(&c, a, &nomem);
        if (!c.bad && (s->id < m->id_base || s->id - m->id_base >= m->n_sites)) {
            *why = "MODULE site id outside the module's site range";
            return -1;
        }
    }
    uint32_t n_ops = pes_cur_u32(&c);
    if (!c.bad && n_ops > MAX_OPS_STORED) {
        *why = "MODULE op-class count is implausible (> 64)";
        return -1;
    }
    for (uint32_t i = 0; i < m->n_bbs && !c.bad; i++) {
        struct pes_bb *bb = &bbs[i];
        bb->id = pes_cur_u32(&c);
        bb->n_sites = pes_cur_u32(&c);
        op_counts(&c, n_ops, bb->ops);
        bb->flags = pes_cur_u32(&c);
        bb->function = dup_str(&c, a, &nomem);
        bb->label = dup_str(&c, a, &nomem);
        if (version >= 4) {
            bb->forks = pes_cur_u32(&c);
            bb->barriers = pes_cur_u32(&c);
            op_counts(&c, n_ops, bb->instrs);
            op_counts(&c, n_ops, bb->chain);
        } else {
            /* before version 4 the facts were never written: unknown, not none */
            bb->flags &= ~PES_BB_MODEL_FACTS;
        }
        uint32_t bb_base = m->id_base + m->n_sites;
        if (!c.bad && (bb->id < bb_base || bb->id - bb_base >= m->n_bbs)) {
            *why = "MODULE basic-block id outside the module's BB range";
            return -1;
        }
    }
    m->sites = sites;
    m->bbs = bbs;
    return finish(&c, nomem, "MODULE payload ends inside a field", why);
}

/* ---------------------------------------------------------------- THREAD */

int pes_ser_thread(struct pes_buf *b, const struct pes_thread *t)
{
    int e = 0;
    e |= pes_buf_u32(b, t->index);
    e |= pes_buf_u32(b, t->parent);
    e |= pes_buf_u64(b, t->tid);
    e |= pes_buf_u32(b, (uint32_t)t->cpu);
    e |= pes_buf_u32(b, (uint32_t)t->socket);
    e |= pes_buf_u64(b, t->start_ticks);
    return e ? -1 : 0;
}

int pes_de_thread(const uint8_t *p, size_t size, struct pes_thread *t, const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    t->index = pes_cur_u32(&c);
    t->parent = pes_cur_u32(&c);
    t->tid = pes_cur_u64(&c);
    t->cpu = (int32_t)pes_cur_u32(&c);
    t->socket = (int32_t)pes_cur_u32(&c);
    t->start_ticks = pes_cur_u64(&c);
    return finish(&c, 0, "THREAD payload ends inside a field", why);
}

/* ---------------------------------------------------------------- MAPS */

int pes_ser_maps(struct pes_buf *b, const struct pes_mapping *m, size_t n)
{
    int e = 0;
    for (size_t i = 0; i < n; i++) {
        e |= pes_buf_u64(b, m[i].start);
        e |= pes_buf_u64(b, m[i].end);
        e |= pes_buf_u64(b, m[i].file_offset);
        e |= pes_buf_str(b, m[i].path);
    }
    return e ? -1 : 0;
}

int pes_de_maps(const uint8_t *p, size_t size, size_t n, struct pes_mapping *out,
                struct pes_arena *a, const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    int nomem = 0;
    for (size_t i = 0; i < n && !c.bad; i++) {
        out[i].start = pes_cur_u64(&c);
        out[i].end = pes_cur_u64(&c);
        out[i].file_offset = pes_cur_u64(&c);
        out[i].path = dup_str(&c, a, &nomem);
    }
    return finish(&c, nomem, "MAPS payload ends inside a field", why);
}

/* ---------------------------------------------------------------- ALLOC_SITES */

int pes_ser_alloc_sites(struct pes_buf *b, const struct pes_alloc_site *s, size_t n)
{
    int e = 0;
    for (size_t i = 0; i < n; i++) {
        e |= pes_buf_u32(b, s[i].id);
        e |= pes_buf_u32(b, s[i].kind);
        e |= pes_buf_u32(b, s[i].depth);
        for (uint32_t k = 0; k < s[i].depth; k++)
            e |= pes_buf_u64(b, s[i].ips[k]);
    }
    return e ? -1 : 0;
}

int pes_de_alloc_sites(const uint8_t *p, size_t size, size_t n, struct pes_alloc_site *out,
                       struct pes_arena *a, char *why_buf, size_t why_size, const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    for (size_t i = 0; i < n; i++) {
        size_t at = (size_t)(c.p - p);
        out[i].id = pes_cur_u32(&c);
        out[i].kind = pes_cur_u32(&c);
        out[i].depth = pes_cur_u32(&c);
        if (c.bad)
            break;
        const char *bad = out[i].id == PES_ALLOC_SITE_STACK ? "has the reserved id 0xffffffff"
                          : out[i].depth < 1 || out[i].depth > PES_ALLOC_MAX_DEPTH
                              ? "has a depth outside 1..8"
                          : out[i].kind < PES_ALLOC_MALLOC || out[i].kind > PES_ALLOC_CALLSTACK
                              ? "has an unknown allocation kind"
                          : out[i].kind == PES_ALLOC_CALLSTACK && out[i].id == 0
                              ? "is a call stack with the reserved id 0"
                              : NULL;
        if (bad) {
            snprintf(why_buf, why_size,
                     "site %zu (payload offset %zu, id %u, kind %u, depth %u) %s", i, at, out[i].id,
                     out[i].kind, out[i].depth, bad);
            *why = why_buf;
            return -1;
        }
        if (pes_cur_left(&c) < (size_t)out[i].depth * 8) {
            c.bad = 1;
            break;
        }
        uint64_t *ips = pes_arena_alloc(a, (size_t)out[i].depth * 8);
        if (!ips) {
            *why = "out of memory";
            return -1;
        }
        for (uint32_t k = 0; k < out[i].depth; k++)
            ips[k] = pes_cur_u64(&c);
        out[i].ips = ips;
    }
    if (c.bad) {
        snprintf(why_buf, why_size, "payload ends inside a site (payload size %zu)", size);
        *why = why_buf;
        return -1;
    }
    if (c.p != c.end) {
        snprintf(why_buf, why_size, "%zu trailing bytes after the last site, at payload offset %zu",
                 pes_cur_left(&c), (size_t)(c.p - p));
        *why = why_buf;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- FOOTER */

int pes_ser_footer(struct pes_buf *b, const struct pes_thread_totals *t, size_t n,
                   uint64_t end_ticks)
{
    int e = pes_buf_u64(b, end_ticks);
    for (size_t i = 0; i < n; i++) {
        e |= pes_buf_u32(b, t[i].thread);
        e |= pes_buf_u64(b, t[i].records);
        e |= pes_buf_u64(b, t[i].loads);
        e |= pes_buf_u64(b, t[i].stores);
        e |= pes_buf_u64(b, t[i].samples);
        e |= pes_buf_u64(b, t[i].lost);
        e |= pes_buf_u64(b, t[i].end_ticks);
    }
    return e ? -1 : 0;
}

int pes_de_footer(const uint8_t *p, size_t size, size_t n, struct pes_thread_totals *out,
                  uint64_t *end_ticks, const char **why)
{
    struct pes_cur c = {p, p + size, 0};
    *end_ticks = pes_cur_u64(&c);
    for (size_t i = 0; i < n && !c.bad; i++) {
        out[i].thread = pes_cur_u32(&c);
        out[i].records = pes_cur_u64(&c);
        out[i].loads = pes_cur_u64(&c);
        out[i].stores = pes_cur_u64(&c);
        out[i].samples = pes_cur_u64(&c);
        out[i].lost = pes_cur_u64(&c);
        out[i].end_ticks = pes_cur_u64(&c);
    }
    return finish(&c, 0, "FOOTER payload ends inside a field", why);
}
