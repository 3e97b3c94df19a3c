/* pmu_app.c — an uninstrumented program that plays the kernel for the pebs and
 * ibs backends of libpes-rt (LD_PRELOADed; this machine has no PMU). It defines
 * pes_rt_pmu_test_open, which the runtime uses instead of perf_event_open:
 * each "event" is a memfd laid out like a perf mmap (user page + 8 data
 * pages). Each thread (main, and one made with pthread_create, which the
 * runtime wraps) then checks that the runtime asked for the overflow signal
 * on that very thread, writes synthetic records into its rings (wrapping
 * around the end of the data area), raises the signal and checks that the
 * runtime consumed them. What the runtime made of them is checked in the
 * trace by pmu_run.sh.
 *
 *   pmu_app pebs|ibs|pebs-reuse|pebs-nested|pebs-comm [THREADS]
 *
 * Per thread (index i = 0 main, 1..THREADS the others, default 1, at most 16;
 * they run at the same time), with A = &buf[i][0]:
 *   pebs: load ring:  samples at A, A+8, A+16 (ip 0x1000+k), LOST 5, THROTTLE,
 *                     a sample at address 0 (dropped); count 1000
 *         store ring: samples at A+64, A+72 (ip 0x2000+k); count 500
 *   ibs:  one ring: a load at A, a store at A+64, a non-memory op and a load
 *         without a valid linear address (both dropped)
 *   pebs-nested: one load sample at A, signalled from inside a SIGUSR1 handler
 *         on the alternate stack (the runtime must leave it in the ring), then
 *         again from normal code (drained)
 *   pebs-comm (comm mode, 1 thread): with lines L1 = &shared[0], L2 = &shared[8],
 *         the main thread's store samples at L1, then L2; the other's at
 *         L1 + 8 (false sharing with main), then L2 (true sharing)
 *   pebs-reuse: one load sample at A (count 1000), then the load count is
 *         set to 1100 and A is read: one reuse, distance 101 (1100 - 1000 + the access)
 * Prints "pmu_app: MODE done" and exits 0 (or $PMU_APP_EXIT) if every
 * in-process check held; each thread's tid and buffer go to stderr. With
 * PMU_APP_FAIL set, perf_event_open fails with ENOENT and no records are made.
 * The runtime's PERF_EVENT_IOC_PERIOD calls (pes-collect --samples) are
 * answered here and written to stderr: "pmu_app: ioctl period tid T ring
 * load|store value V"; with PMU_APP_PERIOD_EINVAL set they fail with EINVAL,
 * as a kernel refusing the period would. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DATA_PAGES 8
#define MAX_THREADS 17   /* main + 16 */
#define MAX_RINGS (2 * MAX_THREADS)

struct ring {
    int fd;
    pid_t tid;
    uint64_t sample_type;
    int stores;   /* pebs: the store event (its config differs from the load's) */
    struct perf_event_mmap_page *pg;
    uint8_t *data;
    uint64_t size;
};

static struct ring rings[MAX_RINGS];
static int n_rings;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t first_config;   /* the first event opened is the load event */
static const char *mode = "pebs";
static int failures;
static volatile uint64_t buf[MAX_THREADS][32] __attribute__((aligned(64)));
static volatile uint64_t shared[16] __attribute__((aligned(64)));

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "pmu_app: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                       \
        }                                                                             \
    } while (0)

/* The runtime calls ioctl from its overflow handler: no lock, no stdio. */
__attribute__((visibility("default"))) int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (req == PERF_EVENT_IOC_PERIOD) {
        const char *kind = "unknown";
        int n = __atomic_load_n(&n_rings, __ATOMIC_ACQUIRE);
        for (int k = 0; k < n; k++)
            if (rings[k].fd == fd)
                kind = rings[k].stores ? "store" : "load";
        char line[128];
        int len = snprintf(line, sizeof line, "pmu_app: ioctl period tid %ld ring %s value %llu\n",
                           (long)syscall(SYS_gettid), kind,
                           (unsigned long long)*(const uint64_t *)arg);
        if (write(2, line, (size_t)len) < 0)
            return -1;
        if (getenv("PMU_APP_PERIOD_EINVAL")) {
            errno = EINVAL;
            return -1;
        }
        return 0;
    }
    int (*real)(int, unsigned long, ...) = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    return real(fd, req, arg);
}

__attribute__((visibility("default"))) long pes_rt_pmu_test_open(struct perf_event_attr *attr,
                                                                  pid_t pid, int cpu, int group,
                                                                  unsigned long flags)
{
    (void)flags;
    if (getenv("PMU_APP_FAIL")) {
        errno = ENOENT;   /* what a VM without a PMU says */
        return -1;
    }
    CHECK(pid == 0 && cpu == -1 && group == -1);
    CHECK(attr->sample_period > 0 && attr->wakeup_events == 1 && !attr->disabled);
    /* called from the runtime's constructor too, before main has read the mode */
    int is_ibs = attr->type == 4242;   /* the fake sysfs's ibs_op type (pmu_run.sh) */
    if (!is_ibs) {
        CHECK(attr->precise_ip >= 2 && attr->exclude_kernel);
        CHECK(attr->sample_type & PERF_SAMPLE_ADDR);
    } else {
        CHECK(attr->type == 4242 && (attr->sample_type & PERF_SAMPLE_RAW));
    }
    long page = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("pmu_app_ring", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, page * (1 + DATA_PAGES)) != 0)
        return -1;
    void *p = mmap(NULL, (size_t)page * (1 + DATA_PAGES), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    pthread_mutex_lock(&lock);
    if (n_rings == MAX_RINGS) {
        pthread_mutex_unlock(&lock);
        errno = EMFILE;
        return -1;
    }
    struct ring *r = &rings[n_rings++];
    if (n_rings == 1)
        first_config = attr->config;
    r->fd = fd;
    r->tid = (pid_t)syscall(SYS_gettid);
    r->sample_type = attr->sample_type;
    r->stores = !is_ibs && attr->config != first_config;
    r->pg = p;
    r->data = (uint8_t *)p + page;
    r->size = (uint64_t)page * DATA_PAGES;
    pthread_mutex_unlock(&lock);
    r->pg->data_offset = (uint64_t)page;
    r->pg->data_size = r->size;
    r->pg->cap_user_rdpmc = 1;   /* index 0: the count is `offset` (not on a counter now) */
    r->pg->index = 0;
    r->pg->offset = r->stores ? 500 : 1000;
    /* start near the end so the records wrap around */
    r->pg->data_head = r->pg->data_tail = r->size - 40;
    return fd;
}

/* ------------------------------------------------------------ record writing */

static void put(struct ring *r, uint64_t *head, const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        r->data[(*head + i) % r->size] = ((const uint8_t *)src)[i];
    *head += n;
}

static void sample(struct ring *r, uint64_t *head, uint64_t ip, uint64_t addr, const void *raw,
                   uint32_t raw_size)
{
    uint8_t rec[256];
    size_t n = sizeof(struct perf_event_header);
    uint32_t tid[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);   /* ComDetective orders publications by time */
    uint64_t time = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, weight = 7, src = 0;
#define ADD(p, len) (memcpy(rec + n, (p), (len)), n += (len))
    if (r->sample_type & PERF_SAMPLE_IP)
        ADD(&ip, 8);
    if (r->sample_type & PERF_SAMPLE_TID)
        ADD(tid, 8);
    if (r->sample_type & PERF_SAMPLE_TIME)
        ADD(&time, 8);
    if (r->sample_type & PERF_SAMPLE_ADDR)
        ADD(&addr, 8);
    if (r->sample_type & PERF_SAMPLE_CALLCHAIN) {
        /* the user part, as exclude_callchain_kernel gives it: the
         * interrupted ip, then a caller's return address */
        uint64_t chain[4] = {3, (uint64_t)PERF_CONTEXT_USER, ip,
                             (uint64_t)(uintptr_t)__builtin_return_address(0)};
        ADD(chain, sizeof chain);
    }
    if (r->sample_type & PERF_SAMPLE_RAW) {
        ADD(&raw_size, 4);
        ADD(raw, raw_size);
    }
    if (r->sample_type & PERF_SAMPLE_WEIGHT)
        ADD(&weight, 8);
    if (r->sample_type & PERF_SAMPLE_DATA_SRC)
        ADD(&src, 8);
#undef ADD
    struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = 0, .size = (uint16_t)n};
    memcpy(rec, &h, sizeof h);
    put(r, head, rec, n);
}

static void lost(struct ring *r, uint64_t *head, uint64_t count)
{
    struct {
        struct perf_event_header h;
        uint64_t id, lost;
    } rec = {{PERF_RECORD_LOST, 0, sizeof rec}, 1, count};
    put(r, head, &rec, sizeof rec);
}

static void throttle(struct ring *r, uint64_t *head)
{
    struct {
        struct perf_event_header h;
        uint64_t time, id, stream_id;
    } rec = {{PERF_RECORD_THROTTLE, 0, sizeof rec}, 1, 2, 3};
    put(r, head, &rec, sizeof rec);
}

/* IBS op payload: caps, then OP_CTL, OP_RIP, OP_DATA, OP_DATA2, OP_DATA3, DC_LINADDR, DC_PHYSADDR */
static void ibs(struct ring *r, uint64_t *head, uint64_t rip, uint64_t data3, uint64_t lin)
{
    uint8_t raw[60];
    uint64_t v[7] = {0, rip, 0, 0, data3, lin, 0};
    uint32_t caps = 0x1ff;
    memcpy(raw, &caps, 4);
    memcpy(raw + 4, v, sizeof v);
    sample(r, head, rip, 0, raw, sizeof raw);
}

/* Publishes the records and raises the overflow signal the runtime asked for. */
static void overflow(struct ring *r, uint64_t head)
{
    __atomic_store_n(&r->pg->data_head, head, __ATOMIC_RELEASE);
    int sig = fcntl(r->fd, F_GETSIG);
    CHECK(sig > 0);
    if (sig > 0)
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
    /* a signal to oneself is delivered before tgkill returns */
    CHECK(__atomic_load_n(&r->pg->data_tail, __ATOMIC_ACQUIRE) == head);
}

static struct ring *nested_ring;
static uint64_t nested_tail;

/* Runs on the runtime's sigaltstack (SA_ONSTACK), like the SIGTRAP handler. */
static void on_usr1(int sig)
{
    (void)sig;
    int s = fcntl(nested_ring->fd, F_GETSIG);
    if (s > 0)
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), s);
    nested_tail = __atomic_load_n(&nested_ring->pg->data_tail, __ATOMIC_ACQUIRE);
}

static void run_thread(int i)
{
    pid_t me = (pid_t)syscall(SYS_gettid);
    uint64_t a = (uint64_t)(uintptr_t)&buf[i][0];
    int mine = 0;
    fprintf(stderr, "pmu_app: thread %d tid %d buf 0x%llx shared 0x%llx\n", i, (int)me,
            (unsigned long long)a, (unsigned long long)(uintptr_t)&shared[0]);
    if (getenv("PMU_APP_FAIL"))
        return;   /* no events: the program just runs */
    pthread_mutex_lock(&lock);
    int nr = n_rings;   /* this thread's rings were opened before it ran */
    pthread_mutex_unlock(&lock);
    for (int k = 0; k < nr; k++) {
        struct ring *r = &rings[k];
        if (r->tid != me)
            continue;
        mine++;
        struct f_owner_ex owner;
        CHECK(fcntl(r->fd, F_GETOWN_EX, &owner) == 0 && owner.type == F_OWNER_TID &&
              owner.pid == me);
        /* O_ASYNC does not show in F_GETFL of a memfd (it has no fasync); F_GETSIG is checked in overflow() */
        uint64_t head = r->pg->data_head;
        if (!strcmp(mode, "pebs") && !r->stores) {
            for (int s = 0; s < 3; s++)
                sample(r, &head, 0x1000 + (uint64_t)s, a + 8 * (uint64_t)s, NULL, 0);
            lost(r, &head, 5);
            throttle(r, &head);
            sample(r, &head, 0x1003, 0, NULL, 0);
        } else if (!strcmp(mode, "pebs")) {
            for (int s = 0; s < 2; s++)
                sample(r, &head, 0x2000 + (uint64_t)s, a + 64 + 8 * (uint64_t)s, NULL, 0);
        } else if (!strcmp(mode, "ibs")) {
            ibs(r, &head, 0x3000, 1ull << 0 | 1ull << 17, a);          /* load */
            ibs(r, &head, 0x3001, 1ull << 1 | 1ull << 17, a + 64);     /* store */
            ibs(r, &head, 0x3002, 1ull << 17, a + 128);                /* not a memory op */
            ibs(r, &head, 0x3003, 1ull << 0, a + 192);                 /* no valid address */
        } else if (!strcmp(mode, "pebs-comm")) {
            uint64_t l1 = (uint64_t)(uintptr_t)&shared[0], l2 = (uint64_t)(uintptr_t)&shared[8];
            if (r->stores && i == 0) {
                sample(r, &head, 0x4000, l1, NULL, 0);
                sample(r, &head, 0x4001, l2, NULL, 0);
            } else if (r->stores) {
                sample(r, &head, 0x4002, l1 + 8, NULL, 0);
                sample(r, &head, 0x4003, l2, NULL, 0);
            }
        } else if (!strcmp(mode, "pebs-nested")) {
            if (r->stores)
                continue;
            uint64_t before = head;
            sample(r, &head, 0x1000, a, NULL, 0);
            __atomic_store_n(&r->pg->data_head, head, __ATOMIC_RELEASE);
            nested_ring = r;
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr1;
            sa.sa_flags = SA_ONSTACK;
            sigaction(SIGUSR1, &sa, NULL);
            syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
            CHECK(nested_tail == before);   /* left in the ring */
        } else if (!strcmp(mode, "pebs-reuse")) {
            if (r->stores)
                continue;
            sample(r, &head, 0x1000, a, NULL, 0);
            overflow(r, head);
            r->pg->offset = 1100;   /* 100 more loads counted by the "PMU" */
            uint64_t v = buf[i][0];   /* the reuse: traps */
            (void)v;
            continue;
        }
        overflow(r, head);
    }
    CHECK(mine == (!strcmp(mode, "ibs") ? 1 : 2));
}

static void *thread_main(void *arg)
{
    run_thread((int)(intptr_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (strcmp(argv[1], "pebs") && strcmp(argv[1], "ibs") &&
                                 strcmp(argv[1], "pebs-reuse") && strcmp(argv[1], "pebs-nested") &&
                                 strcmp(argv[1], "pebs-comm"))) {
        fprintf(stderr, "usage: pmu_app pebs|ibs|pebs-reuse|pebs-nested|pebs-comm [THREADS]\n");
        return 2;
    }
    mode = argv[1];
    int n = argc == 3 ? atoi(argv[2]) : 1;
    if (n < 1 || n >= MAX_THREADS) {
        fprintf(stderr, "pmu_app: THREADS: 1..%d\n", MAX_THREADS - 1);
        return 2;
    }
    run_thread(0);
    pthread_t th[MAX_THREADS];
    for (int i = 1; i <= n; i++)
        if (pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) != 0)
            return 3;
    for (int i = 1; i <= n; i++)
        pthread_join(th[i], NULL);
    if (failures)
        return 1;
    printf("pmu_app: %s done\n", mode);
    const char *status = getenv("PMU_APP_EXIT");
    return status ? atoi(status) : 0;
}
