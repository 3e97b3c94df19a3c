#!/bin/sh
# count_run.sh SCENARIO BIN_DIR SOURCE_DIR [VECTOR_FLAGS] — exact load/store
# counts through the real pass (rt_abi.h two-clone contract).
#   counts:  count_prog / count_cxx scenarios with hand-derived counts: in every
#            mode (full, samples, reuse, reuse-shared, comm) the totals of two
#            runs (R = 10 and 30) differ by 20 x the hand count, and each mode's
#            totals equal the full trace's; stdout and exit status unchanged.
#   vector:  count_vec (run-time gather lanes, masked stores): every sampling
#            mode's totals equal the full trace's.
#   handler: handler_prog: a SIGALRM handler's accesses, also those that
#            interrupt the runtime, are all in the full trace (exact difference
#            of a run with and one without the timer); no mode hangs.
#   switch:  switch_prog, ASLR off: every load sample names (by its load count)
#            the access that the full trace of the same program has at that
#            position: same address and site.
set -u
scenario=$1
bin=$2
src=$3
vflags=${4:-}
collect="$bin/pes-collect"
tag=counts
. "$src/../collector/scenario_common.sh"

MODES="samples reuse reuse-shared comm"

# totals TRACE: "loads stores" of thread 0 (sampled: TOTALS event; full: footer)
totals() {
    "$bin/pes-dump" "$1" | awk '
        /^T0 totals/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "loads") l = kv[2]; if (kv[1] == "stores") s = kv[2] } found = 1 }
        /^  T0 records/ { l = $5; s = $7; found = 1 }
        END { if (!found) exit 1; print l, s }' || fail "no totals in $1"
}

# measure PROG ARGS...: checks every mode against the full trace, prints "loads stores"
measure() {
    "$@" >plain.txt 2>&1 || fail "plain run of $*"
    run 0 "$collect" --full -q --force -o f.zst -- "$@"
    cmp -s out.txt plain.txt || fail "stdout changed under --full: $(cat out.txt)"
    full=$(totals f.zst)
    # period 7: the recording clone runs often (switches in and out); 100003:
    # the check clone counts almost everything
    for m in $MODES; do
        for p in 7 100003; do
            run 0 "$collect" --mode "$m" --period $p --seed 5 -q --force -o s.zst -- "$@"
            cmp -s out.txt plain.txt || fail "stdout changed under --mode $m: $(cat out.txt)"
            got=$(totals s.zst)
            [ "$got" = "$full" ] || fail "$* --mode $m --period $p: totals '$got', full trace '$full'"
        done
    done
    echo "$full"
}

# hand LOADS STORES PROG [ARGS...]: runs with R = 10 and 30 differ by 20 x (LOADS, STORES)
hand() {
    hl=$1
    hs=$2
    shift 2
    a10=$(measure "$@" 10) || exit 1
    a30=$(measure "$@" 30) || exit 1
    dl=$(( ${a30% *} - ${a10% *} ))
    ds=$(( ${a30#* } - ${a10#* } ))
    [ "$dl" = $(( 20 * hl )) ] || fail "$*: 20 repetitions made $dl loads, expected $(( 20 * hl ))"
    [ "$ds" = $(( 20 * hs )) ] || fail "$*: 20 repetitions made $ds stores, expected $(( 20 * hs ))"
}

case "$scenario" in
counts)
    "$bin/pes-clang" -O2 "$src/count_prog.c" -o count_prog || fail "pes-clang count_prog.c"
    "$bin/pes-clang++" -O2 "$src/count_cxx.cpp" -o count_cxx || fail "pes-clang++ count_cxx.cpp"
    hand 4 2 ./count_prog straight
    hand 38 2 ./count_prog early
    hand 4 4 ./count_prog switch
    hand 9 2 ./count_prog longjmp
    hand 50 50 ./count_prog recursion
    hand 1 1 ./count_prog memcpy
    hand 4 4 ./count_prog calls
    hand 7 3 ./count_cxx
    ;;
vector)
    [ -n "$vflags" ] || { echo "no AVX2: skipped"; exit 0; }
    # shellcheck disable=SC2086
    "$bin/pes-clang" -O2 $vflags "$src/count_vec.c" -o count_vec || fail "pes-clang count_vec.c"
    measure ./count_vec 50 >/dev/null || exit 1
    ;;
switch)
    "$bin/pes-clang" -O2 "$src/switch_prog.c" -o switch_prog || fail "pes-clang switch_prog.c"
    norand="setarch $(uname -m) -R"
    $norand "$collect" --full -q -o f.zst -- ./switch_prog 40 >/dev/null 2>&1 || fail "full run"
    $norand "$collect" --mode samples --period load=1009,store=0 --seed 3 -q -o s.zst -- ./switch_prog 40 \
        >/dev/null 2>&1 || fail "sampled run"
    # position (1-based load count) -> "addr site" of every load in the full trace
    "$bin/pes-dump" --expand f.zst | awk '/^T0 access/ && $5 ~ /R/ { n++; s = $NF; sub(/\)/, "", s); print n, $3, s }' >loads.txt
    "$bin/pes-dump" s.zst | awk '/^T0 sample/ {
            for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "addr") a = kv[2]; if (kv[1] == "site") s = kv[2]; if (kv[1] == "loads") l = kv[2] }
            print l, a, s }' >samples.txt
    n=$(wc -l <samples.txt)
    [ "$n" -ge 100 ] || fail "only $n samples"
    awk 'NR == FNR { want[$1] = $2 " " $3; next }
         { if (want[$1] != $2 " " $3) { print "load " $1 ": sample " $2 " site " $3 ", full trace " want[$1]; bad++ } }
         END { exit bad > 0 }' loads.txt samples.txt >bad.txt || fail "$(head -3 bad.txt) ($(wc -l <bad.txt) of $n)"
    ;;
handler)
    "$bin/pes-clang" -O2 "$src/handler_prog.c" -o handler_prog || fail "pes-clang handler_prog.c"
    ./handler_prog 0 300 >plain.txt || fail "plain run"
    # the old runtime deadlocked here (a handler's record waited for the lock
    # its interrupted slow path held): a hang fails as HANG (guard), not as a CI timeout
    t=guard
    run 0 $t "$collect" --full -q --force -o off.zst -- ./handler_prog 0 300
    off=$(totals off.zst)
    run 0 $t "$collect" --full --force -o on.zst -- ./handler_prog 1 300
    cmp -s out.txt plain.txt || fail "stdout changed under --full"
    grep -q "not recorded" err.txt && fail "handler accesses lost: $(cat err.txt)"
    "$bin/pes-dump" on.zst 2>&1 | grep -q "LOST" && fail "LOST records in the trace"
    # exact: the off run's totals plus hits x (1 load, 601 stores)
    handler_counts() {
        got=$(totals "$1")
        hits=$(cat hits.txt)
        [ "$hits" -ge 20 ] || fail "$1: only $hits timer signals: nothing tested"
        dl=$(( ${got% *} - ${off% *} ))
        ds=$(( ${got#* } - ${off#* } ))
        [ "$dl" = "$hits" ] && [ "$ds" = $(( hits * 601 )) ] ||
            fail "$1: $hits handler runs made $dl more loads and $ds more stores, expected $hits and $(( hits * 601 ))"
    }
    handler_counts on.zst
    for m in $MODES; do
        run 0 $t "$collect" --mode "$m" --period 1000 --force -o s.zst -- ./handler_prog 1 300
        cmp -s out.txt plain.txt || fail "stdout changed under --mode $m"
        grep -q "not counted" err.txt || handler_counts s.zst
    done
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
