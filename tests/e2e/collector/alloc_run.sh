#!/bin/sh
# alloc_run.sh SCENARIO BIN_DIR SOURCE_DIR CC — heap blocks in full and sampled
# traces: alloc_prog.c / alloc_new.cpp built by pes-clang (and alloc_prog by
# plain CC, for a preloaded runtime), run under the collector, their blocks
# checked by alloc_check.py against what the program printed and its source.
set -u
scenario=$1
bin=$2
src=$3
cc=$4
tag=alloc
. "$(dirname "$0")/scenario_common.sh"
py=${PYTHON:-python3}
check() { "$py" "$src/alloc_check.py" "$@" || fail "alloc_check $2 $3 ($1)"; }
dump() { "$bin/pes-dump" --format json "$1" >"$2" || fail "pes-dump $1"; }

case "$scenario" in
full|sampled|both)
    "$bin/pes-clang" -O1 -g -pthread "$src/alloc_prog.c" -o prog || fail "pes-clang"
    ./prog quiet >plain.txt 2>&1; [ $? = 3 ] || fail "plain run: status"
    case $scenario in
    full) opts="--full -o t.zst" ;;
    sampled) opts="--mode samples --backend soft --period 100 --seed 1 -o t.zst" ;;
    both) opts="--full --mode samples --backend soft --period 100 --seed 1 -o s.zst --full-output t.zst" ;;
    esac
    # the program's output and status are its own
    run 3 "$bin/pes-collect" -q $opts -- ./prog quiet
    cmp -s out.txt plain.txt || fail "stdout changed: $(cat out.txt)"
    [ -s err.txt ] && fail "stderr: $(cat err.txt)"
    run 3 "$bin/pes-collect" -q --force $opts -- ./prog report
    cp out.txt report.txt
    dump t.zst t.json
    check t.json report.txt prog --stacks
    if [ $scenario = both ]; then
        dump s.zst s.json
        check s.json report.txt prog --stacks
    fi
    # pes-dump's text and --stats name the blocks too
    "$bin/pes-dump" t.zst >t.txt || fail "pes-dump text"
    "$bin/pes-dump" --stats t.zst >stats.txt || fail "pes-dump --stats"
    if [ $scenario = sampled ]; then
        # a sampled trace: samples name their blocks, no event per allocation
        grep -Eq "^T[0-9]+ sample .* block=alloc-site [0-9]+ \+[0-9]+ of [0-9]+ " t.txt ||
            fail "text dump: no sample names its heap block"
        grep -Eq "^heap +sites [1-9][0-9]*  allocs 0  bytes 0  frees 0  stacks 2$" \
            stats.txt || fail "stats: $(grep heap stats.txt)"
    else
        a=$(sed -n 's/^a=//p' report.txt)
        grep -Eq "^T[0-9]+ alloc +(addr=)?$a " t.txt || fail "text dump: no alloc line for a=$a"
        grep -Eq "^heap +sites [1-9][0-9]*  allocs [1-9][0-9]*  bytes [0-9]+  frees [1-9][0-9]*  stacks 2$" \
            stats.txt || fail "stats: $(grep heap stats.txt)"
    fi
    # --no-heap: no allocation records, the header says so, the run is the same
    run 3 "$bin/pes-collect" -q --force --no-heap $opts -- ./prog quiet
    cmp -s out.txt plain.txt || fail "--no-heap: stdout changed: $(cat out.txt)"
    "$bin/pes-dump" --stats t.zst >nh.txt || fail "pes-dump --stats (--no-heap)"
    # (thread stacks still are: one record per thread, stack objects need them)
    grep -Eq "^heap +sites 0  allocs 0  bytes 0  frees 0  stacks [0-9]+$" nh.txt ||
        fail "--no-heap: heap blocks recorded: $(grep heap nh.txt)"
    grep -Eq "^config +heap=0$" nh.txt || fail "--no-heap: the header's config does not say heap=0"
    # a run that records no thread at all (its only instrumented work
    # optimised away, no heap records) still ends with a FOOTER
    printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >none.c
    "$bin/pes-clang" -O1 none.c -o none || fail "pes-clang none.c"
    run 0 "$bin/pes-collect" -q --force --no-heap $opts -- ./none
    "$bin/pes-dump" --stats t.zst >none.txt 2>&1 || fail "pes-dump --stats (no thread)"
    grep -q "FOOTER" none.txt || fail "a run without threads has no FOOTER: $(cat none.txt)"
    grep -q "warning" none.txt && fail "a run without threads: $(grep warning none.txt)"
    ;;
new)
    "$bin/pes-clang++" -O1 -g "$src/alloc_new.cpp" -o prog || fail "pes-clang++"
    run 0 "$bin/pes-collect" -q --full -o t.zst -- ./prog
    dump t.zst t.json
    check t.json out.txt new
    # every access sampled: each of the two blocks gets a sample that names it
    run 0 "$bin/pes-collect" -q --mode samples --backend soft --period 1 -o s.zst -- ./prog
    dump s.zst s.json
    check s.json out.txt new
    ;;
preload)
    # a program not built with pes-clang, the runtime preloaded: the same
    # output and status, and its heap blocks recorded all the same
    "$cc" -O1 -g -pthread "$src/alloc_prog.c" -o plain || fail "cc"
    ./plain quiet >plain.txt 2>&1; [ $? = 3 ] || fail "plain run: status"
    rt="$bin/../lib/libpes-rt.so"
    [ -r "$rt" ] || fail "no $rt"
    run 3 env LD_PRELOAD="$rt" PES_FULL_OUTPUT=p.zst ./plain quiet
    cmp -s out.txt plain.txt || fail "stdout changed under LD_PRELOAD: $(cat out.txt)"
    [ -s err.txt ] && fail "stderr: $(cat err.txt)"
    run 3 env LD_PRELOAD="$rt" PES_FULL_OUTPUT=q.zst ./plain report
    cp out.txt report.txt
    dump q.zst q.json
    check q.json report.txt prog
    # with tracing off the interposer only forwards
    run 3 env LD_PRELOAD="$rt" ./plain quiet
    cmp -s out.txt plain.txt || fail "stdout changed with tracing off"
    ;;
*)
    fail "unknown scenario"
    ;;
esac
exit 0
