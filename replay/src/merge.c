/*
 * merge.c — k-way merge of per-thread record streams by interpolated time.
 * See merge.h for the ordering rules.
 */
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One thread's position: its ACCESS blocks in file order, the current decoded
 * block, and the current segment (records up to and including the next time
 * mark) with their interpolated times. */
struct thread_stream {
    uint32_t thread;
    size_t *blocks;           /* indices into merge->refs */
    size_t n_blocks, next_block;
    struct pes_record *blk;   /* copy of the current block (reader buffers are reused) */
    size_t blk_n, blk_pos, blk_cap;
    struct pes_record *seg;   /* current segment */
    uint64_t *seg_time;
    size_t seg_n, seg_pos, seg_cap;
    uint64_t last_mark;       /* time of the last mark consumed */
    double rate;              /* ticks per record in the last closed segment */
};

struct heap_entry {
    uint64_t time;
    uint32_t stream;          /* index into merge->streams */
};

struct pes_merge {
    struct pes_trace_reader *reader;
    struct pes_block_ref *refs;
    size_t n_refs;
    struct thread_stream *streams;
    uint32_t n_streams;
    struct heap_entry *heap;
    uint32_t heap_n;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int is_time_mark(const struct pes_record *r) {
    return r->id == PES_ID_TIME || r->id == PES_ID_THREAD_END;
}

/* Loads the stream's next block; 1 = loaded, 0 = no more, -1 = error. */
static int load_block(struct pes_merge *m, struct thread_stream *s, struct pes_error *err) {
    while (s->next_block < s->n_blocks) {
        const struct pes_block_ref *ref = &m->refs[s->blocks[s->next_block++]];
        struct pes_block b;
        if (pes_trace_reader_block_at(m->reader, ref, &b, err) < 0) return -1;
        if (b.n == 0) continue;
        size_t cap = s->blk_cap;
        if (grow((void **)&s->blk, &cap, b.n, sizeof *s->blk) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        s->blk_cap = cap;
        memcpy(s->blk, b.records, b.n * sizeof *s->blk);
        s->blk_n = b.n;
        s->blk_pos = 0;
        return 1;
    }
    return 0;
}

/* Fills the next segment: records up to and including the next time mark,
 * timed by linear interpolation from the previous mark. 1 / 0 (end) / -1. */
static int fill_segment(struct pes_merge *m, struct thread_stream *s, struct pes_error *err) {
    s->seg_n = s->seg_pos = 0;
    int found_mark = 0;
    while (!found_mark) {
        if (s->blk_pos == s->blk_n) {
            int rc = load_block(m, s, err);
            if (rc < 0) return -1;
            if (rc == 0) break;
        }
        /* copy the run up to and including the next mark in one go */
        size_t end = s->blk_pos;
        while (end < s->blk_n && !found_mark) found_mark = is_time_mark(&s->blk[end++]);
        size_t k = end - s->blk_pos;
        size_t cap = s->seg_cap;
        if (grow((void **)&s->seg, &cap, s->seg_n + k, sizeof *s->seg) < 0 ||
            grow((void **)&s->seg_time, &s->seg_cap, s->seg_n + k, sizeof *s->seg_time) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        memcpy(s->seg + s->seg_n, s->blk + s->blk_pos, k * sizeof *s->seg);
        s->seg_n += k;
        s->blk_pos = end;
    }
    if (s->seg_n == 0) return 0;
    uint64_t start = s->last_mark;
    if (found_mark) {
        uint64_t end = s->seg[s->seg_n - 1].addr;
        if (end < start) end = start;   /* clocks never run backwards; tolerate bad marks */
        for (size_t k = 0; k < s->seg_n; k++)
            s->seg_time[k] = start + (uint64_t)((double)(end - start) * (double)(k + 1) / (double)s->seg_n);
        s->seg_time[s->seg_n - 1] = end;
        if (start > 0 || s->rate > 0) s->rate = (double)(end - start) / (double)s->seg_n;
        s->last_mark = end;
    } else {
        for (size_t k = 0; k < s->seg_n; k++) s->seg_time[k] = start + (uint64_t)(s->rate * (double)(k + 1));
    }
    return 1;
}

static int stream_less(const struct heap_entry *a, const struct heap_entry *b) {
    return a->time < b->time || (a->time == b->time && a->stream < b->stream);
}

static void heap_push(struct pes_merge *m, struct heap_entry e) {
    uint32_t i = m->heap_n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!stream_less(&e, &m->heap[parent])) break;
        m->heap[i] = m->heap[parent];
        i = parent;
    }
    m->heap[i] = e;
}

static struct heap_entry heap_pop(struct pes_merge *m) {
    struct heap_entry top = m->heap[0];
    struct heap_entry last = m->heap[--m->heap_n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->heap_n) break;
        if (c + 1 < m->heap_n && stream_less(&m->heap[c + 1], &m->heap[c])) c++;
        if (!stream_less(&m->heap[c], &last)) break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->heap_n > 0) m->heap[i] = last;
    return top;
}

/* Restores the heap order after the top entry's time grew. */
static void heap_sift_down_top(struct pes_merge *m) {
    struct heap_entry e = m->heap[0];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->heap_n) break;
        if (c + 1 < m->heap_n && stream_less(&m->heap[c + 1], &m->heap[c])) c++;
        if (!stream_less(&m->heap[c], &e)) break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    m->heap[i] = e;
}

/* Makes sure the stream has a current record: 1 = yes, 0 = stream ended. */
static int refill(struct pes_merge *m, struct thread_stream *s, struct pes_error *err) {
    if (s->seg_pos < s->seg_n) return 1;
    return fill_segment(m, s, err);
}

static int find_or_add_stream(struct pes_merge *m, uint32_t thread) {
    for (uint32_t i = 0; i < m->n_streams; i++)
        if (m->streams[i].thread == thread) return (int)i;
    struct thread_stream *ns = realloc(m->streams, (m->n_streams + 1) * sizeof *ns);
    if (!ns) return -1;
    m->streams = ns;
    memset(&ns[m->n_streams], 0, sizeof *ns);
    ns[m->n_streams].thread = thread;
    const struct pes_thread *t = pes_trace_reader_thread(m->reader, thread);
    ns[m->n_streams].last_mark = t ? t->start_ticks : 0;
    return (int)m->n_streams++;
}

struct pes_merge *pes_merge_open(struct pes_trace_reader *r, struct pes_error *err) {
    struct pes_merge *m = calloc(1, sizeof *m);
    if (!m) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
        return NULL;
    }
    m->reader = r;
    if (pes_trace_reader_load_tables(r, err) < 0 ||
        pes_trace_reader_index(r, &m->refs, &m->n_refs, err) < 0)
        goto fail;
    for (size_t i = 0; i < m->n_refs; i++) {
        if (m->refs[i].type != PES_BLOCK_ACCESS) continue;
        int si = find_or_add_stream(m, m->refs[i].thread);
        if (si < 0) goto nomem;
        struct thread_stream *s = &m->streams[si];
        size_t *nb = realloc(s->blocks, (s->n_blocks + 1) * sizeof *nb);
        if (!nb) goto nomem;
        s->blocks = nb;
        s->blocks[s->n_blocks++] = i;
    }
    m->heap = calloc(m->n_streams ? m->n_streams : 1, sizeof *m->heap);
    if (!m->heap) goto nomem;
    for (uint32_t i = 0; i < m->n_streams; i++) {
        int rc = refill(m, &m->streams[i], err);
        if (rc < 0) goto fail;
        if (rc > 0) heap_push(m, (struct heap_entry){m->streams[i].seg_time[0], i});
    }
    return m;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "merge: out of memory");
fail:
    pes_merge_close(m);
    return NULL;
}

int pes_merge_next(struct pes_merge *m, struct pes_merged_record *out, struct pes_error *err) {
    if (m->heap_n == 0) return 0;
    /* The top stream stays at the top while its next record is still the
     * earliest: update its key in place instead of a pop and a push. */
    struct heap_entry *top = &m->heap[0];
    struct thread_stream *s = &m->streams[top->stream];
    out->time = top->time;
    out->thread = s->thread;
    out->rec = s->seg[s->seg_pos++];
    int rc = refill(m, s, err);
    if (rc < 0) return -1;
    if (rc == 0) {
        heap_pop(m);
        return 1;
    }
    top->time = s->seg_time[s->seg_pos];
    heap_sift_down_top(m);
    return 1;
}

long pes_merge_read(struct pes_merge *m, struct pes_record *out, uint32_t *threads, size_t max,
                    int keep_control, struct pes_error *err) {
    size_t n = 0;
    while (n < max && m->heap_n > 0) {
        struct heap_entry *top = &m->heap[0];
        struct thread_stream *s = &m->streams[top->stream];
        /* The top stream keeps the lead while its records come before the
         * best other stream's head: emit that run without heap work. */
        const struct heap_entry *rival = NULL;
        if (m->heap_n > 1) {
            rival = &m->heap[1];
            if (m->heap_n > 2 && stream_less(&m->heap[2], rival)) rival = &m->heap[2];
        }
        uint64_t rt = rival ? rival->time : UINT64_MAX;
        int tie_wins = !rival || top->stream < rival->stream;   /* equal times: lower stream first */
        size_t pos = s->seg_pos, end = s->seg_n;
        const struct pes_record *seg = s->seg;
        const uint64_t *st = s->seg_time;
        uint32_t thread = s->thread;
        while (pos < end && n < max && (st[pos] < rt || (st[pos] == rt && tie_wins))) {
            const struct pes_record *r = &seg[pos++];
            if (!keep_control && r->id >= PES_ID_CONTROL_FIRST) continue;
            out[n] = *r;
            if (threads) threads[n] = thread;
            n++;
        }
        s->seg_pos = pos;
        int rc = refill(m, s, err);
        if (rc < 0) return -1;
        if (rc == 0) {
            heap_pop(m);
            continue;
        }
        top->time = s->seg_time[s->seg_pos];
        heap_sift_down_top(m);
    }
    return (long)n;
}

uint32_t pes_merge_thread_count(const struct pes_merge *m) { return m->n_streams; }

void pes_merge_close(struct pes_merge *m) {
    if (!m) return;
    for (uint32_t i = 0; i < m->n_streams; i++) {
        free(m->streams[i].blocks);
        free(m->streams[i].blk);
        free(m->streams[i].seg);
        free(m->streams[i].seg_time);
    }
    free(m->streams);
    free(m->refs);
    free(m->heap);
    free(m);
}
