#!/usr/bin/env bash
# Runs every libFuzzer target for longer than CI does (CI: 10-20 s each).
#   scripts/fuzz.sh [SECONDS]     SECONDS per target, default 600
# Builds the normal tree (build/) if needed; needs clang, as the CI build.
# Each target keeps its corpus in build/fuzz/NAME/corpus (seeded from
# tests/fuzz/, grown across runs); a failure leaves crash-*/timeout-*/leak-*
# files in build/fuzz/NAME: commit a minimal one under tests/fuzz/*_seeds/
# with the fix, so CI replays it. Exit status is non-zero if any target fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
case $seconds in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build fuzz_trace_reader fuzz_text_reader fuzz_sampled trace_sample_gen
root=$PWD
status=0
for target in trace_reader text_reader sampled; do
  dir=build/fuzz/$target
  mkdir -p "$dir/corpus"
  case $target in
  trace_reader)
    cp tests/fuzz/trace_seeds/* "$dir/corpus/"
    build/bin/trace_sample_gen "$dir/corpus/sample.pes"
    build/bin/trace_sample_gen "$dir/corpus/nofooter.pes" --no-footer
    build/bin/trace_sample_gen "$dir/corpus/sampled.pes" --sampled
    len=8192 ;;
  text_reader) cp tests/fuzz/text_seeds/* "$dir/corpus/"; len=4096 ;;
  sampled) cp tests/fuzz/sampled_seeds/* "$dir/corpus/"; len=4096 ;;
  esac
  echo "== fuzz_$target: $seconds s, corpus $dir/corpus"
  if ! (cd "$dir" && "$root/build/bin/fuzz_$target" -max_total_time="$seconds" -max_len=$len \
          -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 corpus 2>log); then
    echo "FAIL: fuzz_$target: see $dir/log and the crash-* file there" >&2
    tail -30 "$dir/log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' "$dir/log" || true
  fi
done
exit $status
