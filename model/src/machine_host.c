/* Where this host's calibration lives (pes-calibrate writes it, "host" reads it). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* The CPU's identity: the first processor's vendor, family, model, stepping
 * and model name lines of /proc/cpuinfo (x86 spelling; other architectures
 * hash what they have of it, possibly nothing) and the online CPU count. */
static uint64_t cpu_hash(void)
{
    static const char *const keys[] = {"vendor_id", "cpu family",      "model",    "model name",
                                       "stepping",  "CPU implementer", "CPU part", "CPU variant"};
    uint64_t h = FNV_OFFSET;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (line[0] == '\n')
                break; /* the first processor only */
            const char *colon = strchr(line, ':');
            if (!colon)
                continue;
            size_t klen = (size_t)(colon - line);
            while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
                klen--;
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                if (strlen(keys[k]) == klen && !strncmp(line, keys[k], klen)) {
                    h = fnv1a(h, line, strcspn(line, "\n"));
                    h = fnv1a(h, "\n", 1);
                }
        }
        fclose(f);
    }
    char cpus[32];
    snprintf(cpus, sizeof cpus, "cpus=%ld", sysconf(_SC_NPROCESSORS_ONLN));
    return fnv1a(h, cpus, strlen(cpus));
}

int pes_machine_host_calibration_path(char *buf, size_t len, struct pes_error *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *base, *sub;
    if (xdg && xdg[0] == '/') /* XDG: relative values are ignored */
        base = xdg, sub = "pes";
    else if (home && *home)
        base = home, sub = ".cache/pes";
    else
        return pes_model_fail(err, PES_ERR_ARG,
                              "host calibration: neither XDG_CACHE_HOME nor HOME is set");
    char host[256] = "localhost";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++) /* a file name, whatever the host calls itself */
        if (*p == '/' || *p == ' ')
            *p = '_';
    uint64_t h = cpu_hash();
    int n = snprintf(buf, len, "%s/%s/%s-%08x.machine", base, sub, host, (unsigned)(h ^ (h >> 32)));
    if (n < 0 || (size_t)n >= len)
        return pes_model_fail(err, PES_ERR_ARG, "host calibration: path longer than %zu bytes",
                              len);
    return 0;
}
