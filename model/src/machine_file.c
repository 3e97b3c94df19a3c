/* .machine preset files: "key = value" lines, '#' comments (docs/model.md). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef PES_MACHINES_DIR
#define PES_MACHINES_DIR "model/machines"
#endif
#define MAX_FILE (64 * 1024)

enum { F_SIZE, F_WAYS, F_LINE, F_SHARED, F_LAT, F_RTHR, F_LEVEL_KEYS };
static const char *const level_keys[F_LEVEL_KEYS] = {"size",   "ways",    "line",
                                                     "shared", "latency", "recip_throughput"};

/* Which keys were seen, to reject duplicates and report missing ones. */
struct seen {
    unsigned top;                   /* bit 0 name, 1 ghz, 2 sockets, 3 cores,
                                                 4 validation, 5 issue_width, 6 mlp */
    unsigned error;                 /* bit 0 model, 1 mean, 2 max, 3 runs */
    unsigned level[PES_MAX_LEVELS]; /* bit per level key */
    unsigned mem;                   /* bit 0 latency, 1 recip_throughput */
    unsigned op[PES_OP_COUNT];
    unsigned extra;                   /* bit 0 tlb.entries, 1 tlb.page, 2 tlb.miss_latency,
                                       3 prefetch.max_stride */
    unsigned tlb_line;                /* line of the first tlb.* key (for a missing partner) */
    unsigned bw_line[PES_MAX_LEVELS]; /* line of the first L<i>.bandwidth.<T> key */
};

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

static int mark(unsigned *set, unsigned bit, const char *src, unsigned line, const char *key,
                struct pes_error *err)
{
    if (*set & (1u << bit))
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: duplicate key '%s'", src, line, key);
    *set |= 1u << bit;
    return 0;
}

static int set_cost(double *dst, const char *val, const char *src, unsigned line, const char *key,
                    struct pes_error *err)
{
    double v;
    if (pes_model_parse_double(val, &v) || v < 0)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad value '%s' (want a number >= 0)",
                              src, line, key, val);
    *dst = v;
    return 0;
}

/* KEY.<T> = value: one point of a thread curve, kept sorted by T whatever
 * the order of the lines. tstr is the text after the last dot. */
static int curve_key(struct pes_thread_curve *c, const char *tstr, const char *val, const char *src,
                     unsigned line, const char *key, struct pes_error *err)
{
    uint64_t t;
    if (pes_model_parse_u64(tstr, &t) || t < 1 || t > 65536)
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "%s:%u: %s: bad thread count '%s' (want 1..65536)", src, line, key,
                              tstr);
    double v;
    if (pes_model_parse_double(val, &v) || !(v > 0) || !isfinite(v))
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad value '%s' (want a number > 0)",
                              src, line, key, val);
    uint32_t i = 0;
    while (i < c->n && c->threads[i] < t)
        i++;
    if (i < c->n && c->threads[i] == t)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: duplicate key '%s'", src, line, key);
    if (c->n == PES_CURVE_POINTS)
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "%s:%u: %s: more than %d thread counts for one curve", src, line, key,
                              PES_CURVE_POINTS);
    memmove(&c->threads[i + 1], &c->threads[i], (c->n - i) * sizeof c->threads[0]);
    memmove(&c->value[i + 1], &c->value[i], (c->n - i) * sizeof c->value[0]);
    c->threads[i] = (uint32_t)t;
    c->value[i] = v;
    c->n++;
    return 0;
}

/* omp.fork_join.<T>, omp.barrier.<T>, mem.bandwidth.<T>, L<i>.bandwidth.<T>,
 * compute.throughput.<T>:
 * `name` is the key without ".<T>"; 1 if it is none of those. */
static int is_curve(const char *key, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(key, name, n) && key[n] == '.';
}

static int level_key(struct pes_machine *m, struct seen *sn, unsigned lv, const char *sub,
                     const char *val, const char *src, unsigned line, const char *key,
                     struct pes_error *err)
{
    if (is_curve(sub, "bandwidth")) {
        if (!sn->bw_line[lv])
            sn->bw_line[lv] = line;
        return curve_key(&m->level[lv].bandwidth, sub + 10, val, src, line, key, err);
    }
    int k = -1;
    for (int i = 0; i < F_LEVEL_KEYS; i++)
        if (!strcmp(sub, level_keys[i]))
            k = i;
    if (k < 0)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: unknown key '%s'", src, line, key);
    if (mark(&sn->level[lv], (unsigned)k, src, line, key, err))
        return -1;
    struct pes_cache_config *c = &m->level[lv];
    uint64_t u;
    switch (k) {
    case F_SIZE:
        if (pes_model_parse_size(val, &c->size) || c->size == 0)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad size '%s'", src, line, key,
                                  val);
        return 0;
    case F_WAYS:
    case F_LINE:
        if (pes_model_parse_u64(val, &u) || u > UINT32_MAX)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad number '%s'", src, line, key,
                                  val);
        *(k == F_WAYS ? &c->ways : &c->line) = (uint32_t)u;
        return 0;
    case F_SHARED:
        if (!strcmp(val, "shared") || !strcmp(val, "1"))
            c->shared = 1;
        else if (!strcmp(val, "private") || !strcmp(val, "0"))
            c->shared = 0;
        else
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: '%s' is not private or shared",
                                  src, line, key, val);
        return 0;
    case F_LAT:
        return set_cost(&c->latency, val, src, line, key, err);
    default:
        return set_cost(&c->recip_throughput, val, src, line, key, err);
    }
}

/* error.model / error.mean / error.max / error.runs: the measured error band
 * (all four or none, checked in check_complete). */
static int error_key(struct pes_machine *m, struct seen *sn, const char *sub, const char *val,
                     const char *src, unsigned line, const char *key, struct pes_error *err)
{
    static const char *const subs[] = {"model", "mean", "max", "runs"};
    unsigned k = 0;
    while (k < 4 && strcmp(sub, subs[k]))
        k++;
    if (k == 4)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: unknown key '%s'", src, line, key);
    if (mark(&sn->error, k, src, line, key, err))
        return -1;
    struct pes_machine_error_band *b = &m->error;
    if (k == 0) {
        for (int rm = PES_RUNTIME_PPT; rm <= PES_RUNTIME_OVERLAP; rm++)
            if (!strcmp(val, pes_runtime_model_name((enum pes_runtime_model)rm))) {
                b->model = (enum pes_runtime_model)rm;
                return 0;
            }
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: '%s' is not overlap or ppt", src,
                              line, key, val);
    }
    if (k == 3) {
        uint64_t u;
        if (pes_model_parse_u64(val, &u) || u == 0 || u > 1000000)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad count '%s'", src, line, key,
                                  val);
        b->runs = (uint32_t)u;
        return 0;
    }
    double v;
    if (pes_model_parse_double(val, &v) || !(v >= 0) || !isfinite(v))
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "%s:%u: %s: bad value '%s' (a relative error >= 0)", src, line, key,
                              val);
    *(k == 1 ? &b->mean : &b->max) = v;
    return 0;
}

/* tlb.entries, tlb.page (a size: 4K), tlb.miss_latency, prefetch.max_stride
 * (bytes, a size) */
static int reach_key(struct pes_machine *m, struct seen *sn, const char *key, const char *val,
                     const char *src, unsigned line, struct pes_error *err)
{
    static const char *const keys[] = {"tlb.entries", "tlb.page", "tlb.miss_latency",
                                       "prefetch.max_stride"};
    unsigned k = 0;
    while (k < 4 && strcmp(key, keys[k]))
        k++;
    if (k == 4)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: unknown key '%s'", src, line, key);
    if (mark(&sn->extra, k, src, line, key, err))
        return -1;
    if (k < 3 && !sn->tlb_line)
        sn->tlb_line = line;
    uint64_t u;
    double v;
    switch (k) {
    case 0:
        if (pes_model_parse_u64(val, &u) || u == 0 || u > UINT32_MAX)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad count '%s' (want >= 1)", src,
                                  line, key, val);
        m->tlb_entries = (uint32_t)u;
        return 0;
    case 1:
        if (pes_model_parse_size(val, &u) || u == 0 || (u & (u - 1)) || u > (1ull << 30))
            return pes_model_fail(err, PES_ERR_FORMAT,
                                  "%s:%u: %s: bad size '%s' (want a power of two, 1 .. 1G)", src,
                                  line, key, val);
        m->tlb_page = (uint32_t)u;
        return 0;
    case 3:
        if (pes_model_parse_size(val, &u) || u == 0 || u > (1ull << 30))
            return pes_model_fail(err, PES_ERR_FORMAT,
                                  "%s:%u: %s: bad size '%s' (want bytes, 1 .. 1G)", src, line, key,
                                  val);
        m->prefetch_max_stride = (double)u;
        return 0;
    default:
        if (pes_model_parse_double(val, &v) || !(v > 0) || !isfinite(v))
            return pes_model_fail(err, PES_ERR_FORMAT,
                                  "%s:%u: %s: bad value '%s' (want a number > 0)", src, line, key,
                                  val);
        m->tlb_miss_latency = v;
        return 0;
    }
}

static int one_line(struct pes_machine *m, struct seen *sn, char *text, const char *src,
                    unsigned line, struct pes_error *err)
{
    char *eq = strchr(text, '=');
    if (!eq)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: expected 'key = value', got '%s'", src,
                              line, text);
    *eq = 0;
    char *key = trim(text), *val = trim(eq + 1);
    if (!*val)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: missing value", src, line, key);
    uint64_t u;
    if (!strcmp(key, "name")) {
        if (mark(&sn->top, 0, src, line, key, err))
            return -1;
        if (strlen(val) >= sizeof m->name)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: name too long", src, line);
        strcpy(m->name, val);
        return 0;
    }
    if (!strcmp(key, "validation")) { /* optional: files older than it are unvalidated */
        if (mark(&sn->top, 4, src, line, key, err))
            return -1;
        if (!strcmp(val, "unvalidated"))
            m->validation = PES_MACHINE_UNVALIDATED;
        else if (!strcmp(val, "preset"))
            m->validation = PES_MACHINE_PRESET;
        else if (!strcmp(val, "calibrated"))
            m->validation = PES_MACHINE_CALIBRATED;
        else
            return pes_model_fail(
                err, PES_ERR_FORMAT,
                "%s:%u: validation: '%s' is not unvalidated, preset or calibrated", src, line, val);
        return 0;
    }
    if (!strcmp(key, "ghz")) {
        if (mark(&sn->top, 1, src, line, key, err))
            return -1;
        if (pes_model_parse_double(val, &m->ghz) || !(m->ghz > 0))
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: ghz: bad value '%s'", src, line,
                                  val);
        return 0;
    }
    if (!strcmp(key, "sockets") || !strcmp(key, "cores_per_socket")) {
        int cores = key[0] == 'c';
        if (mark(&sn->top, cores ? 3 : 2, src, line, key, err))
            return -1;
        if (pes_model_parse_u64(val, &u) || u == 0 || u > 65536)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad count '%s'", src, line, key,
                                  val);
        *(cores ? &m->cores_per_socket : &m->sockets) = (uint32_t)u;
        return 0;
    }
    if (!strcmp(key, "issue_width") || !strcmp(key, "mlp")) {
        int mlp = key[0] == 'm';
        if (mark(&sn->top, mlp ? 6 : 5, src, line, key, err))
            return -1;
        double v;
        if (pes_model_parse_double(val, &v) || !(v >= 1.0) || !isfinite(v))
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: %s: bad value '%s' (>= 1)", src,
                                  line, key, val);
        *(mlp ? &m->mlp : &m->issue_width) = v;
        return 0;
    }
    if (!strncmp(key, "error.", 6))
        return error_key(m, sn, key + 6, val, src, line, key, err);
    if ((key[0] == 'L' || key[0] == 'l') && key[1] >= '1' && key[1] <= '0' + PES_MAX_LEVELS &&
        key[2] == '.')
        return level_key(m, sn, (unsigned)(key[1] - '1'), key + 3, val, src, line, key, err);
    if (is_curve(key, "omp.fork_join"))
        return curve_key(&m->fork_join, key + 14, val, src, line, key, err);
    if (is_curve(key, "omp.barrier"))
        return curve_key(&m->barrier, key + 12, val, src, line, key, err);
    if (is_curve(key, "mem.bandwidth"))
        return curve_key(&m->mem_bandwidth, key + 14, val, src, line, key, err);
    if (is_curve(key, "compute.throughput")) {
        /* T threads retire at most T threads' worth */
        uint64_t t;
        double v;
        if (!pes_model_parse_u64(key + 19, &t) && t >= 1 && !pes_model_parse_double(val, &v) &&
            v > (double)t)
            return pes_model_fail(err, PES_ERR_FORMAT,
                                  "%s:%u: %s: %s is more than %llu threads' worth", src, line, key,
                                  val, (unsigned long long)t);
        return curve_key(&m->compute_throughput, key + 19, val, src, line, key, err);
    }
    if (!strncmp(key, "tlb.", 4) || !strcmp(key, "prefetch.max_stride"))
        return reach_key(m, sn, key, val, src, line, err);
    if (!strncmp(key, "mem.", 4)) {
        int thr = !strcmp(key + 4, "recip_throughput");
        if (!thr && strcmp(key + 4, "latency"))
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: unknown key '%s'", src, line, key);
        if (mark(&sn->mem, (unsigned)thr, src, line, key, err))
            return -1;
        return set_cost(thr ? &m->mem_recip_throughput : &m->mem_latency, val, src, line, key, err);
    }
    if (!strncmp(key, "op.", 3)) {
        const char *dot = strrchr(key, '.');
        for (int o = 0; o < PES_OP_COUNT; o++) {
            const char *name = pes_machine_op_key(o);
            size_t len = strlen(name);
            if (dot != key + 3 + len || strncmp(key + 3, name, len))
                continue;
            int thr = !strcmp(dot + 1, "recip_throughput");
            if (!thr && strcmp(dot + 1, "latency"))
                break;
            if (mark(&sn->op[o], (unsigned)thr, src, line, key, err))
                return -1;
            return set_cost(thr ? &m->op_recip_throughput[o] : &m->op_latency[o], val, src, line,
                            key, err);
        }
    }
    return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: unknown key '%s'", src, line, key);
}

static int check_complete(struct pes_machine *m, const struct seen *sn, const char *src,
                          struct pes_error *err)
{
    static const char *const top[] = {"name", "ghz", "sockets", "cores_per_socket"};
    for (unsigned b = 1; b < 4; b++)
        if (!(sn->top & (1u << b)))
            return pes_model_fail(err, PES_ERR_FORMAT, "%s: missing key '%s'", src, top[b]);
    unsigned n = 0;
    for (unsigned i = 0; i < PES_MAX_LEVELS; i++)
        if (sn->level[i])
            n = i + 1;
    if (!n)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s: no cache levels (L1.size = ...)", src);
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < F_LEVEL_KEYS; k++)
            if (!(sn->level[i] & (1u << k)))
                return pes_model_fail(err, PES_ERR_FORMAT, "%s: missing key 'L%u.%s'", src, i + 1,
                                      level_keys[k]);
    m->n_levels = n;
    for (unsigned i = n; i < PES_MAX_LEVELS; i++)
        if (sn->bw_line[i])
            return pes_model_fail(err, PES_ERR_FORMAT,
                                  "%s:%u: L%u.bandwidth.* for a level the file does not describe",
                                  src, sn->bw_line[i], i + 1);
    /* the TLB term needs its reach: entries and page size together */
    if ((sn->extra & 7) && (sn->extra & 3) != 3)
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "%s:%u: tlb.entries and tlb.page go together (missing '%s')", src,
                              sn->tlb_line, sn->extra & 1 ? "tlb.page" : "tlb.entries");
    if (sn->error && sn->error != 15)
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "%s: error.model, error.mean, error.max and error.runs go "
                              "together (bench/model_vs_host.py --record writes them)",
                              src);
    if (sn->error && m->error.mean > m->error.max)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s: error.mean %g > error.max %g", src,
                              m->error.mean, m->error.max);
    if (sn->mem != 3)
        return pes_model_fail(err, PES_ERR_FORMAT, "%s: missing key 'mem.%s'", src,
                              sn->mem & 1 ? "recip_throughput" : "latency");
    for (int o = 0; o < PES_OP_COUNT; o++)
        if (sn->op[o] != 3)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s: missing key 'op.%s.%s'", src,
                                  pes_machine_op_key(o),
                                  sn->op[o] & 1 ? "recip_throughput" : "latency");
    return 0;
}

int pes_machine_parse(const char *text, const char *source, struct pes_machine *m,
                      struct pes_error *err)
{
    if (!text || !m)
        return pes_model_fail(err, PES_ERR_ARG, "pes_machine_parse: NULL argument");
    const char *src = source ? source : "machine";
    struct pes_machine tmp;
    memset(&tmp, 0, sizeof tmp);
    struct seen sn;
    memset(&sn, 0, sizeof sn);
    char buf[512];
    unsigned line = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        if (len >= sizeof buf)
            return pes_model_fail(err, PES_ERR_FORMAT, "%s:%u: line too long", src, line);
        memcpy(buf, p, len);
        buf[len] = 0;
        p += len + (nl ? 1 : 0);
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *t = trim(buf);
        if (*t && one_line(&tmp, &sn, t, src, line, err))
            return -1;
    }
    if (check_complete(&tmp, &sn, src, err))
        return -1;
    tmp.issue_width = pes_machine_issue_width(&tmp); /* optional keys: explicit defaults */
    tmp.mlp = pes_machine_mlp(&tmp);
    if (!tmp.name[0]) { /* default: the file's base name */
        const char *b = strrchr(src, '/');
        b = b ? b + 1 : src;
        size_t n = strcspn(b, ".");
        if (n >= sizeof tmp.name)
            n = sizeof tmp.name - 1;
        memcpy(tmp.name, b, n);
    }
    if (pes_machine_validate(&tmp, err)) {
        char msg[sizeof err->message];
        if (err) {
            snprintf(msg, sizeof msg, "%s: %s", src, err->message);
            memcpy(err->message, msg, sizeof msg);
            err->code = PES_ERR_FORMAT;
        }
        return -1;
    }
    *m = tmp;
    return 0;
}

/* Where bare machine names resolve: $PES_MACHINES_DIR, else the presets an
 * install put beside the running command (BIN/../share/pes/machines, found
 * from /proc/self/exe so that an install can move), else the source tree's. */
static const char *machines_dir(void)
{
    const char *d = getenv("PES_MACHINES_DIR");
    if (d && *d)
        return d;
    static char installed[4096];
    static int looked;
    if (!looked) {
        looked = 1;
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        struct stat st;
        if (slash &&
            snprintf(installed, sizeof installed, "%.*s/%s", (int)(slash - exe), exe,
                     PES_MACHINES_FROM_BIN) < (int)sizeof installed &&
            stat(installed, &st) == 0 && S_ISDIR(st.st_mode))
            return installed;
        installed[0] = 0;
    }
    return installed[0] ? installed : PES_MACHINES_DIR;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int pes_machine_list_presets(char *buf, size_t len)
{
    char names[64][64];
    char *ptr[64];
    int n = 0;
    DIR *d = opendir(machines_dir());
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && n < 64) {
            size_t l = strlen(e->d_name);
            if (l > 8 && l - 8 < sizeof names[0] && !strcmp(e->d_name + l - 8, ".machine")) {
                memcpy(names[n], e->d_name, l - 8);
                names[n][l - 8] = 0;
                ptr[n] = names[n];
                n++;
            }
        }
        closedir(d);
    }
    qsort(ptr, (size_t)n, sizeof ptr[0], cmp_str);
    size_t used = 0;
    if (len)
        buf[0] = 0;
    static const char *const builtin[] = {"host", "sysfs"};
    for (int i = 0; i < n + 2; i++) {
        const char *s = i < n ? ptr[i] : builtin[i - n];
        int w = snprintf(buf + used, used < len ? len - used : 0, "%s%s", i ? ", " : "", s);
        if (w > 0)
            used += (size_t)w;
        if (used >= len)
            used = len;
    }
    return n + 2;
}

static int read_file(const char *path, char **out, struct pes_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return pes_model_fail(err, PES_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = malloc(MAX_FILE + 1);
    if (!buf) {
        fclose(f);
        return pes_model_fail(err, PES_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, MAX_FILE + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > MAX_FILE) {
        free(buf);
        return pes_model_fail(err, bad ? PES_ERR_IO : PES_ERR_FORMAT,
                              bad ? "%s: read error" : "%s: larger than 64 KiB", path);
    }
    buf[n] = 0;
    if (memchr(buf, 0, n)) {
        free(buf);
        return pes_model_fail(err, PES_ERR_FORMAT, "%s: contains a NUL byte (not a text file)",
                              path);
    }
    *out = buf;
    return 0;
}

int pes_machine_load(const char *name, struct pes_machine *m, struct pes_error *err)
{
    if (!name || !*name || !m)
        return pes_model_fail(err, PES_ERR_ARG, "machine: empty name");
    char path[4096];
    if (!strcmp(name, "sysfs"))
        return pes_machine_from_sysfs(NULL, m, err);
    if (!strcmp(name, "host")) {
        /* this host's calibration if pes-calibrate wrote one, else sysfs */
        struct stat st;
        if (pes_machine_host_calibration_path(path, sizeof path, NULL) < 0 || stat(path, &st) != 0)
            return pes_machine_from_sysfs(NULL, m, err);
        char *text;
        if (read_file(path, &text, err))
            return -1;
        int rc = pes_machine_parse(text, path, m, err);
        free(text);
        if (rc && err) { /* say how to get out of it */
            size_t used = strlen(err->message);
            snprintf(err->message + used, sizeof err->message - used,
                     " (the host's calibration: pes-calibrate --force measures it again)");
        }
        return rc;
    }
    size_t len = strlen(name);
    int is_path = strchr(name, '/') || (len > 8 && !strcmp(name + len - 8, ".machine"));
    if (is_path) {
        if (len >= sizeof path)
            return pes_model_fail(err, PES_ERR_ARG, "machine: path too long");
        strcpy(path, name);
    } else {
        if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != len)
            return pes_model_fail(err, PES_ERR_ARG, "machine '%s': bad name", name);
        if ((size_t)snprintf(path, sizeof path, "%s/%s.machine", machines_dir(), name) >=
            sizeof path)
            return pes_model_fail(err, PES_ERR_ARG, "machine: name too long");
        FILE *probe = fopen(path, "r");
        if (!probe) {
            char list[200];
            pes_machine_list_presets(list, sizeof list);
            return pes_model_fail(err, PES_ERR_ARG, "unknown machine '%s' (available: %s)", name,
                                  list);
        }
        fclose(probe);
    }
    char *text;
    if (read_file(path, &text, err))
        return -1;
    int rc = pes_machine_parse(text, path, m, err);
    free(text);
    return rc;
}
