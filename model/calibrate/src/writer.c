/*
 * writer.c — a calibration as a .machine file (pes/calibrate.h): comments
 * with the method of every figure, then the keys pes_machine_print writes,
 * so that pes_machine_parse reads it back to the same machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pes/calibrate.h"

/* "# " before every line of a free text. */
static void comment_lines(FILE *out, const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        fprintf(out, "# %.*s\n", (int)n, text);
        text += n + (text[n] == '\n');
    }
}

static void figure(FILE *out, const char *key, const struct pes_calib_figure *f)
{
    if (f->measured && f->median != f->value)
        fprintf(out, "#   %-28s %-10.4g %s; median of the repeats %.4g\n", key, f->value, f->method,
                f->median);
    else
        fprintf(out, "#   %-28s %-10.4g %s\n", key, f->value, f->method);
}

int pes_calib_write(const struct pes_calib_result *r, FILE *out, struct pes_error *err)
{
    if (!r || !out)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_calib_write: NULL argument");
    const struct pes_machine *m = &r->machine;
    if (pes_machine_validate(m, err) < 0)
        return -1;
    comment_lines(out, r->header);
    fprintf(out,
            "#\n# Figures (cycles unless said) and how each was found: a repeated figure is the\n"
            "# fastest repeat (interference only adds time), the median of its repeats follows\n"
            "# (omp.* are the median: waits for a CPU are part of what a program meets;\n"
            "# compute.throughput.* is T x mean(1 thread) / mean(T threads));\n"
            "# a latency is the median of the points of a plateau of the latency curve:\n");
    figure(out, "ghz", &r->ghz);
    char key[64];
    for (uint32_t i = 0; i < m->n_levels; i++) {
        snprintf(key, sizeof key, "L%u.latency", i + 1);
        figure(out, key, &r->latency[i]);
        snprintf(key, sizeof key, "L%u.recip_throughput", i + 1);
        figure(out, key, &r->recip[i]);
    }
    figure(out, "mem.latency", &r->mem_latency);
    figure(out, "mem.recip_throughput", &r->mem_recip);
    for (int o = 0; o < PES_OP_COUNT; o++) {
        snprintf(key, sizeof key, "op.%s.latency", pes_machine_op_key(o));
        figure(out, key, &r->op_latency[o]);
        snprintf(key, sizeof key, "op.%s.recip_throughput", pes_machine_op_key(o));
        figure(out, key, &r->op_recip[o]);
    }
    /* the terms beyond Eq. 4-8: bandwidths in bytes per cycle */
    struct {
        const char *key;
        const struct pes_thread_curve *c;
        const struct pes_calib_figure *f;
    } curves[4 + PES_MAX_LEVELS] = {
        {"omp.fork_join", &m->fork_join, r->fork_join},
        {"omp.barrier", &m->barrier, r->barrier},
        {"mem.bandwidth", &m->mem_bandwidth, r->mem_bandwidth},
        {"compute.throughput", &m->compute_throughput, r->compute_throughput},
    };
    char lkey[PES_MAX_LEVELS][32];
    for (uint32_t i = 0; i < PES_MAX_LEVELS; i++) {
        snprintf(lkey[i], sizeof lkey[i], "L%u.bandwidth", i + 1);
        curves[4 + i].key = lkey[i];
        curves[4 + i].c = &m->level[i].bandwidth;
        curves[4 + i].f = r->level_bandwidth[i];
    }
    for (int k = 0; k < 4 + PES_MAX_LEVELS; k++)
        for (uint32_t i = 0; i < curves[k].c->n && i < PES_CURVE_POINTS; i++) {
            snprintf(key, sizeof key, "%s.%u", curves[k].key, curves[k].c->threads[i]);
            if (curves[k].f[i].measured)
                figure(out, key, &curves[k].f[i]);
        }
    const struct pes_calib_figure *single[] = {&r->issue_width, &r->mlp, &r->tlb_entries,
                                               &r->tlb_miss_latency, &r->prefetch_max_stride};
    static const char *const single_key[] = {"issue_width", "mlp", "tlb.entries",
                                             "tlb.miss_latency", "prefetch.max_stride"};
    for (int k = 0; k < 5; k++)
        if (single[k]->measured)
            figure(out, single_key[k], single[k]);
    if (r->notes[0]) {
        fprintf(out, "# Not measured, and why:\n");
        comment_lines(out, r->notes);
    }
    fputc('\n', out);
    pes_machine_print(m, out);
    if (ferror(out))
        return pes_error_set(err, PES_ERR_IO, 0, "write error");
    return 0;
}

/* mkdir -p of path's directory. */
static int make_parent(const char *path, struct pes_error *err)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return pes_error_set(err, PES_ERR_ARG, 0, "%s: path too long", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return pes_error_set(err, PES_ERR_IO, 0, "%s: cannot create its directory %s: %s",
                                     path, dir, strerror(errno));
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

/* The file written first and renamed over path: a reader never sees half a file. */
static void tmp_name(char *buf, size_t len, const char *path)
{
    snprintf(buf, len, "%s.tmp%ld", path, (long)getpid());
}

/* Creates the parent directories of `path` and opens its temporary file
 * `tmp` (len bytes) for writing: the one check that the file can be
 * written, used before measuring and for the write itself. */
static FILE *open_tmp(const char *path, char *tmp, size_t len, struct pes_error *err)
{
    if (!path || !*path) {
        pes_error_set(err, PES_ERR_ARG, 0, "no output path");
        return NULL;
    }
    if (make_parent(path, err) < 0)
        return NULL;
    tmp_name(tmp, len, path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        pes_error_set(err, PES_ERR_IO, 0, "%s: %s", path, strerror(errno));
    return f;
}

int pes_calib_prepare_path(const char *path, struct pes_error *err)
{
    char tmp[4200];
    FILE *f = open_tmp(path, tmp, sizeof tmp, err);
    if (!f)
        return -1;
    fclose(f);
    unlink(tmp);
    return 0;
}

int pes_calib_write_file(const struct pes_calib_result *r, const char *path, struct pes_error *err)
{
    char tmp[4200];
    FILE *f = open_tmp(path, tmp, sizeof tmp, err);
    if (!f)
        return -1;
    int rc = pes_calib_write(r, f, err);
    if (fclose(f) != 0 && rc == 0)
        rc = pes_error_set(err, PES_ERR_IO, 0, "%s: %s", path, strerror(errno));
    else if (rc < 0 && err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s: %s", path, err->message);
        memcpy(err->message, msg, sizeof msg);
    }
    if (rc == 0 && rename(tmp, path) != 0)
        rc = pes_error_set(err, PES_ERR_IO, 0, "%s: %s", path, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}
