#!/bin/sh
# pes-replay on the sample trace and on its twin that stores thread 0's loop
# as a loop descriptor group (trace_sample_gen --loops): readers hand out the
# expanded records, so every report is the same but for the trace's path.
# usage: trace_twin_replay.sh PES_REPLAY TRACE_SAMPLE_GEN WORKDIR
set -u
REPLAY=$1 GEN=$2 W=$3
mkdir -p "$W" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
"$GEN" "$W/plain.pes" || fail "generator"
"$GEN" "$W/loops.pes" --loops || fail "generator --loops"
cmp -s "$W/plain.pes" "$W/loops.pes" && fail "the twins are the same file"
for args in "--format json" "--format json --simulate" "--format json --cores 1,2,4 --simulate" "--cores 2 --per-region --simulate"; do
  # shellcheck disable=SC2086
  "$REPLAY" --machine haswell $args "$W/plain.pes" > "$W/plain.out" 2> /dev/null || fail "$args: exit status (plain)"
  # shellcheck disable=SC2086
  "$REPLAY" --machine haswell $args "$W/loops.pes" 2> /dev/null | sed "s|$W/loops.pes|$W/plain.pes|g" > "$W/loops.out" || fail "$args: exit status (loops)"
  [ -s "$W/plain.out" ] || fail "$args: empty report"
  cmp -s "$W/plain.out" "$W/loops.out" || fail "$args: reports differ: $(diff "$W/plain.out" "$W/loops.out" | head -5)"
done
echo "ok"
