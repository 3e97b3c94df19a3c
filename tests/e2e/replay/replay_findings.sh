#!/usr/bin/env bash
# Findings (issue 28; docs/report.md, "Findings"): each rule on a program that
# has its problem and on the same work without it (findings_prog.c). The first
# finding must be the rule's, name the object / field / source line, and
# carry the fix; the clean variant must get no finding of that rule. Then:
# the text report opens with the same findings, the HTML page opens with them
# (first heading after the title), its titles are words, not JSON paths, its
# site tables name file:line, its 0 % bars are drawn, its heatmap titles fit;
# and pes-replay-mpi finds the same stride, whatever the parts.
. "$(dirname "$0")/common.sh"
src="$PES_SRC/tests/e2e/replay/findings_prog.c"
"$PES_BIN/pes-clang" -O2 -g -fopenmp "$src" -o "$work/prog"
lineof() { grep -n "/\* $1 \*/" "$src" | cut -d: -f1; }
# The test's last-level cache for the sweeps: 16 KiB (the sweep: 128 KiB, the clean one 8 KiB).
small="--cache L1=2K:4,L2=8K:8,L3=16K:16"
replay() {   # MODE: $work/MODE.json (and .zst)
  local args=""
  case $1 in sweep*) args=$small ;; esac
  OMP_NUM_THREADS=2 "$PES_BIN/pes-collect" -q --full -o "$work/$1.zst" -- "$work/prog" "$1" >/dev/null
  # shellcheck disable=SC2086  # args are words
  "$PES_BIN/pes-replay" "$work/$1.zst" --machine haswell $args --simulate --format json >"$work/$1.json"
}
first() { jq -r ".findings[0].$2 // \"\"" "$work/$1.json"; }
has() {   # MODE FIELD NEEDLE: the first finding's FIELD holds NEEDLE
  case "$(first "$1" "$2")" in
    *"$3"*) ;;
    *) fail "$1: the first finding's $2 lacks '$3': $(jq -c '.findings[0]' "$work/$1.json")" ;;
  esac
}
clean() {   # MODE RULE: no finding of RULE
  jq -e --arg r "$2" '[.findings[] | select(.rule == $r)] | length == 0' "$work/$1.json" >/dev/null ||
    fail "$1: a $2 finding in the clean variant: $(jq -c .findings "$work/$1.json")"
}

# false sharing: counters.hits (byte 0) and counters.misses (byte 8), 56 bytes of padding
replay false
replay false-clean
[ "$(first false rule)" = false_sharing ] || fail "false: first finding $(first false rule)"
has false text "counters.hits"
has false text "counters.misses"
has false fix "Put counters.hits and counters.misses on separate cache lines"
has false fix "add 56 bytes of padding"
jq -e '.findings[0].evidence | .object == "counters" and .first_offset == 0 and .second_offset == 8
  and .padding == 56 and .false_transfers >= 20' "$work/false.json" >/dev/null ||
  fail "false: evidence $(jq -c '.findings[0].evidence' "$work/false.json")"
clean false-clean false_sharing
echo "ok: false sharing on counters.hits / counters.misses, pad 56 bytes; padded: none"

# true sharing: the token every thread adds to (migratory)
replay true
replay true-clean
[ "$(first true rule)" = true_sharing ] || fail "true: first finding $(first true rule)"
has true text "Migratory line (true sharing) on token"
has true fix "Share token less often"
clean true-clean true_sharing
echo "ok: true sharing (migratory) on token; own slots: none"

# strided walk: the column loop, 512 doubles = 4096 bytes a step
replay stride
replay stride-clean
[ "$(first stride rule)" = strided_access ] || fail "stride: first finding $(first stride rule)"
has stride text "findings_prog.c:$(lineof COLUMNS) "
has stride text "at least 4,096 bytes"
has stride fix "interchange the loops"
jq -e '.findings[0].evidence | .stride_bytes == 4096 and .line_crossing_share >= 0.99' \
  "$work/stride.json" >/dev/null || fail "stride: evidence $(jq -c '.findings[0].evidence' "$work/stride.json")"
clean stride-clean strided_access
echo "ok: strided walk at findings_prog.c:$(lineof COLUMNS), 4096 bytes; by rows: none"

# reuse beyond the last-level cache: the 128 KiB sweep, on a 16 KiB L3
replay sweep
replay sweep-clean
[ "$(first sweep rule)" = beyond_llc ] || fail "sweep: first finding $(first sweep rule)"
has sweep text "findings_prog.c:$(lineof SWEEP) "
has sweep fix "Block (tile) the loops at findings_prog.c:$(lineof SWEEP) "
# 16 sweeps of 2048 lines: 15 of them reuse every line after the 2047 others
jq -e '.findings[0].evidence | .llc_lines == 256 and .reuses_beyond_llc >= 15 * 2048' \
  "$work/sweep.json" >/dev/null || fail "sweep: evidence $(jq -c '.findings[0].evidence' "$work/sweep.json")"
clean sweep-clean beyond_llc
echo "ok: reuse beyond a 16 KiB L3 at findings_prog.c:$(lineof SWEEP); an 8 KiB sweep: none"

# every clean variant: no finding at all, and the text says so with the thresholds
for m in false-clean true-clean stride-clean sweep-clean; do
  jq -e '.findings == []' "$work/$m.json" >/dev/null || fail "$m: findings $(jq -c .findings "$work/$m.json")"
done
"$PES_BIN/pes-replay" "$work/stride-clean.zst" --machine haswell >"$work/clean.txt"
grep -q "No locality problem found above the thresholds: a finding needs at least 20 events" "$work/clean.txt" ||
  fail "the clean text report does not say that nothing passed the thresholds"

# the text report opens with the findings: right after the summary, the JSON's sentences
"$PES_BIN/pes-replay" "$work/false.zst" --machine haswell --simulate >"$work/false.txt"
[ "$(sed -n 6p "$work/false.txt")" = "Findings (ranked by the share of the accesses they cost; docs/report.md)" ] ||
  fail "text: line 6 is not the findings heading: $(sed -n 1,8p "$work/false.txt")"
"$PYTHON" - "$work/false.txt" "$work/false.json" <<'PY' || fail "text: the findings differ from the JSON's"
import json, re, sys
text = open(sys.argv[1]).read()
block = text.split("\nReuse profiles")[0]
flat = re.sub(r"\s+", " ", block)
for f in json.load(open(sys.argv[2]))["findings"]:
    assert f"{f['rank']}. {f['text']}" in flat, f["text"]
    assert f"Fix: {f['fix']}" in flat, f["fix"]
PY

# the HTML page
"$PES_BIN/pes-replay" "$work/false.zst" --machine haswell --simulate --html "$work/false.html" >/dev/null
"$PES_BIN/pes-replay" "$work/stride.zst" --machine haswell --cores 1,2 --simulate --html "$work/stride.html" >/dev/null
"$PES_BIN/pes-replay" "$work/stride.zst" --machine haswell --cores 1,2 --simulate --format json >"$work/stride12.json"
# a sampled trace's page (tests/data: false_sharing.c's comm samples)
"$PES_BIN/pes-replay" "$PES_SRC/tests/data/fs.comm.zst" --html "$work/sampled.html" --format json >"$work/sampled.json" 2>/dev/null
"$PYTHON" - "$work/false.html" "$work/false.json" "$work/stride.html" "$work/stride12.json" "$src" \
  "$work/sampled.html" "$work/sampled.json" <<'PY' ||
import json, re, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    """Headings, findings, table cells, SVG titles, zero-bar hairlines and bars."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.headings, self.findings, self.fixes = [], [], [], []
        self.svg_titles, self.cells, self.zero, self.bars, self.heat = [], [], [], [], []
        self.text = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        if tag in ("h1", "h2", "h3") or (tag == "p" and cls in ("finding", "fix")) or \
           (tag == "text" and cls == "t") or tag == "td":
            self.text = (tag, cls, [])
        if tag == "line" and "zero" in cls.split():
            self.zero.append(float(a["data-value"]))
        if tag == "rect" and "bar" in cls.split() and "data-value" in a:
            self.bars.append(float(a["data-value"]))
        if tag == "svg" and "heat" in cls.split():
            self.heat.append(float(a["width"]))
        self.stack.append(tag)
    def handle_endtag(self, tag):
        if self.text and tag == self.text[0]:
            t, cls, parts = self.text
            s = "".join(parts).strip()
            if t in ("h1", "h2", "h3"):
                self.headings.append((t, s))
            elif t == "p":
                (self.findings if cls == "finding" else self.fixes).append(s)
            elif t == "text":
                self.svg_titles.append(s)
            else:
                self.cells.append(s)
            self.text = None
        if self.stack:
            self.stack.pop()
    def handle_data(self, d):
        if self.text:
            self.text[2].append(d)

def read(path):
    p = Page()
    p.feed(open(path).read())
    return p

# "configs[cores=2]", "[stream=0]", "intra.line_time_histogram" (a file name, "false.zst", is not one)
path_like = re.compile(r"configs\[|\[(cores|stream|group|address)=|\b[a-z][a-z_]*\.(?!zst\b|c\b)[a-z][a-z_]+")
for html, js in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4]), (sys.argv[6], sys.argv[7])):
    p, report = read(html), json.load(open(js))
    # the first heading after the title: the findings, with the JSON's sentences in its order
    assert p.headings[0][0] == "h1", p.headings[:2]
    assert p.headings[1] == ("h2", "Findings"), f"{html}: first heading after the title: {p.headings[1]}"
    want = [f["text"] for f in report["findings"]]
    assert want and p.findings == want, f"{html}: findings {p.findings} != {want}"
    assert p.fixes == ["Fix: " + f["fix"] for f in report["findings"]], f"{html}: fixes"
    # no visible title is a JSON path
    for kind, t in p.headings[1:] + [("svg", t) for t in p.svg_titles]:  # h1: the trace's file name
        assert not path_like.search(t), f"{html}: title '{t}' ({kind}) reads like a JSON path"
    # a 0 % bar is drawn as a hairline, and only a 0 % bar
    assert sorted(p.zero) == sorted(v for v in p.bars if v == 0), f"{html}: zero hairlines {p.zero}"
    print(f"ok: {html.rsplit('/', 1)[1]}: findings first ({len(want)}), {len(p.headings)} headings and "
          f"{len(p.svg_titles)} chart titles in words, {len(p.zero)} zero bars drawn")
# the false-sharing page: its hit-rate chart has 0 % bars (L2 and L3 never hit)
p = read(sys.argv[1])
assert p.zero, "false sharing: no 0 % bar drawn"
# heatmap titles fit their picture (7.5 pixels a character at most)
titles = [t for t in p.svg_titles if "transfers, thread to thread" in t]
assert titles and len(p.heat) == len(titles)
for w, t in zip(p.heat, titles):
    assert w >= 8 + 7.5 * len(t), f"heatmap '{t}' is {w} px wide"
# the sites table of the model names the source line of each site, not a bare id
walk = [n + 1 for n, l in enumerate(open(sys.argv[5])) if "/* COLUMNS */" in l][0]
cells = read(sys.argv[3]).cells
assert any(re.search(rf"findings_prog\.c:{walk} \S+ \(site \d+\)", c) for c in cells), \
    "stride page: no site cell names findings_prog.c:%d" % walk
assert not any(re.fullmatch(r"\d+ \(site \d+\)", c) for c in cells)
print(f"ok: heatmap titles fit, site cells name findings_prog.c:{walk}")
PY
  fail "HTML page"

# pes-replay-mpi: the same stride finding, the parts' seams measured again
# (a text trace of a column walk: 1024 rows of 2048 bytes, 128 KiB a
# column, read in parts)
if [ -x "$PES_BIN/pes-replay-mpi" ] && command -v mpirun >/dev/null; then
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  awk 'BEGIN { for (r = 0; r < 2; r++) for (c = 0; c < 32; c++) for (i = 0; i < 1024; i++)
               printf "0x%x R\n", 1048576 + i * 2048 + c * 8 }' >"$work/walk.txt"
  "$PES_BIN/pes-replay" "$work/walk.txt" --machine haswell --format json >"$work/walk.json"
  jq -e '.findings[0] | .rule == "strided_access" and .evidence.stride_bytes == 2048' "$work/walk.json" >/dev/null ||
    fail "text trace: $(jq -c '.findings' "$work/walk.json")"
  for np in 2 3; do
    mpirun --allow-run-as-root --oversubscribe -np "$np" "$PES_BIN/pes-replay-mpi" "$work/walk.txt" \
      --machine haswell --mpi-window 1001 --format json >"$work/walk.np$np.json" 2>"$work/mpi.err" ||
      { cat "$work/mpi.err" >&2; fail "pes-replay-mpi -np $np"; }
    cmp -s <(jq -c .findings "$work/walk.json") <(jq -c .findings "$work/walk.np$np.json") ||
      fail "$np ranks: $(jq -c .findings "$work/walk.np$np.json")"
  done
  echo "ok: pes-replay-mpi on 2 and 3 ranks: the same stride finding ($(jq .findings[0].evidence.line_crossing "$work/walk.json") line changes)"
fi
