/*
 * topology.c — cache geometry and sharing from hwloc (pes/calibrate.h).
 *
 * hwloc rather than sysfs: it knows the caches of VMs, honours cgroup
 * cpusets (only the PUs this process may use are counted), tells SMT
 * siblings from cores, and reads XML exports of other machines, which is
 * how the tests give it a known topology. What it reports is still what the
 * hypervisor or firmware says, so values no CPU has are flagged here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "pes/calibrate.h"

#define MIB          (1024.0 * 1024.0)
#define MAX_PER_CORE (32.0 * MIB) /* no CPU has more of one cache per core (X3D: 12 MiB) */

static void warn(struct pes_calib_topology *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(struct pes_calib_topology *t, const char *fmt, ...)
{
    if (t->n_warnings >= PES_CALIB_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->warning[t->n_warnings++], sizeof t->warning[0], fmt, ap);
    va_end(ap);
}

static void human(char *buf, size_t len, double bytes)
{
    if (bytes >= MIB)
        snprintf(buf, len, "%g MiB", bytes / MIB);
    else
        snprintf(buf, len, "%g KiB", bytes / 1024.0);
}

static unsigned count_inside(hwloc_topology_t topo, hwloc_const_cpuset_t set, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, type);
    return n > 0 ? (unsigned)n : 0;
}

/* Typical associativities, used (with a warning) where hwloc has none. */
static uint32_t default_ways(uint32_t level)
{
    return level <= 2 ? 8 : 16;
}

/* The plausibility checks of pes_calib_topology_load (see pes/calibrate.h). */
static void check(struct pes_calib_topology *t)
{
    char a[32], b[32];
    for (uint32_t i = 0; i < t->n_levels; i++) {
        struct pes_calib_cache *c = &t->level[i];
        if (c->line < 16 || c->line > 1024 || (c->line & (c->line - 1))) {
            warn(t, "L%u: line of %u bytes is not a power of two in 16..1024; 64 assumed", c->level,
                 c->line);
            c->line = 64;
        }
        human(a, sizeof a, (double)c->size);
        if (c->level == 1 && (c->size < 4096 || c->size > 256 * 1024)) {
            c->implausible = 1;
            warn(t, "L1: %s is implausible for an L1 data cache (4 KiB..256 KiB)", a);
        }
        double per_core = (double)c->size / (c->cores ? c->cores : 1);
        if (c->level > 1 && per_core > MAX_PER_CORE) {
            c->implausible = 1;
            human(b, sizeof b, per_core);
            warn(t,
                 "L%u: %s shared by %u core%s is %s per core: implausible (no CPU has more than "
                 "32 MiB of a cache per core; a VM reporting its host's cache?)",
                 c->level, a, c->cores, c->cores == 1 ? "" : "s", b);
        }
        if (i > 0 && c->size <= t->level[i - 1].size) {
            c->implausible = 1;
            human(b, sizeof b, (double)t->level[i - 1].size);
            warn(t, "L%u: %s is not larger than L%u's %s", c->level, a, c->level - 1, b);
        }
        if (c->ways && (c->size % ((uint64_t)c->ways * c->line))) {
            warn(t, "L%u: %s is not a whole number of %u-way sets of %u bytes", c->level, a,
                 c->ways, c->line);
            c->implausible = 1;
        }
    }
}

int pes_calib_topology_load(const char *xml_path, struct pes_calib_topology *t,
                            struct pes_error *err)
{
    if (!t)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_calib_topology_load: NULL topology");
    memset(t, 0, sizeof *t);
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "hwloc: cannot initialise a topology");
    const char *what = xml_path ? xml_path : "this machine";
    if (xml_path && hwloc_topology_set_xml(topo, xml_path) < 0) {
        int e = errno;
        hwloc_topology_destroy(topo);
        return pes_error_set(err, PES_ERR_IO, 0, "%s: hwloc cannot read it as an XML topology (%s)",
                             xml_path, strerror(e));
    }
    if (hwloc_topology_load(topo) < 0) {
        int e = errno;
        hwloc_topology_destroy(topo);
        return pes_error_set(err, xml_path ? PES_ERR_FORMAT : PES_ERR_IO, 0,
                             "%s: hwloc cannot load the topology (%s)", what, strerror(e));
    }
    int rc = -1;
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, 0);
    if (!pu) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "%s: the topology has no processing unit", what);
        goto out;
    }
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    const char *host = hwloc_obj_get_info_by_name(root, "HostName");
    snprintf(t->hostname, sizeof t->hostname, "%s", host ? host : "");
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    snprintf(t->cpu_model, sizeof t->cpu_model, "%s", model ? model : "");

    t->pus = count_inside(topo, root->cpuset, HWLOC_OBJ_PU);
    t->cores = count_inside(topo, root->cpuset, HWLOC_OBJ_CORE);
    if (!t->cores) /* no core objects: every PU is a core */
        t->cores = t->pus;
    t->packages = count_inside(topo, root->cpuset, HWLOC_OBJ_PACKAGE);
    if (!t->packages)
        t->packages = 1;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    t->smt = core ? (uint32_t)hwloc_bitmap_weight(core->cpuset) : 1;
    if (!t->smt)
        t->smt = 1;
    t->cores_per_package = pkg ? count_inside(topo, pkg->cpuset, HWLOC_OBJ_CORE) : t->cores;
    if (!t->cores_per_package)
        t->cores_per_package = t->cores / t->packages ? t->cores / t->packages : 1;

    /* the data and unified caches above the PU, nearest first */
    struct pes_calib_cache found[8];
    unsigned nf = 0;
    for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
        if (!hwloc_obj_type_is_cache(o->type) || o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
            continue;
        if (nf == 8)
            break;
        struct pes_calib_cache *c = &found[nf++];
        memset(c, 0, sizeof *c);
        c->level = o->attr->cache.depth;
        c->size = o->attr->cache.size;
        c->line = o->attr->cache.linesize;
        int a = o->attr->cache.associativity;
        c->ways = a < 0 ? 0 : (uint32_t)a;
        c->pus = (uint32_t)hwloc_bitmap_weight(o->cpuset);
        c->cores = count_inside(topo, o->cpuset, HWLOC_OBJ_CORE);
        if (!c->cores)
            c->cores = c->pus;
        if (a == 0) {
            c->ways = default_ways(c->level);
            warn(t, "L%u: hwloc gives no associativity; %u ways assumed", c->level, c->ways);
        }
    }
    for (unsigned i = 0; i < nf; i++) {
        if (found[i].level != i + 1 || i >= PES_MAX_LEVELS) {
            pes_error_set(
                err, PES_ERR_FORMAT, 0,
                "%s: the data caches above PU 0 are not levels 1..n (found L%u as cache %u)", what,
                found[i].level, i + 1);
            goto out;
        }
        if (!found[i].size || !found[i].line) {
            pes_error_set(err, PES_ERR_FORMAT, 0, "%s: L%u has no size or line size", what,
                          found[i].level);
            goto out;
        }
        t->level[i] = found[i];
    }
    t->n_levels = nf;
    if (!nf) {
        pes_error_set(err, PES_ERR_FORMAT, 0, "%s: hwloc reports no data cache", what);
        goto out;
    }
    check(t);
    rc = 0;
out:
    hwloc_topology_destroy(topo);
    return rc;
}

void pes_calib_topology_print(const struct pes_calib_topology *t, FILE *out)
{
    fprintf(out, "  %u package%s, %u core%s, %u PU%s (%u per core)%s%s\n", t->packages,
            t->packages == 1 ? "" : "s", t->cores, t->cores == 1 ? "" : "s", t->pus,
            t->pus == 1 ? "" : "s", t->smt, t->cpu_model[0] ? ", " : "", t->cpu_model);
    fprintf(out, "  %-5s %10s %5s %6s  %s\n", "cache", "size", "ways", "line", "shared by");
    for (uint32_t i = 0; i < t->n_levels; i++) {
        const struct pes_calib_cache *c = &t->level[i];
        char size[32], ways[16];
        human(size, sizeof size, (double)c->size);
        if (c->ways)
            snprintf(ways, sizeof ways, "%u", c->ways);
        else
            snprintf(ways, sizeof ways, "full");
        fprintf(out, "  L%-4u %10s %5s %4u B  %u core%s (%u PU%s)%s\n", c->level, size, ways,
                c->line, c->cores, c->cores == 1 ? "" : "s", c->pus, c->pus == 1 ? "" : "s",
                c->implausible ? "  implausible" : "");
    }
    for (uint32_t i = 0; i < t->n_warnings; i++)
        fprintf(out, "  warning: %s\n", t->warning[i]);
}
