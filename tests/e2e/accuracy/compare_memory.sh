#!/bin/bash
# compare_memory.sh — pes-replay --compare keeps state per distinct address /
# line and per sampled event, not per access of the full trace (issue 31):
# RIBench over the same private arrays for 4 and for 32 rounds (8x the
# accesses, the same distinct addresses, a period long enough that the
# sampled events stay few), both pairs from one execution each. The longer
# pair's --compare must not need more peak memory (max RSS of the process,
# bench/rusage_run.c) beyond a 10 % + 2 MiB margin. CPU time is bounded with
# `ulimit -t`, never wall time.
set -euo pipefail
: "${PES_BIN:?PES_BIN must name the bin directory of the build}"
: "${PES_SRC:?PES_SRC must name the source tree}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PES_BIN/pes-clang" -O2 -fopenmp -o ribench "$PES_SRC/bench/micro/ribench.c"
# peak RSS of a command forked from a small C program, not from this shell's
# children (Linux keeps a peak across execve; bench/rusage_run.c says why)
${CC:-cc} -O2 -o rusage_run "$PES_SRC/bench/rusage_run.c"

# peak RSS (KiB) of pes-replay --compare on the pair of ROUNDS rounds
peak() {
  local rounds=$1
  "$PES_BIN/pes-collect" --mode reuse --full --backend soft --period 4999 --seed 5 -q \
      -o "s$rounds.zst" --full-output "f$rounds.zst" ./ribench --divide 10 --outer "$rounds" --threads 2 >/dev/null
  "$PES_BIN/pes-replay" --compare "s$rounds.zst" "f$rounds.zst" --format json >"c$rounds.json"
  local out
  out=$( (ulimit -t 120; exec ./rusage_run "$PES_BIN/pes-replay" --compare "s$rounds.zst" "f$rounds.zst") ) ||
    fail "pes-replay --compare on $rounds rounds failed (or ran past 120 s of CPU time)"
  echo "$out" | awk '{print $2}'
}

short=$(peak 4)
long=$(peak 32)
a_short=$(jq .accesses c4.json)
a_long=$(jq .accesses c32.json)
echo "4 rounds: $a_short accesses, peak $short KiB; 32 rounds: $a_long accesses, peak $long KiB"
[ "$a_long" -ge $((a_short * 7)) ] || fail "the 32-round trace has $a_long accesses, not about 8x $a_short"
jq -e '.same_execution' c32.json >/dev/null || fail "the pair is not one execution"
limit=$((short * 11 / 10 + 2048))
[ "$long" -le "$limit" ] || fail "--compare of an 8x longer trace needs $long KiB, more than $limit KiB"
echo "ok: peak memory does not grow with the trace's length"
