#!/usr/bin/env bash
# Row labels of the text tables (issue 31):
#  - a site without a source line (clang gives the store it merges from two
#    branches line 0) reads as what is known, its file and function and
#    "<unidentified line>", in --by site / --by line, and --annotate lists
#    its counts as "<counts for unidentified lines of FILE>" (cg_annotate's
#    term); JSON keys say the same;
#  - a C++ function name far longer than the label column is elided in the
#    middle so every column stays aligned; JSON keeps the whole name.
. "$(dirname "$0")/common.sh"
d="$PES_SRC/tests/e2e/replay"
"$PES_BIN/pes-clang" -O2 -g "$d/labels_line0.c" -o "$work/l0"
"$PES_BIN/pes-collect" -q --full -o "$work/l0.zst" -- "$work/l0" >/dev/null
"$PES_BIN/pes-dump" "$work/l0.zst" >"$work/l0.dump"
# the sunk store of set(): the only site of set, line 0 (skip if this clang kept a line)
if grep -Eq '^  site [0-9]+ +[^ ]*labels_line0\.c:0:0 +set +store' "$work/l0.dump"; then
  for by in site line; do
    "$PES_BIN/pes-replay" "$work/l0.zst" --by $by --top 50 >"$work/l0.$by.txt"
    grep -Eq '^  labels_line0\.c:<unidentified line> store set \(site [0-9]+\) +64 ' "$work/l0.$by.txt" ||
      fail "--by $by: no row for the line-0 store: $(cat "$work/l0.$by.txt")"
    if grep -Eq '^  site [0-9]+ ' "$work/l0.$by.txt"; then fail "--by $by: a bare 'site N' row"; fi
    "$PES_BIN/pes-replay" "$work/l0.zst" --by $by --top 50 --format json -o "$work/l0.$by.json"
    jq -e '[.configs[0].groups[] | select(.key | test("^labels_line0\\.c:<unidentified line> store set \\(site [0-9]+\\)$"))
            | .accesses] == [64]' "$work/l0.$by.json" >/dev/null || fail "--by $by: JSON key of the line-0 store"
  done
  "$PES_BIN/pes-replay" "$work/l0.zst" --annotate labels_line0.c --top 0 >"$work/l0.ann"
  grep -Eq '^ +64  <counts for unidentified lines of labels_line0\.c>$' "$work/l0.ann" ||
    fail "--annotate: no unidentified-lines row: $(cat "$work/l0.ann")"
  "$PES_BIN/pes-replay" "$work/l0.zst" --annotate labels_line0.c --simulate --top 0 >"$work/l0.anns"
  grep -Eq '^ +64 +.*<counts for unidentified lines of labels_line0\.c>$' "$work/l0.anns" ||
    fail "--annotate --simulate: no unidentified-lines row"
  echo "ok: line-0 sites"
else
  echo "SKIP: line-0 sites: this clang gave set()'s store a line: $(grep ' set ' "$work/l0.dump")"
fi
# long C++ names
"$PES_BIN/pes-clang++" -O1 -g "$d/labels_long.cpp" -o "$work/long"
"$PES_BIN/pes-collect" -q --full -o "$work/long.zst" -- "$work/long" >/dev/null
full='physics::kernels::ElementIntegrator<double, 3, physics::kernels::SequentialExecutionPolicyWithAVeryLongName>::accumulate_forces_over_all_elements(double volatile*, int)'
# every table: the rows' numeric columns end where the header's do
check_aligned() {
  "${PYTHON:-python3}" - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
tables = 0
for i, h in enumerate(lines):
    m = re.match(r"^  (\S.*?) +accesses ", h)
    if not m or not lines[i - 1].lstrip().startswith("Top "):
        continue
    end = h.index("accesses") + len("accesses")     # the accesses column ends here
    tables += 1
    for r in lines[i + 2:]:
        if not r.startswith("  ") or r.startswith("  ("):
            break
        if len(r) < end or not re.fullmatch(r" *[\d,]+", r[end - 14:end]) or r[end] != " ":
            sys.exit(f"misaligned row: {r!r}\n    header: {h!r}")
        if len(r) > 200:
            sys.exit(f"row not elided: {r!r}")
if tables == 0:
    sys.exit("no table found")
PY
}
for by in function line site; do
  "$PES_BIN/pes-replay" "$work/long.zst" --by $by --top 20 --simulate >"$work/long.$by.txt"
  check_aligned "$work/long.$by.txt" || fail "--by $by: $(cat "$work/long.$by.txt")"
  grep -Eq '^  [^ ].*\.\.\.er_all_elements\(double volatile\*, int\) ' "$work/long.$by.txt" || fail "--by $by: the name is not elided"
  "$PES_BIN/pes-replay" "$work/long.zst" --by $by --top 20 --format json -o "$work/long.$by.json"
  jq -e --arg f "$full" '[.configs[0].groups[] | select(.key | contains($f))] | length >= 1' "$work/long.$by.json" \
    >/dev/null || fail "--by $by: JSON lacks the whole name"
done
jq -e --arg f "$full" '[.configs[0].groups[] | select(.key == $f) | .accesses] == [128]' "$work/long.function.json" \
  >/dev/null || fail "--by function: 128 accesses of the long function"
# HTML: the cell of a long name is cut by CSS; its title holds the whole name
"$PES_BIN/pes-replay" "$work/long.zst" --by function --top 20 --html "$work/long.html" >/dev/null
"${PYTHON:-python3}" - "$work/long.html" "$full" <<'PY' || fail "--html: no cell titled with the whole name"
import html, re, sys
page, full = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]
titles = [html.unescape(t) for t in re.findall(r'<td class="long" title="([^"]*)">', page)]
sys.exit(0 if full in titles else 1)
PY
echo "ok: long names elided, columns aligned"
echo "ok: replay_labels"
