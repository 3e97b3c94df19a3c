#!/bin/sh
# Regions of interest (pes/roi.h), --skip and --max-accesses: programs built
# by pes-clang whose access counts are known from their source (roi_prog.c,
# roi_omp.c), checked in the trace with pes-dump and pes-replay.
# usage: roi_run.sh SCENARIO BIN_DIR WORK_DIR SRC_DIR
set -u
scenario=$1
bin=$2
work=$3/roi.$scenario
src=$4
fail() { echo "FAIL roi.$scenario: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
inc=$(dirname "$(dirname "$src")")/../collector/include   # only for the plain build
flags="-O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops"
n=1000 m=300
# access records in the trace (pes-dump --stats: records whose id is a site)
accesses() { "$bin/pes-dump" --stats "$1" >stats.txt || fail "pes-dump --stats $1"
             sed -n 's/^records  access \([0-9]*\) .*/\1/p' stats.txt; }
# the address of the first / last access record
first_addr() { "$bin/pes-dump" "$1" >dump.txt || fail "pes-dump $1"
               awk '$2 == "access" { print $3; exit }' dump.txt; }
last_addr() { "$bin/pes-dump" "$1" >dump.txt || fail "pes-dump $1"
              awk '$2 == "access" { a = $3 } END { print a }' dump.txt; }
# a + i * 8, as pes-dump prints addresses
elem() { printf '0x%x' $(($1 + $2 * 8)); }
# a JSON report validates against docs/NAME.schema.json
validate() { "${PYTHON:-python3}" - "$1" "$(dirname "$(dirname "$src")")/../docs/$2.schema.json" <<'PY' || fail "$1 does not match $2.schema.json"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
}
collect() { "$bin/pes-collect" --full -q -o t.zst --force "$@" >out.txt 2>err.txt ||
            fail "pes-collect $*: $(cat err.txt)"; }

case $scenario in
prog)
    "$bin/pes-clang" $flags "$src/roi_prog.c" -o roi_prog || fail "pes-clang"
    collect ./roi_prog $n $m
    base=$(sed -n 's/^a=\(0x[0-9a-f]*\) .*/\1/p' out.txt)
    grep -q "s=44850$" out.txt || fail "program output: $(cat out.txt)"
    # inside: the m loads of the second loop, nothing else
    [ "$(accesses t.zst)" = $m ] || fail "region: $(cat stats.txt)"
    [ "$(first_addr t.zst)" = "$(elem "$base" 0)" ] || fail "first access $(first_addr t.zst)"
    [ "$(last_addr t.zst)" = "$(elem "$base" $((m - 1)))" ] || fail "last access"
    "$bin/pes-dump" t.zst | grep -q '^config    roi=markers$' || fail "config has no roi=markers"
    "$bin/pes-replay" t.zst --machine haswell >rep.txt || fail "pes-replay"
    grep -q "^  trace     full trace, 1 thread: $m accesses" rep.txt || fail "replay: $(head -4 rep.txt)"
    grep -q '^  region    region of interest (pes_roi_begin/end)$' rep.txt || fail "no region line"
    "$bin/pes-replay" t.zst --machine haswell --format json >rep.json || fail "pes-replay --format json"
    validate rep.json replay
    [ "$(jq -r .trace.region rep.json)" = "region of interest (pes_roi_begin/end)" ] || fail "JSON trace.region"
    # --no-roi: argv[1], argv[2], n stores, m loads, n loads + n stores
    collect --no-roi ./roi_prog $n $m
    [ "$(accesses t.zst)" = $((2 + n + m + 2 * n)) ] || fail "--no-roi: $(cat stats.txt)"
    "$bin/pes-dump" t.zst | grep -q '^config    roi=ignored$' || fail "config has no roi=ignored"
    "$bin/pes-replay" t.zst --machine haswell >rep.txt || fail "pes-replay"
    grep -q '^  region' rep.txt && fail "--no-roi: a region line"
    # pes-collect's summary says what was left out
    "$bin/pes-collect" --full -o t.zst --force --skip 5 ./roi_prog $n $m >/dev/null 2>err.txt || fail "pes-collect"
    grep -q "^pes-collect: t.zst: .*; region of interest only, first 5 accesses per thread skipped$" err.txt ||
        fail "summary: $(cat err.txt)"
    echo "ok: region, --no-roi"
    ;;
nest)
    # 5 regions, each entered twice (nested) around 2 m loads; n stores
    # outside before each (n > 16384: the main thread goes idle between regions)
    "$bin/pes-clang" $flags "$src/roi_nest.c" -o roi_nest || fail "pes-clang"
    collect ./roi_nest 20000 $m 5
    [ "$(accesses t.zst)" = $((5 * 2 * m)) ] || fail "nested, repeated: $(cat stats.txt)"
    "$bin/pes-dump" t.zst >dump.txt || fail "pes-dump"
    [ "$(grep -c ' access .*roi_nest\.c:14:' dump.txt)" = 0 ] || fail "accesses outside"
    [ "$(grep -c ' access .*roi_nest\.c:\(18\|21\):' dump.txt)" = $((5 * 2 * m)) ] || fail "accesses inside"
    collect --max-accesses 7 ./roi_nest 20000 $m 5
    [ "$(accesses t.zst)" = 7 ] || fail "--max-accesses 7 over 5 regions: $(cat stats.txt)"
    collect --skip $((3 * 2 * m + 5)) ./roi_nest 20000 $m 5
    [ "$(accesses t.zst)" = $((2 * 2 * m - 5)) ] || fail "--skip across regions: $(cat stats.txt)"
    echo "ok: nested and repeated regions"
    ;;
skip)
    "$bin/pes-clang" $flags "$src/roi_prog.c" -o roi_prog || fail "pes-clang"
    collect --skip 100 ./roi_prog $n $m
    base=$(sed -n 's/^a=\(0x[0-9a-f]*\) .*/\1/p' out.txt)
    [ "$(accesses t.zst)" = $((m - 100)) ] || fail "--skip 100: $(cat stats.txt)"
    [ "$(first_addr t.zst)" = "$(elem "$base" 100)" ] || fail "--skip 100: first access"
    collect --max-accesses 50 ./roi_prog $n $m
    base=$(sed -n 's/^a=\(0x[0-9a-f]*\) .*/\1/p' out.txt)
    [ "$(accesses t.zst)" = 50 ] || fail "--max-accesses 50: $(cat stats.txt)"
    [ "$(last_addr t.zst)" = "$(elem "$base" 49)" ] || fail "--max-accesses 50: last access"
    collect --skip 100 --max-accesses 50 ./roi_prog $n $m
    base=$(sed -n 's/^a=\(0x[0-9a-f]*\) .*/\1/p' out.txt)
    [ "$(accesses t.zst)" = 50 ] || fail "--skip 100 --max-accesses 50: $(cat stats.txt)"
    [ "$(first_addr t.zst)" = "$(elem "$base" 100)" ] || fail "skip+max: first"
    [ "$(last_addr t.zst)" = "$(elem "$base" 149)" ] || fail "skip+max: last"
    "$bin/pes-replay" t.zst --machine haswell >rep.txt || fail "pes-replay"
    grep -q '^  region    region of interest (pes_roi_begin/end), first 100 accesses per thread skipped, at most 50 accesses per thread$' rep.txt ||
        fail "region line: $(grep region rep.txt)"
    # the whole run: 2 argv loads, then a[0..n) stores: the 4th access is a[1]
    collect --no-roi --skip 3 --max-accesses 1000 ./roi_prog $n $m
    base=$(sed -n 's/^a=\(0x[0-9a-f]*\) .*/\1/p' out.txt)
    [ "$(accesses t.zst)" = 1000 ] || fail "--no-roi --skip 3 --max 1000: $(cat stats.txt)"
    [ "$(first_addr t.zst)" = "$(elem "$base" 1)" ] || fail "--no-roi --skip 3: first access"
    collect --skip $((m + 1)) ./roi_prog $n $m
    [ "$(accesses t.zst)" = 0 ] || fail "--skip beyond the region: $(cat stats.txt)"
    grep -q "s=44850$" out.txt || fail "the program did not run on unchanged"
    # refused without a full trace
    "$bin/pes-collect" --mode samples --skip 3 ./roi_prog 1 1 >/dev/null 2>err.txt && fail "--skip with --mode alone accepted"
    grep -q -- '--skip: only with --full' err.txt || fail "message: $(cat err.txt)"
    "$bin/pes-collect" --full --max-accesses 0 ./roi_prog 1 1 >/dev/null 2>err.txt && fail "--max-accesses 0 accepted"
    grep -q -- "--max-accesses: expected an integer from 1 to 18446744073709551615, got '0'" err.txt ||
        fail "message: $(cat err.txt)"
    echo "ok: --skip, --max-accesses"
    ;;
omp)
    "$bin/pes-clang" $flags -fopenmp "$src/roi_omp.c" -o roi_omp || fail "pes-clang"
    OMP_NUM_THREADS=3 collect ./roi_omp 100000 30000
    grep -q "n=100000 b1=3$" out.txt || fail "program output: $(cat out.txt)"
    "$bin/pes-dump" t.zst >dump.txt || fail "pes-dump"
    # a[] and b[] inside: 30000 loads and 30000 stores, all at line 14, none
    # of the loops outside (lines 10 and 18)
    inside=$(grep -c ' access .*roi_omp\.c:17:' dump.txt)
    [ "$inside" = 60000 ] || fail "accesses at line 17: $inside"
    outside=$(grep -c ' access .*roi_omp\.c:\(13\|21\):' dump.txt)
    [ "$outside" = 0 ] || fail "accesses outside the region: $outside"
    threads=$(grep -c '^thread ' dump.txt)
    [ "$threads" = 3 ] || fail "threads: $threads"
    echo "ok: OpenMP loop inside the region"
    ;;
sampled)
    "$bin/pes-clang" $flags "$src/roi_prog.c" -o roi_prog || fail "pes-clang"
    "$bin/pes-collect" --mode samples --backend soft --period 1 -q -o s.zst --force ./roi_prog $n $m \
        >out.txt 2>err.txt || fail "pes-collect: $(cat err.txt)"
    "$bin/pes-dump" s.zst >dump.txt || fail "pes-dump"
    # period 1: every access of the region is a sample, none outside
    [ "$(grep -c ' sample .*roi_prog\.c:17:' dump.txt)" = $m ] || fail "samples in the region"
    [ "$(grep -c ' sample ' dump.txt)" = $m ] || fail "samples outside the region"
    "$bin/pes-replay" s.zst --machine haswell >rep.txt || fail "pes-replay"
    grep -q '^region: region of interest (pes_roi_begin/end)$' rep.txt || fail "no region line: $(head -3 rep.txt)"
    "$bin/pes-replay" s.zst --machine haswell --format json >rep.json || fail "pes-replay --format json"
    validate rep.json sampled
    [ "$(jq -r .region rep.json)" = "region of interest (pes_roi_begin/end)" ] || fail "JSON region"
    echo "ok: sampled trace"
    ;;
plain)
    # without pes-clang the header compiles to nothing: no pes symbol, no runtime
    cc=$("$bin/pes-clang" --pes-print-config | sed -n 's/^compiler=//p')
    "$cc" $flags -I"$inc" "$src/roi_prog.c" -o roi_plain || fail "$cc"
    nm roi_plain | grep -q pes && fail "pes symbols in a plain build: $(nm roi_plain | grep pes)"
    ldd roi_plain | grep -q pes-rt && fail "linked to the runtime"
    ./roi_plain $n $m >out.txt || fail "run"
    grep -q "s=44850$" out.txt || fail "output: $(cat out.txt)"
    echo "ok: plain clang"
    ;;
progress)
    # pes-collect: nothing while the program runs; after it, the line of the
    # runtime finishing the trace (pes/progress.h) only on a terminal or when
    # forced, and then erased; the program's output is the same either way
    "$bin/pes-clang" $flags "$src/roi_prog.c" -o roi_prog || fail "pes-clang"
    big="--full --no-roi --zstd-level 19 --writers 1 -o p.zst --force ./roi_prog 100000 100000"
    # shellcheck disable=SC2086  # words
    "$bin/pes-collect" $big >quiet.out 2>quiet.err || fail "pes-collect"
    grep -q "$(printf '\r')" quiet.err && fail "a progress line on a pipe: $(od -c quiet.err | head -3)"
    # shellcheck disable=SC2086
    PES_PROGRESS=always "$bin/pes-collect" $big >forced.out 2>forced.err || fail "pes-collect (forced)"
    sed 's/a=0x[0-9a-f]* //' quiet.out >q && sed 's/a=0x[0-9a-f]* //' forced.out >f
    cmp -s q f || fail "the program's output changed with the progress line"
    tr '\r' '\n' <forced.err >lines
    grep -Eq '^p\.zst: \[[#.]{20}\] +[0-9]+% [0-9.]+ M records/s' lines || fail "no progress line: $(cat lines)"
    # the line comes after the program's output and is erased before the summary
    grep -q "^pes-collect: p.zst: .* records" lines || fail "no summary: $(cat lines)"
    # shellcheck disable=SC2086
    PES_PROGRESS=always "$bin/pes-collect" -q $big >/dev/null 2>forced_q.err || fail "pes-collect -q"
    [ -s forced_q.err ] && fail "-q: stderr not empty: $(od -c forced_q.err | head -3)"
    # pes-dump --stats: the same line, the same output
    "$bin/pes-dump" --stats p.zst >stats1 2>stats1.err || fail "pes-dump --stats"
    grep -q "$(printf '\r')" stats1.err && fail "pes-dump: a progress line on a pipe"
    PES_PROGRESS=always "$bin/pes-dump" --stats p.zst >stats2 2>stats2.err || fail "pes-dump --stats (forced)"
    cmp -s stats1 stats2 || fail "pes-dump --stats output changed with the progress line"
    tr '\r' '\n' <stats2.err | grep -Eq '^p\.zst: \[[#.]{20}\] +[0-9]+% [0-9.]+ M records/s' ||
        fail "pes-dump: no progress line: $(od -c stats2.err | head)"
    # on a terminal (script(1)), a collection that finishes within a second draws nothing
    script -qec "'$bin/pes-collect' -o t.zst --force --full ./roi_prog 10 10 >/dev/null" /dev/null >tty.txt ||
        fail "under script: exit $?"
    grep -q 'records/s' tty.txt && fail "a short run drew a progress line: $(od -c tty.txt | head -3)"
    grep -q 'pes-collect: t.zst' tty.txt || fail "under script: no summary: $(cat tty.txt)"
    echo "ok: progress lines of pes-collect and pes-dump --stats"
    ;;
*) fail "unknown scenario" ;;
esac
exit 0
