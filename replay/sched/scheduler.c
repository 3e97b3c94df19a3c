/*
 * scheduler.c — the replay's workers (scheduler.h).
 *
 * One lock guards the queues. A strand with queued tasks and none running
 * is on the ready list (FIFO, so strands take turns); a thread takes the
 * first ready strand's first task, runs it without the lock, and puts the
 * strand back at the tail if more tasks wait. Workers sleep on work_cv
 * (signalled once per submitted task), waiters on done_cv (broadcast when a
 * task ends or is submitted while someone waits).
 */
#include "scheduler.h"

#include <pthread.h>
#include <stdlib.h>

#include "cpu_account.h"

struct task {
    struct task *next;
    void (*fn)(void *arg);
    void *arg;
};

struct pes_strand {
    struct pes_sched *s;
    struct task *head, *tail;
    struct pes_strand *next_ready;
    int busy;   /* a thread runs one of its tasks */
    int ready;  /* on a ready list */
    int urgent; /* on the urgent one */
    uint64_t submitted, finished;
    int stage;
    double cpu_s; /* --stats: its tasks' CPU, without tasks they ran while waiting */
};

/* --stats: the task a thread runs, to take the tasks it runs while waiting
 * out of its strand's CPU. */
static _Thread_local double nested_s;

struct pes_sched {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    struct pes_strand *ready_head, *ready_tail; /* urgent strands first, then the others */
    struct pes_strand *urgent_tail;             /* the last urgent one on the list, or NULL */
    struct task *free_tasks;
    pthread_t *threads;
    uint32_t workers; /* asked for */
    uint32_t n_threads, n_started;
    uint32_t waiters;
    int stop;
    int st_idle;
    int start_failed; /* a worker could not start: the others (or the waiters) run the tasks */
};

/* Workers' stacks: tasks run the replay's analyses, no deep recursion; the
 * default 8 MiB per thread would count against a ulimit -v for nothing. */
#define WORKER_STACK (2u << 20)

/* Under mu: the strand joins the ready list if it has work and none runs:
 * at the tail, or an urgent one after the urgent ones. */
static void make_ready(struct pes_sched *s, struct pes_strand *st)
{
    if (st->ready || st->busy || !st->head)
        return;
    st->ready = 1;
    if (st->urgent) {
        struct pes_strand **at = s->urgent_tail ? &s->urgent_tail->next_ready : &s->ready_head;
        st->next_ready = *at;
        *at = st;
        if (s->ready_tail == s->urgent_tail)
            s->ready_tail = st;
        s->urgent_tail = st;
        return;
    }
    st->next_ready = NULL;
    if (s->ready_tail)
        s->ready_tail->next_ready = st;
    else
        s->ready_head = st;
    s->ready_tail = st;
}

/* Under mu (released while the task runs): one ready task on this thread
 * (only_urgent: only an urgent one). 1 if one ran, 0 if none was ready. */
static int run_one(struct pes_sched *s, int only_urgent)
{
    struct pes_strand *st = s->ready_head;
    if (!st || (only_urgent && !st->urgent))
        return 0;
    s->ready_head = st->next_ready;
    if (!s->ready_head)
        s->ready_tail = NULL;
    if (s->urgent_tail == st)
        s->urgent_tail = NULL;
    st->ready = 0;
    struct task *t = st->head;
    st->head = t->next;
    if (!st->head)
        st->tail = NULL;
    st->busy = 1;
    pthread_mutex_unlock(&s->mu);
    int outer = pes_cpu_task_begin();
    int was = pes_cpu_switch(st->stage);
    int timed = pes_cpu_enabled();
    double t0 = timed ? pes_cpu_thread_seconds() : 0, enclosing = nested_s;
    nested_s = 0; /* what this task runs while it waits */
    t->fn(t->arg);
    double took = timed ? pes_cpu_thread_seconds() - t0 : 0, own = took - nested_s;
    nested_s = enclosing + took;
    pes_cpu_switch(was);
    pes_cpu_task_end(outer);
    pthread_mutex_lock(&s->mu);
    st->cpu_s += own;
    st->busy = 0;
    st->finished++;
    t->next = s->free_tasks;
    s->free_tasks = t;
    make_ready(s, st);
    if (st->ready)
        pthread_cond_signal(&s->work_cv);
    if (s->waiters)
        pthread_cond_broadcast(&s->done_cv);
    return 1;
}

static void *worker_main(void *arg)
{
    struct pes_sched *s = arg;
    pthread_mutex_lock(&s->mu);
    pes_cpu_thread_begin("worker", s->n_started++, 0, s->st_idle);
    while (!s->stop || s->ready_head)
        if (!run_one(s, 0))
            pthread_cond_wait(&s->work_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    pes_cpu_thread_end();
    return NULL;
}

struct pes_sched *pes_sched_create(uint32_t workers, struct pes_error *err)
{
    struct pes_sched *s = calloc(1, sizeof *s);
    if (!s || (workers && !(s->threads = calloc(workers, sizeof *s->threads)))) {
        free(s);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    s->workers = workers;
    s->st_idle = pes_cpu_stage("worker waits", 0);
    return s;
}

/* Under mu: the workers start with the first task (a replay whose stages
 * submit none has no threads). One that cannot start leaves its share to
 * the others, or to the threads that wait: slower, never wrong. */
static void start_workers(struct pes_sched *s)
{
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        pthread_attr_setstacksize(&attr, WORKER_STACK);
    while (s->n_threads < s->workers && !s->start_failed) {
        if (pthread_create(&s->threads[s->n_threads], have_attr ? &attr : NULL, worker_main, s) !=
            0)
            s->start_failed = 1;
        else
            s->n_threads++;
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
}

void pes_sched_destroy(struct pes_sched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    while (run_one(s, 0)) {
    }
    s->stop = 1;
    pthread_cond_broadcast(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    for (uint32_t i = 0; i < s->n_threads; i++)
        pthread_join(s->threads[i], NULL);
    for (struct task *t = s->free_tasks, *nx; t; t = nx) {
        nx = t->next;
        free(t);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s->threads);
    free(s);
}

uint32_t pes_sched_workers(const struct pes_sched *s)
{
    return s ? s->workers : 0;
}

struct pes_strand *pes_strand_create(struct pes_sched *s, int stage)
{
    struct pes_strand *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->s = s;
    st->stage = stage;
    return st;
}

void pes_strand_destroy(struct pes_strand *st)
{
    if (!st)
        return;
    pes_strand_wait(st);
    pes_cpu_chain(st->stage, st->cpu_s);
    free(st);
}

int pes_sched_submit_many(struct pes_strand *const *st, void (*fn)(void *arg), void *const *args,
                          uint32_t n, struct pes_error *err)
{
    if (n == 0)
        return 0;
    struct pes_sched *s = st[0]->s;
    pthread_mutex_lock(&s->mu);
    struct task *got = NULL; /* n nodes first, so that a failure queues none */
    for (uint32_t i = 0; i < n; i++) {
        struct task *t = s->free_tasks;
        if (t)
            s->free_tasks = t->next;
        else if (!(t = malloc(sizeof *t))) {
            while (got) {
                struct task *nx = got->next;
                got->next = s->free_tasks;
                s->free_tasks = got;
                got = nx;
            }
            pthread_mutex_unlock(&s->mu);
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        }
        t->next = got;
        got = t;
    }
    if (s->n_threads < s->workers && !s->start_failed)
        start_workers(s);
    uint32_t ready = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct task *t = got;
        got = got->next;
        *t = (struct task){.fn = fn, .arg = args[i]};
        struct pes_strand *x = st[i];
        if (x->tail)
            x->tail->next = t;
        else
            x->head = t;
        x->tail = t;
        x->submitted++;
        make_ready(s, x);
        ready += x->ready;
    }
    if (ready > 1)
        pthread_cond_broadcast(&s->work_cv);
    else if (ready)
        pthread_cond_signal(&s->work_cv);
    if (s->waiters)
        pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int pes_sched_submit(struct pes_strand *st, void (*fn)(void *arg), void *arg, struct pes_error *err)
{
    return pes_sched_submit_many(&st, fn, &arg, 1, err);
}

static void wait_helping(struct pes_sched *s, int (*done)(void *ctx), void *ctx, int only_urgent)
{
    pthread_mutex_lock(&s->mu);
    while (!done(ctx))
        if (!run_one(s, only_urgent)) {
            s->waiters++;
            pthread_cond_wait(&s->done_cv, &s->mu);
            s->waiters--;
        }
    pthread_mutex_unlock(&s->mu);
}

void pes_sched_wait(struct pes_sched *s, int (*done)(void *ctx), void *ctx)
{
    wait_helping(s, done, ctx, 0);
}

/* With no workers nothing else would run the awaited tasks: help with all. */
void pes_sched_wait_urgent(struct pes_sched *s, int (*done)(void *ctx), void *ctx)
{
    wait_helping(s, done, ctx, s->workers != 0);
}

void pes_strand_set_urgent(struct pes_strand *st)
{
    st->urgent = 1;
}

static int strand_idle(void *ctx)
{
    const struct pes_strand *st = ctx;
    return st->finished == st->submitted;
}

void pes_strand_wait(struct pes_strand *st)
{
    pes_sched_wait(st->s, strand_idle, st);
}
