/* settings.c — the collector's settings table (pes/settings.h) and the
 * conversions every side uses: text -> value with one set of bounds and one
 * wording of errors, value -> text for the environment and the header. */
#include <stdio.h>
#include <string.h>

#include "pes/settings.h"

#define STR_(x)  #x
#define STR(x)   STR_(x)
#define FIELD(f) .name = #f, .field = offsetof(struct pes_collect_settings, f)
#define BOTH     (PES_SETTING_IN_FULL | PES_SETTING_IN_SAMPLED)
#define SAMPLED  PES_SETTING_IN_SAMPLED
#define SAMPLING PES_SETTING_SAMPLING

static const char *const modes[] = {"full", "samples", "reuse", "reuse-shared", "comm", NULL};
static const char *const granularities[] = {"temporal", "spatial", NULL};
static const char *const censorings[] = {"none", "watch_expired", NULL};
static const char *const roi_states[] = {"none", "markers", "ignored", NULL};
static const char *const heap_events[] = {"all", "used", NULL};
static const char *const watch_rearms[] = {"modify", "reopen", NULL};

/* In header order: the rows with a key are written in this order (the order
 * the runtime always wrote them in, full and sampled traces alike). */
const struct pes_setting pes_settings[] = {
    /* ---- where the traces go: pes-collect sets these itself (-o, --full-output, --force) */
    {FIELD(full_output), .env = "PES_FULL_OUTPUT", .type = PES_SETTING_PATH},
    {FIELD(sample_output), .env = "PES_SAMPLE_OUTPUT", .type = PES_SETTING_PATH},
    {FIELD(overwrite), .env = "PES_OVERWRITE", .type = PES_SETTING_BOOL, .max = 1},
    {FIELD(command), .env = "PES_COMMAND", .type = PES_SETTING_STRING},
    {FIELD(quiet), .flag = "quiet", .short_flag = 'q', .env = "PES_QUIET", .type = PES_SETTING_BOOL,
     .max = 1, .help = "no summary, no runtime warnings"},
    /* ---- the header, in order */
    /* a header without mode: the first collectors always wrote it (mode=full) */
    {FIELD(mode), .flag = "mode", .arg = "MODE", .env = "PES_MODE", .key = "mode",
     .type = PES_SETTING_CHOICE, .choices = modes, .min = PES_MODE_SAMPLES, .max = PES_MODE_COMM,
     .def = PES_MODE_SAMPLES, .absent = PES_MODE_FULL, .flags = SAMPLING | BOTH,
     .help = "record a sampled trace: samples, reuse (ReuseTracker),\n"
             "reuse-shared (shared-cache reuse), comm (ComDetective)"},
    /* pes-collect --backend (with auto) chooses it among the collector's
     * backends (collector/src/backend.h), which check the name; the header
     * names the one that ran */
    {FIELD(backend), .env = "PES_BACKEND", .key = "backend", .type = PES_SETTING_NAME,
     .def_name = "soft", .flags = SAMPLING | SAMPLED},
    {FIELD(pmu_sysfs), .env = "PES_PMU_SYSFS", .type = PES_SETTING_STRING,
     .flags = SAMPLING | PES_SETTING_TEST_HOOK},
    /* pes-collect --period N|load=N,store=M sets both; traces of the first
     * format had one key, period */
    {FIELD(period_load), .env = "PES_PERIOD_LOAD", .key = "period_load", .type = PES_SETTING_U64,
     .max = UINT32_MAX, .def = 100000, .legacy_key = "period", .flags = SAMPLING | SAMPLED},
    {FIELD(period_store), .env = "PES_PERIOD_STORE", .key = "period_store", .type = PES_SETTING_U64,
     .max = UINT32_MAX, .def = 100000, .legacy_key = "period", .flags = SAMPLING | SAMPLED},
    {FIELD(period_jitter), .key = "period_jitter", .type = PES_SETTING_NAME, .def_name = "1/8",
     .flags = SAMPLED},
    {FIELD(spatial), .flag = "granularity", .arg = "G", .env = "PES_GRANULARITY",
     .key = "granularity", .type = PES_SETTING_CHOICE, .choices = granularities, .max = 1,
     .flags = SAMPLING | SAMPLED,
     .help = "reuse: temporal (same bytes, default) or spatial (line)"},
    {FIELD(sockets), .flag = "sockets", .arg = "N", .env = "PES_SOCKETS", .key = "sockets",
     .type = PES_SETTING_U32, .max = 64, .flags = SAMPLING | SAMPLED,
     .help = "reuse-shared: simulate N sockets (thread i on i % N;\n0 = the real topology)"},
    {FIELD(debug_registers), .flag = "debug-registers", .arg = "N", .env = "PES_DEBUG_REGISTERS",
     .key = "debug_registers", .type = PES_SETTING_U32, .min = 1,
     .max = PES_SETTINGS_MAX_DEBUG_REGISTERS, .def = PES_SETTINGS_MAX_DEBUG_REGISTERS,
     .absent = PES_SETTINGS_MAX_DEBUG_REGISTERS, .flags = SAMPLING | SAMPLED,
     .help = "watchpoints per thread, {min}..{max} (default {default})"},
    /* PES_WATCH_REARM=reopen: the reopen path on any kernel (tests; modes/watch.c) */
    {FIELD(watch_rearm), .env = "PES_WATCH_REARM", .type = PES_SETTING_CHOICE,
     .choices = watch_rearms, .max = PES_WATCH_REARM_REOPEN,
     .flags = SAMPLING | PES_SETTING_TEST_HOOK},
    /* ComDetective's trap volume period x L / (D x M): registers D (above),
     * bytes per register M, line L */
    {FIELD(watch_bytes), .key = "watch_bytes", .type = PES_SETTING_U32, .min = 1, .max = 64,
     .def = 8, .absent = 8, .flags = SAMPLED},
    {FIELD(line_size), .key = "line_size", .type = PES_SETTING_U32, .min = 1, .max = 4096,
     .def = 64, .absent = 64, .flags = SAMPLED},
    /* reuse modes: every watch that ends undecided is a WATCH_EXPIRED event,
     * which the censoring-aware estimator needs; older traces: none */
    {FIELD(censoring), .key = "censoring", .type = PES_SETTING_CHOICE, .choices = censorings,
     .max = PES_CENSORING_WATCH_EXPIRED, .flags = SAMPLED},
    /* sampled traces too: the full trace's time resolution, which the
     * interleave comm estimator emulates (older sampled traces: the default) */
    {FIELD(time_interval), .flag = "time-interval", .arg = "N", .env = "PES_TIME_INTERVAL",
     .key = "time_interval", .type = PES_SETTING_U32, .min = 1, .max = UINT32_MAX, .def = 1024,
     .absent = 1024, .flags = BOTH, .help = "records between time marks (default {default})"},
    {FIELD(buffer_records), .flag = "buffer-records", .arg = "N", .env = "PES_BUFFER_RECORDS",
     .key = "buffer_records", .type = PES_SETTING_U32, .min = 16, .max = 1u << 26, .def = 65536,
     .absent = 65536, .flags = PES_SETTING_IN_FULL,
     .help = "records per thread buffer (default {default}, {min}..{max})"},
    {FIELD(seed), .flag = "seed", .arg = "N", .env = "PES_SEED", .key = "seed",
     .type = PES_SETTING_U64, .max = UINT64_MAX, .flags = SAMPLING | SAMPLED,
     .help = "sampler seed (default: from the clock)"},
    {FIELD(zstd_level), .flag = "zstd-level", .arg = "N", .env = "PES_ZSTD_LEVEL",
     .key = "zstd_level", .type = PES_SETTING_INT, .min = 1, .max = 22, .def = 1, .absent = 1,
     .flags = BOTH, .help = "compression level (default {default}, {min}..{max})"},
    {FIELD(writers), .flag = "writers", .arg = "N", .env = "PES_WRITERS", .type = PES_SETTING_U32,
     .min = 1, .max = 64,
     .help = "threads compressing the trace, {min}..{max} (default: one per\n"
             "CPU the program may run on, at most " STR(PES_SETTINGS_AUTO_WRITERS_MAX) ")"},
    {FIELD(abi_version), .key = "abi_version", .type = PES_SETTING_U32, .max = UINT32_MAX,
     .flags = BOTH},
    {FIELD(roi), .flag = "no-roi", .env = "PES_ROI", .type = PES_SETTING_BOOL, .max = 1, .def = 1,
     .help = "record the whole run in spite of pes_roi_begin/end markers"},
    /* traces before regions of interest: no markers */
    {FIELD(roi_state), .key = "roi", .type = PES_SETTING_CHOICE, .choices = roi_states,
     .max = PES_ROI_IGNORED, .flags = BOTH},
    /* heap=0 only when off; traces before it: heap recorded */
    {FIELD(heap), .flag = "no-heap", .env = "PES_HEAP", .key = "heap", .type = PES_SETTING_BOOL,
     .max = 1, .def = 1, .absent = 1, .flags = BOTH | PES_SETTING_UNLESS_DEFAULT,
     .help = "do not record heap allocations (their accesses: object\n"
             "unknown; saves ~0.25 us per malloc/free in sampled traces)"},
    /* stacks=0 only when off; traces before it have no stacks in their events */
    {FIELD(stacks), .flag = "no-stacks", .env = "PES_STACKS", .key = "stacks",
     .type = PES_SETTING_BOOL, .max = 1, .def = 1, .absent = 1,
     .flags = SAMPLING | SAMPLED | PES_SETTING_UNLESS_DEFAULT,
     .help = "do not give each sample its short call stack (the\n"
             "report's call paths, --by callpath; saves the unwinding)"},
    {FIELD(skip), .flag = "skip", .arg = "N", .env = "PES_SKIP", .key = "skip",
     .type = PES_SETTING_U64, .max = UINT64_MAX,
     .flags = PES_SETTING_IN_FULL | PES_SETTING_UNLESS_DEFAULT,
     .help = "full trace: do not record each thread's first N accesses\n"
             "(inside the region of interest, if the program has one)"},
    {FIELD(max_accesses), .flag = "max-accesses", .arg = "N", .env = "PES_MAX_ACCESSES",
     .key = "max_accesses", .type = PES_SETTING_U64, .min = 1, .max = UINT64_MAX,
     .flags = PES_SETTING_IN_FULL | PES_SETTING_UNLESS_DEFAULT,
     .help = "full trace: record at most N accesses per thread (after\n"
             "--skip); the program runs on unchanged"},
    /* heap_events=used: a sampled trace holds the heap blocks its events
     * need (with the heap recorded); older traces: every block */
    {FIELD(heap_events), .key = "heap_events", .type = PES_SETTING_CHOICE, .choices = heap_events,
     .max = PES_HEAP_EVENTS_USED, .flags = SAMPLED | PES_SETTING_UNLESS_DEFAULT},
    /* --samples: periods adapt per thread (PERIOD events); period_* are the caps */
    {FIELD(samples_target), .flag = "samples", .arg = "N", .env = "PES_SAMPLES",
     .key = "samples_target", .type = PES_SETTING_U64, .min = 1, .max = UINT32_MAX,
     .flags = SAMPLING | SAMPLED | PES_SETTING_UNLESS_DEFAULT,
     .help = "adapt the period per thread so that each thread long\n"
             "enough gets at least N decided outcomes (reuse modes)\n"
             "or N samples (samples, comm): start at --period / 64,\n"
             "double after every N, never above --period"},
    /* the adaptive schedule's levels: written with samples_target, and 6
     * is the only schedule there has been */
    {FIELD(period_levels), .key = "period_levels", .type = PES_SETTING_U32, .max = 63, .def = 6,
     .absent = 6, .flags = SAMPLED | PES_SETTING_ADAPTIVE},
    /* loop descriptors (pes/trace.h): the header says whether the run let
     * loops write them (1 only for a full trace without sampling, region,
     * --skip or --max-accesses); traces before them: a record per access */
    {FIELD(descriptors), .flag = "no-descriptors", .env = "PES_DESCRIPTORS", .key = "descriptors",
     .type = PES_SETTING_BOOL, .max = 1, .def = 1, .absent = 0, .flags = PES_SETTING_IN_FULL,
     .help = "full trace: a record per access in loops too, as traces\n"
             "before loop descriptors (larger, slower; for checking)"},
};
const size_t pes_settings_count = sizeof pes_settings / sizeof pes_settings[0];

const struct pes_setting *pes_settings_find(const char *name)
{
    for (size_t i = 0; name && i < pes_settings_count; i++)
        if (strcmp(pes_settings[i].name, name) == 0)
            return &pes_settings[i];
    return NULL;
}

/* ------------------------------------------------------------ one value */

static void *field_of(const struct pes_setting *row, struct pes_collect_settings *s)
{
    return (char *)s + row->field;
}

static const void *cfield_of(const struct pes_setting *row, const struct pes_collect_settings *s)
{
    return (const char *)s + row->field;
}

static int is_string(const struct pes_setting *row)
{
    return row->type == PES_SETTING_PATH || row->type == PES_SETTING_STRING ||
           row->type == PES_SETTING_NAME;
}

/* A NAME: 1..PES_SETTING_NAME_MAX-1 of letters, digits, '-', '_', '/', '.' */
static int is_name(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n >= PES_SETTING_NAME_MAX)
        return 0;
    for (; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
              *t == '-' || *t == '_' || *t == '/' || *t == '.'))
            return 0;
    return 1;
}

static void store_name(const struct pes_setting *row, struct pes_collect_settings *s,
                       const char *name)
{
    snprintf(field_of(row, s), PES_SETTING_NAME_MAX, "%s", name ? name : "");
}

static uint64_t n_choices(const struct pes_setting *row)
{
    uint64_t k = 0;
    while (row->choices && row->choices[k])
        k++;
    return k;
}

static void store(const struct pes_setting *row, struct pes_collect_settings *s, uint64_t v)
{
    void *f = field_of(row, s);
    switch (row->type) {
    case PES_SETTING_U32:
        *(uint32_t *)f = (uint32_t)v;
        break;
    case PES_SETTING_U64:
        *(uint64_t *)f = v;
        break;
    case PES_SETTING_INT:
    case PES_SETTING_BOOL:
    case PES_SETTING_CHOICE:
        *(int *)f = (int)v;
        break;
    case PES_SETTING_PATH:
    case PES_SETTING_STRING:
    case PES_SETTING_NAME:
        break;
    }
}

static uint64_t load(const struct pes_setting *row, const struct pes_collect_settings *s)
{
    const void *f = cfield_of(row, s);
    switch (row->type) {
    case PES_SETTING_U32:
        return *(const uint32_t *)f;
    case PES_SETTING_U64:
        return *(const uint64_t *)f;
    case PES_SETTING_INT:
    case PES_SETTING_BOOL:
    case PES_SETTING_CHOICE:
        return (uint64_t)(int64_t)*(const int *)f;
    case PES_SETTING_PATH:
    case PES_SETTING_STRING:
    case PES_SETTING_NAME:
        break;
    }
    return 0;
}

void pes_settings_defaults(struct pes_collect_settings *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < pes_settings_count; i++) {
        store(&pes_settings[i], s, pes_settings[i].def);
        if (pes_settings[i].type == PES_SETTING_NAME)
            store_name(&pes_settings[i], s, pes_settings[i].def_name);
    }
}

/* "a", "a or b", "a, b or c" of the choices first..last. */
static void choice_list(const struct pes_setting *row, uint64_t first, uint64_t last, char *buf,
                        size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint64_t i = first; i <= last && row->choices[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s",
                                 i == first  ? ""
                                 : i == last ? " or "
                                             : ", ",
                                 row->choices[i]);
}

/* What a value from `from` must be (a header may name every choice). */
static void expected(const struct pes_setting *row, enum pes_setting_source from, char *buf,
                     size_t n)
{
    switch (row->type) {
    case PES_SETTING_BOOL:
        snprintf(buf, n, "0 or 1");
        break;
    case PES_SETTING_CHOICE:
        choice_list(row, from == PES_SETTING_FROM_HEADER ? 0 : row->min,
                    from == PES_SETTING_FROM_HEADER ? n_choices(row) - 1 : row->max, buf, n);
        break;
    case PES_SETTING_PATH:
        snprintf(buf, n, "a file path");
        break;
    case PES_SETTING_STRING:
        snprintf(buf, n, "a string");
        break;
    case PES_SETTING_NAME:
        snprintf(buf, n, "a name (letters, digits, '-', '_', '/', '.'; at most %d)",
                 PES_SETTING_NAME_MAX - 1);
        break;
    default:
        if (row->min == 1 && row->max == UINT32_MAX)
            snprintf(buf, n, "a positive integer");
        else
            snprintf(buf, n, "an integer from %llu to %llu", (unsigned long long)row->min,
                     (unsigned long long)row->max);
    }
}

void pes_setting_expected(const struct pes_setting *row, char *buf, size_t n)
{
    expected(row, PES_SETTING_FROM_ENV, buf, n);
}

static int bad_value(const struct pes_setting *row, enum pes_setting_source from, const char *text,
                     struct pes_error *err)
{
    char what[160];
    expected(row, from, what, sizeof what);
    if (from == PES_SETTING_FROM_FLAG)
        return pes_error_set(err, PES_ERR_ARG, 0, "--%s: expected %s, got '%s'", row->flag, what,
                             text);
    if (from == PES_SETTING_FROM_ENV)
        return pes_error_set(err, PES_ERR_ARG, 0, "%s=%s: expected %s", row->env, text, what);
    return pes_error_set(err, PES_ERR_FORMAT, 0, "header config: %s=%s: expected %s", row->key,
                         text, what);
}

int pes_setting_parse(const struct pes_setting *row, enum pes_setting_source from, const char *text,
                      struct pes_collect_settings *s, struct pes_error *err)
{
    const char *name = from == PES_SETTING_FROM_FLAG  ? row->flag
                       : from == PES_SETTING_FROM_ENV ? row->env
                                                      : row->key;
    if (!name || !text)
        return pes_error_set(err, PES_ERR_ARG, 0, "setting %s: no such form, or no value",
                             row->name);
    uint64_t v;
    switch (row->type) {
    case PES_SETTING_PATH:
        if (!*text)
            return bad_value(row, from, text, err);
        *(const char **)field_of(row, s) = text;
        return 0;
    case PES_SETTING_STRING:
        *(const char **)field_of(row, s) = *text ? text : NULL;
        return 0;
    case PES_SETTING_NAME:
        if (*text && !is_name(text))
            return bad_value(row, from, text, err);
        store_name(row, s, *text ? text : row->def_name);
        return 0;
    case PES_SETTING_BOOL:
        if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
            return bad_value(row, from, text, err);
        store(row, s, text[0] == '1');
        return 0;
    case PES_SETTING_CHOICE:
        /* a header may name any choice (mode=full); flags and variables min..max */
        for (uint64_t i = 0; row->choices[i]; i++)
            if (strcmp(text, row->choices[i]) == 0 &&
                (from == PES_SETTING_FROM_HEADER || (i >= row->min && i <= row->max))) {
                store(row, s, i);
                return 0;
            }
        return bad_value(row, from, text, err);
    default:
        /* decimal digits only: no sign, blank or 0x; not above 2^64 - 1 */
        if (pes_parse_u64(text, 10, &v) < 0 || v < row->min || v > row->max)
            return bad_value(row, from, text, err);
        store(row, s, v);
        return 0;
    }
}

int pes_setting_format(const struct pes_setting *row, const struct pes_collect_settings *s,
                       char *buf, size_t n)
{
    int len = -1;
    uint64_t v = load(row, s);
    if (row->type == PES_SETTING_NAME) {
        len = snprintf(buf, n, "%s", (const char *)cfield_of(row, s));
    } else if (is_string(row)) {
        const char *str = *(const char *const *)cfield_of(row, s);
        len = snprintf(buf, n, "%s", str ? str : "");
    } else if (row->type == PES_SETTING_CHOICE) {
        if (v < n_choices(row))
            len = snprintf(buf, n, "%s", row->choices[v]);
    } else if (row->type == PES_SETTING_INT) {
        len = snprintf(buf, n, "%d", (int)(int64_t)v);
    } else {
        len = snprintf(buf, n, "%llu", (unsigned long long)v);
    }
    return len;
}

void pes_setting_help(const struct pes_setting *row, const char *text, char *buf, size_t n)
{
    static const char *const names[] = {"{default}", "{min}", "{max}"};
    size_t used = 0;
    buf[0] = '\0';
    if (!text)
        text = row->help ? row->help : "";
    for (const char *h = text; *h && used + 1 < n;) {
        int k = -1;
        for (int i = 0; i < 3 && k < 0; i++)
            if (strncmp(h, names[i], strlen(names[i])) == 0)
                k = i;
        if (k < 0) {
            buf[used++] = *h++;
            buf[used] = '\0';
            continue;
        }
        uint64_t v = k == 0 ? row->def : k == 1 ? row->min : row->max;
        int w = snprintf(buf + used, n - used, "%llu", (unsigned long long)v);
        used = w < 0 || (size_t)w >= n - used ? n - 1 : used + (size_t)w;
        h += strlen(names[k]);
    }
}

/* ------------------------------------------------------------ environment */

int pes_settings_from_env(struct pes_collect_settings *s, pes_getenv_fn get, void *ctx,
                          struct pes_error *err)
{
    pes_settings_defaults(s);
    /* the other rows first: PES_SAMPLE_OUTPUT says whether the sampling ones count */
    for (int sampling = 0; sampling < 2; sampling++) {
        if (sampling && !s->sample_output)
            break;
        for (size_t i = 0; i < pes_settings_count; i++) {
            const struct pes_setting *row = &pes_settings[i];
            if (!row->env || !(row->flags & PES_SETTING_SAMPLING) != !sampling)
                continue;
            const char *v = get(row->env, ctx);
            if (v && pes_setting_parse(row, PES_SETTING_FROM_ENV, v, s, err) < 0)
                return -1;
        }
    }
    if (!s->sample_output) {
        s->mode = PES_MODE_FULL;
        return 0;
    }
    if (!s->period_load && !s->period_store)
        return pes_error_set(err, PES_ERR_ARG, 0, "%s=0 and %s=0: nothing would be sampled",
                             pes_settings_find("period_load")->env,
                             pes_settings_find("period_store")->env);
    return 0;
}

/* ------------------------------------------------------------ header */

static int written(const struct pes_setting *row, const struct pes_collect_settings *s)
{
    unsigned kind = s->mode == PES_MODE_FULL ? PES_SETTING_IN_FULL : PES_SETTING_IN_SAMPLED;
    if (!row->key || !(row->flags & kind))
        return 0;
    if ((row->flags & PES_SETTING_UNLESS_DEFAULT) && load(row, s) == row->def)
        return 0;
    if ((row->flags & PES_SETTING_ADAPTIVE) && !s->samples_target)
        return 0;
    return 1;
}

int pes_settings_to_header(const struct pes_collect_settings *s, char *buf, size_t n)
{
    size_t used = 0;
    char value[64];
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < pes_settings_count; i++) {
        const struct pes_setting *row = &pes_settings[i];
        if (!written(row, s))
            continue;
        int len = pes_setting_format(row, s, value, sizeof value);
        if (len < 0 || (size_t)len >= sizeof value)
            return -1;
        int w = snprintf(buf + used, n - used, "%s=%s\n", row->key, value);
        if (w < 0 || (size_t)w >= n - used) {
            buf[used] = '\0';
            return -1;
        }
        used += (size_t)w;
    }
    return (int)used;
}

/* The value of `key` in config (first occurrence), copied to buf; NULL if absent. */
static const char *config_value(const char *config, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    for (const char *p = config; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = len - kl - 1 < n - 1 ? len - kl - 1 : n - 1;
            memcpy(buf, p + kl + 1, vl);
            buf[vl] = '\0';
            return buf;
        }
        p = end ? end + 1 : p + len;
    }
    return NULL;
}

int pes_settings_from_header(struct pes_collect_settings *s, const char *config,
                             struct pes_error *err)
{
    pes_settings_defaults(s);
    char buf[128];
    for (size_t i = 0; i < pes_settings_count; i++) {
        const struct pes_setting *row = &pes_settings[i];
        if (!row->key)
            continue;
        store(row, s, row->absent);
        if (row->type == PES_SETTING_NAME)
            store_name(row, s, row->def_name);
        const char *v = config_value(config, row->key, buf, sizeof buf);
        const char *key = row->key;
        if (!v && row->legacy_key && (v = config_value(config, row->legacy_key, buf, sizeof buf)))
            key = row->legacy_key;
        if (!v)
            continue;
        if (pes_setting_parse(row, PES_SETTING_FROM_HEADER, v, s, NULL) < 0) {
            char what[160];
            expected(row, PES_SETTING_FROM_HEADER, what,
                     sizeof what); /* named as the trace has it */
            return pes_error_set(err, PES_ERR_FORMAT, 0, "header config: %s=%s: expected %s", key,
                                 v, what);
        }
    }
    return 0;
}
