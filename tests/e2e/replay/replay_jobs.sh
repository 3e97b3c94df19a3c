#!/usr/bin/env bash
# Replay threads change nothing: --jobs 1..16 give byte-identical JSON on a text
# trace long enough for many batches, PARDA chunks and parallel text blocks,
# and on recorded traces of 1, 2 and 16 threads with shared caches, mimicked
# cores and the simulation split into address partitions (physically and
# virtually indexed caches, one and two sockets; also run under TSan).
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
check text "$work/t.txt" --line 8
jq -e '.configs[0].prd[0].histogram.accesses == 300000' "$work/text.j1.json" >/dev/null || fail "access count"
check sockets "$data/false_sharing.full.zst" --sockets 2 --simulate
check cores "$data/gemm40.full.zst" --cores 2,3 --simulate
check sim2 "$data/false_sharing.full.zst" --simulate --top 50
check sim2virt "$data/gemm40.full.zst" --simulate --page-map virtual --top 50 --by site
# traces of 1 and 16 threads (OpenMP), the second with false sharing among all 16
"$PES_BIN/pes-clang" -O2 -fopenmp "$PES_SRC/bench/kernels/gemm.c" -o "$work/gemm"
"$PES_BIN/pes-clang" -O2 -fopenmp "$PES_SRC/bench/kernels/false_sharing.c" -o "$work/fs"
OMP_NUM_THREADS=1 "$PES_BIN/pes-collect" -q --full -o "$work/g1.zst" -- "$work/gemm" 24 >/dev/null
OMP_NUM_THREADS=16 "$PES_BIN/pes-collect" -q --full -o "$work/g16.zst" -- "$work/gemm" 24 >/dev/null
OMP_NUM_THREADS=16 "$PES_BIN/pes-collect" -q --full -o "$work/fs16.zst" -- "$work/fs" adjacent 200 5 >/dev/null
check sim1 "$work/g1.zst" --simulate --top 50
check cores1 "$work/g1.zst" --cores 1,2,4,8,16 --simulate --top 20
check sim16 "$work/g16.zst" --simulate --sockets 2 --top 50
check fs16 "$work/fs16.zst" --simulate --top 50
check fs16virt "$work/fs16.zst" --simulate --page-map virtual --sockets 2 --by object
jq -e '.configs[0].simulation.invalidations.false > 0' "$work/fs16.j1.json" >/dev/null || fail "fs16: no false sharing"
echo "--jobs 1, 2, 3, 4, 8 and 16 identical"
