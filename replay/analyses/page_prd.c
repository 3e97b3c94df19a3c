/*
 * page_prd.c — the page-granularity PRD of each stream in parts
 * (page_prd.h).
 */
#include <stdlib.h>
#include <string.h>

#include "page_prd.h"
#include "parda.h"
#include "reuse_distance.h"

enum { PENDING = 256 }; /* pages gathered per stream before an engine takes them */

struct lane {
    struct pes_reuse *g;           /* first part: the stream's pages so far */
    struct pes_parda_counts out;   /* first part: its distances */
    struct pes_parda_summarizer z; /* later part: the local pass */
    struct pes_parda_summary s;    /* later part: its result */
    int begun;                     /* later part: z started (the stream has pages here) */
    uint64_t key[PENDING];
    size_t n;
};

struct replay_page_prd {
    unsigned shift;
    uint32_t n_streams;
    int later, ended;
    struct lane *lane;
    size_t packed; /* bytes of the packed summaries (after end) */
};

struct replay_page_prd *replay_page_prd_create(uint32_t page, uint32_t n_streams, int later,
                                               struct pes_error *err)
{
    struct replay_page_prd *p = calloc(1, sizeof *p);
    if (!p || !(p->lane = calloc(n_streams ? n_streams : 1, sizeof *p->lane))) {
        free(p);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    while ((UINT64_C(1) << p->shift) < page)
        p->shift++;
    p->n_streams = n_streams;
    p->later = later;
    for (uint32_t s = 0; s < n_streams; s++) {
        struct lane *l = &p->lane[s];
        if (pes_parda_counts_init(&l->out, 0, err) < 0 ||
            (!later &&
             !(l->g = pes_reuse_create(&(struct pes_reuse_options){.granule = 1}, err)))) {
            p->n_streams = s + 1;
            replay_page_prd_destroy(p);
            return NULL;
        }
    }
    return p;
}

void replay_page_prd_destroy(struct replay_page_prd *p)
{
    if (!p)
        return;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        struct lane *l = &p->lane[s];
        pes_reuse_destroy(l->g);
        pes_parda_counts_free(&l->out);
        if (l->begun) /* after end: only the summary is left to free */
            pes_parda_summarizer_abort(&l->z);
    }
    free(p->lane);
    free(p);
}

static int flush(struct replay_page_prd *p, struct lane *l, struct pes_error *err)
{
    int rc = 0;
    if (!l->n)
        return 0;
    if (!p->later)
        rc = pes_parda_push_direct(l->g, l->key, NULL, l->n, &l->out, err);
    else {
        if (!l->begun) {
            if (pes_parda_summarizer_begin(&l->z, &l->s, NULL, 0, 0, err) < 0)
                return -1;
            l->begun = 1;
        }
        rc = pes_parda_summarizer_feed(&l->z, l->key, NULL, l->n, err);
    }
    l->n = 0;
    return rc;
}

int replay_page_prd_batch(struct replay_page_prd *p, const struct pes_batch *b,
                          struct pes_error *err)
{
    const uint64_t gmask = (UINT64_C(1) << p->shift) - 1;
    for (size_t i = 0; i < b->n; i++) {
        uint32_t sz = b->size[i];
        if (!sz)
            continue;
        if (b->stream[i] >= p->n_streams)
            return pes_error_set(err, PES_ERR_ARG, 0, "page PRD: stream %u of %u", b->stream[i],
                                 p->n_streams);
        struct lane *l = &p->lane[b->stream[i]];
        uint64_t a = b->addr[i], first = a >> p->shift, last = first;
        if ((a & gmask) + sz - 1 > gmask) { /* more than one page (as profiles.c counts) */
            uint64_t last_addr = a + (sz - 1);
            last = (last_addr < a ? UINT64_MAX : last_addr) >> p->shift;
        }
        for (uint64_t k = first;; k++) {
            l->key[l->n++] = k;
            if (l->n == PENDING && flush(p, l, err) < 0)
                return -1;
            if (k == last)
                break;
        }
    }
    return 0;
}

int replay_page_prd_end(struct replay_page_prd *p, struct pes_error *err)
{
    if (!p->later || p->ended)
        return 0;
    p->packed = sizeof(uint32_t);
    for (uint32_t s = 0; s < p->n_streams; s++) {
        struct lane *l = &p->lane[s];
        if (flush(p, l, err) < 0)
            return -1;
        if (!l->begun)
            continue;
        if (pes_parda_summarizer_end(&l->z, err) < 0) {
            l->begun = 0; /* end freed the summary */
            return -1;
        }
        p->packed += sizeof(uint32_t) + sizeof(uint64_t) + pes_parda_summary_packed_size(&l->s);
    }
    p->ended = 1;
    return 0;
}

/* [u32 streams with pages] then per stream: u32 stream, u64 bytes, summary */
size_t replay_page_prd_pack(const struct replay_page_prd *p, void *buf, size_t cap)
{
    if (!p->ended)
        return 0;
    if (!buf || cap < p->packed)
        return p->packed;
    unsigned char *o = buf;
    uint32_t n = 0;
    for (uint32_t s = 0; s < p->n_streams; s++)
        n += p->lane[s].begun != 0;
    memcpy(o, &n, sizeof n);
    o += sizeof n;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        const struct lane *l = &p->lane[s];
        if (!l->begun)
            continue;
        uint64_t len = pes_parda_summary_packed_size(&l->s);
        memcpy(o, &s, sizeof s);
        memcpy(o + sizeof s, &len, sizeof len);
        o += sizeof s + sizeof len;
        o += pes_parda_summary_pack(&l->s, o, (size_t)len);
    }
    return p->packed;
}

int replay_page_prd_merge(struct replay_page_prd *p, const void *buf, size_t len,
                          struct pes_error *err)
{
    const unsigned char *in = buf, *end = in + len;
    uint32_t n;
    if (p->later || len < sizeof n)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "page PRD: a part of %zu bytes", len);
    memcpy(&n, in, sizeof n);
    in += sizeof n;
    if (n > p->n_streams)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "page PRD: %u streams of %u", n, p->n_streams);
    /* every summary read before any is resolved: a bad part changes nothing */
    struct pes_parda_summary *sum = calloc(n ? n : 1, sizeof *sum);
    uint32_t *stream = calloc(n ? n : 1, sizeof *stream);
    uint32_t got = 0;
    int rc = sum && stream ? 0 : pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (; rc == 0 && got < n; got++) {
        uint64_t bytes;
        if ((size_t)(end - in) < sizeof *stream + sizeof bytes) {
            rc = pes_error_set(err, PES_ERR_FORMAT, 0, "page PRD: a part cut short");
            break;
        }
        memcpy(&stream[got], in, sizeof *stream);
        memcpy(&bytes, in + sizeof *stream, sizeof bytes);
        in += sizeof *stream + sizeof bytes;
        if (stream[got] >= p->n_streams || bytes > (uint64_t)(end - in)) {
            rc = pes_error_set(err, PES_ERR_FORMAT, 0, "page PRD: stream %u, %llu bytes",
                               stream[got], (unsigned long long)bytes);
            break;
        }
        if (pes_parda_summary_unpack(&sum[got], in, (size_t)bytes, err) < 0) {
            rc = -1;
            break;
        }
        in += bytes;
    }
    if (rc == 0 && in != end)
        rc = pes_error_set(err, PES_ERR_FORMAT, 0, "page PRD: bytes after the part");
    for (uint32_t i = 0; rc == 0 && i < got; i++) {
        struct lane *l = &p->lane[stream[i]];
        if (flush(p, l, err) < 0 || pes_parda_resolve(l->g, &sum[i], 0, &l->out, err) < 0)
            rc = -1;
    }
    for (uint32_t i = 0; sum && i < got; i++)
        pes_parda_summary_free(&sum[i]);
    free(sum);
    free(stream);
    return rc;
}

int replay_page_prd_total(struct replay_page_prd *p, struct pes_rd_hist *h, struct pes_error *err)
{
    if (pes_rd_hist_init(h, 0, err) < 0)
        return -1;
    for (uint32_t s = 0; s < p->n_streams; s++) {
        struct lane *l = &p->lane[s];
        int rc = p->later ? 0 : flush(p, l, err);
        if (rc == 0 && pes_rd_hist_merge(h, &l->out.hist) < 0)
            rc = pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        if (rc < 0) {
            pes_rd_hist_free(h);
            return -1;
        }
    }
    return 0;
}
