/*
 * work_stealing — each thread owns a range of work items (deliberately
 * unbalanced: thread t gets (t+1) shares) and takes them from the front of
 * its range with a CAS on a packed (front, back) word; a thread whose range
 * is empty steals half of the largest victim's remaining range from the back.
 * Why: mostly-private queue words that become shared only when stealing
 * starts: a phase with no communication followed by one with much.
 */
#include "corpus.h"

struct range { _Alignas(64) _Atomic uint64_t fb; };   /* front << 32 | back */

static int take(struct range *r, long *item) {
    uint64_t v = atomic_load(&r->fb);
    for (;;) {
        uint32_t f = (uint32_t)(v >> 32), b = (uint32_t)v;
        if (f >= b) return 0;
        if (atomic_compare_exchange_weak(&r->fb, &v, ((uint64_t)(f + 1) << 32) | b)) { *item = f; return 1; }
    }
}

static int steal(struct range *victim, struct range *mine) {
    uint64_t v = atomic_load(&victim->fb);
    for (;;) {
        uint32_t f = (uint32_t)(v >> 32), b = (uint32_t)v;
        if (b - f < 2 || f >= b) return 0;
        uint32_t mid = f + (b - f) / 2;
        if (atomic_compare_exchange_weak(&victim->fb, &v, ((uint64_t)f << 32) | mid)) {
            atomic_store(&mine->fb, ((uint64_t)mid << 32) | b);
            return 1;
        }
    }
}

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    int nt = c.threads;
    long shares = (long)nt * (nt + 1) / 2, items = c.scale * 1000 * nt / 40;
    long *out = corpus_alloc(items * sizeof *out);
    struct range *r = corpus_alloc(nt * sizeof *r);
    for (long t = 0, at = 0; t < nt; t++) {
        long len = t == nt - 1 ? items - at : items * (t + 1) / shares;
        atomic_store(&r[t].fb, ((uint64_t)at << 32) | (uint64_t)(at + len));
        at += len;
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        long item, buf[16];
        for (;;) {
            if (take(&r[t], &item)) {
                uint64_t s = (uint64_t)item * 7919 + c.seed;
                for (int k = 0; k < 16; k++) buf[k] = (long)(corpus_rand(&s) % 1000);
                long acc = 0;
                for (int k = 0; k < 16; k++) acc += buf[k] * buf[15 - k];
                out[item] = acc;
                continue;
            }
            int best = -1;
            uint32_t most = 1;
            for (int u = 0; u < nt; u++) {
                uint64_t v = atomic_load(&r[u].fb);
                uint32_t left = (uint32_t)v - (uint32_t)(v >> 32);
                if ((uint32_t)(v >> 32) < (uint32_t)v && left > most) { most = left; best = u; }
            }
            if (best < 0) break;
            steal(&r[best], &r[t]);
        }
    }
    uint64_t h = 0;
    for (long k = 0; k < items; k++) h = corpus_mix(h, (uint64_t)out[k]);
    corpus_done("work_stealing", &c, h);
    free(out); free(r);
    return 0;
}
