#!/usr/bin/env bash
# A plain-text address trace (PARDA / libCacheSim style) through pes-replay:
# PPT-Multicore Table 1 (w x w y x z z w) has distances inf inf 1 inf 2 inf 0 3,
# so the profile (Table 2) is one access each at 0, 1, 2, 3 and four cold ones.
. "$(dirname "$0")/common.sh"
cat >"$work/t1.txt" <<'T'
# PPT-Multicore Table 1; each address on its own 64-byte line
0x1000
0x2000 R
W 0x1000
0x3000
0x2000
0x4008
0x4000 W
0x1010
T
"$PES_BIN/pes-replay" "$work/t1.txt" --machine haswell --format json >"$work/r.json"
got=$(jq -c '.configs[0].prd[0].histogram | [.accesses, .cold, .exact]' "$work/r.json")
[ "$got" = '[8,4,[[0,1],[1,1],[2,1],[3,1]]]' ] || fail "Table 1/2 profile: got $got"
# word granularity: 0x4008 and 0x4000 are different words, 0x1010 differs from 0x1000
got=$(
  "$PES_BIN/pes-replay" "$work/t1.txt" --machine haswell --line 8 --format json |
    jq -c '.configs[0].prd[0].histogram | [.accesses, .cold, .exact]')
[ "$got" = '[8,6,[[1,1],[2,1]]]' ] || fail "word granularity: got $got"
jq -e '.trace.kind == "text" and .trace.reads == 6 and .trace.writes == 2' "$work/r.json" >/dev/null ||
  fail "text trace kinds: $(jq -c .trace "$work/r.json")"
echo "text trace: Table 1/2 profile exact"
