/*
 * sampled.c — what the sampled analyses use of the trace's settings (read
 * once per trace, pes/settings.h), the names of the sampled analyses' options, and the
 * gathered record of their results (sampled.h). The analyses themselves are
 * replay/analyses/sampled_*.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampled.h"

/* The trace's settings as the analyses use them (what an older collector
 * did for a key it did not write: pes/settings.h's `absent` column). */
void replay_sampled_config_read(struct replay_sampled_config *s,
                                const struct pes_trace_info *header,
                                const struct pes_collect_settings *set)
{
    memset(s, 0, sizeof *s);
    if (pes_setting_format(pes_settings_find("mode"), set, s->mode, sizeof s->mode) < 0)
        snprintf(s->mode, sizeof s->mode, "unknown");
    s->period_load = set->period_load;
    s->period_store = set->period_store;
    s->line = set->line_size;
    s->debug_registers = set->debug_registers;
    s->watch_bytes = set->watch_bytes;
    s->sockets = set->sockets;
    /* a full trace of the same run marks time every time_interval accesses */
    s->time_interval = (double)set->time_interval;
    /* collectors that write a heap block's events only when an event needs it say so */
    s->heap_on_use = set->heap_events == PES_HEAP_EVENTS_USED;
    s->samples_target = set->samples_target;
    s->spatial = set->spatial;
    s->roi = set->roi_state == PES_ROI_MARKERS;
    s->censoring = set->censoring == PES_CENSORING_WATCH_EXPIRED;
    /* a trap watches D x M of L bytes: scale by L / (D x M) when that is < L */
    double covered = (double)s->debug_registers * s->watch_bytes;
    s->trap_scale = covered > 0 && covered < s->line ? (double)s->line / covered : 1.0;
    if (header)
        replay_execution_of(&s->exec, header);
}

int replay_sampled_bad_thread(struct pes_error *err, const char *path, uint64_t off, uint32_t t,
                              uint32_t n)
{
    err->code = PES_ERR_FORMAT;
    err->offset = off;
    snprintf(err->message, sizeof err->message,
             "%s: offset %llu: event of thread %u, but the trace announces %u threads", path,
             (unsigned long long)off, t, n);
    return -1;
}

int replay_reuse_estimator_parse(const char *name)
{
    if (!name || strcmp(name, "auto") == 0)
        return REPLAY_EST_AUTO;
    if (strcmp(name, "decided") == 0)
        return REPLAY_EST_DECIDED;
    if (strcmp(name, "censored") == 0)
        return REPLAY_EST_CENSORED;
    return -1;
}

const char *replay_reuse_estimator_name(int estimator)
{
    return estimator == REPLAY_EST_CENSORED ? "censored" : "decided";
}

int replay_stack_model_parse(const char *name)
{
    if (!name || strcmp(name, "phased") == 0)
        return REPLAY_STACK_PHASED;
    if (strcmp(name, "shen") == 0)
        return REPLAY_STACK_SHEN;
    return -1;
}

const char *replay_stack_model_name(int model)
{
    return model == REPLAY_STACK_SHEN ? "shen" : "phased";
}

int replay_comm_estimator_parse(const char *name)
{
    if (!name)
        return REPLAY_COMM_DEFAULT;
    if (strcmp(name, "comdetective") == 0)
        return REPLAY_COMM_COMDETECTIVE;
    if (strcmp(name, "interleave") == 0)
        return REPLAY_COMM_INTERLEAVE;
    return -1;
}

const char *replay_comm_estimator_name(int estimator)
{
    return estimator == REPLAY_COMM_COMDETECTIVE ? "comdetective" : "interleave";
}

void replay_sampled_free(struct replay_sampled *s)
{
    free(s->thread);
    free(s->comm_true);
    free(s->comm_false);
    free(s->sites);
    s->thread = NULL;
    s->comm_true = s->comm_false = NULL;
    s->sites = NULL;
    s->n_sites = 0;
}

uint64_t replay_site_line_key(const struct pes_site *site, uint32_t id)
{
    if (!site || !site->line || !site->file || !*site->file)
        return 1ull << 63 | id;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over file, then line */
    for (const char *p = site->file; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ site->line) * 1099511628211ull;
    return h & ~(1ull << 63);
}
