/* rt_modules.c — module registration (__pes_register_module, once the
 * runtime has started: start/rt_start.c): consecutive id ranges from 0 in
 * registration order; the converted tables go through the writer queue, so a
 * MODULE block always precedes the records that use its ids. Also where the
 * code of a loaded object lies (pes_rt_code_range_of). */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>

#include "core/core.h"

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_id;

static void register_entered(struct pes_rt_module *m);

void pes_rt_modules_register(struct pes_rt_module *m)
{
    if (!m || !m->id_base)
        return;
    /* its allocations are the runtime's, not the program's (rt_alloc.c) */
    int entered = pes_rt_enter_quick() == 0;
    register_entered(m);
    if (entered)
        pes_rt_leave_quick();
}

static void register_entered(struct pes_rt_module *m)
{
    if (m->abi_version != PES_RT_ABI_VERSION) {
        pes_rt_message("%s: instrumented for runtime ABI %u, this runtime is ABI %u; rebuild it",
                       m->name ? m->name : "?", m->abi_version, PES_RT_ABI_VERSION);
        *m->id_base = 0;
        return;
    }
    pthread_mutex_lock(&modules_lock);
    uint32_t base;
    if (pes_rt_assign_range(&next_id, m->n_sites, m->n_bbs, &base)) {
        pthread_mutex_unlock(&modules_lock);
        pes_rt_message("%s: too many sites and blocks for the 32-bit id space; its ids are wrong",
                       m->name ? m->name : "?");
        *m->id_base = 0;
        return;
    }
    *m->id_base = base;
    pes_rt_sites_add(m, base);
    if (pes_rt_active()) {
        struct pes_rt_item *it = calloc(1, sizeof *it);
        struct pes_module *conv = pes_rt_module_convert(m, base);
        if (it && conv) {
            it->type = PES_RT_ITEM_MODULE;
            it->heap = 1;
            it->module = conv;
            pes_rt_writer_push(it);
        } else {
            free(it);
            free(conv);
            pes_rt_message("%s: out of memory; its tables are missing from the trace",
                           m->name ? m->name : "?");
        }
    }
    pthread_mutex_unlock(&modules_lock);
}

/* ------------------------------------------------------------ code ranges */

struct code_search {
    uint64_t fn;
    struct pes_rt_code_range found;
};

static int find_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct code_search *c = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (c->fn >= lo && c->fn < hi) {
            c->found = (struct pes_rt_code_range){lo, hi};
            return 1;
        }
    }
    return 0;
}

struct pes_rt_code_range pes_rt_code_range_of(const void *fn)
{
    struct code_search c = {(uint64_t)(uintptr_t)fn, {0, 0}};
    dl_iterate_phdr(find_code, &c);
    return c.found;
}
