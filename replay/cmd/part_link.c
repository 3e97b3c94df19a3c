/*
 * part_link.c — pes-replay --parts: parts on threads, linked in process
 * (part_link.h). The messages are pes-replay-mpi's (pes_replay_mpi.c): part
 * k > 0 hands part 0 its windows in order, then its part's counts, then its
 * outcome; part 0 takes them in the same order. A queue per part, unbounded:
 * a part never waits for part 0, which takes the others' windows only after
 * its own part (the windows are a part each, so a queue holds one summary).
 */
#include "part_link.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"

enum kind { MSG_WINDOW, MSG_PART, MSG_DONE };

struct msg {
    struct msg *next;
    enum kind kind;
    uint64_t window; /* MSG_WINDOW */
    void *buf;       /* MSG_WINDOW, MSG_PART: the receiver's once taken */
    size_t len;
    struct pes_error err; /* MSG_DONE: code 0, or the part's failure */
    int failed;
};

/* One end of the link: a part's hooks point here. */
struct end {
    struct replay_part_link *link;
    uint32_t part;
    struct msg *head, *tail; /* part > 0: its messages to part 0 */
    struct msg outcome;      /* its MSG_DONE: handed over even without memory */
    int done;                /* part 0 took its outcome */
    int started;             /* its thread runs (replay_parts_run) */
    pthread_t thread;
};

struct replay_part_link {
    uint32_t parts;
    _Atomic uint64_t records; /* read by all parts so far (part 0's progress line) */
    pthread_mutex_t mu;
    pthread_cond_t handed; /* a message was handed over */
    int stop;              /* part 0 failed: the others stop at their next batch */
    struct end *end;       /* [parts] */
    struct pes_profiles_split *split;
    struct replay_hooks *hooks;
    /* replay_parts_run */
    struct replay_options o; /* the others' options: no workers */
    const struct pes_machine *machine;
};

/* ------------------------------------------------------------ parts > 0 */

static int hand_over(struct end *e, struct msg m, struct pes_error *err)
{
    struct replay_part_link *l = e->link;
    struct msg *n = m.kind == MSG_DONE ? &e->outcome : malloc(sizeof *n);
    pthread_mutex_lock(&l->mu);
    int stop = l->stop && m.kind != MSG_DONE; /* the outcome always goes */
    if (n && !stop) {
        *n = m;
        n->next = NULL;
        if (e->tail)
            e->tail->next = n;
        else
            e->head = n;
        e->tail = n;
        pthread_cond_broadcast(&l->handed);
    }
    pthread_mutex_unlock(&l->mu);
    if (n && !stop)
        return 0;
    if (n != &e->outcome)
        free(n);
    free(m.buf);
    return stop ? pes_error_set(err, PES_ERR_ARG, 0, "stopped: part 0 failed")
                : pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
}

static int send_window(void *ctx, uint64_t w, void *buf, size_t len, struct pes_error *err)
{
    return hand_over(ctx, (struct msg){.kind = MSG_WINDOW, .window = w, .buf = buf, .len = len},
                     err);
}

static int send_part(void *ctx, void *buf, size_t len, struct pes_error *err)
{
    return hand_over(ctx, (struct msg){.kind = MSG_PART, .buf = buf, .len = len}, err);
}

static uint64_t records(void *ctx, uint64_t n)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    return atomic_fetch_add_explicit(&l->records, n, memory_order_relaxed) + n;
}

/* Every batch: has part 0 given up? */
static int progress(void *ctx, struct pes_error *err)
{
    struct end *e = ctx;
    pthread_mutex_lock(&e->link->mu);
    int stop = e->link->stop;
    pthread_mutex_unlock(&e->link->mu);
    return stop ? pes_error_set(err, PES_ERR_ARG, 0, "stopped: part 0 failed") : 0;
}

/* The outcome goes to part 0; the verdict is part 0's. */
static int agree_other(void *ctx, int rc, struct pes_error *err)
{
    struct msg m = {.kind = MSG_DONE, .failed = rc < 0};
    if (rc < 0)
        m.err = *err;
    hand_over(ctx, m, err); /* cannot fail */
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ part 0 */

/* The next message of part `from`, left in its queue (the caller pops it). */
static struct msg *peek(struct replay_part_link *l, uint32_t from)
{
    struct end *e = &l->end[from];
    while (!e->head)
        pthread_cond_wait(&l->handed, &l->mu);
    return e->head;
}

static struct msg pop(struct replay_part_link *l, uint32_t from)
{
    struct end *e = &l->end[from];
    struct msg *n = e->head, m = *n;
    if (!(e->head = n->next))
        e->tail = NULL;
    if (n != &e->outcome)
        free(n);
    if (m.kind == MSG_DONE)
        e->done = 1;
    return m;
}

/* A part's outcome met where a window or its counts were due. */
static int ended(const struct msg *m, uint32_t from, const char *before, struct pes_error *err)
{
    if (m->failed)
        return replay_part_failure(err, "part", from, m->err.code, m->err.message);
    return pes_error_set(err, PES_ERR_ARG, 0, "part %u ended before %s", from, before);
}

static int recv_window(void *ctx, uint64_t w, uint32_t from, void **buf, size_t *len,
                       struct pes_error *err)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    pthread_mutex_lock(&l->mu);
    if (l->end[from].done) {
        pthread_mutex_unlock(&l->mu);
        return pes_error_set(err, PES_ERR_ARG, 0, "part %u has ended; window %llu is missing", from,
                             (unsigned long long)w);
    }
    struct msg *next = peek(l, from);
    if (next->kind == MSG_PART) { /* from's part had w windows (left for recv_part) */
        pthread_mutex_unlock(&l->mu);
        return 1;
    }
    struct msg m = pop(l, from);
    pthread_mutex_unlock(&l->mu);
    if (m.kind == MSG_DONE) {
        char before[48];
        snprintf(before, sizeof before, "window %llu", (unsigned long long)w);
        return ended(&m, from, before, err);
    }
    if (m.window != w) {
        free(m.buf);
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "part %u sent window %llu where window %llu was due", from,
                             (unsigned long long)m.window, (unsigned long long)w);
    }
    *buf = m.buf;
    *len = m.len;
    return 0;
}

static int recv_part(void *ctx, uint32_t from, void **buf, size_t *len, struct pes_error *err)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    pthread_mutex_lock(&l->mu);
    if (l->end[from].done) {
        pthread_mutex_unlock(&l->mu);
        return pes_error_set(err, PES_ERR_ARG, 0, "part %u has ended; its part is missing", from);
    }
    if (peek(l, from)->kind == MSG_WINDOW) { /* left for agree_root to free */
        pthread_mutex_unlock(&l->mu);
        return pes_error_set(err, PES_ERR_ARG, 0, "part %u sent a window after its part's counts",
                             from);
    }
    struct msg m = pop(l, from);
    pthread_mutex_unlock(&l->mu);
    if (m.kind == MSG_DONE)
        return ended(&m, from, "its part's counts", err);
    *buf = m.buf;
    *len = m.len;
    return 0;
}

/* Every other part's outcome; after a failure, what they still hand over
 * is freed, so that none of them waits for ever (none does: they never
 * wait for part 0). Only the parts whose threads run. */
static int agree_root(void *ctx, int rc, struct pes_error *err)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    pthread_mutex_lock(&l->mu);
    if (rc < 0) {
        l->stop = 1;
        pthread_cond_broadcast(&l->handed);
    }
    for (uint32_t k = 1; k < l->parts; k++)
        while (l->end[k].started && !l->end[k].done) {
            peek(l, k);
            struct msg m = pop(l, k);
            free(m.buf);
            if (rc < 0)
                continue;
            if (m.kind == MSG_DONE && m.failed) {
                replay_part_failure(err, "part", k, m.err.code, m.err.message);
                rc = -1;
            } else if (m.kind == MSG_PART) {
                rc = pes_error_set(err, PES_ERR_ARG, 0, "part %u sent its part's counts twice", k);
            } else if (m.kind == MSG_WINDOW) {
                rc = pes_error_set(err, PES_ERR_ARG, 0,
                                   "part %u sent window %llu after the end of the stream", k,
                                   (unsigned long long)m.window);
            }
        }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ------------------------------------------------------------ the link */

struct replay_part_link *replay_part_link_create(uint32_t parts, uint64_t window,
                                                 struct pes_error *err)
{
    struct replay_part_link *l = calloc(1, sizeof *l);
    if (l) {
        l->parts = parts;
        l->end = calloc(parts, sizeof *l->end);
        l->split = calloc(parts, sizeof *l->split);
        l->hooks = calloc(parts, sizeof *l->hooks);
    }
    if (!l || !l->end || !l->split || !l->hooks || parts < 2) {
        if (l)
            free(l->end), free(l->split), free(l->hooks);
        free(l);
        if (parts < 2)
            pes_error_set(err, PES_ERR_ARG, 0, "parts: %u, at least 2", parts);
        else
            pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->handed, NULL);
    for (uint32_t k = 0; k < parts; k++) {
        struct end *e = &l->end[k];
        e->link = l;
        e->part = k;
        l->split[k] =
            (struct pes_profiles_split){.rank = k, .ranks = parts, .window = window, .ctx = e};
        struct replay_hooks *h = &l->hooks[k];
        *h = (struct replay_hooks){.split = &l->split[k],
                                   .no_report = k != 0,
                                   .part = k,
                                   .parts = parts,
                                   .threads = 1,
                                   .records = records,
                                   .ctx = e};
        if (k == 0) {
            l->split[k].recv = recv_window;
            h->agree = agree_root;
            h->part_recv = recv_part;
        } else {
            l->split[k].send = send_window;
            h->agree = agree_other;
            h->progress = progress;
            h->part_send = send_part;
        }
    }
    return l;
}

void replay_part_link_destroy(struct replay_part_link *l)
{
    if (!l)
        return;
    for (uint32_t k = 0; k < l->parts; k++)
        while (l->end[k].head) {
            struct msg m = pop(l, k);
            free(m.buf);
        }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->handed);
    free(l->end);
    free(l->split);
    free(l->hooks);
    free(l);
}

const struct replay_hooks *replay_part_link_hooks(struct replay_part_link *l, uint32_t k)
{
    return k < l->parts ? &l->hooks[k] : NULL;
}

/* ------------------------------------------------------------ pes-replay --parts */

static void *part_thread(void *arg)
{
    struct end *e = arg;
    replay_message_thread_quiet(1); /* part 0 speaks for all */
    replay_full(&e->link->o, e->link->machine, &e->link->hooks[e->part]);
    return NULL;
}

/* Part 0 reads in parts: the others start. A thread that cannot start
 * fails the replay (part 0 then stops those that did). */
static int parts_begin(void *ctx, struct pes_error *err)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    for (uint32_t k = 1; k < l->parts; k++) {
        pthread_mutex_lock(&l->mu);
        l->end[k].started = 1;
        pthread_mutex_unlock(&l->mu);
        if (pthread_create(&l->end[k].thread, NULL, part_thread, &l->end[k]) != 0) {
            pthread_mutex_lock(&l->mu);
            l->end[k].started = 0;
            pthread_mutex_unlock(&l->mu);
            return pes_error_set(err, PES_ERR_NOMEM, 0, "part %u: cannot start its thread", k);
        }
    }
    return 0;
}

static void parts_end(void *ctx)
{
    struct replay_part_link *l = ((struct end *)ctx)->link;
    for (uint32_t k = 1; k < l->parts; k++)
        if (l->end[k].started) {
            pthread_join(l->end[k].thread, NULL);
            l->end[k].started = 0;
        }
}

int replay_parts_run(const struct replay_options *o, const struct pes_machine *m, uint32_t parts)
{
    struct pes_error err = {0};
    struct replay_part_link *l = replay_part_link_create(parts, REPLAY_MPI_WINDOW_MAX, &err);
    if (!l)
        return replay_fail(&err);
    l->o = *o;
    l->o.knobs.jobs = 1;
    l->machine = m;
    l->hooks[0].parts_begin = parts_begin;
    l->hooks[0].parts_end = parts_end;
    int rc = replay_full(o, m, &l->hooks[0]);
    parts_end(&l->end[0]); /* already, unless part 0 failed before its report */
    replay_part_link_destroy(l);
    return rc;
}
