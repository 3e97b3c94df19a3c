#!/bin/sh
# samp_run.sh SCENARIO BIN_DIR TEST_BIN_DIR [SOURCE_DIR] — one end-to-end scenario of the
# sampling collector with the hand-instrumented samp_prog (see samp_prog.c);
# expectations are checked by samp_check against what the scenario does by
# construction.
set -u
scenario=$1
bin=$2
tbin=$3
collect="$bin/pes-collect"
prog="$tbin/samp_prog"
check="$tbin/samp_check"
src=${4:-}
tag=samp
. "$(dirname "$0")/scenario_common.sh"

ck() { "$check" s.zst "$@" || fail "check $*"; }
done_line() { [ "$(cat out.txt)" = "samp_prog: $1 done" ] || fail "stdout: $(cat out.txt)"; }

case "$scenario" in
reuse-exact)
    # K = 50: every access re-touched after exactly 2K = 100 accesses
    run 0 "$collect" --mode reuse --period 997 --seed 7 -q -o s.zst "$prog" reuse 50 2000
    done_line reuse
    ck 'reuse>=20' distance=100 invalidation=0 weighted=1 totals=0:100000:100000 config=mode=reuse \
       config=period_load=997
    # one debug register, loads only
    run 0 "$collect" --mode reuse --period load=301,store=0 --debug-registers 1 -q -o s.zst --force \
        "$prog" reuse 64 500
    ck 'reuse>=20' distance=128 invalidation=0 totals=0:32000:32000 config=debug_registers=1
    ;;
no-reuse)
    run 0 "$collect" --mode reuse --period 101 -q -o s.zst "$prog" stream 200000
    ck 'sample>=1000' reuse=0 invalidation=0 totals=0:200000:0
    ;;
samples)
    # samples only, and both traces from one run
    run 0 "$collect" --mode samples --full --period 1000 -q -o s.zst --full-output f.zst "$prog" reuse 100 100
    done_line reuse
    ck 'sample>=18' reuse=0 totals=0:10000:10000 config=mode=samples
    [ -s f.zst ] || fail "no full trace"
    "$bin/pes-dump" --limit 5 f.zst >/dev/null || fail "full trace unreadable"
    ;;
calls)
    # CALL and RETURN records (call edges) around every 2*100 accesses: never
    # an access, never a sample; the exact counts of `reuse 100 100`, and its
    # samples: every 7th load and every 7th store (a period below 8 does not
    # vary), sampled alone and with a full trace.
    run 0 "$collect" --mode samples --period 7 -q -o s.zst "$prog" calls 100 100
    done_line calls
    ck sample=2856 not-access=0 totals=0:10000:10000
    run 0 "$collect" --mode samples --full --period 7 -q -o s.zst --full-output f.zst --force \
        "$prog" calls 100 100
    done_line calls
    ck sample=2856 not-access=0 totals=0:10000:10000
    ;;
handler)
    # A signal handler's records wait in the reserve; main's next slow path
    # moves them into its buffer, and with 64-record buffers every such move
    # switches buffers (the handler stores 100 words). The sampler's counts
    # must stay exact: a switch there once left its scan mark in the old
    # buffer, and the next scan read across both buffers (wrong counts, or a
    # SIGSEGV when memory between them was unmapped).
    for m in samples comm; do
        run 0 "$collect" --mode $m --full --buffer-records 64 --period 97 -q -o s.zst \
            --full-output f.zst --force "$prog" handler 50 200 100
        done_line handler
        ck 'sample>=100' totals=0:10000:30001
    done
    ;;
pair-rr|pair-wr)
    f=$(echo "$scenario" | cut -c6)
    run 0 "$collect" --mode reuse --period 1 -q -o s.zst "$prog" pair "$f" r
    ck reuse=1 reuse-pair=0,0 distance=1 invalidation=0
    ;;
pair-rw|pair-ww)
    f=$(echo "$scenario" | cut -c6)
    run 0 "$collect" --mode reuse --period 1 -q -o s.zst "$prog" pair "$f" w
    ck reuse=0 invalidation=1 inval-pair=0,1 weighted=1
    ;;
triple-rr|triple-wr|triple-rw|triple-ww)
    f=$(echo "$scenario" | cut -c8); s=$(echo "$scenario" | cut -c9)
    run 0 "$collect" --mode reuse-shared --sockets 2 --period 1 -q -o s.zst "$prog" triple "$f" "$s"
    # workers k = 0, 1, 2 are T(m+k) (m = 1 when main, T0, is traced: it allocates
    # first), sockets 1, 0, 1: same socket: reuse (worker 0 -> 2); other socket:
    # invalidation only for a write (worker 0 -> 1); same core: nothing
    if [ "$s" = w ]; then inv=1; else inv=0; fi
    m=$(main_traced s.zst)
    ck reuse=1 reuse-pair=$m,$((m + 2)) invalidation=$inv inval-pair=$m,$((m + 1)) flags=shared config=sockets=2
    ;;
comm-false)
    run 0 "$collect" --mode comm --period load=0,store=1 -q -o s.zst "$prog" comm false 400
    m=$(main_traced s.zst)
    ck 'comm>=20' comm-pair=$m,$((m + 1)) flags=false   # the two workers (after main when it is traced)
    ;;
comm-true)
    run 0 "$collect" --mode comm --period load=0,store=1 -q -o s.zst "$prog" comm true 400
    m=$(main_traced s.zst)
    ck 'comm>=20' comm-pair=$m,$((m + 1)) flags=true
    ;;
comm-none)
    run 0 "$collect" --mode comm --period load=0,store=1 -q -o s.zst "$prog" comm none 400
    ck comm=0 'sample>=800' config=debug_registers=4 config=watch_bytes=8 config=line_size=64
    ;;
threads16)
    # more threads than cores and than debug registers
    for m in reuse comm reuse-shared; do
        run 0 "$collect" --mode $m --period 503 -q -o s.zst --force "$prog" threads 16 40 300
        done_line threads
        ck threads=$((16 + $(main_traced s.zst))) 'sample>=300'   # and main when it allocates
        if [ $m = reuse ]; then ck distance=80 invalidation=0; fi
    done
    ;;
exit-watched)
    run 0 "$collect" --mode reuse --period 97 -q -o s.zst "$prog" exit-watched 6
    done_line exit-watched
    ck 'threads>=25' 'sample>=100'
    run 0 "$collect" --mode comm --period 97 -q -o s.zst --force "$prog" exit-watched 6
    ck 'threads>=25'
    ;;
fork)
    run 0 "$collect" --mode reuse --period 211 -q -o s.zst "$prog" fork 30 400
    grep -q "samp_prog: child exec" out.txt || fail "child output lost"
    grep -q "samp_prog: fork done" out.txt || fail "parent output lost"
    # the child is not sampled: thread 0 has the parent's two reuse() calls only
    ck distance=60 totals=0:24000:24000 threads=1
    ;;
sigtrap)
    # A random seed, then seeds whose last samples fall on a[0..1] or b[0..1] of the last
    # round: their watches stay armed after the loop (those runs once failed, at distances
    # 77..79, when reuse() freed its arrays and free() wrote there; see samp_prog.c).
    for seed in random 28 325 518; do
        opt="--seed $seed"
        [ $seed = random ] && opt=""
        run 0 "$collect" --mode reuse --period 499 $opt -q -o s.zst --force "$prog" sigtrap 40 1000
        [ "$(grep -c 'own SIGTRAP handler' out.txt)" = 2 ] || fail "application handler: $(cat out.txt)"
        ck 'reuse>=10' distance=80
    done
    ;;
rearm)
    # Watchpoints re-targeted with PERF_EVENT_IOC_MODIFY_ATTRIBUTES (the default
    # where the kernel takes it) and reopened at every arm (PES_WATCH_REARM=reopen,
    # the path of kernels that refuse the change) must trap alike: the same
    # reuse, invalidation and expired-watch events, in programs whose runs all
    # take the same decisions: one thread, and two strictly alternating threads
    # whose registers go from RW (own sample) to W (the other's) and back.
    events() {
        "$bin/pes-dump" s.zst | grep -E '^T[0-9]+ (reuse|inval|watch_expired) ' |
            sed -E 's/ (addr|ip|time)=[^ ]*//g' | sort >"$1"
    }
    default=$(PES_WATCH_REARM= "$collect" --list-backends | sed -n 's/^watchpoints: //p')
    # MODE:PROGRAM ARGS:EVENT KINDS EXPECTED
    for case in "reuse:reuse 50 2000:reuse" "reuse:pingpong 50 40:reuse inval" \
                "reuse-shared --sockets 2:pingpong 50 40:inval"; do
        mode=${case%%:*}
        rest=${case#*:}
        args=${rest%%:*}
        kinds=${rest#*:}
        for path in modify reopen; do
            # shellcheck disable=SC2086
            PES_WATCH_REARM=$path run 0 "$collect" --mode $mode --period 37 --seed 11 -q -o s.zst --force \
                "$prog" $args
            events ev.$path.txt
        done
        for k in $kinds; do
            grep -q "^T[0-9]* $k " ev.reopen.txt || fail "$case: no $k event"
        done
        cmp -s ev.modify.txt ev.reopen.txt ||
            fail "$case: events differ between the re-arm paths: $(diff ev.modify.txt ev.reopen.txt | head -5)"
    done
    # pes-collect says which path this kernel gets
    case "$default" in
    "re-armed with PERF_EVENT_IOC_MODIFY_ATTRIBUTES") ;;
    "reopened per arm (kernel refused MODIFY_ATTRIBUTES: "*) ;;
    *) fail "--list-backends: '$default'" ;;
    esac
    ;;
spatial)
    run 0 "$collect" --mode reuse --granularity spatial --period 499 -q -o s.zst "$prog" reuse 50 1000
    ck 'reuse>=10' flags=spatial config=granularity=spatial
    ;;
openmp)
    # built by pes-clang (real pass) with OpenMP: each thread re-sweeps its own block
    "$bin/pes-clang" -O2 -fopenmp "$src/samp_omp.c" -o samp_omp || fail "pes-clang"
    export OMP_NUM_THREADS=2
    ./samp_omp 500 400 >plain.txt || fail "plain run"
    run 0 "$collect" --mode reuse --period 1009 -q -o s.zst ./samp_omp 500 400
    cmp -s out.txt plain.txt || fail "stdout changed: $(cat out.txt)"
    # one instrumented load per iteration (an FP sum is not vectorised at -O2): distance = K
    ck 'reuse>=20' distance=500 invalidation=0 threads=2
    # ComDetective on the false-sharing bench kernel: adjacent counters of one line
    "$bin/pes-clang" -O2 -fopenmp "$src/../../../bench/kernels/false_sharing.c" -o fs || fail "pes-clang"
    run 0 "$collect" --mode comm --period 97 -q -o s.zst --force ./fs adjacent 2000 50
    ck 'comm>=1' 'false-sharing>=1' comm-pair=0,1
    # both traces from one run, and pes-dump shows the sampled one
    run 0 "$collect" --mode reuse --full --period 1009 -q -o s.zst --force --full-output f.zst ./samp_omp 100 50
    "$bin/pes-dump" s.zst | grep -q "^T[01] sample " || fail "pes-dump shows no samples"
    "$bin/pes-dump" --limit 3 f.zst >/dev/null || fail "full trace unreadable"
    ;;
usage)
    run 2 "$collect" --mode bogus "$prog" reuse 1 1
    grep -q "^pes-collect: --mode: expected samples, reuse, reuse-shared or comm, got 'bogus'$" err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode reuse --period load=x "$prog" reuse 1 1
    grep -q "^pes-collect: --period: expected N or load=N,store=M" err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode reuse --period load=0,store=0 "$prog" reuse 1 1
    run 2 "$collect" --mode reuse --debug-registers 5 "$prog" reuse 1 1
    run 2 "$collect" --mode reuse --backend pebs "$prog" reuse 1 1
    grep -q "^pes-collect: --backend pebs: unavailable: " err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode reuse /bin/true
    grep -q "not built with pes-clang and this machine has no usable PMU" err.txt || fail "$(cat err.txt)"
    [ "$(wc -l <err.txt)" = 1 ] || fail "more than one line"
    run 0 "$collect" --list-backends
    grep -q "^pebs  unavailable: " out.txt || fail "$(cat out.txt)"
    grep -q "^soft  available" out.txt || fail "$(cat out.txt)"
    # one file named twice: the sampled trace would be lost (refused before the run, file unchanged)
    echo keep >x.zst
    sum=$(cksum <x.zst)
    run 2 "$collect" --mode reuse --full --force -o x.zst --full-output x.zst "$prog" reuse 1 1
    grep -q "^pes-collect: --output x.zst and --full-output x.zst: the same file; the two traces need two files$" \
        err.txt || fail "$(cat err.txt)"
    [ ! -s out.txt ] || fail "the program ran"
    [ "$(cksum <x.zst)" = "$sum" ] || fail "x.zst changed"
    ln x.zst hard.zst || fail "ln"
    run 2 "$collect" --mode reuse --full --force -o x.zst --full-output hard.zst "$prog" reuse 1 1
    grep -q "the same file" err.txt || fail "$(cat err.txt)"
    # not there yet: the same directory and name, spelled differently
    run 2 "$collect" --mode reuse --full -o new.zst --full-output ./new.zst "$prog" reuse 1 1
    grep -q "^pes-collect: --output new.zst and --full-output ./new.zst: the same file" err.txt || fail "$(cat err.txt)"
    [ ! -e new.zst ] || fail "new.zst written"
    # conflicting or meaningless settings
    run 2 "$collect" --mode reuse --mode comm "$prog" reuse 1 1
    grep -q "^pes-collect: --mode: given twice ('reuse' and 'comm'); a run records one mode$" err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode comm --granularity spatial "$prog" reuse 1 1
    grep -q "^pes-collect: --granularity: only with --mode reuse or reuse-shared, not comm$" err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode reuse --sockets 2 "$prog" reuse 1 1
    grep -q "^pes-collect: --sockets: only with --mode reuse-shared, not reuse$" err.txt || fail "$(cat err.txt)"
    run 2 "$collect" --mode samples --debug-registers 2 "$prog" reuse 1 1
    grep -q "^pes-collect: --debug-registers: only with --mode reuse, reuse-shared or comm" err.txt || fail "$(cat err.txt)"
    # the same mode twice is not a conflict
    run 0 "$collect" --mode reuse --mode reuse -q -o r.zst "$prog" reuse 50 100
    done_line reuse
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
