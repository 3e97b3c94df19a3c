/* dl_lib — the shared library dlopen_loop loads and unloads: memory work on
 * its own static array, unmapped again at each dlclose. */
#include "bh.h"

static unsigned long table[1024];

unsigned long bh_lib_work(long rounds)
{
    memset(table, 0, sizeof table);   /* a fresh mapping each load anyway */
    return bh_sweep(table, 1024, rounds);
}
