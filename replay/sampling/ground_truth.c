/*
 * ground_truth.c — ground truth of a full trace for --compare: ReuseTracker's
 * reuse / invalidation definitions (rt_truth.h), the cache + MESI simulation
 * with one core per thread (mesi.h: coherence misses, invalidations caused,
 * communication matrices) and the exact per-thread stack distance of every
 * intra-thread reuse rt_truth finds, counted in distinct start addresses
 * (reuse_distance.h), in one pass.
 */
#include <stdlib.h>
#include <string.h>

#include "sampled.h"
#include "reuse_distance.h"

enum { CHUNK = 1024 };

/* One chunk's accesses in the form each truth takes them. */
struct truth_scratch {
    struct pes_rt_access rt[CHUNK];
    struct pes_sim_access sim[CHUNK];
    /* rt_truth's intra-thread reuses of the chunk, in access order: the
     * deciding access's index and the use's start address; first[k] ..
     * first[k + 1] are access k's */
    uint32_t *log_at;
    uint64_t *log_use;
    size_t n_log, cap_log;
    int log_failed;
    uint32_t first[CHUNK + 1];
};

static void log_reuse(void *ctx, size_t index, uint64_t use_addr)
{
    struct truth_scratch *x = ctx;
    if (x->n_log == x->cap_log) {
        size_t cap = x->cap_log ? 2 * x->cap_log : 4096;
        uint32_t *at = realloc(x->log_at, cap * sizeof *at);
        if (at)
            x->log_at = at;
        uint64_t *use = at ? realloc(x->log_use, cap * sizeof *use) : NULL;
        if (!use) {
            x->log_failed = 1;
            return;
        }
        x->log_use = use;
        x->cap_log = cap;
    }
    x->log_at[x->n_log] = (uint32_t)index;
    x->log_use[x->n_log++] = use_addr;
}

/* Accesses go to the truths a chunk at a time through their batch calls,
 * which prefetch their tables' slots ahead: the tables hold a slot per
 * distinct word or line and are probed at random, so the misses, not the
 * arithmetic, set the pace. The stack distances are those of rt_truth's own
 * intra-thread reuses (the same pairs the sampled histogram estimates): for
 * each reuse an access decided, the distinct start addresses its thread
 * touched since the use (a peek at the use's address), then the access. */
static int chunk(struct replay_truth *t, const struct pes_batch *b, size_t lo, size_t n,
                 struct pes_error *err)
{
    struct truth_scratch *x = t->scratch;
    for (size_t k = 0; k < n; k++) {
        size_t i = lo + k;
        uint32_t thread = b->stream[i], site = b->site[i];
        if (thread >= t->n_threads)
            return pes_error_set(err, PES_ERR_FORMAT, 0,
                                 "record of thread %u, but the trace announces only %u threads",
                                 thread, t->n_threads);
        if (site != UINT32_MAX && site + 1 > t->max_site)
            t->max_site = site + 1;
        int writes = (b->rw[i] & PES_BATCH_WRITE) != 0;
        x->rt[k] = (struct pes_rt_access){.addr = b->addr[i],
                                          .size = b->size[i],
                                          .thread = thread,
                                          .site = site,
                                          .is_write = writes};
        x->sim[k] = (struct pes_sim_access){
            .addr = b->addr[i],
            .size = b->size[i],
            .core = thread,
            .thread = thread,
            .site = site,
            .is_read = b->rw[i] & PES_BATCH_READ,
            .is_write = (uint8_t)writes,
        };
    }
    t->accesses += n;
    x->n_log = 0;
    if (pes_rt_access_batch(t->rt, x->rt, n, err) < 0 ||
        pes_sim_access_batch(t->sim, x->sim, n, err) < 0)
        return -1;
    if (x->log_failed)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    size_t j = 0;
    for (size_t k = 0; k <= n; k++) {
        x->first[k] = (uint32_t)j;
        while (j < x->n_log && x->log_at[j] == k)
            j++;
    }
    for (size_t k = 0; k < n; k++) {
        struct pes_reuse *e = t->stack_engine[b->stream[lo + k]];
        uint64_t d;
        for (uint32_t r = x->first[k]; r < x->first[k + 1]; r++) {
            if (pes_reuse_peek_key(e, x->log_use[r], &d) < 0)
                goto engine;
            if (d != PES_REUSE_COLD)
                t->stack[pes_rt_bin(d)] += 1;
        }
        if (pes_reuse_push_key(e, b->addr[lo + k], &d) < 0)
            goto engine;
        continue;
    engine:
        *err = *pes_reuse_error(e);
        return -1;
    }
    return 0;
}

int replay_truth_batch(struct replay_truth *t, const struct pes_batch *b, struct pes_error *err)
{
    for (size_t lo = 0; lo < b->n; lo += CHUNK)
        if (chunk(t, b, lo, b->n - lo < CHUNK ? b->n - lo : CHUNK, err) < 0)
            return -1;
    return 0;
}

uint32_t replay_truth_track(const struct pes_collect_settings *sampled)
{
    return sampled->spatial ? PES_RT_TRACK_ADDRESS | PES_RT_TRACK_LINE : PES_RT_TRACK_ADDRESS;
}

int replay_truth_begin(const struct pes_stream_info *si, uint32_t track, struct replay_truth *t,
                       struct pes_error *err)
{
    memset(t, 0, sizeof *t);
    const struct pes_trace_info *info = si->header;
    if (!info)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "%s: --compare needs a full pes trace, not a text trace", si->path);
    uint32_t n = si->n_streams;
    if (n == 0 || n > PES_RT_MAX_THREADS)
        return pes_error_set(err, PES_ERR_ARG, 0, "%s: %u threads; --compare supports 1..%u",
                             si->path, n, PES_RT_MAX_THREADS);
    replay_execution_of(&t->exec, info);
    t->n_threads = n;
    if (!(t->stack_engine = calloc(n, sizeof *t->stack_engine)) ||
        !(t->scratch = calloc(1, sizeof *t->scratch)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    struct pes_rt_config rc_cfg = {.n_threads = n,
                                   .thread_socket = si->stream_cache,
                                   .line = si->line,
                                   .track = track,
                                   .intra_reuse = log_reuse,
                                   .ctx = t->scratch};
    struct pes_sim_config sc = {
        .machine = si->machine, .n_cores = n, .core_socket = si->stream_cache, .n_threads = n};
    struct pes_reuse_options ro = {.granule = 1};
    if (!(t->rt = pes_rt_create(&rc_cfg, err)) || !(t->sim = pes_sim_create(&sc, err)))
        goto fail;
    for (uint32_t i = 0; i < n; i++)
        if (!(t->stack_engine[i] = pes_reuse_create(&ro, err)))
            goto fail;
    return 0;
fail:
    replay_truth_free(t);
    return -1;
}

int replay_truth_end(struct replay_truth *t, const struct pes_stream_info *si,
                     struct pes_error *err)
{
    if (!(t->site_key = malloc(((size_t)t->max_site + 1) * sizeof *t->site_key)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t i = 0; i < t->max_site; i++)
        t->site_key[i] = replay_site_line_key(si->site(si->site_ctx, i), i);
    t->site_key[t->max_site] = replay_site_line_key(NULL, UINT32_MAX);
    return 0;
}

void replay_truth_free(struct replay_truth *t)
{
    if (t->rt)
        pes_rt_destroy(t->rt);
    if (t->sim)
        pes_sim_destroy(t->sim);
    if (t->stack_engine)
        for (uint32_t i = 0; i < t->n_threads; i++)
            pes_reuse_destroy(t->stack_engine[i]);
    free(t->stack_engine);
    if (t->scratch)
        free(t->scratch->log_at), free(t->scratch->log_use);
    free(t->scratch);
    free(t->site_key);
    t->stack_engine = NULL;
    t->scratch = NULL;
    t->site_key = NULL;
    t->rt = NULL;
    t->sim = NULL;
}
