/*
 * sampled_results.c — the sampled analyses' results gathered in one record
 * (sampled_results.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sampled_results.h"
#include "weights.h"

int replay_sampled_gather(const struct pes_siblings *sib, const struct pes_stream_info *si,
                          const struct replay_ci *ci, struct replay_sampled *s,
                          struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    const void *counts = pes_sibling(sib, &pes_analysis_sampled_counts);
    const void *reuse = pes_sibling(sib, &pes_analysis_sampled_reuse);
    const void *comm = pes_sibling(sib, &pes_analysis_sampled_comm);
    const void *sites = pes_sibling(sib, &pes_analysis_sampled_sites);
    if (!counts || !reuse || !comm || !sites)
        return pes_error_set(err, PES_ERR_ARG, 0, "the sampled analyses did not all run on %s",
                             si->path);
    struct replay_sampled_config c;
    replay_sampled_config_read(&c, si->header, si->settings);
    memcpy(s->mode, c.mode, sizeof s->mode);
    s->period_load = c.period_load;
    s->period_store = c.period_store;
    s->samples_target = c.samples_target;
    s->line = c.line;
    s->debug_registers = c.debug_registers;
    s->watch_bytes = c.watch_bytes;
    s->sockets = c.sockets;
    s->trap_scale = c.trap_scale;
    s->spatial = c.spatial;
    s->roi = c.roi;
    s->censoring = c.censoring;
    s->heap_on_use = c.heap_on_use;
    s->exec = c.exec;
    memcpy(s->ci_bias, ci->bias, sizeof s->ci_bias);
    s->ci_calibrated = ci->calibrated;
    s->n_threads = si->n_streams;
    if (!(s->thread = calloc(s->n_threads ? s->n_threads : 1, sizeof *s->thread)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    for (uint32_t t = 0; t < s->n_threads && si->weights; t++) {
        struct pes_period_schedule p;
        pes_weights_schedule(si->weights, t, &p);
        s->thread[t].period_first_load = p.first_load;
        s->thread[t].period_first_store = p.first_store;
        s->thread[t].period_last_load = p.last_load;
        s->thread[t].period_last_store = p.last_store;
        s->thread[t].period_changes = p.changes;
    }
    replay_sampled_counts_export(counts, s);
    replay_sampled_reuse_export(reuse, s);
    if (replay_sampled_comm_export(comm, s, err) < 0 ||
        replay_sampled_sites_export(sites, s, err) < 0) {
        replay_sampled_free(s);
        return -1;
    }
    return 0;
}
