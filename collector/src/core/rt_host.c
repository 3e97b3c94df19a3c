/* rt_host.c — the host description stored in the trace header: cache geometry
 * of cpu0 and socket count from sysfs, CPU model from /proc/cpuinfo. The sysfs
 * root is a parameter so tests can use a fake tree. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* Reads the first line of dir/name into buf (newline stripped). */
static int read_line(const char *dir, const char *name, char *buf, size_t size)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)size, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

int pes_rt_parse_size(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    uint64_t mult = 1;
    char num[32];
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n + 1);
    switch (num[n - 1]) {
    case 'K':
        mult = 1024;
        break;
    case 'M':
        mult = 1024 * 1024;
        break;
    case 'G':
        mult = 1024ull * 1024 * 1024;
        break;
    default:
        break;
    }
    if (mult != 1)
        num[n - 1] = '\0';
    uint64_t v;
    if (pes_rt_parse_u64(num, 0, UINT64_MAX / mult, &v))
        return -1;
    *out = v * mult;
    return 0;
}

int pes_rt_cpulist_count(const char *list)
{
    int count = 0;
    const char *p = list;
    if (!*p)
        return -1;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -1;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            b = strtoul(p, &end, 10);
            p = end;
            if (b < a || b - a > 1u << 20)
                return -1;
        }
        count += (int)(b - a + 1);
        if (*p == ',') {
            if (!*++p)
                return -1;
        } else if (*p)
            return -1;
    }
    return count;
}

static int index_cmp(const void *a, const void *b)
{
    const struct pes_cache_level *x = a, *y = b;
    if (x->level != y->level)
        return x->level - y->level;
    return x->type - y->type;
}

uint32_t pes_rt_host_caches(const char *sysfs_cpu, struct pes_cache_level *out, uint32_t max)
{
    char base[4096], dir[4096 + 300], buf[256];
    uint32_t n = 0;
    if ((size_t)snprintf(base, sizeof base, "%s/cpu0/cache", sysfs_cpu) >= sizeof base)
        return 0;
    DIR *d = opendir(base);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (strncmp(e->d_name, "index", 5) != 0)
            continue;
        snprintf(dir, sizeof dir, "%s/%s", base, e->d_name);
        struct pes_cache_level c = {0};
        uint64_t v;
        if (read_line(dir, "level", buf, sizeof buf) || pes_rt_parse_u64(buf, 1, 255, &v))
            continue;
        c.level = (uint8_t)v;
        if (read_line(dir, "type", buf, sizeof buf))
            continue;
        if (strcmp(buf, "Data") == 0)
            c.type = 'D';
        else if (strcmp(buf, "Instruction") == 0)
            c.type = 'I';
        else if (strcmp(buf, "Unified") == 0)
            c.type = 'U';
        else
            continue;
        if (read_line(dir, "size", buf, sizeof buf) == 0 && pes_rt_parse_size(buf, &v) == 0)
            c.size = v;
        if (read_line(dir, "ways_of_associativity", buf, sizeof buf) == 0 &&
            pes_rt_parse_u64(buf, 0, UINT16_MAX, &v) == 0)
            c.ways = (uint16_t)v;
        if (read_line(dir, "coherency_line_size", buf, sizeof buf) == 0 &&
            pes_rt_parse_u64(buf, 0, UINT32_MAX, &v) == 0)
            c.line_size = (uint32_t)v;
        if (read_line(dir, "shared_cpu_list", buf, sizeof buf) == 0) {
            int k = pes_rt_cpulist_count(buf);
            c.shared_by = k > 0 ? (uint32_t)k : 0;
        }
        out[n++] = c;
    }
    closedir(d);
    qsort(out, n, sizeof *out, index_cmp); /* readdir order is arbitrary */
    return n;
}

uint32_t pes_rt_host_sockets(const char *sysfs_cpu)
{
    uint64_t seen[64] = {0}; /* bitmap of package ids < 4096 */
    uint32_t n = 0;
    DIR *d = opendir(sysfs_cpu);
    if (!d)
        return 1;
    struct dirent *e;
    char dir[4096 + 300], buf[64];
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "cpu", 3) != 0 || !isdigit((unsigned char)e->d_name[3]))
            continue;
        snprintf(dir, sizeof dir, "%s/%s/topology", sysfs_cpu, e->d_name);
        uint64_t id;
        if (read_line(dir, "physical_package_id", buf, sizeof buf) ||
            pes_rt_parse_u64(buf, 0, 4095, &id))
            continue;
        if (!(seen[id / 64] & (1ull << (id % 64)))) {
            seen[id / 64] |= 1ull << (id % 64);
            n++;
        }
    }
    closedir(d);
    return n ? n : 1;
}

char *pes_rt_host_cpu_model(const char *cpuinfo_path)
{
    FILE *f = fopen(cpuinfo_path, "r");
    char line[512];
    char *model = NULL;
    if (!f)
        return NULL;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        model = strdup(colon);
        break;
    }
    fclose(f);
    return model;
}
