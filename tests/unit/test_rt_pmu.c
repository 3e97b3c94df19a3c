/* PEBS/IBS building blocks (collector/src/backends/pmu.c) without a PMU: libpfm4 with a
 * forced CPU model (encodings checked against the Intel SDM event tables:
 * MEM_INST_RETIRED / MEM_UOPS_RETIRED ALL_LOADS = event D0H umask 81H,
 * ALL_STORES = D0H 82H), hand-built ring buffers and IBS raw samples, and
 * perf_event_open failures injected through the open hook. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/pmu.h"

/* libpfm4 reads LIBPFM_FORCE_PMU once per process, as a real run would: each
 * model is encoded in a child, which reports the first mismatch by exit code. */
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            _exit(__LINE__ % 250 + 1);                                                             \
    } while (0)

static void encode_for(const char *pmu, int store, const char *want_event, uint64_t want_config)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LIBPFM_FORCE_PMU", pmu, 1);
        struct perf_event_attr a;
        char event[64], why[256];
        memset(&a, 0, sizeof a);
        int rc = pes_pmu_encode_pebs(store, 100000, 0, &a, event, sizeof event, why, sizeof why);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", pmu, why);
        CHECK(rc == 0);
        if (strcmp(event, want_event) != 0)
            fprintf(stderr, "%s: %s, expected %s\n", pmu, event, want_event);
        CHECK(strcmp(event, want_event) == 0);
        CHECK(a.type == PERF_TYPE_RAW);
        CHECK(a.config == want_config);
        CHECK(a.precise_ip == 2);
        CHECK(a.sample_period == 100000);
        CHECK(a.exclude_kernel);
        uint64_t want = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                        PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
        CHECK(a.sample_type == want);
        /* with call stacks: the user callchain, at most 8 entries (issue 28) */
        memset(&a, 0, sizeof a);
        CHECK(pes_pmu_encode_pebs(store, 100000, 1, &a, event, sizeof event, why, sizeof why) == 0);
        CHECK(a.sample_type == (want | PERF_SAMPLE_CALLCHAIN));
        CHECK(a.exclude_callchain_kernel && a.sample_max_stack == 8);
        CHECK(a.config == want_config);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 0)
        print_error("%s %s: check failed (code %d)\n", pmu, store ? "store" : "load",
                    WEXITSTATUS(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void no_pebs_on(const char *pmu)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LIBPFM_FORCE_PMU", pmu, 1);
        struct perf_event_attr a;
        char event[64], why[256];
        CHECK(pes_pmu_encode_pebs(0, 1000, 0, &a, event, sizeof event, why, sizeof why) == -1);
        CHECK(strstr(why, "no PEBS load event") != NULL);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void pebs_events_per_model(void **state)
{
    (void)state;
    encode_for("skx", 0, "MEM_INST_RETIRED:ALL_LOADS", 0x81d0);
    encode_for("skx", 1, "MEM_INST_RETIRED:ALL_STORES", 0x82d0);
    encode_for("icl", 0, "MEM_INST_RETIRED:ALL_LOADS", 0x81d0);
    encode_for("icl", 1, "MEM_INST_RETIRED:ALL_STORES", 0x82d0);
    encode_for("hsw", 0, "MEM_UOPS_RETIRED:ALL_LOADS", 0x81d0);
    encode_for("hsw", 1, "MEM_UOPS_RETIRED:ALL_STORES", 0x82d0);
    encode_for("snb", 1, "MEM_UOPS_RETIRED:ALL_STORES", 0x82d0);
    /* an AMD core has no PEBS event: a sentence, not a crash */
    no_pebs_on("amd64_fam17h");
}

static void ibs_type_from_sysfs(void **state)
{
    (void)state;
    char root[] = "/tmp/pes-pmu-XXXXXX";
    assert_non_null(mkdtemp(root));
    char path[256], why[256];
    struct perf_event_attr a;
    assert_int_equal(pes_pmu_encode_ibs(root, 65536, 0, &a, why, sizeof why), -1);
    assert_non_null(strstr(why, "no AMD IBS op PMU"));
    const char *dirs[] = {"/bus", "/bus/event_source", "/bus/event_source/devices",
                          "/bus/event_source/devices/ibs_op"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s%s", root, dirs[i]);
        assert_int_equal(mkdir(path, 0700), 0);
    }
    snprintf(path, sizeof path, "%s/bus/event_source/devices/ibs_op/type", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("11\n", f);
    fclose(f);
    memset(&a, 0, sizeof a);
    assert_int_equal(pes_pmu_encode_ibs(root, 65536, 0, &a, why, sizeof why), 0);
    assert_int_equal(a.type, 11);
    assert_int_equal(a.config, 1ull << 19);
    assert_true(a.sample_type & PERF_SAMPLE_RAW);
    unlink(path);
    for (int i = 3; i >= 0; i--) {
        snprintf(path, sizeof path, "%s%s", root, dirs[i]);
        rmdir(path);
    }
    rmdir(root);
}

/* ------------------------------------------------------------ ring buffers */

#define RING 4096u
static uint8_t ring[RING];
static uint64_t head;

static void put(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ring[(head + i) % RING] = ((const uint8_t *)p)[i];
    head += n;
}

static void pebs_sample(uint64_t ip, uint64_t time, uint64_t addr, uint64_t weight)
{
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 8 + 8 + 8 + 8 + 8 + 8 + 8};
    uint32_t tid[2] = {100, 101};
    uint64_t src = 0x1234;
    put(&h, sizeof h);
    put(&ip, 8);
    put(tid, 8);
    put(&time, 8);
    put(&addr, 8);
    put(&weight, 8);
    put(&src, 8);
}

static const uint64_t pebs_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                  PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;

static void ring_pebs(void **state)
{
    (void)state;
    /* start near the end so a record wraps around the data area */
    head = RING - 20;
    uint64_t tail = head;
    pebs_sample(0x401000, 1000, 0x7f0000001000ull, 42);
    struct perf_event_header lost = {PERF_RECORD_LOST, 0, 24};
    uint64_t lv[2] = {7, 13};
    put(&lost, sizeof lost);
    put(lv, 16);
    struct perf_event_header thr = {PERF_RECORD_THROTTLE, 0, 8 + 24};
    uint64_t tv[3] = {1, 2, 3};
    put(&thr, sizeof thr);
    put(tv, 24);
    pebs_sample(0x401010, 2000, 0xffffffff81000000ull, 1); /* kernel address: dropped */
    pebs_sample(0x401020, 3000, 0x601040, 9);
    struct perf_event_header other = {PERF_RECORD_MMAP2 + 50, 0, 16};
    put(&other, sizeof other);
    put(lv, 8);

    struct pes_event ev[8];
    struct pes_pmu_counts c;
    memset(&c, 0, sizeof c);
    size_t n = pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 1, 3, ev, NULL, 8, &c);
    assert_int_equal(n, 2);
    assert_int_equal(tail, head);
    assert_int_equal(ev[0].kind, PES_EV_SAMPLE);
    assert_int_equal(ev[0].ip, 0x401000);
    assert_int_equal(ev[0].time, 1000);
    assert_int_equal(ev[0].addr, 0x7f0000001000ull);
    assert_int_equal(ev[0].aux, 42);
    assert_int_equal(ev[0].thread, 3);
    assert_int_equal(ev[0].site, UINT32_MAX);
    assert_true(ev[0].flags & PES_EVF_WRITE);
    assert_int_equal(ev[1].addr, 0x601040);
    assert_int_equal(c.samples, 2);
    assert_int_equal(c.lost, 13);
    assert_int_equal(c.throttle, 1);
    assert_int_equal(c.dropped, 1);
    assert_int_equal(c.other, 1);

    /* max = 1: stops after one event and resumes where it stopped */
    head = 0;
    tail = 0;
    pebs_sample(1, 1, 0x1000, 0);
    pebs_sample(2, 2, 0x2000, 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 0, 0, ev, NULL, 1, &c),
                     1);
    assert_int_equal(ev[0].addr, 0x1000);
    assert_false(ev[0].flags & PES_EVF_WRITE);
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 0, 0, ev, NULL, 1, &c),
                     1);
    assert_int_equal(ev[0].addr, 0x2000);
    assert_int_equal(tail, head);

    /* a record claiming more bytes than were published: no loop, counted */
    head = 0;
    tail = 0;
    struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 4000};
    put(&bad, sizeof bad);
    memset(&c, 0, sizeof c);
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 0, 0, ev, NULL, 8, &c),
                     0);
    assert_int_equal(c.other, 1);
    /* unknown sample_type bits are refused rather than misparsed */
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, PERF_SAMPLE_BRANCH_STACK, 0, 0, ev,
                                        NULL, 8, &c),
                     0);
}

/* A PEBS sample with PERF_SAMPLE_CALLCHAIN (between PERIOD and WEIGHT, the
 * kernel's order): nr, then context markers and ips. */
static void pebs_sample_chain(uint64_t ip, uint64_t addr, const uint64_t *chain, uint64_t nr)
{
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0,
                                  (uint16_t)(8 + 8 + 8 + 8 + 8 + 8 + 8 * nr + 8 + 8)};
    uint32_t tid[2] = {100, 101};
    uint64_t time = 7, weight = 3, src = 0x1234;
    put(&h, sizeof h);
    put(&ip, 8);
    put(tid, 8);
    put(&time, 8);
    put(&addr, 8);
    put(&nr, 8);
    put(chain, 8 * nr);
    put(&weight, 8);
    put(&src, 8);
}

/* Issue 28: the user part of a sample's callchain becomes its stack, ips[0]
 * the sample's ip, kernel entries and markers left out, at most 8 ips. */
static void ring_pebs_callchain(void **state)
{
    (void)state;
    const uint64_t type = pebs_type | PERF_SAMPLE_CALLCHAIN;
    const uint64_t user = (uint64_t)PERF_CONTEXT_USER, kernel = (uint64_t)PERF_CONTEXT_KERNEL;
    head = RING - 40; /* the second record wraps around the data area */
    uint64_t tail = head;
    /* user only (exclude_callchain_kernel): the interrupted ip, then two callers */
    const uint64_t c1[] = {user, 0x401005, 0x402a10, 0x403b20};
    pebs_sample_chain(0x401000, 0x7f0000002000ull, c1, 4);
    /* a kernel part first (an older kernel), then a user chain longer than 8 */
    const uint64_t c2[] = {kernel, 0xffffffff81001234ull,
                           user,   0x401100,
                           0x10,   0x20,
                           0x30,   0x40,
                           0x50,   0x60,
                           0x70,   0x80,
                           0x90};
    pebs_sample_chain(0x401100, 0x7f0000003000ull, c2, 13);
    /* an empty callchain: the sample alone */
    pebs_sample_chain(0x401200, 0x7f0000004000ull, NULL, 0);
    pebs_sample(0x401300, 9, 0x7f0000005000ull, 1); /* no callchain: a record of another type */

    struct pes_event ev[8];
    struct pes_pmu_stack st[8];
    struct pes_pmu_counts c;
    memset(&c, 0, sizeof c);
    size_t n = pes_pmu_parse_ring(ring, RING, head, &tail, type, 0, 0, ev, st, 3, &c);
    assert_int_equal(n, 3);
    assert_int_equal(ev[0].ip, 0x401000);
    assert_int_equal(ev[0].addr, 0x7f0000002000ull);
    assert_int_equal(ev[0].aux, 3); /* the fields after the chain are where they belong */
    assert_int_equal(ev[0].stack, PES_STACK_NONE);
    assert_int_equal(st[0].depth, 3);
    assert_int_equal(st[0].ips[0], 0x401000);
    assert_int_equal(st[0].ips[1], 0x402a10);
    assert_int_equal(st[0].ips[2], 0x403b20);
    assert_int_equal(st[1].depth, 8);
    const uint64_t want2[8] = {0x401100, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70};
    for (int k = 0; k < 8; k++)
        assert_int_equal(st[1].ips[k], want2[k]);
    assert_int_equal(ev[1].addr, 0x7f0000003000ull);
    assert_int_equal(st[2].depth, 1);
    assert_int_equal(st[2].ips[0], 0x401200);
    assert_int_equal(c.samples, 3);
    assert_int_equal(c.other, 0);

    /* the same records without CALLCHAIN in sample_type misparse nothing
     * when none has a chain: a plain PEBS record parses with depth 0 */
    n = pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 0, 0, ev, st, 8, &c);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].ip, 0x401300);
    assert_int_equal(st[0].depth, 0);
    assert_int_equal(tail, head);

    /* a chain whose nr runs past the record is damage: counted, not read */
    head = tail = 0;
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 8 + 8 * 6};
    uint64_t words[6] = {0x401000, 0, 1, 0x7f0000002000ull, 1000, 0};
    put(&h, sizeof h);
    put(words, sizeof words);
    memset(&c, 0, sizeof c);
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, type, 0, 0, ev, st, 8, &c), 0);
    assert_int_equal(c.other, 1);
    assert_int_equal(tail, head);
}

/* A record larger than the parser's 2 KiB buffer (it runs in a signal handler
 * on a 64 KiB stack) is skipped as "other"; the sample after it is kept. */
static void ring_oversized_record(void **state)
{
    (void)state;
    head = 100;
    uint64_t tail = head;
    struct perf_event_header big = {PERF_RECORD_SAMPLE, 0, 3000};
    put(&big, sizeof big);
    static const uint8_t junk[3000 - sizeof(struct perf_event_header)];
    put(junk, sizeof junk);
    pebs_sample(0x401000, 5, 0x602000, 3);
    struct pes_event ev[4];
    struct pes_pmu_counts c;
    memset(&c, 0, sizeof c);
    assert_int_equal(pes_pmu_parse_ring(ring, RING, head, &tail, pebs_type, 0, 0, ev, NULL, 4, &c),
                     1);
    assert_int_equal(ev[0].addr, 0x602000);
    assert_int_equal(ev[0].ip, 0x401000);
    assert_int_equal(c.other, 1);
    assert_int_equal(c.samples, 1);
    assert_int_equal(tail, head);
}

/* IBS op raw payload: caps u32, then CTL, RIP, DATA, DATA2, DATA3, DC_LINADDR, DC_PHYSADDR. */
static void ibs_sample(uint64_t rip, uint64_t data, uint64_t data3, uint64_t lin)
{
    uint64_t msr[7] = {0, rip, data, 0, data3, lin, 0};
    uint32_t caps = 0x3ff, rsize = 4 + sizeof msr;
    uint32_t pad = 0;
    /* IP, TID, TIME, RAW (u32 size + payload), padded to 8 bytes */
    uint16_t size = (uint16_t)(8 + 8 + 8 + 8 + 4 + rsize + 4);
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, size};
    uint32_t tid[2] = {1, 1};
    uint64_t ip = rip, time = 5;
    put(&h, sizeof h);
    put(&ip, 8);
    put(tid, 8);
    put(&time, 8);
    put(&rsize, 4);
    put(&caps, 4);
    put(msr, sizeof msr);
    put(&pad, 4);
}

static void ring_ibs(void **state)
{
    (void)state;
    head = 0;
    uint64_t tail = 0;
    ibs_sample(0x400100, 0, (1u << 0) | (1u << 17), 0x7f00000000a0ull); /* load, valid */
    ibs_sample(0x400200, 0, (1u << 1) | (1u << 17), 0x7f00000000b0ull); /* store, valid */
    ibs_sample(0x400300, 0, 0, 0);                                      /* not a memory op */
    ibs_sample(0x400400, 0, (1u << 0), 0x7f00000000c0ull);              /* address invalid */
    ibs_sample(0x400500, 1ull << 38, (1u << 0) | (1u << 17), 0x7f00000000d0ull); /* RIP invalid */
    struct pes_event ev[8];
    struct pes_pmu_counts c;
    memset(&c, 0, sizeof c);
    uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    size_t n = pes_pmu_parse_ring(ring, RING, head, &tail, type, 0, 0, ev, NULL, 8, &c);
    assert_int_equal(n, 3);
    assert_int_equal(c.dropped, 2);
    assert_int_equal(ev[0].addr, 0x7f00000000a0ull);
    assert_false(ev[0].flags & PES_EVF_WRITE);
    assert_int_equal(ev[0].ip, 0x400100);
    assert_int_equal(ev[1].addr, 0x7f00000000b0ull);
    assert_true(ev[1].flags & PES_EVF_WRITE);
    assert_int_equal(ev[2].addr, 0x7f00000000d0ull);
    assert_int_equal(ev[2].ip, 0x400500); /* the sample IP stands in for an invalid IBS RIP */
    uint8_t shortraw[10] = {0};
    struct pes_event e;
    assert_int_equal(pes_pmu_parse_ibs(shortraw, sizeof shortraw, &e), -1);
}

/* ------------------------------------------------------------ injected failures */

static int fake_errno, fake_ok_count, fake_calls;

static long fake_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                      unsigned long flags)
{
    (void)attr, (void)pid, (void)cpu, (void)group, (void)flags;
    if (fake_calls++ < fake_ok_count)
        return open("/dev/null", O_RDONLY | O_CLOEXEC);
    errno = fake_errno;
    return -1;
}

static void probe_failures(void **state)
{
    (void)state;
    char why[512];
    pes_pmu_set_open(fake_open);
    fake_errno = ENOENT, fake_ok_count = 0, fake_calls = 0;
    assert_int_equal(pes_pmu_probe(PES_PMU_PEBS, why, sizeof why), -1);
    assert_non_null(strstr(why, "no hardware PMU exposed"));
    fake_errno = EACCES, fake_calls = 0;
    assert_int_equal(pes_pmu_probe(PES_PMU_PEBS, why, sizeof why), -1);
    assert_non_null(strstr(why, "perf_event_paranoid"));
    /* cycles open, the PEBS event does not (e.g. a PMU without PEBS in a VM) */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LIBPFM_FORCE_PMU", "skx", 1);
        fake_errno = EOPNOTSUPP, fake_ok_count = 1, fake_calls = 0;
        CHECK(pes_pmu_probe(PES_PMU_PEBS, why, sizeof why) == -1);
        CHECK(strstr(why, "MEM_INST_RETIRED:ALL_LOADS") != NULL);
        fake_ok_count = 2, fake_calls = 0;
        CHECK(pes_pmu_probe(PES_PMU_PEBS, why, sizeof why) == 0);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* 4 debug registers, the 5th gives ENOSPC */
    fake_errno = ENOSPC, fake_ok_count = 4, fake_calls = 0;
    assert_int_equal(pes_pmu_probe_watchpoints(why, sizeof why), 0);
    assert_non_null(strstr(why, "4 debug registers"));
    fake_errno = ENOENT, fake_ok_count = 0, fake_calls = 0;
    assert_int_equal(pes_pmu_probe_watchpoints(why, sizeof why), -1);
    pes_pmu_set_open(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pebs_events_per_model),
        cmocka_unit_test(ibs_type_from_sysfs),
        cmocka_unit_test(ring_pebs),
        cmocka_unit_test(ring_pebs_callchain),
        cmocka_unit_test(ring_oversized_record),
        cmocka_unit_test(ring_ibs),
        cmocka_unit_test(probe_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
