#!/bin/sh
# twins.sh BIN WORK THREADS SIZE_ARG SRC [CFLAGS...]
# Builds SRC with pes-clang -O2, records two full traces of the same run on
# one address layout (setarch -R; the environments have the same size): one
# with loop descriptors, one with --no-descriptors. The expanded per-thread
# record sequences must be equal, access for access (time marks' positions
# included, their timestamps not; sequences.py), the descriptor trace must hold loop
# descriptors (TWINS_MIN_GROUPED: a share of its records in groups), and
# with one thread every report of the two traces must be equal. Issue 27 / docs/llvm-pass.md "Loop descriptors".
set -eu
BIN=$1 WORK=$2 THREADS=$3 SIZE=$4 SRC=$5
shift 5
name=$(basename "$SRC" .c).t$THREADS
rm -rf "$WORK/$name" && mkdir -p "$WORK/$name" && cd "$WORK/$name"
fail() { echo "twins $name: $*" >&2; exit 1; }
"$BIN/pes-clang" -O2 -g -fopenmp "$@" "$SRC" -o prog || fail "build failed"
run() { # run OUT [flags]: same environment size in both runs
    out=$1; shift
    # MALLOC_MMAP_THRESHOLD_: the programs' blocks (< 32 MiB) from the main
    # heap, not from mmap (see layout below)
    MALLOC_MMAP_THRESHOLD_=33554432 OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=false \
        setarch "$(uname -m)" -R \
        "$BIN/pes-collect" --full --quiet --force "$@" -o "$out" -- ./prog $SIZE > "$out.stdout" \
        || fail "pes-collect $* failed"
}
# where each run's heap blocks and stacks landed
layout() { "$BIN/pes-dump" "$1" | awk '$2 == "alloc" { print $1, $3 }'; }
# The reports are compared on one layout: a block the size of an mmap would
# land where the collector's writer threads left room, which moves between
# any two runs of one program (not only between these two): the runs take
# their blocks from the main heap instead; a pair whose layouts still differ
# is recorded again, up to 4 times.
attempt=0
while :; do
    PES_DESCRIPTORZ=0 run dsc.zst # the same length as --no-descriptors' PES_DESCRIPTORS=0
    run off.zst --no-descriptors
    layout dsc.zst > dsc.layout
    layout off.zst > off.layout
    attempt=$((attempt + 1))
    # reports are compared at one thread only: other threads' stacks and
    # libomp's blocks move anyway (sequences.py names them)
    [ "$THREADS" != 1 ] && break
    cmp -s dsc.layout off.layout && break
    [ "$attempt" -lt 4 ] || fail "the two runs placed their heap blocks differently 4 times"
    echo "twins $name: heap layouts differ, recording the pair again" >&2
done
cmp -s dsc.zst.stdout off.zst.stdout || fail "program output differs"
for t in dsc off; do
    "$BIN/pes-dump" --expand "$t.zst" > "$t.dump" || fail "pes-dump --expand $t failed"
done
# per thread, access for access (sequences.py: what may move between runs)
n=$(python3 "$(dirname "$0")/sequences.py" dsc.dump off.dump) \
    || fail "expanded records differ from the --no-descriptors twin"
[ "$n" -gt 1000 ] || fail "only $n records"
"$BIN/pes-dump" dsc.zst | grep -Eq "^T[0-9]+ loop " || fail "no loop descriptor in the trace"
loops=$("$BIN/pes-dump" dsc.zst | grep -Ec "^T[0-9]+ loop " || true)
# TWINS_MIN_GROUPED=P: at least P % of the records stand in groups (the
# kernel's hot loops take descriptors, mixed bodies included)
if [ -n "${TWINS_MIN_GROUPED:-}" ]; then
    "$BIN/pes-dump" --stats dsc.zst > dsc.stats || fail "pes-dump --stats failed"
    share=$(awk '$1 == "records" { n = $3 + $5 + $7 + $9 } $1 == "loops" { g = $5 }
                 END { if (n) printf "%d", 100 * g / n; else print 0 }' dsc.stats)
    [ "$share" -ge "$TWINS_MIN_GROUPED" ] ||
        fail "$share % of the records in loop descriptor groups, expected at least $TWINS_MIN_GROUPED %"
    echo "twins $name: $share % of the records in groups"
fi
if [ "$THREADS" = 1 ]; then
    for t in dsc off; do
        "$BIN/pes-replay" "$t.zst" --machine haswell --format json -o "$t.json" \
            || fail "pes-replay $t failed"
        "$BIN/pes-replay" "$t.zst" --machine haswell --simulate --format json -o "$t.sim.json" \
            || fail "pes-replay --simulate $t failed"
    done
    python3 - dsc.json off.json dsc.sim.json off.sim.json <<'PY' || fail "reports differ"
import json, sys
def diff(x, y, path=""):
    """the JSON paths where two reports differ"""
    if isinstance(x, dict) and isinstance(y, dict):
        return [d for k in sorted(set(x) | set(y))
                for d in (diff(x[k], y[k], f"{path}/{k}") if k in x and k in y else [f"{path}/{k}"])]
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in diff(u, v, f"{path}[{i}]")]
    return [] if x == y else [path]
bad = 0
for one, two in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    x, y = json.load(open(one)), json.load(open(two))
    for r in (x, y):
        del r["trace"]["path"]  # the trace's own file name: the one thing that may differ
    d = diff(x, y)
    if d:
        print(f"{one} vs {two}: differ at {', '.join(d[:5])}", file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
fi
echo "twins $name: $n records equal, $loops descriptor groups"
