#!/usr/bin/env bash
# Replay threads change nothing: --jobs 1..16 give byte-identical JSON on a text
# trace long enough for many batches, PARDA chunks and parallel text blocks,
# and on recorded traces of 1, 2 and 16 threads with shared caches, mimicked
# cores and the simulation split into address partitions (physically and
# virtually indexed caches, one and two sockets; also run under TSan), with
# the stages on workers and, where the report allows it, in time parts on
# threads (--parts yes).
. "$(dirname "$0")/common.sh"
data=$(cd "$(dirname "$0")/../../data" && pwd)
awk 'BEGIN { x = 12345; for (i = 0; i < 300000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
             printf "0x%x %s\n", (x % 50000) * 8, (x % 7 == 0 ? "W" : "R") } }' >"$work/t.txt"
check() {   # NAME TRACE ARGS...: every --jobs the same as --jobs 1
  local name=$1 trace=$2
  shift 2
  for j in 1 2 3 4 8 16; do
    "$PES_BIN/pes-replay" "$trace" --machine haswell --format json --jobs "$j" "$@" >"$work/$name.j$j.json" ||
      fail "$name --jobs $j failed"
    [ "$j" = 1 ] || cmp -s "$work/$name.j1.json" "$work/$name.j$j.json" || fail "$name: --jobs $j differs from --jobs 1"
  done
}
# the same with --parts yes too: N time parts on N threads, part 0 resolving
# the others (docs/replay.md, "Replay threads"); --stats shows the parts ran
check_parts() {   # NAME TRACE ARGS...
  local name=$1 trace=$2
  shift 2
  check "$name" "$trace" --parts no "$@"
  for j in 2 3 4 8 16; do
    "$PES_BIN/pes-replay" "$trace" --machine haswell --format json --jobs "$j" --parts yes "$@" \
      >"$work/$name.p$j.json" || fail "$name --jobs $j --parts yes failed"
    cmp -s "$work/$name.j1.json" "$work/$name.p$j.json" || fail "$name: --jobs $j --parts yes differs from --jobs 1"
  done
  "$PES_BIN/pes-replay" "$trace" --machine haswell --jobs 3 --parts yes --stats "$@" 2>"$work/$name.stats" >/dev/null
  grep -q '^  part 2 ' "$work/$name.stats" || fail "$name: --parts yes ran no part 2"
  grep -q 'parts resolution' "$work/$name.stats" || fail "$name: no parts resolution in --stats"
}
check_parts text "$work/t.txt" --line 8
# ten slots of the simulation's partitions: the shadow's stacks (a core's, a
# socket's) race to hand each on, in order
check textsim "$work/t.txt" --simulate --top 20
jq -e '.configs[0].prd[0].histogram.accesses == 300000' "$work/text.j1.json" >/dev/null || fail "access count"
check sockets "$data/false_sharing.full.zst" --sockets 2 --simulate
check cores "$data/gemm40.full.zst" --cores 2,3 --simulate
check sim2 "$data/false_sharing.full.zst" --simulate --top 50
check sim2virt "$data/gemm40.full.zst" --simulate --page-map virtual --top 50 --by site
# traces of 1 and 16 OpenMP threads (committed: sanitizer builds cannot run
# pes-clang's programs), made with a pes-clang -O2 -fopenmp build of
# bench/kernels/gemm.c and false_sharing.c:
#   OMP_NUM_THREADS=1 pes-collect --full -o gemm28.t1.full.zst -- gemm 28
#   OMP_NUM_THREADS=16 pes-collect --full -o gemm40.t16.full.zst -- gemm 40
#   OMP_NUM_THREADS=16 pes-collect --full -o false_sharing.t16.full.zst -- false_sharing adjacent 1000 8
check sim1 "$data/gemm28.t1.full.zst" --simulate --top 50
check cores1 "$data/gemm28.t1.full.zst" --cores 1,2,4,8,16 --simulate --top 20
check sim16 "$data/gemm40.t16.full.zst" --simulate --sockets 2 --top 50
check sim16s4 "$data/gemm40.t16.full.zst" --simulate --sockets 4 --top 50
check fs16 "$data/false_sharing.t16.full.zst" --simulate --top 50
check fs16virt "$data/false_sharing.t16.full.zst" --simulate --page-map virtual --sockets 2 --by object
# reuse profiles alone: read in parts with --parts yes
check_parts prd1 "$data/gemm28.t1.full.zst" --top 50
check_parts prd2 "$data/false_sharing.full.zst" --top 50
check_parts prd16 "$data/gemm40.t16.full.zst" --sockets 2 --top 50
check_parts fs16prd "$data/false_sharing.t16.full.zst" --top 50
# a spin-wait that every time part cuts (trace_stress_gen spin: thread 1
# polls a flag 20,000 times while thread 0 works, then once more after
# thread 0's store): one wait of 20,001 loads, found whole in every part
# count (each part carries its open runs on past its end)
"$STRESS_GEN" spin "$work/spin.zst" 20000
check_parts spin "$work/spin.zst" --top 10
jq -e '.trace.timing_dependent | .sites == 1 and .accesses == 20001
  and .spin_waits[0].line == 11 and .spin_waits[0].waits == 1
  and .spin_waits[0].longest_wait == 20001' "$work/spin.j1.json" >/dev/null ||
  fail "spin: $(jq -c .trace.timing_dependent "$work/spin.j1.json")"

jq -e '.configs[0].simulation.invalidations.false > 10000' "$work/fs16.j1.json" >/dev/null || fail "fs16: no false sharing"
echo "--jobs 1, 2, 3, 4, 8 and 16 identical (stages and parts)"
