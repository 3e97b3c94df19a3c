/* rt_writer.c — the single writer thread. Application threads queue full
 * buffers, THREAD and MODULE items; the writer encodes them in queue order
 * (pes_trace_writer is single-threaded by contract), returns the buffers, keeps
 * per-thread totals, and writes the footer when told to stop. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_internal.h"

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_returned = PTHREAD_COND_INITIALIZER;
static struct pes_rt_item *head, *tail;
static pthread_t writer_thread;
static int running;        /* guarded by qlock: buffers may still come back */
static int closed;         /* atomic: footer written, file closed */
static struct pes_rt_item stop_item = {.type = PES_RT_ITEM_STOP};

/* Writer-thread-only state. */
static int failed;                 /* the full trace */
static int sfailed;                /* the sampled trace */
static struct pes_thread_totals *stotals;   /* sampled trace footer */
static size_t n_stotals;
static uint8_t *id_kind;           /* access kind per global site id, 0 = not a site */
static size_t id_kind_n;
static struct pes_thread_totals *totals;
static size_t n_totals;
static uint32_t n_announced;       /* threads whose THREAD block was written */

static void append_locked(struct pes_rt_item *it)
{
    it->next = NULL;
    if (it->buf)
        it->buf->busy = 1;
    if (tail)
        tail->next = it;
    else
        head = it;
    tail = it;
    pthread_cond_signal(&q_nonempty);
}

void pes_rt_writer_push(struct pes_rt_item *it)
{
    pthread_mutex_lock(&qlock);
    append_locked(it);
    pthread_mutex_unlock(&qlock);
}

int pes_rt_writer_try_push(struct pes_rt_item *it)
{
    /* bounded wait: the lock is only held for a few instructions by live threads */
    for (int i = 0; i < 200; i++) {
        if (pthread_mutex_trylock(&qlock) == 0) {
            append_locked(it);
            pthread_mutex_unlock(&qlock);
            return 0;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

int pes_rt_writer_wait_free(struct pes_rt_buf *buf)
{
    pthread_mutex_lock(&qlock);
    while (buf->busy && running)
        pthread_cond_wait(&q_returned, &qlock);
    int busy = buf->busy;
    pthread_mutex_unlock(&qlock);
    return busy ? -1 : 0;
}

int pes_rt_writer_is_self(void)
{
    return __atomic_load_n(&running, __ATOMIC_RELAXED) && pthread_equal(pthread_self(), writer_thread);
}

static void report_to(int *flag, const struct pes_error *err)
{
    if (!*flag)
        pes_rt_message("%s; the trace ends here", err->message[0] ? err->message : "write failed");
    *flag = 1;
}

static void report(const struct pes_error *err)
{
    report_to(&failed, err);
}

static struct pes_thread_totals *grow(struct pes_thread_totals **arr, size_t *len, uint32_t thread)
{
    if (thread >= *len) {
        size_t n = thread + 16;
        struct pes_thread_totals *t = realloc(*arr, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + *len, 0, (n - *len) * sizeof *t);
        for (size_t i = *len; i < n; i++)
            t[i].thread = (uint32_t)i;
        *arr = t;
        *len = n;
    }
    return &(*arr)[thread];
}

static struct pes_thread_totals *totals_for(uint32_t thread)
{
    return grow(&totals, &n_totals, thread);
}

/* Sampled footer: events written; loads, stores and samples from the thread's
 * TOTALS event; lost from LOST events; last event time. */
static void count_events(uint32_t thread, const struct pes_event *e, size_t n)
{
    struct pes_thread_totals *tt = grow(&stotals, &n_stotals, thread);
    if (!tt)
        return;
    tt->records += n;
    for (size_t i = 0; i < n; i++) {
        if (e[i].kind == PES_EV_TOTALS) {
            tt->loads = e[i].loads;
            tt->stores = e[i].stores;
            tt->samples = e[i].aux;
        } else if (e[i].kind == PES_EV_LOST) {
            tt->lost += e[i].aux;
        }
        if (e[i].time > tt->end_ticks)
            tt->end_ticks = e[i].time;
    }
}

static void learn_module(const struct pes_module *m)
{
    size_t end = (size_t)m->id_base + m->n_sites;
    if (end > id_kind_n) {
        uint8_t *k = realloc(id_kind, end);
        if (!k)
            return;
        memset(k + id_kind_n, 0, end - id_kind_n);
        id_kind = k;
        id_kind_n = end;
    }
    for (uint32_t i = 0; i < m->n_sites; i++)
        id_kind[m->id_base + i] = m->sites[i].kind;
}

static void count_records(uint32_t thread, const struct pes_record *r, size_t n)
{
    struct pes_thread_totals *tt = totals_for(thread);
    if (!tt)
        return;
    tt->records += n;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r[i].id;
        if (id < id_kind_n && id_kind[id]) {
            tt->loads += pes_kind_reads(id_kind[id]) != 0;
            tt->stores += pes_kind_writes(id_kind[id]) != 0;
        } else if (id == PES_ID_TIME || id == PES_ID_THREAD_END) {
            tt->end_ticks = r[i].addr;
        }
    }
}

static void write_item(struct pes_rt_item *it)
{
    struct pes_error err = {0};
    struct pes_trace_writer *fw = failed ? NULL : pes_rt.writer;
    struct pes_trace_writer *sw = sfailed ? NULL : pes_rt.swriter;
    switch (it->type) {
    case PES_RT_ITEM_RECORDS:
        if (!fw)
            break;
        count_records(it->thread, it->records, it->n);
        if (pes_trace_writer_records(fw, it->thread, it->records, it->n, &err))
            report(&err);
        break;
    case PES_RT_ITEM_EVENTS:
        if (!sw)
            break;
        count_events(it->thread, it->events, it->n);
        if (pes_trace_writer_events(sw, it->thread, it->events, it->n, &err))
            report_to(&sfailed, &err);
        break;
    case PES_RT_ITEM_MAPS:
        if (sw && pes_trace_writer_mappings(sw, it->maps, it->n, &err))
            report_to(&sfailed, &err);
        break;
    case PES_RT_ITEM_THREAD:
        if (totals_for(it->info.index) && grow(&stotals, &n_stotals, it->info.index) &&
            it->info.index >= n_announced)
            n_announced = it->info.index + 1;
        if (fw && pes_trace_writer_thread(fw, &it->info, &err))
            report(&err);
        if (sw && pes_trace_writer_thread(sw, &it->info, &err))
            report_to(&sfailed, &err);
        break;
    case PES_RT_ITEM_MODULE:
        learn_module(it->module);
        if (fw && pes_trace_writer_module(fw, it->module, &err))
            report(&err);
        if (sw && pes_trace_writer_module(sw, it->module, &err))
            report_to(&sfailed, &err);
        break;
    default:
        break;
    }
}

static void close_trace(void)
{
    struct pes_error err = {0};
    if (pes_rt.writer &&
        pes_trace_writer_close(pes_rt.writer, totals, n_announced, pes_rt_now(), &err) && !failed)
        report(&err);
    pes_rt.writer = NULL;
    if (pes_rt.swriter &&
        pes_trace_writer_close(pes_rt.swriter, stotals, n_announced, pes_rt_now(), &err) &&
        !sfailed)
        report_to(&sfailed, &err);
    pes_rt.swriter = NULL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (!head)
            pthread_cond_wait(&q_nonempty, &qlock);
        struct pes_rt_item *it = head;
        head = it->next;
        if (!head)
            tail = NULL;
        pthread_mutex_unlock(&qlock);
        if (it->type == PES_RT_ITEM_STOP)
            break;
        write_item(it);
        if (it->heap) {
            free(it->module);
            if (it->maps) {
                for (size_t i = 0; i < it->n; i++)
                    free((char *)it->maps[i].path);
                free(it->maps);
            }
            free(it);
            continue;
        }
        /* a RECORDS item lives in its buffer: once returned, its owner reuses both */
        pthread_mutex_lock(&qlock);
        if (it->buf) {
            it->buf->busy = 0;
            pthread_cond_broadcast(&q_returned);
        }
        pthread_mutex_unlock(&qlock);
    }
    close_trace();
    pthread_mutex_lock(&qlock);
    running = 0;   /* anything queued after STOP is never written */
    pthread_cond_broadcast(&q_returned);
    pthread_mutex_unlock(&qlock);
    __atomic_store_n(&closed, 1, __ATOMIC_RELEASE);
    return NULL;
}

int pes_rt_writer_start(void)
{
    sigset_t all, old;
    sigfillset(&all);
    /* the writer never takes the application's asynchronous signals */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    running = 1;
    int rc = pthread_create(&writer_thread, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        running = 0;
        return -1;
    }
    return 0;
}

void pes_rt_writer_finish(void)
{
    pes_rt_writer_push(&stop_item);
    pthread_join(writer_thread, NULL);
}

void pes_rt_writer_finish_signal(void)
{
    if (pes_rt_writer_try_push(&stop_item))
        return;
    /* bounded: a dying process must not hang on a stuck writer (5 s) */
    for (int i = 0; i < 5000 && !__atomic_load_n(&closed, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}
