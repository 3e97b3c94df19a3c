#!/bin/sh
# callpath_run.sh BIN_DIR SOURCE_DIR — sampled call paths (issue 28): the soft
# backend gives each sample its call stack, and the sampled report splits
# the samples of callpath_prog's hot helper over its two call paths in the
# proportion the program fixes (3:1), within a binomial bound; the paths are
# symbolized with the lines of the calls, read from the source.
set -u
bin=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/pes-callpath.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "callpath: FAIL: $*" >&2; exit 1; }
ulimit -t 120
"$bin/pes-clang" -O1 -g "$src/callpath_prog.c" -o prog || fail "pes-clang"
"$bin/pes-collect" --mode samples --backend soft --period 10007 --seed 3 -q -o s.zst \
    -- ./prog 50000 >out.txt 2>err.txt || fail "pes-collect: $(cat err.txt)"
grep -q "^callpath_prog: " out.txt || fail "the program's output: $(cat out.txt)"
"$bin/pes-replay" s.zst --by site --top 50 --format json -o s.json || fail "pes-replay --format json"
"$bin/pes-replay" s.zst --by callpath -o paths.txt || fail "pes-replay --by callpath"
"$bin/pes-replay" s.zst -o report.txt || fail "pes-replay"
# without stacks: no call paths anywhere, and --by callpath has no rows
"$bin/pes-collect" --mode samples --backend soft --period 10007 --seed 3 --no-stacks -q \
    -o n.zst -- ./prog 2000 >/dev/null 2>err.txt || fail "pes-collect --no-stacks: $(cat err.txt)"
"$bin/pes-replay" n.zst --format json -o n.json || fail "pes-replay (no stacks)"
grep -q '"callpaths"' n.json && fail "call paths in a trace taken with --no-stacks"
# interning: each ip sequence is written once (about 2000 samples, 2 paths
# of helper and main's own), and every sample names a written stack
"$bin/pes-dump" s.zst >dump.txt || fail "pes-dump"
grep "^alloc_site [0-9]* *callstack " dump.txt | sed 's/^alloc_site [0-9]* *//' >stacks.txt
n=$(wc -l <stacks.txt)
{ [ "$n" -ge 2 ] && [ "$n" -le 8 ]; } || fail "$n call stacks written, expected 2 to 8"
[ -z "$(sort stacks.txt | uniq -d)" ] || fail "an ip sequence written twice: $(sort stacks.txt | uniq -d)"
grep "^T0 sample " dump.txt | grep -v " stack=[0-9]*$" | head -1 | grep -q . &&
    fail "a sample without its call stack: $(grep '^T0 sample ' dump.txt | grep -v ' stack=' | head -1)"
# a full trace of the same program: its call edges give the same two paths
# (the call sites of solve_a and solve_b, main's calls of them) by line
"$bin/pes-collect" --full -q -o f.zst -- ./prog 10 >/dev/null 2>&1 || fail "pes-collect --full"
"$bin/pes-replay" f.zst --by callpath --format json -o f.json || fail "--by callpath on a full trace"
grep -q 'solve_a (callpath_prog.c:[0-9]*) > helper' f.json && grep -q 'solve_b (callpath_prog.c:[0-9]*) > helper' f.json ||
    fail "--by callpath on a full trace: no paths through solve_a and solve_b: $(grep -o '"path":"[^"]*"' f.json | head -5)"
line() { grep -n "/\* $1 \*/" "$src/callpath_prog.c" | cut -d: -f1; }
"${PYTHON:-python3}" - s.json paths.txt report.txt "$(line helper-load)" "$(line call-a)" \
    "$(line call-b)" "$(line main-a)" "$(line main-b)" <<'PY' || exit 1
import json, math, sys

def fail(m):
    print('callpath: FAIL: ' + m, file=sys.stderr)
    sys.exit(1)

rep = json.load(open(sys.argv[1]))
paths_txt, report_txt = open(sys.argv[2]).read(), open(sys.argv[3]).read()
load, call_a, call_b, main_a, main_b = (int(x) for x in sys.argv[4:9])
f = 'callpath_prog.c'
want_a = 'main (%s:%d) > solve_a (%s:%d) > helper' % (f, main_a, f, call_a)
want_b = 'main (%s:%d) > solve_b (%s:%d) > helper' % (f, main_b, f, call_b)

def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, key)
            if r is not None:
                return r
    return None

rows = [g for g in find(rep, 'groups') if g.get('line') == load and g.get('function') == 'helper']
if len(rows) != 1:
    fail('expected one site row of helper at line %d: %s' % (load, [g.get('key') for g in find(rep, 'groups')]))
row = rows[0]
paths = {p['path']: p['samples'] for p in row.get('callpaths', [])}
if set(paths) != {want_a, want_b}:
    fail('paths %s, expected %s and %s' % (sorted(paths), want_a, want_b))
a, b = paths[want_a], paths[want_b]
n = a + b
if n != row['samples']:
    fail('%d of the row\'s %d samples have a path' % (n, row['samples']))
if n < 1000:
    fail('only %d samples of helper' % n)
# 3/4 of helper's loads run under solve_a: a binomial share, 4 standard errors
p = 0.75
bound = 4 * math.sqrt(p * (1 - p) / n)
if abs(a / n - p) > bound:
    fail('solve_a path has %d of %d samples (%.4f), expected %.2f +- %.4f' % (a, n, a / n, p, bound))
for want, k in ((want_a, a), (want_b, b)):
    share = [q['share'] for q in row['callpaths'] if q['path'] == want][0]
    if abs(share - k / row['samples']) > 1e-5:  # written with 6 digits
        fail('share of %s: %g, expected %g' % (want, share, k / row['samples']))
    if want not in paths_txt:
        fail('--by callpath does not list %s:\n%s' % (want, paths_txt))
    if want not in report_txt:
        fail('the text report does not list %s under helper' % want)
print('callpath: helper %d samples: solve_a %d (%.4f), solve_b %d; bound %.4f' % (n, a, a / n, b, bound))
PY
