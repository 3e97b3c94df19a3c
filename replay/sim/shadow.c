/*
 * shadow — fully associative LRU stacks for the capacity / conflict split
 * (shadow.h).
 *
 * A stack is a doubly linked list, most recently used first, cut into
 * segments: segment j holds the positions [cap[j-1], cap[j]) of the sorted
 * level sizes, so the fully associative cache of a level with cap[j] lines
 * holds exactly the lines of segments 0..j. A hash map finds a line's node.
 * An access moves the line to the front; each segment it passed over then
 * holds one line too many and hands its last one to the next segment (only
 * labels and segment tails change), so an access costs one hash probe and
 * O(levels) pointer updates.
 *
 * The map of a large stack (a shared level's: 131,072 lines for 8 MiB)
 * misses the host's caches on nearly every probe, while most accesses go to
 * lines used a moment ago: a small direct-mapped memo (line -> node, checked
 * against the node's line; a freed node's line is cleared) answers those
 * without the map.
 */
#include "shadow.h"

#include <stdlib.h>
#include <string.h>

#define NIL    UINT32_MAX
#define NOLINE UINT64_MAX
/* memo entries: 64 KiB a stack (16 KiB halved its gain on gemm: the lines of a
 * matrix row or column outnumber 4096) */
#define MEMO_BITS 14

struct node {
    uint64_t line;
    uint32_t prev, next;
    uint32_t seg;
};

struct slot {
    uint64_t key;
    uint32_t val;
};

struct stack {
    uint32_t n_seg;
    uint64_t width[PES_MAX_LEVELS]; /* lines per segment */
    uint64_t count[PES_MAX_LEVELS];
    uint32_t tail[PES_MAX_LEVELS];      /* each segment's last node, NIL when empty */
    uint8_t level_seg[PES_MAX_LEVELS];  /* level k (of this stack) held <=> node segment <= this */
    uint32_t level_bit[PES_MAX_LEVELS]; /* the level's bit in the result */
    uint32_t n_levels;
    uint32_t head;
    /* nodes: one host cache line holds two, so a touch costs one miss */
    struct node *node;
    uint32_t n_nodes, cap_nodes, free_list;
    /* map: line -> node, linear probing, NOLINE empty; a slot is its key and value */
    struct slot *map;
    unsigned bits;
    uint64_t last;  /* the line of the previous access (the front), NOLINE none */
    uint32_t *memo; /* [1 << MEMO_BITS] a recent line's node, by its low bits; NIL none */
};

struct pes_sim_shadow {
    uint32_t n_cores;
    uint32_t *core_socket;
    struct stack *core, *socket; /* private stacks (NULL: no private level), shared ones */
    uint32_t n_sockets;
};

static void stack_free(struct stack *st)
{
    free(st->node), free(st->map), free(st->memo);
}

/* caps[i] lines for the levels whose bits are bit[i] (n of them). 0 or -1. */
static int stack_init(struct stack *st, const uint64_t *caps, const uint32_t *bit, uint32_t n)
{
    memset(st, 0, sizeof *st);
    st->head = NIL;
    st->last = NOLINE;
    st->free_list = NIL;
    uint64_t sorted[PES_MAX_LEVELS];
    memcpy(sorted, caps, n * sizeof *caps);
    for (uint32_t i = 1; i < n; i++) /* insertion sort: at most 4 */
        for (uint32_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            uint64_t x = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = x;
        }
    st->n_seg = n;
    for (uint32_t j = 0; j < n; j++) {
        st->width[j] = sorted[j] - (j ? sorted[j - 1] : 0);
        st->tail[j] = NIL;
    }
    st->n_levels = n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = 0;
        while (sorted[j] != caps[i])
            j++;
        st->level_seg[i] = (uint8_t)j;
        st->level_bit[i] = bit[i];
    }
    uint64_t most = n ? sorted[n - 1] : 0;
    if (most >= UINT32_MAX - 1)
        return -1;
    if (most == 0) /* levels smaller than a line hold nothing */
        st->n_seg = st->n_levels = 0;
    st->cap_nodes = (uint32_t)most + 1;
    while ((UINT64_C(1) << st->bits) < 2 * (uint64_t)st->cap_nodes)
        st->bits++;
    size_t slots = (size_t)1 << st->bits;
    st->node = malloc(st->cap_nodes * sizeof *st->node);
    st->map = malloc(slots * sizeof *st->map);
    st->memo = malloc(sizeof *st->memo << MEMO_BITS);
    if (!st->node || !st->map || !st->memo)
        return -1;
    for (size_t j = 0; j < slots; j++)
        st->map[j].key = NOLINE;
    for (size_t j = 0; j < (size_t)1 << MEMO_BITS; j++)
        st->memo[j] = NIL;
    return 0;
}

static uint32_t map_find(const struct stack *st, uint64_t line)
{
    uint64_t mask = (UINT64_C(1) << st->bits) - 1, j = pes_hash_fib(line, st->bits);
    for (;; j = (j + 1) & mask) {
        if (st->map[j].key == line)
            return st->map[j].val;
        if (st->map[j].key == NOLINE)
            return NIL;
    }
}

static void map_put(struct stack *st, uint64_t line, uint32_t node)
{
    uint64_t mask = (UINT64_C(1) << st->bits) - 1, j = pes_hash_fib(line, st->bits);
    while (st->map[j].key != NOLINE)
        j = (j + 1) & mask;
    st->map[j] = (struct slot){line, node};
}

/* Removes line (present) with backward-shift deletion: no tombstones. */
static void map_del(struct stack *st, uint64_t line)
{
    uint64_t mask = (UINT64_C(1) << st->bits) - 1, j = pes_hash_fib(line, st->bits);
    while (st->map[j].key != line)
        j = (j + 1) & mask;
    for (uint64_t k = (j + 1) & mask;; k = (k + 1) & mask) {
        if (st->map[k].key == NOLINE)
            break;
        uint64_t home = pes_hash_fib(st->map[k].key, st->bits);
        /* k's entry may move to j when its home is not in (j, k] cyclically */
        if (((k - home) & mask) >= ((k - j) & mask)) {
            st->map[j] = st->map[k];
            j = k;
        }
    }
    st->map[j].key = NOLINE;
}

static void unlink_node(struct stack *st, uint32_t x)
{
    uint32_t s = st->node[x].seg;
    if (st->tail[s] == x)
        st->tail[s] = st->count[s] > 1 ? st->node[x].prev : NIL;
    st->count[s]--;
    if (st->node[x].prev != NIL)
        st->node[st->node[x].prev].next = st->node[x].next;
    else
        st->head = st->node[x].next;
    if (st->node[x].next != NIL)
        st->node[st->node[x].next].prev = st->node[x].prev;
}

/* x to the front, in segment 0. */
static void push_front(struct stack *st, uint32_t x)
{
    st->node[x].prev = NIL;
    st->node[x].next = st->head;
    if (st->head != NIL)
        st->node[st->head].prev = x;
    st->head = x;
    st->node[x].seg = 0;
    if (st->count[0]++ == 0)
        st->tail[0] = x;
}

/* Segments 0..upto-1 each gained a line: each hands its last to the next.
 * Past the last segment the line leaves the stack. */
static void cascade(struct stack *st, uint32_t upto)
{
    for (uint32_t j = 0; j < upto; j++) {
        if (st->count[j] <= st->width[j])
            return;
        uint32_t x = st->tail[j];
        st->tail[j] = --st->count[j] ? st->node[x].prev : NIL;
        if (j + 1 < st->n_seg) {
            st->node[x].seg = (uint8_t)(j + 1);
            if (st->count[j + 1]++ == 0)
                st->tail[j + 1] = x;
        } else { /* the least recently used line leaves */
            if (st->node[x].prev != NIL)
                st->node[st->node[x].prev].next = NIL;
            else
                st->head = NIL;
            map_del(st, st->node[x].line);
            st->node[x].line = NOLINE; /* the memo may still name it */
            st->node[x].next = st->free_list;
            st->free_list = x;
        }
    }
}

static uint32_t held_bits(const struct stack *st, uint32_t seg)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < st->n_levels; i++)
        if (seg <= st->level_seg[i])
            m |= st->level_bit[i];
    return m;
}

static int stack_access(struct stack *st, uint64_t line)
{
    if (st->n_seg == 0)
        return 0;
    if (st->last == line) /* already the front */
        return (int)held_bits(st, 0);
    st->last = line;
    uint32_t *memo = &st->memo[line & ((1u << MEMO_BITS) - 1)];
    uint32_t x = *memo;
    if (x == NIL || st->node[x].line != line)
        x = *memo = map_find(st, line);
    if (x != NIL) {
        uint32_t s = st->node[x].seg;
        int held = (int)held_bits(st, s);
        if (st->head != x) {
            unlink_node(st, x);
            push_front(st, x);
            cascade(st, s);
        }
        return held;
    }
    if (st->free_list != NIL) {
        x = st->free_list;
        st->free_list = st->node[x].next;
    } else {
        x = st->n_nodes++; /* cap_nodes is one more than the stack holds */
    }
    st->node[x].line = line;
    map_put(st, line, x);
    *memo = x;
    push_front(st, x);
    cascade(st, st->n_seg);
    return 0;
}

void pes_sim_shadow_destroy(struct pes_sim_shadow *sh)
{
    if (!sh)
        return;
    for (uint32_t c = 0; sh->core && c < sh->n_cores; c++)
        stack_free(&sh->core[c]);
    for (uint32_t s = 0; sh->socket && s < sh->n_sockets; s++)
        stack_free(&sh->socket[s]);
    free(sh->core), free(sh->socket), free(sh->core_socket);
    free(sh);
}

struct pes_sim_shadow *pes_sim_shadow_create(const struct pes_machine *m, uint32_t n_cores,
                                             const uint32_t *core_socket, struct pes_error *err)
{
    if (!m || n_cores == 0 || m->n_levels == 0 || m->n_levels > PES_MAX_LEVELS ||
        (!core_socket && m->cores_per_socket == 0)) {
        pes_error_set(err, PES_ERR_ARG, 0, "shadow: no cores or levels");
        return NULL;
    }
    struct pes_sim_shadow *sh = calloc(1, sizeof *sh);
    if (!sh)
        goto nomem;
    sh->n_cores = n_cores;
    if (!(sh->core_socket = malloc(n_cores * sizeof *sh->core_socket)))
        goto nomem;
    for (uint32_t c = 0; c < n_cores; c++) {
        sh->core_socket[c] = core_socket ? core_socket[c] : c / m->cores_per_socket;
        if (sh->core_socket[c] + 1 > sh->n_sockets)
            sh->n_sockets = sh->core_socket[c] + 1;
    }
    /* private levels first, then shared ones (as cachesim.h orders them) */
    uint64_t pcap[PES_MAX_LEVELS], scap[PES_MAX_LEVELS];
    uint32_t pbit[PES_MAX_LEVELS], sbit[PES_MAX_LEVELS], np = 0, ns = 0;
    for (uint32_t k = 0; k < m->n_levels; k++) {
        uint32_t line = m->level[k].line ? m->level[k].line : m->level[0].line;
        uint64_t lines = line ? m->level[k].size / line : 0;
        if (!m->level[k].shared && ns == 0)
            pcap[np] = lines, pbit[np++] = 1u << k;
        else
            scap[ns] = lines, sbit[ns++] = 1u << k;
    }
    if (!(sh->core = calloc(n_cores, sizeof *sh->core)) ||
        !(sh->socket = calloc(sh->n_sockets, sizeof *sh->socket)))
        goto nomem;
    for (uint32_t c = 0; c < n_cores; c++)
        if (stack_init(&sh->core[c], pcap, pbit, np) < 0)
            goto nomem;
    for (uint32_t s = 0; s < sh->n_sockets; s++)
        if (stack_init(&sh->socket[s], scap, sbit, ns) < 0)
            goto nomem;
    return sh;
nomem:
    pes_sim_shadow_destroy(sh);
    pes_error_set(err, PES_ERR_NOMEM, 0, "shadow: out of memory");
    return NULL;
}

int pes_sim_shadow_access(struct pes_sim_shadow *sh, uint32_t core, uint64_t lineno)
{
    if (core >= sh->n_cores)
        return 0;
    return stack_access(&sh->core[core], lineno) |
           stack_access(&sh->socket[sh->core_socket[core]], lineno);
}

uint64_t pes_sim_shadow_lines(uint64_t addr, uint32_t size, unsigned line_shift)
{
    uint64_t last = addr + (size ? size : 1) - 1;
    if (last < addr)
        last = UINT64_MAX;
    return (last >> line_shift) - (addr >> line_shift) + 1;
}

uint64_t pes_sim_shadow_range(struct pes_sim_shadow *sh, uint32_t core, uint64_t addr,
                              uint32_t size, unsigned line_shift, uint8_t *out)
{
    uint64_t n = pes_sim_shadow_lines(addr, size, line_shift), first = addr >> line_shift;
    for (uint64_t j = 0; j < n; j++)
        out[j] = (uint8_t)pes_sim_shadow_access(sh, core, first + j);
    return n;
}

uint32_t pes_sim_shadow_stacks(const struct pes_sim_shadow *sh)
{
    return sh->n_cores + sh->n_sockets;
}

uint32_t pes_sim_shadow_stack_of(const struct pes_sim_shadow *sh, uint32_t core, int shared)
{
    return shared ? sh->n_cores + sh->core_socket[core] : core;
}

uint64_t pes_sim_shadow_stack_range(struct pes_sim_shadow *sh, uint32_t stack, uint64_t addr,
                                    uint32_t size, unsigned line_shift, uint8_t *out)
{
    struct stack *st = stack < sh->n_cores ? &sh->core[stack] : &sh->socket[stack - sh->n_cores];
    uint64_t n = pes_sim_shadow_lines(addr, size, line_shift), first = addr >> line_shift;
    for (uint64_t j = 0; j < n; j++)
        out[j] = (uint8_t)stack_access(st, first + j);
    return n;
}
