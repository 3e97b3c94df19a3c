/*
 * accuracy_main.c — `pes-replay SAMPLED` (sampled analyses) and
 * `pes-replay --compare SAMPLED FULL` (accuracy against the full trace).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "accuracy.h"
#include "replay.h"
#include "report_util.h"

int replay_accuracy_main(const struct replay_options *o, const struct pes_machine *m) {
    struct pes_error err = {0};
    struct replay_sampled s;
    struct replay_truth t;
    memset(&t, 0, sizeof t);
    int have_s = 0, rc = 1;
    FILE *out = stdout;
    if (o->format == REPLAY_CSV) {
        snprintf(err.message, sizeof err.message, "--format csv: sampled and --compare reports are text or json");
        goto done;
    }
    if (replay_sampled_analyze(o->trace, &s, &err) < 0) goto done;
    have_s = 1;
    if (s.truncation[0]) replay_message("warning: %s", s.truncation);
    if (s.skipped[0]) replay_message("warning: %s", s.skipped);
    if (s.lost)
        replay_message("warning: %s: the collector lost %llu samples or events (LOST events: a full "
                       "buffer or the kernel's ring); the counts and histograms lack them",
                       o->trace, (unsigned long long)s.lost);
    struct replay_accuracy a;
    if (o->compare) {
        /* shared caches: --sockets if given, else what the collector simulated */
        uint32_t sockets = o->sockets > 1 ? o->sockets : (s.sockets ? s.sockets : 1);
        if (replay_truth_analyze(o->full, m, sockets, s.line, &t, &err) < 0) goto done;
        if (t.truncation[0]) replay_message("warning: %s", t.truncation);
        if (t.skipped[0]) replay_message("warning: %s", t.skipped);
        if (t.clipped[0]) replay_message("warning: %s", t.clipped);
        if (replay_accuracy_compute(&s, &t, o->knobs.top, &a, &err) < 0) goto done;
        if (!a.same_execution)
            replay_message("warning: %s and %s come from different executions", o->trace, o->full);
    }
    if (o->output && !(out = fopen(o->output, "w"))) {
        snprintf(err.message, sizeof err.message, "-o %s: %s", o->output, strerror(errno));
        out = stdout;
        goto done;
    }
    int wr;
    if (o->compare)
        wr = o->format == REPLAY_JSON ? replay_report_accuracy_json(out, o, &s, &t, &a)
                                      : replay_report_accuracy_text(out, o, &s, &t, &a);
    else
        wr = o->format == REPLAY_JSON ? replay_report_sampled_json(out, o->trace, &s, o->knobs.top)
                                      : replay_report_sampled_text(out, o->trace, &s, o->knobs.top);
    if (wr < 0 || fflush(out) != 0) {
        snprintf(err.message, sizeof err.message, "%s: write failed: %s", o->output ? o->output : "stdout",
                 strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (rc) replay_message("%s", err.message);
    if (out != stdout) fclose(out);
    if (have_s) replay_sampled_free(&s);
    replay_truth_free(&t);
    return rc;
}
