/*
 * pes_replay.c — `pes-replay TRACE [options]`: reuse profiles, SDCM hit rates,
 * runtime prediction and cache + MESI simulation of a full trace (or a
 * plain-text address trace); sampled traces and --compare: replay_sampled.c.
 * See `pes-replay --help` and docs/replay.md.
 */
#include <stdio.h>
#include <string.h>

#include "part_link.h"
#include "replay_run.h"
#include "report_util.h"

int main(int argc, char **argv)
{
    struct replay_options o;
    int rc = replay_parse_options(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (o.mpi_window) {
        replay_message(
            "--mpi-window: only with pes-replay-mpi (mpirun -np N pes-replay-mpi TRACE ...)");
        return 2;
    }

    struct pes_error err = {0};
    static struct pes_machine machine;
    if (replay_load_machine(&o, &machine, &err) < 0)
        return replay_fail(&err);
    if (o.show_machine) {
        pes_machine_print(&machine, stdout);
        return 0;
    }
    /* before anything opens them: a fifo would block, /dev/zero never end */
    if (replay_input_check_file(o.trace, &err) < 0 ||
        ((o.compare || o.diff) && replay_input_check_file(o.full, &err) < 0))
        return replay_fail(&err);
    if (o.diff)
        return replay_diff(&o, &machine);
    /* sampled traces and --compare: replay_sampled.c */
    if (!o.compare && replay_input_pes_kind(o.trace) == PES_TRACE_SAMPLED) {
        /* a sampled trace holds events, not the access stream these replay: say what works instead */
        if (o.full_only) {
            replay_message(
                "%s: a sampled trace; --%s needs a full trace (pes-collect --full): "
                "pes-replay %s alone reports its samples, --compare %s FULL their accuracy",
                o.trace, o.full_only, o.trace, o.trace);
            return 2;
        }
        return replay_sampled(&o, &machine);
    }
    if (o.compare) {
        /* unreadable traces are left to the analyses, which name the damage */
        int first = replay_input_pes_kind(o.trace), second = replay_input_pes_kind(o.full);
        if (first == PES_TRACE_FULL && second == PES_TRACE_SAMPLED) {
            replay_message("--compare SAMPLED FULL: %s is a full trace and %s a sampled one; "
                           "give the sampled trace first",
                           o.trace, o.full);
            return 2;
        }
        if (second == PES_TRACE_SAMPLED) {
            replay_message(
                "--compare SAMPLED FULL: %s is a sampled trace; the second trace must be "
                "the full trace of the same program (pes-collect --full; both from one run: "
                "pes-collect --mode MODE --full)",
                o.full);
            return 2;
        }
        if (first == PES_TRACE_FULL) {
            replay_message("--compare SAMPLED FULL: %s is a full trace; the first trace must be a "
                           "sampled trace (pes-collect --mode MODE)",
                           o.trace);
            return 2;
        }
        return replay_sampled(&o, &machine);
    }
    /* --jobs N: N time parts on N threads where the report allows it (else,
     * and with --parts no, the stages on N workers): parts measured faster,
     * with a serial part of 1-2 % against 17-20 % (docs/replay.md) */
    if (o.knobs.jobs >= 2 && o.parts != REPLAY_PARTS_NO)
        return replay_parts_run(&o, &machine, o.knobs.jobs);
    return replay_full(&o, &machine, NULL);
}
