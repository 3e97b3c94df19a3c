#!/bin/bash
# samples_e2e.sh — pes-collect --samples N on a program of known length
# (samples_prog.c: each worker reads 256 longs cyclically, LEN loads; every
# sampled use is reused 255 accesses later, well within the shortest period,
# so nearly every sample is decided). Ground truth: the lengths given to the
# program, the schedule of docs/accuracy.md ("Enough samples by design":
# level k runs at cap >> (6 - k) and moves up after N more decided outcomes),
# and the trace's own REUSE events counted by pes-dump. Checked:
#  - the long thread gets >= N decided outcomes, the short one (fewer
#    accesses than N samples at the first period) stays at level 0;
#  - every PERIOD event has the period its level implies; each change comes
#    after N more decided outcomes than the previous one, and not a sample
#    later than needed;
#  - per completed level at most 2N samples (the bound with q >= 1/2);
#  - pes-replay reports the target and each thread's first/last period and
#    number of changes as the PERIOD events say;
#  - the program's output and exit status are its own; bad --samples values
#    are refused naming the flag; a run without --samples has no PERIOD events.
set -euo pipefail
: "${PES_BIN:?PES_BIN must name the bin directory of the build}"
: "${PES_SRC:?PES_SRC must name the source tree}"
PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PES_BIN/pes-clang" -O2 -pthread -o prog "$PES_SRC/tests/e2e/accuracy/samples_prog.c"
LONG=4000000 SHORT=20000 CAP=64000 N=50

set +e
./prog $LONG $SHORT >plain.out; plain_rc=$?
"$PES_BIN/pes-collect" --mode reuse --backend soft --period $CAP --samples $N --seed 7 -q \
    -o s.zst ./prog $LONG $SHORT >coll.out; coll_rc=$?
set -e
[ "$plain_rc" = 3 ] && [ "$coll_rc" = 3 ] || fail "exit status $plain_rc / $coll_rc, want 3"
cmp -s plain.out coll.out || fail "the program's output changed under pes-collect"

"$PES_BIN/pes-dump" --format json s.zst >dump.json
"$PES_BIN/pes-replay" s.zst --format json >rep.json
"$PES_BIN/pes-replay" s.zst >rep.txt
grep -q "Adaptive period (--samples $N" rep.txt || fail "the text report does not state the adaptive period"

"$PY" - dump.json rep.json $LONG $SHORT $CAP $N <<'PYEOF' || fail "adaptive period"
import json, sys
dump, rep = sys.argv[1], sys.argv[2]
LONG, SHORT, CAP, N = map(int, sys.argv[3:7])
LEVELS = 6
header, events = None, []
for line in open(dump):
    o = json.loads(line)
    if o["type"] == "header": header = o
    elif o["type"] == "event": events.append(o)
cfg = header["config"]
assert f"samples_target={N}" in cfg and "period_levels=6" in cfg, cfg
totals = {e["thread"]: e for e in events if e["kind"] == "totals"}
def thread_of(length):
    # the worker that made `length` loads (plus its few scalar ones)
    ts = [t for t, e in totals.items() if length <= e["loads"] <= length + 64]
    assert len(ts) == 1, (length, {t: e["loads"] for t, e in totals.items()})
    return ts[0]
rj = json.load(open(rep))
assert rj["samples_target"] == N and rj["period_load"] == CAP
for length in (LONG, SHORT):
    t = thread_of(length)
    per = sorted((e for e in events if e["kind"] == "period" and e["thread"] == t), key=lambda e: e["time"])
    samples = sorted(e["time"] for e in events if e["kind"] == "sample" and e["thread"] == t)
    decided = sorted(e["time"] for e in events if e["kind"] in ("reuse", "inval") and e["thread"] == t)
    before = lambda x: sum(1 for d in decided if d <= x)
    assert per, f"thread {t}: no PERIOD event"
    for k, p in enumerate(per):
        want = max(1, CAP >> (LEVELS - k))
        assert p["size"] == k, (t, k, p)
        assert p["aux"] == want and p["distance"] == want, (t, k, p["aux"], want)
    for k in range(1, len(per)):
        t0 = per[k - 1]["time"] if k > 1 else 0
        got = before(per[k]["time"]) - (before(per[k - 1]["time"]) if k > 1 else 0)
        assert got >= N, f"thread {t}: level {k} after only {got} decided outcomes"
        # not later than needed: at the sample before the trigger, fewer than N
        prev = [s for s in samples if t0 < s < per[k]["time"]]
        if len(prev) >= 2:
            assert before(prev[-2]) - (before(per[k - 1]["time"]) if k > 1 else 0) < N, f"thread {t}: level {k} late"
        assert len(prev) <= 2 * N, f"thread {t}: {len(prev)} samples at level {k - 1}"
    d = len(decided)
    pt = rj["per_thread"][t]["period"]
    assert pt["first_load"] == per[0]["aux"] and pt["last_load"] == per[-1]["aux"], pt
    assert pt["changes"] == len(per) - 1, pt
    print(f"thread {t}: {length} loads, {len(samples)} samples, {d} decided, levels 0..{len(per) - 1}, "
          f"periods {per[0]['aux']}..{per[-1]['aux']}")
    if length == LONG:
        assert d >= N, f"thread {t}: {d} decided outcomes < {N}"
        assert len(per) >= 3, "the long thread should pass several levels"
    else:
        assert length < N * (CAP >> LEVELS) and len(per) == 1, "the short thread changed its period"
PYEOF

# both reports follow the published schema (samples_target, per_thread[].period)
"$PY" - "$PES_SRC/docs/sampled.schema.json" rep.json <<'PYEOF' || fail "the report does not match docs/sampled.schema.json"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PYEOF

# --by object weighs each reuse by its sample's period as the histograms do:
# its rows add up to the decided estimator's intra-thread histogram, which is
# well below the raw reuse count (the ramp's samples weigh 1/64 .. 1/2)
"$PES_BIN/pes-replay" s.zst --by object --reuse-estimator decided --format json >obj.json
"$PY" - obj.json <<'PYEOF' || fail "--by object weights"
import json, sys
j = json.load(open(sys.argv[1]))
hist = sum(b["count"] for b in j["intra"]["time_histogram"])
objs = sum(b["count"] for g in j["groups"] for b in g["reuse_time_histogram"])
raw = j["intra"]["reuses"]
print(f"--by object: weighted {objs:.3f}, histogram {hist:.3f}, raw reuses {raw}")
assert abs(objs - hist) <= 1e-6 * max(1, hist), (objs, hist)
assert objs < 0.5 * raw, (objs, raw)
PYEOF
"$PY" -c "import json, sys, jsonschema; jsonschema.validate(json.load(open('obj.json')), json.load(open(sys.argv[1])))" \
    "$PES_SRC/docs/sampled.schema.json" || fail "the --by object report does not match its schema"

# without --samples: the trace and its report are as before
"$PES_BIN/pes-collect" --mode reuse --backend soft --period $CAP --seed 7 -q -o f.zst ./prog 100000 >/dev/null || true
"$PES_BIN/pes-dump" --format json f.zst | grep -q '"kind":"period"' && fail "PERIOD events without --samples"
"$PES_BIN/pes-dump" --header-only f.zst | grep -q samples_target && fail "samples_target without --samples"

# bad values name the flag
for bad in "--mode reuse --samples 0" "--mode reuse --samples abc" "--full --samples 5"; do
    set +e
    "$PES_BIN/pes-collect" $bad -o x.zst ./prog 10 >/dev/null 2>err.txt; rc=$?
    set -e
    [ "$rc" = 2 ] || fail "pes-collect $bad: exit $rc, want 2"
    grep -q -- "--samples" err.txt || fail "pes-collect $bad: the message does not name --samples: $(cat err.txt)"
done
echo "samples_e2e: ok"
