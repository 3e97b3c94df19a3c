/*
 * assumptions.h — the levels where the model (SDCM) and the simulation
 * disagree by more than REPORT_DISAGREE_PP for a reason outside SDCM's
 * assumptions, named with their evidence (assumptions.c; docs/model.md,
 * "Outside the model's assumptions").
 */
#ifndef PES_REPLAY_ASSUMPTIONS_H
#define PES_REPLAY_ASSUMPTIONS_H

#include "report.h"

/* The band of reuse distances where SDCM's P(hit | D) is neither near 1 nor
 * near 0: a reuse there differs from an LRU cache whose lines fill its sets
 * evenly (hit iff D < blocks) by more than PES_ASSUMPTIONS_BAND_EDGE. */
#define PES_ASSUMPTIONS_BAND_EDGE 0.05

/* [*lo, *hi) of a level of `blocks` lines and `ways` ways: *lo the smallest D
 * with P(hit | D) < 1 - EDGE, *hi the smallest D with P(hit | D) <= EDGE.
 * An empty band (*lo == *hi == blocks) for a fully associative level
 * (ways 0 or ways >= blocks), where SDCM is LRU exactly. */
void pes_assumptions_band(uint64_t blocks, uint32_t ways, uint64_t *lo, uint64_t *hi);

/* Adds "model_assumptions" (only where a level meets a rule) to every
 * configuration of a full report that has both a model and a simulation;
 * after every analysis has published, before the findings. */
void pes_assumptions_add(struct pes_report *r);

#endif
