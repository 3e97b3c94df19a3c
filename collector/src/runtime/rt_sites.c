/* rt_sites.c — kind and size of every site id, for the soft sampler, which
 * must tell loads from stores in the records written since its last call.
 * Chunks are allocated at module registration and never moved or freed, so
 * the slow path (and a signal handler) read them without a lock. */
#include <stdlib.h>

#include "rt_internal.h"

#define CHUNK_BITS 16u
#define CHUNK (1u << CHUNK_BITS)
#define N_CHUNKS (1u << (32 - CHUNK_BITS))

static struct pes_rt_site_info *chunks[N_CHUNKS];

void pes_rt_sites_add(const struct pes_rt_module *m, uint32_t base)
{
    for (uint32_t i = 0; i < m->n_sites; i++) {
        uint32_t id = base + i;
        struct pes_rt_site_info **c = &chunks[id >> CHUNK_BITS];
        if (!*c) {
            struct pes_rt_site_info *fresh = calloc(CHUNK, sizeof *fresh);
            if (!fresh)
                return;   /* these sites count as neither loads nor stores */
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
