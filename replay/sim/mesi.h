/*
 * mesi — cache + MESI coherence simulation of an interleaved access stream,
 * with per-site / per-thread attribution and communication matrices.
 *
 * The caller feeds accesses in global order (it merges the threads' traces or
 * mimics cores); each access names the core it runs on and the thread it
 * belongs to. Private levels (L1, L2, ...) are per core, shared levels per
 * socket (pes_machine.level[k].shared). Coherence is kept between the cores'
 * private hierarchies with a directory (a hash map keyed by line).
 *
 * Definitions (details and citations in docs/simulation.md):
 *  - An access that crosses a line boundary is split into one access per line;
 *    every piece counts as an access (accesses >= records).
 *  - Misses at each level are compulsory (first time THIS core / socket holds
 *    the line), coherence (the core / socket lost its copy to another core's
 *    write and has not held it since), conflict (a fully associative LRU
 *    cache of the level's size, fed every access of the core / socket, would
 *    have held the line: shadow.h) or capacity (everything else).
 *  - Invalidations caused (Marathe et al. §4): a write that removes the line
 *    from another core's private caches; counted once per invalidated core, at
 *    the writing site and thread. True sharing (Marathe §8) if the written
 *    bytes overlap bytes the invalidated core accessed since it (re)acquired
 *    the line, else false sharing.
 *  - Coherence miss (Marathe §4): a private miss on a line this core lost by
 *    invalidation. True sharing if the bytes of the missing access were
 *    written by another core since the invalidation, else false sharing.
 *  - Communication (Dissertation §5.2): a cache-line transfer from the core
 *    holding the line to a core that misses it, counted when a store is
 *    involved (the requester writes, or the holder has it Modified). True
 *    sharing when the requested bytes overlap the bytes the holder accessed.
 *    Matrices are ordered (row = supplier, column = requester); the
 *    ComDetective matrix is pes_sim_comm_symmetric (zero diagonal).
 * Byte masks have one bit per line/64 bytes (per byte for lines <= 64 B).
 * Limits: <= 64 cores, <= 16 sockets; thread bitmasks use bit (thread % 64).
 */
#ifndef PES_REPLAY_MESI_H
#define PES_REPLAY_MESI_H

#include <stddef.h>
#include <stdint.h>
#include "pes/model.h"
#include "pes/trace.h"

#define PES_SIM_MAX_CORES   64u
#define PES_SIM_MAX_SOCKETS 16u
#define PES_SIM_MAX_THREADS 4096u
/* Site ids at or above this (and UINT32_MAX) are pooled in one "other" entry. */
#define PES_SIM_MAX_SITES (1u << 22)

enum pes_sim_miss_class {
    PES_SIM_COMPULSORY = 0,
    PES_SIM_CAPACITY = 1, /* a fully associative cache of the same size misses too */
    PES_SIM_COHERENCE = 2,
    PES_SIM_CONFLICT = 3, /* a fully associative cache of the same size would hit */
    PES_SIM_MISS_CLASSES = 4,
};

struct pes_sim_stats {
    uint64_t accesses, reads, writes; /* line pieces */
    uint64_t hits[PES_MAX_LEVELS];
    uint64_t misses[PES_MAX_LEVELS][PES_SIM_MISS_CLASSES];
    uint64_t inval_true, inval_false; /* invalidations caused by these writes */
    uint64_t coh_true, coh_false;     /* coherence misses suffered */
    uint64_t comm_true, comm_false;   /* transfers received (as requester) */
    uint64_t upgrades;                /* write hit in S */
    uint64_t downgrades;              /* read miss on a line Modified elsewhere */
    uint64_t victim_threads;          /* bit t%64: threads whose copies these writes invalidated */
    uint64_t source_threads;          /* bit t%64: threads that caused these coherence misses */
};

/* d += x, field by field (thread masks or-ed): one site's, thread's or
 * partition's counts added to another's. */
void pes_sim_stats_add(struct pes_sim_stats *d, const struct pes_sim_stats *x);

/* A coherence event, for callers that break them down further than per site
 * (pes-replay's cache-line table): the line, the access that caused it and
 * the other core involved. */
enum pes_sim_event_kind {
    PES_SIM_EV_INVALIDATION = 0,   /* the access's write removed the line from `other` */
    PES_SIM_EV_COHERENCE_MISS = 1, /* the access missed a line `other` invalidated */
    PES_SIM_EV_TRANSFER =
        2,               /* the line moved from `other` to the access's core (a store involved) */
    PES_SIM_EV_MISS = 3, /* the access missed the line in L1, for `cause`; after its other events */
};
struct pes_sim_access;
struct pes_sim_event {
    const struct pes_sim_access *access; /* as passed to pes_sim_access(_batch) */
    uint64_t line;                       /* the line's first byte */
    uint32_t other;                      /* the other core */
    uint8_t kind;                        /* enum pes_sim_event_kind */
    uint8_t is_true;                     /* true sharing (the definitions above) */
    uint8_t cause;                       /* PES_SIM_EV_MISS: enum pes_sim_miss_class */
};

struct pes_sim_config {
    const struct pes_machine *machine; /* levels; sockets x cores_per_socket if n_cores is 0 */
    uint32_t n_cores;                  /* 0: machine->sockets * machine->cores_per_socket */
    const uint32_t *core_socket;       /* NULL: core / machine->cores_per_socket */
    uint32_t n_threads;                /* threads 0 .. n_threads-1 (<= PES_SIM_MAX_THREADS) */
    int non_inclusive;                 /* shared levels do not back-invalidate */
    uint64_t page_size; /* 0: virtual indexing; else random page frames (cachesim.h) */
    /* NULL, or called for every coherence event as it happens (counted in the stats all the same) */
    void (*on_event)(void *ctx, const struct pes_sim_event *ev);
    void *event_ctx;
    /* One address partition (below): only lines whose low partition_bits
     * bits of the line number are `partition` are simulated; accesses pass
     * their other lines over. 0: every line. At most pes_sim_partition_bits. */
    uint32_t partition_bits, partition;
};

struct pes_sim_access {
    uint64_t addr;
    uint32_t size; /* bytes; 0 counts as 1 */
    uint32_t core;
    uint32_t thread;
    uint32_t site; /* UINT32_MAX if unknown */
    uint8_t is_read;
    uint8_t is_write;   /* both set for read-modify-write; neither set counts as a read */
    uint32_t shadow_at; /* pes_sim_access_batch_shadow: its lines' shadow bits start here */
};

struct pes_sim;

struct pes_sim *pes_sim_create(const struct pes_sim_config *cfg, struct pes_error *err);
void pes_sim_destroy(struct pes_sim *s);
/* 0, or -1 with PES_ERR_ARG (core/thread out of range) / PES_ERR_NOMEM. */
int pes_sim_access(struct pes_sim *s, const struct pes_sim_access *a, struct pes_error *err);

/* Same as pes_sim_access on a[0..n-1] in order, faster (prefetches the
 * directory ahead). On error err->offset is the index of the failing access. */
int pes_sim_access_batch(struct pes_sim *s, const struct pes_sim_access *a, size_t n,
                         struct pes_error *err);

/* The same with the capacity / conflict split given: hits[a[i].shadow_at + j]
 * | more[a[i].shadow_at + j] (more NULL: hits alone) is
 * pes_sim_shadow_access's answer for the j-th line of a[i] (every line of
 * it, also those of other partitions: pes_sim_shadow_range; two arrays so
 * that the private and the shared stacks can fill theirs at the same time,
 * shadow.h). A simulation of one address partition takes them from one
 * shadow fed every access (its own shadow would see only its lines); a
 * whole one computes them itself in pes_sim_access(_batch). */
int pes_sim_access_batch_shadow(struct pes_sim *s, const struct pes_sim_access *a, size_t n,
                                const uint8_t *hits, const uint8_t *more, struct pes_error *err);

/*
 * Address partitions. The simulation splits exactly by the low b bits of
 * the line number when every level's set index keeps those bits (sets a
 * multiple of 2^b) and, for a physically indexed level (page_size, a cache
 * larger than a page's lines per way), they lie inside the page offset
 * (virtual = physical there, so random page frames never move a line to
 * another partition): lines of different partitions never meet in a set,
 * an eviction, an inclusion victim or a directory entry. Simulating each
 * partition apart (the same accesses in the same order, each partition
 * taking its lines) and adding the results with pes_sim_absorb gives every
 * count of the whole simulation, provided each core runs one thread
 * throughout (its last thread is per partition: pes-replay maps thread t to
 * core t). A partition's caches hold 1/2^b of the sets. The capacity /
 * conflict split needs a fully associative shadow of all lines: partitions
 * take it from pes_sim_access_batch_shadow (pes_sim_access refuses them).
 */
#define PES_SIM_MAX_PARTITION_BITS 8u
/* The largest b for this machine and page size (0: no split), at most
 * PES_SIM_MAX_PARTITION_BITS. */
uint32_t pes_sim_partition_bits(const struct pes_machine *m, uint64_t page_size);
/* The partition of a line number under b bits. */
static inline uint32_t pes_sim_partition_of(uint64_t lineno, uint32_t bits)
{
    return (uint32_t)(lineno & ((UINT64_C(1) << bits) - 1));
}
/* Adds the counts of src, a simulation of another partition of the same
 * accesses (same machine, cores and threads), to dst: totals, per thread,
 * per site, communication matrices, writebacks. 0, or -1 (PES_ERR_NOMEM, or
 * PES_ERR_ARG when they do not match). */
int pes_sim_absorb(struct pes_sim *dst, const struct pes_sim *src, struct pes_error *err);
/* The counts pes_sim_absorb adds, as bytes (host byte order, for processes
 * of one machine type: pes-replay-mpi): their size (buf NULL or cap too
 * small: only the size), and added to dst from such bytes; 0, or -1 with
 * err filled (cut short, another machine's shape, no memory). */
size_t pes_sim_pack(const struct pes_sim *s, void *buf, size_t cap);
int pes_sim_absorb_packed(struct pes_sim *dst, const void *buf, size_t len, struct pes_error *err);

uint32_t pes_sim_levels(const struct pes_sim *s);
uint32_t pes_sim_cores(const struct pes_sim *s);
uint32_t pes_sim_threads(const struct pes_sim *s);
uint64_t pes_sim_writebacks(const struct pes_sim *s); /* dirty lines leaving a core */
const struct pes_sim_stats *pes_sim_totals(const struct pes_sim *s);
const struct pes_sim_stats *pes_sim_thread(const struct pes_sim *s, uint32_t thread);
/* Per site; NULL if the site never accessed memory. Sites are 0 .. pes_sim_sites()-1,
 * plus pes_sim_site(s, UINT32_MAX) for unknown / pooled ids. */
uint32_t pes_sim_sites(const struct pes_sim *s);
const struct pes_sim_stats *pes_sim_site(const struct pes_sim *s, uint32_t site);

/* Rows keyed finer than the report's (call paths: sim.c gives (site, path)
 * ids): every row id < n becomes row key_of[id], rows of one key added; the
 * rows as they were go to *before ([n], malloc'd; zero for ids without
 * accesses). 0, or -1 without memory (nothing changed). */
int pes_sim_rekey_sites(struct pes_sim *s, const uint32_t *key_of, uint32_t n,
                        struct pes_sim_stats **before);

/* MESI state of the line holding addr in core's private caches: 'M','E','S','I'. */
char pes_sim_state(const struct pes_sim *s, uint32_t core, uint64_t addr);

enum pes_sim_comm_kind { PES_SIM_COMM_ALL, PES_SIM_COMM_TRUE, PES_SIM_COMM_FALSE };
/* Ordered matrix, row = supplier, column = requester; n x n with n = threads
 * (by_core 0) or cores (by_core 1). Written to out (n*n entries). */
void pes_sim_comm_ordered(const struct pes_sim *s, enum pes_sim_comm_kind kind, int by_core,
                          uint64_t *out);
/* ComDetective's matrix: out[i][j] = ordered[i][j] + ordered[j][i]; symmetric,
 * zero diagonal (transfers only happen between different cores). */
void pes_sim_comm_symmetric(const struct pes_sim *s, enum pes_sim_comm_kind kind, int by_core,
                            uint64_t *out);

#endif /* PES_REPLAY_MESI_H */
