/*
 * cpu_account.h — CPU seconds per stage and per thread of one replay
 * (pes-replay --stats), and the serial part they imply (Amdahl's law).
 *
 * Every thread of the replay says once what it is (a role: the reading
 * thread, the merge thread, a worker) and then, as it goes, which stage it
 * is in (decoding, merging, batching, an analysis, a reuse engine, a
 * simulation partition ...). Each switch reads the thread's CPU clock and
 * charges the time since the last switch to the stage left. Off (the
 * default) every call is a load and a branch.
 *
 * The serial part is the CPU that no number of workers divides: the
 * threads that run once per replay whatever --jobs is (role `serial`),
 * except their stages that divide (PES_CPU_PARALLEL), plus stages that are
 * sequential wherever they run (PES_CPU_SERIAL). Amdahl's bound on N workers is then
 * T / (S + (T - S) / N) for total CPU T and serial CPU S — an upper bound
 * of the speed-up, which needs the CPUs only of the run that measures it.
 */
#ifndef PES_REPLAY_CPU_ACCOUNT_H
#define PES_REPLAY_CPU_ACCOUNT_H

#include <stdint.h>
#include <stdio.h>

/* Turns the accounting on (before any thread registers) and starts the
 * process clock the report compares with. */
void pes_cpu_enable(void);
int pes_cpu_enabled(void);

/* What a stage's CPU counts as: the part of the thread it runs on (its
 * role), or serial / parallel wherever it runs (a PARDA lane's resolution
 * is sequential even on a worker; a simulation partition's batch divides
 * even when the reading thread runs it while it waits). */
enum pes_cpu_kind { PES_CPU_BY_THREAD = 0, PES_CPU_SERIAL = 1, PES_CPU_PARALLEL = 2 };

/* The id of the stage called `name` (registered on first use with `kind`,
 * enum pes_cpu_kind; the same id for the same name). -1 when off or when
 * the table is full (then switching to it is a no-op). */
int pes_cpu_stage(const char *name, int kind);

/* This thread takes part as `role` (e.g. "main", "merge", "worker"),
 * instance `index`; serial: a thread that runs once per replay. Its time
 * goes to stage `stage` until the first switch. Returns 0, or -1 when off
 * or the table is full (the thread is then not accounted). */
int pes_cpu_thread_begin(const char *role, uint32_t index, int serial, int stage);
/* The thread ends: its last stage is charged. */
void pes_cpu_thread_end(void);

/* The calling thread enters `stage`; returns the stage it left (to switch
 * back to), or -1 when this thread is not accounted. */
int pes_cpu_switch(int stage);
/* The calling thread runs a scheduled task (scheduler.h) until
 * pes_cpu_task_end: work that divides, whatever the thread's role, so its
 * stages count as parallel unless PES_CPU_SERIAL. Returns what to pass to
 * pes_cpu_task_end (tasks nest). */
int pes_cpu_task_begin(void);
void pes_cpu_task_end(int outer);

/* A strand's tasks (scheduler.h) took `seconds` of CPU one after the other,
 * not counting tasks they ran while waiting: no number of workers runs
 * them in less. The longest is kept. */
void pes_cpu_chain(int stage, double seconds);
/* The CPU clock of the calling thread, in seconds. */
double pes_cpu_thread_seconds(void);

/* The totals as the report and benchmarks read them. */
struct pes_cpu_totals {
    double total_s;   /* CPU of the accounted threads */
    double serial_s;  /* of which serial (see above) */
    double chain_s;   /* the longest strand (pes_cpu_chain) */
    double process_s; /* the process's CPU since pes_cpu_enable (getrusage) */
    double wall_s;    /* wall-clock seconds since pes_cpu_enable */
};
void pes_cpu_totals(struct pes_cpu_totals *t);
/* The bound on the speed-up with n workers from t: T / max(S + (T - S) / n,
 * longest strand), Amdahl's law with the strand that cannot be divided
 * (1 when nothing was measured). */
double pes_cpu_amdahl(const struct pes_cpu_totals *t, double n);

/* The table: one line per thread and stage with its CPU seconds, then the
 * totals, the serial part and Amdahl's bound at 2, 4, 8 and 16 workers.
 * Threads still running are charged up to now only if they are the caller. */
void pes_cpu_report(FILE *f, const char *program);

#endif
