/*
 * prd_worker.c — PRDs on a second thread; see prd_worker.h.
 */
#include "prd_worker.h"

#include <stdlib.h>
#include <string.h>

static void *prd_worker_main(void *arg) {
    struct prd_worker *w = arg;
    for (int k = 0;; k ^= 1) {
        pthread_mutex_lock(&w->mu);
        while (!w->full[k] && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->full[k]) {             /* stopped and drained */
            pthread_mutex_unlock(&w->mu);
            break;
        }
        pthread_mutex_unlock(&w->mu);
        const struct prd_batch *b = &w->buf[k];
        if (!w->failed &&
            pes_profiles_push_batch(w->prd, b->thread, b->addr, b->size, b->site, w->n[k], &w->err) < 0)
            w->failed = 1;
        if (w->crd && !w->failed) {
            for (size_t i = 0; i < w->n[k]; i++) w->cache[i] = w->group[b->thread[i]];
            if (pes_profiles_push_batch(w->crd, w->cache, b->addr, b->size, b->site, w->n[k], &w->err) < 0)
                w->failed = 1;
        }
        for (size_t i = 0; i < b->n_ended && !w->failed; i++)
            if (pes_profiles_end_stream(w->prd, b->ended[i], &w->err) < 0) w->failed = 1;
        w->buf[k].n_ended = 0;
        pthread_mutex_lock(&w->mu);
        w->full[k] = 0;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

void prd_worker_flush(struct prd_worker *w) {
    int k = w->cur;
    pthread_mutex_lock(&w->mu);
    w->full[k] = 1;
    pthread_cond_broadcast(&w->cv);
    while (w->full[k ^ 1]) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    w->cur = k ^ 1;
    w->n[w->cur] = 0;
}

void prd_worker_push_batch(struct prd_worker *w, const uint64_t *addr, const uint32_t *size,
                           const uint32_t *thread, const uint32_t *site, size_t n) {
    while (n > 0) {
        struct prd_batch *b = &w->buf[w->cur];
        size_t at = w->n[w->cur], k = PRD_WORKER_BATCH - at;
        if (k > n) k = n;
        memcpy(b->addr + at, addr, k * sizeof *addr);
        memcpy(b->size + at, size, k * sizeof *size);
        memcpy(b->thread + at, thread, k * sizeof *thread);
        memcpy(b->site + at, site, k * sizeof *site);
        w->n[w->cur] = at + k;
        if (w->n[w->cur] == PRD_WORKER_BATCH) prd_worker_flush(w);
        addr += k, size += k, thread += k, site += k, n -= k;
    }
}

void prd_worker_end_streams(struct prd_worker *w, const uint32_t *threads, size_t n) {
    struct prd_batch *b = &w->buf[w->cur];
    if (b->n_ended + n > b->cap_ended) {
        size_t cap = b->cap_ended ? b->cap_ended : 64;
        while (cap < b->n_ended + n) cap *= 2;
        uint32_t *e = realloc(b->ended, cap * sizeof *e);
        if (!e) {   /* the engines just live on until the end: only memory is lost */
            return;
        }
        b->ended = e;
        b->cap_ended = cap;
    }
    memcpy(b->ended + b->n_ended, threads, n * sizeof *threads);
    b->n_ended += n;
}

static void batch_free(struct prd_batch *b) {
    free(b->ended);
    free(b->addr);
    free(b->size);
    free(b->thread);
    free(b->site);
    memset(b, 0, sizeof *b);
}

static int batch_alloc(struct prd_batch *b) {
    b->addr = malloc(PRD_WORKER_BATCH * sizeof *b->addr);
    b->size = malloc(PRD_WORKER_BATCH * sizeof *b->size);
    b->thread = malloc(PRD_WORKER_BATCH * sizeof *b->thread);
    b->site = malloc(PRD_WORKER_BATCH * sizeof *b->site);
    return b->addr && b->size && b->thread && b->site ? 0 : -1;
}

int prd_worker_start(struct prd_worker *w, struct pes_profiles *prd, struct pes_profiles *crd,
                     const uint32_t *group) {
    memset(w, 0, sizeof *w);
    w->prd = prd;
    w->crd = crd;
    w->group = group;
    if (batch_alloc(&w->buf[0]) < 0 || batch_alloc(&w->buf[1]) < 0) goto fail;
    if (crd && !(w->cache = malloc(PRD_WORKER_BATCH * sizeof *w->cache))) goto fail;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, prd_worker_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        goto fail;
    }
    return 0;
fail:
    batch_free(&w->buf[0]);
    batch_free(&w->buf[1]);
    free(w->cache);
    w->cache = NULL;
    return -1;
}

int prd_worker_finish(struct prd_worker *w, struct pes_error *err) {
    if (!w->buf[0].addr) return 0;
    if (w->n[w->cur] || w->buf[w->cur].n_ended) prd_worker_flush(w);
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    batch_free(&w->buf[0]);
    batch_free(&w->buf[1]);
    free(w->cache);
    w->cache = NULL;
    if (w->failed) *err = w->err;
    return w->failed ? -1 : 0;
}

