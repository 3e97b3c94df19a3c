/*
 * shadow — the fully associative LRU caches that split the simulation's
 * non-compulsory, non-coherence misses into capacity and conflict misses
 * (Hill's 3C): a miss of a set-associative level is a conflict miss when a
 * fully associative LRU cache of the same number of lines would have held
 * the line, else a capacity miss (docs/simulation.md, "Miss causes").
 *
 * One LRU stack per core serves every private level and one per socket
 * every shared level: fully associative LRU caches of growing sizes fed the
 * same stream are nested (stack inclusion), so a line is in the cache of
 * level k iff its stack position is below that level's lines. Each stack
 * sees every access of its core (socket), in global order: the caches'
 * contents then depend on that stream alone, not on the set-associative
 * levels above, which is what lets the partitioned simulation (mesi.h)
 * stay exact: one shadow, fed serially, answers for every partition.
 */
#ifndef PES_REPLAY_SHADOW_H
#define PES_REPLAY_SHADOW_H

#include <stdint.h>
#include "pes/model.h"
#include "pes/trace.h"

struct pes_sim_shadow;

/* The shadow of machine m's levels for n_cores cores, core c on socket
 * core_socket[c] (NULL: c / m->cores_per_socket). NULL with err filled. */
struct pes_sim_shadow *pes_sim_shadow_create(const struct pes_machine *m, uint32_t n_cores,
                                             const uint32_t *core_socket, struct pes_error *err);
void pes_sim_shadow_destroy(struct pes_sim_shadow *sh);
/* Core's access to line number lineno: bit k of the result is set when the
 * fully associative cache of level k (of core's private stack or of its
 * socket's shared one) held the line before the access; then the line
 * becomes most recently used in both stacks. Never fails (the stacks are
 * allocated at their full size). */
int pes_sim_shadow_access(struct pes_sim_shadow *sh, uint32_t core, uint64_t lineno);
/* The same for every line of core's access [addr, addr + size) (size 0 counts
 * as 1; clamped at the end of the address space, as mesi.c splits it), in
 * order, lines of line_shift bits: out[j] the bits of its j-th line
 * (pes_sim_shadow_lines of them). Returns the number of lines. */
uint64_t pes_sim_shadow_range(struct pes_sim_shadow *sh, uint32_t core, uint64_t addr,
                              uint32_t size, unsigned line_shift, uint8_t *out);
/* The number of lines pes_sim_shadow_range reports for such an access. */
uint64_t pes_sim_shadow_lines(uint64_t addr, uint32_t size, unsigned line_shift);

/*
 * The stacks one at a time, so that each can be fed on its own thread: a
 * stack's answers depend on its own stream alone (its core's, its socket's
 * accesses in order), so different stacks may be fed at the same time from
 * different threads, each stack from one thread at a time. Stacks
 * 0 .. n_cores-1 are the cores' private ones, n_cores + s socket s's shared
 * one; pes_sim_shadow_access(core, line) is
 * stack_access(core's) | stack_access(its socket's).
 */
uint32_t pes_sim_shadow_stacks(const struct pes_sim_shadow *sh);
/* The private stack of core (shared 0) or of its socket (shared 1). */
uint32_t pes_sim_shadow_stack_of(const struct pes_sim_shadow *sh, uint32_t core, int shared);
/* pes_sim_shadow_range's bits of that one stack: out[j] its levels' bits for
 * the j-th line of the access (0 when it has no level). Returns the lines. */
uint64_t pes_sim_shadow_stack_range(struct pes_sim_shadow *sh, uint32_t stack, uint64_t addr,
                                    uint32_t size, unsigned line_shift, uint8_t *out);

#endif /* PES_REPLAY_SHADOW_H */
