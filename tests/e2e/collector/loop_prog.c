/* loop_prog — drives __pes_loop_flush as the recording clone of an affine
 * loop does (pes/rt_abi.h), by hand, with the list of loop_pattern.h:
 *
 *   loop_prog auto T     T workers; loops hand chunks to __pes_loop_flush
 *                        while __pes_tls.descriptors is set, else record
 *                        per access inline (what the pass's code does)
 *   loop_prog always T   the same, but loops always call __pes_loop_flush
 *                        (the runtime must then store records per access)
 *   loop_prog running T  like auto, then each worker runs an endless loop
 *                        (LP_STEPS) while main returns: the runtime stops
 *                        the workers in the middle of their chunks
 *
 * Prints "descriptors=D" with D = __pes_tls.descriptors as worker 1 saw it
 * at its first loop. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_pattern.h"
#include "pes_rt_inline.h"

static uint32_t id_base;

static const char strtab[] = "loop_prog.c\0kernel\0entry\0body\0";
enum { S_FILE = 0, S_FUNC = 12, S_ENTRY = 19, S_BODY = 25 };

static const struct pes_rt_site sites[LP_SITES] = {
    [LP_LOAD] = {10, 3, PES_KIND_LOAD, 0, 8, 1, S_FILE, S_FUNC},
    [LP_STORE] = {11, 3, PES_KIND_STORE, 0, 4, 1, S_FILE, S_FUNC},
    [LP_RMW] = {12, 3, PES_KIND_RMW, PES_SITE_ATOMIC, 8, 1, S_FILE, S_FUNC},
    [LP_COPY] = {13, 3, PES_KIND_COPY_SRC, 0, 0, 1, S_FILE, S_FUNC},
};
static const struct pes_rt_bb bbs[LP_IDS - LP_SITES] = {
    {.function = S_FUNC, .label = S_ENTRY, .n_sites = 0, .ops = {0}},
    {.function = S_FUNC, .label = S_BODY, .n_sites = LP_SITES, .ops = {0}},
};
static struct pes_rt_module mod = {
    PES_RT_ABI_VERSION, LP_SITES, LP_IDS - LP_SITES, sizeof strtab, sites, bbs, strtab,
    "loop_prog.c",      &id_base};

__attribute__((constructor(PES_RT_CTOR_PRIORITY))) static void register_module(void)
{
    __pes_register_module(&mod);
}

static int always, running;
static int seen_descriptors = -1;
static int endless; /* atomic: workers in their endless loop */

static void run_loop(uint32_t k, const struct lp_step *s)
{
    /* the descriptor the recording clone keeps on its stack: m templates, m
     * steps, then a mixed body's addresses */
    _Alignas(struct pes_rt_loop) unsigned char
        stack[sizeof(struct pes_rt_loop) + 2 * LP_MAX_M * sizeof(struct pes_record) +
              PES_RT_LOOP_ADDRS * sizeof(uint64_t)];
    struct pes_rt_loop *d = (struct pes_rt_loop *)(void *)stack;
    uint32_t m = s->m, k_irr = 0;
    uint64_t irregular = 0;
    for (uint32_t j = 0; j < m; j++)
        if (s->tmpl[j].irregular) {
            irregular |= 1ull << j;
            k_irr++;
        }
    for (uint64_t done = 0; done < s->iterations;) {
        uint64_t n = s->iterations - done;
        if (s->pass_cut) {
            /* max(1, (limit - cursor) / m), as the pass computes it */
            struct pes_record *lim = __atomic_load_n(&__pes_tls.limit, __ATOMIC_RELAXED);
            int64_t room = lim && lim > __pes_tls.cursor ? lim - __pes_tls.cursor : 0;
            uint64_t fit = (uint64_t)room / m ? (uint64_t)room / m : 1;
            if (n > fit)
                n = fit;
        } else if (s->chunks && n > s->chunks) {
            n = s->chunks;
        }
        if (k_irr && n > PES_RT_LOOP_ADDRS / k_irr) /* the chunk's address array */
            n = PES_RT_LOOP_ADDRS / k_irr;
        if (s->inline_only ||
            (!always && !__atomic_load_n(&__pes_tls.descriptors, __ATOMIC_RELAXED))) {
            for (uint64_t i = done; i < done + n; i++)
                for (uint32_t j = 0; j < m; j++)
                    PES_TEST_RECORD(lp_addr(k, &s->tmpl[j], i), id_base + s->tmpl[j].local,
                                    s->tmpl[j].extra);
            done += n;
            continue;
        }
        memset(stack, 0xa5, sizeof stack); /* what the stack held: unset steps stay junk */
        d->iterations = n;
        d->m = m;
        d->reserved = 0;
        d->irregular = irregular;
        int64_t *step = pes_rt_loop_steps(d);
        uint64_t *addr = pes_rt_loop_addrs(d);
        for (uint32_t j = 0; j < m; j++) {
            d->tmpl[j].addr = lp_addr(k, &s->tmpl[j], done); /* junk where irregular */
            d->tmpl[j].id = id_base + s->tmpl[j].local;
            d->tmpl[j].extra = s->tmpl[j].extra;
            if (n > 1)
                step[j] = s->tmpl[j].local >= LP_SITES ? 0 : s->tmpl[j].step;
        }
        for (uint64_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < m; j++)
                if (s->tmpl[j].irregular)
                    *addr++ = lp_addr(k, &s->tmpl[j], done + i);
        __pes_loop_flush(d);
        done += n;
    }
}

static void *worker(void *p)
{
    uint32_t k = (uint32_t)(uintptr_t)p;
    for (int i = 0; i < LP_STEPS; i++) {
        struct lp_step s = lp_step(k, i);
        if (s.m == 0) {
            PES_TEST_RECORD(lp_addr(k, &s.tmpl[0], 0), id_base + s.tmpl[0].local, s.tmpl[0].extra);
            continue;
        }
        if (k == 1 && seen_descriptors < 0)
            seen_descriptors = (int)__atomic_load_n(&__pes_tls.descriptors, __ATOMIC_RELAXED);
        run_loop(k, &s);
    }
    if (running) {
        struct lp_step s = lp_step(k, LP_STEPS);
        __atomic_fetch_add(&endless, 1, __ATOMIC_RELEASE);
        run_loop(k, &s); /* until the process exits */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "auto") && strcmp(argv[1], "always") && strcmp(argv[1], "running"))) {
        fprintf(stderr, "usage: loop_prog auto|always|running THREADS\n");
        return 2;
    }
    always = strcmp(argv[1], "always") == 0;
    running = strcmp(argv[1], "running") == 0;
    int n = atoi(argv[2]);
    if (n < 1 || n > 64) {
        fprintf(stderr, "loop_prog: THREADS must be 1..64\n");
        return 2;
    }
    pthread_t th[64];
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1))) {
            fprintf(stderr, "loop_prog: pthread_create failed\n");
            return 1;
        }
    if (running) {
        while (__atomic_load_n(&endless, __ATOMIC_ACQUIRE) < n)
            sched_yield();
        printf("descriptors=%d\n", seen_descriptors);
        return 0; /* the workers are still recording */
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("descriptors=%d\n", seen_descriptors);
    return 0;
}
