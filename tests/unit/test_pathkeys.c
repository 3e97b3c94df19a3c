/*
 * test_pathkeys.c — (key, path, site) triples as dense ids
 * (analyses/callpaths.h): ids in first-seen order, against a brute-force
 * oracle that keeps every distinct triple in a plain array and searches it
 * linearly. The streams are made to defeat the interning's shortcuts (the
 * previous triple, the memo by site): loops over a few sites, sites that
 * collide in the memo, paths that alternate per access as two threads'
 * would, keys that differ from the sites, and a thousand paths (keys,
 * sites) under one key and site, more than any memo holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "callpaths.h"

struct triple {
    uint32_t key, path, site;
};

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* the id the oracle gives t: its index among the distinct triples, in first-seen order */
static uint32_t oracle_id(struct triple *seen, uint32_t *n, struct triple t)
{
    for (uint32_t i = 0; i < *n; i++)
        if (seen[i].key == t.key && seen[i].path == t.path && seen[i].site == t.site)
            return i;
    seen[*n] = t;
    return (*n)++;
}

/* n triples of one shape, mapped in batches of random length */
static void check_stream(uint64_t seed, int shape)
{
    enum { N = 5000 };
    uint32_t *key = malloc(N * sizeof *key), *path = malloc(N * sizeof *path),
             *site = malloc(N * sizeof *site), *out = malloc(N * sizeof *out);
    struct triple *seen = malloc(N * sizeof *seen);
    assert_non_null(key && path && site && out && seen);
    uint64_t s = seed;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t r = (uint32_t)rng(&s);
        switch (shape) {
        case 0: /* a loop over 5 sites, one path, key = site */
            site[i] = 7 + i % 5, path[i] = 0, key[i] = site[i];
            break;
        case 1: /* sites 256 apart (one memo slot), two threads' paths alternating */
            site[i] = 3 + 256 * (r % 6), path[i] = i & 1, key[i] = site[i];
            break;
        case 2: /* keys (objects) that are not the sites, paths of a small set */
            site[i] = r % 40, path[i] = (r >> 8) % 4, key[i] = (r >> 16) % 3;
            break;
        case 3: /* one site and key, many paths: more than any memo has slots, so
                 * some share one whatever it hashes */
            site[i] = 9, path[i] = r % 1000, key[i] = 9;
            break;
        case 4: /* one site and path, many keys */
            site[i] = 9, path[i] = 0, key[i] = r % 1000;
            break;
        case 5: /* one key and path, many sites */
            site[i] = r % 1000, path[i] = 1, key[i] = 4;
            break;
        default: /* anything: large ids too */
            site[i] = r % 3000, path[i] = (r >> 12) % 300, key[i] = (uint32_t)rng(&s) % 50;
            break;
        }
    }
    struct replay_pathkeys *pk = replay_pathkeys_create();
    assert_non_null(pk);
    for (uint32_t at = 0; at < N;) {
        uint32_t len = 1 + (uint32_t)(rng(&s) % 700);
        if (len > N - at)
            len = N - at;
        assert_int_equal(replay_pathkeys_map(pk, key + at, path + at, site + at, len, out + at), 0);
        at += len;
    }
    uint32_t n_seen = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = oracle_id(seen, &n_seen,
                                  (struct triple){.key = key[i], .path = path[i], .site = site[i]});
        if (out[i] != want)
            fail_msg("shape %d, access %u: id %u, expected %u", shape, i, out[i], want);
    }
    assert_int_equal(replay_pathkeys_count(pk), n_seen);
    for (uint32_t id = 0; id < n_seen; id++) {
        assert_int_equal(replay_pathkeys_key(pk, id), seen[id].key);
        assert_int_equal(replay_pathkeys_path(pk, id), seen[id].path);
        assert_int_equal(replay_pathkeys_site(pk, id), seen[id].site);
    }
    replay_pathkeys_destroy(pk);
    free(key), free(path), free(site), free(out), free(seen);
}

static void ids_match_oracle(void **state)
{
    (void)state;
    for (int shape = 0; shape < 7; shape++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            check_stream(seed * 0x9E3779B97F4A7C15ull + (uint64_t)shape, shape);
}

/* no keys or no paths: both read as 0 */
static void absent_columns_are_zero(void **state)
{
    (void)state;
    const uint32_t site[4] = {5, 9, 5, 9}, path[4] = {0, 0, 1, 1};
    uint32_t out[4];
    struct replay_pathkeys *pk = replay_pathkeys_create();
    assert_non_null(pk);
    assert_int_equal(replay_pathkeys_map(pk, NULL, path, site, 4, out), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 2);
    assert_int_equal(out[3], 3);
    assert_int_equal(replay_pathkeys_map(pk, NULL, NULL, site, 4, out), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 0);
    assert_int_equal(out[3], 1);
    assert_int_equal(replay_pathkeys_key(pk, 3), 0);
    assert_int_equal(replay_pathkeys_path(pk, 3), 1);
    replay_pathkeys_destroy(pk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_match_oracle),
        cmocka_unit_test(absent_columns_are_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
