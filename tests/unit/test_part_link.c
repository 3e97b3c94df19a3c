/*
 * test_part_link.c — pes-replay --parts' in-process link (part_link.h): the
 * windows and counts of parts 1..P-1 reach part 0 in order, by pointer,
 * from threads that never wait for it; a failing part's error reaches part
 * 0 in pes-replay's words (the input's damage) or named by its part; when
 * part 0 fails the others are stopped at their next batch and what they
 * still hand over is freed; a window out of order is an error. Run under
 * TSan (label concurrent).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "part_link.h"

enum { PARTS = 4, WINDOWS = 50 };

/* What part k does on its thread: WINDOWS windows (each a malloc'd u64
 * k * 1000 + w), its counts (k), then its outcome; `fail_at`: at that
 * window it fails instead with `code`; `skip`: it leaves out window 3;
 * `until_stopped`: it keeps sending until part 0 stops it. */
struct sender {
    const struct replay_hooks *h;
    uint32_t k;
    int fail_at, code, skip, until_stopped;
    int stopped; /* progress said stop */
};

static void *word(uint64_t x)
{
    uint64_t *p = malloc(sizeof *p);
    assert_non_null(p);
    *p = x;
    return p;
}

static void *send_part(void *arg)
{
    struct sender *s = arg;
    const struct replay_hooks *h = s->h;
    struct pes_error err = {0};
    int rc = 0;
    for (uint64_t w = 0; rc == 0 && (w < WINDOWS || s->until_stopped); w++) {
        if (h->progress(h->ctx, &err) < 0) {
            s->stopped = 1;
            rc = -1;
        } else if ((int)w == s->fail_at) {
            rc = pes_error_set(&err, s->code, 0, "damage at window %llu", (unsigned long long)w);
        } else if (!(s->skip && w == 3)) {
            rc = h->split->send(h->split->ctx, w, word(s->k * 1000 + w), 8, &err);
            s->stopped = rc < 0 && strstr(err.message, "stopped: part 0 failed");
        }
    }
    if (rc == 0)
        rc = h->part_send(h->ctx, word(s->k), 8, &err);
    h->agree(h->ctx, rc, &err);
    return NULL;
}

/* Part 0's side: every later part's windows in order, then its counts; the
 * outcome (0 or -1 with err) after agree. */
static int receive_all(const struct replay_hooks *h, struct pes_error *err)
{
    int rc = 0;
    for (uint32_t from = 1; rc == 0 && from < PARTS; from++) {
        for (uint64_t w = 0;; w++) {
            void *buf = NULL;
            size_t len = 0;
            int r = h->split->recv(h->split->ctx, w, from, &buf, &len, err);
            if (r < 0) {
                rc = -1;
                break;
            }
            if (r == 1) {
                assert_int_equal(w, WINDOWS);
                break;
            }
            assert_int_equal(len, 8);
            assert_int_equal(*(uint64_t *)buf, from * 1000 + w);
            free(buf);
        }
        void *buf = NULL;
        size_t len = 0;
        if (rc == 0 && (rc = h->part_recv(h->ctx, from, &buf, &len, err)) == 0) {
            assert_int_equal(*(uint64_t *)buf, from);
            free(buf);
        }
    }
    return h->agree(h->ctx, rc, err);
}

/* Runs parts 1..PARTS-1 as `s` says on threads, part 0 here (failing
 * itself first with `fail0`); the outcome and err as part 0 has them. */
static int run(struct sender *s, int fail0, struct pes_error *err)
{
    struct replay_part_link *l = replay_part_link_create(PARTS, 1, err);
    assert_non_null(l);
    const struct replay_hooks *h0 = replay_part_link_hooks(l, 0);
    assert_non_null(h0);
    assert_null(replay_part_link_hooks(l, PARTS));
    assert_true(h0->threads && !h0->no_report && h0->part == 0 && h0->parts == PARTS);
    pthread_t t[PARTS];
    for (uint32_t k = 1; k < PARTS; k++) {
        s[k].h = replay_part_link_hooks(l, k);
        s[k].k = k;
        assert_true(s[k].h->no_report && s[k].h->part == k);
        assert_int_equal(pthread_create(&t[k], NULL, send_part, &s[k]), 0);
    }
    int rc = fail0 ? h0->agree(h0->ctx, pes_error_set(err, PES_ERR_ARG, 0, "part 0 failed"), err)
                   : receive_all(h0, err);
    for (uint32_t k = 1; k < PARTS; k++)
        pthread_join(t[k], NULL);
    replay_part_link_destroy(l);
    return rc;
}

static void test_in_order(void **state)
{
    (void)state;
    struct sender s[PARTS] = {0};
    for (int k = 0; k < PARTS; k++)
        s[k].fail_at = -1;
    struct pes_error err = {0};
    assert_int_equal(run(s, 0, &err), 0);
}

static void test_a_part_fails(void **state)
{
    (void)state;
    struct pes_error err = {0};
    struct sender s[PARTS] = {0};
    for (int k = 0; k < PARTS; k++)
        s[k].fail_at = -1;
    /* the input's damage, met by part 2: pes-replay's line, no part named */
    s[2].fail_at = 7;
    s[2].code = PES_ERR_FORMAT;
    assert_int_equal(run(s, 0, &err), -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_string_equal(err.message, "damage at window 7");
    /* anything else: named by its part */
    memset(&err, 0, sizeof err);
    s[2].fail_at = -1;
    s[3].fail_at = 0;
    s[3].code = PES_ERR_NOMEM;
    assert_int_equal(run(s, 0, &err), -1);
    assert_string_equal(err.message, "part 3: damage at window 0");
    /* a window left out */
    memset(&err, 0, sizeof err);
    s[3].fail_at = -1;
    s[1].skip = 1;
    assert_int_equal(run(s, 0, &err), -1);
    assert_string_equal(err.message, "part 1 sent window 4 where window 3 was due");
}

static void test_part0_fails(void **state)
{
    (void)state;
    struct pes_error err = {0};
    struct sender s[PARTS] = {0};
    for (int k = 1; k < PARTS; k++) {
        s[k].fail_at = -1;
        s[k].until_stopped = 1; /* would never end but for part 0's stop */
    }
    assert_int_equal(run(s, 1, &err), -1);
    assert_string_equal(err.message, "part 0 failed");
    for (int k = 1; k < PARTS; k++)
        assert_true(s[k].stopped);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_a_part_fails),
        cmocka_unit_test(test_part0_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
