#!/bin/sh
# run.sh SCENARIO BIN_DIR TEST_BIN_DIR [SOURCE_DIR] — one end-to-end scenario of
# the runtime and pes-collect with the hand-instrumented rt_prog (see rt_prog.c),
# or (openmp) with a program built by pes-clang.
set -u
scenario=$1
bin=$2
tbin=$3
src=${4:-}
collect="$bin/pes-collect"
prog="$tbin/rt_prog"
check="$tbin/rt_check"
tag=rt
. "$(dirname "$0")/scenario_common.sh"

case "$scenario" in
single)
    run 0 "$collect" --full -q --time-interval 100 -o t.zst -- "$prog" single 100000
    "$check" t.zst --interval 100 --thread-end 0:100000 || fail "trace check"
    ;;
threads)
    run 0 "$collect" --full -q --buffer-records 1000 -o t.zst "$prog" threads 8 20000
    "$check" t.zst --interval 1024 --thread-end 1:20000 2:20000 3:20000 4:20000 5:20000 \
        6:20000 7:20000 8:20000 || fail "trace check"
    ;;
oversubscribed)
    # more threads than cores, tiny buffers: exercises back-pressure
    n=24
    run 0 "$collect" --full -q --buffer-records 64 --time-interval 7 -o t.zst "$prog" threads $n 3000
    exp=""; i=1; while [ $i -le $n ]; do exp="$exp $i:3000"; i=$((i + 1)); done
    "$check" t.zst --interval 7 --thread-end $exp || fail "trace check"
    ;;
writers)
    # 16 threads traced with one encoder thread and with four: each thread's
    # records (time marks left out) must be the same sequence. Thread indices
    # follow the order of first records, which varies, so the per-thread
    # sequences are compared as a sorted list of checksums.
    n=16
    exp=""; i=1; while [ $i -le $n ]; do exp="$exp $i:20000"; i=$((i + 1)); done
    run 0 "$collect" --full -q --writers 1 --buffer-records 256 -o w1.zst "$prog" threads $n 20000
    PES_FULL_OUTPUT="$work/w4.zst" PES_WRITERS=4 PES_BUFFER_RECORDS=256 \
        "$prog" threads $n 20000 >out.txt 2>err.txt || fail "PES_WRITERS=4 run"
    grep -q pes-rt err.txt && fail "runtime message: $(cat err.txt)"
    for w in w1 w4; do
        "$check" $w.zst --thread-end $exp || fail "trace check ($w)"
        "$bin/pes-dump" --format json $w.zst >$w.json || fail "pes-dump $w"
        mkdir $w.d
        # heap records name addresses that differ from run to run (the main thread has no others)
        awk -v d=$w.d '/"type":"(time|thread_end|alloc|alloc_size|free)"/ { next }
            /^\{"type":"[a-z_]*","thread":[0-9]+,/ {
                t = $0; sub(/^[^,]*,"thread":/, "", t); sub(/,.*/, "", t)
                line = $0; sub(/"thread":[0-9]+,/, "", line)
                print line > (d "/T" t)
            }' $w.json
        [ "$(ls $w.d | wc -l)" = $n ] || fail "$w: expected $n threads with records"
        for f in $w.d/*; do cksum <"$f"; done | sort >$w.sums
    done
    cmp -s w1.sums w4.sums || { diff w1.sums w4.sums >&2; fail "per-thread sequences differ"; }
    # rt_prog's body block carries the model's facts (pes-dump's block listing;
    # the entry block has none: no facts printed)
    "$bin/pes-dump" --tables w1.zst >tables.txt || fail "pes-dump --tables"
    grep -q "worker:body  sites 2  parallel  ops int_add=1 load=1 store=1 branch=1  forks 0  barriers 1  instrs int_add=1 load=1 store=1 branch=1  chain int_add=1\$" tables.txt ||
        fail "block facts of worker:body: $(grep body tables.txt)"
    grep -q "worker:entry  sites 1  ops -\$" tables.txt || fail "worker:entry: $(grep entry tables.txt)"
    grep -q '"label":"body".*"forks":0,"barriers":1,"instrs":{"int_add":1,.*"chain":{"int_add":1,"int_mul":0' w1.json ||
        fail "block facts in pes-dump's JSON"
    ;;
early)
    run 0 "$collect" --full -q --buffer-records 500 -o t.zst "$prog" early 6 10001
    "$check" t.zst --thread-end 1:5000 2:10001 3:5000 4:10001 5:5000 6:10001 || fail "trace check"
    ;;
abort)
    run 134 sh -c "exec \"$collect\" --full -q -o t.zst \"$prog\" abort 150000"
    grep -q "rt_prog: aborting" out.txt || fail "stdout lost"
    # default buffers: 2 complete blocks + the partial one flushed by the signal handler
    "$check" t.zst 0:150000 || fail "trace check"
    ;;
segv)
    # a hardware fault: flushed by the handler, then the fault repeats under SIG_DFL
    run 139 sh -c "exec \"$collect\" --full -q --buffer-records 1000 -o t.zst \"$prog\" segv 12345"
    grep -q "rt_prog: faulting" out.txt || fail "stdout lost"
    "$check" t.zst 0:12345 || fail "trace check"
    ;;
signal-status)
    # pes-collect dies of the same signal as the program
    "$collect" --full -q -o t.zst "$prog" abort 10 >/dev/null 2>&1 &
    wait $!
    st=$?
    [ $st = 134 ] || fail "status $st, expected 134 (SIGABRT)"
    ;;
running)
    # threads still recording when main exits: each keeps a clean prefix, footer written
    run 0 "$collect" --full -q --buffer-records 256 -o t.zst "$prog" running 4
    "$check" t.zst --prefix 1:137438953472000 2:137438953472000 3:137438953472000 \
        4:137438953472000 || fail "trace check"
    ;;
running-abort)
    # abort while other threads record: the handler stops them (trylock) and closes the file
    run 134 sh -c "exec \"$collect\" --full -q --buffer-records 256 -o t.zst \"$prog\" running-abort 3"
    "$check" t.zst --prefix 1:137438953472000 2:137438953472000 3:137438953472000 || fail "trace check"
    ;;
sigterm)
    # SIGTERM (default action) to pes-collect: forwarded; the runtime flushes and
    # closes the trace, then both die of SIGTERM (status 143)
    "$collect" --full -q --buffer-records 256 -o t.zst "$prog" running-wait 2 >out.txt 2>err.txt &
    pid=$!
    wait_started $pid
    kill -TERM $pid
    wait_guarded $pid
    st=$?
    [ $st = 143 ] || fail "status $st, expected 143 (SIGTERM)"
    "$check" t.zst --prefix 1:137438953472000 2:137438953472000 || fail "trace check"
    ;;
sigterm-stalled)
    # SIGTERM while the main thread waits in the runtime for a buffer that the
    # writers cannot return (the trace goes into a FIFO nobody reads, so they
    # block in write): the process still dies of it. Before, the signal waited
    # for the thread to leave the runtime, which it never did (issue 31). A
    # hang fails as HANG (wait_guarded); no time verdict.
    mkfifo t.fifo
    exec 3<>t.fifo   # open for the writers, never read
    PES_FULL_OUTPUT=$work/t.fifo PES_OVERWRITE=1 PES_BUFFER_RECORDS=256 PES_WRITERS=1 PES_QUIET=1 \
        "$prog" endless >out.txt 2>err.txt &
    pid=$!
    wait_started $pid
    # until the main thread sleeps in the runtime (a futex), if /proc shows it
    i=0
    while [ $i -lt 500 ] && ! grep -q futex "/proc/$pid/wchan" 2>/dev/null; do
        i=$((i + 1)); sleep 0.01
    done
    grep -q futex "/proc/$pid/wchan" 2>/dev/null || echo "note: the main thread was not seen waiting" >&2
    kill -TERM $pid
    wait_guarded $pid
    st=$?
    exec 3>&-
    [ $st = 143 ] || fail "status $st, expected 143 (SIGTERM)"
    ;;
own-term)
    # the program's own SIGTERM handler keeps working under the collector
    "$collect" --full -q --buffer-records 256 -o t.zst "$prog" own-term >out.txt 2>err.txt &
    pid=$!
    wait_started $pid
    kill -TERM $pid
    wait_guarded $pid
    st=$?
    [ $st = 0 ] || fail "status $st, expected 0 (the handler ran, main returned)"
    grep -q "^rt_prog: SIGTERM handled" out.txt || fail "handler: $(cat out.txt)"
    "$bin/pes-dump" --stats t.zst >/dev/null 2>dump.txt || fail "pes-dump: $(head -n 2 dump.txt)"
    [ ! -s dump.txt ] || fail "trace incomplete: $(head -n 2 dump.txt)"
    ;;
cancel)
    # asynchronous cancels that land in the runtime while a thread holds a lock
    # or waits for a buffer (small buffers, one writer): every run must end, with
    # every thread cancelled and a complete trace (glibc 2.36 acts on a cancel
    # signal in cond_wait even with cancellation disabled: docs/collector.md)
    for try in 1 2 3; do
        rm -f t.zst
        run 0 guard "$collect" --full -q --buffer-records 64 --writers 1 -o t.zst "$prog" cancel 300
        grep -q "rt_prog: 600 of 600 threads cancelled" out.txt || fail "not every thread was cancelled"
        "$bin/pes-dump" --stats t.zst >/dev/null 2>dump.txt || fail "pes-dump: $(head -n 2 dump.txt)"
        [ ! -s dump.txt ] || fail "the trace is incomplete: $(head -n 2 dump.txt)"
        rm -f s.zst
        run 0 guard "$collect" --mode reuse --period 100 -q -o s.zst "$prog" cancel 300
        grep -q "rt_prog: 600 of 600 threads cancelled" out.txt || fail "not every thread was cancelled (reuse)"
    done
    ;;
exit3)
    run 3 "$collect" --full -o t.zst "$prog" exit3 5000
    grep -q "^pes-collect: t.zst: .*1 thread, 50[0-9][0-9] records" err.txt || { cat err.txt; fail "summary"; }
    "$check" t.zst 0:5000 || fail "trace check"
    ;;
fork)
    run 0 "$collect" --full -q --buffer-records 100 -o t.zst "$prog" fork 1000
    grep -q "child ok" out.txt || fail "child"
    "$check" t.zst --thread-end 0:2000 || fail "trace check"
    ;;
output)
    # stdout/stderr byte-identical to a run without the collector (-q: no summary)
    "$prog" threads 3 1000 >plain.out 2>plain.err
    run 0 "$collect" --full -q -o t.zst "$prog" threads 3 1000
    cmp -s plain.out out.txt || fail "stdout differs"
    cmp -s plain.err err.txt || fail "stderr differs"
    # without -q: the same plus one summary line at the end
    run 0 "$collect" --full -o t2.zst "$prog" threads 3 1000
    cmp -s plain.out out.txt || fail "stdout differs (not quiet)"
    [ "$(wc -l <err.txt)" = $(( $(wc -l <plain.err) + 1 )) ] || fail "expected one summary line"
    head -n "$(wc -l <plain.err)" err.txt | cmp -s - plain.err || fail "stderr differs (not quiet)"
    # 3 workers and the main thread, whose allocations (pthread_create) make it a traced thread
    tail -n 1 err.txt | grep -q "^pes-collect: t2.zst: .*$((3 + $(main_traced t2.zst))) threads, 30[0-9][0-9] records" ||
        fail "summary: $(tail -n 1 err.txt)"
    ;;
args)
    run 0 "$collect" --full -q -o t.zst "$prog" echo "a b" "it's" '"q"' '' '$HOME' --full
    printf 'rt_prog: start\n[a b]\n[it'"'"'s]\n["q"]\n[]\n[$HOME]\n[--full]\nrt_prog: done\n' >want.txt
    cmp -s want.txt out.txt || { diff want.txt out.txt >&2; fail "arguments changed"; }
    "$check" t.zst --command "$prog echo 'a b' 'it'\\''s' '\"q\"' '' '\$HOME' --full" 0:10 || fail "header command"
    # without pes-collect (no PES_COMMAND) the runtime quotes /proc/self/cmdline the same way
    PES_FULL_OUTPUT="$work/u.zst" "$prog" echo "x y" >/dev/null 2>&1
    "$check" u.zst --command "$prog echo 'x y'" 0:10 || fail "header command from /proc"

    ;;
default-name)
    run 0 "$collect" --full -q "$prog" single 10
    set -- rt_prog.*.full.zst
    [ -f "$1" ] || fail "no rt_prog.PID.full.zst in the current directory"
    "$check" "$1" 0:10 || fail "trace check"
    ;;
missing)
    run 127 "$collect" --full ./no-such-program
    grep -q "^pes-collect: ./no-such-program: program not found$" err.txt || fail "message: $(cat err.txt)"
    run 127 "$collect" --full no-such-program-in-path
    ;;
not-instrumented)
    run 2 "$collect" --full true
    grep -q "^pes-collect: true was not built with pes-clang" err.txt || fail "message: $(cat err.txt)"
    printf 'neither ELF nor script\n' >data.txt; chmod +x data.txt
    run 2 "$collect" --full ./data.txt
    grep -q "^pes-collect: ./data.txt is not an ELF executable or a script" err.txt || fail "message: $(cat err.txt)"
    ;;
script)
    # a wrapper script that execs the program: accepted, the program's trace is the run's
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$prog" >wrapper.sh; chmod +x wrapper.sh
    run 0 "$collect" --full -q -o t.zst ./wrapper.sh single 100
    grep -q "^rt_prog: done" out.txt || fail "the program did not run: $(cat out.txt)"
    ! grep -q "^pes-" err.txt || fail "messages: $(cat err.txt)"
    "$check" t.zst --thread-end 0:100 || fail "trace check"
    # one that starts no program built with pes-clang: its status, and the end says so (even -q)
    printf '#!/bin/sh\necho plain\nexit 3\n' >plain.sh; chmod +x plain.sh
    run 3 "$collect" --full -q -o p.zst ./plain.sh
    [ "$(cat out.txt)" = plain ] || fail "script output: $(cat out.txt)"
    grep -q "^pes-collect: no trace was written to p.zst: no program built with pes-clang ran under the script ./plain.sh$" \
        err.txt || fail "message: $(cat err.txt)"
    run 3 "$collect" --mode samples -q -o s.zst ./plain.sh
    grep -q "^pes-collect: no trace was written to s.zst: no program built with pes-clang ran" \
        err.txt || fail "sampled: message: $(cat err.txt)"
    ;;
exists)
    echo keep >t.zst
    run 2 "$collect" --full -o t.zst "$prog" single 10
    grep -q "^pes-collect: t.zst: file exists (use --force to replace it)$" err.txt || fail "message: $(cat err.txt)"
    [ "$(cat t.zst)" = keep ] || fail "existing file was modified"
    [ ! -s out.txt ] || fail "the program ran"
    run 2 "$collect" --full -o no-such-dir/t.zst "$prog" single 10
    grep -q "^pes-collect: no-such-dir/t.zst: cannot write the trace in .*no-such-dir: No such file" err.txt || fail "message: $(cat err.txt)"
    [ ! -s out.txt ] || fail "the program ran"
    run 0 "$collect" --full -q --force -o t.zst "$prog" single 10
    "$check" t.zst 0:10 || fail "trace check after --force"
    ;;
usage)
    run 2 "$collect" --full --time-interval x "$prog" single 1
    grep -q "^pes-collect: --time-interval: expected a positive integer, got 'x'$" err.txt || fail "message: $(cat err.txt)"
    run 2 "$collect" --full --buffer-records 0 "$prog" single 1
    run 2 "$collect" --full --zstd-level 99 "$prog" single 1
    run 2 "$collect" --bogus "$prog"
    run 2 "$collect" "$prog" single 1
    grep -q "expected --full (every access) or --mode" err.txt || fail "message: $(cat err.txt)"
    [ "$(wc -l <err.txt)" = 1 ] || fail "more than one line"
    run 2 "$collect" --full
    # --target-error E: N = 1.645^2 / (4 E^2) (E = 0.05: 270.55 -> 271), recorded as samples_target
    run 0 "$collect" --mode samples --target-error 0.05 -o te.zst --force "$prog" single 10
    grep -q "^pes-collect: --target-error 0.05: --samples 271 per thread$" err.txt || fail "message: $(cat err.txt)"
    "$bin/pes-dump" te.zst | grep -q "samples_target=271" || fail "samples_target not 271"
    for e in 0 0.5 -1 x 0.1x; do
        run 2 "$collect" --mode samples --target-error "$e" "$prog" single 1
        grep -q "^pes-collect: --target-error: expected a share error between 0 and 0.5 (e.g. 0.05), got '$e'$" err.txt ||
            fail "message: $(cat err.txt)"
    done
    run 2 "$collect" --mode samples --target-error 0.1 --samples 5 "$prog" single 1
    grep -q "both set the sample count, give one" err.txt || fail "message: $(cat err.txt)"
    run 0 "$collect" --help
    grep -q -- "--time-interval" out.txt || fail "help"
    run 0 "$collect" --version
    # outputs --force must not destroy: refused in one line before the program runs,
    # left as they were (a fifo, a symlink to a device, a directory, the program itself)
    mkfifo fifo || fail "mkfifo"
    ln -s /dev/null null || fail "ln"
    mkdir dir || fail "mkdir"
    cp "$prog" app || fail "cp"
    sum=$(cksum <app)
    for out in fifo null dir; do
        run 2 "$collect" --full --force -o $out "$prog" single 1
        grep -q "^pes-collect: --output $out: is a .*, not a regular file; refusing to replace it$" err.txt ||
            fail "message: $(cat err.txt)"
        [ "$(wc -l <err.txt)" = 1 ] || fail "more than one line"
        [ ! -s out.txt ] || fail "the program ran"
    done
    [ -p fifo ] && [ -L null ] && [ -d dir ] || fail "an output that is not a regular file was removed"
    for out in ./app app; do
        run 2 "$collect" --full --force -o $out -- ./app single 1
        grep -q "^pes-collect: --output $out: is the program being run (./app); refusing to replace it$" err.txt ||
            fail "message: $(cat err.txt)"
        [ ! -s out.txt ] || fail "the program ran"
    done
    # found through PATH, as execvp finds it
    run 2 env PATH="$work:$PATH" "$collect" --full --force -o app -- app single 1
    grep -q "^pes-collect: --output app: is the program being run (.*/app); refusing" err.txt ||
        fail "message: $(cat err.txt)"
    [ "$(cksum <app)" = "$sum" ] || fail "the program was changed"
    # sampling settings without sampling
    run 2 "$collect" --full --period 10 "$prog" single 1
    grep -q "^pes-collect: --period: only with --mode (sampling); --full alone records every access$" err.txt ||
        fail "message: $(cat err.txt)"
    for flag in "--seed 3" "--backend soft" "--debug-registers 2" "--granularity spatial" "--sockets 2"; do
        run 2 "$collect" --full $flag "$prog" single 1
        grep -q "^pes-collect: ${flag%% *}: only with --mode" err.txt || fail "message: $(cat err.txt)"
    done
    ;;
bad-env)
    # a bad PES_* value: one line on stderr, tracing off, program unchanged
    PES_FULL_OUTPUT="$work/e.zst" PES_TIME_INTERVAL=abc "$prog" single 100 >out.txt 2>err.txt || fail "status"
    grep -q "^pes-rt: PES_TIME_INTERVAL=abc: expected a positive integer" err.txt || fail "message: $(cat err.txt)"
    [ "$(grep -c pes-rt err.txt)" = 1 ] || fail "more than one line"
    [ ! -e e.zst ] || fail "trace written despite a bad setting"
    # the output exists (an exec'd instrumented program): a warning, silenced by PES_QUIET=1
    echo keep >x.zst
    PES_FULL_OUTPUT="$work/x.zst" "$prog" single 100 >out.txt 2>err.txt || fail "status"
    grep -q "^pes-rt: .*x.zst exists .*not traced" err.txt || fail "message: $(cat err.txt)"
    PES_FULL_OUTPUT="$work/x.zst" PES_QUIET=1 "$prog" single 100 >out.txt 2>err.txt || fail "status"
    [ "$(grep -c pes-rt err.txt)" = 0 ] || fail "PES_QUIET=1 did not silence the warning"
    [ "$(cat x.zst)" = keep ] || fail "existing file modified"
    # PES_OVERWRITE=1 replaces it
    PES_FULL_OUTPUT="$work/x.zst" PES_OVERWRITE=1 "$prog" single 100 >out.txt 2>err.txt || fail "status"
    [ ! -s err.txt ] || [ "$(grep -c pes-rt err.txt)" = 0 ] || fail "message: $(cat err.txt)"
    "$check" x.zst 0:100 || fail "trace check (PES_OVERWRITE=1)"
    # off (no PES_FULL_OUTPUT): no file, no message
    "$prog" single 100000 >out.txt 2>err.txt || fail "status (off)"
    [ "$(grep -c pes-rt err.txt)" = 0 ] || fail "runtime printed in off mode"
    ;;
openmp)
    # built by pes-clang (real pass), 3 OpenMP threads, static schedule
    "$bin/pes-clang" -O2 -fopenmp "$src/omp_sum.c" -o omp_sum || fail "pes-clang"
    export OMP_NUM_THREADS=3
    run 0 "$collect" --full -q -o o.zst ./omp_sum 6144
    grep -q "sum=18871296$" out.txt || fail "program output: $(cat out.txt)"
    set -- $(sed -n 's/^base=0x\([0-9a-f]*\) n=\([0-9]*\).*/\1 \2/p' out.txt)
    "$tbin/omp_check" o.zst "$1" "$2" 3 || fail "trace check"
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
