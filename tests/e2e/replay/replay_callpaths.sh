#!/usr/bin/env bash
# Call paths (trace format version 3, docs/replay.md "Call paths") on the
# synthetic trace of trace_callpath_gen, whose paths are known by
# construction (its comment spells them out): the exact accesses of each
# path under each row, truncation to --callpath-depth, the longjmp repair, a
# stray RETURN, an OpenMP worker's path, --by callpath and --by object rows;
# the same JSON for --jobs 1, 2, 3, in time parts at 2, 3, 4, 8 and 16 (and
# pes-replay-mpi on 1, 2 and 4 ranks where built); a trace
# without call edges gets no call-path section; a CALL that names no call
# site is an error naming the block's offset.
. "$(dirname "$0")/common.sh"
: "${CALLPATH_GEN:?CALLPATH_GEN must name trace_callpath_gen}"
t=$work/cp.pes
"$CALLPATH_GEN" "$t"
replay() { "$PES_BIN/pes-replay" "$t" --machine haswell --format json "$@"; }

# every --jobs the same
for j in 1 2 3; do
  replay --jobs "$j" >"$work/j$j.json" || fail "--jobs $j failed"
  replay --jobs "$j" --by callpath --callpath-depth 3 >"$work/p$j.json" || fail "--by callpath --jobs $j failed"
  [ "$j" = 1 ] && continue
  cmp -s "$work/j1.json" "$work/j$j.json" || fail "--jobs $j differs from --jobs 1"
  cmp -s "$work/p1.json" "$work/p$j.json" || fail "--by callpath --jobs $j differs from --jobs 1"
done
# and read in time parts (docs/replay.md, "Parts"): each cut falls inside
# open calls, a worker's region or the recursion; also the trace's calls
# repeated, so that later parts open, close and reopen paths of earlier ones
"$CALLPATH_GEN" "$work/rep.pes" --repeat 40
for j in 2 3 4 8 16; do
  replay --jobs "$j" --parts yes | cmp -s - "$work/j1.json" || fail "--parts yes --jobs $j differs"
  replay --jobs "$j" --parts yes --by callpath --callpath-depth 3 | cmp -s - "$work/p1.json" ||
    fail "--by callpath --parts yes --jobs $j differs"
done
"$PES_BIN/pes-replay" "$work/rep.pes" --machine haswell --format json --by callpath --jobs 1 >"$work/rep1.json" ||
  fail "repeated trace"
for j in 2 3 4 8 16; do
  "$PES_BIN/pes-replay" "$work/rep.pes" --machine haswell --format json --by callpath --jobs "$j" --parts yes |
    cmp -s - "$work/rep1.json" || fail "repeated trace: --parts yes --jobs $j differs"
done
replay --jobs 3 --parts yes --stats 2>"$work/stats" >/dev/null
grep -q '^  part 2 ' "$work/stats" || fail "--parts yes ran no part 2"
# --parts auto takes call-edge traces too (the default of --jobs N)
replay --jobs 3 --stats 2>"$work/stats" >/dev/null
grep -q '^  part 2 ' "$work/stats" || fail "--parts auto did not read a call-edge trace in parts"

# jq FILE FILTER: FILTER must hold
check() {
  jq -e "$2" "$1" >/dev/null || { jq -c '.configs[0].groups' "$1" >&2; fail "$1: $2"; }
}
# the rows by line: each row's top paths (at most 3) with their accesses and share
row='.configs[0].groups[] | select(.key == $k)'
paths() { # FILE KEY JSON: the row's callpaths as [[path, accesses], ...]
  jq -e --arg k "$2" --argjson want "$3" "[$row | .callpaths[] | [.path, .accesses]] == \$want" "$1" >/dev/null ||
    { jq -c --arg k "$2" "$row" "$1" >&2; fail "$1: row $2: want $3"; }
}
# helper's line from three call sites: 5, 3 and (2 + 1 after the longjmp + 1 after the stray RETURN)
paths "$work/j1.json" "a.c:12 helper" \
  '[["main (a.c:40) > solve (a.c:22) > helper",5],["main (a.c:41) > helper",4],["main (a.c:40) > solve (a.c:23) > helper",3]]'
check "$work/j1.json" '[.configs[0].groups[] | select(.key == "a.c:12 helper") | .accesses, (.callpaths | map(.share))] == [12, [0.416667, 0.333333, 0.25]]'
paths "$work/j1.json" "a.c:30 main" '[["main",4]]'
# the worker's accesses carry main's path at the fork: 2 of main, 3 of the worker
paths "$work/j1.json" "a.c:80 main.omp_outlined" '[["main (a.c:70) > main.omp_outlined",5]]'
# recursion at depths 1..5 within the default depth 8: one access per path, the first 3 by name
paths "$work/j1.json" "a.c:55 rec" \
  '[["main (a.c:42) > rec",1],["main (a.c:42) > rec (a.c:50) > rec",1],["main (a.c:42) > rec (a.c:50) > rec (a.c:50) > rec",1]]'

# --by callpath --callpath-depth 3: a row per (line, path); depths 4 and 5
# both end in three rec:50 calls, cut
cat >"$work/rows.json" <<'J'
[["main (a.c:40) > solve (a.c:22) > helper (a.c:12)",5],
 ["main (a.c:70) > main.omp_outlined (a.c:80)",5],
 ["main (a.c:41) > helper (a.c:12)",4],
 ["main (a.c:30)",4],
 ["main (a.c:40) > solve (a.c:23) > helper (a.c:12)",3],
 ["... > rec (a.c:50) > rec (a.c:50) > rec (a.c:50) > rec (a.c:55)",2],
 ["main (a.c:42) > rec (a.c:55)",1],
 ["main (a.c:42) > rec (a.c:50) > rec (a.c:55)",1],
 ["main (a.c:42) > rec (a.c:50) > rec (a.c:50) > rec (a.c:55)",1]]
J
jq -e --slurpfile want "$work/rows.json" '[.configs[0].groups[] | [.key, .accesses]] == $want[0]' "$work/p1.json" >/dev/null ||
  { jq -c '[.configs[0].groups[] | [.key, .accesses]]' "$work/p1.json" >&2; fail "--by callpath rows"; }
check "$work/p1.json" '.configs[0].by == "callpath" and ([.configs[0].groups[] | select(.line == 12) | .file] | unique) == ["src/a.c"]'
# the per-line tables are those of a run without call paths
"$CALLPATH_GEN" "$work/plain.pes" --no-calls
"$PES_BIN/pes-replay" "$work/plain.pes" --machine haswell --format json >"$work/plain.json"
for f in "$work/j1.json" "$work/plain.json"; do
  jq -c '[.configs[0].groups[] | [.key, .accesses, .sites]], [.configs[0].sites[] | [.site, .accesses]]' "$f"
done >"$work/tables"
[ "$(sed -n 1p "$work/tables")" = "$(sed -n 3p "$work/tables")" ] || fail "line rows differ from the plain trace's"

# --by object: the one (unknown) object's top paths, of all 26 accesses
replay --by object >"$work/obj.json" || fail "--by object failed"
jq -e '[.configs[0].groups[0] | .accesses, [.callpaths[] | [.path, .accesses]]] ==
       [26, [["main (a.c:40) > solve (a.c:22) > helper",5],["main (a.c:70) > main.omp_outlined",5],["main",4]]]' \
  "$work/obj.json" >/dev/null || { jq -c '.configs[0].groups' "$work/obj.json" >&2; fail "--by object paths"; }

# --cores: mimicked cores keep the paths of the sequential run at each access's place
for j in 1 2 3; do
  replay --cores 1,2 --jobs $j >"$work/cores$j.json" 2>/dev/null || fail "--cores --jobs $j failed"
  [ $j = 1 ] || cmp -s "$work/cores1.json" "$work/cores$j.json" || fail "--cores --jobs $j differs"
done
paths "$work/cores1.json" "a.c:12 helper" \
  '[["main (a.c:40) > solve (a.c:22) > helper",5],["main (a.c:41) > helper",4],["main (a.c:40) > solve (a.c:23) > helper",3]]'
jq -e '[.configs[] | .cores] == [1, 2] and ([.configs[] | .groups[] | select(.key == "a.c:12 helper") | .callpaths] | unique | length) == 1' \
  "$work/cores1.json" >/dev/null || fail "--cores: the configurations' paths differ"

# --simulate: rows ranked by misses (each access but line 80's misses L1
# once: compulsory) and by invalidations (the worker's first store of line
# 80 invalidates thread 0's copy), each row's paths by the same count
replay --simulate --sort misses >"$work/sim.json" || fail "--simulate failed"
for j in 2 3; do
  replay --simulate --sort misses --jobs $j | cmp -s - "$work/sim.json" || fail "--simulate --jobs $j differs"
done
jq -e '[.configs[0].simulation.groups[] | select(.key == "a.c:12 helper") | .l1_misses, [.callpaths[] | [.path, .misses]]] ==
       [12, [["main (a.c:40) > solve (a.c:22) > helper",5],["main (a.c:41) > helper",4],["main (a.c:40) > solve (a.c:23) > helper",3]]]' \
  "$work/sim.json" >/dev/null || { jq -c '.configs[0].simulation.groups' "$work/sim.json" >&2; fail "--simulate paths by misses"; }
replay --simulate >"$work/inv.json" || fail "--simulate --sort invalidations failed"
jq -e '[.configs[0].simulation.groups[] | [.key, .invalidations.true + .invalidations.false, .callpaths]] ==
       [["a.c:80 main.omp_outlined", 1, [{"path": "main (a.c:70) > main.omp_outlined", "invalidations": 1, "share": 1}]]]' \
  "$work/inv.json" >/dev/null || { jq -c '.configs[0].simulation.groups' "$work/inv.json" >&2; fail "--simulate paths by invalidations"; }
# by call path: line 80's 5 stores miss twice (each thread's first: the line is new to its core)
cat >"$work/simrows.json" <<'J'
[["main (a.c:40) > solve (a.c:22) > helper (a.c:12)",5],
 ["main (a.c:41) > helper (a.c:12)",4],
 ["main (a.c:30)",4],
 ["main (a.c:40) > solve (a.c:23) > helper (a.c:12)",3],
 ["... > rec (a.c:50) > rec (a.c:50) > rec (a.c:50) > rec (a.c:55)",2],
 ["main (a.c:70) > main.omp_outlined (a.c:80)",2],
 ["main (a.c:42) > rec (a.c:55)",1],
 ["main (a.c:42) > rec (a.c:50) > rec (a.c:55)",1],
 ["main (a.c:42) > rec (a.c:50) > rec (a.c:50) > rec (a.c:55)",1]]
J
replay --simulate --sort misses --by callpath --callpath-depth 3 >"$work/simp.json" || fail "--simulate --by callpath"
jq -e --slurpfile want "$work/simrows.json" '[.configs[0].simulation.groups[] | [.key, .l1_misses]] == $want[0]' "$work/simp.json" >/dev/null ||
  { jq -c '[.configs[0].simulation.groups[] | [.key, .l1_misses]]' "$work/simp.json" >&2; fail "--simulate --by callpath rows"; }

# --sites-csv: a row per site and call path, its counts those of the path
"$PES_BIN/pes-replay" "$t" --machine haswell --simulate --sort misses --sites-csv "$work/sites.csv" >/dev/null ||
  fail "--sites-csv failed"
head -1 "$work/sites.csv" | grep -q ',l1_conflict,callpath$' || fail "--sites-csv: no callpath column"
[ "$(awk -F, '$3 == 0 { print $9 "|" $NF }' "$work/sites.csv" | tr '\n' ';')" = \
  "5|main (a.c:40) > solve (a.c:22) > helper;4|main (a.c:41) > helper;3|main (a.c:40) > solve (a.c:23) > helper;" ] ||
  { cat "$work/sites.csv" >&2; fail "--sites-csv: site 0's paths"; }
"$PES_BIN/pes-replay" "$work/plain.pes" --machine haswell --simulate --sites-csv "$work/plain.csv" >/dev/null
head -1 "$work/plain.csv" | grep -q ',l1_conflict$' || fail "plain --sites-csv: a callpath column"
# --html: the rows' paths in a column of their own
"$PES_BIN/pes-replay" "$t" --machine haswell --html "$work/r.html" >/dev/null || fail "--html failed"
grep -qF '<td class="paths">41.7% main (a.c:40) &gt; solve (a.c:22) &gt; helper<br>' "$work/r.html" ||
  fail "--html: no call paths"

# every report validates against the schema (docs/replay.schema.json: definitions/callpaths)
for f in j1 p1 obj sim inv simp; do
  python3 - "$work/$f.json" "$PES_SRC/docs/replay.schema.json" <<'PY' || fail "$f.json: not valid against the schema"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
done

# text: under the row, its paths and shares
"$PES_BIN/pes-replay" "$t" --machine haswell >"$work/text" || fail "text report failed"
grep -qx '     41.7%  main (a.c:40) > solve (a.c:22) > helper' "$work/text" || { cat "$work/text" >&2; fail "text paths"; }

# a trace without call edges: no call-path section, in any format
for fmt in json text; do
  "$PES_BIN/pes-replay" "$work/plain.pes" --machine haswell --format $fmt >"$work/plain.$fmt" || fail "plain $fmt"
  ! grep -q 'callpath\|call path' "$work/plain.$fmt" || fail "plain trace: a call-path section in $fmt"
done
expect_fail "has no call edges" "$PES_BIN/pes-replay" "$work/plain.pes" --by callpath
expect_usage "--callpath-depth" "$PES_BIN/pes-replay" "$t" --callpath-depth 0
# a sampled trace's events have no call edges: --callpath-depth is a usage
# error there (its call paths are its samples' stacks, e.collector.callpath)
"$PES_BIN/trace_sample_gen" "$work/sampled.pes" --sampled
expect_usage "--callpath-depth needs a full trace" "$PES_BIN/pes-replay" "$work/sampled.pes" --callpath-depth 4

# a CALL naming an access site, or a site no module defines: an error naming the block's offset
"$CALLPATH_GEN" "$work/bad_kind.pes" --bad-kind
"$CALLPATH_GEN" "$work/bad_site.pes" --bad-site
expect_fail "not a call site" "$PES_BIN/pes-replay" "$work/bad_kind.pes"
grep -q 'offset [0-9]' "$work/err" || fail "bad kind: no offset"
expect_fail "which no earlier MODULE block defines" "$PES_BIN/pes-replay" "$work/bad_site.pes"
grep -q 'offset [0-9]' "$work/err" || fail "bad site: no offset"

# pes-replay-mpi: the same report, its ranks reading the whole trace or, with
# --parts yes, a part each
if [ -x "$PES_BIN/pes-replay-mpi" ] && command -v mpirun >/dev/null && [ -z "${PES_SANITIZE:-}" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for np in 1 2 4; do
    mpirun --allow-run-as-root --oversubscribe -np $np "$PES_BIN/pes-replay-mpi" "$t" --machine haswell \
      --format json --mpi-window 4 >"$work/mpi$np.json" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; fail "mpi $np"; }
    cmp -s "$work/j1.json" "$work/mpi$np.json" || fail "pes-replay-mpi -np $np differs"
    mpirun --allow-run-as-root --oversubscribe -np $np "$PES_BIN/pes-replay-mpi" "$t" --machine haswell \
      --format json --parts yes >"$work/mpip$np.json" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; fail "mpi parts $np"; }
    cmp -s "$work/j1.json" "$work/mpip$np.json" || fail "pes-replay-mpi --parts yes -np $np differs"
    # the simulation shared out among the ranks (their partitions' rows, keyed by triple)
    mpirun --allow-run-as-root --oversubscribe -np $np "$PES_BIN/pes-replay-mpi" "$t" --machine haswell \
      --format json --simulate --sort misses >"$work/mpisim$np.json" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; fail "mpi sim $np"; }
    cmp -s "$work/sim.json" "$work/mpisim$np.json" || fail "pes-replay-mpi --simulate -np $np differs"
  done
fi
echo "call paths: exact per-path counts, identical for --jobs 1..3"
