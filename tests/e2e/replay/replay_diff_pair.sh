#!/usr/bin/env bash
# pes-replay --diff on a fix (issue 28): diff_pair/before.c sums an array
# column by column, diff_pair/after.c row by row, with a comment and a blank
# line inserted above the loop, so the hot line moved down. Each is built
# as loop.c of its own checkout directory, recorded and replayed.
#  - The text diff's first line is the L1 miss drop: sign, count and relative
#    change equal to what the two JSON reports say (B's L1 misses - A's,
#    misses = accesses - hits of level 1), computed here from them.
#  - The moved lines are matched across the edit (same file name, function
#    and source text), not listed as only in A and only in B; with A's
#    source gone, by their place in the function.
#  - The JSON diff validates against docs/diff.schema.json; the HTML diff has
#    the headline and a table of the changed rows.
. "$(dirname "$0")/common.sh"
# --sort misses: the JSON reports list the rows with L1 misses (by invalidations, none)
opts=(--machine haswell --simulate --sort misses --top 1000)
for v in before after; do
  mkdir -p "$work/$v"
  cp "$PES_SRC/tests/e2e/replay/diff_pair/$v.c" "$work/$v/loop.c"
  (cd "$work/$v" && "$PES_BIN/pes-clang" -O1 loop.c -o loop)
  "$PES_BIN/pes-collect" -q --full -o "$work/$v.zst" -- "$work/$v/loop" >/dev/null
  "$PES_BIN/pes-replay" "$work/$v.zst" "${opts[@]}" --format json >"$work/$v.json"
done
"$PES_BIN/pes-replay" --diff "$work/before.zst" "$work/after.zst" "${opts[@]}" >"$work/d.txt"
"$PES_BIN/pes-replay" --diff "$work/before.zst" "$work/after.zst" "${opts[@]}" --format json >"$work/d.json"
"$PES_BIN/pes-replay" --diff "$work/before.json" "$work/after.json" --html "$work/d.html" >/dev/null
hot_a=$(grep -n '/\* the hot line \*/' "$work/before/loop.c" | cut -d: -f1)
hot_b=$(grep -n '/\* the hot line \*/' "$work/after/loop.c" | cut -d: -f1)
[ "$hot_a" != "$hot_b" ] || fail "the hot line did not move ($hot_a)"
# A's source gone: the rows still match, by their place in the function
mv "$work/before/loop.c" "$work/before/loop.c.gone"
"$PES_BIN/pes-replay" --diff "$work/before.json" "$work/after.json" --format json >"$work/d_nosrc.json"

"${PYTHON:-python3}" - "$work" "$PES_SRC/docs" "$hot_a" "$hot_b" <<'PY' || fail "diff pair check"
import json, os, re, sys, jsonschema
work, docs, hot_a, hot_b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
load = lambda n: json.load(open(os.path.join(work, n)))
A, B, d, d2 = load("before.json"), load("after.json"), load("d.json"), load("d_nosrc.json")
schema = json.load(open(os.path.join(docs, "diff.schema.json")))
jsonschema.validate(d, schema)
jsonschema.validate(d2, schema)

# independent truth: the two reports' own L1 misses
def l1(r):
    lv = r["configs"][0]["simulation"]["levels"][0]
    return lv["accesses"] - lv["hits"]
ma, mb = l1(A), l1(B)
delta = mb - ma
assert delta < -1000, f"the fix should cut L1 misses: {ma} -> {mb}"
first = open(os.path.join(work, "d.txt")).readline()
m = re.match(r"L1 misses\s+([+-][0-9,]+)\s+\(([+-][0-9.]+) %\)", first)
assert m, f"first line is not the L1 miss change: {first!r}"
assert int(m.group(1).replace(",", "")) == delta, (first, delta)
assert m.group(1).startswith("-")
assert abs(float(m.group(2)) - 100 * delta / ma) < 0.05, (first, 100 * delta / ma)
assert d["headline"][0]["metric"] == "L1 misses" and d["headline"][0]["delta"] == delta

def moved(diff, how):
    tables = {t["table"]: t for t in diff["tables"]}
    for name in ("configs[cores=1 mimicked=false].simulation.groups",
                 "configs[cores=1 mimicked=false].simulation.sites"):
        t = tables[name]
        assert t["only_a"] == 0 and t["only_b"] == 0, (name, t["only_a"], t["only_b"])
        rows = [r for r in t["rows"] if f"loop.c:{hot_a}" in r["key"]]
        assert rows, f"no row of A's hot line {hot_a} in {name}"
        r = rows[0]
        assert f"loop.c:{hot_b}" in r["key_b"] and r["matched_by"] == how, r
        v = {x["column"]: x for x in r["values"]}
        assert v["l1_misses"]["delta"] < 0, v["l1_misses"]
moved(d, "source")
moved(d2, "order")

html = open(os.path.join(work, "d.html")).read()
assert "Largest changes" in html and "L1 misses" in html
assert f"loop.c:{hot_b}" in html and "same source text" in html
print(f"L1 misses {ma} -> {mb} ({delta:+}); hot line {hot_a} -> {hot_b} matched")
PY
echo "diff pair ok"
