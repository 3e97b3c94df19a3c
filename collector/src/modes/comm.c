/* comm.c — the comm mode: ComDetective (dissertation §5.3, Alg. 1).
 *
 * A BulletinBoard of recent store samples keyed by cache line (127 entries,
 * the paper's default): a sample whose line holds another thread's entry
 * published after this thread's last communication is a communication, true
 * sharing if the byte ranges overlap, false otherwise. Otherwise the thread
 * watches the line of an unexpired entry of another thread: one register on
 * the published bytes themselves, the others on random 8-byte chunks of the
 * rest of the line (4 × 8 bytes cannot cover 64), so a trap tells true from
 * false sharing by construction. "Recent" = published since this thread's
 * previous sample (the paper's expiration period).
 *
 * Events (PES_EV_COMM): thread = the detecting thread, other_thread = the
 * publisher; aux = 0 for a detection at a sample (replay scales it by the
 * period), 1 for a trap (scaled by period × L / (D × M), §5.3.2; D, M and L are
 * in the header config). Only the sample path takes the board's lock; the trap
 * handler uses what its own thread stored when it armed. */
#include <string.h>

#include "modes/modes.h"
#include "modes/watch.h"

#define LINE  64u
#define CHUNK 8u
#define BOARD 127u

struct entry {
    int valid;
    uint64_t line, m;
    uint32_t len, thread;
    uint64_t ts;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry board[BOARD];

static int overlap(uint64_t a, uint32_t alen, uint64_t b, uint32_t blen)
{
    return a < b + blen && b < a + alen;
}

static void comm_event(struct pes_rt_thread *t, uint32_t publisher, uint64_t addr, uint32_t size,
                       int true_sharing, int write, uint64_t ip, uint32_t site, uint64_t aux)
{
    struct pes_event ev;
    pes_rt_event_init(&ev, PES_EV_COMM, t);
    ev.other_thread = publisher;
    ev.addr = addr;
    ev.size = (uint16_t)size;
    ev.ip = ip;
    ev.site = site;
    ev.flags =
        (true_sharing ? PES_EVF_TRUE_SHARING : PES_EVF_FALSE_SHARING) | (write ? PES_EVF_WRITE : 0);
    ev.loads = t->s.loads;
    ev.stores = t->s.stores;
    ev.aux = aux;
    pes_rt_alloc_announce(t, &ev);
    pes_rt_events_add(t, &ev);
}

/* TryArmWatchpoint, in two steps so that the board's lock is not held across
 * system calls: choose() decides under the lock, arm() re-targets the
 * registers after it (4 MODIFY_ATTRIBUTES ioctls of 2-3 µs each, which every
 * other sampling thread used to wait for). Only the owner thread uses its
 * registers and the fields arm() sets, and its traps are ignored while it is
 * in the runtime (in_runtime), so the order of the two steps changes nothing
 * a trap can see. */
struct plan {
    int act;   /* 0: keep the recent watchpoints */
    int found; /* an unexpired entry of another thread (copied below) */
    uint64_t line, m;
    uint32_t len, thread;
};

/* Keep recent watchpoints, else pick an unexpired entry from another thread.
 * Called with the board locked. */
static struct plan choose(struct pes_rt_thread *t)
{
    struct pes_rt_sampler *s = &t->s;
    struct plan p = {0};
    if (s->wp[0].armed && s->wp_armed_ns >= s->prev_sample_ns)
        return p;
    p.act = 1;
    uint32_t start = (uint32_t)pes_rt_rand_below(&s->rng, BOARD);
    for (uint32_t k = 0; k < BOARD; k++) {
        const struct entry *c = &board[(start + k) % BOARD];
        if (c->valid && c->thread != t->index && c->ts >= s->prev_sample_ns) {
            p.found = 1;
            p.line = c->line;
            p.m = c->m;
            p.len = c->len;
            p.thread = c->thread;
            break;
        }
    }
    return p;
}

/* Watch the chosen line: register 0 on the published bytes, the others on
 * random chunks; registers not re-targeted are disarmed (a re-targeted one
 * needs no disarm first: MODIFY_ATTRIBUTES moves it). Board unlocked. */
static void arm(struct pes_rt_thread *t, const struct plan *p)
{
    struct pes_rt_sampler *s = &t->s;
    uint32_t r = 0;
    if (p->found) {
        uint32_t gen = s->wp[0].gen + 1;
        s->wp_publisher = p->thread;
        s->wp_m2 = p->m;
        s->wp_d2 = p->len;
        s->wp_armed_ns = pes_rt_now();
        /* register 0: the published bytes (their largest aligned prefix) */
        uint32_t len = pes_rt_watch_len(p->m, p->len ? p->len : 1);
        if (pes_rt_watch_arm(t, r, p->m, len, 1, gen) == 0)
            r++;
        /* the others: random chunks of the line that do not overlap the published range */
        uint32_t order[LINE / CHUNK];
        for (uint32_t k = 0; k < LINE / CHUNK; k++)
            order[k] = k;
        for (uint32_t k = LINE / CHUNK - 1; k > 0; k--) {
            uint32_t j = (uint32_t)pes_rt_rand_below(&s->rng, k + 1);
            uint32_t tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (uint32_t k = 0; k < LINE / CHUNK && r < pes_rt.cfg.debug_registers; k++) {
            uint64_t c = p->line + order[k] * CHUNK;
            if (overlap(c, CHUNK, p->m, p->len ? p->len : 1))
                continue;
            if (pes_rt_watch_arm(t, r, c, CHUNK, 1, gen) == 0)
                r++;
        }
        for (uint32_t k = 0; k < r; k++)
            s->wp[k].gen = gen;
    }
    for (uint32_t k = r; k < pes_rt.cfg.debug_registers; k++)
        pes_rt_watch_disarm(t, k);
}

static void comm_sample(struct pes_rt_thread *t, const struct pes_event *ev)
{
    struct pes_rt_sampler *s = &t->s;
    uint64_t l1 = ev->addr & ~(uint64_t)(LINE - 1);
    uint32_t size = ev->size ? ev->size : 1;
    int write = (ev->flags & PES_EVF_WRITE) != 0;
    struct entry *e = &board[(l1 / LINE) % BOARD];
    struct plan p = {0};
    pthread_mutex_lock(&lock);
    int found = e->valid && e->line == l1;
    if (!found) {
        p = choose(t);
    } else if (e->thread != t->index && e->ts > s->t_prev) {
        comm_event(t, e->thread, ev->addr, size, overlap(ev->addr, size, e->m, e->len), write,
                   ev->ip, ev->site, 0);
        s->t_prev = e->ts;
    } else {
        p = choose(t);
    }
    /* publish a store unless the line holds an unexpired entry */
    if (write && !(found && e->ts >= s->prev_sample_ns)) {
        e->valid = 1;
        e->line = l1;
        e->m = ev->addr;
        e->len = size;
        e->thread = t->index;
        e->ts = ev->time;
    }
    pthread_mutex_unlock(&lock);
    if (p.act)
        arm(t, &p);
}

/* Signal handler: uses only what arm() stored in this thread. */
static void comm_trap(struct pes_rt_thread *t, uint32_t reg, uint32_t gen, uint64_t ip, int *disarm)
{
    struct pes_rt_sampler *s = &t->s;
    *disarm = 1;
    if (!s->wp[reg].armed || s->wp[reg].gen != gen || s->wp_publisher == UINT32_MAX)
        return;
    uint64_t chunk = s->wp[reg].addr;
    uint32_t len = s->wp[reg].len;
    comm_event(t, s->wp_publisher, chunk, len,
               overlap(chunk, len, s->wp_m2, s->wp_d2 ? s->wp_d2 : 1), 0, ip, UINT32_MAX, 1);
    /* the line is now local to this thread: stop watching it (ComDetective) */
    for (uint32_t r = 0; r < pes_rt.cfg.debug_registers; r++)
        if (r != reg)
            pes_rt_watch_disarm(t, r);
}

const struct pes_rt_mode pes_rt_mode_comm = {
    .name = "comm",
    .uses_watchpoints = 1,
    .start = pes_rt_watch_install,
    .thread_exit = pes_rt_watch_thread_exit,
    .sample = comm_sample,
    .trap = comm_trap,
};
