/* rt_sites.c — kind and size of every site id, for the soft sampler, which
 * must tell loads from stores in the records written since its last call.
 * Chunks are allocated at module registration and never moved or freed, so
 * the slow path (and a signal handler) read them without a lock. */
#include <stdlib.h>
#include <sys/mman.h>

#include "rt_internal.h"

/* One byte per possible id (1 = reads, 2 = writes): 4 GiB of address space
 * reserved, only the pages of registered ids ever touched; control ids read
 * untouched (zero) pages. This is the soft sampler's per-record cost, so it is
 * one load with no branch. NULL if the reservation failed (then the chunks). */
const uint8_t *pes_rt_site_bits;
static uint8_t *bits_rw;

static void reserve_bits(void)
{
    static int tried;
    if (tried)
        return;
    tried = 1;
    void *p = mmap(NULL, (size_t)1 << 32, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        bits_rw = p;
        __atomic_store_n(&pes_rt_site_bits, (const uint8_t *)p, __ATOMIC_RELEASE);
    }
}

#define CHUNK_BITS 16u
#define CHUNK (1u << CHUNK_BITS)
#define N_CHUNKS (1u << (32 - CHUNK_BITS))

static struct pes_rt_site_info *chunks[N_CHUNKS];

/* Called under the modules lock. */
void pes_rt_sites_add(const struct pes_rt_module *m, uint32_t base)
{
    reserve_bits();
    for (uint32_t i = 0; bits_rw && i < m->n_sites; i++) {
        uint8_t k = m->sites[i].kind;
        bits_rw[base + i] = (uint8_t)((pes_kind_reads(k) ? 1 : 0) | (pes_kind_writes(k) ? 2 : 0));
    }
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
