/* pmu.h — the hardware sampling backends' building blocks (PEBS, IBS), kept
 * free of process-wide state so they can be tested without a PMU: event
 * encoding with libpfm4 (LIBPFM_FORCE_PMU selects a CPU model), ring-buffer and
 * IBS raw-sample parsing into pes_event, and probing with an injectable
 * perf_event_open (to simulate failures). Not installed. */
#ifndef PES_PMU_H
#define PES_PMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "pes/trace.h"

/* Either <linux/perf_event.h>'s or libpfm4's <perfmon/perf_event.h> definition
 * (the two headers cannot be included together). */
struct perf_event_attr;

enum pes_pmu_backend { PES_PMU_PEBS = 1, PES_PMU_IBS = 2 };

/* perf_event_open as a replaceable function (tests inject failures). */
typedef long (*pes_pmu_open_fn)(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                                unsigned long flags);
void pes_pmu_set_open(pes_pmu_open_fn fn); /* NULL restores the system call */
long pes_pmu_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags);

/* PEBS load (store = 0) or store event of the CPU libpfm4 detects (or is forced
 * to): MEM_INST_RETIRED:ALL_LOADS/ALL_STORES where the PMU has it (Skylake on),
 * else MEM_UOPS_RETIRED:ALL_LOADS/ALL_STORES. precise_ip = 2 (3 where
 * allowed is not assumed), sample IP|ADDR|TID|TIME|DATA_SRC|WEIGHT, user only;
 * with callchain, also CALLCHAIN (user part, at most PES_ALLOC_MAX_DEPTH).
 * Returns 0, or -1 with a sentence in why. `event` gets the event name used. */
int pes_pmu_encode_pebs(int store, uint64_t period, int callchain, struct perf_event_attr *attr,
                        char *event, size_t event_size, char *why, size_t why_size);
/* The dynamic PMU type of ibs_op under sysfs_root ("/sys" normally). */
int pes_pmu_ibs_type(const char *sysfs_root, uint32_t *type, char *why, size_t why_size);
/* IBS op sampling attr (raw samples, period = ops between samples; the
 * hardware randomises the low bits); callchain as for PEBS. */
int pes_pmu_encode_ibs(const char *sysfs_root, uint64_t period, int callchain,
                       struct perf_event_attr *attr, char *why, size_t why_size);

/* Opens (and closes) the backend's event on this thread: 0 if it works, else
 * -1 with why ("perf_event_open(MEM_INST_RETIRED:ALL_LOADS): No such file or
 * directory: no hardware PMU exposed (a VM?)"). */
int pes_pmu_probe(int backend, char *why, size_t why_size);
/* pes_pmu_probe_watchpoints: backend.h. */

/* Counters of a ring-buffer pass. */
struct pes_pmu_counts {
    uint64_t samples, lost, throttle, dropped, other;
};

/* A sample's short user call stack from its PERF_SAMPLE_CALLCHAIN: ips[0]
 * the sample's ip (the chain's first user entry where the sample has none),
 * then the return addresses of the chain's user part after its first entry
 * (the interrupted ip), innermost first; kernel entries and context markers
 * are left out. depth 0: the sample has no callchain (not requested). */
struct pes_pmu_stack {
    uint32_t depth;
    uint64_t ips[PES_ALLOC_MAX_DEPTH];
};

/* Parses the records of a perf data area between tail and head (byte offsets,
 * free-running as in perf_event_mmap_page; size a power of two). Samples must
 * have been requested with sample_type (IP, TID, TIME, ADDR, CPU, PERIOD,
 * CALLCHAIN, RAW, WEIGHT and DATA_SRC are understood, in the kernel's order);
 * with stacks not NULL, stacks[i] gets the call stack of out[i]. PEBS samples become
 * PES_EV_SAMPLE events (site UINT32_MAX, ip, addr, time, flags WRITE if
 * `stores`); IBS samples (RAW) keep only load/store ops with a valid linear
 * address (others are counted as dropped). Up to max events go to out; returns
 * their number and advances *tail past consumed records. */
size_t pes_pmu_parse_ring(const uint8_t *data, uint64_t size, uint64_t head, uint64_t *tail,
                          uint64_t sample_type, int stores, uint32_t thread, struct pes_event *out,
                          struct pes_pmu_stack *stacks, size_t max, struct pes_pmu_counts *counts);

/* One IBS op raw payload (u32 size-prefixed by the kernel; here without it):
 * caps u32, then IBS_OP_CTL, IBS_OP_RIP, IBS_OP_DATA, IBS_OP_DATA2,
 * IBS_OP_DATA3, IBS_DC_LINADDR, IBS_DC_PHYSADDR u64 each. Returns 1 and fills
 * ev for a load/store with a valid linear address, 0 for other ops, -1 if short. */
int pes_pmu_parse_ibs(const uint8_t *raw, size_t size, struct pes_event *ev);

#endif
