/*
 * sim.c — `--simulate`: set-associative LRU caches with MESI coherence, one
 * core per stream (recorded thread or mimicked core), placed on the shared
 * caches as the stream description says (sim/mesi.h): hit rates per level,
 * miss classes, true/false sharing per site, communication matrices.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "c2c.h"
#include "callpaths.h"
#include "cpu_account.h"
#include "groups.h"
#include "mesi.h"
#include "scheduler.h"
#include "shadow.h"

/*
 * With replay workers (--jobs >= 2) the simulation is split into address
 * partitions (mesi.h: exact, whatever their number), each simulated by a
 * strand of the replay's workers. The reading thread sorts each batch's
 * accesses into the partitions' buckets of a slot (an access over lines of
 * several partitions goes into each bucket; each partition simulates its
 * lines); a full slot goes to every partition at once. Each partition keeps
 * its own simulator and cache-line table; at the end they are added into
 * partition 0's, which the report reads.
 *
 * The partitions' capacity / conflict split needs the fully associative
 * shadow of every line (shadow.h), whose stacks (one per core, one per
 * socket) each depend on their own stream alone: a full slot goes first to
 * the strands of the stacks its accesses feed, each filling its bits of the
 * slot's lines, and the last of them to finish hands the slot on to the
 * partitions. Slots reach the partitions in stream order whichever stack
 * finishes last (release), so each partition still sees its accesses in
 * order. The batch step (on the reading thread or the analysis's strand)
 * only records the accesses.
 */
/* A slot gathers several batches, so that each partition's task is long
 * enough to pay for its hand-over. */
enum { SLOTS = 4, SLOT_CAP = 8 * PES_BATCH, SLOT_BATCHES = 16, MAX_PARTS = 128 };
/* The shadow's stacks: one per core, one per socket (mesi.h's limits). */
enum { MAX_STACKS = PES_SIM_MAX_CORES + PES_SIM_MAX_SOCKETS };

/* What the cache-line table needs besides the simulator's access: columns
 * of a batch, indexed as it is. */
struct cols {
    const uint32_t *site, *object; /* object NULL: unknown */
    const uint64_t *object_offset;
};

struct bucket { /* one partition's accesses of a slot, in stream order */
    struct pes_sim_access *acc;
    uint32_t *index; /* in the slot */
    size_t n, cap;
};

struct slot {
    uint64_t seq; /* the stream index of its first access */
    size_t n;
    /* the batches it holds: batch j's accesses of partition p are
     * bucket[p].acc[first[j][p] .. first[j + 1][p]); each batch is
     * simulated, then counted in the cache-line table, as without
     * partitions (the table's rows name their first sites in that order) */
    uint32_t batches;
    uint32_t first[SLOT_BATCHES + 1][MAX_PARTS];
    uint32_t *site, *object; /* the columns (object only when objects are resolved) */
    uint64_t *object_offset;
    /* the shadow's bits of its accesses' lines (pes_sim_access.shadow_at):
     * the private stacks' in hits, the shared ones' in shared_hits */
    uint8_t *hits, *shared_hits;
    size_t n_hits, cap_hits;
    /* what the stacks read: each access's first byte, size, core and shadow_at */
    uint64_t *addr;
    uint32_t *size, *at;
    uint8_t *core;
    uint8_t fed[MAX_STACKS]; /* the stacks its accesses feed */
    struct bucket bucket[MAX_PARTS];
    atomic_uint pending;      /* partitions still to simulate it */
    atomic_uint stacks_to_go; /* shadow stacks still to fill its bits */
    atomic_int shadowed;      /* every stack is done; not yet handed to the partitions */
};

struct sim;

struct part {
    struct sim *s;
    uint32_t id;    /* its address partition */
    uint32_t local; /* its index among this process's partitions (buckets) */
    struct pes_sim *sim;
    struct replay_c2c *c2c;     /* its lines' share of the cache-line table */
    struct pes_sim_access *acc; /* [PES_BATCH] one partition: the batch's accesses */
    uint8_t *hits;              /* one partition of several processes: the batch's shadow bits */
    size_t cap_hits;
    /* what is being simulated, for its events: acc[k] is access index[k]
     * (NULL: k) of columns cols, whose first access is the stream's base-th */
    const struct pes_sim_access *cur_acc;
    const uint32_t *index;
    struct cols cols;
    uint64_t base;
    struct pes_strand *strand;
    atomic_int failed; /* err holds why (written before) */
    struct pes_error err;
};

struct task {
    struct part *p;
    struct slot *slot;
};

struct shadow_task {
    struct sim *s;
    struct slot *slot;
    uint32_t stack;
};

struct sim {
    struct pes_sim *sim; /* the results: partition 0's, the others added at the end */
    /* with partitions, the fully associative shadow of every line (shadow.h),
     * fed in stream order for all of them: on the current thread with one
     * partition here, else each stack on its strand (n_stacks of them);
     * NULL: each simulator has its own */
    struct pes_sim_shadow *shadow;
    uint32_t n_stacks;
    uint8_t socket_stack[PES_SIM_MAX_CORES]; /* core c's shared stack */
    struct pes_strand *stack_strand[MAX_STACKS];
    struct shadow_task shadow_tasks[SLOTS][MAX_STACKS];
    /* slots handed to the partitions (release): in order, under release_mu */
    pthread_mutex_t release_mu;
    uint64_t released;
    atomic_int release_failed; /* release_err holds why (written before) */
    struct pes_error release_err;
    struct replay_c2c *c2c;
    const struct pes_stream_info *si;
    const struct pes_knobs *k;
    uint32_t n_threads;
    enum replay_by by; /* --by object: the simulator's per-site stats are per object */
    /* this process's partitions (of 2^part_bits; pes-replay-mpi shares them
     * out: knobs.share), local[partition] their index or -1 */
    uint32_t n_parts, part_bits, line_shift;
    int16_t local[MAX_PARTS];
    struct part *parts;
    struct slot slots[SLOTS];
    struct slot *fill; /* the slot being filled, or NULL */
    struct task tasks[SLOTS][MAX_PARTS];
    uint64_t slots_used, seq; /* slots handed over so far, accesses */
    /* call paths (callpaths.h): the simulator's rows are (key, path, site)
     * triples (pk_ids: a batch's), added back per key when published, the
     * triples' rows kept in by_triple for the rows' paths; NULL: keys */
    struct replay_pathkeys *pk;
    uint32_t *pk_ids;
    struct pes_sim_stats *by_triple;
    uint32_t n_triples;
};

/* The c2c view of a simulated access, the i-th of its columns. */
static struct replay_c2c_access c2c_access(const struct pes_sim_access *a, const struct cols *c,
                                           size_t i)
{
    return (struct replay_c2c_access){
        .addr = a->addr,
        .size = a->size,
        .thread = a->thread,
        .site = c->site[i],
        .object = c->object ? c->object[i] : 0,
        .object_offset = c->object_offset ? c->object_offset[i] : 0,
        .is_read = a->is_read != 0,
        .is_write = a->is_write != 0,
    };
}

static void on_event(void *ctx, const struct pes_sim_event *ev)
{
    struct part *p = ctx;
    size_t k = (size_t)(ev->access - p->cur_acc), i = p->index ? p->index[k] : k;
    if (ev->kind == PES_SIM_EV_MISS) {
        replay_c2c_miss(p->c2c, ev->line, ev->cause, p->base + i);
        return;
    }
    struct replay_c2c_access a = c2c_access(ev->access, &p->cols, i);
    /* the batch's accesses reach the table after the batch: their seq is base + index */
    static const enum replay_c2c_event kind[] = {REPLAY_C2C_INVALIDATION, REPLAY_C2C_COHERENCE_MISS,
                                                 REPLAY_C2C_TRANSFER};
    replay_c2c_event(p->c2c, ev->line, &a, kind[ev->kind], ev->is_true, p->base + i);
}

/* The simulator's view of access i of b. */
static struct pes_sim_access sim_access(const struct sim *s, const struct pes_batch *b, size_t i)
{
    return (struct pes_sim_access){
        .addr = b->addr[i],
        .size = b->size[i],
        .core = b->stream[i],
        .thread = b->stream[i],
        .site = s->pk                       ? s->pk_ids[i]
                : s->by != REPLAY_BY_OBJECT ? b->site[i]
                : b->object                 ? b->object[i]
                                            : 0,
        .is_read = b->rw[i] & PES_BATCH_READ,
        .is_write = (b->rw[i] & PES_BATCH_WRITE) >> 1,
    };
}

/* n accesses on partition p: acc[k] is access index[k] (NULL: k) of the
 * columns c, whose first is the stream's base-th. Simulated, then counted
 * in the partition's cache-line table. 0 or -1 (p->err). */
static int simulate(struct part *p, const struct pes_sim_access *acc, const uint32_t *index,
                    size_t n, const struct cols *c, uint64_t base, const uint8_t *hits,
                    const uint8_t *more)
{
    p->cur_acc = acc;
    p->index = index;
    p->cols = *c;
    p->base = base;
    if (n && (hits ? pes_sim_access_batch_shadow(p->sim, acc, n, hits, more, &p->err)
                   : pes_sim_access_batch(p->sim, acc, n, &p->err)) < 0) {
        p->err.offset = 0;
        return -1;
    }
    /* the accesses of contended lines, per offset (c2c.h): none before the first event */
    for (size_t k = 0; k < n; k++)
        if (replay_c2c_tracking(p->c2c)) {
            size_t i = index ? index[k] : k;
            struct replay_c2c_access a = c2c_access(&acc[k], c, i);
            replay_c2c_access_at(p->c2c, &a, base + i);
        }
    return 0;
}

static void run_part(void *arg)
{
    struct task *t = arg;
    struct part *p = t->p;
    const struct slot *sl = t->slot;
    const struct bucket *bk = &sl->bucket[p->local];
    struct cols c = {.site = sl->site, .object = sl->object, .object_offset = sl->object_offset};
    for (uint32_t j = 0; j < sl->batches && !atomic_load_explicit(&p->failed, memory_order_relaxed);
         j++) {
        uint32_t from = sl->first[j][p->local],
                 to = j + 1 < sl->batches ? sl->first[j + 1][p->local] : (uint32_t)bk->n;
        if (simulate(p, bk->acc + from, bk->index + from, to - from, &c, sl->seq, sl->hits,
                     sl->shared_hits) < 0)
            atomic_store_explicit(&p->failed, 1, memory_order_release);
    }
    atomic_fetch_sub_explicit(&t->slot->pending, 1, memory_order_release);
}

static int slot_free(void *ctx)
{
    struct slot *sl = ctx;
    return atomic_load_explicit(&sl->pending, memory_order_acquire) == 0;
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return k->simulate && (si->mimicked || !k->mimic) && si->kind != PES_TRACE_SAMPLED;
}

static void slot_free_arrays(struct slot *sl)
{
    free(sl->site), free(sl->object), free(sl->object_offset), free(sl->hits);
    free(sl->shared_hits), free(sl->addr), free(sl->size), free(sl->at), free(sl->core);
    for (int p = 0; p < MAX_PARTS; p++)
        free(sl->bucket[p].acc), free(sl->bucket[p].index);
}

static void destroy(void *self)
{
    struct sim *s = self;
    /* the stacks' tasks hand slots to the partitions: they end first */
    for (uint32_t j = 0; j < s->n_stacks; j++)
        pes_strand_destroy(s->stack_strand[j]);
    for (uint32_t p = 0; s->parts && p < s->n_parts; p++)
        pes_strand_destroy(s->parts[p].strand);
    for (uint32_t p = 0; s->parts && p < s->n_parts; p++) {
        pes_sim_destroy(s->parts[p].sim);
        replay_c2c_destroy(s->parts[p].c2c);
        free(s->parts[p].acc);
        free(s->parts[p].hits);
    }
    pes_sim_shadow_destroy(s->shadow);
    replay_pathkeys_destroy(s->pk);
    free(s->pk_ids);
    free(s->by_triple);
    for (int i = 0; i < SLOTS; i++)
        slot_free_arrays(&s->slots[i]);
    pthread_mutex_destroy(&s->release_mu);
    free(s->parts);
    free(s);
}

/* How many partitions: about one per worker (a power of two), as many as
 * the machine's geometry allows; shared out among pes-replay-mpi's
 * processes, 8 each (the same count on every process, whatever its CPUs). */
static uint32_t partition_bits(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    uint32_t want = k->shares > 1 ? 8 * k->shares : pes_sched_workers(k->sched), bits = 0;
    if (want < 2)
        return 0;
    while ((1u << bits) < want && (2u << bits) <= MAX_PARTS)
        bits++;
    uint32_t most = pes_sim_partition_bits(si->machine, si->page_size);
    return bits < most ? bits : most;
}

/* Room for n more accesses in bucket b. 0 or -1. */
static int bucket_reserve(struct bucket *b, size_t n)
{
    if (b->n + n <= b->cap)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : 256;
    while (cap < b->n + n)
        cap *= 2;
    struct pes_sim_access *a = realloc(b->acc, cap * sizeof *a);
    if (a)
        b->acc = a;
    uint32_t *x = a ? realloc(b->index, cap * sizeof *x) : NULL;
    if (!x)
        return -1;
    b->index = x;
    b->cap = cap;
    return 0;
}

static int slot_init(struct slot *sl, int objects, uint32_t parts)
{
    sl->site = malloc(SLOT_CAP * sizeof *sl->site);
    sl->addr = malloc(SLOT_CAP * sizeof *sl->addr);
    sl->size = malloc(SLOT_CAP * sizeof *sl->size);
    sl->at = malloc(SLOT_CAP * sizeof *sl->at);
    sl->core = malloc(SLOT_CAP * sizeof *sl->core);
    if (!sl->addr || !sl->size || !sl->at || !sl->core)
        return 0;
    if (objects) {
        sl->object = malloc(SLOT_CAP * sizeof *sl->object);
        sl->object_offset = malloc(SLOT_CAP * sizeof *sl->object_offset);
    }
    for (uint32_t p = 0; p < parts;
         p++) /* a fair share and some; a busier partition grows its bucket */
        if (bucket_reserve(&sl->bucket[p], 2 * SLOT_CAP / parts) < 0)
            return 0;
    return sl->site && (!objects || (sl->object && sl->object_offset));
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    if (si->n_streams > PES_SIM_MAX_CORES) {
        pes_error_set(
            err, PES_ERR_ARG, 0,
            "--simulate: the trace has %u threads; the simulator maps one core per thread "
            "and supports at most %u",
            si->n_streams, PES_SIM_MAX_CORES);
        return NULL;
    }
    struct sim *s = calloc(1, sizeof *s);
    if (!s) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->release_mu, NULL);
    s->n_threads = si->n_streams;
    s->by = replay_by_parse(k->by);
    s->si = si;
    s->k = k;
    if (s->by == REPLAY_BY_CALLPATH && !si->callpaths) {
        pes_error_set(err, PES_ERR_ARG, 0,
                      "--by callpath: %s has no call edges (no call sites in its tables: "
                      "recorded without call paths)",
                      si->path);
        free(s);
        return NULL;
    }
    if (si->callpaths && (!(s->pk = replay_pathkeys_create()) ||
                          !(s->pk_ids = malloc(PES_BATCH * sizeof *s->pk_ids))))
        goto nomem;
    s->part_bits = partition_bits(si, k);
    uint32_t shares = k->shares > 1 ? k->shares : 1, share = shares > 1 ? k->share : 0;
    for (uint32_t i = 0; i < (1u << s->part_bits); i++)
        s->local[i] = (int16_t)(i % shares == share ? (int)s->n_parts++ : -1);
    while ((1u << s->line_shift) < si->machine->level[0].line)
        s->line_shift++;
    if (!(s->parts = calloc(s->n_parts ? s->n_parts : 1, sizeof *s->parts)))
        goto nomem;
    int st_part = pes_cpu_stage("sim partitions", PES_CPU_PARALLEL);
    for (uint32_t i = 0, id = 0; i < s->n_parts; i++, id++) {
        while (s->local[id] < 0)
            id++;
        struct part *p = &s->parts[i];
        p->s = s;
        p->id = id;
        p->local = i;
        if ((s->n_parts == 1 && !(p->acc = malloc(PES_BATCH * sizeof *p->acc))) ||
            !(p->c2c = replay_c2c_create(si->machine->level[0].line)))
            goto nomem;
        replay_c2c_set_partition(p->c2c, s->part_bits, id);
        replay_c2c_count_misses(p->c2c);
        struct pes_sim_config sc = {
            .machine = si->machine,
            .n_cores = si->n_streams,
            .core_socket = si->stream_cache,
            .n_threads = si->n_streams,
            .page_size = si->page_size,
            .on_event = on_event,
            .event_ctx = p,
            .partition_bits = s->part_bits,
            .partition = id,
        };
        if (!(p->sim = pes_sim_create(&sc, err))) {
            destroy(s);
            return NULL;
        }
        if (s->n_parts > 1 && !(p->strand = pes_strand_create(k->sched, st_part)))
            goto nomem;
    }
    for (int i = 0; s->n_parts > 1 && i < SLOTS; i++)
        if (!slot_init(&s->slots[i], si->objects != NULL, s->n_parts))
            goto nomem;
    if (s->part_bits && s->n_parts &&
        !(s->shadow = pes_sim_shadow_create(si->machine, si->n_streams, si->stream_cache, err))) {
        destroy(s);
        return NULL;
    }
    if (s->shadow && s->n_parts > 1) { /* a strand per stack (the slots' shadow bits) */
        if (pes_sim_shadow_stacks(s->shadow) > MAX_STACKS) {
            destroy(s);
            pes_error_set(err, PES_ERR_ARG, 0, "--simulate: more than %u sockets",
                          (unsigned)PES_SIM_MAX_SOCKETS);
            return NULL;
        }
        for (uint32_t c = 0; c < si->n_streams; c++)
            s->socket_stack[c] = (uint8_t)pes_sim_shadow_stack_of(s->shadow, c, 1);
        int st_shadow = pes_cpu_stage("sim shadow", PES_CPU_PARALLEL);
        for (uint32_t n = pes_sim_shadow_stacks(s->shadow); s->n_stacks < n; s->n_stacks++)
            if (!(s->stack_strand[s->n_stacks] = pes_strand_create(k->sched, st_shadow)))
                goto nomem;
    }
    s->sim =
        s->parts[0].sim; /* NULL with no partition here: nothing to publish from this process */
    s->c2c = s->parts[0].c2c;
    return s;
nomem:
    destroy(s);
    pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    return NULL;
}

/* The first failure of a partition, if any. */
static int failed(struct sim *s, struct pes_error *err)
{
    if (atomic_load_explicit(&s->release_failed, memory_order_acquire)) {
        *err = s->release_err;
        return -1;
    }
    for (uint32_t p = 0; p < s->n_parts; p++)
        if (atomic_load_explicit(&s->parts[p].failed, memory_order_acquire)) {
            *err = s->parts[p].err;
            return -1;
        }
    return 0;
}

/* Slot sl goes to every partition. 0 or -1. */
static int to_partitions(struct sim *s, struct slot *sl, struct pes_error *err)
{
    struct task *t = s->tasks[sl - s->slots];
    struct pes_strand *strands[MAX_PARTS];
    void *args[MAX_PARTS];
    for (uint32_t p = 0; p < s->n_parts; p++) {
        t[p] = (struct task){.p = &s->parts[p], .slot = sl};
        strands[p] = s->parts[p].strand;
        args[p] = &t[p];
    }
    if (pes_sched_submit_many(strands, run_part, args, s->n_parts, err) < 0) {
        atomic_store(&sl->pending, 0);
        return -1;
    }
    return 0;
}

/* The slots whose shadow bits are all there go to the partitions, in
 * stream order: slot number `released` first (it lies at released % SLOTS;
 * its shadowed flag is set only once its stacks are done, and cleared here
 * before the slot can be filled again). Called by the stack that finished a
 * slot last, on any thread. */
static void release(struct sim *s)
{
    pthread_mutex_lock(&s->release_mu);
    for (;;) {
        struct slot *sl = &s->slots[s->released % SLOTS];
        if (!atomic_load_explicit(&sl->shadowed, memory_order_acquire))
            break;
        atomic_store_explicit(&sl->shadowed, 0, memory_order_relaxed);
        s->released++;
        struct pes_error err = {0};
        if (to_partitions(s, sl, &err) < 0 &&
            !atomic_load_explicit(&s->release_failed, memory_order_relaxed)) {
            s->release_err = err;
            atomic_store_explicit(&s->release_failed, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&s->release_mu);
}

/* One stack's bits of a slot's lines: the accesses of its core (socket), in
 * order, into the slot's private or shared array. */
static void run_stack(void *arg)
{
    struct shadow_task *t = arg;
    struct sim *s = t->s;
    struct slot *sl = t->slot;
    uint32_t stack = t->stack;
    if (stack < s->n_threads) {
        for (size_t i = 0; i < sl->n; i++)
            if (sl->core[i] == stack)
                pes_sim_shadow_stack_range(s->shadow, stack, sl->addr[i], sl->size[i],
                                           s->line_shift, sl->hits + sl->at[i]);
    } else {
        for (size_t i = 0; i < sl->n; i++)
            if (s->socket_stack[sl->core[i]] == stack)
                pes_sim_shadow_stack_range(s->shadow, stack, sl->addr[i], sl->size[i],
                                           s->line_shift, sl->shared_hits + sl->at[i]);
    }
    if (atomic_fetch_sub_explicit(&sl->stacks_to_go, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&sl->shadowed, 1, memory_order_release);
        release(s);
    }
}

/* The slot being filled goes to the strands of the stacks it feeds, whose
 * last hands it to the partitions. 0 or -1. */
static int dispatch(struct sim *s, struct pes_error *err)
{
    struct slot *sl = s->fill;
    s->fill = NULL;
    if (!sl || !sl->n)
        return 0;
    atomic_store_explicit(&sl->pending, s->n_parts, memory_order_relaxed);
    s->slots_used++;
    if (!s->n_stacks)
        return to_partitions(s, sl, err);
    struct pes_strand *strands[MAX_STACKS];
    void *args[MAX_STACKS];
    uint32_t n = 0;
    struct shadow_task *t = s->shadow_tasks[sl - s->slots];
    for (uint32_t j = 0; j < s->n_stacks; j++)
        if (sl->fed[j]) {
            t[n] = (struct shadow_task){.s = s, .slot = sl, .stack = j};
            strands[n] = s->stack_strand[j];
            args[n] = &t[n];
            n++;
        }
    atomic_store_explicit(&sl->stacks_to_go, n, memory_order_relaxed);
    if (pes_sched_submit_many(strands, run_stack, args, n, err) < 0) {
        atomic_store(&sl->pending, 0);
        return -1;
    }
    return 0;
}

/* The shadow's bits of a's lines appended to *hits (n used of cap), a's
 * shadow_at set to where they start. 0 or -1 (no memory). */
static int shadow_bits(struct sim *s, struct pes_sim_access *a, uint8_t **hits, size_t *n,
                       size_t *cap)
{
    uint64_t lines = pes_sim_shadow_lines(a->addr, a->size, s->line_shift);
    if (*n + lines > UINT32_MAX)
        return -1;
    if (*n + lines > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *n + lines)
            c *= 2;
        uint8_t *x = realloc(*hits, c);
        if (!x)
            return -1;
        *hits = x;
        *cap = c;
    }
    a->shadow_at = (uint32_t)*n;
    *n += pes_sim_shadow_range(s->shadow, a->core, a->addr, a->size, s->line_shift, *hits + *n);
    return 0;
}

/* Access a, the slot's i-th, recorded for the stacks: its lines' bits will
 * start at shadow_at, in both arrays (grown to hold them). 0 or -1. */
static int shadow_place(struct sim *s, struct slot *sl, struct pes_sim_access *a, size_t i)
{
    uint64_t lines = pes_sim_shadow_lines(a->addr, a->size, s->line_shift);
    if (sl->n_hits + lines > UINT32_MAX)
        return -1;
    if (sl->n_hits + lines > sl->cap_hits) {
        size_t c = sl->cap_hits ? sl->cap_hits : 4096;
        while (c < sl->n_hits + lines)
            c *= 2;
        uint8_t *x = realloc(sl->hits, c);
        if (x)
            sl->hits = x;
        uint8_t *y = x ? realloc(sl->shared_hits, c) : NULL;
        if (!y)
            return -1;
        sl->shared_hits = y;
        sl->cap_hits = c;
    }
    a->shadow_at = (uint32_t)sl->n_hits;
    sl->n_hits += lines;
    sl->addr[i] = a->addr;
    sl->size[i] = a->size;
    sl->at[i] = a->shadow_at;
    sl->core[i] = (uint8_t)a->core;
    sl->fed[a->core] = sl->fed[s->socket_stack[a->core]] = 1;
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct sim *s = self;
    if (s->n_parts == 0)
        return 0; /* the other processes simulate every partition */
    if (s->pk && replay_pathkeys_map(s->pk,
                                     s->by != REPLAY_BY_OBJECT ? b->site
                                     : b->object               ? b->object
                                                               : NULL,
                                     b->callpath, b->site, b->n, s->pk_ids) < 0)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory (call paths)");
    if (s->n_parts == 1) { /* on this thread (its simulator takes its own lines) */
        struct part *p = &s->parts[0];
        size_t n_hits = 0;
        for (size_t i = 0; i < b->n; i++) {
            p->acc[i] = sim_access(s, b, i);
            if (s->shadow && shadow_bits(s, &p->acc[i], &p->hits, &n_hits, &p->cap_hits) < 0)
                return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        }
        struct cols c = {.site = b->site, .object = b->object, .object_offset = b->object_offset};
        int rc = simulate(p, p->acc, NULL, b->n, &c, s->seq, s->shadow ? p->hits : NULL, NULL);
        s->seq += b->n;
        if (rc < 0)
            *err = p->err;
        return rc;
    }
    if (!b->n)
        return 0;
    if (!s->fill) {
        struct slot *sl = &s->slots[s->slots_used % SLOTS];
        pes_sched_wait(s->k->sched, slot_free, sl);
        if (failed(s, err) < 0)
            return -1;
        sl->n = 0;
        sl->batches = 0;
        sl->n_hits = 0;
        sl->seq = s->seq;
        memset(sl->fed, 0, sizeof sl->fed);
        for (uint32_t p = 0; p < s->n_parts; p++)
            sl->bucket[p].n = 0;
        s->fill = sl;
    }
    struct slot *sl = s->fill;
    size_t n = b->n, at = sl->n;
    for (uint32_t p = 0; p < s->n_parts; p++)
        sl->first[sl->batches][p] = (uint32_t)sl->bucket[p].n;
    sl->batches++;
    memcpy(sl->site + at, b->site, n * sizeof *b->site);
    if (sl->object) {
        if (b->object)
            memcpy(sl->object + at, b->object, n * sizeof *b->object);
        else
            memset(sl->object + at, 0, n * sizeof *sl->object);
        if (b->object_offset)
            memcpy(sl->object_offset + at, b->object_offset, n * sizeof *b->object_offset);
        else
            memset(sl->object_offset + at, 0, n * sizeof *sl->object_offset);
    }
    /* each access into its partition's bucket (every bucket: lines of several;
     * none: another process's partition) */
    uint64_t mask = (UINT64_C(1) << s->part_bits) - 1;
    for (size_t i = 0; i < n; i++) {
        struct pes_sim_access a = sim_access(s, b, i);
        if (s->n_stacks && shadow_place(s, sl, &a, at + i) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        uint64_t size = b->size[i] ? b->size[i] : 1, first = b->addr[i] >> s->line_shift;
        uint64_t last = (b->addr[i] + size - 1) >> s->line_shift;
        int32_t mine = s->local[first & mask];
        uint32_t p = first == last ? (uint32_t)mine : 0, to = first == last ? p + 1 : s->n_parts;
        if (first == last && mine < 0)
            continue;
        for (; p < to; p++) {
            struct bucket *bk = &sl->bucket[p];
            if (bk->n == bk->cap && bucket_reserve(bk, 1) < 0)
                return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
            bk->acc[bk->n] = a;
            bk->index[bk->n++] = (uint32_t)(at + i);
        }
    }
    sl->n = at + n;
    s->seq += n;
    return sl->n + PES_BATCH > SLOT_CAP || sl->batches == SLOT_BATCHES ? dispatch(s, err) : 0;
}

/* The partitions' results added into partition 0's, which the report reads. */
static int finish(void *self, struct pes_error *err)
{
    struct sim *s = self;
    if (s->n_parts <= 1)
        return 0;
    if (dispatch(s, err) < 0)
        return -1;
    /* the stacks hand the last slots to the partitions */
    for (uint32_t j = 0; j < s->n_stacks; j++)
        pes_strand_wait(s->stack_strand[j]);
    for (uint32_t p = 0; p < s->n_parts; p++)
        pes_strand_wait(s->parts[p].strand);
    if (failed(s, err) < 0)
        return -1;
    for (uint32_t p = 1; p < s->n_parts; p++) {
        if (pes_sim_absorb(s->sim, s->parts[p].sim, err) < 0)
            return -1;
        if (replay_c2c_absorb(s->c2c, s->parts[p].c2c) < 0)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        pes_sim_destroy(s->parts[p].sim); /* its caches and directory are no longer needed */
        s->parts[p].sim = NULL;
    }
    return 0;
}

/* ------------------------------------------------------------ ranking */

/* "true", "false", "mixed" or "-" from a site's sharing counts: one kind
 * dominates when it has at least 4 times the other's events. */
static const char *sharing_kind(const struct pes_sim_stats *s)
{
    uint64_t t = s->inval_true + s->coh_true, f = s->inval_false + s->coh_false;
    if (t == 0 && f == 0)
        return "-";
    if (f == 0)
        return "true";
    if (t == 0)
        return "false";
    return f >= 4 * t ? "false" : t >= 4 * f ? "true" : "mixed";
}

static uint64_t l1_misses(const struct pes_sim_stats *s)
{
    return s->misses[0][PES_SIM_COMPULSORY] + s->misses[0][PES_SIM_CAPACITY] +
           s->misses[0][PES_SIM_COHERENCE] + s->misses[0][PES_SIM_CONFLICT];
}

/* Value of a --sort metric for a site. */
static uint64_t metric(const struct pes_sim_stats *s, const char *name)
{
    if (strcmp(name, "coherence") == 0)
        return s->coh_true + s->coh_false;
    if (strcmp(name, "false-sharing") == 0)
        return s->inval_false + s->coh_false;
    if (strcmp(name, "true-sharing") == 0)
        return s->inval_true + s->coh_true;
    if (strcmp(name, "misses") == 0)
        return l1_misses(s);
    if (strcmp(name, "accesses") == 0)
        return s->accesses;
    return s->inval_true + s->inval_false; /* "invalidations" */
}

struct ranked {
    uint64_t value;
    uint32_t site;
};

static int by_value_desc(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* Ids of the (up to) top sites with a non-zero metric, best first, ties by
 * id (UINT32_MAX, the pooled unknown sites, last); malloc'd, NULL without memory. */
static uint32_t *top_sites(const struct pes_sim *sim, const char *name, uint32_t top, int all_rows,
                           uint32_t *n)
{
    uint32_t sites = pes_sim_sites(sim);
    struct ranked *all = malloc(((size_t)sites + 1) * sizeof *all);
    *n = 0;
    if (!all)
        return NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i <= sites; i++) {
        uint32_t id = i == sites ? UINT32_MAX : i;
        const struct pes_sim_stats *st = pes_sim_site(sim, id);
        uint64_t v = st ? metric(st, name) : 0;
        if (v || (st && all_rows))
            all[k++] = (struct ranked){v, id};
    }
    qsort(all, k, sizeof *all, by_value_desc);
    if (k > top)
        k = top;
    uint32_t *ids = malloc(((size_t)k + 1) * sizeof *ids);
    for (uint32_t i = 0; ids && i < k; i++)
        ids[i] = all[i].site;
    free(all);
    *n = ids ? k : 0;
    return ids;
}

/* ------------------------------------------------------------ report */

static void pair(struct pes_report *r, struct pes_rnode *parent, const char *key, uint64_t t,
                 uint64_t f)
{
    struct pes_rnode *o = pes_r_object(r, parent, key);
    pes_r_u64(r, o, "true", t);
    pes_r_u64(r, o, "false", f);
}

static void threads(struct pes_report *r, struct pes_rnode *parent, const struct pes_sim_stats *st)
{
    struct pes_rnode *a = pes_r_array(r, parent, "threads");
    uint64_t mask = st->victim_threads | st->source_threads;
    for (int b = 0; b < 64; b++)
        if (mask >> b & 1)
            pes_r_u64(r, a, NULL, (uint64_t)b);
}

static void matrix(struct pes_report *r, struct pes_rnode *parent, const char *key,
                   const struct pes_sim *sim, enum pes_sim_comm_kind kind, uint32_t n)
{
    struct pes_rnode *rows = pes_r_array(r, parent, key);
    uint64_t *m = calloc((size_t)n * n ? (size_t)n * n : 1, sizeof *m);
    if (!m) {
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    pes_sim_comm_symmetric(sim, kind, 0, m);
    for (uint32_t i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, rows, NULL);
        for (uint32_t j = 0; j < n; j++)
            pes_r_u64(r, row, NULL, m[(size_t)i * n + j]);
    }
    free(m);
}

static void site_where(struct sim *s, struct pes_report *r, struct pes_rnode *o, uint32_t id)
{
    const struct pes_site *site = id == UINT32_MAX ? NULL : s->si->site(s->si->site_ctx, id);
    pes_r_i64(r, o, "site", id == UINT32_MAX ? -1 : (int64_t)id);
    pes_r_str(r, o, "file", site && site->file ? site->file : "");
    pes_r_u64(r, o, "line", site ? site->line : 0);
    pes_r_u64(r, o, "column", site ? site->column : 0);
    pes_r_str(r, o, "function", site && site->function ? site->function : "");
}

/* The top sites by --sort (the first n of the ranking): what the text and
 * JSON reports list. */
static void publish_top(struct sim *s, struct pes_report *r, struct pes_rnode *parent,
                        const uint32_t *order, uint32_t n)
{
    struct pes_rnode *arr = pes_r_array(r, parent, "sites");
    for (uint32_t i = 0; i < n; i++) {
        const struct pes_sim_stats *st = pes_sim_site(s->sim, order[i]);
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        site_where(s, r, o, order[i]);
        pes_r_u64(r, o, "accesses", st->accesses);
        pes_r_u64(r, o, "l1_misses", l1_misses(st));
        struct pes_rnode *h = pes_r_array(r, o, "hits");
        for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++)
            pes_r_u64(r, h, NULL, st->hits[l]);
        struct pes_rnode *c = pes_r_object(r, o, "l1_miss_classes");
        pes_r_u64(r, c, "compulsory", st->misses[0][PES_SIM_COMPULSORY]);
        pes_r_u64(r, c, "capacity", st->misses[0][PES_SIM_CAPACITY]);
        pes_r_u64(r, c, "coherence", st->misses[0][PES_SIM_COHERENCE]);
        pes_r_u64(r, c, "conflict", st->misses[0][PES_SIM_CONFLICT]);
        pair(r, o, "invalidations", st->inval_true, st->inval_false);
        pair(r, o, "coherence_misses", st->coh_true, st->coh_false);
        pes_r_str(r, o, "sharing", sharing_kind(st));
        threads(r, o, st);
    }
}

/* The simulator's sites (the pooled unknown ones as UINT32_MAX) grouped
 * --by by: *keys (malloc'd) and g, or -1 without memory (report marked failed). */
static int site_groups(struct sim *s, struct pes_report *r, int by, struct replay_groups *g,
                       uint32_t **keys_out, uint32_t *n_out)
{
    uint32_t sites = pes_sim_sites(s->sim), n = 0;
    uint32_t *keys = malloc(((size_t)sites + 1) * sizeof *keys);
    for (uint32_t i = 0; keys && i <= sites; i++) {
        uint32_t id = i == sites ? UINT32_MAX : i;
        if (pes_sim_site(s->sim, id))
            keys[n++] = id;
    }
    if (!keys || replay_groups_make(g, s->si, by, keys, n) < 0) {
        free(keys);
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return -1;
    }
    *keys_out = keys;
    *n_out = n;
    return 0;
}

/* --by callpath: the triples that accessed memory grouped per line and
 * path: *keys (their sites), *tids (their ids), g; -1 without memory. */
static int triple_groups(struct sim *s, struct pes_report *r, struct replay_groups *g,
                         uint32_t **keys_out, uint32_t **tids_out, uint32_t *n_out)
{
    uint32_t n = 0, *keys = malloc(((size_t)s->n_triples + 1) * sizeof *keys),
             *tids = malloc(((size_t)s->n_triples + 1) * sizeof *tids),
             *paths = malloc(((size_t)s->n_triples + 1) * sizeof *paths);
    for (uint32_t t = 0; keys && tids && paths && t < s->n_triples; t++)
        if (s->by_triple[t].accesses) {
            keys[n] = replay_pathkeys_key(s->pk, t);
            paths[n] = replay_pathkeys_path(s->pk, t);
            tids[n++] = t;
        }
    if (!keys || !tids || !paths || replay_groups_make_paths(g, s->si, keys, paths, n) < 0) {
        free(keys);
        free(tids);
        free(paths);
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return -1;
    }
    free(paths);
    *keys_out = keys;
    *tids_out = tids;
    *n_out = n;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Under each listed row (node[i], group rank[i].site, its metric
 * rank[i].value), its top paths by the same metric: the triples of the
 * keys in its group (keys: sorted, g's keys). */
static void publish_row_paths(struct sim *s, struct pes_report *r, struct pes_rnode *const *node,
                              const struct ranked *rank, uint32_t rows,
                              const struct replay_groups *g, const uint32_t *keys, uint32_t n_keys)
{
    uint32_t nt = s->n_triples;
    uint32_t *start = calloc((size_t)g->n + 1, sizeof *start), *of = malloc((nt + 1) * sizeof *of),
             *idx = malloc((nt + 1) * sizeof *idx), *sites = malloc((nt + 1) * sizeof *sites),
             *paths = malloc((nt + 1) * sizeof *paths);
    uint64_t *values = malloc((nt + 1) * sizeof *values);
    if (!start || !of || !idx || !sites || !paths || !values) {
        pes_r_array(r, NULL, NULL);
        goto out;
    }
    for (uint32_t t = 0; t < nt; t++) { /* the group of each triple's key, or none */
        uint32_t key = replay_pathkeys_key(s->pk, t);
        const uint32_t *at =
            s->by_triple[t].accesses ? bsearch(&key, keys, n_keys, sizeof *keys, cmp_u32) : NULL;
        of[t] = at ? g->of[at - keys] : UINT32_MAX;
        if (at)
            start[of[t] + 1]++;
    }
    for (size_t j = 0; j < g->n; j++)
        start[j + 1] += start[j];
    for (uint32_t t = 0; t < nt; t++)
        if (of[t] != UINT32_MAX)
            idx[start[of[t]]++] = t;
    for (size_t j = g->n; j > 0; j--)
        start[j] = start[j - 1];
    start[0] = 0;
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t grp = rank[i].site, n = 0;
        for (uint32_t k = start[grp]; k < start[grp + 1]; k++, n++) {
            uint32_t t = idx[k];
            sites[n] = replay_pathkeys_site(s->pk, t);
            paths[n] = replay_pathkeys_path(s->pk, t);
            values[n] = metric(&s->by_triple[t], s->k->sort);
        }
        replay_callpaths_publish(r, node[i], s->si, s->k->sort, sites, paths, values, n,
                                 rank[i].value);
    }
out:
    free(start), free(of), free(idx), free(sites), free(paths), free(values);
}

/* The top groups (--by) by --sort: each group's stats are its sites' added
 * (--by callpath: its triples'); with call paths, each row's top paths. */
static void publish_groups(struct sim *s, struct pes_report *r, struct pes_rnode *parent)
{
    pes_r_str(r, parent, "by", replay_by_name(s->by));
    struct pes_rnode *arr = pes_r_array(r, parent, "groups");
    uint32_t *keys, *tids = NULL, n;
    struct replay_groups g;
    int by_path = s->by == REPLAY_BY_CALLPATH && s->by_triple;
    if ((by_path ? triple_groups(s, r, &g, &keys, &tids, &n)
                 : site_groups(s, r, s->by, &g, &keys, &n)) < 0)
        return;
    struct pes_sim_stats *st = calloc(g.n ? g.n : 1, sizeof *st);
    struct ranked *rank = calloc(g.n ? g.n : 1, sizeof *rank);
    struct pes_rnode **node = calloc(g.n ? g.n : 1, sizeof *node);
    uint32_t k = 0, shown = 0;
    for (uint32_t i = 0; st && rank && i < n; i++)
        pes_sim_stats_add(&st[g.of[i]],
                          by_path ? &s->by_triple[tids[i]] : pes_sim_site(s->sim, keys[i]));
    for (uint32_t j = 0; st && rank && j < g.n; j++) {
        uint64_t v = metric(&st[j], s->k->sort);
        if (v || s->k->all_rows)
            rank[k++] = (struct ranked){v, j};
    }
    if (!st || !rank || !node)
        pes_r_array(r, NULL, NULL);
    else
        qsort(rank, k, sizeof *rank, by_value_desc);
    for (uint32_t i = 0; st && rank && node && i < k && i < s->k->top; i++, shown++) {
        const struct pes_sim_stats *x = &st[rank[i].site];
        struct pes_rnode *o = node[i] = pes_r_object(r, arr, NULL);
        replay_group_publish(r, o, s->si, s->by, &g, rank[i].site, keys);
        pes_r_u64(r, o, "accesses", x->accesses);
        pes_r_u64(r, o, "reads", x->reads);
        pes_r_u64(r, o, "writes", x->writes);
        pes_r_u64(r, o, "l1_misses", l1_misses(x));
        struct pes_rnode *h = pes_r_array(r, o, "hits");
        for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++)
            pes_r_u64(r, h, NULL, x->hits[l]);
        pair(r, o, "invalidations", x->inval_true, x->inval_false);
        pair(r, o, "coherence_misses", x->coh_true, x->coh_false);
        pes_r_str(r, o, "sharing", sharing_kind(x));
        threads(r, o, x);
    }
    if (shown && !by_path && s->by_triple && replay_callpaths_shown(s->si))
        publish_row_paths(s, r, node, rank, shown, &g, keys, n);
    free(st);
    free(rank);
    free(node);
    free(keys);
    free(tids);
    replay_groups_free(&g);
}

/* --annotate: per source line (text only) the accesses, misses per level
 * (from the hits: misses at level l+1 are those at l minus the hits there),
 * invalidations and coherence misses, summed over the line's sites. */
static void publish_annotate(struct sim *s, struct pes_report *r, struct pes_rnode *parent)
{
    struct pes_rnode *arr = pes_r_flag(pes_r_array(r, parent, "annotate"), PES_R_TEXT_ONLY);
    if (s->by == REPLAY_BY_OBJECT)
        return; /* the simulator's rows are objects, not sites */
    uint32_t *keys, n;
    struct replay_groups g;
    if (site_groups(s, r, REPLAY_BY_LINE, &g, &keys, &n) < 0)
        return;
    struct pes_sim_stats *st = calloc(g.n ? g.n : 1, sizeof *st);
    if (!st)
        pes_r_array(r, NULL, NULL);
    for (uint32_t i = 0; st && i < n; i++)
        pes_sim_stats_add(&st[g.of[i]], pes_sim_site(s->sim, keys[i]));
    for (size_t j = 0; st && j < g.n; j++) {
        const struct pes_site *site =
            keys[g.member[g.start[j]]] == UINT32_MAX
                ? NULL
                : s->si->site(s->si->site_ctx, keys[g.member[g.start[j]]]);
        if (!site)
            continue; /* no site table (another tool's trace): nothing to name */
        /* line 0 (the file's unidentified lines) and no file at all (no
         * debug location: a row of file "" named by its function) stay rows */
        struct pes_rnode *o = pes_r_object(r, arr, NULL);
        pes_r_str(r, o, "file", site->file ? site->file : "");
        pes_r_u64(r, o, "line", site->line);
        pes_r_str(r, o, "function", site->function ? site->function : "");
        pes_r_u64(r, o, "accesses", st[j].accesses);
        struct pes_rnode *m = pes_r_array(r, o, "misses");
        uint64_t reaching = st[j].accesses;
        for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++) {
            reaching = reaching > st[j].hits[l] ? reaching - st[j].hits[l] : 0;
            pes_r_u64(r, m, NULL, reaching);
        }
        pair(r, o, "invalidations", st[j].inval_true, st[j].inval_false);
        pair(r, o, "coherence_misses", st[j].coh_true, st[j].coh_false);
    }
    free(st);
    free(keys);
    replay_groups_free(&g);
}

/* One row of the --sites-csv table: site id's counts st, and with call
 * paths the path they are of. */
static void all_row(struct sim *s, struct pes_report *r, struct pes_rnode *arr, uint32_t id,
                    const struct pes_sim_stats *st, const char *callpath)
{
    const struct pes_site *site = id == UINT32_MAX ? NULL : s->si->site(s->si->site_ctx, id);
    struct pes_rnode *o = pes_r_object(r, arr, NULL);
    site_where(s, r, o, id);
    pes_r_str(r, o, "kind", site ? pes_access_kind_name(site->kind) : "");
    pes_r_u64(r, o, "accesses", st->accesses);
    pes_r_u64(r, o, "reads", st->reads);
    pes_r_u64(r, o, "writes", st->writes);
    struct pes_rnode *h = pes_r_array(r, o, "hits");
    for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++)
        pes_r_u64(r, h, NULL, st->hits[l]);
    pes_r_u64(r, o, "l1_compulsory", st->misses[0][PES_SIM_COMPULSORY]);
    pes_r_u64(r, o, "l1_capacity", st->misses[0][PES_SIM_CAPACITY]);
    pes_r_u64(r, o, "l1_coherence", st->misses[0][PES_SIM_COHERENCE]);
    pes_r_u64(r, o, "l1_conflict", st->misses[0][PES_SIM_CONFLICT]);
    struct pes_rnode *cf = pes_r_array(r, o, "conflict"); /* per level: the findings' */
    for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++)
        pes_r_u64(r, cf, NULL, st->misses[l][PES_SIM_CONFLICT]);
    pes_r_u64(r, o, "inval_true", st->inval_true);
    pes_r_u64(r, o, "inval_false", st->inval_false);
    pes_r_u64(r, o, "coh_true", st->coh_true);
    pes_r_u64(r, o, "coh_false", st->coh_false);
    pes_r_str(r, o, "sharing", sharing_kind(st));
    threads(r, o, st);
    if (callpath)
        pes_r_str(r, o, "callpath", callpath);
}

/* A site's triples, most --sort count first (then accesses, then id). */
struct triple_rank {
    uint32_t key, tid;
    uint64_t value, accesses;
};

static int by_key_value(const void *a, const void *b)
{
    const struct triple_rank *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Every site that accessed memory (the --sites-csv table, not in JSON):
 * the k sites with a non-zero --sort metric first (ranked), then the rest by
 * accesses. With call paths, a row per path of each site instead, its
 * paths in the order of their --sort counts. */
static void publish_all(struct sim *s, struct pes_report *r, struct pes_rnode *parent,
                        const uint32_t *ranked, uint32_t k)
{
    struct pes_rnode *arr = pes_r_flag(pes_r_array(r, parent, "all_sites"), PES_R_TEXT_ONLY);
    uint32_t n = 0, nt = 0;
    uint32_t *by_accesses = top_sites(s->sim, "accesses", UINT32_MAX, 0, &n);
    struct triple_rank *tr = NULL;
    if (s->by_triple && replay_callpaths_shown(s->si) &&
        (tr = malloc(((size_t)s->n_triples + 1) * sizeof *tr))) {
        for (uint32_t t = 0; t < s->n_triples; t++)
            if (s->by_triple[t].accesses)
                tr[nt++] = (struct triple_rank){replay_pathkeys_key(s->pk, t), t,
                                                metric(&s->by_triple[t], s->k->sort),
                                                s->by_triple[t].accesses};
        qsort(tr, nt, sizeof *tr, by_key_value);
    }
    if (!by_accesses || (s->by_triple && replay_callpaths_shown(s->si) && !tr))
        pes_r_array(r, NULL, NULL); /* marks the report failed */
    char name[1024];
    for (uint32_t pass = 0; by_accesses && ranked && pass < 2; pass++) {
        const uint32_t *ids = pass == 0 ? ranked : by_accesses;
        for (uint32_t j = 0; j < (pass == 0 ? k : n); j++) {
            const struct pes_sim_stats *st = pes_sim_site(s->sim, ids[j]);
            if (pass == 1 && (s->k->all_rows || metric(st, s->k->sort) != 0))
                continue; /* listed in pass 0 */
            if (!tr) {
                all_row(s, r, arr, ids[j], st, NULL);
                continue;
            }
            /* the site's triples: first of its key in tr (sorted by key) */
            size_t lo = 0, hi = nt;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (tr[mid].key < ids[j])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t t = lo; t < nt && tr[t].key == ids[j]; t++) {
                replay_callpath_name(s->si, replay_pathkeys_path(s->pk, tr[t].tid),
                                     replay_pathkeys_site(s->pk, tr[t].tid), name, sizeof name);
                all_row(s, r, arr, ids[j], &s->by_triple[tr[t].tid], name);
            }
        }
    }
    free(tr);
    free(by_accesses);
}

/* pes-replay-mpi: this process's partitions' counts and cache-line table,
 * and on process 0 those of the others added (mesi.h: exact). */
static size_t share_pack(void *self, void *buf, size_t cap)
{
    struct sim *s = self;
    if (!s->sim)
        return 0;
    size_t a = pes_sim_pack(s->sim, NULL, 0), b = replay_c2c_pack(s->c2c, NULL, 0), n = 16 + a + b;
    if (!buf || cap < n)
        return n;
    unsigned char *at = buf;
    uint64_t x = a;
    memcpy(at, &x, 8);
    pes_sim_pack(s->sim, at + 8, a);
    x = b;
    memcpy(at + 8 + a, &x, 8);
    replay_c2c_pack(s->c2c, at + 16 + a, b);
    return n;
}

static int share_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct sim *s = self;
    if (len == 0)
        return 0;
    const unsigned char *at = buf;
    uint64_t a = 0, b = 0;
    if (len >= 8)
        memcpy(&a, at, 8);
    if (len >= 16 && a <= len - 16)
        memcpy(&b, at + 8 + a, 8);
    if (!s->sim || len < 16 || a > len - 16 || b != len - 16 - a)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "--simulate: a share of %zu bytes does not match", len);
    if (pes_sim_absorb_packed(s->sim, at + 8, (size_t)a, err) < 0)
        return -1;
    return replay_c2c_absorb_packed(s->c2c, at + 16 + a, (size_t)b, err);
}

static void publish(void *self, const struct pes_publish *to)
{
    struct sim *s = self;
    if (!s->sim)
        return; /* a process without partitions: process 0 publishes (shares) */
    struct pes_report *r = to->r;
    if (s->pk && !s->by_triple) { /* the rows back per key; the triples' kept for their paths */
        uint32_t n = replay_pathkeys_count(s->pk);
        uint32_t *key_of = malloc((n ? n : 1) * sizeof *key_of);
        for (uint32_t id = 0; key_of && id < n; id++)
            key_of[id] = replay_pathkeys_key(s->pk, id);
        if (!key_of || pes_sim_rekey_sites(s->sim, key_of, n, &s->by_triple) < 0)
            pes_r_array(r, NULL, NULL); /* marks the report failed */
        else
            s->n_triples = n;
        free(key_of);
    }
    const struct pes_sim_stats *t = pes_sim_totals(s->sim);
    struct pes_rnode *o = pes_r_object(r, to->config, "simulation");
    struct pes_rnode *levels = pes_r_array(r, o, "levels");
    uint64_t reaching = t->accesses;
    for (uint32_t l = 0; l < pes_sim_levels(s->sim); l++) {
        struct pes_rnode *lv = pes_r_object(r, levels, NULL);
        pes_r_u64(r, lv, "level", l + 1);
        pes_r_u64(r, lv, "accesses", reaching);
        pes_r_u64(r, lv, "hits", t->hits[l]);
        pes_r_u64(r, lv, "compulsory", t->misses[l][PES_SIM_COMPULSORY]);
        pes_r_u64(r, lv, "capacity", t->misses[l][PES_SIM_CAPACITY]);
        pes_r_u64(r, lv, "coherence", t->misses[l][PES_SIM_COHERENCE]);
        pes_r_u64(r, lv, "conflict", t->misses[l][PES_SIM_CONFLICT]);
        reaching = 0;
        for (int c = 0; c < PES_SIM_MISS_CLASSES; c++)
            reaching += t->misses[l][c];
    }
    pair(r, o, "invalidations", t->inval_true, t->inval_false);
    pair(r, o, "coherence_misses", t->coh_true, t->coh_false);
    pair(r, o, "transfers", t->comm_true, t->comm_false);
    pes_r_u64(r, o, "writebacks", pes_sim_writebacks(s->sim));
    pes_r_str(r, o, "sort", s->k->sort);
    uint32_t k = 0; /* the ranking by --sort, once for the top list and the full table */
    uint32_t *ranked = top_sites(s->sim, s->k->sort, UINT32_MAX, s->k->all_rows, &k);
    if (!ranked)
        pes_r_array(r, NULL, NULL); /* marks the report failed */
    /* by object the simulator's rows are objects: only the groups list them */
    uint32_t top = s->by == REPLAY_BY_OBJECT ? 0 : k < s->k->top ? k : s->k->top;
    publish_top(s, r, o, ranked, top);
    publish_groups(s, r, o);
    struct pes_rnode *comm = pes_r_object(r, o, "communication");
    pes_r_u64(r, comm, "threads", s->n_threads);
    matrix(r, comm, "all", s->sim, PES_SIM_COMM_ALL, s->n_threads);
    matrix(r, comm, "true", s->sim, PES_SIM_COMM_TRUE, s->n_threads);
    matrix(r, comm, "false", s->sim, PES_SIM_COMM_FALSE, s->n_threads);
    replay_c2c_publish(s->c2c, r, o, s->si, s->k->top);
    if (s->k->annotate)
        publish_annotate(s, r, o);
    if (ranked && s->by != REPLAY_BY_OBJECT)
        publish_all(s, r, o, ranked, k);
    free(ranked);
}

const struct pes_analysis pes_analysis_sim = {
    .name = "sim",
    .help = "cache + MESI simulation: hit rates, miss classes, true/false sharing per site "
            "(--simulate)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .share_pack = share_pack,
    .share_merge = share_merge,
    .destroy = destroy,
};
