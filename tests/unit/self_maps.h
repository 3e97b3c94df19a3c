/*
 * self_maps.h — this test process's executable mappings, as the runtime's
 * MAPS block lists them (collector/src/core/rt_init.c), for the tests of
 * replay/objects. Header-only; include after <cmocka.h> and pes/trace.h.
 */
#ifndef PES_TEST_SELF_MAPS_H
#define PES_TEST_SELF_MAPS_H

#include <stdio.h>
#include <string.h>

/* Up to max mappings into m, their paths into paths (static storage of the
 * caller); a mapping of the file `exe` is given the path `as_path` instead
 * when both are not NULL (a copy of the executable: same segments). */
static size_t self_maps(struct pes_mapping *m, char (*paths)[4096], size_t max, const char *exe,
                        const char *as_path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    size_t n = 0;
    char line[8192];
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long long s, e, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms, &off, &pos) < 4 ||
            perms[2] != 'x')
            continue;
        char *p = line + pos;
        while (*p == ' ')
            p++;
        p[strcspn(p, "\n")] = '\0';
        snprintf(paths[n], sizeof paths[n], "%s",
                 exe && as_path && strcmp(p, exe) == 0 ? as_path : p);
        m[n] = (struct pes_mapping){.start = s, .end = e, .file_offset = off, .path = paths[n]};
        n++;
    }
    fclose(f);
    return n;
}

#endif
