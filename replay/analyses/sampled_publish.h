/*
 * sampled_publish.h — report pieces that several sampled analyses
 * (sampled_*.c) and the accuracy join (accuracy.c) publish.
 */
#ifndef PES_REPLAY_SAMPLED_PUBLISH_H
#define PES_REPLAY_SAMPLED_PUBLISH_H

#include "report.h"
#include "sampled.h"

/* "mode", "period_load", "period_store" of the sampled trace (and
 * "samples_target", "region" when they apply, "interval_bias"). */
void replay_publish_sampled_config(struct pes_report *r, struct pes_rnode *o,
                                   const struct replay_sampled_config *c,
                                   const struct replay_ci *ci);
/* A histogram of PES_RT_BINS bins as [{"lo","hi","count"}], empty bins left out. */
void replay_publish_rt_histogram(struct pes_report *r, struct pes_rnode *parent, const char *key,
                                 const double *h);

/* The same with each bin's share of the total and its 90 % interval
 * ("share", "share_ci90": [lo, hi]; replay_ci90 of family f with n_eff). */
void replay_publish_rt_histogram_ci(struct pes_report *r, struct pes_rnode *parent, const char *key,
                                    const double *h, const struct replay_ci *ci,
                                    enum replay_ci_family f, double n_eff);
/* key: [lo, hi], the stated 90 % interval (replay_ci90, family f) of
 * proportion p from n_eff observations; null when p is undefined (NaN). */
void replay_publish_ci(struct pes_report *r, struct pes_rnode *o, const char *key,
                       const struct replay_ci *ci, enum replay_ci_family f, double p, double n_eff);

/* The first `top` of n rows of event counts (a site's, a group's, an
 * object's) by invalidations, then communication events, then samples, as
 * indexes into idx; returns how many. */
size_t replay_sampled_top_rows(const struct replay_sampled_site *rows, size_t n, uint32_t top,
                               size_t *idx);

#endif
