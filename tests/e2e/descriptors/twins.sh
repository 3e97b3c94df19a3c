#!/bin/sh
# twins.sh BIN WORK THREADS SIZE_ARG SRC [CFLAGS...]
# Builds SRC with pes-clang -O2, records two full traces of the same run on
# one address layout (setarch -R; the environments have the same size): one
# with loop descriptors, one with --no-descriptors. The expanded per-thread
# record sequences must be equal, access for access (time marks' positions
# included, their timestamps not), the descriptor trace must hold loop
# descriptors, and with one thread every report of the two traces must be
# equal. Issue 27 / docs/llvm-pass.md "Loop descriptors".
set -eu
BIN=$1 WORK=$2 THREADS=$3 SIZE=$4 SRC=$5
shift 5
name=$(basename "$SRC" .c).t$THREADS
rm -rf "$WORK/$name" && mkdir -p "$WORK/$name" && cd "$WORK/$name"
fail() { echo "twins $name: $*" >&2; exit 1; }
"$BIN/pes-clang" -O2 -g -fopenmp "$@" "$SRC" -o prog || fail "build failed"
run() { # run OUT [flags]: same environment size in both runs
    out=$1; shift
    OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=false setarch "$(uname -m)" -R \
        "$BIN/pes-collect" --full --quiet "$@" -o "$out" -- ./prog $SIZE > "$out.stdout" \
        || fail "pes-collect $* failed"
}
PES_DESCRIPTORZ=0 run dsc.zst # the same length as --no-descriptors' PES_DESCRIPTORS=0
run off.zst --no-descriptors
cmp -s dsc.zst.stdout off.zst.stdout || fail "program output differs"
for t in dsc off; do
    # records per thread, in order; time marks without their timestamps
    "$BIN/pes-dump" "$t.zst" > "$t.dump" || fail "pes-dump --expand $t failed"
    awk '/^T[0-9]+ / { if ($2 == "time" || $2 == "thread_end") print $1, $2; else print }' \
        "$t.dump" | sort -s -k1,1 > "$t.seq"
done
n=$(wc -l < off.seq)
[ "$n" -gt 1000 ] || fail "only $n records"
if ! cmp -s dsc.seq off.seq; then
    diff dsc.seq off.seq | head -5 >&2
    fail "expanded records differ from the --no-descriptors twin"
fi
"$BIN/pes-dump" dsc.zst | grep -q " loop " || fail "no loop descriptor in the trace"
loops=$("$BIN/pes-dump" dsc.zst | grep -c " loop " || true)
if [ "$THREADS" = 1 ]; then
    for t in dsc off; do
        "$BIN/pes-replay" "$t.zst" --machine haswell --format json -o "$t.json" \
            || fail "pes-replay $t failed"
        "$BIN/pes-replay" "$t.zst" --machine haswell --simulate --format json -o "$t.sim.json" \
            || fail "pes-replay --simulate $t failed"
    done
    python3 - dsc.json off.json dsc.sim.json off.sim.json <<'PY' || fail "reports differ"
import json, sys
def strip(v):
    # what names the trace file or the run, not what it measured
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items()
                if k not in ("trace", "file", "path", "command", "created", "descriptors",
                             "bytes", "file_bytes", "compressed_bytes", "bytes_per_record",
                             "host", "pid", "wall_seconds", "elapsed")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
a, b, c, d = (json.load(open(p)) for p in sys.argv[1:5])
bad = 0
for x, y, what in ((a, b, "report"), (c, d, "--simulate report")):
    if strip(x) != strip(y):
        print(f"{what}: differs", file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
fi
echo "twins $name: $n records equal, $loops descriptor groups"
