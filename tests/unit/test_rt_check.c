/* The check path's countdown arithmetic (core/core.h, core/rt_check.c; contract
 * in pes/rt_abi.h): against plain running sums of loads and stores, the
 * countdown goes negative exactly when loads + stores exceed the armed room,
 * and the drop since arming decodes to the exact loads and stores, also after
 * a wake-up kick. Random segments with fixed seeds, plus the edge cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/core.h"

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* What the pass emits for a segment of `loads` reading and `stores` writing accesses. */
static int64_t weight(uint64_t loads, uint64_t stores)
{
    return (int64_t)((loads + stores) << PES_RT_WEIGHT_SHIFT | stores);
}

static void check_exact(int64_t armed, int64_t now, uint64_t loads, uint64_t stores)
{
    struct pes_rt_drop d = pes_rt_check_decode(pes_rt_check_drop(armed, now));
    assert_int_equal(d.loads, loads);
    assert_int_equal(d.stores, stores);
}

/* Segments until one past the first that makes the countdown due. */
static void run_random(uint64_t seed, uint64_t max_room, int kick)
{
    uint64_t s = seed;
    for (int trial = 0; trial < 2000; trial++) {
        uint64_t room = rng_next(&s) % (max_room + 1);
        int64_t armed = pes_rt_check_pack(room), cd = armed;
        uint64_t loads = 0, stores = 0;
        int kicked = 0, due_seen = 0;
        while (!due_seen) {
            /* up to the pass's 4096 accesses per segment, stores-only and loads-only too */
            uint64_t n = 1 + rng_next(&s) % (rng_next(&s) % 8 ? 16 : 4096);
            uint64_t st = rng_next(&s) % 3 == 0 ? n : rng_next(&s) % (n + 1);
            cd -= weight(n - st, st);
            loads += n - st;
            stores += st;
            if (kick && !kicked && rng_next(&s) % 4 == 0) {
                cd = (int64_t)((uint64_t)cd | PES_RT_CD_KICK);
                kicked = 1;
            }
            due_seen = cd < 0;
            if (!kicked)
                assert_int_equal(due_seen, loads + stores > room);
            else
                assert_true(due_seen); /* a kick makes the next segment due */
            check_exact(armed, cd, loads, stores);
        }
    }
}

static void random_small_rooms(void **state)
{
    (void)state;
    run_random(0x1234567, 5000, 0);
}

static void random_large_rooms(void **state)
{
    (void)state;
    run_random(0x9abcdef, PES_RT_CD_MAX_ROOM, 0);
}

static void random_with_kicks(void **state)
{
    (void)state;
    run_random(0x5eed, PES_RT_CD_MAX_ROOM, 1);
}

static void edges(void **state)
{
    (void)state;
    /* room 0: the first access is due */
    int64_t a = pes_rt_check_pack(0);
    assert_true(a - weight(1, 0) < 0);
    assert_true(a - weight(0, 1) < 0);
    assert_true(a >= 0);
    /* the largest room with only stores: 2^23 stores pass, one more is due */
    uint64_t room = PES_RT_CD_MAX_ROOM;
    a = pes_rt_check_pack(room);
    int64_t cd = a;
    for (uint64_t i = 0; i < room / 4096; i++)
        cd -= weight(0, 4096);
    assert_true(cd >= 0);
    check_exact(a, cd, 0, room);
    cd -= weight(0, 4096);
    assert_true(cd < 0);
    check_exact(a, cd, 0, room + 4096);
    /* an access that reads and writes counts in both fields */
    a = pes_rt_check_pack(10);
    cd = a - (int64_t)(2ull << PES_RT_WEIGHT_SHIFT | 1);
    check_exact(a, cd, 1, 1);
    /* kicking an already due countdown changes nothing */
    cd = a - weight(20, 0);
    int64_t k = (int64_t)((uint64_t)cd | PES_RT_CD_KICK);
    assert_int_equal(k, cd);
    check_exact(a, k, 20, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_small_rooms),
        cmocka_unit_test(random_large_rooms),
        cmocka_unit_test(random_with_kicks),
        cmocka_unit_test(edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
