#!/usr/bin/env bash
# Replay threads change nothing: --jobs 1..8 give byte-identical JSON on a text
# trace long enough for many batches, PARDA chunks and parallel text blocks,
# and on recorded traces with shared caches, mimicked cores and the
# simulation (also run under TSan).
. "$(dirname "$0")/common.sh"
data=$(cd "$(dirname "$0")/../../data" && pwd)
awk 'BEGIN { x = 12345; for (i = 0; i < 300000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
             printf "0x%x %s\n", (x % 50000) * 8, (x % 7 == 0 ? "W" : "R") } }' >"$work/t.txt"
check() {   # NAME TRACE ARGS...: every --jobs the same as --jobs 1
  local name=$1 trace=$2
  shift 2
  for j in 1 2 3 4 8; do
    "$PES_BIN/pes-replay" "$trace" --machine haswell --format json --jobs "$j" "$@" >"$work/$name.j$j.json" ||
      fail "$name --jobs $j failed"
    [ "$j" = 1 ] || cmp -s "$work/$name.j1.json" "$work/$name.j$j.json" || fail "$name: --jobs $j differs from --jobs 1"
  done
}
check text "$work/t.txt" --line 8
jq -e '.configs[0].prd[0].histogram.accesses == 300000' "$work/text.j1.json" >/dev/null || fail "access count"
check sockets "$data/false_sharing.full.zst" --sockets 2 --simulate
check cores "$data/gemm40.full.zst" --cores 2,3 --simulate
echo "--jobs 1, 2, 3, 4 and 8 identical"
