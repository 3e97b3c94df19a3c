#!/usr/bin/env bash
# Data objects under --cores N (mimicked cores, docs/replay.md "Data
# objects"): each core names an access by the blocks live at its place in
# the sequential run, so mimicking moves accesses between cores and never
# changes which object an address belongs to.
#   objects_prog.c (one thread, no parallel region): --cores 1 gives every
#   object the recorded run's count; with --cores 2, PPT-Multicore Alg. 1
#   copies the blocks that run once to both cores, so the objects they touch
#   gain those accesses once more: counters +1 (the counters.cold store) and
#   site B +2 (the c[3] and b[2] loads in main's tail); every other object
#   is touched only in loops and keeps its count. The rows add up to the
#   mimicked stream's accesses.
#   mimic_objects_prog.c: with --chunk 1 the two cores update neighbouring
#   elements of the shared heap block, so the cache-line table lists its
#   lines (8 or 9: malloc aligns to 16 bytes), each named by the block.
. "$(dirname "$0")/common.sh"
src="$PES_SRC/tests/e2e/replay/objects_prog.c"
lb=$(grep -n 'site B' "$src" | cut -d: -f1)
"$PES_BIN/pes-clang" -O1 -g "$src" -o "$work/prog"
"$PES_BIN/pes-collect" -q --full -o "$work/t.zst" -- "$work/prog" >/dev/null
"$PES_BIN/pes-dump" "$work/t.zst" >"$work/pesdump"
if ! grep -q '^map ' "$work/pesdump" || ! grep -q '^alloc_site ' "$work/pesdump"; then
  echo "SKIP: this runtime writes no MAPS block or allocation records"
  exit 0
fi
rows() {   # key<TAB>accesses of the --by object table of $1's first configuration
  jq -r '.configs[0].groups[] | "\(.key)\t\(.accesses)"' "$1" | sort
}
"$PES_BIN/pes-replay" "$work/t.zst" --by object --top 256 --format json -o "$work/rec.json"
"$PES_BIN/pes-replay" "$work/t.zst" --cores 1 --by object --top 256 --format json -o "$work/c1.json"
"$PES_BIN/pes-replay" "$work/t.zst" --cores 2 --by object --top 256 --format json -o "$work/c2.json"
rows "$work/rec.json" >"$work/rec.rows"
rows "$work/c1.json" >"$work/c1.rows"
rows "$work/c2.json" >"$work/c2.rows"
grep -qx "table	160" "$work/rec.rows" || fail "recorded run: table $(cat "$work/rec.rows")"
if grep -q "^unknown	" "$work/rec.rows"; then fail "recorded run: unknown accesses"; fi
cmp -s "$work/rec.rows" "$work/c1.rows" ||
  fail "--cores 1: per-object counts differ from the recorded run: $(diff "$work/rec.rows" "$work/c1.rows" | head -5)"
echo "ok: --cores 1 has the recorded run's objects and counts"
# --cores 2: the recorded counts plus the copies worked out above
awk -F'\t' -v b="heap@objects_prog.c:$lb (make_b)" \
  '{ n = $2; if ($1 == "counters") n += 1; if ($1 == b) n += 2; print $1 "\t" n }' "$work/rec.rows" | sort >"$work/want2"
cmp -s "$work/want2" "$work/c2.rows" ||
  fail "--cores 2: per-object counts: $(diff "$work/want2" "$work/c2.rows" | head -5)"
total=$(jq '.configs[0].crd[0].histogram.accesses' "$work/c2.json")
sum=$(jq '[.configs[0].groups[].accesses] | add' "$work/c2.json")
[ "$total" = "$sum" ] || fail "--cores 2: the object rows add up to $sum, the stream has $total accesses"
[ "$(jq '[.configs[0].prd[].histogram.accesses] | add' "$work/c2.json")" = "$total" ] || fail "--cores 2: PRD totals"
"$PES_BIN/pes-replay" "$work/t.zst" --cores 2 --by object --top 256 >"$work/c2.txt"
grep -Eq "^  table  +160 " "$work/c2.txt" || fail "--cores 2: no table row in the text: $(cat "$work/c2.txt")"
if grep -q "^  unknown " "$work/c2.txt"; then fail "--cores 2: an unknown row in the text"; fi
echo "ok: --cores 2 keeps every object ($sum accesses)"
# the cache-line table of two cores sharing the heap block
psrc="$PES_SRC/tests/e2e/replay/mimic_objects_prog.c"
lv=$(grep -n 'the shared block' "$psrc" | cut -d: -f1)
heap="heap@mimic_objects_prog.c:$lv (main)"
"$PES_BIN/pes-clang" -O1 -g -fopenmp "$psrc" -o "$work/mp"
OMP_NUM_THREADS=1 "$PES_BIN/pes-collect" -q --full -o "$work/mp.zst" -- "$work/mp" >/dev/null
"$PES_BIN/pes-replay" "$work/mp.zst" --by object --top 256 --format json -o "$work/mrec.json"
"$PES_BIN/pes-replay" "$work/mp.zst" --cores 2 --chunk 1 --simulate --by object --top 256 --format json \
  -o "$work/m2.json"
# 64 initial stores, 4 rounds x 64 x (load + store), 64 loads of the sum; 4 x 64 loads of scale
for f in mrec m2; do
  rows "$work/$f.json" >"$work/$f.rows"
  grep -qxF "$heap	640" "$work/$f.rows" || fail "$f: the heap block: $(cat "$work/$f.rows")"
  grep -qx "scale	256" "$work/$f.rows" || fail "$f: scale: $(cat "$work/$f.rows")"
done
jq -e --arg h "$heap" '[.configs[0].simulation.cache_lines[] | select(.object == $h and .invalidations.false > 0)]
                        | length >= 8' "$work/m2.json" >/dev/null ||
  fail "cache lines of the heap block: $(jq -c '[.configs[0].simulation.cache_lines[] | [.object, .invalidations]]' "$work/m2.json")"
jq -e '[.configs[0].simulation.cache_lines[] | select(.object == "unknown")] | length == 0' "$work/m2.json" >/dev/null ||
  fail "a cache line of unknown object"
jq -e --arg h "$heap" '[.configs[0].simulation.cache_lines[] | select(.object == $h) | .offsets[].part]
                        | map(startswith($h)) | all' "$work/m2.json" >/dev/null || fail "offsets' parts"
"$PES_BIN/pes-replay" "$work/mp.zst" --cores 2 --chunk 1 --simulate --top 256 >"$work/m2.txt"
[ "$(grep -cF "object $heap" "$work/m2.txt")" -ge 8 ] || fail "the text's cache-line table does not name the block"
if grep -q "object unknown" "$work/m2.txt"; then fail "the text's cache-line table has unknown lines"; fi
echo "ok: the cache-line table of mimicked cores names the objects"
echo "ok: replay_mimic_objects"
