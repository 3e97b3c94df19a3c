/* The replay's scheduler (replay/sched/scheduler.h): a strand's tasks run
 * one at a time in submission order on any of 0..8 workers, tasks of
 * different strands at once; with no worker everything runs on the thread
 * that waits, in order; urgent strands go first; tasks that wait for other
 * tasks (nested) finish with any number of workers; and the speed-up bound
 * of --stats (cpu_account.h) on hand-computed totals. Also run under TSan
 * (label concurrent). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpu_account.h"
#include "scheduler.h"

enum { STRANDS = 8, TASKS = 400 };

struct strand_log {
    atomic_int running; /* tasks of this strand running now */
    atomic_int overlap; /* times two ran at once */
    uint32_t next;      /* the next sequence number expected (strand tasks only) */
    uint32_t bad_order;
};

struct item {
    struct strand_log *log;
    uint32_t seq;
};

static void ordered_task(void *arg)
{
    struct item *it = arg;
    struct strand_log *l = it->log;
    if (atomic_fetch_add(&l->running, 1) != 0)
        atomic_fetch_add(&l->overlap, 1);
    if (it->seq != l->next)
        l->bad_order++;
    l->next = it->seq + 1;
    volatile uint64_t x = 0; /* a little work, so that tasks overlap across strands */
    for (int i = 0; i < 2000; i++)
        x += (uint64_t)i * it->seq;
    atomic_fetch_sub(&l->running, 1);
}

static void strands_keep_order(void **st)
{
    (void)st;
    static const uint32_t workers[] = {0, 1, 2, 8};
    for (size_t w = 0; w < sizeof workers / sizeof *workers; w++) {
        struct pes_error err = {0};
        struct pes_sched *s = pes_sched_create(workers[w], &err);
        assert_non_null(s);
        struct pes_strand *strand[STRANDS];
        struct strand_log log[STRANDS];
        struct item *items = calloc(STRANDS * TASKS, sizeof *items);
        assert_non_null(items);
        memset(log, 0, sizeof log);
        for (int i = 0; i < STRANDS; i++)
            assert_non_null(strand[i] = pes_strand_create(s, -1));
        for (uint32_t k = 0; k < TASKS; k++)
            for (int i = 0; i < STRANDS; i++) {
                struct item *it = &items[i * TASKS + k];
                *it = (struct item){.log = &log[i], .seq = k};
                assert_int_equal(pes_sched_submit(strand[i], ordered_task, it, &err), 0);
            }
        for (int i = 0; i < STRANDS; i++)
            pes_strand_destroy(strand[i]); /* waits */
        for (int i = 0; i < STRANDS; i++) {
            assert_int_equal(log[i].next, TASKS);
            assert_int_equal(log[i].bad_order, 0);
            assert_int_equal(atomic_load(&log[i].overlap), 0);
        }
        free(items);
        pes_sched_destroy(s);
    }
}

/* ------------------------------------------------------------ no workers */

struct trail {
    pthread_t who[16];
    char what[16];
    int n;
};

struct mark {
    struct trail *t;
    char c;
};

static void mark_task(void *arg)
{
    struct mark *m = arg;
    m->t->who[m->t->n] = pthread_self();
    m->t->what[m->t->n++] = m->c;
}

static int trail_full(void *ctx)
{
    return ((struct trail *)ctx)->n == 5;
}

static void no_workers_run_on_the_waiter_urgent_first(void **st)
{
    (void)st;
    struct pes_error err = {0};
    struct pes_sched *s = pes_sched_create(0, &err);
    assert_non_null(s);
    struct pes_strand *a = pes_strand_create(s, -1), *b = pes_strand_create(s, -1),
                      *u = pes_strand_create(s, -1);
    assert_true(a && b && u);
    pes_strand_set_urgent(u);
    struct trail t = {.n = 0};
    struct mark m[5] = {{&t, 'a'}, {&t, 'b'}, {&t, 'A'}, {&t, 'U'}, {&t, 'V'}};
    assert_int_equal(pes_sched_submit(a, mark_task, &m[0], &err), 0);
    assert_int_equal(pes_sched_submit(b, mark_task, &m[1], &err), 0);
    assert_int_equal(pes_sched_submit(a, mark_task, &m[2], &err), 0);
    assert_int_equal(pes_sched_submit(u, mark_task, &m[3], &err), 0);
    assert_int_equal(pes_sched_submit(u, mark_task, &m[4], &err), 0);
    assert_int_equal(t.n, 0); /* nothing runs until someone waits */
    pes_sched_wait(s, trail_full, &t);
    /* the urgent strand first (its second task after its first), then the
     * strands in turn: a, b, then a's second */
    assert_memory_equal(t.what, "UVabA", 5);
    for (int i = 0; i < 5; i++)
        assert_true(pthread_equal(t.who[i], pthread_self()));
    pes_strand_destroy(a);
    pes_strand_destroy(b);
    pes_strand_destroy(u);
    pes_sched_destroy(s);
}

/* ------------------------------------------------------------ nested */

struct nest {
    struct pes_sched *s;
    struct pes_strand *inner;
    atomic_int done;
    atomic_int *total;
};

static void leaf(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* A task that submits 50 tasks to a strand of its own and waits for them,
 * as a configuration waits for its simulation's partitions. */
static void outer(void *arg)
{
    struct nest *n = arg;
    struct pes_error err = {0};
    for (int i = 0; i < 50; i++) {
        atomic_fetch_add(&n->done, 1);
        assert_int_equal(pes_sched_submit(n->inner, leaf, n->total, &err), 0);
    }
    pes_strand_wait(n->inner);
}

static void nested_waits_finish(void **st)
{
    (void)st;
    for (uint32_t w = 0; w <= 3; w++) {
        struct pes_error err = {0};
        struct pes_sched *s = pes_sched_create(w, &err);
        assert_non_null(s);
        atomic_int total = 0;
        struct nest n[6];
        struct pes_strand *outers[6];
        for (int i = 0; i < 6; i++) {
            n[i] = (struct nest){.s = s, .inner = pes_strand_create(s, -1), .total = &total};
            assert_non_null(n[i].inner);
            assert_non_null(outers[i] = pes_strand_create(s, -1));
            assert_int_equal(pes_sched_submit(outers[i], outer, &n[i], &err), 0);
        }
        for (int i = 0; i < 6; i++)
            pes_strand_destroy(outers[i]);
        assert_int_equal(atomic_load(&total), 6 * 50);
        for (int i = 0; i < 6; i++)
            pes_strand_destroy(n[i].inner);
        pes_sched_destroy(s);
    }
}

/* ------------------------------------------------------------ the bound */

static void speedup_bound(void **st)
{
    (void)st;
    /* T = 100 s, S = 5 s: Amdahl 100 / (5 + 95 / 16) = 9.1429 at 16, 20 at most */
    struct pes_cpu_totals t = {.total_s = 100, .serial_s = 5};
    assert_float_equal(pes_cpu_amdahl(&t, 16), 100 / (5 + 95.0 / 16), 1e-9);
    assert_float_equal(pes_cpu_amdahl(&t, 1), 1, 1e-12);
    assert_float_equal(pes_cpu_amdahl(&t, 1e12), 20, 1e-6);
    /* a strand of 20 s: no faster than 20 s at any n (5x), Amdahl below that */
    t.chain_s = 20;
    assert_float_equal(pes_cpu_amdahl(&t, 16), 5, 1e-9);
    assert_float_equal(pes_cpu_amdahl(&t, 2), 100 / (5 + 95.0 / 2), 1e-9);
    struct pes_cpu_totals none = {0};
    assert_float_equal(pes_cpu_amdahl(&none, 16), 1, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strands_keep_order),
        cmocka_unit_test(no_workers_run_on_the_waiter_urgent_first),
        cmocka_unit_test(nested_waits_finish),
        cmocka_unit_test(speedup_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
