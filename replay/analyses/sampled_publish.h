/*
 * sampled_publish.h — report pieces the sampled analyses (sampled.c) and
 * the accuracy join (accuracy.c) both publish.
 */
#ifndef PES_REPLAY_SAMPLED_PUBLISH_H
#define PES_REPLAY_SAMPLED_PUBLISH_H

#include "accuracy.h"
#include "report.h"

/* "mode", "period_load", "period_store" of the sampled trace. */
void replay_publish_sampled_config(struct pes_report *r, struct pes_rnode *o, const struct replay_sampled *s);
/* A histogram of PES_RT_BINS bins as [{"lo","hi","count"}], empty bins left out. */
void replay_publish_rt_histogram(struct pes_report *r, struct pes_rnode *parent, const char *key, const double *h);

/* The same with each bin's share of the total and its 90 % interval
 * ("share", "share_ci90": [lo, hi]; replay_interval90 of family f with n_eff). */
void replay_publish_rt_histogram_ci(struct pes_report *r, struct pes_rnode *parent, const char *key, const double *h,
                                    const struct replay_sampled *s, enum replay_ci_family f, double n_eff);
/* key: [lo, hi], the stated 90 % interval (replay_interval90, family f) of
 * proportion p from n_eff observations; null when p is undefined (NaN). */
void replay_publish_ci(struct pes_report *r, struct pes_rnode *o, const char *key, const struct replay_sampled *s,
                       enum replay_ci_family f, double p, double n_eff);

#endif
