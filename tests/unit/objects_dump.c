/*
 * objects_dump.c — a test tool: replays a pes trace through the stream
 * (replay_input_run, the code pes-replay runs) and prints how many accesses
 * (or sampled events) each data object and each part of one received:
 *   object COUNT KIND NAME        (KIND: global heap stack unknown)
 *   part COUNT DESCRIPTION        ("table[3]", "counters.hot", "heap@x.c:9 (f)+16")
 *   where NAME WHERE / stack NAME STACK (heap objects)
 * sorted, for e2e checks against counts computed by hand.
 * Usage: objects_dump [--jobs N] [--no-objects] TRACE
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "objects.h"

struct key {
    uint32_t obj;
    uint64_t off;
    uint64_t count;
};

struct counts {
    struct key *slot; /* open addressing on (obj, off) */
    size_t cap, n;
    uint64_t *per_obj;
    size_t n_obj;
    uint64_t columns_null, batches;
};

static size_t hash(uint32_t obj, uint64_t off)
{
    uint64_t x = off * 0x9E3779B97F4A7C15ull ^ obj;
    return (size_t)(x ^ x >> 29);
}

static void add(struct counts *c, uint32_t obj, uint64_t off)
{
    if (c->n * 2 >= c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        struct key *t = calloc(cap, sizeof *t);
        for (size_t i = 0; i < c->cap; i++)
            if (c->slot[i].count) {
                size_t j = hash(c->slot[i].obj, c->slot[i].off) & (cap - 1);
                while (t[j].count)
                    j = (j + 1) & (cap - 1);
                t[j] = c->slot[i];
            }
        free(c->slot);
        c->slot = t;
        c->cap = cap;
    }
    size_t j = hash(obj, off) & (c->cap - 1);
    while (c->slot[j].count && (c->slot[j].obj != obj || c->slot[j].off != off))
        j = (j + 1) & (c->cap - 1);
    if (!c->slot[j].count)
        c->slot[j] = (struct key){obj, off, 0}, c->n++;
    c->slot[j].count++;
    if (obj >= c->n_obj) {
        size_t n = c->n_obj ? c->n_obj : 64;
        while (n <= obj)
            n *= 2;
        c->per_obj = realloc(c->per_obj, n * sizeof *c->per_obj);
        memset(c->per_obj + c->n_obj, 0, (n - c->n_obj) * sizeof *c->per_obj);
        c->n_obj = n;
    }
    c->per_obj[obj]++;
}

struct part {
    char d[256];
    uint64_t n;
};
static int by_description(const void *a, const void *b)
{
    return strcmp(((const struct part *)a)->d, ((const struct part *)b)->d);
}

static int batch(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    (void)err;
    struct counts *c = ctx;
    c->batches++;
    if (b->n && !b->object)
        c->columns_null += b->n;
    for (size_t i = 0; b->object && i < b->n; i++)
        add(c, b->object[i], b->object_offset[i]);
    if (b->n_events && !b->event_object)
        c->columns_null += b->n_events;
    for (size_t i = 0; b->event_object && i < b->n_events; i++)
        if (b->events[i].kind != PES_EV_ALLOC && b->events[i].kind != PES_EV_FREE &&
            b->events[i].addr)
            add(c, b->event_object[i], b->event_object_offset[i]);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned jobs = 1;
    int objects = 1, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-objects"))
            objects = 0;
        else
            break;
    }
    if (i + 1 != argc) {
        fprintf(stderr, "usage: objects_dump [--jobs N] [--no-objects] TRACE\n");
        return 2;
    }
    struct pes_error err = {0};
    const char *path = argv[i];
    struct replay_input *in = replay_input_pes_kind(path) == PES_TRACE_SAMPLED
                                  ? replay_input_open_sampled(path, &err)
                                  : replay_input_open(path, &err);
    if (!in) {
        fprintf(stderr, "objects_dump: %s\n", err.message);
        return 1;
    }
    replay_input_set_threads(in, jobs);
    replay_input_set_objects(in, objects);
    struct pes_objects *o = replay_input_objects(in);
    if (replay_input_objects_warning(in))
        fprintf(stderr, "warning: %s\n", replay_input_objects_warning(in));
    struct counts c = {0};
    struct pes_batch_sink sink = {.batch = batch, .ctx = &c};
    if (replay_input_run(in, &sink, &err) < 0) {
        fprintf(stderr, "objects_dump: %s\n", err.message);
        return 1;
    }
    printf("objects %s\n", o ? "resolved" : "none");
    printf("null %" PRIu64 "\n", c.columns_null);
    static const char *kinds[] = {"unknown", "global", "heap", "stack"};
    for (size_t k = 0; k < c.n_obj; k++) {
        if (!c.per_obj[k])
            continue;
        const struct pes_object *ob = pes_objects_get(o, (uint32_t)k);
        printf("object %" PRIu64 " %s %s\n", c.per_obj[k], kinds[ob->kind], ob->name);
        if (ob->kind == PES_OBJ_HEAP) {
            printf("where %s %s\n", ob->name, ob->where);
            printf("stack %s %s\n", ob->name, ob->stack);
            printf("blocks %s %" PRIu64 " %" PRIu64 "\n", ob->name, ob->blocks, ob->size);
        }
    }
    /* parts: the same description from different offsets (bytes of one
     * element) add up */
    struct part *parts = calloc(c.n ? c.n : 1, sizeof *parts);
    size_t np = 0;
    for (size_t k = 0; k < c.cap; k++) {
        if (!c.slot[k].count)
            continue;
        pes_objects_describe(o, c.slot[k].obj, c.slot[k].off, parts[np].d, sizeof parts[np].d);
        parts[np++].n = c.slot[k].count;
    }
    qsort(parts, np, sizeof *parts, by_description);
    for (size_t a = 0, b; a < np; a = b) {
        uint64_t n = 0;
        for (b = a; b < np && !strcmp(parts[a].d, parts[b].d); b++)
            n += parts[b].n;
        printf("part %" PRIu64 " %s\n", n, parts[a].d);
    }
    free(parts);
    replay_input_close(in);
    return 0;
}
