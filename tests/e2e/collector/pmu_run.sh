#!/bin/sh
# pmu_run.sh SCENARIO BIN_DIR TEST_BIN_DIR RUNTIME_SO FAKE_SYSCALL_SO — the pebs/ibs backends of
# libpes-rt with pmu_app as the "kernel" (see pmu_app.c for the records each
# thread writes). The expectations below follow from those records by hand.
set -u
scenario=$1
bin=$2
tbin=$3
rt=$4
fake=${5:-}
app="$tbin/pmu_app"
dump="$bin/pes-dump"
tag=pmu
. "$(dirname "$0")/scenario_common.sh"   # its run() is replaced below
mkdir -p sys/bus/event_source/devices/ibs_op
echo 4242 >sys/bus/event_source/devices/ibs_op/type

# run WANT_STATUS MODE BACKEND APP_ARG [THREADS]: the app under the runtime, status and stdout checked
run() {
    want=$1 mode=$2 backend=$3 arg=$4 threads=${5:-1}
    # env after timeout: only the program gets the preloaded runtime
    # RUN_ENV: more settings for the runtime (words, e.g. PES_SAMPLES=2)
    guard env ${RUN_ENV:-} PES_SAMPLE_OUTPUT=s.zst PES_MODE="$mode" PES_BACKEND="$backend" \
        PES_PMU_SYSFS="$work/sys" LIBPFM_FORCE_PMU=skl LD_PRELOAD="$rt" PMU_APP_EXIT=$want \
        "$app" "$arg" "$threads" >out.txt 2>err.txt
    got=$?
    [ "$got" = "$want" ] || { cat err.txt >&2; fail "pmu_app $arg exited $got, expected $want"; }
    [ "$(cat out.txt)" = "pmu_app: $arg done" ] || fail "stdout: $(cat out.txt)"
    "$dump" s.zst >dump.txt || fail "pes-dump s.zst failed"
}

# app thread I (0 = main): its tid and buffer (stderr), and its trace index (by tid)
buf() { sed -n "s/^pmu_app: thread $1 tid [0-9]* buf \(0x[0-9a-f]*\) .*/\1/p" err.txt; }
shared() { sed -n "s/^pmu_app: thread 0 tid [0-9]* buf 0x[0-9a-f]* shared \(0x[0-9a-f]*\)$/\1/p" err.txt; }
tid() { sed -n "s/^pmu_app: thread $1 tid \([0-9]*\) .*/\1/p" err.txt; }
tix() { sed -n "s/^thread T\([0-9]*\) tid $(tid "$1") .*/\1/p" dump.txt; }
# events of app thread I
# (heap blocks and the thread's stack left out: pmu_app's mallocs and libc's are not what is tested here)
events() { k=$(tix "$1"); [ -n "$k" ] || fail "app thread $1 (tid $(tid "$1")) not in the trace"; grep "^T$k " dump.txt | grep -v "^T$k \(alloc\|free\) "; }
hex() { printf '0x%x' $(( $1 )); }

# expect I LINE...: app thread I's events are exactly these lines (times removed)
expect() {
    i=$1; shift
    k=$(tix "$i")
    events "$i" | sed 's/ time=[0-9]*//; s/ stack=[0-9]*//' >got.txt
    : >want.txt
    for l in "$@"; do echo "T$k $l" >>want.txt; done
    diff want.txt got.txt >&2 || fail "events of app thread $i (T$k) differ (want < > got)"
}

# expect_pebs I: the records of pmu_app.c, as events
expect_pebs() {
    a=$(buf "$1")
    [ -n "$a" ] || fail "no buffer address for thread $1"
    s="size=8 site=- ip=%s loads=1000 stores=500 distance=0 aux=7 flags=%s"
    n="addr=0x0 size=0 site=- ip=0x0 loads=0 stores=0 distance=0"
    expect "$1" \
        "sample   addr=$(hex "$a") $(printf "$s" 0x1000 -)" \
        "sample   addr=$(hex "$a + 8") $(printf "$s" 0x1001 -)" \
        "sample   addr=$(hex "$a + 16") $(printf "$s" 0x1002 -)" \
        "lost     $n aux=5 flags=-" \
        "throttle $n aux=1 flags=-" \
        "dropped  $n aux=1 flags=-" \
        "sample   addr=$(hex "$a + 64") $(printf "$s" 0x2000 write)" \
        "sample   addr=$(hex "$a + 72") $(printf "$s" 0x2001 write)" \
        "totals   $(echo "$n" | sed 's/loads=0 stores=0/loads=1000 stores=500/') aux=5 flags=-"
}

case "$scenario" in
pebs)
    run 3 samples pebs pebs
    grep -qx "config    backend=pebs" dump.txt || fail "header does not name the backend"
    grep -qx "config    period_jitter=0" dump.txt || fail "header: PEBS periods are not jittered"
    expect_pebs 0
    expect_pebs 1
    ;;
pebs-samples)
    # --samples 2 through the PMU (samples mode: the schedule counts samples),
    # cap 64000: each thread starts at 64000 >> 6 = 1000 on both events (set
    # with PERF_EVENT_IOC_PERIOD when its events open), moves to 2000 after
    # its 2nd sample (the load ring's second) and to 4000 after its 4th (the
    # store ring's first); the PERIOD events say the same
    RUN_ENV="PES_SAMPLES=2 PES_PERIOD_LOAD=64000 PES_PERIOD_STORE=64000" run 3 samples pebs pebs
    grep -qx "config    samples_target=2" dump.txt || fail "header: no samples_target"
    for t in 0 1; do
        k=$(tix $t)
        got=$(grep "^T$k period " dump.txt | sed 's/ time=[0-9]*//' | sed "s/^T$k //" | tr '\n' ';')
        want="period   level=0 load=1000 store=1000 count=0 loads=1000 stores=500;"
        want="${want}period   level=1 load=2000 store=2000 count=2 loads=1000 stores=500;"
        want="${want}period   level=2 load=4000 store=4000 count=4 loads=1000 stores=500;"
        [ "$got" = "$want" ] || fail "PERIOD events of app thread $t: $got"
        got=$(sed -n "s/^pmu_app: ioctl period tid $(tid $t) ring \([a-z]*\) value \([0-9]*\)$/\1=\2/p" err.txt | tr '\n' ' ')
        want="load=1000 store=1000 load=2000 store=2000 load=4000 store=4000 "
        [ "$got" = "$want" ] || fail "PERF_EVENT_IOC_PERIOD of app thread $t: $got"
    done
    ;;
pebs-samples-refused)
    # the same, with a kernel that refuses every PERF_EVENT_IOC_PERIOD: each
    # thread stays at the cap (64000), says so in its one PERIOD event, and
    # never asks again after its first refusal at the start
    RUN_ENV="PMU_APP_PERIOD_EINVAL=1 PES_SAMPLES=2 PES_PERIOD_LOAD=64000 PES_PERIOD_STORE=64000" run 3 samples pebs pebs
    for t in 0 1; do
        k=$(tix $t)
        got=$(grep "^T$k period " dump.txt | sed 's/ time=[0-9]*//' | sed "s/^T$k //" | tr '\n' ';')
        want="period   level=6 load=64000 store=64000 count=0 loads=1000 stores=500;"
        [ "$got" = "$want" ] || fail "PERIOD events of app thread $t: $got"
        got=$(sed -n "s/^pmu_app: ioctl period tid $(tid $t) ring \([a-z]*\) value \([0-9]*\)$/\1=\2/p" err.txt | tr '\n' ' ')
        want="load=1000 store=1000 load=64000 store=64000 "
        [ "$got" = "$want" ] || fail "PERF_EVENT_IOC_PERIOD of app thread $t: $got"
    done
    ;;
threads)
    # 16 threads at once on 2 cores, each with its own events and signal
    run 0 samples pebs pebs 16
    [ "$(grep -c '^thread T' dump.txt)" = 17 ] || fail "expected 17 threads"
    for i in $(seq 0 16); do expect_pebs "$i"; done
    ;;
ibs)
    run 0 samples ibs ibs
    grep -qx "config    backend=ibs" dump.txt || fail "header does not name the backend"
    grep -qx "config    period_jitter=hardware" dump.txt || fail "header: IBS jitters in hardware"
    for t in 0 1; do
        a=$(buf $t)
        s="size=8 site=- ip=%s loads=1000 stores=0 distance=0 aux=0 flags=%s"
        n="addr=0x0 size=0 site=- ip=0x0 loads=0 stores=0 distance=0"
        expect $t \
            "sample   addr=$(hex "$a") $(printf "$s" 0x3000 -)" \
            "sample   addr=$(hex "$a + 64") $(printf "$s" 0x3001 write)" \
            "dropped  $n aux=2 flags=-" \
            "totals   $(echo "$n" | sed 's/loads=0/loads=1000/') aux=2 flags=-"
    done
    # each sample's callchain (pmu_app writes the ip and a caller) is its
    # call stack: entries of kind callstack that start at the sample's ip
    for ip in 0x3000 0x3001; do
        grep -q "^alloc_site [0-9]* *callstack $ip 0x[0-9a-f]*$" dump.txt ||
            fail "no call stack [$ip, caller] in the trace"
        grep "^T[0-9]* sample .* ip=$ip " dump.txt | grep -qv " stack=[0-9]*$" &&
            fail "a sample at $ip without its call stack"
    done
    ;;
pebs-comm)
    # ComDetective through the PMU: main publishes stores at L1 and L2; the
    # other thread's store at L1 + 8 is false sharing, at L2 true sharing
    run 0 comm pebs pebs-comm
    l1=$(shared)
    [ -n "$l1" ] || fail "no shared address"
    s="size=8 site=- ip=%s loads=1000 stores=500 distance=0 aux=%s flags=%s"
    n="addr=0x0 size=0 site=- ip=0x0 loads=1000 stores=500 distance=0 aux=2 flags=-"
    expect 0 "sample   addr=$(hex "$l1") $(printf "$s" 0x4000 7 write)" \
        "sample   addr=$(hex "$l1 + 64") $(printf "$s" 0x4001 7 write)" "totals   $n"
    k0=$(tix 0)
    expect 1 "sample   addr=$(hex "$l1 + 8") $(printf "$s" 0x4002 7 write)" \
        "comm     addr=$(hex "$l1 + 8") $(printf "$s" 0x4002 0 write,false_sharing | sed "s/ loads=/ other=T$k0 loads=/")" \
        "sample   addr=$(hex "$l1 + 64") $(printf "$s" 0x4003 7 write)" \
        "comm     addr=$(hex "$l1 + 64") $(printf "$s" 0x4003 0 write,true_sharing | sed "s/ loads=/ other=T$k0 loads=/")" \
        "totals   $n"
    ;;
pebs-nested)
    # a signal that interrupts a handler on the alternate stack leaves the
    # ring alone (checked in pmu_app); the next one drains it: one sample each
    run 0 samples pebs pebs-nested
    for t in 0 1; do
        a=$(buf $t)
        expect $t "sample   addr=$(hex "$a") size=8 site=- ip=0x1000 loads=1000 stores=500 distance=0 aux=7 flags=-" \
            "totals   addr=0x0 size=0 site=- ip=0x0 loads=1000 stores=500 distance=0 aux=1 flags=-"
    done
    ;;
pebs-reuse)
    # ReuseTracker through the PMU: a real watchpoint on the sampled word; the
    # time distance is the PMU count difference (1100 - 1000) plus the access
    run 0 reuse pebs pebs-reuse
    for t in 0 1; do
        a=$(hex "$(buf $t)")
        k=$(tix $t)
        events $t | grep -q "^T$k reuse *addr=$a .* other=T$k loads=1000 stores=500 distance=101 " ||
            fail "no reuse of $a at distance 101 in T$t: $(events $t)"
        [ "$(events $t | grep -c ' reuse ')" = 1 ] || fail "T$t: expected exactly one reuse"
        [ "$(events $t | grep -c ' invalidation ')" = 0 ] || fail "T$t: unexpected invalidation"
    done
    ;;
no-pmu)
    # perf_event_open fails: one warning, the program runs unchanged, no samples
    PMU_APP_FAIL=1 run 4 samples pebs pebs
    grep -q "pes-rt: pebs backend: perf_event_open: No such file or directory" err.txt ||
        fail "no warning: $(cat err.txt)"
    [ "$(grep -c 'pes-rt:' err.txt)" = 1 ] || fail "expected one warning: $(cat err.txt)"
    ! grep -q " sample " dump.txt || fail "samples without a PMU"
    # an unknown backend name: the soft sampler, with a message
    guard env PES_SAMPLE_OUTPUT=t.zst PES_MODE=samples PES_BACKEND=pmu LD_PRELOAD="$rt" \
        PMU_APP_FAIL=1 "$app" pebs >out.txt 2>err.txt || fail "PES_BACKEND=pmu: exit status $?"
    grep -q "PES_BACKEND=pmu: expected soft, pebs or ibs" err.txt || fail "bad backend: $(cat err.txt)"
    ;;
collect)
    # this machine has no PMU: pes-collect says so in one sentence before running anything
    "$bin/pes-collect" --mode samples --backend pebs -o c.zst "$app" pebs >out.txt 2>err.txt
    [ $? = 2 ] || fail "--backend pebs without a PMU: exit status"
    [ ! -e c.zst ] && [ ! -s out.txt ] || fail "ran the program anyway"
    grep -q "^pes-collect: --backend pebs: unavailable: " err.txt || fail "$(cat err.txt)"
    "$bin/pes-collect" --mode samples -o c.zst "$app" pebs >out.txt 2>err.txt
    [ $? = 2 ] || fail "auto, uninstrumented, no PMU: exit status"
    grep -q "was not built with pes-clang and this machine has no usable PMU" err.txt || fail "$(cat err.txt)"
    ;;
collect-pebs)
    # pes-collect with a perf_event_open that "works" (pmu_fake_syscall.so, in
    # pes-collect only): auto picks pebs for an uninstrumented program and
    # preloads the runtime, which samples it (through pmu_app's fake events)
    LD_PRELOAD="$fake" LIBPFM_FORCE_PMU=skl "$bin/pes-collect" --list-backends >out.txt 2>err.txt ||
        fail "--list-backends: $(cat err.txt)"
    grep -q "^pebs  available: MEM_INST_RETIRED:ALL_LOADS opens on this thread" out.txt ||
        fail "--list-backends: $(cat out.txt)"
    LD_PRELOAD="$fake" LIBPFM_FORCE_PMU=skl PMU_APP_EXIT=3 guard "$bin/pes-collect" \
        --mode samples -q -o s.zst "$app" pebs >out.txt 2>err.txt
    got=$?
    [ $got = 3 ] || { cat err.txt >&2; fail "exit status $got, expected the program's 3"; }
    [ "$(cat out.txt)" = "pmu_app: pebs done" ] || fail "stdout: $(cat out.txt)"
    "$dump" s.zst >dump.txt || fail "pes-dump s.zst failed"
    grep -qx "config    backend=pebs" dump.txt || fail "header: $(grep backend dump.txt)"
    expect_pebs 0
    expect_pebs 1
    # the same with --backend pebs
    LD_PRELOAD="$fake" LIBPFM_FORCE_PMU=skl guard "$bin/pes-collect" --backend pebs \
        --mode samples -q -o s.zst --force "$app" pebs >out.txt 2>err.txt || fail "--backend pebs: $(cat err.txt)"
    "$dump" s.zst >dump.txt || fail "pes-dump s.zst failed"
    expect_pebs 1
    ;;
instrumented)
    # a pes-clang program (samp_prog) with the pebs backend: its soft countdowns
    # are off, so with a PMU that reports nothing there are no samples, the
    # totals are the PMU counts (0), and the program runs as usual
    guard env PES_SAMPLE_OUTPUT=s.zst PES_MODE=reuse PES_BACKEND=pebs LIBPFM_FORCE_PMU=skl \
        LD_PRELOAD="$fake" PES_PERIOD_LOAD=97 "$tbin/samp_prog" reuse 50 2000 >out.txt 2>err.txt ||
        fail "samp_prog: exit status $?: $(cat err.txt)"
    [ "$(cat out.txt)" = "samp_prog: reuse done" ] || fail "stdout: $(cat out.txt)"
    [ ! -s err.txt ] || fail "stderr: $(cat err.txt)"
    "$dump" s.zst >dump.txt || fail "pes-dump s.zst failed"
    grep -qx "config    backend=pebs" dump.txt || fail "header"
    ! grep -q "^T0 sample" dump.txt || fail "the soft sampler sampled under pebs"
    grep -q "^T0 totals .* loads=0 stores=0 " dump.txt || fail "totals: $(grep totals dump.txt)"
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
