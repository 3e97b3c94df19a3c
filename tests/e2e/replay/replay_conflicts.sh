#!/usr/bin/env bash
# Miss causes on a program whose answer is known (conflict_prog.c): its
# working set (<= 512 lines) fits a fully associative cache of the L1's 512
# lines, so no L1 miss is a capacity miss and every one after the first
# touch of a line is a conflict miss; SDCM (lines placed in sets at random) predicts
# hits the simulation cannot have, and the text report warns, naming
# conflict misses. The same counts for every --jobs N.
. "$(dirname "$0")/common.sh"
"$PES_BIN/pes-clang" -O1 "$PES_SRC/tests/e2e/replay/conflict_prog.c" -o "$work/prog"
"$PES_BIN/pes-collect" -q --full -o "$work/t.zst" -- "$work/prog" >/dev/null
opts=(--machine haswell --simulate)
"$PES_BIN/pes-replay" "$work/t.zst" "${opts[@]}" --html "$work/r.html" >"$work/r.txt"
for j in 1 3; do
  "$PES_BIN/pes-replay" "$work/t.zst" "${opts[@]}" --jobs $j --format json >"$work/r$j.json"
done
cmp -s "$work/r1.json" "$work/r3.json" || fail "--jobs 1 and --jobs 3 reports differ"
"${PYTHON:-python3}" - "$work/r1.json" "$work/r.txt" <<'PY' || fail "miss causes"
import json, re, sys
r = json.load(open(sys.argv[1]))
l1 = r["configs"][0]["simulation"]["levels"][0]
misses = l1["accesses"] - l1["hits"]
assert misses > 4000, l1
assert l1["capacity"] == 0 and l1["coherence"] == 0, l1
assert l1["conflict"] == misses - l1["compulsory"], l1
txt = open(sys.argv[2]).read()
m = re.search(r"warning: L1: the model \(SDCM\) says ([0-9.]+) % hits, the simulation ([0-9.]+) % "
              r"\([-+0-9.]+ pp\); ([0-9]+) % of its misses are conflict misses", txt)
assert m, "no L1 warning naming conflict misses"
model = r["configs"][0]["model"]["hit_local"][0]
assert abs(float(m.group(1)) - 100 * model) < 0.06 and abs(float(m.group(2)) - 100 * l1["hits"] / l1["accesses"]) < 0.06
assert int(m.group(3)) == round(100 * l1["conflict"] / misses), m.group(0)
html = open(sys.argv[2].replace("r.txt", "r.html")).read()
assert "Misses by cause" in html and "conflict misses: set conflicts" in html
row = re.search(r"<td>L1</td>(.*?)</tr>", html).group(1)
cells = re.findall(r">([0-9.]+)<", row)
assert [int(float(x)) for x in cells[-4:]] == [l1["compulsory"], l1["capacity"], l1["conflict"], l1["coherence"]], cells
print(f"L1: {misses} misses, {l1['compulsory']} compulsory, {l1['conflict']} conflict")
PY
echo "conflicts ok"
