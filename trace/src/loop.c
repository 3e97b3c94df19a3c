/*
 * loop.c — loop descriptor groups (pes/trace.h, "Loop descriptors";
 * docs/trace-format.md §3.2): checking a run of stored records, as the
 * encoder gets them and the reader decodes them, and expanding it into the
 * records it stands for. Expansion is on the replay hot path: per group one
 * division, then a copy of the m templates per iteration with their
 * addresses stepped (a mixed group's irregular positions take the next
 * irregular record instead), and plain records copied in runs.
 */
#include <stdarg.h>
#include <stdio.h>

#include "trace_internal.h"

static inline int is_loop_id(uint32_t id)
{
    return id - PES_ID_LOOP <= PES_ID_LOOP_STEP - PES_ID_LOOP;
}

/* The first q with (phase + q) % m == j; for j, phase < m (a checked
 * group's) without a division, otherwise as it always was computed. */
static inline uint32_t first_at(uint32_t m, uint32_t phase, uint32_t j)
{
    if (j < m && phase < m)
        return j >= phase ? j - phase : j + m - phase;
    return (j + m - phase) % m;
}

uint64_t pes_trace_loop_times(uint64_t R, uint32_t m, uint32_t phase, uint32_t j)
{
    uint64_t first = first_at(m, phase, j);
    return first < R ? (R - 1 - first) / m + 1 : 0;
}

/* The irregular records of a group: its records on irregular positions.
 * With R = q m + r, position j holds q records, one more if it is among the
 * r after phase: one division per group, not one per position (cg's rows are
 * groups of a few iterations). */
static uint64_t irregular_records(const struct pes_record *g)
{
    uint32_t m = g->extra & 0xFFFFu, phase = g->extra >> 16;
    if (m == 0)
        return 0;
    uint64_t q = g->addr / m, r = g->addr % m, k = 0;
    for (uint32_t j = 0; j < m; j++)
        if (g[1 + m + j].extra == PES_LOOP_STEP_IRREGULAR)
            k += q + (first_at(m, phase, j) < r);
    return k;
}

size_t pes_trace_loop_size(const struct pes_record *g)
{
    return 1 + 2 * (size_t)(g->extra & 0xFFFFu) + (size_t)irregular_records(g);
}

size_t pes_loop_find(const struct pes_record *rec, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_loop_id(rec[i].id))
            return i;
    return n;
}

static int walk_fail(struct pes_loop_walk *w, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int walk_fail(struct pes_loop_walk *w, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    w->at = w->base + at;
    return -1;
}

/* A record's id and extra as one value, to compare both at once. */
static inline uint64_t id_extra(const struct pes_record *r)
{
    return (uint64_t)r->id | (uint64_t)r->extra << 32;
}

/* Checks the group whose LOOP record is rec[i] (n records from rec[0]). */
static int check_group(const struct pes_record *rec, size_t n, size_t i, struct pes_loop_walk *w)
{
    uint32_t m = rec[i].extra & 0xFFFFu, phase = rec[i].extra >> 16;
    if (m < 1 || m > PES_LOOP_MAX_RECORDS)
        return walk_fail(w, i,
                         "record %zu, a loop descriptor, has m = %u records per iteration "
                         "(1..%u)",
                         w->base + i, m, PES_LOOP_MAX_RECORDS);
    if (phase >= m)
        return walk_fail(w, i, "record %zu, a loop descriptor, has phase %u, not below m = %u",
                         w->base + i, phase, m);
    if (rec[i].addr == 0)
        return walk_fail(w, i, "record %zu, a loop descriptor, stands for 0 records", w->base + i);
    if (n - i - 1 < 2 * (size_t)m)
        return walk_fail(w, i,
                         "record %zu, a loop descriptor, is cut: its %u templates and %u steps "
                         "need %u records, only %zu follow it",
                         w->base + i, m, m, 2 * m, n - i - 1);
    for (uint32_t j = 0; j < m; j++) {
        const struct pes_record *t = &rec[i + 1 + j];
        if (t->id >= PES_ID_CONTROL_FIRST)
            return walk_fail(w, i + 1 + j,
                             "record %zu, template %u of the loop descriptor at record %zu, has "
                             "the control id 0x%08x (templates are sites or basic blocks)",
                             w->base + i + 1 + j, j, w->base + i, t->id);
    }
    uint32_t irregular = 0;
    for (uint32_t j = 0; j < m; j++) {
        const struct pes_record *s = &rec[i + 1 + m + j];
        if (s->id != PES_ID_LOOP_STEP ||
            (s->extra != 0 && (s->extra != PES_LOOP_STEP_IRREGULAR || !w->mixed)))
            return walk_fail(w, i + 1 + m + j,
                             "record %zu, step %u of the loop descriptor at record %zu, is not a "
                             "LOOP_STEP record with extra 0%s (id 0x%08x, extra %u)",
                             w->base + i + 1 + m + j, j, w->base + i, w->mixed ? " or 1" : "",
                             s->id, s->extra);
        if (s->extra == 0)
            continue;
        if (s->addr != 0)
            return walk_fail(w, i + 1 + m + j,
                             "record %zu, step %u of the loop descriptor at record %zu, is "
                             "irregular but not 0",
                             w->base + i + 1 + m + j, j, w->base + i);
        irregular++;
    }
    if (!irregular)
        return 0;
    /* the irregular records, in expansion order, with their templates' ids */
    uint64_t k = irregular_records(&rec[i]);
    if (k > n - i - 1 - 2 * (size_t)m)
        return walk_fail(w, i,
                         "record %zu, a loop descriptor, is cut: its %llu irregular records "
                         "should follow its steps, only %zu do",
                         w->base + i, (unsigned long long)k, n - i - 1 - 2 * (size_t)m);
    /* an irregular template's address is its first record's (the codec then
     * predicts the records from it as without descriptors), or 0 if none.
     * The irregular positions in expansion order (from phase, cyclically):
     * record x after the steps is position pos[x % np]'s, so the first np
     * records are the first of each (their addresses checked too) and the
     * rest only need their template's id and extra; no pass over the
     * regular positions per record (cg's groups have one irregular of four) */
    uint32_t pos[PES_LOOP_MAX_RECORDS], np = 0;
    for (uint32_t q = 0, p = phase; q < m; q++, p = p + 1 == m ? 0 : p + 1)
        if (rec[i + 1 + m + p].extra == PES_LOOP_STEP_IRREGULAR)
            pos[np++] = p;
    uint64_t seen = 0, key[PES_LOOP_MAX_RECORDS];
    for (uint32_t x = 0; x < np; x++)
        key[x] = id_extra(&rec[i + 1 + pos[x]]);
    uint32_t j = 0;
    const size_t first = i + 1 + 2 * (size_t)m, end = first + k;
    size_t a = first;
    for (; a < end && a - first < np; a++) { /* each position's first record */
        j = pos[a - first];
        const struct pes_record *t = &rec[i + 1 + j];
        if (id_extra(&rec[a]) != key[a - first])
            break;
        if (rec[a].addr != t->addr)
            return walk_fail(w, i + 1 + j,
                             "record %zu, template %u of the loop descriptor at record %zu, is "
                             "irregular, its address 0x%llx not its first record's 0x%llx",
                             w->base + i + 1 + j, j, w->base + i, (unsigned long long)t->addr,
                             (unsigned long long)rec[a].addr);
        seen |= 1ull << j;
    }
    if (a - first == np) { /* the rest: ids and extras only */
        if (np == 1) {
            while (a < end && id_extra(&rec[a]) == key[0])
                a++;
        } else {
            for (uint32_t x = 0; a < end && id_extra(&rec[a]) == key[x]; a++)
                x = x + 1 == np ? 0 : x + 1;
        }
    }
    if (a < end) {
        j = pos[(a - first) % np];
        const struct pes_record *t = &rec[i + 1 + j];
        return walk_fail(w, a,
                         "record %zu, irregular record %zu of the loop descriptor at record "
                         "%zu, has id %u and extra %u, its template %u id %u and extra %u",
                         w->base + a, a - first, w->base + i, rec[a].id, rec[a].extra, j, t->id,
                         t->extra);
    }
    for (j = 0; j < m; j++)
        if (rec[i + 1 + m + j].extra == PES_LOOP_STEP_IRREGULAR && !(seen >> j & 1) &&
            rec[i + 1 + j].addr != 0)
            return walk_fail(w, i + 1 + j,
                             "record %zu, template %u of the loop descriptor at record %zu, is "
                             "irregular with no record in the group, its address 0x%llx not 0",
                             w->base + i + 1 + j, j, w->base + i,
                             (unsigned long long)rec[i + 1 + j].addr);
    return 0;
}

int pes_loop_walk(const struct pes_record *rec, size_t n, size_t base, uint64_t max_expanded,
                  size_t max_stored, int mixed, struct pes_loop_walk *w)
{
    w->mixed = mixed;
    w->base = base;
    w->stored = 0;
    w->expanded = 0;
    w->groups = 0;
    w->at = 0;
    w->why[0] = '\0';
    size_t i = 0;
    while (i < n) {
        /* a run of plain records, as long as both limits allow */
        uint64_t room = max_expanded - w->expanded;
        size_t lim = max_stored - i < room ? max_stored - i : (size_t)room;
        lim = n - i < lim ? n - i : lim;
        size_t k = i + pes_loop_find(rec + i, lim);
        w->expanded += k - i;
        i = k;
        w->stored = i;
        if (i == n || !is_loop_id(rec[i].id))
            break; /* the end, or a limit */
        if (rec[i].id == PES_ID_LOOP_STEP)
            return walk_fail(w, i, "record %zu is a LOOP_STEP outside a loop descriptor",
                             w->base + i);
        if (check_group(rec, n, i, w))
            return -1;
        size_t size = pes_trace_loop_size(&rec[i]);
        if (rec[i].addr > max_expanded - w->expanded || size > max_stored - i)
            break; /* the group does not fit: the caller cuts before it */
        w->expanded += rec[i].addr;
        w->groups++;
        i += size;
        w->stored = i;
    }
    return 0;
}

/* A mixed group (checked): irregular positions take the next irregular record. */
static struct pes_record *expand_mixed(const struct pes_record *g, struct pes_record *out)
{
    uint32_t m = g->extra & 0xFFFFu, j = g->extra >> 16;
    const struct pes_record *tpl = g + 1, *step = g + 1 + m, *irr = g + 1 + 2 * m;
    struct pes_record cur[PES_LOOP_MAX_RECORDS];
    uint64_t s[PES_LOOP_MAX_RECORDS];
    uint8_t irregular[PES_LOOP_MAX_RECORDS];
    for (uint32_t k = 0; k < m; k++) {
        cur[k] = tpl[k];
        s[k] = step[k].addr;
        irregular[k] = step[k].extra == PES_LOOP_STEP_IRREGULAR;
    }
    /* positions before phase start at iteration 1 */
    for (uint32_t k = 0; k < j; k++)
        cur[k].addr += s[k];
    for (uint64_t q = g->addr; q; q--) {
        if (irregular[j]) {
            *out++ = *irr++;
        } else {
            *out++ = cur[j];
            cur[j].addr += s[j];
        }
        if (++j == m)
            j = 0;
    }
    return out;
}

/* The records of one group (checked): R records from iteration position phase. */
static struct pes_record *expand_group(const struct pes_record *g, struct pes_record *out)
{
    uint32_t m = g->extra & 0xFFFFu, phase = g->extra >> 16;
    uint64_t left = g->addr;
    const struct pes_record *tpl = g + 1, *step = g + 1 + m;
    struct pes_record cur[PES_LOOP_MAX_RECORDS];
    uint64_t s[PES_LOOP_MAX_RECORDS];
    for (uint32_t j = 0; j < m; j++) {
        if (step[j].extra == PES_LOOP_STEP_IRREGULAR)
            return expand_mixed(g, out);
        cur[j] = tpl[j];
        s[j] = step[j].addr;
    }
    /* the first, partial iteration: positions phase .. m-1 of iteration 0 */
    for (uint32_t j = phase; j < m && left; j++, left--) {
        *out++ = cur[j];
        cur[j].addr += s[j];
    }
    /* positions before phase start at iteration 1 */
    for (uint32_t j = 0; j < phase; j++)
        cur[j].addr += s[j];
    if (m == 1) {
        uint64_t a = cur[0].addr, d = s[0];
        for (uint64_t q = 0; q < left; q++, a += d)
            out[q] = (struct pes_record){a, cur[0].id, cur[0].extra};
        return out + left;
    }
    for (uint64_t it = left / m; it; it--) {
        for (uint32_t j = 0; j < m; j++) {
            out[j] = cur[j];
            cur[j].addr += s[j];
        }
        out += m;
    }
    for (uint32_t j = 0, tail = (uint32_t)(left % m); j < tail; j++)
        *out++ = cur[j];
    return out;
}

void pes_loop_expand(const struct pes_record *rec, size_t n, struct pes_record *out)
{
    size_t i = 0;
    while (i < n) {
        size_t k = i + pes_loop_find(rec + i, n - i);
        memcpy(out, rec + i, (k - i) * sizeof *out);
        out += k - i;
        if (k == n)
            break;
        out = expand_group(&rec[k], out);
        i = k + pes_trace_loop_size(&rec[k]);
    }
}
