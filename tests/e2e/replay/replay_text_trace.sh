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

# The same accesses as valgrind lackey writes them (detected; instruction
# fetches and valgrind's lines skipped) and as little-endian 64-bit addresses
# (detected by their NUL bytes): the same profile, hand-computed above.
cat >"$work/t1.lackey" <<'T'
==77== Lackey, an example Valgrind tool
I  04016ac3,3
 L 1000,8
 L 2000,8
I  04016ac6,2
 S 1000,8
 L 3000,4
 L 2000,8
 L 4008,8
 S 4000,8
 L 1010,2
==77== 
T
python3 - "$work/t1.bin" <<'P'
import struct, sys
open(sys.argv[1], 'wb').write(b''.join(struct.pack('<Q', a) for a in
    [0x1000, 0x2000, 0x1000, 0x3000, 0x2000, 0x4008, 0x4000, 0x1010]))
P
for f in t1.lackey t1.bin; do
  "$PES_BIN/pes-replay" "$work/$f" --machine haswell --format json >"$work/r.json" 2>"$work/err" ||
    { cat "$work/err" >&2; fail "$f: exit $?"; }
  [ ! -s "$work/err" ] || fail "$f: stderr: $(cat "$work/err")"
  got=$(jq -c '.configs[0].prd[0].histogram | [.accesses, .cold, .exact]' "$work/r.json")
  [ "$got" = '[8,4,[[0,1],[1,1],[2,1],[3,1]]]' ] || fail "$f: Table 1/2 profile: got $got"
done
jq -e '.trace.reads == 6 and .trace.writes == 2' <("$PES_BIN/pes-replay" "$work/t1.lackey" --machine haswell \
  --format json) >/dev/null || fail "lackey: loads and stores"
# M is a load and a store of one address: a reuse at distance 0
printf ' M 1000,8\n' >"$work/m.lackey"
got=$("$PES_BIN/pes-replay" "$work/m.lackey" --machine haswell --format json |
  jq -c '[.trace.reads, .trace.writes, .configs[0].prd[0].histogram.exact]')
[ "$got" = '[1,1,[[0,1]]]' ] || fail "lackey M: got $got"
# a binary file cut inside its last address: read up to it, with a warning in text and JSON
head -c 61 "$work/t1.bin" >"$work/cut.bin"
"$PES_BIN/pes-replay" "$work/cut.bin" --machine haswell --input-format binary64 --format json \
  >"$work/r.json" 2>"$work/err" || fail "cut binary: exit $?"
grep -q "cut.bin: ends inside an address: the last 5 bytes (after 7 complete addresses) are not read" \
  "$work/err" || fail "cut binary: no warning: $(cat "$work/err")"
jq -e '.trace.truncated == true and .trace.accesses == 7' "$work/r.json" >/dev/null ||
  fail "cut binary: $(jq -c .trace "$work/r.json")"
# a text file cut inside its last line (no newline at the end): read as it is,
# with a warning naming the last complete line in text and JSON; a complete
# file says nothing
printf '0x1000\n0x2000 W\n0x30' >"$work/cut.txt"
"$PES_BIN/pes-replay" "$work/cut.txt" --machine haswell --format json >"$work/r.json" 2>"$work/err" ||
  fail "cut text: exit $?"
grep -q "cut.txt: line 3, the last, has no newline (4 bytes after line 2, the last complete one)" "$work/err" ||
  fail "cut text: no warning: $(cat "$work/err")"
jq -e '.trace.truncated == true and .trace.accesses == 3' "$work/r.json" >/dev/null ||
  fail "cut text: $(jq -c .trace "$work/r.json")"
printf '0x1000\n0x2000 W\n0x30\n' >"$work/whole.txt"
"$PES_BIN/pes-replay" "$work/whole.txt" --machine haswell --format json >"$work/r.json" 2>"$work/err" ||
  fail "whole text: exit $?"
[ ! -s "$work/err" ] || fail "whole text: stderr: $(cat "$work/err")"
jq -e '.trace.truncated == false' "$work/r.json" >/dev/null || fail "whole text: truncated"
# a forced format names the first line that does not fit it; a bad name is a usage error
expect_fail "t1.lackey:1: expected \"ADDR\"" "$PES_BIN/pes-replay" "$work/t1.lackey" --machine haswell \
  --input-format addr
expect_usage "--input-format" "$PES_BIN/pes-replay" "$work/t1.txt" --input-format csv
echo "lackey and binary64 traces: the same profile"
