/*
 * findings.h — what a report found, in words: up to PES_FINDINGS_MAX ranked
 * findings, each with its evidence (numbers of the report) and the fix,
 * derived from the report's tree by the rules of findings.c (docs/report.md,
 * "Findings").
 */
#ifndef PES_REPLAY_FINDINGS_H
#define PES_REPLAY_FINDINGS_H

#include "report.h"

#define PES_FINDINGS_MAX 5

/* Appends "findings" (an array, possibly empty) to the root of a full or
 * sampled report, after every analysis has published; a --compare report
 * gets none (it compares estimates, it does not diagnose a program). */
void pes_findings_add(struct pes_report *r);

/* The sentence a report prints when no rule fires: the thresholds. */
const char *pes_findings_none(void);

#endif
