#!/usr/bin/env bash
# --csv-dir DIR (issue 12, item 9: CSV for every table): for a full trace
# (recorded and mimicked cores, with the simulation), a sampled trace, a
# --compare report and a --diff, every table of the JSON report (every array
# of objects, and the histogram bins and communication matrices the report
# stores as arrays of arrays) has its file with as many rows as the JSON has,
# each row holding the JSON's values (and its parent rows' keys); the header
# names units; fields are RFC 4180 (a trace path with a comma and a quote);
# the text report lists as many rows.
. "$(dirname "$0")/common.sh"
data=$PES_SRC/tests/data
cp "$data/gemm40.full.zst" "$work/g,\"q\".zst"   # summary.csv quotes it
run() {   # NAME ARGS...: the JSON report and the CSV directory of pes-replay ARGS
  local name=$1; shift
  (cd "$data" && "$PES_BIN/pes-replay" "$@" --format json -o "$work/$name.json" --csv-dir "$work/$name")
}
run full "$work/g,\"q\".zst" --machine haswell --simulate --top 1000
run cores gemm40.full.zst --machine haswell --cores 1,2 --simulate --top 1000
run sampled fs.comm.zst --top 1000
run compare gemm40.reuse.zst --compare gemm40.reuse_full.zst
run diff --diff gemm40.full.zst false_sharing.full.zst --machine haswell --simulate
(cd "$data" && "$PES_BIN/pes-replay" "$work/g,\"q\".zst" --machine haswell --simulate --top 1000) >"$work/full.txt"

"${PYTHON:-python3}" - "$work" <<'PY' || fail "CSV tables"
import csv, glob, json, math, os, re, sys
work = sys.argv[1]
# arrays of arrays that are tables (tables.c declares their columns)
TUPLES = {"histogram.exact": ["distance", "count"], "histogram.log2": ["lo", "hi", "count"]}
MATRICES = ("communication.all", "communication.true", "communication.false", "comm.true", "comm.false")

def tuple_rows(name, v):
    if not isinstance(v, list) or not v or not all(isinstance(e, list) for e in v):
        return None
    for t, cols in TUPLES.items():
        if name == t or name.endswith("." + t):
            return [dict(zip(cols, e)) for e in v]
    for m in MATRICES:
        if name == m or name.endswith("." + m):
            return [{"thread_a": i, "thread_b": j, "transfers": x} for i, r in enumerate(v) for j, x in enumerate(r)]
    return None

def flatten(obj):
    """(columns, nested tables) of a row, the layout tables.h describes"""
    cols, nested = {}, []
    def walk(name, v):
        rows = tuple_rows(name, v)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{name}.{k}" if name else k, x)
        elif rows is not None:
            nested.append((name, rows))
        elif isinstance(v, list) and any(isinstance(e, dict) for e in v):
            nested.append((name, v))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{name}[{i}]", x)
        else:
            cols[name] = v
    walk("", obj)
    return cols, nested

def expected(report):
    """table name -> list of (row columns, ancestors' columns)"""
    tables = {}
    def table(name, rows, ancestors):
        for r in rows:
            if not isinstance(r, dict):
                continue
            cols, nested = flatten(r)
            tables.setdefault(name, []).append((cols, ancestors))
            for n, sub in nested:
                table(f"{name}.{n}", sub, ancestors + [cols])
    cols, nested = flatten(report)
    for n, sub in nested:
        table(n, sub, [])
    return cols, tables

def same(cell, v):
    if v is None:
        return cell == ""
    if isinstance(v, bool):
        return cell == ("true" if v else "false")
    if isinstance(v, (int, float)):
        return cell != "" and float(cell) == v
    return cell == v

for name in ("full", "cores", "sampled", "compare", "diff"):
    report = json.load(open(os.path.join(work, name + ".json")))
    summary, tables = expected(report)
    d = os.path.join(work, name)
    files = {os.path.basename(f)[:-4] for f in glob.glob(os.path.join(d, "*.csv"))}
    want = {t for t, rows in tables.items() if rows}
    assert files == want | {"summary"}, f"{name}: files {sorted(files ^ (want | {'summary'}))} differ"
    # summary.csv: path, value, unit of every scalar outside tables
    with open(os.path.join(d, "summary.csv"), newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["path", "value", "unit"]
    assert {r[0] for r in rows[1:]} == set(summary), f"{name}: summary paths"
    for p, v, u in rows[1:]:
        assert same(v, summary[p]), f"{name}: summary {p}: {v!r} != {summary[p]!r}"
    for t in want:
        raw = open(os.path.join(d, t + ".csv"), newline="").read()
        assert raw.endswith("\r\n"), f"{t}: CRLF line ends (RFC 4180)"
        rows = list(csv.reader(raw.splitlines(keepends=True)))
        header = [re.sub(r" \[[^]]*\]$", "", h) for h in rows[0]]
        assert len(set(header)) == len(header), f"{name}/{t}: repeated column"
        assert len(rows) - 1 == len(tables[t]), f"{name}/{t}: {len(rows) - 1} rows, JSON {len(tables[t])}"
        for cells, (cols, ancestors) in zip(rows[1:], tables[t]):
            got = dict(zip(header, cells))
            for c, v in cols.items():
                assert c in got and same(got[c], v), f"{name}/{t}: {c}: {got.get(c)!r} != {v!r}"
            for c in header:
                if c in cols:
                    continue
                # an element of one of the row's own arrays that this row is too short for
                if "[" in c and any(k.startswith(c.split("[")[0] + "[") for k in cols):
                    assert got[c] == "", f"{name}/{t}: {c}: {got[c]!r}, the row has no such element"
                    continue
                # a parent's key column (named after its table when the row has one of that name)
                base = c.rsplit(".", 1)[-1] if c not in sum(([*a] for a in ancestors), []) else c
                owners = [a for a in ancestors if base in a or c in a]
                if not owners:
                    assert got[c] == "", f"{name}/{t}: {c} is neither the row's nor a parent's"
                    continue
                a = owners[-1]
                assert same(got[c], a.get(c, a.get(base))), f"{name}/{t}: parent key {c}"
    print(f"{name}: {len(want)} tables, {sum(len(v) for v in tables.values())} rows, values equal the JSON's")

# units in the header rows
h = open(os.path.join(work, "full", "configs.simulation.sites.csv")).readline()
assert "accesses [count]" in h and "invalidations.false [count]" in h, h
h = open(os.path.join(work, "full", "machine.levels.csv")).readline()
assert "size [bytes]" in h and "line [bytes]" in h, h
# RFC 4180 quoting: the trace's path holds a comma and a quote
raw = open(os.path.join(work, "full", "summary.csv"), newline="").read()
assert '"' + os.path.join(work, 'g,""q"".zst') + '"' in raw, "quoted path"
# the text report lists as many rows: "Top N sites by ..." and its N rows
txt = open(os.path.join(work, "full.txt")).read()
for title, table in (("line accesses", "configs.groups"), ("invalidations", "configs.simulation.groups")):
    # title, column names, units row, then the rows
    m = re.search(rf"Top (\d+) source lines by {title}\n.*\n.*\n((?:  \S.*\n)+)", txt)
    assert m, title
    n_csv = sum(1 for _ in open(os.path.join(work, "full", table + ".csv"))) - 1
    listed = [l for l in m.group(2).splitlines() if not l.startswith("  (")]
    assert int(m.group(1)) == n_csv == len(listed), (title, m.group(1), n_csv, len(listed))
print("csv ok")
PY
