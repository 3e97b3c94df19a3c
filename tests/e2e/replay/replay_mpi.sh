#!/usr/bin/env bash
# pes-replay-mpi on 1, 2 and 4 ranks prints pes-replay's report byte for byte:
# text traces (read in parts, one per rank) cut into many small windows, and
# the committed full traces with
# two shared caches (JSON, one text and one CSV report; --simulate and --cores
# too, on traces of 1, 2 and 16 threads). Then the failure paths: a rank that fails (injected), rank 0 failing,
# and what pes-replay-mpi refuses; each ends every rank, non-zero, with one
# line from rank 0.
. "$(dirname "$0")/common.sh"
data=$(cd "$(dirname "$0")/../../data" && pwd)
# Containers: ranks may outnumber the CPUs, and run as root.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() {   # RANKS ARGS...
  local np=$1
  shift
  mpirun --allow-run-as-root --oversubscribe -np "$np" "$PES_BIN/pes-replay-mpi" "$@"
}
awk 'BEGIN { x = 4242; for (i = 0; i < 300000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
             printf "0x%x %s\n", (x % 60000) * 8 + (i % 3 == 0 ? 0x100000 : 0), (x % 5 == 0 ? "W" : "R") } }' >"$work/t.txt"
check() {   # NAME WINDOW TRACE ARGS...: every rank count the same as pes-replay
  local name=$1 window=$2 trace=$3
  shift 3
  "$PES_BIN/pes-replay" "$trace" --machine "${machine:-haswell}" "$@" >"$work/$name.ref" 2>"$work/$name.ref.err" ||
    { cat "$work/$name.ref.err" >&2; fail "$name: pes-replay failed"; }
  for np in 1 2 4; do
    mpi "$np" "$trace" --machine "${machine:-haswell}" --mpi-window "$window" "$@" >"$work/$name.np$np" 2>"$work/$name.np$np.err" ||
      { cat "$work/$name.np$np.err" >&2; fail "$name: $np ranks failed"; }
    cmp -s "$work/$name.ref" "$work/$name.np$np" || fail "$name: $np ranks differ from pes-replay"
    # the same warnings, once (rank 0 speaks for all), under the command's own name
    sed -n 's/^pes-replay-mpi: /pes-replay: /p' "$work/$name.np$np.err" >"$work/$name.np$np.warn"
    cmp -s "$work/$name.ref.err" "$work/$name.np$np.warn" ||
      fail "$name: $np ranks warn otherwise: $(diff "$work/$name.ref.err" "$work/$name.np$np.warn" | head -5)"
  done
  echo "ok: $name: 1, 2, 4 ranks identical"
}
check text 7919 "$work/t.txt" --format json --line 8
check text_small 1000 "$work/t.txt" --format json
check text_report 25000 "$work/t.txt"
jq -e '.configs[0].prd[0].histogram.accesses == 300000' "$work/text.ref" >/dev/null || fail "access count"
# Text traces are read in parts, one per rank: other formats, a cut binary
# trace (its warning), and a trace of fewer lines than ranks.
awk 'BEGIN { x = 7; for (i = 0; i < 50000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
             if (i % 5 == 0) printf "I  %08x,4\n", x % 65536; else printf " %s %08x,%d\n", (i % 7 ? "L" : "M"), (x % 9000) * 4, (i % 3 ? 4 : 8) } }' >"$work/l.txt"
check lackey 3000 "$work/l.txt" --format json
LC_ALL=C awk 'BEGIN { x = 9; for (i = 0; i < 40000; i++) { x = (x * 1103515245 + 12345) % 2147483648; a = (x % 70000) * 8;
             for (b = 0; b < 8; b++) { printf "%c", a % 256; a = int(a / 256) } } printf "xyz" }' >"$work/t.bin"
check binary64 4000 "$work/t.bin" --format json --input-format binary64
grep -q '"truncated": *true' "$work/binary64.ref" || fail "binary64: not truncated"
printf '0x40\n0x80 W\n0x40\n' >"$work/three.txt"
check three_lines 1 "$work/three.txt" --format json
check gemm 3000 "$data/gemm40.full.zst" --format json --sockets 2
check false_sharing 50000 "$data/false_sharing.full.zst" --format json --sockets 2
check false_sharing_text 50000 "$data/false_sharing.full.zst" --sockets 2
check gemm_csv 3000 "$data/gemm40.full.zst" --format csv --line 8
check gemm_sim_cores 5000 "$data/gemm40.full.zst" --format json --simulate --cores 2,3
# a spin-wait cut by every rank's part (trace_stress_gen spin): found whole,
# as pes-replay finds it (each part carries its open runs on past its end)
"$STRESS_GEN" spin "$work/spin.zst" 20000
check spin 3000 "$work/spin.zst" --format json
jq -e '.trace.timing_dependent.spin_waits[0].longest_wait == 20001' "$work/spin.ref" >/dev/null ||
  fail "spin: the wait is not 20,001 loads long"

# --simulate: every rank simulates its share of the address partitions
# (physically indexed by default, virtually with --page-map virtual), rank 0
# adds the others' counts and cache-line tables; traces of 1, 2 and 16 threads
check sim1 5000 "$data/gemm28.t1.full.zst" --format json --simulate --top 50
check sim2 50000 "$data/false_sharing.full.zst" --format json --simulate --sockets 2 --top 50 --jobs 2
check sim16 20000 "$data/gemm40.t16.full.zst" --format json --simulate --sockets 2 --top 50
check sim16virt 20000 "$data/false_sharing.t16.full.zst" --format json --simulate --page-map virtual --by object
check sim16_text 20000 "$data/false_sharing.t16.full.zst" --simulate --sockets 2
check cores1 5000 "$data/gemm28.t1.full.zst" --format json --simulate --cores 1,2,4,8,16
# --cores: each configuration runs whole on one rank, which sends its report
# section to rank 0 (one part message per configuration of another rank).
# Dealt largest first to the least loaded rank (c cores weigh c + 1): on 2
# ranks 4 -> rank 0, 2 and 1 -> rank 1; on 4 ranks 4, 2, 1 -> ranks 0, 1, 2.
parts_of() {   # RANKS: "rank:parts" of each rank, from PES_MPI_STATS
  PES_MPI_STATS=1 mpi "$1" "$data/gemm28.t1.full.zst" --machine haswell --cores 1,2,4 \
    --simulate --format json 2>&1 >/dev/null |
    sed -n 's/^pes-replay-mpi: rank \([0-9]*\): .* and \([0-9]*\) parts .*/\1:\2/p' | sort | tr '\n' ' '
}
[ "$(parts_of 2)" = "0:2 1:2 " ] || fail "--cores 1,2,4 on 2 ranks: parts $(parts_of 2), want 0:2 1:2"
[ "$(parts_of 4)" = "0:2 1:1 2:1 3:0 " ] || fail "--cores 1,2,4 on 4 ranks: parts $(parts_of 4)"
echo "ok: --cores configurations dealt to ranks"
# the text report of dealt sections: their text-only nodes travel too
check cores_text 5000 "$data/gemm28.t1.full.zst" --cores 1,2,4 --simulate --by object
# A machine with the TLB and prefetch terms (model/machines: tlb.*,
# prefetch.max_stride): read in parts, each part sends its page summaries
# and prefetch walks, which rank 0 resolves; with --simulate or --cores
# rank 0 (or the configuration's rank) computes them over the whole stream.
# The runtime is pes-replay's either way.
"$PES_BIN/pes-replay" --machine haswell --show-machine | grep -v '^tlb\.\|^validation' >"$work/reach.machine"
printf 'tlb.entries = 64\ntlb.page = 4K\ntlb.miss_latency = 30\nprefetch.max_stride = 2K\n' >>"$work/reach.machine"
machine="$work/reach.machine" check reach_text 25000 "$work/t.txt" --format json
machine="$work/reach.machine" check reach_gemm 3000 "$data/gemm40.full.zst" --format json --sockets 2
# (the random text trace walks no constant stride: its prefetched share is 0, but present)
for t in reach_text reach_gemm; do
  jq -e '.configs[0].model.runtime | .terms.tlb.cycles > 0 and .tlb_lookups > 0 and has("prefetched")' \
    "$work/$t.ref" >/dev/null || fail "$t: no TLB or prefetch term in the runtime"
done
jq -e '.configs[0].model.runtime.prefetched > 0.5' "$work/reach_gemm.ref" >/dev/null ||
  fail "reach_gemm: gemm's strided walks are not prefetched"
# --simulate and --cores 1,2,4 (dealt), two sockets, traces of 1, 2 and 16 threads
for t in gemm28.t1 false_sharing gemm40.t16; do
  machine="$work/reach.machine" check "reach_cores_$t" 5000 "$data/$t.full.zst" --format json \
    --simulate --cores 1,2,4 --sockets 2
done

# Failures: one line from rank 0, non-zero everywhere, nobody left waiting.
expect_mpi_fail() {   # NEEDLE RANKS ARGS...
  local needle=$1 np=$2
  shift 2
  local rc=0
  # a hang guard (ranks left waiting), not a time verdict
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -ne 124 ] || fail "HANG: $np ranks still running after 300 s: $*"
  [ "$rc" -ne 0 ] || { cat "$work/err" >&2; fail "expected a failure (rc $rc): $*"; }
  [ "$(grep -c '^pes-replay-mpi: ' "$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "not one line: $*"; }
  grep -qF -- "$needle" "$work/err" || { cat "$work/err" >&2; fail "stderr of '$*' lacks '$needle'"; }
  [ ! -s "$work/out" ] || fail "a report after a failure: $*"
  echo "ok: $np ranks: $(grep '^pes-replay-mpi: ' "$work/err")"
}
for k in 0 1 3; do
  expect_mpi_fail "failure injected" 4 -x PES_MPI_TEST_FAIL=$k "$PES_BIN/pes-replay-mpi" "$work/t.txt" \
    --machine haswell --mpi-window 5000
done
# A bad line in the part of a later rank: pes-replay's line, naming its line in the whole file.
sed '250000s/.*/0x10 X/' "$work/t.txt" >"$work/bad.txt"
for np in 2 4; do
  expect_mpi_fail "bad.txt:250000: expected" $np "$PES_BIN/pes-replay-mpi" "$work/bad.txt" --machine haswell
done
expect_mpi_fail "No such file" 2 "$PES_BIN/pes-replay-mpi" "$work/missing.txt" --machine haswell
expect_mpi_fail "--mpi-window: expected an integer" 2 "$PES_BIN/pes-replay-mpi" "$work/t.txt" --mpi-window 0
expect_mpi_fail "--compare: not distributed" 2 "$PES_BIN/pes-replay-mpi" --compare "$work/t.txt" "$work/t.txt"
expect_usage "--mpi-window: only with pes-replay-mpi" "$PES_BIN/pes-replay" "$work/t.txt" --mpi-window 10
echo "pes-replay-mpi: identical reports on 1, 2 and 4 ranks; failures end every rank"
