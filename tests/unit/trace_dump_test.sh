#!/bin/sh
# pes-dump on a fixed trace (tests/unit/trace_sample_gen.c): key lines, JSON,
# --stats, truncated and corrupt input, exit statuses. Expected values are
# taken from the generator's source, not from pes-dump.
# usage: trace_dump_test.sh PES_DUMP TRACE_SAMPLE_GEN WORKDIR
set -u
DUMP=$1 GEN=$2 W=$3
mkdir -p "$W" || exit 1
T=$W/sample.pes
fail() { echo "FAIL: $*"; exit 1; }
"$GEN" "$T" || fail "generator"
"$DUMP" "$T" > "$W/out.txt" 2> "$W/err.txt" || fail "exit status on a good trace"
[ -s "$W/err.txt" ] && fail "stderr not empty on a good trace: $(cat "$W/err.txt")"
has() { grep -qxF -- "$1" "$W/out.txt" || fail "missing line: $1"; }
has "command   ./gemm 128"
has "host      testhost"
has "cache     L1D 32768 B, 8-way, 64 B lines, shared by 2 CPUs"
has "thread T1 tid 101 parent T0 cpu 1 socket 0 start 1500"
has "T0 time 1100"
has "T0 bb  kernel:entry (bb 4)"
has "T0 bb  kernel:for.body (bb 3)"
has "T0 access  0x1000 8 R  gemm.c:12:5 (site 0)"
has "T0 access  0x2400 8 R  gemm.c:12:14 (site 1)"
has "T0 access  0x3000 8 W  gemm.c:13:9 (site 2)"
has "T0 region_begin 7"
has "T0 region_end"
has "T1 access  0x5000 8 R  gemm.c:12:5 (site 0)"
has "map 0x400000-0x402000 off 0x0 /usr/bin/gemm"
has "footer end 3200"
grep -q "^T1 reuse .*addr=0x3000 .*other=T0 .*distance=42 .*flags=write" "$W/out.txt" || fail "reuse event line"
[ "$(grep -c ' access ' "$W/out.txt")" = 7 ] || fail "7 accesses expected"
# records appear in file order: T0's block before T1's
[ "$(grep -n '^T[01] time' "$W/out.txt" | cut -d: -f2)" = "$(printf 'T0 time 1100\nT1 time 1600')" ] || fail "block order"

# --thread / --limit
[ "$("$DUMP" --thread 1 "$T" | grep -c '^T0 ')" = 0 ] || fail "--thread 1 shows T0 records"
[ "$("$DUMP" --limit 3 "$T" | grep -c '^T[0-9] ')" = 3 ] || fail "--limit 3"

# JSON: every line parses, counts by type
if command -v jq >/dev/null 2>&1; then
  "$DUMP" --format json "$T" > "$W/out.json" || fail "json exit status"
  jq -e . "$W/out.json" > /dev/null || fail "json does not parse"
  [ "$(jq -r 'select(.type=="access") | .addr' "$W/out.json" | head -1)" = "0x1000" ] || fail "json first access"
  [ "$(jq -r 'select(.type=="access")' "$W/out.json" | grep -c '"site"')" = 7 ] || fail "json access count"
  [ "$(jq -r 'select(.type=="footer") | .threads[1].samples' "$W/out.json")" = 1 ] || fail "json footer"
fi

# --stats: block counts and record classes
"$DUMP" --stats "$T" > "$W/stats.txt" || fail "stats exit status"
grep -Eq '^ACCESS +2 +15 ' "$W/stats.txt" || fail "stats ACCESS line"
grep -Eq '^THREAD +2 +2 ' "$W/stats.txt" || fail "stats THREAD line"
grep -qxF "records  access 7  bb 4  control 4  other 0" "$W/stats.txt" || fail "stats record classes"

# truncated: warning, exit 0, prints what is complete
SIZE=$(wc -c < "$T")
head -c $((SIZE - 10)) "$T" > "$W/cut.pes"
"$DUMP" "$W/cut.pes" > "$W/cut.txt" 2> "$W/cut.err" || fail "truncated trace must exit 0"
grep -q "warning: .*cut.pes: truncated at offset $((SIZE - 10))" "$W/cut.err" || fail "truncation warning: $(cat "$W/cut.err")"
grep -q "^T1 reuse" "$W/cut.txt" || fail "complete blocks of a truncated trace"
grep -q "^footer" "$W/cut.txt" && fail "footer printed from a truncated trace"
"$GEN" "$W/nofooter.pes" --no-footer || fail "generator --no-footer"
"$DUMP" "$W/nofooter.pes" > /dev/null 2> "$W/nf.err" || fail "no-footer trace must exit 0"
grep -q "no FOOTER" "$W/nf.err" || fail "no-footer warning"

# corrupt: flip the last byte (inside the FOOTER frame's checksum): exit 1 with the offset
cp "$T" "$W/bad.pes"
printf '\377' | dd of="$W/bad.pes" bs=1 seek=$((SIZE - 1)) conv=notrunc 2>/dev/null
"$DUMP" "$W/bad.pes" > /dev/null 2> "$W/bad.err" && fail "corrupt trace must exit 1"
grep -Eq "^pes-dump: .*bad.pes: offset [0-9]+: " "$W/bad.err" || fail "corrupt message: $(cat "$W/bad.err")"

# loop descriptors (--loops: thread 0's loop stored as a group, R 8, m 4,
# phase 0, steps 0 8 0x400 0): by default the group as stored, with --expand
# exactly what the descriptor-free trace prints
L=$W/loops.pes
"$GEN" "$L" --loops || fail "generator --loops"
"$DUMP" "$L" > "$W/loops.txt" || fail "exit status on a trace with loop descriptors"
lhas() { grep -qxF -- "$1" "$W/loops.txt" || fail "missing line with --loops: $1"; }
lhas "T0 bb  kernel:entry (bb 4)"
lhas "T0 loop 8 records, 4 per iteration, phase 0"
lhas "T0   template bb  kernel:for.body (bb 3) step +0"
lhas "T0   template access  0x1000 8 R  gemm.c:12:5 (site 0) step +8"
lhas "T0   template access  0x2000 8 R  gemm.c:12:14 (site 1) step +1024"
lhas "T0   template access  0x3000 8 W  gemm.c:13:9 (site 2) step +0"
lhas "T0 region_begin 7"
[ "$(grep -c '^T0 access ' "$W/loops.txt")" = 0 ] || fail "--loops: accesses of the group printed one by one"
"$DUMP" --expand "$L" | tail -n +2 > "$W/loops_expand.txt" || fail "--expand exit status"
tail -n +2 "$W/out.txt" | cmp -s - "$W/loops_expand.txt" || fail "--expand differs from the trace without descriptors"
"$DUMP" --expand --format json "$L" > "$W/loops_expand.json" || fail "--expand json exit status"
"$DUMP" --format json "$T" | cmp -s - "$W/loops_expand.json" || fail "--expand json differs"
"$DUMP" --format json "$L" | grep -qF '{"type":"loop","thread":0,"records":8,"per_iteration":4,"phase":0,"templates":[{"id":3,"addr":"0x0","extra":0,"step":"0"},{"id":0,"addr":"0x1000","extra":0,"step":"8"},' || fail "json loop line"
[ "$("$DUMP" --limit 3 "$L" | grep -c '^T[0-9] [a-z]')" = 3 ] || fail "--limit 3 with a group (one item)"
"$DUMP" --limit 3 "$L" | tail -1 | grep -qxF "T0   template access  0x3000 8 W  gemm.c:13:9 (site 2) step +0" || fail "--limit 3 ends with the group's last template"
"$DUMP" --stats "$L" > "$W/loops_stats.txt" || fail "--stats exit status with --loops"
grep -Eq '^ACCESS +2 +15 ' "$W/loops_stats.txt" || fail "stats ACCESS line: expanded counts"
grep -qxF "records  access 7  bb 4  control 4  other 0" "$W/loops_stats.txt" || fail "stats record classes with --loops"
grep -qxF "loops    groups 1  records 8  stored 16" "$W/loops_stats.txt" || fail "stats loops line"
grep -q "^loops" "$W/stats.txt" && fail "stats loops line without loop descriptors"

# not a trace, usage errors
printf '0x1000\n0x2000\n' > "$W/plain.txt"
"$DUMP" "$W/plain.txt" 2> "$W/plain.err" && fail "non-pes file must exit 1"
grep -q "not a pes trace" "$W/plain.err" || fail "non-pes message"
"$DUMP" --limit x "$T" 2>/dev/null; [ $? = 2 ] || fail "bad option value must exit 2"
"$DUMP" 2>/dev/null; [ $? = 2 ] || fail "no trace must exit 2"
echo "ok"
