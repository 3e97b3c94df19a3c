#!/usr/bin/env bash
# --html FILE (issue 13): for a full trace (recorded and mimicked cores, with
# the simulation), a sampled trace, a --compare report and a --diff, the page
#  (a) parses as HTML5 without a single parse error (python3-html5lib, strict)
#      and names no URL: no http(s)://, no src/href but in-page anchors;
#  (b) embeds as #pes-data exactly the JSON that --format json writes in the
#      same run;
#  (c) draws each histogram's bars from that JSON: the test bins the JSON's
#      rows itself (log2 bins of distance: 0 | [2^(k-1), 2^k - 1]) and each
#      bar's count is its bin's and its height count / largest * plot height,
#      standing on the baseline; each heatmap cell holds its matrix entry;
#  (d) renders in headless Chromium (scripts/report-screenshot.sh) into a PNG
#      of the asked size that is not blank;
# (e) a trace of 10,000 sites and 64 threads gives a page under 5 MB
# that parses, with its 64x64 communication matrices summed into 32x32 cells;
# and (f) the annotated-source section of a program whose per-line access
# counts are known by hand (tests/e2e/replay/replay_reports.sh's loops.c:
# 100 / 50 / 40) lists those lines with those counts and their text as it is
# (a comment with <&> in it), every in-page link lands on an element of the
# page, each table's file:line link on that line's row; --html leaves the
# text report byte-identical; an unreadable source is said so, counts kept.
. "$(dirname "$0")/common.sh"
: "${STRESS_GEN:?STRESS_GEN must name the trace_stress_gen program}"
data=$PES_SRC/tests/data
run() {   # NAME ARGS...: pes-replay ARGS, its JSON report and its page
  local name=$1; shift
  (cd "$data" && "$PES_BIN/pes-replay" "$@" --format json -o "$work/$name.json" --html "$work/$name.html") 2>"$work/$name.err" ||
    { cat "$work/$name.err" >&2; fail "pes-replay $*"; }
}
run full gemm40.full.zst --machine haswell --cores 1,2,4 --simulate
run recorded false_sharing.full.zst --machine haswell --simulate
run sampled fs.comm.zst
run cut gemm40.reuse_cut.zst
run reuse gemm40.reuse.zst
cp "$data/gemm40.full.zst" "$work/a<b>&\"c'.zst"   # the page escapes it
run odd "$work/a<b>&\"c'.zst" --machine haswell
run compare gemm40.reuse.zst --compare gemm40.reuse_full.zst
run diff --diff gemm40.full.zst false_sharing.full.zst --machine haswell --simulate
# reuse distances on both sides of the histogram's exact range (1024 lines):
# 3 sweeps over 3000 lines (distance 2999) and a word read twice (distance 0)
awk 'BEGIN { for (r = 0; r < 3; r++) for (i = 0; i < 3000; i++) printf "%x\n%x\n", 4096 + 64 * i, 4096 + 64 * i }' >"$work/far.addr"
run far "$work/far.addr" --machine haswell
"$STRESS_GEN" many-sites "$work/big.pes" 10000 64 || fail "trace_stress_gen many-sites"
start=$(date +%s%N)
run big "$work/big.pes" --machine haswell --simulate
echo "10,000 sites x 64 threads: $(( ($(date +%s%N) - start) / 1000000 )) ms, page $(stat -c %s "$work/big.html") bytes"
# a --diff of two such traces: its JSON lists every row of both (about 120 MB), its page a bounded cut
if [ -z "${PES_SANITIZE:-}" ]; then   # (minutes under a sanitizer)
  "$STRESS_GEN" many-sites "$work/big2.pes" 9000 64 || fail "trace_stress_gen many-sites"
  run bigdiff --diff "$work/big.pes" "$work/big2.pes" --machine haswell --simulate
  echo "--diff of 10,000 and 9,000 sites x 64 threads: JSON $(stat -c %s "$work/bigdiff.json") bytes, page $(stat -c %s "$work/bigdiff.html") bytes"
fi
# (f) annotated source: at -O1 with volatile globals every a[i] / b[i] is one access
if [ -z "${PES_SANITIZE:-}" ]; then   # an instrumented program links the runtime, built with the sanitizer there
cat >"$work/loops.c" <<'C'
#include <stdio.h>
static volatile int a[100], b[20];
int main(void) {
  for (int i = 0; i < 100; i++) a[i] = i; /* FILL */
  long s = 0;
  for (int i = 0; i < 50; i++) s += a[2 * i]; /* SUM */
  for (int i = 0; i < 20; i++) b[i] = a[i]; /* COPY <&> "'' */
  printf("%ld %d\n", s, b[19]);
  return 0;
}
C
"$PES_BIN/pes-clang" -O1 -g "$work/loops.c" -o "$work/loops" || fail "pes-clang loops.c"
"$PES_BIN/pes-collect" -q --full -o "$work/loops.zst" -- "$work/loops" >/dev/null || fail "pes-collect loops"
run loops "$work/loops.zst" --machine haswell --simulate
"$PES_BIN/pes-replay" "$work/loops.zst" --machine haswell --simulate --html "$work/loops2.html" >"$work/with.txt" 2>&1 &&
  "$PES_BIN/pes-replay" "$work/loops.zst" --machine haswell --simulate >"$work/without.txt" 2>&1 ||
  fail "pes-replay loops.zst"
cmp -s "$work/with.txt" "$work/without.txt" || fail "--html changes the text report"
cp "$work/loops.c" "$work/loops.c.orig"
mv "$work/loops.c" "$work/loops.moved.c"
run gone "$work/loops.zst" --machine haswell --simulate
mv "$work/loops.moved.c" "$work/loops.c"
fi

expect_fail "--html $work/no/such/x.html" "$PES_BIN/pes-replay" "$data/gemm40.full.zst" --html "$work/no/such/x.html"
expect_fail "--html $work/no/such/x.html" "$PES_BIN/pes-replay" --diff "$work/full.json" "$work/recorded.json" --html "$work/no/such/x.html"
"$PES_SRC/scripts/report-screenshot.sh" "$work/full.html" "$work/full.png" 1200 2400 || fail "screenshot"

"${PYTHON:-python3}" - "$work" "$PES_SRC/docs" <<'PY' || fail "HTML report checks"
import json, math, os, re, struct, sys, zlib
import html5lib, jsonschema
work, docs = sys.argv[1], sys.argv[2]
diff_schema = json.load(open(f"{docs}/diff.schema.json"))

def diff_cut(d, rows=50, per_name=20):
    """docs/report.md: the first 50 rows of each table ("truncated_rows": the rest), the
    first 20 tables of each name ("truncated_tables": the rest), nothing added if nothing is cut"""
    out = {k: v for k, v in d.items() if k != "tables"}
    kept, tables, dropped = {}, [], 0
    for t in d["tables"]:
        if kept.get(t["name"], 0) >= per_name:
            dropped += 1
            continue
        kept[t["name"]] = kept.get(t["name"], 0) + 1
        if len(t["rows"]) > rows:
            t = dict(t, rows=t["rows"][:rows], truncated_rows=len(t["rows"]) - rows)
        tables.append(t)
    out["tables"] = tables
    if dropped:
        out["truncated_tables"] = dropped
    return out
checked = {"histogram bars": 0, "heatmap cells": 0}

def pointer(doc, ptr):
    for part in ptr.split("/")[1:]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc

def log2_bins(rows):
    if isinstance(rows, dict):   # a full report's histogram: its exact and its log2 rows
        rows = rows["exact"] + rows["log2"]
    bins = {}
    for r in rows:
        if isinstance(r, dict):
            d, c = r["lo"], r["count"]
        elif len(r) == 2:
            d, c = r
        else:
            d, c = r[0], r[2]
        b = 0 if d < 1 else int(d).bit_length()
        bins[b] = bins.get(b, 0) + c
    return {b: c for b, c in bins.items() if c > 0}

SVG = "{http://www.w3.org/2000/svg}"
def check(name, limit=None):
    path = f"{work}/{name}.html"
    raw = open(path, "rb").read()
    if limit:
        assert len(raw) <= limit, f"{name}: {len(raw)} bytes > {limit}"
    text = raw.decode("utf-8")
    # (a) strict HTML5: html5lib raises at the first parse error
    tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(text)
    assert not re.search(r"https?://", text.replace("http://www.w3.org/2000/svg", "")), f"{name}: a URL"
    for el in tree.iter():
        for attr in ("src", "href", "xlink:href", "{http://www.w3.org/1999/xlink}href"):
            v = el.get(attr)
            assert v is None or v.startswith("#"), f"{name}: {el.tag} {attr}={v}"
        assert not (el.tag == "link"), f"{name}: a <link>"
    ids = {el.get("id") for el in tree.iter() if el.get("id")}   # every in-page link lands on an element
    dangling = [a.get("href") for a in tree.iter("a") if a.get("href") and a.get("href")[1:] not in ids]
    assert not dangling, f"{name}: links to no element: {dangling[:5]}"
    # (b) the embedded JSON is --format json's
    scripts = [e for e in tree.iter("script") if e.get("id") == "pes-data"]
    assert len(scripts) == 1 and scripts[0].get("type") == "application/json", f"{name}: no #pes-data"
    embedded = json.loads(scripts[0].text)
    report = json.load(open(f"{work}/{name}.json"))
    if "pes_diff_json" in report:   # a --diff page embeds the documented cut of --format json
        full, report = report, diff_cut(report)
        jsonschema.validate(embedded, diff_schema)
    assert embedded == report, f"{name}: embedded JSON differs from --format json"
    # (c) bars and cells against the JSON
    charts = 0
    for svg in tree.iter(SVG + "svg"):
        kind = svg.get("data-kind")
        if kind == "histogram":
            charts += 1
            ph, base = float(svg.get("data-plot-height")), float(svg.get("data-baseline"))
            for s in range(int(svg.get("data-series"))):
                ptr = svg.get(f"data-source{s}")
                if ptr.endswith(("/histogram/exact", "/histogram/log2")):
                    ptr = ptr.rsplit("/", 1)[0]   # a chart of a histogram draws all its rows
                want = log2_bins(pointer(report, ptr))
                bars = [r for r in svg.iter(SVG + "rect") if r.get("data-series") == str(s)]
                got = {int(r.get("data-bin")): float(r.get("data-count")) for r in bars}
                assert got == {b: float(c) for b, c in want.items()}, f"{name}: {svg.get(f'data-source{s}')}: {got} != {want}"
                src = pointer(report, ptr)
                if isinstance(src, dict):   # every reuse is drawn: the bars sum to accesses - cold
                    drawn = sum(float(r.get("data-count")) for r in bars)
                    assert drawn == src["accesses"] - src["cold"], f"{name}: bars sum to {drawn}, {src['accesses']} - {src['cold']} reuses"
                    checked["histogram totals"] = checked.get("histogram totals", 0) + 1
                top = max(want.values())
                for r in bars:
                    c = want[int(r.get("data-bin"))]
                    h, y = float(r.get("height")), float(r.get("y"))
                    assert abs(h - c / top * ph) < 1e-3, f"{name}: bar {r.get('data-bin')} height {h}, count {c} of {top}"
                    assert abs(y + h - base) < 1e-3, f"{name}: bar off the baseline"
                    checked["histogram bars"] += 1
        elif kind == "mrc":   # the curve's points as the JSON holds them
            ph, base, key = float(svg.get("data-plot-height")), float(svg.get("data-baseline")), svg.get("data-key")
            for g in svg.iter(SVG + "g"):
                curve = pointer(report, g.get("data-source"))
                pts = list(g.iter(SVG + "circle"))
                assert len(pts) == len(curve["points"]) > 0, f"{name}: curve of {len(pts)} points"
                for c, p in zip(pts, curve["points"]):
                    assert float(c.get("data-lines")) == p["size_lines"]
                    got = float(c.get("data-miss-ratio"))
                    assert got == p[key], f"{name}: MRC at {p['size_lines']} lines: {got} != {p[key]}"
                    assert abs(float(c.get("cy")) - (base - got * ph)) < 0.01, f"{name}: MRC point off its value"
                    checked["mrc points"] = checked.get("mrc points", 0) + 1
        elif kind == "heatmap":
            m = pointer(report, svg.get("data-source"))
            n, k = len(m), int(svg.get("data-cells"))
            assert int(svg.get("data-threads")) == n and k == min(n, 32)
            want = [[0] * k for _ in range(k)]
            for i in range(n):
                for j in range(n):
                    want[i * k // n][j * k // n] += m[i][j]
            cells = [float(r.get("data-count")) for r in svg.iter(SVG + "rect") if r.get("data-count") is not None]
            assert cells == [float(x) for row in want for x in row], f"{name}: heatmap {svg.get('data-source')}"
            checked["heatmap cells"] += len(cells)
    return tree, report, charts

def summary(tree):
    card = next(e for e in tree.iter("section") if e.get("id") == "summary")
    dts = [e for e in card.iter() if e.tag in ("dt", "dd")]
    return {dts[i].text: "".join(dts[i + 1].itertext()) for i in range(0, len(dts) - 1, 2) if dts[i].tag == "dt"}
# the summary card: the trace's name as it is, warnings in words
tree, report, _ = check("odd")
card = summary(tree)
assert card["trace"] == report["trace"]["path"] and card["trace"].endswith("a<b>&\"c'.zst"), card
assert card["warnings"].startswith("none"), card["warnings"]
tree, report, _ = check("cut")
assert report["truncated"] is True and "The trace is truncated" in summary(tree)["warnings"], summary(tree)
print("ok: summary card (escaped trace name, truncation warning)")
for name in ("full", "recorded", "sampled", "reuse", "compare", "diff", "far"):
    tree, report, charts = check(name)
    if name == "reuse":   # the sampled histograms: stack distances, reuse times
        want = sum(1 for k, v in [("stack_histogram", report["stack_histogram"])] +
                   [(k2, v2) for d in report.values() if isinstance(d, dict) for k2, v2 in d.items()]
                   if k.endswith("histogram") and isinstance(v, list) and v)
        assert charts == want > 0, f"reuse: {charts} charts, {want} histograms"
        # stated uncertainty: a bar of one row carries that row's 90 % interval, and the
        # figures table the ratios' intervals, as the JSON states them
        rows = [r for d in [report] + [v for v in report.values() if isinstance(v, dict)]
                for k, v in d.items() if k.endswith("histogram") and isinstance(v, list)
                for r in v if isinstance(r, dict) and "share_ci90" in r]
        bars = [b for b in tree.iter(SVG + "rect") if b.get("data-ci90")]
        assert rows and bars, "reuse: no stated intervals"
        for b in bars:
            lo, hi = map(float, b.get("data-ci90").split())
            match = [r for r in rows if r["count"] == float(b.get("data-count"))
                     and abs(r["share_ci90"][0] - lo) <= 1e-6 * max(1, lo) and abs(r["share_ci90"][1] - hi) <= 1e-6 * max(1, hi)]
            assert match and lo <= match[0]["share"] <= hi, (b.get("data-count"), lo, hi)
            assert "90 % interval" in b.find(SVG + "title").text
        # each such bar has its whisker: the interval's ends at lo/share and
        # hi/share of the bar's height above the baseline (clipped at the top)
        drawn = 0
        for svg in tree.iter(SVG + "svg"):
            whiskers = {(w.get("data-series"), w.get("data-bin")): w for w in svg.iter(SVG + "path")
                        if w.get("class") == "ci"}
            if svg.get("data-kind") != "histogram":
                assert not whiskers, svg.get("data-kind")
                continue
            base, top = float(svg.get("data-baseline")), float(svg.get("data-baseline")) - float(svg.get("data-plot-height"))
            # pixels per unit of share: one per series (plot height x total / largest
            # bin), measured on the bars tall enough for their rounded height
            ci_bars = [b for b in svg.iter(SVG + "rect") if b.get("data-ci90")]
            share_of = lambda b: [r["share"] for r in rows if r["count"] == float(b.get("data-count"))][0]
            scale = {}
            for b in ci_bars:
                if float(b.get("height")) >= 1 and share_of(b) > 0:
                    scale.setdefault(b.get("data-series"), float(b.get("height")) / share_of(b))
            for b in ci_bars:
                lo, hi = map(float, b.get("data-ci90").split())
                w = whiskers.pop((b.get("data-series"), b.get("data-bin")))
                nums = [float(x) for x in re.findall(r"-?[0-9.]+", w.get("d"))]
                x, ylo, yhi = nums[0], nums[1], nums[2]
                k = scale[b.get("data-series")]
                assert abs(x - (float(b.get("x")) + float(b.get("width")) / 2)) < 0.02, (x, b.attrib)
                for y, v in ((ylo, lo), (yhi, hi)):
                    assert abs(y - max(top, base - k * v)) < 0.01 * max(1, k * v / 100), (y, v, k, base)
                drawn += 1
            assert not whiskers, f"whiskers without a bar: {list(whiskers)}"
        assert drawn, "no interval whiskers"
        figs = {tr[0].text: "".join(tr[1].itertext()) for tr in (list(t) for t in tree.iter("tr")) if len(tr) == 2}
        ci = report["intra"]["invalidation_ratio_ci90"]
        assert figs["intra.invalidation_ratio_ci90"] == f"[{ci[0]:.6g}, {ci[1]:.6g}]", figs.get("intra.invalidation_ratio_ci90")
    print(f"ok: {name}: parses, JSON embedded, {charts} histograms checked")
# the miss-ratio curves: two charts (fully associative, SDCM), one curve per core count
tree, report, charts = check("full")
mrc = [s for s in tree.iter(SVG + "svg") if s.get("data-kind") == "mrc"]
assert [s.get("data-key") for s in mrc] == ["fully_associative", "sdcm"], [s.get("data-key") for s in mrc]
for s in mrc:
    curves = [g.get("data-source") for g in s.iter(SVG + "g")]
    assert curves == [f"/configs/{i}/miss_ratio_curve" for i in range(len(report["configs"]))], curves
assert "20-way" in mrc[1].find(SVG + "title").text   # haswell's L3, the first shared level
# the fully associative curve against the test's own sum over the CRD histograms (all
# groups): a cache of C lines misses the cold accesses and the distances >= C (log2
# rows [lo, hi, count] start at powers of two, so each lies wholly on one side)
for cfg in report["configs"]:
    curve = cfg["miss_ratio_curve"]
    assert curve["profile"] == "crd" and curve["level"] == 3 and curve["ways"] == 20, curve
    hists = [c["histogram"] for c in cfg["crd"]]
    acc = sum(x["accesses"] for x in hists)
    sizes = [p["size_lines"] for p in curve["points"]]
    assert sizes == [1 << k for k in range(len(sizes))] and sizes[-1] >= 20 * 1024 * 1024 // 64, sizes
    for p in curve["points"]:
        c = p["size_lines"]
        miss = sum(x["cold"] + sum(n for d, n in x["exact"] if d >= c) + sum(n for lo, hi, n in x["log2"] if lo >= c)
                   for x in hists)
        assert abs(p["fully_associative"] - miss / acc) < 1e-8, (c, p, miss / acc)
        assert p["sdcm"] >= 0 and p["sdcm"] <= 1
    assert curve["points"][-1]["fully_associative"] == curve["points"][-1]["sdcm"] or \
        abs(curve["points"][-1]["sdcm"] - curve["points"][-1]["fully_associative"]) < 1e-6
print(f"ok: miss-ratio curves of {len(report['configs'])} core counts, fully associative = own sum over the CRD")
# every PRD and CRD histogram of the full report is drawn
tree, report, charts = check("full")
want = sum(len(c["prd"]) + len(c["crd"]) for c in report["configs"])
assert charts == want, f"full: {charts} histogram charts, {want} histograms"
# --compare: sampled over full, both series
tree, report, _ = check("compare")
two = [s for s in tree.iter(SVG + "svg") if s.get("data-series") == "2"]
assert len(two) == sum(1 for k in report["histograms"] if k.startswith("sampled_")), "compare: overlaid charts"
for svg in two:   # S in the title of the histogram it measures
    key = "s_" + svg.get("data-source0").rsplit("/sampled_", 1)[1]
    if isinstance(report.get(key), (int, float)):
        assert f"S = {report[key]:.4g}" in svg.find(SVG + "title").text, f"compare: {key} not in the chart's title"
# the figures table: every scalar of the report with its value
figs = {tr[0].text: tr[1].text or "" for tr in next(t for t in tree.iter("table") if t.get("id") == "figs").iter("tr") if tr[0].tag == "td"}
def shown(v):
    return "yes" if v is True else "no" if v is False else "\u2014" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)
for k, v in report.items():
    if not isinstance(v, (dict, list)):
        assert figs.get(k) == shown(v), f"compare: figure {k}: {figs.get(k)!r} != {shown(v)!r}"
    elif k != "histograms" and isinstance(v, dict):
        for k2, v2 in v.items():
            if not isinstance(v2, (dict, list)):
                assert figs.get(f"{k}.{k2}") == shown(v2), f"compare: figure {k}.{k2}"
# --diff: A and B bars
tree, report, _ = check("diff")
bars = [s for s in tree.iter(SVG + "svg") if s.get("data-kind") == "diff"]
want = []
for t in report["tables"]:   # A and B of each row: the rank column's values (the first 20 rows)
    if t["name"].rsplit(".", 1)[-1] not in ("groups", "objects", "cache_lines", "sites"):
        continue
    col = t["rank"] if isinstance(t["rank"], str) else "accesses"
    vals = []
    for r in t["rows"][:20]:
        v = {c["column"]: c for c in r["values"]}.get(col, {"a": None, "b": None})
        vals += [v["a"] or 0, v["b"] or 0]
    if vals and max(vals) > 0:
        want.append((t["table"], vals))
assert len(bars) == len(want) > 0, f"diff: {len(bars)} A/B charts for {len(want)} tables"
for svg, (table, vals) in zip(bars, want):
    rects = [r for r in svg.iter(SVG + "rect") if r.get("data-value") is not None]
    assert [float(r.get("data-value")) for r in rects] == [float(x) for x in vals], f"diff: {table}"
    top = max(vals)
    for r, x in zip(rects, vals):
        assert abs(float(r.get("width")) - x / top * 300) < 1e-2, f"diff: bar width of {x} in {table}"
print(f"ok: diff: {len(bars)} A/B charts")
# (e) the large report
tree, report, _ = check("diff", 5 * 1024 * 1024)   # (two small traces: 4 MB of JSON)
assert report.get("truncated_tables", 0) > 0 and any(t.get("truncated_rows") for t in report["tables"]), "diff: nothing cut"
if os.path.exists(f"{work}/bigdiff.html"):
    tree, report, _ = check("bigdiff", 5 * 1024 * 1024)
    assert all(len(t["rows"]) <= 50 for t in report["tables"])
    print(f"ok: the large --diff page under 5 MB, its JSON cut as documented ({report['truncated_tables']} tables "
          f"and {sum(t.get('truncated_rows', 0) for t in report['tables'])} rows left out)")
print("ok: --diff pages under 5 MB")
tree, report, charts = check("big", 5 * 1024 * 1024)
assert report["trace"]["threads"] == 64 and len(report["configs"][0]["sites"]) == 10000
heat = [s for s in tree.iter(SVG + "svg") if s.get("data-kind") == "heatmap"]
assert heat and all(s.get("data-threads") == "64" and s.get("data-cells") == "32" for s in heat)
rows = [t for t in tree.iter("table") if int(t.get("data-rows") or 0) > 50]
assert rows and all(len(list(t.iter("tr"))) == 51 for t in rows), "big: tables not cut at 50 rows"
print("ok:", checked)

# (f) the annotated-source section against the hand counts
def annotated_source():
    src = open(f"{work}/loops.c.orig").read().split("\n")
    hand = {"FILL": 100, "SUM": 50, "COPY": 40}
    def src_rows(tree):
        sec = [t for t in tree.iter("table") if t.get("class") == "src"]
        assert len(sec) == 1, f"{len(sec)} annotated-source tables"
        heads = [th.text for th in sec[0].iter("th")]
        rows = {}
        for tr in sec[0].iter("tr"):
            if tr.get("id"):
                tds = [td for td in tr if td.tag == "td"]
                rows[int(tr.get("data-line"))] = (tr.get("id"), dict(zip(heads, tds)))
        return heads, rows
    for name in ("loops", "gone"):
        tree, report, _ = check(name)
        heads, rows = src_rows(tree)
        assert heads[:2] == ["line", "accesses"] and "L1 misses" in heads and "inval F" in heads and heads[-1] == "source", heads
        for tag, n in hand.items():
            line = next(i + 1 for i, l in enumerate(src) if f"/* {tag}" in l)
            ident, cells = rows[line]
            assert ident == f"src-0-L{line}", ident
            assert int(cells["accesses"].text) == n, f"{name}: line {line} ({tag}): {cells['accesses'].text} accesses, by hand {n}"
            text = "".join(cells["source"].itertext())
            if name == "loops":
                assert text == src[line - 1], f"line {line}: {text!r} != {src[line - 1]!r}"
            else:
                assert text == "", text
        # every access and every L1 miss of the run is on a listed line (the program is small)
        sim = report["configs"][0]["simulation"]["levels"][0]
        num = lambda td: 0 if td.text == "." else int(td.text)
        assert sum(num(c["accesses"]) for _, c in rows.values()) == report["trace"]["accesses"]
        assert sum(num(c["L1 misses"]) for _, c in rows.values()) == sim["accesses"] - sim["hits"]
        # every in-page link lands on an element; a table's file link on its line's row
        ids = {el.get("id") for el in tree.iter() if el.get("id")}
        links = [a for a in tree.iter("a") if a.get("href")]
        assert links and all(a.get("href")[1:] in ids for a in links), [a.get("href") for a in links if a.get("href")[1:] not in ids]
        groups = report["configs"][0]["groups"]
        file_links = [a.get("href") for a in links if a.text == groups[0]["file"]]
        assert file_links[:len(groups)] == [f"#src-0-L{g['line']}" for g in groups], file_links
        body = "".join(tree.itertext())
        assert ("The source file cannot be read here" in body) == (name == "gone"), name
    print("ok: annotated source: FILL 100, SUM 50, COPY 40 with their text; links land; unreadable source said so")
if os.path.exists(f"{work}/loops.html"):
    annotated_source()
else:
    print("skip: (f) annotated source: no instrumented program in a sanitizer build")

# (d) the screenshot: a PNG of the asked size, not blank
png = open(f"{work}/full.png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, hdr = 8, b"", None
while pos < len(png):
    n, typ = struct.unpack(">I4s", png[pos:pos + 8])
    body = png[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
assert (w, h) == (1200, 2400), f"screenshot {w}x{h}"
assert depth == 8 and ctype in (2, 6), f"PNG colour type {ctype}"
bpp = 3 if ctype == 2 else 4
raw, stride, prev, pixels = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):   # undo the PNG row filters
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0:
        pixels.extend(line[i] for i in range(0, stride, bpp * 4))   # red channel of a sample
mean = sum(pixels) / len(pixels)
var = sum((p - mean) ** 2 for p in pixels) / len(pixels)
dark = sum(1 for p in pixels if p < 128) / len(pixels)
assert var > 100 and dark > 0.005, f"screenshot blank: variance {var:.1f}, dark {dark:.4f}"
print(f"ok: screenshot {w}x{h}, red-channel variance {var:.0f}, {100 * dark:.1f}% dark pixels")
PY
echo "PASS"
