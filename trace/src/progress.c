/*
 * progress.c — the progress line of long-running work (pes/progress.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pes/progress.h"
#include "pes/trace.h"

struct pes_progress {
    char name[64];
    const char *what;
    uint64_t total, done;
    double start, last_draw, delay;
    unsigned calls;
    int drawn, width; /* the last line's width, to clear it */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct pes_progress *pes_progress_start(const char *name, uint64_t total, const char *what)
{
    const char *env = getenv("PES_PROGRESS");
    int always = env && strcmp(env, "always") == 0;
    if ((env && strcmp(env, "0") == 0) || (!always && !isatty(STDERR_FILENO)))
        return NULL;
    struct pes_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    /* the file's own name: the line has room for little else */
    const char *base = strrchr(name, '/');
    snprintf(p->name, sizeof p->name, "%s", pes_escape_text_tmp(base ? base + 1 : name));
    p->what = what;
    p->total = total;
    p->start = p->last_draw = now();
    p->delay = always ? 0 : 1.0;
    return p;
}

static void draw(struct pes_progress *p, double t)
{
    double elapsed = t - p->start, rate = elapsed > 0 ? (double)p->done / elapsed : 0;
    char line[160];
    int n = snprintf(line, sizeof line, "\r%s: ", p->name);
    if (p->total) {
        double share = (double)p->done / (double)p->total;
        if (share > 1)
            share = 1;
        char bar[21];
        for (int i = 0; i < 20; i++)
            bar[i] = i < (int)(share * 20) ? '#' : '.';
        bar[20] = 0;
        n += snprintf(line + n, sizeof line - (size_t)n, "[%s] %3.0f%% ", bar, 100 * share);
    }
    n += snprintf(line + n, sizeof line - (size_t)n, "%.1f M %s/s", rate / 1e6, p->what);
    if (p->total && rate > 0 && p->done < p->total) {
        unsigned left = (unsigned)((double)(p->total - p->done) / rate + 0.5);
        snprintf(line + n, sizeof line - (size_t)n, ", %u:%02u left ", left / 60, left % 60);
    } else {
        snprintf(line + n, sizeof line - (size_t)n, "%12s", "");
    }
    fputs(line, stderr);
    fflush(stderr);
    p->width = (int)strlen(line) - 1;
    p->drawn = 1;
    p->last_draw = t;
}

void pes_progress_add(struct pes_progress *p, uint64_t n)
{
    if (!p)
        return;
    p->done += n;
    if (++p->calls % 64 && p->delay > 0)
        return;
    double t = now();
    if (t - p->start >= p->delay && (t - p->last_draw >= 0.2 || !p->drawn))
        draw(p, t);
}

void pes_progress_update(struct pes_progress *p, uint64_t done)
{
    if (!p)
        return;
    p->done = done;
    double t = now();
    if (t - p->start >= p->delay && (t - p->last_draw >= 0.2 || !p->drawn))
        draw(p, t);
}

void pes_progress_more(struct pes_progress *p, uint64_t total)
{
    if (p)
        p->total += total;
}

void pes_progress_clear(struct pes_progress *p)
{
    if (!p || !p->drawn)
        return;
    fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
    p->drawn = 0;
}

void pes_progress_end(struct pes_progress *p)
{
    pes_progress_clear(p);
    free(p);
}
