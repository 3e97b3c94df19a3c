#!/usr/bin/env bash
# The PRD worker thread (--jobs 2) gives exactly the results of one thread,
# on a text trace long enough to cross many batch hand-overs (also run under TSan).
. "$(dirname "$0")/common.sh"
awk 'BEGIN { x = 12345; for (i = 0; i < 300000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
             printf "0x%x %s\n", (x % 50000) * 8, (x % 7 == 0 ? "W" : "R") } }' >"$work/t.txt"
for j in 1 2; do
  "$PES_BIN/pes-replay" "$work/t.txt" --machine haswell --line 8 --format json --jobs "$j" >"$work/j$j.json"
done
cmp "$work/j1.json" "$work/j2.json" || fail "--jobs 1 and --jobs 2 differ"
jq -e '.configs[0].prd[0].histogram.accesses == 300000' "$work/j2.json" >/dev/null || fail "access count"
echo "--jobs 2 identical to --jobs 1"
