/*
 * interleave.c — communication volume from the sampled interleaving
 * (interleave.h; derivation and assumptions in docs/accuracy.md).
 *
 * Three steps: (1) each thread's timeline — between two consecutive points
 * the thread did `count` difference accesses in `time` difference ticks: one
 * stretch at that rate, or, when the interval is much slower than the
 * thread's running speed nearby (a gap), a stretch holding only the merge's
 * stretched segments (`resolution` accesses per gap); (2) each shared line's
 * share of each thread's accesses (its samples on the line over its
 * samples), store share and the bytes its stores wrote; (3) a sweep over time that
 * integrates, per line and thread pair, λ_a λ_b / Λ with λ_j = the thread's
 * rate × its share of the line.
 */
#include "interleave.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPEED_WINDOW 8 /* intervals on either side that set the local running speed */

struct sweep_ev {
    double time;
    double delta; /* rate change (accesses per tick) */
    uint32_t thread;
};

/* one thread's accesses to one shared line */
struct member {
    uint32_t thread;
    double share;  /* of the thread's sampled accesses */
    double stores; /* share of stores among them */
    double w, w2;  /* the samples' weights summed, and their squares */
    uint32_t n;
    const struct pes_ilv_point *const *sample; /* its samples on the line: sample[0 .. n) */
};

struct line {
    size_t first, n; /* members[first .. first + n) */
    size_t pair0;    /* pairs[pair0 ..): n (n - 1) / 2 of them, a < b in member order */
};

static int by_thread_time(const void *pa, const void *pb)
{
    const struct pes_ilv_point *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

static int by_line_thread(const void *pa, const void *pb)
{
    const struct pes_ilv_point *a = *(const struct pes_ilv_point *const *)pa;
    const struct pes_ilv_point *b = *(const struct pes_ilv_point *const *)pb;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes); /* equal byte sets together */
}

static int by_time(const void *pa, const void *pb)
{
    const struct sweep_ev *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return (a->delta > b->delta) - (a->delta < b->delta);
}

struct evs {
    struct sweep_ev *e;
    size_t n, cap;
};

static int stretch(struct evs *v, uint32_t thread, double t0, double t1, double accesses)
{
    if (!(t1 > t0) || !(accesses > 0))
        return 0;
    if (v->n + 2 > v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        struct sweep_ev *e = realloc(v->e, cap * sizeof *e);
        if (!e)
            return -1;
        v->e = e;
        v->cap = cap;
    }
    double rate = accesses / (t1 - t0);
    v->e[v->n++] = (struct sweep_ev){t0, rate, thread};
    v->e[v->n++] = (struct sweep_ev){t1, -rate, thread};
    return 0;
}

/* Step 1: the thread's timeline p[0 .. n) (sorted by time) as stretches.
 * The running speed near an interval is the fastest rate among the
 * SPEED_WINDOW intervals on either side (a local maximum: a thread slowed
 * down for long, by contention or by sharing its CPU finely, keeps its own
 * pace as the reference); an interval slower than speed / gap_factor holds a
 * gap. Gaps are taken as a Poisson process in the thread's own access count:
 * a share c of clean intervals among k, of mean length m accesses, gives
 * μ = −ln(c / k) / m gaps per access, and a gapped interval of d accesses
 * holds μd / (1 − e^(−μd)) gaps on average. */
static int timeline(const struct pes_ilv_point *p, size_t n, double base,
                    const struct pes_ilv_params *par, struct evs *v, struct pes_ilv_stats *st)
{
    double sum_dc = 0;
    size_t k = 0, clean = 0;
    double *rate = malloc((n ? n : 1) * sizeof *rate), *speed = malloc((n ? n : 1) * sizeof *speed);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    if (!rate || !speed || !at) {
        free(rate);
        free(speed);
        free(at);
        return -1;
    }
    for (size_t i = 1; i < n; i++)
        if (p[i].time > p[i - 1].time && p[i].count > p[i - 1].count) {
            rate[k] = (double)(p[i].count - p[i - 1].count) / (double)(p[i].time - p[i - 1].time);
            sum_dc += (double)(p[i].count - p[i - 1].count);
            at[k++] = i;
        }
    for (size_t i = 0; i < k; i++) {
        size_t lo = i > SPEED_WINDOW ? i - SPEED_WINDOW : 0,
               hi = i + SPEED_WINDOW < k ? i + SPEED_WINDOW : k - 1;
        speed[i] = 0;
        for (size_t j = lo; j <= hi; j++)
            speed[i] = rate[j] > speed[i] ? rate[j] : speed[i];
        clean += rate[i] * par->gap_factor >= speed[i];
    }
    double mu = k && clean < k ? -log((double)clean / (double)k) / (sum_dc / (double)k) : 0;
    uint32_t th = p[0].thread;
    int rc = 0;
    for (size_t q = 0; q < k && rc == 0; q++) {
        size_t i = at[q];
        double t0 = (double)(p[i - 1].time) - base, t1 = (double)(p[i].time) - base;
        double dc = (double)(p[i].count - p[i - 1].count);
        if (rate[q] * par->gap_factor >= speed[q]) {
            rc = stretch(v, th, t0, t1, dc);
            continue;
        }
        /* off the CPU inside: only the merge's stretched segments of
         * `resolution` accesses, one per gap, spread over the interval,
         * meet other threads' accesses; the running part ran while the
         * threads sharing its CPU did not, and where in the interval is
         * unknown */
        st->gaps++;
        double g = mu * dc > 1e-9 ? mu * dc / -expm1(-mu * dc) : 1;
        rc = stretch(v, th, t0, t1, g * par->resolution < dc ? g * par->resolution : dc);
    }
    free(rate);
    free(speed);
    free(at);
    return rc;
}

/* One rate change of the sweep (rounding of + then - clamped to 0). */
static void apply(double *cur, const struct sweep_ev *e)
{
    cur[e->thread] += e->delta;
    if (cur[e->thread] < 1e-15)
        cur[e->thread] = 0;
}

/* Of the transfers between a and b, the share that is true sharing, as the
 * simulation that checks it defines it (mesi.h): a coherence miss is true
 * when the missing thread's access touches bytes the other wrote since it
 * lost the line. Transfers to b follow runs of a's accesses: in a random
 * interleaving a run holds 1 + λa/λb accesses, s_a of them stores, so about
 * m = max(1, s_a (1 + w_a / w_b)) of a's stores precede each transfer (w:
 * the members' sampled weights on the line, in proportion to their accesses).
 * A transfer to b is true when b's access touches the bytes of one of those
 * m stores: 1 - (1 - Q)^m, Q the share of a's stores touching those bytes.
 * The directions weigh by the senders' store shares. */
static double overlap_share(const struct member *to, const struct member *from)
{
    double m = from->stores * (1 + from->w / to->w), stores = 0, sum = 0;
    if (m < 1)
        m = 1;
    for (uint32_t j = 0; j < from->n; j++)
        stores += from->sample[j]->write ? from->sample[j]->weight : 0;
    if (!(stores > 0))
        return 0;
    for (uint32_t i = 0; i < to->n;) { /* samples with equal bytes are adjacent (by_line_thread) */
        uint64_t bytes = to->sample[i]->bytes;
        double w = 0, q = 0;
        for (; i < to->n && to->sample[i]->bytes == bytes; i++)
            w += to->sample[i]->weight;
        for (uint32_t j = 0; j < from->n; j++)
            if (from->sample[j]->write && (from->sample[j]->bytes & bytes))
                q += from->sample[j]->weight;
        sum += w * (1 - pow(1 - q / stores, m));
    }
    return sum / to->w;
}

static double true_share(const struct member *a, const struct member *b)
{
    double sa = a->stores, sb = b->stores;
    if (!(sa + sb > 0))
        return 0;
    return (sa * overlap_share(b, a) + sb * overlap_share(a, b)) / (sa + sb);
}

/* Adds w time of the rates `rate` (per thread) to every line pair's
 * integral of λ_a λ_b / Λ, λ = the thread's rate × its share of the line. */
static void integrate(const struct line *lines, size_t n_lines, const struct member *mem,
                      const double *rate, double w, double *integral)
{
    for (size_t l = 0; l < n_lines; l++) {
        const struct line *L = &lines[l];
        double lam_sum = 0;
        for (size_t a = 0; a < L->n; a++)
            lam_sum += rate[mem[L->first + a].thread] * mem[L->first + a].share;
        if (!(lam_sum > 0))
            continue;
        size_t q = L->pair0;
        for (size_t a = 0; a < L->n; a++) {
            double la = rate[mem[L->first + a].thread] * mem[L->first + a].share;
            for (size_t b = a + 1; b < L->n; b++, q++) {
                double lb = rate[mem[L->first + b].thread] * mem[L->first + b].share;
                integral[q] += la * lb / lam_sum * w;
            }
        }
    }
}

int pes_ilv_estimate(struct pes_ilv_point *p, size_t n, const struct pes_ilv_params *par,
                     double *true_m, double *false_m, struct pes_ilv_stats *st)
{
    uint32_t nt = par->n_threads;
    memset(true_m, 0, (size_t)nt * nt * sizeof *true_m);
    memset(false_m, 0, (size_t)nt * nt * sizeof *false_m);
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < n; i++)
        if (p[i].thread >= nt)
            return -1;
    if (!n || nt < 2)
        return 0;
    int rc = -1;
    struct evs v = {0};
    const struct pes_ilv_point **byl = NULL;
    struct member *mem = NULL;
    struct line *lines = NULL;
    double *integral = NULL, *cur = NULL, *acc = NULL;
    double *samples = NULL; /* per thread: weighted samples with a line */
    qsort(p, n, sizeof *p, by_thread_time);
    uint64_t t_min = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        t_min = p[i].time < t_min ? p[i].time : t_min;
    double base = (double)t_min;
    for (size_t i = 0; i < n;) { /* step 1, per thread */
        size_t j = i;
        while (j < n && p[j].thread == p[i].thread)
            j++;
        if (timeline(p + i, j - i, base, par, &v, st) < 0)
            goto out;
        i = j;
    }
    /* step 2: shared lines and their members */
    samples = calloc(nt, sizeof *samples);
    byl = malloc(n * sizeof *byl);
    if (!samples || !byl)
        goto out;
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].has_line) {
            byl[nl++] = &p[i];
            samples[p[i].thread] += p[i].weight;
        }
    qsort(byl, nl, sizeof *byl, by_line_thread);
    mem = malloc((nl ? nl : 1) * sizeof *mem);
    lines = malloc((nl ? nl : 1) * sizeof *lines);
    if (!mem || !lines)
        goto out;
    size_t n_mem = 0, n_lines = 0, n_pairs = 0;
    double sw = 0, sw2 = 0;
    for (size_t i = 0; i < nl;) {
        size_t j = i, first = n_mem;
        while (j < nl && byl[j]->line == byl[i]->line) {
            size_t k = j;
            struct member m = {.thread = byl[j]->thread, .sample = &byl[j]};
            for (; k < nl && byl[k]->line == byl[i]->line && byl[k]->thread == m.thread; k++) {
                m.n++;
                m.w += byl[k]->weight;
                m.w2 += byl[k]->weight * byl[k]->weight;
                m.stores += byl[k]->write ? byl[k]->weight : 0;
            }
            m.stores /= m.w;
            m.share = m.w / samples[m.thread];
            mem[n_mem++] = m;
            j = k;
        }
        size_t k = n_mem - first;
        if (k >= 2) {
            lines[n_lines++] = (struct line){first, k, n_pairs};
            n_pairs += k * (k - 1) / 2;
            st->shared_lines++;
            for (size_t m = first; m < n_mem; m++) {
                st->shared_samples += mem[m].n;
                sw += mem[m].w;
                sw2 += mem[m].w2;
            }
        } else {
            n_mem = first; /* one thread only: no transfer to estimate */
        }
        i = j;
    }
    st->shared_neff = sw2 > 0 ? sw * sw / sw2 : 0; /* Kish: = shared_samples at equal weights */
    integral = calloc(n_pairs ? n_pairs : 1, sizeof *integral);
    cur = calloc(nt, sizeof *cur);
    if (!integral || !cur)
        goto out;
    /* step 3: sweep */
    qsort(v.e, v.n, sizeof *v.e, by_time);
    size_t steps = 0;
    for (size_t i = 0; i < v.n; i++)
        steps += i == 0 || v.e[i].time != v.e[i - 1].time;
    double work = (double)(n_pairs + n_mem) * (double)steps;
    double budget = par->max_work > 0 ? par->max_work : PES_ILV_MAX_WORK;
    if (work <= budget) { /* exact: the rates are constant between event times */
        for (size_t i = 0; i < v.n;) {
            double t = v.e[i].time;
            for (; i < v.n && v.e[i].time == t; i++)
                apply(cur, &v.e[i]);
            if (i == v.n)
                break;
            integrate(lines, n_lines, mem, cur, v.e[i].time - t, integral);
        }
    } else if (v.n) {
        /* bounded: each thread's mean rate per time bin (its accesses are
         * kept; their overlap within a bin is averaged) */
        size_t bins = (size_t)(budget / (double)(n_pairs + n_mem));
        if (bins < 1)
            bins = 1;
        st->bins = bins;
        double t0 = v.e[0].time, width = (v.e[v.n - 1].time - t0) / (double)bins;
        acc = calloc(nt, sizeof *acc);
        if (!acc)
            goto out;
        size_t i = 0;
        for (size_t b = 0; b < bins && width > 0; b++) {
            double lo = t0 + width * (double)b, hi = b + 1 == bins ? v.e[v.n - 1].time : lo + width,
                   at = lo;
            for (; i < v.n && v.e[i].time <= hi; i++) { /* the rates' changes inside the bin */
                for (uint32_t k = 0; k < nt; k++)
                    acc[k] += cur[k] * (v.e[i].time - at);
                at = v.e[i].time;
                apply(cur, &v.e[i]);
            }
            for (uint32_t k = 0; k < nt; k++) {
                acc[k] = (acc[k] + cur[k] * (hi - at)) / (hi - lo);
            }
            integrate(lines, n_lines, mem, acc, hi - lo, integral);
            memset(acc, 0, nt * sizeof *acc);
        }
    }
    /* both orders of a pair: 2 λ_a λ_b / Λ; a transfer needs a store on one side */
    for (size_t l = 0; l < n_lines; l++) {
        const struct line *L = &lines[l];
        size_t q = L->pair0;
        for (size_t a = 0; a < L->n; a++)
            for (size_t b = a + 1; b < L->n; b++, q++) {
                const struct member *ma = &mem[L->first + a], *mb = &mem[L->first + b];
                double x = 2 * integral[q] * (1 - (1 - ma->stores) * (1 - mb->stores));
                double same = true_share(ma, mb);
                size_t ab = (size_t)ma->thread * nt + mb->thread,
                       ba = (size_t)mb->thread * nt + ma->thread;
                true_m[ab] += x * same;
                true_m[ba] += x * same;
                false_m[ab] += x * (1 - same);
                false_m[ba] += x * (1 - same);
            }
    }
    rc = 0;
out:
    free(v.e);
    free(byl);
    free(mem);
    free(lines);
    free(integral);
    free(cur);
    free(acc);
    free(samples);
    return rc;
}
