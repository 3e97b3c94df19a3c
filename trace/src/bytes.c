/* bytes.c — little-endian output buffer, bounds-checked input cursor, string arena. */
#include <stdlib.h>

#include "trace_internal.h"

int pes_buf_reserve(struct pes_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len)
        return -1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < extra)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

void pes_buf_free(struct pes_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int pes_buf_put(struct pes_buf *b, const void *p, size_t n)
{
    if (pes_buf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int pes_buf_u8(struct pes_buf *b, uint8_t v)
{
    return pes_buf_put(b, &v, 1);
}
int pes_buf_u16(struct pes_buf *b, uint16_t v)
{
    return pes_buf_put(b, &v, 2);
}
int pes_buf_u32(struct pes_buf *b, uint32_t v)
{
    return pes_buf_put(b, &v, 4);
}
int pes_buf_u64(struct pes_buf *b, uint64_t v)
{
    return pes_buf_put(b, &v, 8);
}

int pes_buf_str(struct pes_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX)
        return -1;
    if (pes_buf_u32(b, (uint32_t)n))
        return -1;
    return pes_buf_put(b, s, n);
}

static const uint8_t *cur_take(struct pes_cur *c, size_t n)
{
    if (c->bad || pes_cur_left(c) < n) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *p = c->p;
    c->p += n;
    return p;
}

uint8_t pes_cur_u8(struct pes_cur *c)
{
    const uint8_t *p = cur_take(c, 1);
    return p ? *p : 0;
}
uint16_t pes_cur_u16(struct pes_cur *c)
{
    uint16_t v = 0;
    const uint8_t *p = cur_take(c, 2);
    if (p)
        memcpy(&v, p, 2);
    return v;
}
uint32_t pes_cur_u32(struct pes_cur *c)
{
    const uint8_t *p = cur_take(c, 4);
    return p ? pes_load_u32(p) : 0;
}
uint64_t pes_cur_u64(struct pes_cur *c)
{
    const uint8_t *p = cur_take(c, 8);
    return p ? pes_load_u64(p) : 0;
}
const uint8_t *pes_cur_str(struct pes_cur *c, uint32_t *len)
{
    *len = pes_cur_u32(c);
    const uint8_t *p = cur_take(c, *len);
    if (!p)
        *len = 0;
    return p;
}

/* Arena: a list of chunks; everything is freed at once. Decoded strings and
 * tables live here so the reader can hand out stable pointers. */
struct pes_arena_chunk {
    struct pes_arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *pes_arena_alloc(struct pes_arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + 15) & ~(size_t)15;
    struct pes_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

const char *pes_arena_strdup(struct pes_arena *a, const uint8_t *s, size_t n)
{
    char *d = pes_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void pes_arena_free(struct pes_arena *a)
{
    struct pes_arena_chunk *c = a->head;
    while (c) {
        struct pes_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}
