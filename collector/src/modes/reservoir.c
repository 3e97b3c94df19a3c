/* reservoir.c — which global watch slot a new sample takes (ReuseTracker
 * Alg. 2, AllowReplacement): inactive slots first, then active ones; a slot
 * accepts with probability 1/samples and counts the offer. An inactive slot has
 * samples = 1 (reset by the trap that decided it, Alg. 3 line 11), so it always
 * accepts. With one slot this is Vitter's reservoir of size one: after n offers
 * without a trap, each of the n sampled addresses is the one kept with
 * probability 1/n, however old it is. */
#include "modes/reservoir.h"
#include "core/core.h"

static int allow_replacement(struct pes_rt_reservoir_slot *s, uint64_t *rng)
{
    if (s->samples == 0)
        s->samples = 1;
    /* r <= 1/samples with r uniform: an integer draw in [0, samples) hitting 0 */
    int ok = pes_rt_rand_below(rng, s->samples) == 0;
    s->samples++;
    return ok;
}

int pes_rt_reservoir_pick(struct pes_rt_reservoir_slot *slots, uint32_t n, uint64_t *rng)
{
    for (int pass = 0; pass < 2; pass++) {
        int want_active = pass == 1;
        for (uint32_t i = 0; i < n; i++) {
            if ((slots[i].active != 0) != want_active)
                continue;
            if (allow_replacement(&slots[i], rng)) {
                slots[i].active = 1;
                return (int)i;
            }
        }
    }
    return -1;
}

void pes_rt_reservoir_release(struct pes_rt_reservoir_slot *slot)
{
    slot->active = 0;
    slot->samples = 1;
}
