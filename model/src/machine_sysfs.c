/* The host machine from sysfs cache descriptions (cpuN/cache/indexM/). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_ROOT "/sys/devices/system/cpu"
#define GENERIC_GHZ  2.0

/* Reads a small sysfs file into buf, newline stripped. */
static int read_attr(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && isspace((unsigned char)buf[n - 1]))
        buf[--n] = 0;
    return 0;
}

/* Number of CPUs in a cpulist such as "0-3,8,10-11"; -1 if malformed. */
static long count_cpulist(const char *s)
{
    long n = 0;
    while (*s) {
        char *end;
        errno = 0;
        unsigned long a = strtoul(s, &end, 10), b = a;
        if (end == s || errno)
            return -1;
        s = end;
        if (*s == '-') {
            b = strtoul(++s, &end, 10);
            if (end == s || errno || b < a)
                return -1;
            s = end;
        }
        n += (long)(b - a + 1);
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

static int is_cpu_dir(const char *name)
{
    if (strncmp(name, "cpu", 3) || !name[3])
        return 0;
    for (const char *p = name + 3; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

/* Counts cpuN directories and distinct physical_package_id values. */
static void count_topology(const char *root, uint32_t *cpus, uint32_t *sockets)
{
    long pkgs[256];
    unsigned np = 0;
    *cpus = 0;
    DIR *d = opendir(root);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_cpu_dir(e->d_name))
            continue;
        (*cpus)++;
        char path[4096], buf[64];
        snprintf(path, sizeof path, "%s/%s/topology/physical_package_id", root, e->d_name);
        if (read_attr(path, buf, sizeof buf))
            continue;
        long id = strtol(buf, NULL, 10);
        unsigned j = 0;
        while (j < np && pkgs[j] != id)
            j++;
        if (j == np && np < 256)
            pkgs[np++] = id;
    }
    closedir(d);
    *sockets = np ? np : 1;
}

static int attr_u64(const char *dir, const char *name, int size, uint64_t *out,
                    struct pes_error *err)
{
    char path[4096], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (read_attr(path, buf, sizeof buf))
        return pes_model_fail(err, PES_ERR_IO, "host: %s: %s", path, strerror(errno));
    if ((size ? pes_model_parse_size(buf, out) : pes_model_parse_u64(buf, out)))
        return pes_model_fail(err, PES_ERR_FORMAT, "host: %s: bad value '%s'", path, buf);
    return 0;
}

int pes_machine_from_sysfs(const char *root, struct pes_machine *m, struct pes_error *err)
{
    if (!m)
        return pes_model_fail(err, PES_ERR_ARG, "pes_machine_from_sysfs: NULL machine");
    if (!root)
        root = DEFAULT_ROOT;
    struct pes_machine t;
    memset(&t, 0, sizeof t);
    strcpy(t.name, "host");
    pes_model_generic_costs(&t);

    char path[4096], buf[256];
    /* SMT siblings share L1/L2: a cache is "shared" only if more CPUs than one
     * core's hardware threads use it. */
    long smt = 1;
    snprintf(path, sizeof path, "%s/cpu0/topology/thread_siblings_list", root);
    if (!read_attr(path, buf, sizeof buf) && count_cpulist(buf) > 0)
        smt = count_cpulist(buf);

    snprintf(path, sizeof path, "%s/cpu0/cache", root);
    DIR *d = opendir(path);
    if (!d)
        return pes_model_fail(err, PES_ERR_IO,
                              "host: %s: %s (no cache description; use a preset or --cache)", path,
                              strerror(errno));
    unsigned seen = 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (strncmp(e->d_name, "index", 5))
            continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/cpu0/cache/%s", root, e->d_name);
        snprintf(path, sizeof path, "%s/type", dir);
        if (read_attr(path, buf, sizeof buf)) {
            rc = pes_model_fail(err, PES_ERR_IO, "host: %s: %s", path, strerror(errno));
            break;
        }
        if (!strcmp(buf, "Instruction"))
            continue;
        if (strcmp(buf, "Data") && strcmp(buf, "Unified")) {
            rc = pes_model_fail(err, PES_ERR_FORMAT, "host: %s: unknown type '%s'", path, buf);
            break;
        }
        uint64_t level, size, ways, line;
        if (attr_u64(dir, "level", 0, &level, err) || attr_u64(dir, "size", 1, &size, err) ||
            attr_u64(dir, "ways_of_associativity", 0, &ways, err) ||
            attr_u64(dir, "coherency_line_size", 0, &line, err)) {
            rc = -1;
            break;
        }
        if (level < 1 || level > PES_MAX_LEVELS || ways > UINT32_MAX || line > UINT32_MAX) {
            rc = pes_model_fail(err, PES_ERR_FORMAT,
                                "host: %s: level %llu / ways %llu / line "
                                "%llu out of range",
                                dir, (unsigned long long)level, (unsigned long long)ways,
                                (unsigned long long)line);
            break;
        }
        if (seen & (1u << level)) {
            rc = pes_model_fail(err, PES_ERR_FORMAT, "host: %s: second data cache at level %llu",
                                dir, (unsigned long long)level);
            break;
        }
        seen |= 1u << level;
        struct pes_cache_config *c = &t.level[level - 1];
        c->size = size;
        c->ways = (uint32_t)ways;
        c->line = (uint32_t)line;
        snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
        long sharing = 1;
        if (!read_attr(path, buf, sizeof buf))
            sharing = count_cpulist(buf);
        if (sharing < 1) {
            rc = pes_model_fail(err, PES_ERR_FORMAT, "host: %s: bad cpu list '%s'", path, buf);
            break;
        }
        c->shared = sharing > smt;
        pes_model_generic_level(c, (unsigned)level);
    }
    closedir(d);
    if (rc)
        return -1;
    for (unsigned l = 1; l <= PES_MAX_LEVELS && (seen & (1u << l)); l++)
        t.n_levels = l;
    if (!t.n_levels || seen != ((2u << t.n_levels) - 2u))
        return pes_model_fail(err, PES_ERR_FORMAT,
                              "host: %s/cpu0/cache: data cache levels are "
                              "not 1..N",
                              root);

    uint32_t cpus, sockets;
    count_topology(root, &cpus, &sockets);
    t.sockets = sockets;
    uint32_t cores = cpus / (uint32_t)smt / sockets;
    t.cores_per_socket = cores ? cores : 1;
    t.ghz = GENERIC_GHZ;
    snprintf(path, sizeof path, "%s/cpu0/cpufreq/cpuinfo_max_freq", root);
    uint64_t khz;
    if (!read_attr(path, buf, sizeof buf) && !pes_model_parse_u64(buf, &khz) && khz > 0)
        t.ghz = (double)khz / 1e6;
    if (pes_machine_validate(&t, err))
        return -1;
    *m = t;
    return 0;
}
