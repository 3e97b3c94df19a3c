/*
 * accuracy_truth.c — ground truth of a full trace for --compare: ReuseTracker's
 * reuse / invalidation definitions (rt_truth.h), the cache + MESI simulation
 * with one core per thread (mesi.h: coherence misses, invalidations caused,
 * communication matrices) and the exact per-thread stack distances of every
 * reuse at the access's start address (reuse_distance.h), in one pass.
 */
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "replay.h"
#include "reuse_distance.h"

struct truth_ctx {
    struct replay_truth *t;
    struct pes_reuse **stack;   /* per thread */
};

static int on_access(struct truth_ctx *c, const struct pes_batch *b, size_t i, struct pes_error *err) {
    struct replay_truth *t = c->t;
    uint32_t thread = b->stream[i], site = b->site[i];
    if (thread >= t->n_threads)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "record of thread %u, but the trace announces only %u threads",
                             thread, t->n_threads);
    t->accesses++;
    if (site != UINT32_MAX && site + 1 > t->max_site) t->max_site = site + 1;
    int writes = (b->rw[i] & PES_BATCH_WRITE) != 0;
    if (pes_rt_access(t->rt, thread, b->addr[i], writes, site, err) < 0) return -1;
    struct pes_sim_access sa = {
        .addr = b->addr[i], .size = b->size[i], .core = thread, .thread = thread,
        .site = site, .is_read = b->rw[i] & PES_BATCH_READ, .is_write = (uint8_t)writes,
    };
    if (pes_sim_access(t->sim, &sa, err) < 0) return -1;
    uint64_t d;
    if (pes_reuse_push(c->stack[thread], b->addr[i], &d) < 0) {
        *err = *pes_reuse_error(c->stack[thread]);
        return -1;
    }
    if (d != PES_REUSE_COLD) t->stack[pes_rt_bin(d)] += 1;
    return 0;
}

/* Every access of the batch, in order (the truth needs no BB entries). */
static int on_batch(void *p, const struct pes_batch *b, struct pes_error *err) {
    for (size_t i = 0; i < b->n; i++)
        if (on_access(p, b, i, err) < 0) return -1;
    return 0;
}

int replay_truth_analyze(const char *path, const struct pes_machine *m, uint32_t sockets, uint32_t line,
                         struct replay_truth *t, struct pes_error *err) {
    memset(t, 0, sizeof *t);
    struct replay_input *in = replay_input_open(path, err);
    if (!in) return -1;
    int rc = -1;
    uint32_t *socket = NULL;
    struct truth_ctx c = {.t = t};
    const struct pes_trace_info *info = replay_input_info(in);
    if (!info) {
        err->code = PES_ERR_FORMAT;
        snprintf(err->message, sizeof err->message, "%s: --compare needs a full pes trace, not a text trace", path);
        goto out;
    }
    if (replay_input_truncation(in)) snprintf(t->truncation, sizeof t->truncation, "%s", replay_input_truncation(in));
    const char *skipped;
    if ((t->skipped_blocks = replay_input_skipped(in, &skipped))) snprintf(t->skipped, sizeof t->skipped, "%s", skipped);
    t->pid = info->pid;
    t->start_ticks = info->start_ticks;
    t->ticks_per_second = info->ticks_per_second;
    snprintf(t->command, sizeof t->command, "%s", info->command ? info->command : "");
    snprintf(t->hostname, sizeof t->hostname, "%s", info->hostname ? info->hostname : "");
    uint32_t n = replay_input_threads(in);
    if (n == 0 || n > PES_RT_MAX_THREADS) {
        err->code = PES_ERR_ARG;
        snprintf(err->message, sizeof err->message, "%s: %u threads; --compare supports 1..%u", path, n,
                 PES_RT_MAX_THREADS);
        goto out;
    }
    t->n_threads = n;
    if (sockets == 0) sockets = 1;
    if (sockets > n) sockets = n;
    socket = calloc(n, sizeof *socket);
    c.stack = calloc(n, sizeof *c.stack);
    if (!socket || !c.stack) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    /* compact placement, as pes-replay places recorded threads (stream.h) */
    for (uint32_t i = 0; i < n; i++) socket[i] = pes_stream_compact_cache(i, n, sockets);
    if (line == 0 || (line & (line - 1))) line = 64;
    struct pes_rt_config rc_cfg = {.n_threads = n, .thread_socket = socket, .line = line};
    if (!(t->rt = pes_rt_create(&rc_cfg, err))) goto out;
    struct pes_sim_config sc = {.machine = m, .n_cores = n, .core_socket = socket, .n_threads = n};
    if (!(t->sim = pes_sim_create(&sc, err))) goto out;
    struct pes_reuse_options ro = {.granule = 1};
    for (uint32_t i = 0; i < n; i++)
        if (!(c.stack[i] = pes_reuse_create(&ro, err))) goto out;
    replay_input_set_range_cap(in, replay_range_cap(line, m->level[0].line));
    struct pes_batch_sink sink = {.batch = on_batch, .ctx = &c};
    if ((rc = replay_input_run(in, &sink, err)) < 0) goto out;
    replay_input_clipped(in, t->clipped, sizeof t->clipped);
    rc = -1;
    if (!(t->site_key = malloc(((size_t)t->max_site + 1) * sizeof *t->site_key))) {
        err->code = PES_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < t->max_site; i++) t->site_key[i] = replay_site_line_key(replay_input_site(in, i), i);
    t->site_key[t->max_site] = replay_site_line_key(NULL, UINT32_MAX);
    rc = 0;
out:
    if (c.stack)
        for (uint32_t i = 0; i < t->n_threads; i++) pes_reuse_destroy(c.stack[i]);
    free(c.stack);
    free(socket);
    replay_input_close(in);
    if (rc < 0) replay_truth_free(t);
    return rc;
}

void replay_truth_free(struct replay_truth *t) {
    if (t->rt) pes_rt_destroy(t->rt);
    if (t->sim) pes_sim_destroy(t->sim);
    free(t->site_key);
    t->site_key = NULL;
    t->rt = NULL;
    t->sim = NULL;
}
