#!/usr/bin/env bash
# pes-replay --diff (issue 12, item 8), with a known answer: false_sharing.c
# with adjacent counters (two threads increment neighbouring words of one
# line) against padded ones (a line each). In the diff, the increment's store
# site loses all its false-sharing invalidations: A's value is what A's own
# report says for that site (at least one per barrier-separated round, 20;
# at most one per store, 20,000),
# B's is 0 as in B's own report. Diffing the two JSON reports gives the same
# diff as diffing the traces; the JSON diff validates against
# docs/diff.schema.json; the CSV holds the same values; bad inputs fail with
# one line naming the file.
. "$(dirname "$0")/common.sh"
src="$PES_SRC/bench/kernels/false_sharing.c"
line=$(grep -n 'the contended line' "$src" | cut -d: -f1)
"$PES_BIN/pes-clang" -O2 -fopenmp "$src" -o "$work/fs"
# --sort accesses --top 1000: every site is listed in both reports (ranked by
# false sharing, the padded run's table would be empty: no site has any)
opts=(--machine haswell --simulate --sort accesses --top 1000)
for v in adjacent padded; do
  OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" -q --full -o "$work/$v.zst" -- "$work/fs" "$v" 500 20 >/dev/null
  "$PES_BIN/pes-replay" "$work/$v.zst" "${opts[@]}" --format json >"$work/$v.json"
done
"$PES_BIN/pes-replay" --diff "$work/adjacent.zst" "$work/padded.zst" "${opts[@]}" --format json >"$work/dt.json"
"$PES_BIN/pes-replay" --diff "$work/adjacent.json" "$work/padded.json" --format json >"$work/dj.json"
"$PES_BIN/pes-replay" --diff "$work/adjacent.zst" "$work/padded.zst" "${opts[@]}" --format csv >"$work/d.csv"
"$PES_BIN/pes-replay" --diff "$work/adjacent.zst" "$work/padded.zst" "${opts[@]}" --diff-all >"$work/d.txt"
"$PES_BIN/pes-replay" --diff "$work/adjacent.json" "$work/adjacent.json" >"$work/same.txt"

"${PYTHON:-python3}" - "$work" "$PES_SRC/docs" "$line" <<'PY' || fail "diff check"
import csv, json, os, sys, jsonschema
work, docs, line = sys.argv[1], sys.argv[2], int(sys.argv[3])
load = lambda n: json.load(open(os.path.join(work, n)))
A, B, dt, dj = load("adjacent.json"), load("padded.json"), load("dt.json"), load("dj.json")
schema = json.load(open(os.path.join(docs, "diff.schema.json")))
for d in (dt, dj):
    jsonschema.validate(d, schema)
assert dt["a"] == {"path": os.path.join(work, "adjacent.zst"), "input": "trace", "kind": "full"}, dt["a"]
assert dj["b"]["input"] == "json"
# the same computation on the same values, whatever the inputs were
assert {k: v for k, v in dt.items() if k not in "ab"} == {k: v for k, v in dj.items() if k not in "ab"}, \
    "diff of the JSON reports differs from the diff of the traces"

def sites(report):
    return {(s["file"], s["line"], s["column"], s["site"]): s for s in report["configs"][0]["simulation"]["sites"]}
sa, sb = sites(A), sites(B)
# the store of the increment: the site of that line with A's false-sharing invalidations
hot = [k for k, s in sa.items() if k[1] == line and s["invalidations"]["false"] > 0]
assert len(hot) == 1, f"sites of line {line} with false sharing in A: {hot}"
hot = hot[0]
own_a = sa[hot]["invalidations"]["false"]
# at least one per barrier-separated round, at most one per store of the
# increment (2 threads x 500 iterations x 20 rounds)
assert 20 <= own_a <= 2 * 500 * 20, f"A: {own_a} false-sharing invalidations, expected 20..20000"
assert sb[hot]["invalidations"]["false"] == 0, "B's own report has false sharing on the line"

tables = {t["table"]: t for t in dt["tables"]}
t = tables["configs[cores=2 mimicked=false].simulation.sites"]
assert t["rank"] == "invalidations.true+invalidations.false"
row = t["rows"][0]   # ranked first: the largest change of invalidations
assert f"false_sharing.c:{line}:{hot[2]} " in row["key"] and row["key"].endswith(f"site={hot[3]}"), row["key"]
# (A's rank counts the site's true invalidations too: the merge orders threads
# by time marks, not by the closing barrier, so about one run in a dozen has one,
# from main's read of adjacent[1] after the region; B has none of either)
assert sb[hot]["invalidations"]["true"] == 0
assert row["status"] == "changed" and row["rank"] == own_a + sa[hot]["invalidations"]["true"], (row["rank"], sa[hot])
v = {x["column"]: x for x in row["values"]}["invalidations.false"]
assert (v["a"], v["b"], v["delta"], v["relative"]) == (own_a, 0, -own_a, -1), v
# every row of A's and B's site tables is matched (same program, same sites)
assert t["only_a"] == 0 and t["only_b"] == 0 and t["changed"] + t["same"] == len(sa) == len(sb)
# totals: the run's false-sharing invalidations drop to 0
tot = {x["column"]: x for x in tables["configs"]["rows"][0]["values"]}
assert tot["simulation.invalidations.false"]["b"] == 0
assert tot["simulation.invalidations.false"]["a"] == A["configs"][0]["simulation"]["invalidations"]["false"]

# CSV: one row per value of the JSON diff, the same values
rows = list(csv.reader(open(os.path.join(work, "d.csv"), newline="")))
assert rows[0] == ["table", "key", "status", "column", "unit", "a", "b", "delta", "relative [ratio]"], rows[0]
n_values = sum(len(r["values"]) for t in dt["tables"] for r in t["rows"])
assert len(rows) - 1 == n_values, (len(rows) - 1, n_values)
hit = [r for r in rows if r[0] == t["table"] and r[1] == row["key"] and r[3] == "invalidations.false"]
assert hit == [[t["table"], row["key"], "changed", "invalidations.false", "count", str(own_a), "0", str(-own_a), "-1"]], hit

# text (--diff-all): the line's change as "A B delta"
txt = open(os.path.join(work, "d.txt")).read()
fmt = lambda n: f"{n:,}"
want = f"invalidations.false {fmt(own_a)} 0 -{fmt(own_a)} -100.00%"
assert want in " ".join(txt.split()), f"text diff lacks '{want}'"
same = open(os.path.join(work, "same.txt")).read()
assert "the reports are the same" in same, same[-300:]
print(f"false sharing on false_sharing.c:{line}: {own_a} -> 0")
PY

# sampled traces diff too (their own kind)
"$PES_BIN/pes-replay" --diff "$PES_SRC/tests/data/fs.comm.zst" "$PES_SRC/tests/data/fs.comm.zst" --format json \
  >"$work/ds.json"
"${PYTHON:-python3}" - "$work/ds.json" "$PES_SRC/docs/diff.schema.json" <<'PY' || fail "sampled diff"
import json, sys, jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, json.load(open(sys.argv[2])))
assert d["a"]["kind"] == "sampled" and all(t["changed"] == t["only_a"] == t["only_b"] == 0 for t in d["tables"])
PY

# bad inputs: one line naming the file, non-zero exit
echo '{"x": 1}' >"$work/other.json"
sed 's/"pes_replay_json":1/"pes_replay_json":2/' "$work/adjacent.json" >"$work/v2.json"
printf '{"pes_replay_json":1,' >"$work/cut.json"
expect_fail "$work/other.json: JSON but not a pes-replay report" \
  "$PES_BIN/pes-replay" --diff "$work/other.json" "$work/padded.json"
expect_fail "$work/v2.json: a pes-replay report of format version 2; this pes-replay reads version 1" \
  "$PES_BIN/pes-replay" --diff "$work/adjacent.json" "$work/v2.json"
expect_fail "$work/cut.json: not a valid JSON report" "$PES_BIN/pes-replay" --diff "$work/cut.json" "$work/padded.json"
expect_fail "is a full-trace report and $PES_SRC/tests/golden/sampled_fs_comm.json.out a sampled report" \
  "$PES_BIN/pes-replay" --diff "$work/adjacent.json" "$PES_SRC/tests/golden/sampled_fs_comm.json.out"
expect_fail "$work/dt.json: a pes-replay --diff report" "$PES_BIN/pes-replay" --diff "$work/dt.json" "$work/dj.json"
for f in other v2 cut; do
  "$PES_BIN/pes-replay" --diff "$work/$f.json" "$work/padded.json" >/dev/null 2>"$work/err" || true
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$f: not one line: $(cat "$work/err")"
done
expect_usage "--diff: expected two inputs" "$PES_BIN/pes-replay" --diff "$work/adjacent.json"
expect_usage "--diff: not with --compare" "$PES_BIN/pes-replay" --diff --compare "$work/adjacent.json" "$work/padded.json"
echo "diff ok"
