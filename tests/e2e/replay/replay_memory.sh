#!/usr/bin/env bash
# pes-replay and pes-dump stay within a stated memory limit and a time bound on
# inputs crafted to grow memory (docs/replay.md, "Memory"): a thread with no
# time marks over 16 Mi accesses, 100,000 short-lived threads, 10,000 threads
# alive at once, one 2^32-1-byte memcpy record, sites with ids near 2^22 (full
# and sampled traces),
# /dev/zero, a fifo and a text file without newlines. Each command runs under
# `ulimit -v` LIMIT_MIB and `ulimit -t` CPU_MAX_S: the bound is on CPU time, all
# threads together, never wall time (a loaded CI machine stretches wall time,
# not the work done). It must succeed with the right counts, or fail with the
# stated one-line error; a command that runs past its CPU bound dies by SIGXCPU
# or SIGKILL and fails the test.
. "$(dirname "$0")/common.sh"
: "${STRESS_GEN:?STRESS_GEN must name the trace_stress_gen program}"
LIMIT_MIB=512
CPU_MAX_S=120
# `ulimit -v` counts address space reserved, not used: glibc reserves 64 MiB
# per malloc arena, and a thread that allocates may get its own arena, so how
# many the reading, merge and engine threads happen to create (timing) would
# decide the verdict. Two arenas keep the limit about the replay's own memory.
export MALLOC_ARENA_MAX=2

# run EXPECT CMD...: EXPECT is "ok" or the text the one-line error must hold.
run() {
  local expect=$1; shift
  local rc=0
  (ulimit -v $((LIMIT_MIB * 1024)) -t "$CPU_MAX_S"; exec "$@") >"$work/out" 2>"$work/err" || rc=$?
  # 128+SIGXCPU / 128+SIGKILL: the CPU-time bound ended it
  [ "$rc" -ne 152 ] && [ "$rc" -ne 137 ] || fail "exceeded ${CPU_MAX_S} s of CPU time (exit $rc): $*"
  grep -q 'Segmentation\|Aborted\|core dumped' "$work/err" && fail "crashed: $*"
  if [ "$expect" = ok ]; then
    [ "$rc" -eq 0 ] || { cat "$work/err" >&2; fail "exit $rc under ulimit -v ${LIMIT_MIB} MiB: $*"; }
    echo "ok: $*"
  else
    [ "$rc" -eq 1 ] || { cat "$work/err" >&2; fail "expected exit 1, got $rc: $*"; }
    grep -qF -- "$expect" "$work/err" || { cat "$work/err" >&2; fail "stderr of '$*' lacks '$expect'"; }
    [ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "not one line: $*"; }
    echo "ok (exit 1): $* -> $(cat "$work/err")"
  fi
}
# json_is FILTER: the last pes-replay --format json output satisfies a jq filter.
json_is() { jq -e "$1" "$work/out" >/dev/null || { head -c 600 "$work/out" >&2; fail "JSON: $1"; }; }

R="$PES_BIN/pes-replay"
D="$PES_BIN/pes-dump"

# One thread, 2^24 accesses (BB entry + load each) between its start mark and
# its THREAD_END: one 2^25-record segment, 800 MB if held whole.
"$STRESS_GEN" no-marks "$work/nomarks.zst" 16777216
run ok "$R" "$work/nomarks.zst" --machine haswell --format json
json_is '.trace.accesses == 16777216 and .trace.bb_executions == 16777216 and .trace.threads == 1'
json_is '.configs[0].prd[0].histogram.cold == 4096'   # 4096 lines, each missed once
run ok "$R" "$work/nomarks.zst" --machine haswell --jobs 2 --format json
json_is '.trace.accesses == 16777216'
run ok "$D" --stats "$work/nomarks.zst"
grep -q 'records  access 16777216  bb 16777216  control 2 ' "$work/out" || fail "pes-dump --stats counts"

# 100,000 threads of 2 accesses, one after the other.
"$STRESS_GEN" threads "$work/threads.zst" 100000 2
run ok "$R" "$work/threads.zst" --machine haswell --format json
json_is '.trace.threads == 100000 and .trace.accesses == 200000 and (.configs[0].prd | length) == 100000'
json_is '[.configs[0].prd[].histogram.cold] | all(. == 2)'   # each thread: 2 lines, cold once each
run ok "$R" "$work/threads.zst" --machine haswell --sample-rate 0.5 --sample-check --format json
json_is '(.configs[0].approximation.profiles | length) == 100001 and .configs[0].crd[0].histogram.accesses == 200000'
run ok "$D" "$work/threads.zst"
[ "$(grep -c ' access ' "$work/out")" -eq 200000 ] || fail "pes-dump: 200000 access lines"
run ok "$D" --stats "$work/threads.zst"

# 10,000 threads of 4 accesses, all running at the same time.
"$STRESS_GEN" concurrent "$work/concurrent.zst" 10000 4
run ok "$R" "$work/concurrent.zst" --machine haswell --format json
json_is '.trace.threads == 10000 and .trace.accesses == 40000'

# One memcpy destination of 2^32-1 bytes between three 8-byte loads: replayed
# as its first 2^20 lines, counted in full, with a warning.
"$STRESS_GEN" huge-range "$work/huge.zst"
for opts in "" "--simulate" "--cores 1,2" "--line 8"; do
  # shellcheck disable=SC2086
  run ok "$R" "$work/huge.zst" --machine haswell $opts --format json
  json_is '.trace.clipped_ranges == 1 and .trace.accesses == 4 and .trace.bytes == 4294967295 + 24'
  grep -q "1 variable-size access longer than" "$work/err" || fail "no clipping warning: $opts"
done
run ok "$R" "$work/huge.zst" --machine haswell --format json
json_is '.configs[0].prd[0].histogram.accesses == 3 + 1048576'   # 3 loads + 2^20 lines
run ok "$D" "$work/huge.zst"
grep -q 'access  0x10000000 4294967295 W' "$work/out" || fail "pes-dump shows the whole range"

# Sites with ids near 2^22: tables indexed by id stay small.
"$STRESS_GEN" high-ids "$work/high.zst"
run ok "$R" "$work/high.zst" --machine haswell --simulate --format json
json_is '.trace.accesses == 200'
"$STRESS_GEN" sampled-high-ids "$work/shigh.zst"
run ok "$R" "$work/shigh.zst" --format json
json_is '.sites == [{"site":4194296,"label":"stress.c:10:5 load kernel","samples":100,"reuses":0,"invalidations":0,"comm_true":0,"comm_false":0}]'

# Not regular files, and a text file without newlines: a clear error at once.
run "/dev/zero: not a regular file (a character device)" "$R" /dev/zero --machine haswell
run "/dev/zero: not a regular file" "$D" /dev/zero
mkfifo "$work/fifo"
run "fifo: not a regular file (a fifo or pipe)" "$R" "$work/fifo" --machine haswell
run "fifo: not a regular file" "$D" "$work/fifo"
head -c $((64 * 1024 * 1024)) /dev/zero | tr '\0' '7' >"$work/nonl.txt"
run "nonl.txt:1: line longer than 4096 bytes" "$R" "$work/nonl.txt" --machine haswell
{ printf '0x1000\n0x2000 W\n'; head -c 5000 /dev/zero | tr '\0' ' '; printf '0x3000\n'; } >"$work/long.txt"
run "long.txt:3: line longer than 4096 bytes" "$R" "$work/long.txt" --machine haswell
echo "memory stays under ulimit -v ${LIMIT_MIB} MiB"
