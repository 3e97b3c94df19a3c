#!/bin/sh
# heap_events.sh BIN_DIR SOURCE_DIR — heap blocks in a sampled trace of an
# allocation-heavy program (heap_events_prog.c): the events stay about one
# per sample (the collector writes no event per allocation), and the samples
# are attributed to the same data objects, in the same shares, as the
# accesses of the full trace of the same run (the truth).
set -u
bin=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/pes-heap-events.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "heap_events: FAIL: $*" >&2; exit 1; }
ulimit -t 120
"$bin/pes-clang" -O1 -g "$src/heap_events_prog.c" -o prog || fail "pes-clang"
./prog >plain.txt || fail "plain run"
"$bin/pes-collect" --mode samples --backend soft --period 500 --seed 1 -o s.zst \
    --full --full-output f.zst -- ./prog >out.txt 2>err.txt || fail "pes-collect: $(cat err.txt)"
cmp -s out.txt plain.txt || fail "the program's output changed"
# "pes-collect: s.zst: 240 KiB, 1 thread, 19459 events: 19457 samples, ..."
line=$(grep "s.zst: .* events: .* samples" err.txt) || fail "no summary line: $(cat err.txt)"
events=$(echo "$line" | sed 's/.* \([0-9]*\) events: .*/\1/')
samples=$(echo "$line" | sed 's/.* events: \([0-9]*\) samples.*/\1/')
[ "$samples" -ge 2000 ] || fail "$samples samples, expected thousands"
# 256,000 allocations and as many frees: an event each would be 26 per sample
[ $((events * 2)) -le $((samples * 3)) ] || fail "$events events for $samples samples (more than 1.5 per sample)"
"$bin/pes-replay" --compare s.zst f.zst --by object --format json -o cmp.json || fail "pes-replay --compare"
"$bin/pes-replay" s.zst --by object --format json -o s.json || fail "pes-replay"
"${PYTHON:-python3}" - cmp.json s.json <<'PY' || exit 1
import json, sys

def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None:
                return r
    return None

objs = find(json.load(open(sys.argv[1])), 'objects')
rows = {o['key']: o for o in objs}
def fail(m):
    print('heap_events: FAIL: ' + m, file=sys.stderr)
    sys.exit(1)
node = [k for k in rows if k.startswith('heap@heap_events_prog.c:') and 'make_node' in k]
buf = [k for k in rows if k.startswith('heap@heap_events_prog.c:') and 'make_buf' in k]
if not node or not buf:
    fail('no heap object of make_node or make_buf: %s' % sorted(rows))
for k, o in rows.items():
    if o['samples'] and not o['accesses']:
        fail('%s: %d samples, but no access in the full trace (names differ)' % (k, o['samples']))
    # 19,000 samples: a share's standard error is below 0.4 points
    if abs(o['sample_share'] - o['access_share']) > 0.02:
        fail('%s: sampled share %.4f, full %.4f' % (k, o['sample_share'], o['access_share']))
heap = sum(o['sample_share'] for k, o in rows.items() if k.startswith('heap@'))
if heap < 0.8:
    fail('only %.2f of the samples in heap objects' % heap)
# the sampled trace alone names the same objects with the same samples
groups = {g['label'] if 'label' in g else g.get('key'): g for g in find(json.load(open(sys.argv[2])), 'groups')}
for k in node + buf:
    if not rows[k]['samples']:
        continue
    g = [x for x in groups.values() if x.get('samples') == rows[k]['samples']]
    if not g:
        fail('%s: %d samples in --compare, not in the sampled report' % (k, rows[k]['samples']))
print('heap_events: shares sampled/full: %s' %
      ', '.join('%s %.3f/%.3f' % (k, o['sample_share'], o['access_share']) for k, o in sorted(rows.items())))
PY
echo "heap_events: ok: $events events, $samples samples"
