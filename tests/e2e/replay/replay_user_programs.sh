#!/usr/bin/env bash
# The two programs users tried in issue 28, and what the reports must state:
#  fs_fields_omp.c (two OpenMP threads, two fields of one struct: false
#  sharing; clang merges the field stores into one of line 0):
#   - --annotate (text and HTML) lists the unidentified lines' counts, so its
#     invalidation column sums to the simulation's total; the cache-line
#     table names the line-0 site (function, "line unknown");
#   - without --simulate, the predicted hit rates say they count no
#     coherence and which flag does; a level that almost no access reaches
#     has its 0 % explained;
#   - "cnt+8" (no -g: no types) comes with one note that field names need
#     -g, and with -g the field's name and no note;
#  column_major.c: counts of 1,000 and more carry thousands separators
#  (writebacks, the cache-line table).
. "$(dirname "$0")/common.sh"
d="$PES_SRC/tests/e2e/replay"
PY=${PYTHON:-python3}
"$PES_BIN/pes-clang" -O2 -fopenmp "$d/fs_fields_omp.c" -o "$work/fs"
OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" -q --full -o "$work/fs.zst" -- "$work/fs" 500 >/dev/null
rep() { "$PES_BIN/pes-replay" "$work/fs.zst" --machine haswell "$@"; }
rep --simulate --annotate fs_fields_omp.c --top 3 >"$work/fs.txt"
rep --simulate --annotate fs_fields_omp.c --top 3 --format json -o "$work/fs.json" --html "$work/fs.html"
inval=$(jq '.configs[0].simulation.invalidations.false' "$work/fs.json")
[ "$inval" -ge 20 ] || fail "false sharing: $inval false-sharing invalidations (20 rounds)"

"$PES_BIN/pes-dump" --tables "$work/fs.zst" >"$work/fs.dump"
# (10) pes-dump --thread N of a thread the trace does not have: an error, not silence
expect_fail "--thread 9: $work/fs.zst has threads 0..1 (2 threads)" "$PES_BIN/pes-dump" --thread 9 "$work/fs.zst"
"$PES_BIN/pes-dump" --thread 1 "$work/fs.zst" >"$work/t1.dump"
grep -q '^T1 access' "$work/t1.dump" || fail "pes-dump --thread 1 prints no access of T1"
if grep -Eq 'fs_fields_omp\.c:0:0 +main\.omp_outlined +store' "$work/fs.dump"; then
  # (1) text --annotate: every invalidation on a row, the line-0 ones on the unidentified row
  "$PY" - "$work/fs.txt" "$inval" <<'PY' || fail "--annotate text"
import re, sys
text, want = open(sys.argv[1]).read(), int(sys.argv[2])
sec = text.split("Annotated source", 1)[1]
head = next(l for l in sec.split("\n") if "inval F" in l)
col = 1 + len(re.findall(r"\bL\d\b", head)) + 1   # accesses, Ln misses, inval T, inval F
total, unident = 0, None
for l in sec.split("\n"):
    m = re.match(r"^ *([\d,.]+(?: +[\d,.]+){7})  (.*)$", l)
    if not m:
        continue
    v = m.group(1).split()[col]
    n = 0 if v == "." else int(v.replace(",", ""))
    total += n
    if m.group(2).startswith("<counts for unidentified lines of fs_fields_omp.c>"):
        unident = n
assert unident is not None and unident > 0, f"no unidentified-lines row with invalidations: {sec[:800]}"
assert total == want, f"--annotate rows sum to {total} false-sharing invalidations, the simulation has {want}"
print(f"ok: --annotate text: {total} invalidations, {unident} on the unidentified lines")
PY
  # (1) the HTML page's annotated source: the same sum
  "$PY" - "$work/fs.html" "$inval" <<'PY' || fail "--annotate HTML"
import sys, html5lib
tree = html5lib.parse(open(sys.argv[1], encoding="utf-8").read(), namespaceHTMLElements=False)
want = int(sys.argv[2])
tables = [t for t in tree.iter("table") if t.get("class") == "src"]
assert tables, "no annotated-source table"
total, unident = 0, None
for t in tables:
    rows = list(t.iter("tr"))
    heads = ["".join(c.itertext()) for c in rows[0]]
    col = heads.index("inval F")
    for tr in rows[1:]:
        cells = ["".join(c.itertext()) for c in tr]
        if len(cells) != len(heads):
            continue   # context rows and gaps
        n = 0 if cells[col] in (".", "") else int(cells[col])
        total += n
        if cells[-1].startswith("<counts for unidentified lines of fs_fields_omp.c>"):
            unident = n
assert unident, "HTML: no unidentified-lines row with invalidations"
assert total == want, f"HTML annotated source sums to {total}, the simulation has {want}"
print(f"ok: --annotate HTML: {total} invalidations, {unident} on the unidentified lines")
PY
  # (1) the cache-line table names the line-0 store: its function, line unknown
  grep -Eq '^ +[0-9]+ +8 .* cnt\+8 +.*main\.omp_outlined \(fs_fields_omp\.c, line unknown\)' "$work/fs.txt" ||
    fail "cache-line table: cnt+8 without its line-0 site: $(grep -A12 'cache lines by' "$work/fs.txt")"
  jq -e '[.configs[0].simulation.cache_lines[] | select(.object == "cnt") | .offsets[].sources[]]
         | index("main.omp_outlined (fs_fields_omp.c, line unknown)") != null' "$work/fs.json" >/dev/null ||
    fail "JSON cache_lines sources lack the line-0 site"
  echo "ok: cache-line table names main.omp_outlined (line unknown)"
else
  echo "SKIP: line-0 store: this clang kept the field stores' lines: $(grep omp_outlined "$work/fs.dump")"
fi

# (8) without -g the part is a byte offset, said once; with -g the field
[ "$(grep -c '(cnt+8: a byte offset into the object; its field or element names need the program built' "$work/fs.txt")" -eq 1 ] ||
  fail "no single note on cnt+8: $(grep -A14 'cache lines by' "$work/fs.txt")"
grep -q 'with -g: without it pes-clang adds line tables only' "$work/fs.txt" || fail "the note names no -g"
"$PES_BIN/pes-clang" -O2 -g -fopenmp "$d/fs_fields_omp.c" -o "$work/fsg"
OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" -q --full -o "$work/fsg.zst" -- "$work/fsg" 500 >/dev/null
"$PES_BIN/pes-replay" "$work/fsg.zst" --machine haswell --simulate --top 3 >"$work/fsg.txt"
grep -Eq ' cnt\.b ' "$work/fsg.txt" || fail "-g: no field name: $(grep -A14 'cache lines by' "$work/fsg.txt")"
if grep -q 'a byte offset into the object' "$work/fsg.txt"; then fail "-g build still says a byte offset"; fi
echo "ok: cnt+8 explained once; -g gives cnt.b"

# (4) no --simulate: the hit rates count no coherence, and --simulate does
rep >"$work/fs.model.txt"
grep -q 'Ln hit counts no coherence misses' "$work/fs.model.txt" &&
  grep -q -- '--simulate simulates MESI' "$work/fs.model.txt" ||
  fail "no word on coherence without --simulate: $(sed -n '/Predicted/,/T_pred uses/p' "$work/fs.model.txt")"
if grep -q 'Ln hit counts no coherence misses' "$work/fs.txt"; then fail "the note with --simulate"; fi
# (10) a level that only the cold misses reach: its 0 % in words, with the count
rep --format json -o "$work/fs.model.json"
if jq -e '.configs[0].model | .hit_local[1] == 0 and .hit_global[0] > 0.99' "$work/fs.model.json" >/dev/null; then
  grep -Eq '^  \(L2 hit 0\.00 %: of [0-9,]+ line accesses only about [0-9,]+ reach L2' "$work/fs.model.txt" ||
    fail "L2 hit 0.00 % unexplained: $(sed -n '/Predicted/,/T_pred uses/p' "$work/fs.model.txt")"
  echo "ok: L2's 0 % explained"
else
  fail "the model no longer predicts L2 hit 0 for fs_fields_omp: $(jq -c .configs[0].model.hit_local "$work/fs.model.json")"
fi
echo "ok: without --simulate the hit rates say they count no coherence"

# (10) thousands separators: writebacks and the cache-line table of column_major.c
"$PES_BIN/pes-clang" -O2 "$d/column_major.c" -o "$work/cm"
"$PES_BIN/pes-collect" -q --full -o "$work/cm.zst" -- "$work/cm" 256 >/dev/null
"$PES_BIN/pes-replay" "$work/cm.zst" --machine haswell --simulate --format json -o "$work/cm.json"
"$PES_BIN/pes-replay" "$work/cm.zst" --machine haswell --simulate >"$work/cm.txt"
wb=$(jq '.configs[0].simulation.writebacks' "$work/cm.json")
[ "$wb" -ge 1000 ] || fail "column_major: only $wb writebacks"
grouped=$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$wb")   # 65536 -> 65,536
grep -q "writebacks $grouped\$" "$work/cm.txt" ||
  fail "writebacks $wb not as $grouped: $(grep writebacks "$work/cm.txt")"
"$PY" - "$work/fs.txt" <<'PY' || fail "cache-line table counts"
import re, sys
text = open(sys.argv[1]).read()
table = text.split("cache lines by", 1)[1].split("  (B: bytes", 1)[0]   # the cache-line table
rows = [l for l in table.split("\n") if re.match(r"^ {5,}\d+ +\d+ +[\d,]+ ", l) or l.startswith("     invalidations ")]
assert rows, "no cache-line rows"
for l in rows:
    for tok in re.findall(r"(?<![\w.+:x])\d[\d,]*(?![\w.:])", l):
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", tok), f"count without separators: {tok} in {l!r}"
print(f"ok: {len(rows)} cache-line rows with separators")
PY
echo "ok: thousands separators (writebacks $wb)"

# the column-major program's report opens with its loop and the fix (issue
# 28's done-when): a 256 x 256 walk steps 2,048 bytes, and its column (256
# lines) would fit the L1 (512 lines) were it fully associative, so the
# stride's cost shows as set conflicts: 2,048 bytes = 32 lines reach 64 /
# gcd(32, 64) = 2 of the L1's 64 sets
cml=$(grep -n 'the strided access' "$d/column_major.c" | cut -d: -f1)
[ "$(sed -n 6p "$work/cm.txt")" = "Findings (ranked by the share of the accesses they cost; docs/report.md)" ] ||
  fail "column_major: line 6 is not the findings heading"
first=$(awk 'NR >= 7 && /^  2\. / { exit } NR >= 7' "$work/cm.txt" | tr -s ' \n' ' ')
case "$first" in
  *"1. Strided walk at column_major.c:$cml main (1 thread): each access of a thread that moves is at least 2,048 bytes"*"Fix: Make the innermost loop at column_major.c:$cml main walk consecutive addresses: interchange the loops"*) ;;
  *) fail "column_major: the first finding is not the strided walk at line $cml: $first" ;;
esac
jq -e --arg w "column_major.c:$cml main" '[.findings[] | select(.rule == "conflict_misses")][0].evidence
  | .site == $w and .stride_bytes == 2048 and .sets_reached == 2 and .sets == 64' "$work/cm.json" >/dev/null ||
  fail "column_major: conflict finding $(jq -c '[.findings[] | select(.rule == "conflict_misses")]' "$work/cm.json")"
echo "ok: column_major.c opens with the strided walk at line $cml and its conflicts in 2 of 64 sets"

# (10) the communication volume of a sampled trace: its report counts each
# transfer once, --compare both directions; --compare says so, with the
# sampled report's figure, and that figure is the sampled report's
data=$PES_SRC/tests/data
(cd "$data" && "$PES_BIN/pes-replay" fs.comm.zst) >"$work/s.txt" 2>/dev/null
(cd "$data" && "$PES_BIN/pes-replay" fs.comm.zst --compare fs.comm_full.zst) >"$work/c.txt" 2>/dev/null
(cd "$data" && "$PES_BIN/pes-replay" fs.comm.zst --compare fs.comm_full.zst --format json) >"$work/c.json" 2>/dev/null
once=$(sed -n 's/^Communication (estimator [a-z]*): [0-9]* events, volume \([0-9]*\) .*/\1/p' "$work/s.txt")
[ -n "$once" ] || fail "no volume in the sampled report: $(grep -A2 '^Communication' "$work/s.txt")"
grep -q 'volume: each transfer once;' "$work/s.txt" || fail "the sampled report does not say how it counts"
said=$(tr '\n' ' ' <"$work/c.txt" | sed -n 's/.*pes-replay SAMPLED counts it once: *sampled \([0-9]*\), full \([0-9]*\)).*/\1 \2/p')
[ "${said% *}" = "$once" ] || fail "--compare says the sampled report's volume is '${said% *}', it is $once"
jq -e --argjson once "$once" '.comm_volume_sampled == 2 * $once' "$work/c.json" >/dev/null ||
  fail "--compare's symmetric volume is not twice the sampled report's $once"
echo "ok: communication volume: $once once, $((2 * once)) in --compare, said in both"

# (1) every access is on an annotated row: gemm40's trace has sites without
# any debug location (OpenMP's captured variables), summed per function in
# their own section; text and HTML margins add up to the line accesses
(cd "$data" && "$PES_BIN/pes-replay" gemm40.full.zst --machine haswell --simulate --annotate all \
  --format json -o "$work/g.json" --html "$work/g.html") >/dev/null 2>&1
(cd "$data" && "$PES_BIN/pes-replay" gemm40.full.zst --machine haswell --simulate --annotate all) >"$work/g.txt" 2>/dev/null
total=$(jq '[.configs[0].prd[].histogram.accesses] | add' "$work/g.json")
grep -q '<counts for gemm.omp_outlined, no source line>' "$work/g.txt" || fail "no row for the sites without a file"
"$PY" - "$work/g.txt" "$work/g.html" "$total" <<'PY' || fail "annotated totals"
import re, sys, html5lib
text, page, total = open(sys.argv[1]).read(), open(sys.argv[2], encoding="utf-8").read(), int(sys.argv[3])
sec = text.split("Annotated source", 1)[1]
acc = sum(int(m.group(1).replace(",", "")) for m in re.finditer(r"^ *([\d,]+)(?: +[\d,.]+){7}  ", sec, re.M))
assert acc == total, f"text --annotate rows sum to {acc} line accesses, the run has {total}"
tree = html5lib.parse(page, namespaceHTMLElements=False)
heads = [("".join(h.itertext())) for h in tree.iter("h3") if (h.get("id") or "").startswith("src-")]
got = sum(int(re.search(r"\((\d+) line accesses\)", h).group(1)) for h in heads)
assert got == total, f"HTML annotated files sum to {got}, the run has {total}: {heads}"
rows = 0
for t in tree.iter("table"):
    if t.get("class") == "src":
        for tr in t.iter("tr"):
            c = ["".join(x.itertext()) for x in tr]
            if c and c[0] == "?":
                rows += 1
assert rows >= 1, "HTML: no row for the counts without a line"
print(f"ok: annotated rows sum to the {total} line accesses (text and HTML)")
PY
