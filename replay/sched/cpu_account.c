/*
 * cpu_account.c — CPU seconds per stage and thread (cpu_account.h).
 *
 * One slot per registered thread, each written only by its thread; the
 * report reads them after the threads have ended (their end takes the
 * table's lock, which orders their last writes before the read).
 */
#include "cpu_account.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { MAX_STAGES = 48, MAX_THREADS = 1024, NAME = 32 };

struct slot {
    char role[NAME];
    uint32_t index;
    int serial;
    int stage;                  /* current stage */
    int in_task;                /* running a scheduled task (pes_cpu_task_begin) */
    uint64_t since;             /* thread CPU ns at the last switch */
    uint64_t ns[2][MAX_STAGES]; /* [in_task][stage] */
};

static struct {
    atomic_int on;
    pthread_mutex_t mu;
    char stage_name[MAX_STAGES][NAME];
    int stage_kind[MAX_STAGES]; /* enum pes_cpu_kind */
    atomic_int n_stages;
    struct slot *slot[MAX_THREADS];
    int n_slots;
    struct timespec wall0;
    double process0;
    double chain_s; /* the longest strand */
    int chain_stage;
} acc = {.mu = PTHREAD_MUTEX_INITIALIZER, .chain_stage = -1};

static _Thread_local struct slot *mine;

static uint64_t thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double process_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void pes_cpu_enable(void)
{
    clock_gettime(CLOCK_MONOTONIC, &acc.wall0);
    acc.process0 = process_s();
    atomic_store(&acc.on, 1);
}

int pes_cpu_enabled(void)
{
    return atomic_load_explicit(&acc.on, memory_order_relaxed);
}

int pes_cpu_stage(const char *name, int kind)
{
    if (!pes_cpu_enabled())
        return -1;
    pthread_mutex_lock(&acc.mu);
    int n = atomic_load(&acc.n_stages), id = -1;
    for (int i = 0; i < n && id < 0; i++)
        if (!strcmp(acc.stage_name[i], name))
            id = i;
    if (id < 0 && n < MAX_STAGES) {
        snprintf(acc.stage_name[n], NAME, "%s", name);
        acc.stage_kind[n] = kind;
        atomic_store(&acc.n_stages, n + 1);
        id = n;
    }
    pthread_mutex_unlock(&acc.mu);
    return id;
}

int pes_cpu_thread_begin(const char *role, uint32_t index, int serial, int stage)
{
    if (!pes_cpu_enabled() || mine)
        return -1;
    struct slot *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    snprintf(s->role, NAME, "%s", role);
    s->index = index;
    s->serial = serial;
    s->stage = stage < 0 ? 0 : stage;
    pthread_mutex_lock(&acc.mu);
    int ok = acc.n_slots < MAX_THREADS;
    if (ok)
        acc.slot[acc.n_slots++] = s;
    pthread_mutex_unlock(&acc.mu);
    if (!ok) {
        free(s);
        return -1;
    }
    s->since = thread_ns();
    mine = s;
    return 0;
}

int pes_cpu_switch(int stage)
{
    struct slot *s = mine;
    if (!s)
        return -1;
    int was = s->stage;
    if (stage < 0 || stage == was)
        return was;
    uint64_t now = thread_ns();
    s->ns[s->in_task][was] += now - s->since;
    s->since = now;
    s->stage = stage;
    return was;
}

int pes_cpu_task_begin(void)
{
    struct slot *s = mine;
    if (!s)
        return 0;
    int outer = s->in_task;
    if (!outer) {
        uint64_t now = thread_ns();
        s->ns[0][s->stage] += now - s->since;
        s->since = now;
        s->in_task = 1;
    }
    return outer;
}

void pes_cpu_task_end(int outer)
{
    struct slot *s = mine;
    if (!s || outer || !s->in_task)
        return;
    uint64_t now = thread_ns();
    s->ns[1][s->stage] += now - s->since;
    s->since = now;
    s->in_task = 0;
}

/* Charges the caller's current stretch, so that its slot is up to date. */
static void charge_caller(void)
{
    struct slot *s = mine;
    if (!s)
        return;
    uint64_t now = thread_ns();
    s->ns[s->in_task][s->stage] += now - s->since;
    s->since = now;
}

void pes_cpu_thread_end(void)
{
    if (!mine)
        return;
    charge_caller();
    /* the lock orders the slot's last writes before a report's reads */
    pthread_mutex_lock(&acc.mu);
    mine = NULL;
    pthread_mutex_unlock(&acc.mu);
}

/* Under acc.mu: whether stage k's CPU on s (in a task or not) is serial. */
static int is_serial(const struct slot *s, int in_task, int k)
{
    return acc.stage_kind[k] == PES_CPU_SERIAL ||
           (acc.stage_kind[k] == PES_CPU_BY_THREAD && s->serial && !in_task);
}

void pes_cpu_chain(int stage, double seconds)
{
    if (!pes_cpu_enabled())
        return;
    pthread_mutex_lock(&acc.mu);
    if (seconds > acc.chain_s) {
        acc.chain_s = seconds;
        acc.chain_stage = stage;
    }
    pthread_mutex_unlock(&acc.mu);
}

double pes_cpu_thread_seconds(void)
{
    return thread_ns() / 1e9;
}

void pes_cpu_totals(struct pes_cpu_totals *t)
{
    memset(t, 0, sizeof *t);
    if (!pes_cpu_enabled())
        return;
    charge_caller();
    pthread_mutex_lock(&acc.mu);
    for (int i = 0; i < acc.n_slots; i++)
        for (int in_task = 0; in_task < 2; in_task++)
            for (int k = 0; k < MAX_STAGES; k++) {
                double x = acc.slot[i]->ns[in_task][k] / 1e9;
                t->total_s += x;
                if (is_serial(acc.slot[i], in_task, k))
                    t->serial_s += x;
            }
    t->chain_s = acc.chain_s;
    pthread_mutex_unlock(&acc.mu);
    struct timespec w;
    clock_gettime(CLOCK_MONOTONIC, &w);
    t->wall_s = (double)(w.tv_sec - acc.wall0.tv_sec) + (w.tv_nsec - acc.wall0.tv_nsec) / 1e9;
    t->process_s = process_s() - acc.process0;
}

double pes_cpu_amdahl(const struct pes_cpu_totals *t, double n)
{
    if (t->total_s <= 0 || n < 1)
        return 1;
    double time = t->serial_s + (t->total_s - t->serial_s) / n;
    return t->total_s / (time > t->chain_s ? time : t->chain_s);
}

void pes_cpu_report(FILE *f, const char *program)
{
    if (!pes_cpu_enabled())
        return;
    struct pes_cpu_totals t;
    pes_cpu_totals(&t);
    fprintf(f, "%s: CPU seconds per thread and stage (--stats)\n", program);
    fprintf(f, "  %-22s %-24s %10s  %s\n", "thread", "stage", "CPU s", "part");
    pthread_mutex_lock(&acc.mu);
    int n_stages = atomic_load(&acc.n_stages);
    for (int i = 0; i < acc.n_slots; i++) {
        const struct slot *s = acc.slot[i];
        char who[NAME + 16];
        snprintf(who, sizeof who, "%s %u", s->role, s->index);
        for (int in_task = 0; in_task < 2; in_task++)
            for (int k = 0; k < n_stages; k++)
                if (s->ns[in_task][k])
                    fprintf(f, "  %-22s %-24s %10.3f  %s%s\n", who, acc.stage_name[k],
                            s->ns[in_task][k] / 1e9,
                            is_serial(s, in_task, k) ? "serial" : "parallel",
                            in_task && s->serial ? " (task)" : "");
    }
    /* per stage over all threads */
    fprintf(f, "  %-22s %-24s %10s %10s\n", "all threads", "stage", "CPU s", "serial s");
    for (int k = 0; k < n_stages; k++) {
        double x = 0, serial = 0;
        for (int i = 0; i < acc.n_slots; i++)
            for (int in_task = 0; in_task < 2; in_task++) {
                x += acc.slot[i]->ns[in_task][k] / 1e9;
                if (is_serial(acc.slot[i], in_task, k))
                    serial += acc.slot[i]->ns[in_task][k] / 1e9;
            }
        if (x > 0)
            fprintf(f, "  %-22s %-24s %10.3f %10.3f\n", "", acc.stage_name[k], x, serial);
    }
    int threads = acc.n_slots;
    char chain[NAME] = "-";
    if (acc.chain_stage >= 0)
        snprintf(chain, sizeof chain, "%s", acc.stage_name[acc.chain_stage]);
    pthread_mutex_unlock(&acc.mu);
    double share = t.total_s > 0 ? t.serial_s / t.total_s : 1;
    fprintf(f,
            "  threads %d, wall %.3f s, process CPU %.3f s, accounted %.3f s; longest strand %.3f "
            "s (%s)\n",
            threads, t.wall_s, t.process_s, t.total_s, t.chain_s, chain);
    fprintf(f,
            "  serial %.3f s of %.3f s CPU (%.1f %%); Amdahl bound: %.2fx at 2, %.2fx at 4, %.2fx "
            "at 8, "
            "%.2fx at 16 workers (%.1fx at most)\n",
            t.serial_s, t.total_s, 100 * share, pes_cpu_amdahl(&t, 2), pes_cpu_amdahl(&t, 4),
            pes_cpu_amdahl(&t, 8), pes_cpu_amdahl(&t, 16), pes_cpu_amdahl(&t, 1e12));
}
