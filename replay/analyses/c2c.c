/*
 * c2c.c — the cache-line table (c2c.h).
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c2c.h"
#include "groups.h"
#include "objects.h"

#define MAX_SITES 4 /* sites kept per offset row */

struct off_row {
    uint32_t offset, size;
    uint64_t reads, writes;
    uint64_t inval[2], coh[2], transfers[2]; /* [0] true, [1] false */
    uint64_t threads;                        /* bit t%64 */
    uint32_t sites[MAX_SITES];
    uint32_t n_sites;
    uint32_t object; /* of its first access with one */
    uint64_t object_offset;
};

struct line_row {
    uint64_t addr;
    uint64_t inval[2], coh[2], transfers[2];
    uint64_t threads;
    uint64_t from;      /* accesses are counted from this one on (its first event's) */
    uint64_t untracked; /* accesses and events of offsets beyond the cap */
    uint64_t misses[REPLAY_C2C_MISS_CAUSES]; /* L1 misses by cause (replay_c2c_miss) */
    uint32_t object;
    uint64_t object_offset; /* of the line's first byte inside the object */
    uint32_t n_off, cap_off;
    struct off_row *off; /* grows 2, 4, .. REPLAY_C2C_MAX_OFFSETS: most lines have few */
};

struct replay_c2c {
    uint32_t line_shift;
    struct line_row *lines; /* [REPLAY_C2C_MAX_LINES], filled in order */
    uint32_t n_lines;
    uint32_t *slot; /* open addressing: line index + 1, 0 = empty */
    uint32_t slot_bits;
    uint64_t untracked; /* events on lines beyond REPLAY_C2C_MAX_LINES */
    uint64_t now;       /* accesses passed to replay_c2c_access so far */
    uint64_t last_addr; /* the line of the previous lookup (accesses come in runs on one line) */
    uint32_t last_k;    /* its index + 1, 0: not tracked */
    uint64_t part_mask, part; /* replay_c2c_set_partition: the line numbers taken */
    int misses;               /* replay_c2c_count_misses: the rows publish their L1 misses */
};

struct replay_c2c *replay_c2c_create(uint32_t line)
{
    struct replay_c2c *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    while ((1u << c->line_shift) < line)
        c->line_shift++;
    c->slot_bits = 17; /* twice the line cap: probes stay short */
    c->slot = calloc((size_t)1 << c->slot_bits, sizeof *c->slot);
    c->lines = calloc(64, sizeof *c->lines); /* grows up to the cap */
    if (!c->slot || !c->lines) {
        replay_c2c_destroy(c);
        return NULL;
    }
    return c;
}

void replay_c2c_destroy(struct replay_c2c *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; c->lines && i < c->n_lines; i++)
        free(c->lines[i].off);
    free(c->slot);
    free(c->lines);
    free(c);
}

static uint32_t hash(uint64_t addr, uint32_t bits)
{
    return (uint32_t)((addr * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The tracked line at addr, created when `create` (NULL if untracked). */
static struct line_row *line_of(struct replay_c2c *c, uint64_t addr, int create, uint64_t seq)
{
    if (!create && addr == c->last_addr && c->n_lines)
        return c->last_k ? &c->lines[c->last_k - 1] : NULL;
    c->last_addr = addr;
    c->last_k = 0; /* refilled below; a line created later invalidates it */
    uint32_t mask = (1u << c->slot_bits) - 1;
    for (uint32_t h = hash(addr, c->slot_bits);; h = (h + 1) & mask) {
        uint32_t k = c->slot[h];
        if (k && c->lines[k - 1].addr == addr) {
            c->last_k = k;
            return &c->lines[k - 1];
        }
        if (k)
            continue;
        if (!create || c->n_lines == REPLAY_C2C_MAX_LINES)
            return NULL;
        if ((c->n_lines & (c->n_lines - 1)) == 0 &&
            c->n_lines >= 64) { /* full at a power of two: double */
            struct line_row *g = realloc(c->lines, 2 * (size_t)c->n_lines * sizeof *g);
            if (!g)
                return NULL;
            c->lines = g;
        }
        struct line_row *l = &c->lines[c->n_lines++];
        memset(l, 0, sizeof *l);
        l->addr = addr;
        l->from = seq;
        c->slot[h] = c->n_lines;
        c->last_k = c->n_lines;
        return l;
    }
}

/* The offset row of the piece [lo, lo+size) of a's bytes in line l (NULL beyond the cap). */
static struct off_row *off_of(struct line_row *l, uint32_t lo, uint32_t size)
{
    for (uint32_t i = 0; i < l->n_off; i++)
        if (l->off[i].offset == lo && l->off[i].size == size)
            return &l->off[i];
    if (l->n_off == REPLAY_C2C_MAX_OFFSETS)
        return NULL;
    if (l->n_off == l->cap_off) {
        uint32_t cap = l->cap_off ? 2 * l->cap_off : 2;
        struct off_row *g = realloc(l->off, cap * sizeof *g);
        if (!g)
            return NULL; /* counted as untracked */
        l->off = g;
        l->cap_off = cap;
    }
    struct off_row *o = &l->off[l->n_off++];
    memset(o, 0, sizeof *o);
    o->offset = lo;
    o->size = size;
    return o;
}

/* Who touched the row: thread, site, object. */
static void touch(struct line_row *l, struct off_row *o, const struct replay_c2c_access *a,
                  uint64_t piece)
{
    uint64_t tbit = 1ull << (a->thread & 63);
    l->threads |= tbit;
    o->threads |= tbit;
    int known = 0;
    for (uint32_t i = 0; i < o->n_sites; i++)
        known |= o->sites[i] == a->site;
    if (!known && o->n_sites < MAX_SITES)
        o->sites[o->n_sites++] = a->site;
    if (a->object && !o->object) {
        o->object = a->object;
        o->object_offset = a->object_offset + (piece - a->addr);
    }
    if (a->object && !l->object) {
        l->object = a->object;
        uint64_t into =
            a->object_offset + (piece - a->addr); /* piece - l->addr bytes after the line start */
        l->object_offset = into >= piece - l->addr ? into - (piece - l->addr) : 0;
    }
}

/* The piece of a inside the line at line_addr: first byte and size. */
static uint32_t piece_of(const struct replay_c2c *c, uint64_t line_addr,
                         const struct replay_c2c_access *a, uint64_t *first)
{
    uint64_t size = a->size ? a->size : 1, end = a->addr + size;
    uint64_t line_end = line_addr + (1ull << c->line_shift);
    *first = a->addr > line_addr ? a->addr : line_addr;
    uint64_t last = end < line_end && end > a->addr ? end : line_end;
    return (uint32_t)(last - *first);
}

void replay_c2c_event(struct replay_c2c *c, uint64_t line_addr, const struct replay_c2c_access *a,
                      enum replay_c2c_event kind, int is_true, uint64_t seq)
{
    struct line_row *l = line_of(c, line_addr, 1, seq);
    if (!l) {
        c->untracked++;
        return;
    }
    uint64_t first;
    uint32_t size = piece_of(c, line_addr, a, &first);
    struct off_row *o = off_of(l, (uint32_t)(first - line_addr), size);
    int k = is_true ? 0 : 1;
    switch (kind) {
    case REPLAY_C2C_INVALIDATION:
        l->inval[k]++;
        break;
    case REPLAY_C2C_COHERENCE_MISS:
        l->coh[k]++;
        break;
    case REPLAY_C2C_TRANSFER:
        l->transfers[k]++;
        break;
    }
    if (!o) {
        l->untracked++;
        return;
    }
    switch (kind) {
    case REPLAY_C2C_INVALIDATION:
        o->inval[k]++;
        break;
    case REPLAY_C2C_COHERENCE_MISS:
        o->coh[k]++;
        break;
    case REPLAY_C2C_TRANSFER:
        o->transfers[k]++;
        break;
    }
    touch(l, o, a, first);
}

void replay_c2c_count_misses(struct replay_c2c *c)
{
    c->misses = 1;
}

void replay_c2c_miss(struct replay_c2c *c, uint64_t line_addr, unsigned cause, uint64_t seq)
{
    struct line_row *l = cause < REPLAY_C2C_MISS_CAUSES ? line_of(c, line_addr, 0, seq) : NULL;
    if (l)
        l->misses[cause]++;
}

uint64_t replay_c2c_now(const struct replay_c2c *c)
{
    return c->now;
}

int replay_c2c_tracking(const struct replay_c2c *c)
{
    return c->n_lines != 0;
}

void replay_c2c_set_partition(struct replay_c2c *c, uint32_t bits, uint32_t part)
{
    c->part_mask = (UINT64_C(1) << bits) - 1;
    c->part = part;
}

void replay_c2c_access_at(struct replay_c2c *c, const struct replay_c2c_access *a, uint64_t seq)
{
    c->now = seq;
    replay_c2c_access(c, a);
}

void replay_c2c_access(struct replay_c2c *c, const struct replay_c2c_access *a)
{
    uint64_t seq = c->now++;
    if (c->n_lines == 0)
        return;
    uint64_t size = a->size ? a->size : 1;
    uint64_t lsz = 1ull << c->line_shift;
    uint64_t from = a->addr & ~(lsz - 1), to = (a->addr + size - 1) & ~(lsz - 1);
    if (to < from)
        to = from; /* wraps: the first line only */
    for (uint64_t line = from;; line += lsz) {
        if (((line >> c->line_shift) & c->part_mask) != c->part) { /* another partition's */
            if (line >= to)
                break;
            continue;
        }
        struct line_row *l = line_of(c, line, 0, 0);
        if (l && seq >= l->from) {
            uint64_t first;
            uint32_t n = piece_of(c, line, a, &first);
            struct off_row *o = off_of(l, (uint32_t)(first - line), n);
            if (!o)
                l->untracked++;
            else {
                o->reads += a->is_read || !a->is_write;
                o->writes += a->is_write != 0;
                touch(l, o, a, first);
            }
        }
        if (line >= to)
            break;
    }
}

static uint64_t contention(const struct line_row *l);

/* The order the whole stream creates lines in: by first event, then by
 * address (an access's events come line by line, in address order). */
static int by_creation(const void *a, const void *b)
{
    const struct line_row *x = *(const struct line_row *const *)a,
                          *y = *(const struct line_row *const *)b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

int replay_c2c_absorb(struct replay_c2c *dst, struct replay_c2c *src)
{
    uint32_t n = dst->n_lines + src->n_lines;
    size_t cap = 64; /* line_of doubles the rows at powers of two from 64 on */
    while (cap < n)
        cap *= 2;
    struct line_row **all = malloc((n ? n : 1) * sizeof *all);
    struct line_row *lines = calloc(cap, sizeof *lines);
    uint32_t bits = dst->slot_bits;
    uint32_t *slot = calloc((size_t)1 << bits, sizeof *slot);
    if (!all || !lines || !slot) {
        free(all), free(lines), free(slot);
        return -1;
    }
    for (uint32_t i = 0; i < dst->n_lines; i++)
        all[i] = &dst->lines[i];
    for (uint32_t i = 0; i < src->n_lines; i++)
        all[dst->n_lines + i] = &src->lines[i];
    qsort(all, n, sizeof *all, by_creation);
    uint32_t kept = 0;
    uint64_t untracked = dst->untracked + src->untracked;
    for (uint32_t i = 0; i < n; i++) {
        struct line_row *l = all[i];
        if (kept ==
            REPLAY_C2C_MAX_LINES) { /* the whole stream had no room left for it: its events untracked */
            untracked += contention(l);
            free(l->off);
            continue;
        }
        lines[kept] = *l;
        uint32_t mask = (1u << bits) - 1, h = hash(l->addr, bits);
        while (slot[h])
            h = (h + 1) & mask;
        slot[h] = ++kept;
    }
    free(all);
    free(dst->lines);
    free(dst->slot);
    free(src->lines);
    src->lines = NULL;
    src->n_lines = 0;
    dst->lines = lines;
    dst->n_lines = kept;
    dst->slot = slot;
    dst->slot_bits = bits;
    dst->untracked = untracked;
    dst->last_addr = 0;
    dst->last_k = 0;
    dst->part_mask = dst->part = 0;
    return 0;
}

/* Packed: lines (u32), untracked (u64), then each line's row and its
 * offset rows (their pointers meaningless there). */
size_t replay_c2c_pack(const struct replay_c2c *c, void *buf, size_t cap)
{
    size_t n = 4 + 8;
    for (uint32_t i = 0; i < c->n_lines; i++)
        n += sizeof(struct line_row) + c->lines[i].n_off * sizeof(struct off_row);
    if (!buf || cap < n)
        return n;
    unsigned char *at = buf;
    memcpy(at, &c->n_lines, 4), at += 4;
    memcpy(at, &c->untracked, 8), at += 8;
    for (uint32_t i = 0; i < c->n_lines; i++) {
        memcpy(at, &c->lines[i], sizeof(struct line_row)), at += sizeof(struct line_row);
        size_t o = c->lines[i].n_off * sizeof(struct off_row);
        if (o)
            memcpy(at, c->lines[i].off, o), at += o;
    }
    return n;
}

int replay_c2c_absorb_packed(struct replay_c2c *dst, const void *buf, size_t len,
                             struct pes_error *err)
{
    const unsigned char *at = buf, *end = at + len;
    uint32_t n;
    uint64_t untracked;
    if (len < 12)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "cache-line table cut short (%zu bytes)", len);
    memcpy(&n, at, 4), at += 4;
    memcpy(&untracked, at, 8), at += 8;
    struct replay_c2c src = {.line_shift = dst->line_shift, .untracked = untracked};
    if (n > REPLAY_C2C_MAX_LINES || !(src.lines = calloc(n ? n : 1, sizeof *src.lines)))
        return pes_error_set(err, n > REPLAY_C2C_MAX_LINES ? PES_ERR_FORMAT : PES_ERR_NOMEM, 0,
                             "cache-line table of %u lines", n);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct line_row *l = &src.lines[i];
        if ((size_t)(end - at) < sizeof *l) {
            rc = pes_error_set(err, PES_ERR_FORMAT, 0, "cache-line table cut short (%zu bytes)",
                               len);
            break;
        }
        memcpy(l, at, sizeof *l), at += sizeof *l;
        l->off = NULL;
        size_t o = (size_t)l->n_off * sizeof *l->off;
        src.n_lines = i + 1;
        if (l->n_off > REPLAY_C2C_MAX_OFFSETS || (size_t)(end - at) < o)
            rc = pes_error_set(err, PES_ERR_FORMAT, 0, "cache-line table cut short (%zu bytes)",
                               len);
        else if (o && !(l->off = malloc(o)))
            rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        else if (o)
            memcpy(l->off, at, o), at += o;
        if (!l->off)
            l->n_off = 0;
        l->cap_off = l->n_off;
    }
    if (rc == 0 && at != end)
        rc = pes_error_set(err, PES_ERR_FORMAT, 0, "cache-line table: %zu bytes too many",
                           (size_t)(end - at));
    if (rc == 0 && replay_c2c_absorb(dst, &src) < 0)
        rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t i = 0; src.lines && i < src.n_lines; i++)
        free(src.lines[i].off);
    free(src.lines);
    return rc;
}

/* ------------------------------------------------------------ report */

static uint64_t contention(const struct line_row *l)
{
    return l->inval[0] + l->inval[1] + l->coh[0] + l->coh[1] + l->transfers[0] + l->transfers[1];
}

static int by_contention(const void *a, const void *b, void *lines)
{
    const struct line_row *x = (const struct line_row *)lines + *(const uint32_t *)a;
    const struct line_row *y = (const struct line_row *)lines + *(const uint32_t *)b;
    uint64_t cx = contention(x), cy = contention(y);
    if (cx != cy)
        return cx < cy ? 1 : -1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int by_offset(const void *a, const void *b)
{
    const struct off_row *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

static void pair(struct pes_report *r, struct pes_rnode *parent, const char *key, const uint64_t *v)
{
    struct pes_rnode *o = pes_r_object(r, parent, key);
    pes_r_u64(r, o, "true", v[0]);
    pes_r_u64(r, o, "false", v[1]);
}

static void threads(struct pes_report *r, struct pes_rnode *parent, uint64_t mask)
{
    struct pes_rnode *a = pes_r_array(r, parent, "threads");
    for (int b = 0; b < 64; b++)
        if (mask >> b & 1)
            pes_r_u64(r, a, NULL, (uint64_t)b);
}

/* "file.c:32" of a site; a site without a line (clang gives a store it
 * merges from two branches line 0) says what is known: "func (file.c, line
 * unknown)"; "" for no site at all. */
static void source_line(const struct pes_stream_info *si, uint32_t site, char *buf, size_t n)
{
    const struct pes_site *s =
        site == UINT32_MAX || !si->site ? NULL : si->site(si->site_ctx, site);
    const char *base = s && s->file && *s->file ? strrchr(s->file, '/') : NULL;
    base = base ? base + 1 : s ? s->file : NULL;
    const char *fn = s && s->function && *s->function ? s->function : NULL;
    if (base && *base && s->line)
        snprintf(buf, n, "%s:%u", base, s->line);
    else if (s && (fn || (base && *base)))
        snprintf(buf, n, "%s (%s%sline unknown)", fn ? fn : "?", base && *base ? base : "",
                 base && *base ? ", " : "");
    else if (s)
        snprintf(buf, n, "site %u (line unknown)", site);
    else
        snprintf(buf, n, "%s", "");
}

void replay_c2c_publish(const struct replay_c2c *c, struct pes_report *r, struct pes_rnode *parent,
                        const struct pes_stream_info *si, uint32_t top)
{
    struct pes_rnode *arr = pes_r_array(r, parent, "cache_lines");
    pes_r_u64(r, parent, "cache_lines_untracked", c->untracked);
    uint32_t n = c->n_lines;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, by_contention, c->lines);
    char buf[256];
    for (uint32_t i = 0; i < n && i < top; i++) {
        struct line_row l = c->lines[order[i]];
        struct off_row *sorted = malloc((l.n_off ? l.n_off : 1) * sizeof *sorted);
        if (!sorted) {
            pes_r_array(r, NULL, NULL); /* marks the report failed */
            break;
        }
        if (l.n_off)
            memcpy(sorted, l.off, l.n_off * sizeof *sorted);
        l.off = sorted;
        if (contention(&l) == 0) {
            free(sorted);
            break;
        }
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        pes_r_u64(r, o, "address", l.addr);
        pes_r_u64(r, o, "object_id", l.object);
        replay_object_name(si, l.object, buf, sizeof buf);
        pes_r_str(r, o, "object", buf);
        replay_object_part(si, l.object, l.object_offset, buf, sizeof buf);
        pes_r_str(r, o, "part", buf);
        pair(r, o, "invalidations", l.inval);
        pair(r, o, "coherence_misses", l.coh);
        pair(r, o, "transfers", l.transfers);
        if (c->misses) {
            static const char *const cause[REPLAY_C2C_MISS_CAUSES] = {"compulsory", "capacity",
                                                                      "coherence", "conflict"};
            struct pes_rnode *m = pes_r_object(r, o, "l1_miss_classes");
            for (int k = 0; k < REPLAY_C2C_MISS_CAUSES; k++)
                pes_r_u64(r, m, cause[k], l.misses[k]);
        }
        threads(r, o, l.threads);
        pes_r_u64(r, o, "untracked", l.untracked);
        qsort(l.off, l.n_off, sizeof *l.off, by_offset);
        struct pes_rnode *offs = pes_r_array(r, o, "offsets");
        for (uint32_t k = 0; k < l.n_off; k++) {
            const struct off_row *f = &l.off[k];
            struct pes_rnode *x = pes_r_object(r, offs, NULL);
            pes_r_u64(r, x, "offset", f->offset);
            pes_r_u64(r, x, "size", f->size);
            pes_r_u64(r, x, "reads", f->reads);
            pes_r_u64(r, x, "writes", f->writes);
            threads(r, x, f->threads);
            struct pes_rnode *sites = pes_r_array(r, x, "sites"),
                             *src = pes_r_array(r, x, "sources");
            for (uint32_t s = 0; s < f->n_sites; s++) {
                pes_r_i64(r, sites, NULL, f->sites[s] == UINT32_MAX ? -1 : (int64_t)f->sites[s]);
                source_line(si, f->sites[s], buf, sizeof buf);
                int dup = 0;
                for (size_t j = 0; j < pes_r_count(src); j++)
                    dup |= strcmp(pes_r_s(pes_r_at(src, j)), buf) == 0;
                if (*buf && !dup)
                    pes_r_str(r, src, NULL, buf);
            }
            replay_object_name(si, f->object, buf, sizeof buf);
            pes_r_str(r, x, "object", buf);
            replay_object_part(si, f->object, f->object_offset, buf, sizeof buf);
            pes_r_str(r, x, "part", buf);
            /* "cnt+8": a byte offset the text report explains (-g names the field) */
            if (f->object_offset && si->objects &&
                pes_objects_untyped_global(si->objects, f->object))
                pes_r_flag(pes_r_bool(r, x, "part_untyped", 1), PES_R_TEXT_ONLY);
            pair(r, x, "invalidations", f->inval);
            pair(r, x, "coherence_misses", f->coh);
            pair(r, x, "transfers", f->transfers);
        }
        free(sorted);
    }
    free(order);
}
