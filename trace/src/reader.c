/*
 * reader.c — pes_trace_reader: streams a trace block by block (one skippable
 * index frame + one data frame at a time), validates every size against the
 * file and the payload, merges MODULE/THREAD tables, and turns a cut-off
 * file into "everything complete, then a truncation warning".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "trace_internal.h"

#define MAX_THREADS (1u << 20)

/* An allocation site merged from the ALLOC_SITES blocks; ips in r->tables. */
struct alloc_entry {
    struct pes_alloc_site s;
    uint64_t first_off; /* offset of the first block that had it */
};

/* Block types this reader decodes; others are a newer writer's extension (§5). */
static int known_block(uint32_t type)
{
    return type >= PES_BLOCK_HEADER && type <= PES_BLOCK_ALLOC_SITES;
}

struct module_entry {
    struct pes_module m;
    uint64_t first_off;                  /* offset of its first MODULE block */
    const struct pes_site **site_by_off; /* id - id_base */
    const struct pes_bb **bb_by_off;     /* id - id_base - n_sites */
};

/* Block-order and count checks (docs/trace-format.md §6), shared by the
 * sequential path (_next) and the index scan (_index, used by _load_tables and
 * every random-access reader), so every command reaches the same verdict. */
struct order_check {
    int saw_header, saw_footer;
    uint64_t *items;    /* per thread: ACCESS records (full) or EVENTS events (sampled) */
    uint8_t *announced; /* per thread: its THREAD block came */
    size_t n_items;
};

/* Per thread: the last time mark (TIME / THREAD_END) decoded and the offset
 * of its block, to check that one thread's ACCESS blocks come in program
 * order (docs/trace-format.md §1): blocks carry no sequence number, the
 * monotonic time marks are what betrays two swapped blocks. */
struct time_state {
    uint64_t off;        /* offset of the last ACCESS block decoded */
    uint64_t last;       /* its last time mark */
    uint8_t valid, seen; /* a block was decoded; it (or an earlier one) had a mark */
};

struct pes_trace_reader {
    char *name;
    int fd; /* -1 for memory */
    uint8_t *mem;
    uint64_t size;
    uint64_t pos; /* next block (sequential reading) */
    int done, failed, truncated;
    int tables_loaded, loading_tables; /* _load_tables done / running */
    uint64_t skipped;       /* blocks of unknown type (known at the end of _next / after _index) */
    uint64_t seq_skipped;   /* those _next passed so far */
    struct order_check seq; /* state of the sequential path */
    struct time_state *times;
    size_t n_times;
    char why_buf[160];
    struct pes_error fail; /* repeated on every call after a failure */
    char trunc_msg[256];
    char skip_msg[256];
    ZSTD_DCtx *dctx;
    struct pes_access_codec *codec;
    struct pes_buf frame, content;
    struct pes_arena tables, scratch;
    struct pes_trace_info info;
    struct module_entry *mods; /* sorted by id_base, non-overlapping */
    size_t n_mods, cap_mods;
    struct pes_thread *threads;
    uint8_t *thread_known;
    size_t n_threads, cap_threads;
    void *out; /* records / events / mappings / totals of the current block */
    size_t out_cap;
    struct pes_record *expanded; /* the records of an ACCESS block with loop descriptors */
    size_t expanded_cap;
    int raw;                /* hand out ACCESS records as stored (pes_trace_reader_set_raw) */
    uint16_t block_version; /* of the block being read (check_block_header) */
    struct pes_thread thread_tmp;
    struct pes_module module_tmp;
    struct alloc_entry **allocs; /* open-addressing table by id (NULL = empty), entries in tables */
    size_t n_allocs, cap_allocs; /* cap: a power of two, or 0 */
};

/* ---------------------------------------------------------------- input */

static int src_read(struct pes_trace_reader *r, uint64_t off, void *dst, size_t len)
{
    if (off > r->size || len > r->size - off)
        return -1;
    if (r->fd < 0) {
        memcpy(dst, r->mem + off, len);
        return 0;
    }
    uint8_t *d = dst;
    while (len) {
        ssize_t k = pread(r->fd, d, len, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        d += k;
        off += (uint64_t)k;
        len -= (size_t)k;
    }
    return 0;
}

static int fmt_err(struct pes_trace_reader *r, struct pes_error *err, int code, uint64_t off,
                   const char *what)
{
    return pes_error_set(err, code, off, "%s: offset %llu: %s", r->name, (unsigned long long)off,
                         what);
}

static void set_truncated(struct pes_trace_reader *r, uint64_t block_off)
{
    r->truncated = 1;
    snprintf(r->trunc_msg, sizeof r->trunc_msg,
             "%s: truncated at offset %llu (last complete block ends at %llu); "
             "reading what is complete",
             r->name, (unsigned long long)r->size, (unsigned long long)block_off);
}

/* ---------------------------------------------------------------- tables */

static const struct module_entry *find_module(const struct pes_trace_reader *r, uint32_t id)
{
    size_t lo = 0, hi = r->n_mods;
    while (lo < hi) { /* first module with id_base > id */
        size_t mid = (lo + hi) / 2;
        if (r->mods[mid].m.id_base <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct module_entry *e = &r->mods[lo - 1];
    if ((uint64_t)id - e->m.id_base >= (uint64_t)e->m.n_sites + e->m.n_bbs)
        return NULL;
    return e;
}

const struct pes_site *pes_trace_reader_site(const struct pes_trace_reader *r, uint32_t id)
{
    const struct module_entry *e = r ? find_module(r, id) : NULL;
    if (!e || id - e->m.id_base >= e->m.n_sites)
        return NULL;
    return e->site_by_off[id - e->m.id_base];
}

const struct pes_bb *pes_trace_reader_bb(const struct pes_trace_reader *r, uint32_t id)
{
    const struct module_entry *e = r ? find_module(r, id) : NULL;
    if (!e || id - e->m.id_base < e->m.n_sites)
        return NULL;
    return e->bb_by_off[id - e->m.id_base - e->m.n_sites];
}

static size_t alloc_slot(const struct pes_trace_reader *r, uint32_t id)
{
    size_t mask = r->cap_allocs - 1, i = (size_t)pes_hash_fib(id, 32) & mask;
    while (r->allocs[i] && r->allocs[i]->s.id != id)
        i = (i + 1) & mask;
    return i;
}

const struct pes_alloc_site *pes_trace_reader_alloc_site(const struct pes_trace_reader *r,
                                                         uint32_t id)
{
    if (!r || !r->cap_allocs)
        return NULL;
    const struct alloc_entry *e = r->allocs[alloc_slot(r, id)];
    return e ? &e->s : NULL;
}

/* Adds the sites of an ALLOC_SITES block (decoded into scratch) to the table.
 * A site seen before must be the same (blocks re-read by the index scan, a
 * writer repeating a site): a different kind or stack for one id is damage. */
static int merge_alloc_sites(struct pes_trace_reader *r, uint64_t off,
                             const struct pes_alloc_site *s, size_t n, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        if ((r->n_allocs + 1) * 2 > r->cap_allocs) {
            size_t cap = r->cap_allocs ? r->cap_allocs * 2 : 64;
            struct alloc_entry **old = r->allocs, **nt = calloc(cap, sizeof *nt);
            if (!nt)
                goto nomem;
            size_t old_cap = r->cap_allocs;
            r->allocs = nt;
            r->cap_allocs = cap;
            for (size_t k = 0; k < old_cap; k++)
                if (old[k])
                    nt[alloc_slot(r, old[k]->s.id)] = old[k];
            free(old);
        }
        size_t slot = alloc_slot(r, s[i].id);
        struct alloc_entry *e = r->allocs[slot];
        if (e) {
            if (e->s.kind != s[i].kind || e->s.depth != s[i].depth ||
                memcmp(e->s.ips, s[i].ips, (size_t)s[i].depth * 8) != 0) {
                snprintf(r->why_buf, sizeof r->why_buf,
                         "site %zu (id %u) differs from the site with that id in the block at "
                         "offset %llu",
                         i, s[i].id, (unsigned long long)e->first_off);
                *why = r->why_buf;
                return -1;
            }
            if (off < e->first_off)
                e->first_off = off;
            continue;
        }
        e = pes_arena_alloc(&r->tables, sizeof *e);
        uint64_t *ips = pes_arena_alloc(&r->tables, (size_t)s[i].depth * 8);
        if (!e || !ips)
            goto nomem;
        memcpy(ips, s[i].ips, (size_t)s[i].depth * 8);
        e->s = s[i];
        e->s.ips = ips;
        e->first_off = off;
        r->allocs[slot] = e;
        r->n_allocs++;
    }
    return 0;
nomem:
    *why = "out of memory";
    return -1;
}

/* Merges a decoded (scratch) module. Sets *merged to the reader's stable copy. */
static int merge_module(struct pes_trace_reader *r, uint64_t off, const uint8_t *payload,
                        size_t size, const struct pes_module *m, const struct pes_module **merged,
                        const char **why)
{
    uint64_t end = (uint64_t)m->id_base + m->n_sites + m->n_bbs;
    size_t pos = 0;
    while (pos < r->n_mods && r->mods[pos].m.id_base < m->id_base)
        pos++;
    if (pos < r->n_mods && r->mods[pos].m.id_base == m->id_base &&
        r->mods[pos].m.n_sites == m->n_sites && r->mods[pos].m.n_bbs == m->n_bbs) {
        *merged = &r->mods[pos].m; /* seen before (index scan, block_at) */
        if (off < r->mods[pos].first_off)
            r->mods[pos].first_off = off;
        return 0;
    }
    if (m->n_sites + (uint64_t)m->n_bbs == 0) {
        *merged = m; /* nothing to merge; the scratch copy is valid until the next call */
        return 0;
    }
    if ((pos > 0 && (uint64_t)r->mods[pos - 1].m.id_base + r->mods[pos - 1].m.n_sites +
                            r->mods[pos - 1].m.n_bbs >
                        m->id_base) ||
        (pos < r->n_mods && end > r->mods[pos].m.id_base)) {
        *why = "MODULE id range overlaps an earlier module";
        return -1;
    }
    if (r->n_mods == r->cap_mods) {
        size_t cap = r->cap_mods ? r->cap_mods * 2 : 8;
        struct module_entry *n = realloc(r->mods, cap * sizeof *n);
        if (!n)
            goto nomem;
        r->mods = n;
        r->cap_mods = cap;
    }
    struct module_entry e;
    e.first_off = off;
    if (pes_de_module(payload, size, &e.m, &r->tables, r->block_version, why))
        return -1;
    e.site_by_off = pes_arena_alloc(&r->tables, (size_t)e.m.n_sites * sizeof(void *) + 1);
    e.bb_by_off = pes_arena_alloc(&r->tables, (size_t)e.m.n_bbs * sizeof(void *) + 1);
    if (!e.site_by_off || !e.bb_by_off)
        goto nomem;
    for (uint32_t i = 0; i < e.m.n_sites; i++)
        e.site_by_off[e.m.sites[i].id - e.m.id_base] = &e.m.sites[i];
    for (uint32_t i = 0; i < e.m.n_bbs; i++)
        e.bb_by_off[e.m.bbs[i].id - e.m.id_base - e.m.n_sites] = &e.m.bbs[i];
    memmove(&r->mods[pos + 1], &r->mods[pos], (r->n_mods - pos) * sizeof *r->mods);
    r->mods[pos] = e;
    r->n_mods++;
    *merged = &r->mods[pos].m;
    return 0;
nomem:
    *why = "out of memory";
    return -1;
}

static int merge_thread(struct pes_trace_reader *r, const struct pes_thread *t, const char **why)
{
    if (t->index >= MAX_THREADS) {
        *why = "thread index is implausibly large (>= 2^20)";
        return -1;
    }
    if (t->index >= r->cap_threads) {
        size_t cap = r->cap_threads ? r->cap_threads : 16;
        while (cap <= t->index)
            cap *= 2;
        struct pes_thread *nt = realloc(r->threads, cap * sizeof *nt);
        if (nt)
            r->threads = nt;
        uint8_t *nk = realloc(r->thread_known, cap);
        if (nk)
            r->thread_known = nk;
        if (!nt || !nk) {
            *why = "out of memory";
            return -1;
        }
        memset(r->thread_known + r->cap_threads, 0, cap - r->cap_threads);
        r->cap_threads = cap;
    }
    r->threads[t->index] = *t;
    r->thread_known[t->index] = 1;
    if (t->index + 1 > r->n_threads)
        r->n_threads = t->index + 1;
    return 0;
}

size_t pes_trace_reader_thread_count(const struct pes_trace_reader *r)
{
    return r ? r->n_threads : 0;
}

const struct pes_thread *pes_trace_reader_thread(const struct pes_trace_reader *r, uint32_t index)
{
    if (!r || index >= r->n_threads || !r->thread_known[index])
        return NULL;
    return &r->threads[index];
}

/* ---------------------------------------------------------------- one block */

static void *out_array(struct pes_trace_reader *r, size_t n, size_t elem)
{
    size_t need = n * elem + 1;
    if (need > r->out_cap) {
        void *p = realloc(r->out, need);
        if (!p)
            return NULL;
        r->out = p;
        r->out_cap = need;
    }
    return r->out;
}

/* Finds the block at `off`: decodes its index frame into *ie and reads its data
 * frame into r->frame, checking the frame's zstd header and that the index's
 * frame_size is the size of the complete zstd frame actually there. Returns 1,
 * 0 at the end of the data (clean or truncated: r->truncated), -1 on error. */
static int locate_block(struct pes_trace_reader *r, uint64_t off, struct pes_index_entry *ie,
                        unsigned long long *content_size, struct pes_error *err)
{
    static const uint8_t index_magic[8] = {0x50, 0x2A, 0x4D, 0x18, 16, 0, 0, 0};
    if (off >= r->size)
        return 0;
    uint64_t avail = r->size - off;
    uint8_t ib[PES_INDEX_BYTES];
    size_t nh = avail < PES_INDEX_BYTES ? (size_t)avail : PES_INDEX_BYTES;
    if (src_read(r, off, ib, nh))
        return fmt_err(r, err, PES_ERR_IO, off, "read failed");
    if (nh < PES_INDEX_BYTES) {
        if (memcmp(ib, index_magic, nh < 8 ? nh : 8) != 0)
            goto not_index;
        set_truncated(r, off);
        return 0;
    }
    if (pes_index_decode(ib, ie))
        goto not_index;
    if (ie->frame_size < 6 || ie->frame_size > pes_frame_max())
        return fmt_err(r, err, PES_ERR_FORMAT, off,
                       "index frame gives an implausible data-frame size");
    uint64_t fstart = off + PES_INDEX_BYTES;
    if (avail - PES_INDEX_BYTES < ie->frame_size) {
        /* Cut inside the data frame, unless what is there is already a complete
         * frame of another size (a corrupt index rather than a short file). */
        size_t have = (size_t)(avail - PES_INDEX_BYTES);
        r->frame.len = 0;
        if (pes_buf_reserve(&r->frame, have + 1))
            return fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
        if (src_read(r, fstart, r->frame.data, have))
            return fmt_err(r, err, PES_ERR_IO, off, "read failed");
        size_t real = ZSTD_findFrameCompressedSize(r->frame.data, have);
        if (!ZSTD_isError(real))
            return fmt_err(r, err, PES_ERR_FORMAT, off,
                           "index frame size does not match the data frame that follows");
        set_truncated(r, off);
        return 0;
    }
    r->frame.len = 0;
    if (pes_buf_reserve(&r->frame, ie->frame_size))
        return fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
    if (src_read(r, fstart, r->frame.data, ie->frame_size))
        return fmt_err(r, err, PES_ERR_IO, off, "read failed");
    /* Frame header byte 4 (Frame_Header_Descriptor) bit 2 is Content_Checksum_flag
     * (RFC 8878 §3.1.1.1.1): we require it so that corruption is detected. */
    const uint8_t *fd = r->frame.data;
    unsigned long long content = ZSTD_getFrameContentSize(fd, ie->frame_size);
    if (pes_load_u32(fd) != ZSTD_MAGICNUMBER || content == ZSTD_CONTENTSIZE_ERROR)
        return fmt_err(r, err, PES_ERR_FORMAT, fstart,
                       "expected a zstd frame after the index frame");
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || !(fd[4] & 0x04))
        return fmt_err(r, err, PES_ERR_FORMAT, fstart,
                       "zstd frame lacks its content size or checksum");
    if (content < PES_BLOCK_HEADER_BYTES || content > PES_BLOCK_HEADER_BYTES + PES_MAX_PAYLOAD)
        return fmt_err(r, err, PES_ERR_FORMAT, fstart,
                       "implausible block size in zstd frame header");
    size_t real = ZSTD_findFrameCompressedSize(r->frame.data, ie->frame_size);
    if (ZSTD_isError(real) || real != ie->frame_size)
        return fmt_err(r, err, PES_ERR_FORMAT, off,
                       "index frame size does not match the data frame that follows");
    *content_size = content;
    return 1;
not_index:
    if (off == 0)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "%s: not a pes trace (no pes index frame at offset 0)", r->name);
    return fmt_err(r, err, PES_ERR_FORMAT, off,
                   "expected a pes index frame (zstd skippable frame 0x184D2A50, 16 bytes)");
}

/* Checks the first 24 bytes of a data frame's content (the block header)
 * against the index frame that announced it: the index is not covered by any
 * checksum, so this copy is what detects a damaged index. */
static int check_block_header(struct pes_trace_reader *r, uint64_t off, const uint8_t *c,
                              const struct pes_index_entry *ie, struct pes_error *err)
{
    uint64_t fstart = off + PES_INDEX_BYTES;
    uint16_t btype, bver;
    memcpy(&btype, c + 4, 2);
    memcpy(&bver, c + 6, 2);
    if (memcmp(c, PES_TRACE_MAGIC, 4) != 0)
        return fmt_err(r, err, PES_ERR_FORMAT, fstart, "block does not start with \"PESB\"");
    if (bver < PES_TRACE_VERSION_OLDEST || bver > PES_TRACE_VERSION) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "%s block has format version %u; this reader knows versions %u to %u",
                 pes_block_type_name(btype), bver, PES_TRACE_VERSION_OLDEST, PES_TRACE_VERSION);
        return fmt_err(r, err, PES_ERR_VERSION, fstart, msg);
    }
    /* One file, one version (§5): the HEADER's, which payload layouts follow
     * (0 while the HEADER itself is read). */
    if (r->info.version && bver != r->info.version) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s block has format version %u, the file's HEADER version %u",
                 pes_block_type_name(btype), bver, r->info.version);
        return fmt_err(r, err, PES_ERR_FORMAT, fstart, msg);
    }
    r->block_version = bver;
    if (btype != ie->type || pes_load_u32(c + 8) != ie->thread || pes_load_u32(c + 12) != ie->count)
        return fmt_err(r, err, PES_ERR_FORMAT, off,
                       "index frame (type/thread/count) disagrees with the block header");
    return 0;
}

/* A call edge record (version 3 on): a CALL names a call site of an earlier
 * MODULE block, so that a call path can always be printed. */
static int check_call_record(struct pes_trace_reader *r, uint64_t off, const struct pes_record *rec,
                             size_t i, const char **why)
{
    if (r->block_version < 3) {
        snprintf(r->why_buf, sizeof r->why_buf,
                 "record %zu has id 0x%08x, a call edge record, which version %u does not have", i,
                 rec->id, r->block_version);
        *why = r->why_buf;
        return -1;
    }
    if (rec->id == PES_ID_RETURN)
        return 0;
    const struct module_entry *e = find_module(r, rec->extra);
    const char *what = NULL;
    if (!e || e->first_off >= off)
        what = "which no earlier MODULE block defines";
    else if (rec->extra - e->m.id_base >= e->m.n_sites ||
             !e->site_by_off[rec->extra - e->m.id_base] ||
             e->site_by_off[rec->extra - e->m.id_base]->kind != PES_KIND_CALL)
        what = "which is not a call site";
    if (what) {
        snprintf(r->why_buf, sizeof r->why_buf, "record %zu (a call) names site %u, %s", i,
                 rec->extra, what);
        *why = r->why_buf;
        return -1;
    }
    return 0;
}

/* A record's id is a control id or belongs to a module whose MODULE block
 * comes before the record's block (§1): otherwise the module's block was
 * deleted or moved, and no command could say what the record is. The last
 * module found is kept: records of one block rarely leave it. */
static int check_record_ids(struct pes_trace_reader *r, uint64_t off, const struct pes_record *recs,
                            size_t n, const char **why)
{
    uint64_t lo = 1, hi = 0; /* [lo, hi): ids of the last module found */
    for (size_t i = 0; i < n; i++) {
        uint32_t id = recs[i].id;
        if (id >= PES_ID_CONTROL_FIRST) {
            if ((id == PES_ID_CALL || id == PES_ID_RETURN) &&
                check_call_record(r, off, &recs[i], i, why))
                return -1;
            continue;
        }
        if (id >= lo && id < hi)
            continue;
        const struct module_entry *e = find_module(r, id);
        if (!e || e->first_off >= off) {
            snprintf(r->why_buf, sizeof r->why_buf,
                     "record %zu has id %u, which no earlier MODULE block defines", i, id);
            *why = r->why_buf;
            return -1;
        }
        lo = e->m.id_base;
        hi = lo + e->m.n_sites + e->m.n_bbs;
    }
    return 0;
}

/* The same for the sites events name (UINT32_MAX: no site, uninstrumented code). */
static int check_event_sites(struct pes_trace_reader *r, uint64_t off, const struct pes_event *ev,
                             size_t n, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ev[i].site;
        if (ev[i].kind == PES_EV_SAMPLE && (ev[i].flags & PES_EVF_HEAP_BLOCK)) {
            /* a sample that names its heap block: site, size, offset in it */
            uint32_t as = ev[i].other_thread;
            const struct alloc_entry *a = r->cap_allocs ? r->allocs[alloc_slot(r, as)] : NULL;
            if (!a || a->first_off >= off) {
                snprintf(r->why_buf, sizeof r->why_buf,
                         "event %zu (a sample in a heap block) names allocation site %u, a site "
                         "of no earlier ALLOC_SITES block",
                         i, as);
                *why = r->why_buf;
                return -1;
            }
            if (ev[i].distance >= (ev[i].aux ? ev[i].aux : 1)) {
                snprintf(r->why_buf, sizeof r->why_buf,
                         "event %zu (a sample in a heap block) has offset %llu in a block of %llu "
                         "bytes",
                         i, (unsigned long long)ev[i].distance, (unsigned long long)ev[i].aux);
                *why = r->why_buf;
                return -1;
            }
        }
        if (pes_stack_known(ev[i].stack)) { /* a call stack of an earlier ALLOC_SITES block */
            uint32_t st = ev[i].stack;
            const struct alloc_entry *a = r->cap_allocs ? r->allocs[alloc_slot(r, st)] : NULL;
            if (!a || a->first_off >= off || a->s.kind != PES_ALLOC_CALLSTACK) {
                snprintf(r->why_buf, sizeof r->why_buf,
                         "event %zu names call stack %u, a call stack of no earlier ALLOC_SITES "
                         "block",
                         i, st);
                *why = r->why_buf;
                return -1;
            }
        }
        if (id == UINT32_MAX || ev[i].kind == PES_EV_FREE)
            continue;
        if (ev[i].kind == PES_EV_ALLOC) { /* an allocation site, or a thread's stack */
            const struct alloc_entry *a = r->cap_allocs ? r->allocs[alloc_slot(r, id)] : NULL;
            if (id != PES_ALLOC_SITE_STACK &&
                (!a || a->first_off >= off || a->s.kind == PES_ALLOC_CALLSTACK)) {
                snprintf(r->why_buf, sizeof r->why_buf,
                         "event %zu names allocation site %u, a site of no earlier ALLOC_SITES "
                         "block",
                         i, id);
                *why = r->why_buf;
                return -1;
            }
            continue;
        }
        const struct module_entry *e = find_module(r, id);
        if (!e || e->first_off >= off || id - e->m.id_base >= e->m.n_sites) {
            snprintf(r->why_buf, sizeof r->why_buf,
                     "event %zu names site %u, a site of no earlier MODULE block", i, id);
            *why = r->why_buf;
            return -1;
        }
    }
    return 0;
}

/* Time marks of one thread never decrease, within a block and from one of
 * its ACCESS blocks to the next in file order. Decoding a block at or before
 * the last one decoded for its thread (a re-read, random access) starts over. */
static int check_times(struct pes_trace_reader *r, uint64_t off, uint32_t thread,
                       const struct pes_record *recs, size_t n, const char **why)
{
    if (thread >= MAX_THREADS) {
        *why = "thread index is implausibly large (>= 2^20)";
        return -1;
    }
    if (thread >= r->n_times) {
        size_t cap = r->n_times ? r->n_times : 16;
        while (cap <= thread)
            cap *= 2;
        struct time_state *t = realloc(r->times, cap * sizeof *t);
        if (!t) {
            *why = "out of memory";
            return -1;
        }
        memset(t + r->n_times, 0, (cap - r->n_times) * sizeof *t);
        r->times = t;
        r->n_times = cap;
    }
    struct time_state *ts = &r->times[thread];
    if (ts->valid && off <= ts->off)
        ts->seen = 0;
    uint64_t last = ts->seen ? ts->last : 0;
    int seen = ts->seen;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].id != PES_ID_TIME && recs[i].id != PES_ID_THREAD_END)
            continue;
        if (seen && recs[i].addr < last) {
            snprintf(r->why_buf, sizeof r->why_buf,
                     "thread %u time mark %llu (record %zu) is earlier than the one before it "
                     "(%llu): blocks out of order",
                     thread, (unsigned long long)recs[i].addr, i, (unsigned long long)last);
            *why = r->why_buf;
            ts->valid = 0;
            return -1;
        }
        last = recs[i].addr;
        seen = 1;
    }
    *ts = (struct time_state){off, last, 1, (uint8_t)seen};
    return 0;
}

static int order_block(struct pes_trace_reader *r, struct order_check *oc, uint64_t off,
                       uint32_t type, uint32_t thread, uint32_t count, struct pes_error *err);

/* The ids and time marks of an ACCESS block's stored records. */
static int check_stored(struct pes_trace_reader *r, uint64_t off, uint32_t thread,
                        const struct pes_record *recs, size_t n, const char **why)
{
    return check_record_ids(r, off, recs, n, why) || check_times(r, off, thread, recs, n, why) ? -1
                                                                                               : 0;
}

/* The ACCESS payload p[0..ps) of `count` records (§3): from version 2 on a u32
 * stored count, then the stored records, whose loop descriptor groups expand
 * to exactly `count` records (§3.2). Decodes into *out: the expanded records,
 * or the stored ones for a raw reader. Returns 0, or -1 / *why set. Every
 * size is bounded before anything is allocated: stored and count by 2^21. */
static int read_access(struct pes_trace_reader *r, uint64_t off, uint32_t thread, uint32_t count,
                       const uint8_t *p, size_t ps, struct pes_block *out, const char **why)
{
    size_t stored = count;
    if (count > PES_MAX_READ_RECORDS) {
        *why = "ACCESS block holds more records than the format allows (2^21)";
        return -1;
    }
    if (r->block_version >= 2) {
        if (ps < 4) {
            *why = "ACCESS payload shorter than its stored-record count";
            return -1;
        }
        stored = pes_load_u32(p);
        p += 4;
        ps -= 4;
        if (stored > PES_MAX_READ_RECORDS) {
            *why = "more records stored than the format allows (2^21)";
            return -1;
        }
    }
    /* the payload holds 3 bitmaps of a bit per stored record after 16 bytes
     * (§3): a count it cannot hold allocates nothing */
    if (ps < 16 || stored / 8 > (ps - 16) / 3) {
        *why = "ACCESS payload shorter than its header and non-zero bitmaps";
        return -1;
    }
    struct pes_record *recs = out_array(r, stored, sizeof *recs);
    if (!recs) {
        *why = "out of memory";
        return -1;
    }
    if (pes_access_decode(r->codec, p, ps, stored, recs, why))
        return -1;
    out->records = recs;
    out->n = stored;
    /* The groups' structure first, then the ids and time marks: templates
     * carry every id and no time mark, so the stored records are checked as
     * the expanded ones would be, at a fraction of the work. */
    size_t first = pes_loop_find(recs, stored);
    if (first == stored) { /* no descriptor: the stored records are the records */
        if (stored == count)
            return check_stored(r, off, thread, recs, stored, why);
        snprintf(r->why_buf, sizeof r->why_buf,
                 "%zu records stored and no loop descriptor, the header says %u", stored, count);
        *why = r->why_buf;
        return -1;
    }
    if (r->block_version < 2) {
        snprintf(r->why_buf, sizeof r->why_buf,
                 "record %zu has id 0x%08x, a loop descriptor record, which version %u does not "
                 "have",
                 first, recs[first].id, r->block_version);
        *why = r->why_buf;
        return -1;
    }
    struct pes_loop_walk w;
    if (pes_loop_walk(recs, stored, 0, count, stored, r->block_version >= 3, &w)) {
        snprintf(r->why_buf, sizeof r->why_buf, "%s", w.why);
        *why = r->why_buf;
        return -1;
    }
    if (w.stored < stored) {
        snprintf(r->why_buf, sizeof r->why_buf,
                 "its %zu stored records expand to more than its header's %u records", stored,
                 count);
        *why = r->why_buf;
        return -1;
    }
    if (w.expanded != count) {
        snprintf(r->why_buf, sizeof r->why_buf,
                 "its %zu stored records expand to %llu records, its header says %u", stored,
                 (unsigned long long)w.expanded, count);
        *why = r->why_buf;
        return -1;
    }
    if (check_stored(r, off, thread, recs, stored, why))
        return -1;
    if (r->raw)
        return 0;
    if (count > r->expanded_cap) {
        struct pes_record *x = realloc(r->expanded, (size_t)count * sizeof *x);
        if (!x) {
            *why = "out of memory";
            return -1;
        }
        r->expanded = x;
        r->expanded_cap = count;
    }
    pes_loop_expand(recs, stored, r->expanded);
    out->records = r->expanded;
    out->n = count;
    return 0;
}

/* Reads and decodes the block at `off`. Returns 1 (block in *out, *end = its
 * end offset), 0 at the end of the data (clean or truncated: r->truncated),
 * -1 on error. With `oc` (the sequential path) the block-order checks come
 * after the block header's and before the payload's, as in the index scan,
 * so that both report the same damage (the index decompresses only the
 * block header: damage later in the same frame shows here first). */
static int read_block(struct pes_trace_reader *r, uint64_t off, struct pes_block *out,
                      uint64_t *end, struct order_check *oc, struct pes_error *err)
{
    memset(out, 0, sizeof *out);
    struct pes_index_entry ie;
    unsigned long long content = 0;
    int lr = locate_block(r, off, &ie, &content, err);
    if (lr <= 0)
        return lr;
    uint64_t fstart = off + PES_INDEX_BYTES;
    size_t csize = (size_t)content;
    r->content.len = 0;
    if (pes_buf_reserve(&r->content, csize))
        return fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
    size_t got = ZSTD_decompressDCtx(r->dctx, r->content.data, csize, r->frame.data, ie.frame_size);
    if (ZSTD_isError(got)) {
        char msg[160];
        snprintf(msg, sizeof msg, "corrupt data frame: zstd: %s", ZSTD_getErrorName(got));
        return fmt_err(r, err, PES_ERR_FORMAT, fstart, msg);
    }
    if (got != csize)
        return fmt_err(r, err, PES_ERR_FORMAT, fstart, "data frame decompresses to the wrong size");
    r->content.len = csize;
    const uint8_t *c = r->content.data;
    if (check_block_header(r, off, c, &ie, err) ||
        (oc && order_block(r, oc, off, ie.type, ie.thread, ie.count, err)))
        return -1;
    uint16_t btype;
    memcpy(&btype, c + 4, 2);
    uint32_t bthread = ie.thread, bcount = ie.count;
    uint64_t payload = pes_load_u64(c + 16);
    if (payload != csize - PES_BLOCK_HEADER_BYTES)
        return fmt_err(r, err, PES_ERR_FORMAT, fstart, "block header payload size is wrong");

    const uint8_t *p = c + PES_BLOCK_HEADER_BYTES;
    size_t ps = (size_t)payload;
    const char *why = NULL;
    int rc = 0;
    pes_arena_free(&r->scratch);
    out->type = btype;
    out->thread = bthread;
    out->file_offset = off;
    out->n = bcount;
    out->count = bcount;
    switch (btype) {
    case PES_BLOCK_HEADER: {
        struct pes_trace_info tmp;
        if (bcount != 1)
            why = "HEADER block count is not 1";
        else
            rc = pes_de_info(p, ps, &tmp, &r->scratch, &why);
        break;
    }
    case PES_BLOCK_MODULE:
        rc = pes_de_module(p, ps, &r->module_tmp, &r->scratch, r->block_version, &why);
        if (!rc) {
            uint64_t n = (uint64_t)r->module_tmp.n_sites + r->module_tmp.n_bbs;
            if ((n > UINT32_MAX ? UINT32_MAX : n) != bcount)
                why = "MODULE block count is not sites + basic blocks";
            else
                rc = merge_module(r, off, p, ps, &r->module_tmp, &out->module, &why);
        }
        break;
    case PES_BLOCK_THREAD:
        rc = pes_de_thread(p, ps, &r->thread_tmp, &why);
        if (!rc && (bcount != 1 || r->thread_tmp.index != bthread))
            why = "THREAD block count/thread disagree with its payload";
        else if (!rc)
            rc = merge_thread(r, &r->thread_tmp, &why);
        out->thread_info = &r->thread_tmp;
        break;
    case PES_BLOCK_ACCESS:
        rc = read_access(r, off, bthread, bcount, p, ps, out, &why);
        break;
    case PES_BLOCK_EVENTS: {
        struct pes_event *ev;
        if (bcount > PES_MAX_READ_RECORDS)
            why = "EVENTS block holds more events than the format allows (2^21)";
        else if (!(ev = out_array(r, bcount, sizeof *ev)))
            why = "out of memory";
        else {
            rc = pes_events_decode(p, ps, bcount, r->block_version, ev, &why);
            if (!rc && !why)
                rc = check_event_sites(r, off, ev, bcount, &why);
            out->events = ev;
        }
        break;
    }
    case PES_BLOCK_MAPS: {
        struct pes_mapping *m;
        if (bcount > ps / 28)
            why = "MAPS count exceeds the payload size";
        else if (!(m = out_array(r, bcount, sizeof *m)))
            why = "out of memory";
        else {
            rc = pes_de_maps(p, ps, bcount, m, &r->scratch, &why);
            out->mappings = m;
        }
        break;
    }
    case PES_BLOCK_FOOTER: {
        struct pes_thread_totals *t;
        if (ps < 8 || bcount > (ps - 8) / 52)
            why = "FOOTER count exceeds the payload size";
        else if (!(t = out_array(r, bcount, sizeof *t)))
            why = "out of memory";
        else {
            rc = pes_de_footer(p, ps, bcount, t, &out->end_ticks, &why);
            out->totals = t;
        }
        break;
    }
    case PES_BLOCK_ALLOC_SITES: {
        struct pes_alloc_site *s;
        if (bthread != 0)
            why = "ALLOC_SITES block has a thread index other than 0";
        else if (bcount > ps / PES_ALLOC_SITE_MIN_BYTES)
            why = "ALLOC_SITES count exceeds the payload size";
        else if (!(s = out_array(r, bcount, sizeof *s)))
            why = "out of memory";
        else {
            rc = pes_de_alloc_sites(p, ps, bcount, s, &r->scratch, r->why_buf, sizeof r->why_buf,
                                    &why);
            for (size_t k = 0; !rc && !why && r->block_version < 3 && k < bcount; k++)
                if (s[k].kind == PES_ALLOC_CALLSTACK)
                    why = "a call stack entry (kind 6) in a block of format version 1 or 2";
            if (!rc && !why)
                rc = merge_alloc_sites(r, off, s, bcount, &why);
            out->alloc_sites = s;
        }
        break;
    }
    default:
        out->n = 0; /* unknown block type: checked, skipped by _next */
        break;
    }
    if (rc || why) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s block: %s", pes_block_type_name(btype),
                 why ? why : "invalid payload");
        int code = why && strcmp(why, "out of memory") == 0 ? PES_ERR_NOMEM : PES_ERR_FORMAT;
        memset(out, 0, sizeof *out);
        return fmt_err(r, err, code, off, msg);
    }
    *end = fstart + ie.frame_size;
    return 1;
}

/* ---------------------------------------------------------------- block order */

static void set_no_footer(struct pes_trace_reader *r)
{
    if (r->truncated)
        return; /* the cut-off message says more */
    r->truncated = 1;
    snprintf(r->trunc_msg, sizeof r->trunc_msg,
             "%s: no FOOTER block (file ends at offset %llu after a complete "
             "block); the run was probably interrupted",
             r->name, (unsigned long long)r->size);
}

/* The item type the footer's per-thread `records` counts (§2.5): ACCESS
 * records in a full trace, EVENTS events in a sampled one. */
static uint32_t counted_type(const struct pes_trace_reader *r)
{
    return r->info.kind == PES_TRACE_SAMPLED ? PES_BLOCK_EVENTS : PES_BLOCK_ACCESS;
}

/* Nothing may follow the FOOTER, not even a partial block: appended data
 * means the file was assembled wrongly, not cut short. */
static int order_data_at(struct pes_trace_reader *r, const struct order_check *oc, uint64_t off,
                         struct pes_error *err)
{
    if (oc->saw_footer && off < r->size)
        return fmt_err(r, err, PES_ERR_FORMAT, off, "block after the FOOTER block");
    return 0;
}

/* Block `type` of `thread` with `count` items is complete at `off`; its
 * index frame agrees with its block header. */
static int order_block(struct pes_trace_reader *r, struct order_check *oc, uint64_t off,
                       uint32_t type, uint32_t thread, uint32_t count, struct pes_error *err)
{
    char msg[128];
    if (type == PES_BLOCK_HEADER) {
        if (oc->saw_header)
            return fmt_err(r, err, PES_ERR_FORMAT, off, "second HEADER block");
        oc->saw_header = 1;
        return 0;
    }
    if (!oc->saw_header) {
        snprintf(msg, sizeof msg, "first block is %s, expected HEADER", pes_block_type_name(type));
        return fmt_err(r, err, PES_ERR_FORMAT, off, msg);
    }
    if (type == PES_BLOCK_FOOTER)
        oc->saw_footer = 1;
    if (type != PES_BLOCK_THREAD && type != PES_BLOCK_ACCESS && type != PES_BLOCK_EVENTS)
        return 0;
    if (thread >= MAX_THREADS) {
        snprintf(msg, sizeof msg, "%s block: thread index is implausibly large (>= 2^20)",
                 pes_block_type_name(type));
        return fmt_err(r, err, PES_ERR_FORMAT, off, msg);
    }
    if (thread >= oc->n_items) {
        size_t n = oc->n_items ? oc->n_items : 16;
        while (n <= thread)
            n *= 2;
        uint64_t *v = realloc(oc->items, n * sizeof *v);
        if (v)
            oc->items = v;
        uint8_t *a = realloc(oc->announced, n);
        if (a)
            oc->announced = a;
        if (!v || !a)
            return fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
        memset(v + oc->n_items, 0, (n - oc->n_items) * sizeof *v);
        memset(a + oc->n_items, 0, n - oc->n_items);
        oc->n_items = n;
    }
    if (type == PES_BLOCK_THREAD) {
        oc->announced[thread] = 1;
        return 0;
    }
    /* Without its THREAD block a thread's records have no start time and a
     * reader no thread table entry: a deleted or misplaced block (§1). */
    if (!oc->announced[thread]) {
        snprintf(msg, sizeof msg,
                 "%s block of thread %u comes before any THREAD block of that thread",
                 pes_block_type_name(type), thread);
        return fmt_err(r, err, PES_ERR_FORMAT, off, msg);
    }
    if (type == counted_type(r))
        oc->items[thread] += count;
    return 0;
}

/* The FOOTER's per-thread record counts must be what the file holds: a
 * deleted or duplicated ACCESS/EVENTS block changes the sum, and nothing
 * else in the format would notice. */
static int order_footer(struct pes_trace_reader *r, const struct order_check *oc, uint64_t off,
                        const struct pes_thread_totals *t, size_t n, struct pes_error *err)
{
    const char *what =
        counted_type(r) == PES_BLOCK_EVENTS ? "events in EVENTS" : "records in ACCESS";
    char msg[200];
    uint8_t *listed = oc->n_items ? calloc(oc->n_items, 1) : NULL;
    if (oc->n_items && !listed)
        return fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uint64_t have = t[i].thread < oc->n_items ? oc->items[t[i].thread] : 0;
        if (t[i].thread < oc->n_items)
            listed[t[i].thread] = 1;
        if (have != t[i].records) {
            snprintf(msg, sizeof msg,
                     "FOOTER block: thread %u has %llu %s blocks, the footer says %llu "
                     "(a block is missing or repeated)",
                     t[i].thread, (unsigned long long)have, what, (unsigned long long)t[i].records);
            free(listed);
            return fmt_err(r, err, PES_ERR_FORMAT, off, msg);
        }
    }
    for (size_t th = 0; th < oc->n_items; th++)
        if (oc->items[th] && !listed[th]) {
            snprintf(msg, sizeof msg,
                     "FOOTER block: thread %zu has %llu %s blocks but no footer entry", th,
                     (unsigned long long)oc->items[th], what);
            free(listed);
            return fmt_err(r, err, PES_ERR_FORMAT, off, msg);
        }
    free(listed);
    return 0;
}

/* Decompresses only the 24-byte block header of the data frame in r->frame
 * (the index scan must not pay for whole payloads; the frame's checksum is
 * verified when the block itself is decoded). */
static int frame_block_header(struct pes_trace_reader *r, uint64_t off, size_t frame_size,
                              uint8_t hdr[PES_BLOCK_HEADER_BYTES], struct pes_error *err)
{
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {r->frame.data, frame_size, 0};
    ZSTD_outBuffer o = {hdr, PES_BLOCK_HEADER_BYTES, 0};
    while (o.pos < o.size) {
        size_t rc = ZSTD_decompressStream(r->dctx, &o, &in);
        if (ZSTD_isError(rc)) {
            char msg[160];
            snprintf(msg, sizeof msg, "corrupt data frame: zstd: %s", ZSTD_getErrorName(rc));
            ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
            return fmt_err(r, err, PES_ERR_FORMAT, off + PES_INDEX_BYTES, msg);
        }
        if (rc == 0 || (in.pos == in.size && o.pos < o.size))
            break;
    }
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
    if (o.pos < o.size)
        return fmt_err(r, err, PES_ERR_FORMAT, off + PES_INDEX_BYTES,
                       "data frame decompresses to the wrong size");
    return 0;
}

/* ---------------------------------------------------------------- open/close */

void pes_trace_reader_close(struct pes_trace_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->mem);
    free(r->name);
    ZSTD_freeDCtx(r->dctx);
    pes_access_codec_free(r->codec);
    pes_buf_free(&r->frame);
    pes_buf_free(&r->content);
    pes_arena_free(&r->tables);
    pes_arena_free(&r->scratch);
    free(r->mods);
    free(r->threads);
    free(r->thread_known);
    free(r->out);
    free(r->expanded);
    free(r->seq.items);
    free(r->seq.announced);
    free(r->times);
    free(r->allocs);
    free(r);
}

static struct pes_trace_reader *reader_new(const char *name, struct pes_error *err)
{
    struct pes_trace_reader *r = calloc(1, sizeof *r);
    if (r) {
        r->fd = -1;
        r->name = strdup(name ? name : "(memory)");
        r->dctx = ZSTD_createDCtx();
        r->codec = pes_access_codec_new();
    }
    if (!r || !r->name || !r->dctx || !r->codec) {
        pes_trace_reader_close(r);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", name ? name : "(memory)");
        return NULL;
    }
    return r;
}

static struct pes_trace_reader *reader_start(struct pes_trace_reader *r, struct pes_error *err)
{
    struct pes_block b;
    uint64_t end = 0;
    if (r->size == 0) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "%s: empty file, not a pes trace", r->name);
        goto fail;
    }
    int rc = read_block(r, 0, &b, &end, NULL, err);
    if (rc < 0)
        goto fail;
    if (rc == 0) {
        pes_error_set(err, PES_ERR_TRUNCATED, r->size,
                      "%s: truncated at offset %llu, inside the HEADER block", r->name,
                      (unsigned long long)r->size);
        goto fail;
    }
    if (b.type != PES_BLOCK_HEADER) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "%s: offset 0: first block is %s, expected HEADER",
                      r->name, pes_block_type_name(b.type));
        goto fail;
    }
    /* Decode again into the long-lived arena (the block decode used scratch). */
    const char *why = NULL;
    if (pes_de_info(r->content.data + PES_BLOCK_HEADER_BYTES,
                    r->content.len - PES_BLOCK_HEADER_BYTES, &r->info, &r->tables, &why)) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: HEADER block: %s", r->name, why);
        goto fail;
    }
    r->info.version = r->block_version; /* the file's version: every block has it */
    r->seq.saw_header = 1;
    r->pos = end;
    return r;
fail:
    pes_trace_reader_close(r);
    return NULL;
}

struct pes_trace_reader *pes_trace_reader_open(const char *path, struct pes_error *err)
{
    pes_err_clear(err);
    if (!path || strcmp(path, "-") == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "%s: the trace reader needs a seekable file, not stdin",
                      path ? path : "(null)");
        return NULL;
    }
    /* O_NONBLOCK: a fifo without a writer must not hang the open; it is
     * refused just below, and reads of a regular file ignore the flag */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    struct pes_trace_reader *r = reader_new(path, err);
    if (!r) {
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->size = (uint64_t)st.st_size;
    return reader_start(r, err);
}

struct pes_trace_reader *pes_trace_reader_open_memory(const void *data, size_t size,
                                                      const char *name, struct pes_error *err)
{
    pes_err_clear(err);
    if (!data && size) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_reader_open_memory: no data");
        return NULL;
    }
    struct pes_trace_reader *r = reader_new(name, err);
    if (!r)
        return NULL;
    r->mem = malloc(size ? size : 1);
    if (!r->mem) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", r->name);
        pes_trace_reader_close(r);
        return NULL;
    }
    if (size)
        memcpy(r->mem, data, size);
    r->size = size;
    return reader_start(r, err);
}

const struct pes_trace_info *pes_trace_reader_info(const struct pes_trace_reader *r)
{
    return r ? &r->info : NULL;
}

void pes_trace_reader_set_raw(struct pes_trace_reader *r, int raw)
{
    if (r)
        r->raw = raw != 0;
}

/* ---------------------------------------------------------------- iteration */

int pes_trace_reader_next(struct pes_trace_reader *r, struct pes_block *out, struct pes_error *err)
{
    pes_err_clear(err);
    if (!r || !out)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_reader_next: bad arguments");
    if (r->failed) {
        if (err)
            *err = r->fail;
        return -1;
    }
    for (;;) {
        if (r->done)
            return 0;
        uint64_t end = 0;
        int rc = order_data_at(r, &r->seq, r->pos, &r->fail);
        if (!rc)
            rc = read_block(r, r->pos, out, &end, &r->seq, &r->fail);
        if (rc > 0 && out->type == PES_BLOCK_FOOTER &&
            order_footer(r, &r->seq, r->pos, out->totals, out->n, &r->fail))
            rc = -1;
        if (rc < 0) {
            memset(out, 0, sizeof *out);
            r->failed = 1;
            if (err)
                *err = r->fail;
            return -1;
        }
        if (rc == 0) {
            r->done = 1;
            r->skipped = r->seq_skipped;
            if (!r->seq.saw_footer)
                set_no_footer(r);
            return 0;
        }
        r->pos = end;
        if (known_block(out->type))
            return 1;
        r->seq_skipped++; /* unknown block type from a newer minor writer (§5): skipped */
    }
}

uint64_t pes_trace_reader_skipped(struct pes_trace_reader *r, const char **message)
{
    if (message) {
        *message = "";
        if (r && r->skipped) {
            snprintf(r->skip_msg, sizeof r->skip_msg,
                     "%s: %llu block%s of a type this reader does not know skipped (a newer "
                     "writer's extension, docs/trace-format.md §5)",
                     r->name, (unsigned long long)r->skipped, r->skipped == 1 ? "" : "s");
            *message = r->skip_msg;
        }
    }
    return r ? r->skipped : 0;
}

int pes_trace_reader_truncated(const struct pes_trace_reader *r, const char **message)
{
    if (message)
        *message = r && r->truncated ? r->trunc_msg : "";
    return r ? r->truncated : 0;
}

int pes_trace_reader_index(struct pes_trace_reader *r, struct pes_block_ref **refs, size_t *n,
                           struct pes_error *err)
{
    pes_err_clear(err);
    if (!r || !refs || !n)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_reader_index: bad arguments");
    *refs = NULL;
    *n = 0;
    size_t cap = 0, cnt = 0;
    struct pes_block_ref *v = NULL;
    struct order_check oc = {0};
    uint64_t off = 0;
    int rc = 0;
    uint64_t unknown = 0;
    /* The same checks as the sequential path (_next), so that a random-access
     * reader gets the same verdict: frame sizes against the frames, each index
     * frame against its block header, block order, footer counts, truncation. */
    for (;;) {
        struct pes_index_entry ie;
        unsigned long long content = 0;
        if ((rc = order_data_at(r, &oc, off, err)) != 0)
            break;
        if ((rc = locate_block(r, off, &ie, &content, err)) <= 0)
            break; /* end, truncation (r->truncated) or error */
        uint8_t hdr[PES_BLOCK_HEADER_BYTES];
        if ((rc = frame_block_header(r, off, ie.frame_size, hdr, err)) != 0 ||
            (rc = check_block_header(r, off, hdr, &ie, err)) != 0 ||
            (rc = order_block(r, &oc, off, ie.type, ie.thread, ie.count, err)) != 0)
            break;
        if (ie.type == PES_BLOCK_FOOTER) {
            struct pes_block b;
            uint64_t end;
            if ((rc = read_block(r, off, &b, &end, NULL, err)) <= 0 ||
                (rc = order_footer(r, &oc, off, b.totals, b.n, err)) != 0) {
                rc = rc == 0 ? -1 : rc; /* the frame was complete a moment ago */
                break;
            }
        }
        if (cnt == cap) {
            cap = cap ? cap * 2 : 64;
            struct pes_block_ref *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = fmt_err(r, err, PES_ERR_NOMEM, off, "out of memory");
                break;
            }
            v = nv;
        }
        v[cnt++] = (struct pes_block_ref){off, ie.type, ie.thread, ie.count, ie.frame_size};
        unknown += !known_block(ie.type);
        off += PES_INDEX_BYTES + ie.frame_size;
    }
    free(oc.items);
    free(oc.announced);
    if (rc < 0) {
        free(v);
        return -1;
    }
    if (!oc.saw_footer)
        set_no_footer(r);
    r->skipped = unknown;
    *refs = v;
    *n = cnt;
    return 0;
}

int pes_trace_reader_block_at(struct pes_trace_reader *r, const struct pes_block_ref *ref,
                              struct pes_block *out, struct pes_error *err)
{
    pes_err_clear(err);
    if (!r || !ref || !out)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_reader_block_at: bad arguments");
    /* Records and events are checked against the tables of the blocks before
     * them (check_record_ids): those must be known, whatever was read so far. */
    if ((ref->type == PES_BLOCK_ACCESS || ref->type == PES_BLOCK_EVENTS) && !r->tables_loaded &&
        !r->loading_tables && pes_trace_reader_load_tables(r, err))
        return -1;
    uint64_t end = 0;
    int saved_trunc = r->truncated;
    char saved_msg[sizeof r->trunc_msg];
    memcpy(saved_msg, r->trunc_msg, sizeof saved_msg);
    int rc = read_block(r, ref->offset, out, &end, NULL, err);
    if (rc == 0) {
        /* A ref beyond the complete data: do not touch the sequential state. */
        r->truncated = saved_trunc;
        memcpy(r->trunc_msg, saved_msg, sizeof saved_msg);
        return fmt_err(r, err, PES_ERR_TRUNCATED, ref->offset, "no complete block at this offset");
    }
    if (rc < 0)
        return -1;
    if (out->type != ref->type || out->thread != ref->thread || out->count != ref->count) {
        if (known_block(out->type))
            return fmt_err(r, err, PES_ERR_ARG, ref->offset,
                           "block reference does not match the block at its offset");
    }
    return 1;
}

int pes_trace_reader_load_tables(struct pes_trace_reader *r, struct pes_error *err)
{
    pes_err_clear(err);
    if (!r)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_reader_load_tables: no reader");
    struct pes_block_ref *refs = NULL;
    size_t n = 0;
    if (pes_trace_reader_index(r, &refs, &n, err))
        return -1;
    /* Every block but the records (ACCESS in a full trace, EVENTS in a sampled
     * one), in file order: the tables, and every other frame's checksum, so
     * that a reader of the records alone checks the whole file. Those are
     * decoded by whoever reads them; decoding them here would double the
     * cost of reading a trace. */
    int rc = 0;
    r->loading_tables = 1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct pes_block b;
        if (refs[i].type != counted_type(r) && pes_trace_reader_block_at(r, &refs[i], &b, err) < 0)
            rc = -1;
    }
    r->loading_tables = 0;
    free(refs);
    if (rc == 0)
        r->tables_loaded = 1;
    return rc; /* sequential position (r->pos) is untouched: reading continues where it was */
}
