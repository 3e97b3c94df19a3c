/*
 * stride.c — how far apart a source line's consecutive accesses in one
 * thread lie: the input of the findings' stride rule (report/findings.c),
 * which names a loop that walks across cache lines (a column-major walk of a
 * row-major array) and its stride in bytes.
 *
 * Per (thread, source line): each access is measured against the nearest of
 * the line's RECENT previous accesses in that thread, not only the last one,
 * so that an unrolled or vectorised loop (four sites on one line, each
 * stepping by four elements) and a line that reads several arrays (a[i] +
 * b[i]) show their real step: the element size, not the unroll's or the
 * distance between the arrays. Counted: the pairs, how many of them land on
 * another line (of the reuse granularity), how many repeat the address
 * they are measured against (the store of a += after its load: it does not
 * move the walk), and the smallest non-zero distance (the loop's stride
 * where the walk is regular). Sites without a
 * source line are their own line.
 *
 * Parts of the stream (pes-replay-mpi) merge exactly: a part sends its
 * first RECENT accesses of each (thread, line) apart from the rest, and the
 * merge measures them again against the earlier parts' last RECENT.
 *
 * Published as a text-only table of the configuration ("site_strides", the
 * 64 lines with the most line-crossing pairs): the findings quote it in
 * their evidence, the JSON report carries it there only.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

enum {
    STRIDE_ROWS = 64, /* the rows the findings may rank (they list at most 5) */
    /* previous accesses an access is measured against: an unroll by 4 (a smaller
     * window only overstates the line changes of a line that reads several
     * arrays; the rule's smallest step, an element there, still rules it out) */
    RECENT = 4
};

struct counts {
    uint64_t pairs, cross, min; /* min: UINT64_MAX while no non-zero distance */
    uint64_t repeats;           /* pairs at distance 0: the store of a += after its load */
};

struct entry {
    uint64_t line;         /* hash of the source line (file, line), or of the site without one */
    uint32_t stream, site; /* site: the line's smallest site id (names it) */
    uint64_t accesses, bytes;
    struct counts head, tail; /* pairs of the part's first RECENT accesses, and of the rest */
    uint64_t first[RECENT];   /* the part's first RECENT accesses */
    uint64_t recent[RECENT];  /* the last RECENT, a ring: the next at accesses % RECENT */
};

/* The entry of a recent (stream, site), direct-mapped: a loop's few sites
 * skip both hash lookups. */
enum { MEMO = 4096 };
struct memo {
    uint32_t stream, site, entry; /* entry number + 1 (0: empty) */
};

struct site_line {
    uint32_t site;
    uint64_t line; /* 0: free */
};

struct stride {
    const struct pes_stream_info *si;
    uint32_t gran;
    struct entry *entry; /* n of them, room for n_cap */
    size_t n, n_cap;
    uint32_t *index; /* open addressing: entry number + 1 (0: free); cap a power of two > 2n */
    size_t cap;
    struct site_line *sites;
    size_t sites_cap, sites_n;
    struct memo memo[MEMO];
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return (si->mimicked || !k->mimic) && si->kind != PES_TRACE_SAMPLED;
}

static void destroy(void *self)
{
    struct stride *s = self;
    free(s->entry);
    free(s->index);
    free(s->sites);
    free(s);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    (void)k;
    struct stride *s = calloc(1, sizeof *s);
    if (s) {
        s->si = si;
        s->gran = si->line ? si->line : 64;
        s->entry = malloc((s->n_cap = 128) * sizeof *s->entry);
        s->index = calloc(s->cap = 256, sizeof *s->index);
        s->sites = calloc(s->sites_cap = 256, sizeof *s->sites);
    }
    if (!s || !s->entry || !s->index || !s->sites) {
        if (s)
            destroy(s);
        pes_error_set(err, PES_ERR_NOMEM, 0, "stride: out of memory");
        return NULL;
    }
    return s;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* FNV-1a of the file name, mixed with the line number. */
static uint64_t line_hash(const struct pes_site *site, uint32_t id)
{
    if (!site || !site->line || !site->file || !*site->file)
        return mix(0x5173ull << 32 | id) | 1; /* its own line */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = site->file; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return mix(h ^ site->line) | 1;
}

/* The line hash of site id, computed once per site. 0 without memory. */
static uint64_t site_line(struct stride *s, uint32_t id)
{
    if (2 * (s->sites_n + 1) > s->sites_cap) {
        size_t cap = s->sites_cap * 2;
        struct site_line *t = calloc(cap, sizeof *t);
        if (!t)
            return 0;
        for (size_t i = 0; i < s->sites_cap; i++)
            if (s->sites[i].line) {
                size_t j = mix(s->sites[i].site) & (cap - 1);
                while (t[j].line)
                    j = (j + 1) & (cap - 1);
                t[j] = s->sites[i];
            }
        free(s->sites);
        s->sites = t;
        s->sites_cap = cap;
    }
    size_t j = mix(id) & (s->sites_cap - 1);
    while (s->sites[j].line && s->sites[j].site != id)
        j = (j + 1) & (s->sites_cap - 1);
    if (!s->sites[j].line) {
        const struct pes_site *site = s->si->site ? s->si->site(s->si->site_ctx, id) : NULL;
        s->sites[j].site = id;
        s->sites[j].line = line_hash(site, id);
        s->sites_n++;
    }
    return s->sites[j].line;
}

static uint64_t key_of(uint32_t stream, uint64_t line)
{
    return mix(line ^ mix(stream));
}

static int grow(struct stride *s)
{
    size_t cap = s->cap * 2;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = key_of(s->entry[i].stream, s->entry[i].line) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    free(s->index);
    s->index = t;
    s->cap = cap;
    return 0;
}

/* The entry of (stream, line), created empty if new; NULL without memory
 * (or beyond 2^31 entries). Valid until the next call. */
static struct entry *find(struct stride *s, uint32_t stream, uint64_t line, uint32_t site)
{
    if (2 * (s->n + 1) > s->cap && grow(s) < 0)
        return NULL;
    size_t j = key_of(stream, line) & (s->cap - 1);
    for (; s->index[j]; j = (j + 1) & (s->cap - 1)) {
        struct entry *e = &s->entry[s->index[j] - 1];
        if (e->stream == stream && e->line == line) {
            if (site < e->site)
                e->site = site;
            return e;
        }
    }
    if (s->n == s->n_cap) { /* by half: 144 bytes a (thread, line) */
        size_t cap = s->n_cap + s->n_cap / 2;
        struct entry *more = s->n < (1u << 31) ? realloc(s->entry, cap * sizeof *more) : NULL;
        if (!more)
            return NULL;
        s->entry = more;
        s->n_cap = cap;
    }
    struct entry *e = &s->entry[s->n];
    memset(e, 0, sizeof *e);
    e->line = line;
    e->stream = stream;
    e->site = site;
    e->head.min = e->tail.min = UINT64_MAX;
    s->index[j] = (uint32_t)++s->n;
    return e;
}

/* addr against the entry's last RECENT accesses (those it has), into c. */
static void measure(const struct entry *e, uint64_t addr, uint32_t gran, struct counts *c)
{
    uint64_t n = e->accesses < RECENT ? e->accesses : RECENT, best = UINT64_MAX, near = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = e->recent[i], d = addr > r ? addr - r : r - addr;
        if (d < best)
            best = d, near = r;
    }
    if (!n)
        return;
    c->pairs++;
    c->cross += near / gran != addr / gran;
    c->repeats += best == 0;
    if (best && best < c->min)
        c->min = best;
}

static void push(struct entry *e, uint64_t addr)
{
    e->recent[e->accesses % RECENT] = addr;
    if (e->accesses < RECENT)
        e->first[e->accesses] = addr;
    e->accesses++;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct stride *s = self;
    for (size_t i = 0; i < b->n; i++) {
        struct memo *m = &s->memo[(b->site[i] * 31u + b->stream[i]) & (MEMO - 1)];
        struct entry *e = NULL;
        if (m->entry && m->site == b->site[i] && m->stream == b->stream[i])
            e = &s->entry[m->entry - 1];
        else {
            uint64_t line = site_line(s, b->site[i]);
            if (line && (e = find(s, b->stream[i], line, b->site[i])))
                *m = (struct memo){b->stream[i], b->site[i], (uint32_t)(e - s->entry) + 1};
        }
        if (!e)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "stride: out of memory");
        measure(e, b->addr[i], s->gran, e->accesses < RECENT ? &e->head : &e->tail);
        push(e, b->addr[i]);
        e->bytes += b->size[i];
    }
    return 0;
}

static void add(struct counts *to, const struct counts *c)
{
    to->pairs += c->pairs;
    to->cross += c->cross;
    to->repeats += c->repeats;
    if (c->min < to->min)
        to->min = c->min;
}

/* A part: its entries as they are. */
static size_t part_pack(void *self, void *buf, size_t cap)
{
    struct stride *s = self;
    size_t len = s->n * sizeof(struct entry);
    if (buf && cap >= len && len)
        memcpy(buf, s->entry, len);
    return len;
}

/* A later part (parts arrive in stream order): its first accesses measured
 * again against what came before them, then the rest as it counted them. */
static int part_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct stride *s = self;
    if (len % sizeof(struct entry))
        return pes_error_set(err, PES_ERR_FORMAT, 0, "stride: a part of %zu bytes", len);
    for (size_t off = 0; off < len; off += sizeof(struct entry)) {
        struct entry in;
        memcpy(&in, (const char *)buf + off, sizeof in);
        struct entry *e = find(s, in.stream, in.line, in.site);
        if (!e)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "stride: out of memory");
        uint64_t seen = e->accesses;
        if (!seen) { /* the first part with this line: its counts stand */
            *e = in;
            continue;
        }
        uint64_t heads = in.accesses < RECENT ? in.accesses : RECENT;
        struct counts c = e->tail; /* the merged state's counts live in tail */
        for (uint64_t k = 0; k < heads; k++) {
            measure(e, in.first[k], s->gran, &c);
            e->recent[e->accesses % RECENT] = in.first[k];
            e->accesses++;
        }
        e->tail = c;
        add(&e->tail, &in.tail);
        /* its last RECENT accesses, in the ring order the count implies */
        e->accesses = seen + in.accesses;
        if (in.accesses > RECENT)
            for (uint64_t k = 0; k < RECENT; k++) {
                uint64_t idx = in.accesses - RECENT + k; /* in's own numbering */
                e->recent[(e->accesses - RECENT + k) % RECENT] = in.recent[idx % RECENT];
            }
        e->bytes += in.bytes;
    }
    return 0;
}

static int by_line_site(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return (x->site > y->site) - (x->site < y->site);
}

/* Most line-crossing pairs first; ties by site id (the order is the same
 * for every --jobs and every split). */
static int by_cross(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->tail.cross != y->tail.cross)
        return x->tail.cross < y->tail.cross ? 1 : -1;
    return (x->site > y->site) - (x->site < y->site);
}

static void publish(void *self, const struct pes_publish *to)
{
    struct stride *s = self;
    struct pes_report *r = to->r;
    /* one row per source line: its threads' entries summed (into tail), in
     * place (the entries are not looked up after this) */
    struct entry *row = s->entry;
    size_t n = s->n;
    for (size_t i = 0; i < n; i++)
        add(&row[i].tail, &row[i].head);
    qsort(row, n, sizeof *row, by_line_site);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && row[m - 1].line == row[i].line) {
            struct entry *e = &row[m - 1];
            e->accesses += row[i].accesses;
            e->bytes += row[i].bytes;
            add(&e->tail, &row[i].tail);
            if (row[i].site < e->site)
                e->site = row[i].site;
        } else
            row[m++] = row[i];
    }
    s->n = 0; /* the index no longer matches: nothing more to find */
    qsort(row, m, sizeof *row, by_cross);
    struct pes_rnode *t = pes_r_flag(pes_r_array(r, to->config, "site_strides"), PES_R_TEXT_ONLY);
    for (size_t i = 0; i < m && i < STRIDE_ROWS && row[i].tail.cross; i++) {
        struct pes_rnode *o = pes_r_object(r, t, NULL);
        uint32_t id = row[i].site;
        const struct pes_site *site = s->si->site ? s->si->site(s->si->site_ctx, id) : NULL;
        pes_r_u64(r, o, "site", id);
        pes_r_str(r, o, "file", site && site->file ? site->file : "");
        pes_r_u64(r, o, "line", site ? site->line : 0);
        pes_r_str(r, o, "function", site && site->function ? site->function : "");
        pes_r_u64(r, o, "accesses", row[i].accesses);
        pes_r_u64(r, o, "bytes", row[i].bytes);
        pes_r_u64(r, o, "pairs", row[i].tail.pairs);
        pes_r_u64(r, o, "cross", row[i].tail.cross);
        pes_r_u64(r, o, "repeats", row[i].tail.repeats);
        pes_r_u64(r, o, "min_stride", row[i].tail.min == UINT64_MAX ? 0 : row[i].tail.min);
    }
}

const struct pes_analysis pes_analysis_stride = {
    .name = "stride",
    .help = "per source line: a thread's accesses that move to another cache line, smallest stride",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
    .part_pack = part_pack,
    .part_merge = part_merge,
};
