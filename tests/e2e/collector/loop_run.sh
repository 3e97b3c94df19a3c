#!/bin/sh
# loop_run.sh SCENARIO BIN_DIR TEST_BIN_DIR — loop descriptor chunks in the
# runtime (__pes_loop_flush, rt_loop.c) with loop_prog (loop_pattern.h): each
# trace is checked by loop_check against the pattern, and a trace written
# with descriptors must expand to what its twin recorded per access writes,
# record for record, time mark for time mark, block for block.
set -u
scenario=$1
bin=$2
tbin=$3
collect="$bin/pes-collect"
prog="$tbin/loop_prog"
check="$tbin/loop_check"
tag=loop
. "$(dirname "$0")/scenario_common.sh"

# twins T INTERVAL BUFFER MIXED [FLAGS...]: with descriptors (MIXED: --mixed
# when mixed groups must show, or ""), with --no-descriptors
# (loops record per access), and --no-descriptors with every chunk handed to
# __pes_loop_flush anyway (the runtime stores its records per access)
twins() {
    threads=$1 interval=$2 buffer=$3 mixed=$4
    shift 4
    opts="--full -q --time-interval $interval --buffer-records $buffer"
    run 0 guard "$collect" $opts "$@" -o d.zst "$prog" auto "$threads"
    grep -qx "descriptors=1" out.txt || fail "descriptors not set: $(cat out.txt)"
    "$check" d.zst --interval "$interval" --buffer "$buffer" --threads "$threads" \
        --descriptors 1 --groups $mixed --canon d.txt || fail "trace check (descriptors)"
    run 0 guard "$collect" $opts --no-descriptors "$@" -o n.zst "$prog" auto "$threads"
    grep -qx "descriptors=0" out.txt || fail "--no-descriptors: $(cat out.txt)"
    "$check" n.zst --interval "$interval" --buffer "$buffer" --threads "$threads" \
        --descriptors 0 --no-groups --canon n.txt || fail "trace check (--no-descriptors)"
    run 0 guard "$collect" $opts --no-descriptors "$@" -o a.zst "$prog" always "$threads"
    "$check" a.zst --interval "$interval" --buffer "$buffer" --threads "$threads" \
        --descriptors 0 --no-groups --canon a.txt || fail "trace check (flush per access)"
    for x in n a; do
        cmp -s d.txt $x.txt || { diff d.txt $x.txt | head -n 20 >&2; fail "d.zst and $x.zst differ"; }
    done
}

case "$scenario" in
tiny)
    # marks every 7 records, 16-record buffers: chunks span many of both
    twins 2 7 16 ""
    ;;
small)
    twins 3 100 1000 --mixed
    ;;
default)
    twins 4 1024 65536 --mixed
    ;;
env)
    # PES_DESCRIPTORS=0 without pes-collect turns them off, as --no-descriptors does
    PES_FULL_OUTPUT="$work/e.zst" PES_DESCRIPTORS=0 PES_TIME_INTERVAL=50 PES_BUFFER_RECORDS=300 \
        guard "$prog" auto 2 >out.txt 2>err.txt || fail "PES_DESCRIPTORS=0 run"
    grep -qx "descriptors=0" out.txt || fail "PES_DESCRIPTORS=0: $(cat out.txt)"
    "$check" e.zst --interval 50 --buffer 300 --threads 2 --descriptors 0 --no-groups ||
        fail "trace check"
    PES_FULL_OUTPUT="$work/f.zst" PES_TIME_INTERVAL=50 PES_BUFFER_RECORDS=300 \
        guard "$prog" auto 2 >out.txt 2>err.txt || fail "default run"
    grep -qx "descriptors=1" out.txt || fail "descriptors off by default: $(cat out.txt)"
    "$check" f.zst --interval 50 --buffer 300 --threads 2 --descriptors 1 --groups ||
        fail "trace check"
    ;;
sampled)
    # a sampled trace beside the full one needs every record: loops record
    # per access, and chunks handed over anyway are stored per access
    for how in auto always; do
        run 0 guard "$collect" --full --mode samples --period 1000 -q --time-interval 64 \
            --buffer-records 512 --full-output s.$how.zst -o s.$how.samples.zst "$prog" $how 2
        grep -qx "descriptors=0" out.txt || fail "sampling ($how): $(cat out.txt)"
        "$check" s.$how.zst --interval 64 --buffer 512 --threads 2 --descriptors 0 --no-groups ||
            fail "trace check (sampling, $how)"
    done
    ;;
running)
    # main returns while the workers flush chunks of an endless loop: the
    # runtime stops them (their next flush drops its chunk); each keeps its
    # whole pattern, then a prefix of the loop, with exact marks and counts
    run 0 guard "$collect" --full -q --time-interval 50 --buffer-records 256 -o r.zst \
        "$prog" running 3
    grep -qx "descriptors=1" out.txt || fail "descriptors not set: $(cat out.txt)"
    "$check" r.zst --interval 50 --buffer 256 --threads 3 --descriptors 1 --groups --prefix ||
        fail "trace check"
    ;;
skip)
    # --skip drops records one by one (the gate): no descriptors
    run 0 guard "$collect" --full -q --skip 10 -o k.zst "$prog" always 1
    grep -qx "descriptors=0" out.txt || fail "--skip: $(cat out.txt)"
    "$bin/pes-dump" --limit 0 k.zst | grep -qx "config    descriptors=0" || fail "--skip: header"
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
