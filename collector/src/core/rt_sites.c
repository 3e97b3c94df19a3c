/* rt_sites.c — kind and size of every site id, for the soft sampler, which
 * must tell loads from stores in the records written since its last call.
 * Chunks are allocated at module registration and never moved or freed, so
 * the slow path (and a signal handler) read them without a lock. */
#include <stdlib.h>
#include <sys/mman.h>

#include "core/core.h"

#define CHUNK_BITS 16u
#define CHUNK      (1u << CHUNK_BITS)
#define N_CHUNKS   (1u << (32 - CHUNK_BITS))

static struct pes_rt_site_info *chunks[N_CHUNKS];

/* One 32-bit weight per id below 2^28 (1 GiB of address space reserved with
 * MAP_NORESERVE; only the pages of registered ids are touched): this is the
 * soft sampler's per-record cost, one load and one add. */
const uint32_t *pes_rt_site_weights;
static uint32_t *weights_rw;
static int weights_tried;

static void reserve_weights(void)
{
    if (weights_tried)
        return;
    weights_tried = 1;
    size_t bytes = ((size_t)PES_RT_WEIGHT_IDS + 1) * sizeof(uint32_t);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p != MAP_FAILED) {
        weights_rw = p;
        __atomic_store_n(&pes_rt_site_weights, (const uint32_t *)p, __ATOMIC_RELEASE);
    }
}

void pes_rt_sites_add(const struct pes_rt_module *m, uint32_t base)
{
    reserve_weights();
    if (weights_rw && (uint64_t)base + m->n_sites > PES_RT_WEIGHT_IDS) {
        /* beyond the table: every record goes through the chunks from now on */
        __atomic_store_n(&pes_rt_site_weights, (const uint32_t *)NULL, __ATOMIC_RELEASE);
        weights_rw = NULL;
    }
    for (uint32_t i = 0; weights_rw && i < m->n_sites; i++) {
        uint8_t k = m->sites[i].kind;
        weights_rw[base + i] = (pes_kind_reads(k) ? 1u : 0u) + (pes_kind_writes(k) ? 1u << 16 : 0u);
    }
    for (uint32_t i = 0; i < m->n_sites; i++) {
        uint32_t id = base + i;
        struct pes_rt_site_info **c = &chunks[id >> CHUNK_BITS];
        if (!*c) {
            struct pes_rt_site_info *fresh = pes_rt_calloc_lines(CHUNK, sizeof *fresh);
            if (!fresh)
                return; /* these sites count as neither loads nor stores */
            __atomic_store_n(c, fresh, __ATOMIC_RELEASE);
        }
        const struct pes_rt_site *s = &m->sites[i];
        struct pes_rt_site_info info = {s->kind, s->flags,
                                        (uint16_t)(s->size > UINT16_MAX ? UINT16_MAX : s->size)};
        (*c)[id & (CHUNK - 1)] = info;
    }
}

struct pes_rt_site_info pes_rt_sites_get(uint32_t id)
{
    struct pes_rt_site_info *c = __atomic_load_n(&chunks[id >> CHUNK_BITS], __ATOMIC_ACQUIRE);
    struct pes_rt_site_info none = {0, 0, 0};
    return c ? c[id & (CHUNK - 1)] : none;
}
