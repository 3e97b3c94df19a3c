#!/usr/bin/env bash
# Data objects end to end (docs/replay.md, "Data objects"): objects_prog.c
# built with pes-clang -g, traced with pes-collect --full, its accesses
# counted per object and per part by objects_dump (the stream pes-replay
# reads). The counts are the program's loop bounds, worked out by hand:
#   table: 10 rounds x 8 elements x (load + store) = 160, 20 per element
#   counters.hot: 100 x (load + store) = 200; counters.cold: 1 store
#   rows[i].id: 1 store each; rows[i].sum: load + store each
#   bump::calls: 5 calls x (load + store) = 10
#   heap site A (make_a): 64 stores; site B (make_b): 32 + 64 stores + 2
#   loads (c[3], b[2]), 2 blocks; stack:stack_work: 16 stores + 16 loads
# Globals need the trace's MAPS block, the heap and stacks its allocation
# records: parts the runtime does not write yet are skipped, saying so.
. "$(dirname "$0")/common.sh"
src="$PES_SRC/tests/e2e/replay/objects_prog.c"
la=$(grep -n 'site A' "$src" | cut -d: -f1)
lb=$(grep -n 'site B' "$src" | cut -d: -f1)
"$PES_BIN/pes-clang" -O1 -g "$src" -o "$work/prog"
"$PES_BIN/pes-collect" -q --full -o "$work/t.zst" -- "$work/prog" >"$work/prog.out"
"$PES_BIN/objects_dump" "$work/t.zst" >"$work/dump" 2>"$work/dump.err"
"$PES_BIN/objects_dump" --jobs 2 "$work/t.zst" >"$work/dump2" 2>/dev/null
cmp -s "$work/dump" "$work/dump2" || fail "--jobs 2 attributes differently: $(diff "$work/dump" "$work/dump2" | head -5)"
"$PES_BIN/pes-dump" "$work/t.zst" >"$work/pesdump"
have() { grep -qxF -- "$1" "$work/dump" || { cat "$work/dump" >&2; fail "expected line '$1'"; }; }
grep -qxF "objects resolved" "$work/dump" || fail "objects not resolved"
grep -qxF "null 0" "$work/dump" || fail "object columns missing"
# --no-objects: the columns stay NULL
"$PES_BIN/objects_dump" --no-objects "$work/t.zst" >"$work/none"
grep -qxF "objects none" "$work/none" || fail "--no-objects still resolved objects"
if grep -q '^map ' "$work/pesdump"; then
  have "object 160 global table"
  for i in 0 1 2 3 4 5 6 7; do have "part 20 table[$i]"; done
  have "object 201 global counters"
  have "part 200 counters.hot"
  have "part 1 counters.cold"
  have "object 12 global rows"
  for i in 0 1 2 3; do have "part 1 rows[$i].id"; have "part 2 rows[$i].sum"; done
  have "object 10 global bump::calls"
  echo "ok: globals"
  # pes-replay itself reads them without a warning (the binary is there)
  "$PES_BIN/pes-replay" "$work/t.zst" --top 0 >/dev/null 2>"$work/replay.err"
  [ ! -s "$work/replay.err" ] || fail "pes-replay warned: $(cat "$work/replay.err")"
  # the binary gone: one warning naming it, the run still succeeds
  mv "$work/prog" "$work/prog.moved"
  "$PES_BIN/pes-replay" "$work/t.zst" --top 0 >/dev/null 2>"$work/replay.err"
  grep -qF "$work/prog cannot be opened" "$work/replay.err" || fail "no warning for the missing binary"
  [ "$(wc -l <"$work/replay.err")" -eq 1 ] || fail "not one warning line: $(cat "$work/replay.err")"
  mv "$work/prog.moved" "$work/prog"
  "$PES_BIN/pes-replay" "$work/t.zst" --top 0 --no-objects >/dev/null 2>"$work/replay.err"
  [ ! -s "$work/replay.err" ] || fail "--no-objects: stderr $(cat "$work/replay.err")"
else
  echo "SKIP: globals: this runtime writes no MAPS block in full traces"
fi
if grep -q '^alloc_site ' "$work/pesdump"; then
  grep -qx reused "$work/prog.out" || fail "the program's second site did not get the freed address"
  have "object 64 heap heap@objects_prog.c:$la (make_a)"
  have "object 98 heap heap@objects_prog.c:$lb (make_b)"
  have "blocks heap@objects_prog.c:$lb (make_b) 2 512"
  have "blocks heap@objects_prog.c:$la (make_a) 1 512"
  have "object 32 stack stack:stack_work"
  # offsets inside the blocks: b[2] and c[2] stored, b[2] loaded; c[32] only in the second block
  have "part 3 heap@objects_prog.c:$lb (make_b)+16"
  have "part 1 heap@objects_prog.c:$lb (make_b)+256"
  have "part 1 heap@objects_prog.c:$la (make_a)+504"
  grep -q "^stack heap@objects_prog.c:$la (make_a) make_a objects_prog.c:$la < main objects_prog.c:" "$work/dump" ||
    fail "allocation stack of site A: $(grep "^stack heap@objects_prog.c:$la" "$work/dump")"
  if grep -q "^object [0-9]* unknown" "$work/dump"; then fail "unknown accesses: $(grep '^object [0-9]* unknown' "$work/dump")"; fi
  echo "ok: heap and stack"
else
  echo "SKIP: heap and stack: this runtime writes no allocation records"
fi
# The same program position-dependent (-no-pie: no load bias): the same
# objects, parts and counts as the PIE checked above
"$PES_BIN/pes-clang" -O1 -g -fno-pie -no-pie "$src" -o "$work/prog_nopie"
"$PES_BIN/pes-collect" -q --full -o "$work/nopie.zst" -- "$work/prog_nopie" >/dev/null
"$PES_BIN/objects_dump" "$work/nopie.zst" >"$work/dump_nopie"
# (offsets in the stack depend on where the kernel put it: left out)
sed 's/prog_nopie/prog/' "$work/dump_nopie" | grep -E '^(object|part|blocks) ' | grep -v '^part .* stack:' >"$work/a"
grep -E '^(object|part|blocks) ' "$work/dump" | grep -v '^part .* stack:' >"$work/b"
cmp -s "$work/a" "$work/b" || fail "-no-pie attributes differently: $(diff "$work/a" "$work/b" | head -5)"
echo "ok: position-dependent executable"
# A sampled trace (every 7th access, soft backend): its events by the same
# objects, in proportion (the table's 160 accesses are one run: 22 or 23 samples)
"$PES_BIN/pes-collect" -q --mode samples --backend soft --period 7 -o "$work/s.zst" -- "$work/prog" >/dev/null
"$PES_BIN/objects_dump" "$work/s.zst" >"$work/sdump"
"$PES_BIN/pes-dump" "$work/s.zst" >"$work/spesdump"
if grep -q '^map ' "$work/spesdump"; then
  grep -Eqx "object (22|23) global table" "$work/sdump" || fail "sampled: table $(grep table "$work/sdump" | head -3)"
  grep -Eqx "object (28|29) global counters" "$work/sdump" || fail "sampled: counters"
  if grep -q '^alloc_site ' "$work/spesdump"; then
    grep -Eqx "object (9|10) heap heap@objects_prog.c:$la \(make_a\)" "$work/sdump" || fail "sampled: site A"
    grep -q "^object [0-9]* heap heap@objects_prog.c:$lb (make_b)$" "$work/sdump" || fail "sampled: site B"
    if grep -q "^object [0-9]* unknown" "$work/sdump"; then fail "sampled: unknown events"; fi
  fi
  echo "ok: sampled events"
  # --by object: the report's per-object sample counts are objects_dump's
  # event counts (this mode writes SAMPLE events only), object by object
  "$PES_BIN/pes-replay" "$work/s.zst" --by object --top 256 --format json -o "$work/sobj.json"
  jq -r '.groups[] | "\(.key)\t\(.samples)"' "$work/sobj.json" | sort >"$work/sobj.rows"
  sed -n 's/^object \([0-9]*\) [a-z]* \(.*\)$/\2\t\1/p' "$work/sdump" | sort >"$work/sdump.rows"
  [ -s "$work/sdump.rows" ] || fail "sampled: objects_dump listed no objects"
  cmp -s "$work/sobj.rows" "$work/sdump.rows" ||
    fail "--by object: sample counts differ from objects_dump: $(diff "$work/sdump.rows" "$work/sobj.rows" | head -5)"
  grep -Eqx "table	(22|23)" "$work/sobj.rows" || fail "--by object: table $(grep table "$work/sobj.rows")"
  [ "$(jq '[.groups[].samples] | add' "$work/sobj.json")" = "$(jq .samples "$work/sobj.json")" ] ||
    fail "--by object: the rows' samples do not add up to the trace's"
  "$PES_BIN/pes-replay" "$work/s.zst" --by object --top 256 >"$work/sobj.txt"
  grep -q "^  object  *samples  *reuses  *reuse-t" "$work/sobj.txt" || fail "--by object: no object table in the text"
  grep -Eq "^  table  +(22|23) " "$work/sobj.txt" || fail "--by object: no table row in the text"
  # a comm trace of the false-sharing kernel (two threads bump adjacent[0]
  # and adjacent[1]): per object, samples + reuses + invalidations +
  # communication events are objects_dump's event count; the rows add up to
  # the trace's totals; adjacent has false-sharing events
  "$PES_BIN/pes-clang" -O2 -g -fopenmp "$PES_SRC/bench/kernels/false_sharing.c" -o "$work/fs"
  OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" --mode comm --period 97 -q -o "$work/c.zst" -- "$work/fs" adjacent 2000 50 \
    >/dev/null
  "$PES_BIN/objects_dump" "$work/c.zst" >"$work/cdump"
  "$PES_BIN/pes-replay" "$work/c.zst" --by object --top 256 --format json -o "$work/cobj.json"
  jq -r '.groups[] | "\(.key)\t\(.samples + .reuses + .invalidations + .comm_true + .comm_false)"' "$work/cobj.json" |
    sort >"$work/cobj.rows"
  sed -n 's/^object \([0-9]*\) [a-z]* \(.*\)$/\2\t\1/p' "$work/cdump" | sort >"$work/cdump.rows"
  grep -q "^adjacent	" "$work/cdump.rows" || fail "comm: objects_dump does not list adjacent: $(cat "$work/cdump")"
  cmp -s "$work/cobj.rows" "$work/cdump.rows" ||
    fail "--by object: comm trace counts differ from objects_dump: $(diff "$work/cdump.rows" "$work/cobj.rows" | head -5)"
  jq -e '([.groups[].comm_true] | add) == .comm.true_events and ([.groups[].comm_false] | add) == .comm.false_events
         and ([.groups[].samples] | add) == .samples
         and ([.groups[] | select(.key == "adjacent") | .comm_false] | add) >= 1' "$work/cobj.json" >/dev/null ||
    fail "--by object: comm rows: $(jq -c '[.comm.true_events, .comm.false_events, .groups]' "$work/cobj.json")"
  "${PYTHON:-python3}" - "$PES_SRC/docs/sampled.schema.json" "$work/sobj.json" "$work/cobj.json" <<'PY' ||
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    jsonschema.validate(json.load(open(path)), schema)
PY
    fail "--by object: a report does not match docs/sampled.schema.json"
  echo "ok: sampled --by object"
fi
# --compare --by object: per object (joined by name) the sampled trace's
# samples and the full trace's accesses are objects_dump's counts of each
# trace (the two traces come from two runs of one deterministic program)
if grep -q '^map ' "$work/spesdump"; then
  "$PES_BIN/pes-replay" --compare "$work/s.zst" "$work/t.zst" --by object --top 256 --format json \
    -o "$work/cmpobj.json" 2>/dev/null
  jq -r '.objects[] | select(.samples > 0) | "\(.key)\t\(.samples)"' "$work/cmpobj.json" | sort >"$work/cmp.s"
  jq -r '.objects[] | select(.accesses > 0) | "\(.key)\t\(.accesses)"' "$work/cmpobj.json" | sort >"$work/cmp.a"
  sed -n 's/^object \([0-9]*\) [a-z]* \(.*\)$/\2\t\1/p' "$work/dump" | sort >"$work/dump.rows"
  cmp -s "$work/cmp.s" "$work/sdump.rows" ||
    fail "--compare --by object: samples differ from objects_dump: $(diff "$work/sdump.rows" "$work/cmp.s" | head -5)"
  cmp -s "$work/cmp.a" "$work/dump.rows" ||
    fail "--compare --by object: accesses differ from objects_dump: $(diff "$work/dump.rows" "$work/cmp.a" | head -5)"
  grep -qx "table	160" "$work/cmp.a" || fail "--compare --by object: table $(grep table "$work/cmp.a")"
  "${PYTHON:-python3}" - "$PES_SRC/docs/sampled.schema.json" "$work/cmpobj.json" <<'PY' ||
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
    fail "--compare --by object: the report does not match docs/sampled.schema.json"
  "$PES_BIN/pes-replay" --compare "$work/s.zst" "$work/t.zst" --by object --top 256 >"$work/cmpobj.txt" 2>/dev/null
  grep -Eq "^  table  +(22|23)  +160 " "$work/cmpobj.txt" || fail "--compare --by object: no table row in the text"
  echo "ok: --compare --by object"
fi
echo "ok: replay_objects"
