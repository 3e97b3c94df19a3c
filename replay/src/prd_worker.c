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
        for (size_t i = 0; i < w->n[k] && !w->failed; i++) {
            const struct replay_access *a = &w->buf[k][i];
            if (pes_profiles_push(w->prd, a->thread, a->addr, a->size, a->site, NULL, NULL, &w->err) < 0)
                w->failed = 1;
        }
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

int prd_worker_start(struct prd_worker *w, struct pes_profiles *prd) {
    memset(w, 0, sizeof *w);
    w->prd = prd;
    w->buf[0] = malloc(PRD_WORKER_BATCH * sizeof *w->buf[0]);
    w->buf[1] = malloc(PRD_WORKER_BATCH * sizeof *w->buf[1]);
    if (!w->buf[0] || !w->buf[1]) goto fail;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, prd_worker_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        goto fail;
    }
    return 0;
fail:
    free(w->buf[0]);
    free(w->buf[1]);
    w->buf[0] = w->buf[1] = NULL;
    return -1;
}

int prd_worker_finish(struct prd_worker *w, struct pes_error *err) {
    if (!w->buf[0]) return 0;
    if (w->n[w->cur]) prd_worker_flush(w);
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->buf[0]);
    free(w->buf[1]);
    w->buf[0] = w->buf[1] = NULL;
    if (w->failed) *err = w->err;
    return w->failed ? -1 : 0;
}

