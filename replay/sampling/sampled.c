/*
 * sampled.c — the sampled trace's settings (its header's config lines, read
 * in one place), the names of the sampled analyses' options, and the
 * gathered record of their results (sampled.h). The analyses themselves are
 * replay/analyses/sampled_*.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampled.h"

/* Value of `key` in the header's "key=value" lines, or NULL. */
static const char *config_get(const char *config, const char *key, char *buf, size_t size) {
    size_t kl = strlen(key);
    for (const char *p = config; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = len - kl - 1 < size - 1 ? len - kl - 1 : size - 1;
            memcpy(buf, p + kl + 1, vl);
            buf[vl] = 0;
            return buf;
        }
        p = end ? end + 1 : p + len;
    }
    return NULL;
}

uint64_t replay_config_u64(const char *config, const char *key, uint64_t def) {
    char buf[64];
    const char *v = config_get(config, key, buf, sizeof buf);
    if (!v) return def;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return end != v ? (uint64_t)x : def;
}

int replay_config_spatial(const char *config) {
    char buf[32];
    const char *g = config_get(config, "granularity", buf, sizeof buf);
    return g && strcmp(g, "spatial") == 0;
}

void replay_sampled_config_read(struct replay_sampled_config *s, const struct pes_trace_info *header) {
    const char *config = header ? header->config : NULL;
    char buf[32];
    memset(s, 0, sizeof *s);
    const char *mode = config_get(config, "mode", buf, sizeof buf);
    snprintf(s->mode, sizeof s->mode, "%s", mode ? mode : "unknown");
    uint64_t period = replay_config_u64(config, "period", 0);
    s->period_load = replay_config_u64(config, "period_load", period);
    s->period_store = replay_config_u64(config, "period_store", period);
    s->line = (uint32_t)replay_config_u64(config, "line_size", 64);
    s->debug_registers = (uint32_t)replay_config_u64(config, "debug_registers", 4);
    s->watch_bytes = (uint32_t)replay_config_u64(config, "watch_bytes", 8);
    s->sockets = (uint32_t)replay_config_u64(config, "sockets", 0);
    /* the collector's default: a full trace of the same run marks time every 1024 accesses */
    s->time_interval = (double)replay_config_u64(config, "time_interval", 1024);
    if (!(s->time_interval > 0)) s->time_interval = 1024;
    /* collectors that write a heap block's events only when an event needs it say so */
    s->heap_on_use = config_get(config, "heap_events", buf, sizeof buf) != NULL;
    s->samples_target = replay_config_u64(config, "samples_target", 0);
    s->spatial = replay_config_spatial(config);
    const char *roi = config_get(config, "roi", buf, sizeof buf);
    s->roi = roi && strcmp(roi, "markers") == 0;
    const char *cens = config_get(config, "censoring", buf, sizeof buf);
    s->censoring = cens && strcmp(cens, "watch_expired") == 0;
    /* a trap watches D x M of L bytes: scale by L / (D x M) when that is < L */
    double covered = (double)s->debug_registers * s->watch_bytes;
    s->trap_scale = covered > 0 && covered < s->line ? (double)s->line / covered : 1.0;
    if (header) replay_execution_of(&s->exec, header);
}

int replay_sampled_bad_thread(struct pes_error *err, const char *path, uint64_t off, uint32_t t, uint32_t n) {
    err->code = PES_ERR_FORMAT;
    err->offset = off;
    snprintf(err->message, sizeof err->message,
             "%s: offset %llu: event of thread %u, but the trace announces %u threads", path,
             (unsigned long long)off, t, n);
    return -1;
}

int replay_reuse_estimator_parse(const char *name) {
    if (!name || strcmp(name, "auto") == 0) return REPLAY_EST_AUTO;
    if (strcmp(name, "decided") == 0) return REPLAY_EST_DECIDED;
    if (strcmp(name, "censored") == 0) return REPLAY_EST_CENSORED;
    return -1;
}

const char *replay_reuse_estimator_name(int estimator) {
    return estimator == REPLAY_EST_CENSORED ? "censored" : "decided";
}

int replay_stack_model_parse(const char *name) {
    if (!name || strcmp(name, "phased") == 0) return REPLAY_STACK_PHASED;
    if (strcmp(name, "shen") == 0) return REPLAY_STACK_SHEN;
    return -1;
}

const char *replay_stack_model_name(int model) { return model == REPLAY_STACK_SHEN ? "shen" : "phased"; }

int replay_comm_estimator_parse(const char *name) {
    if (!name) return REPLAY_COMM_DEFAULT;
    if (strcmp(name, "comdetective") == 0) return REPLAY_COMM_COMDETECTIVE;
    if (strcmp(name, "interleave") == 0) return REPLAY_COMM_INTERLEAVE;
    return -1;
}

const char *replay_comm_estimator_name(int estimator) {
    return estimator == REPLAY_COMM_COMDETECTIVE ? "comdetective" : "interleave";
}

void replay_sampled_free(struct replay_sampled *s) {
    free(s->thread);
    free(s->comm_true);
    free(s->comm_false);
    free(s->sites);
    s->thread = NULL;
    s->comm_true = s->comm_false = NULL;
    s->sites = NULL;
    s->n_sites = 0;
}

uint64_t replay_site_line_key(const struct pes_site *site, uint32_t id) {
    if (!site || !site->line || !site->file || !*site->file) return 1ull << 63 | id;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a over file, then line */
    for (const char *p = site->file; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ site->line) * 1099511628211ull;
    return h & ~(1ull << 63);
}
