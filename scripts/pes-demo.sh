#!/usr/bin/env bash
# The pes demo: compile the bundled OpenMP kernel (gemm.c) with pes-clang,
# record a full trace with pes-collect, print what was recorded (pes-dump) and
# what it means for the caches (pes-replay, recorded threads and PPT-Multicore
# mimicking), and the same as one HTML page, OUTPUT_DIR/demo-report.html. Runs from an install prefix (where it is installed as
# share/pes/demo/demo.sh, next to the kernel) or from a build tree
# (scripts/demo.sh sets PES_PREFIX and PES_DEMO_KERNEL).
#
# usage: demo.sh [OUTPUT_DIR]        (default: ./pes-demo)
# PES_PREFIX       the directory with bin/pes-clang, bin/pes-collect, ...
#                  (default: the prefix this script is installed in)
# PES_DEMO_KERNEL  the kernel's source (default: gemm.c next to this script)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PES_PREFIX:-$here/../../..}
bin=$(cd "$prefix" && pwd)/bin
kernel=${PES_DEMO_KERNEL:-$here/gemm.c}
out=${1:-pes-demo}
for tool in pes-clang pes-collect pes-dump pes-replay; do
  [ -x "$bin/$tool" ] || { echo "demo: $bin/$tool not found (set PES_PREFIX to the pes install)" >&2; exit 1; }
done
[ -r "$kernel" ] || { echo "demo: $kernel: no such kernel (set PES_DEMO_KERNEL)" >&2; exit 1; }
mkdir -p "$out"
echo "== pes-clang -O2 -fopenmp $(basename "$kernel")"
"$bin/pes-clang" -O2 -fopenmp "$kernel" -o "$out/gemm"
echo "== pes-collect --full (4 threads)"
OMP_NUM_THREADS=4 "$bin/pes-collect" --full --force -o "$out/gemm.full.zst" -- "$out/gemm" small
if command -v zstd >/dev/null; then zstd -tq "$out/gemm.full.zst" && echo "zstd -t: ok"; fi
echo "== pes-dump --stats"
"$bin/pes-dump" --stats "$out/gemm.full.zst"
echo "== pes-dump (first records)"
dump=$("$bin/pes-dump" --limit 20 "$out/gemm.full.zst")
sed -n '/^T[0-9]/p' <<<"$dump"
echo "== pes-replay: the 4 recorded threads, with the cache + MESI simulation"
"$bin/pes-replay" "$out/gemm.full.zst" --machine haswell --simulate --top 5
echo "== pes-replay: PPT-Multicore mimicking of a sequential run for 1, 2, 4, 8, 16 cores"
OMP_NUM_THREADS=1 "$bin/pes-collect" -q --full --force -o "$out/gemm.seq.zst" -- "$out/gemm" small >/dev/null
"$bin/pes-replay" "$out/gemm.seq.zst" --cores 1,2,4,8,16 --machine haswell --top 3
echo "== pes-replay --html: mimicked cores with the simulation, as one self-contained page"
"$bin/pes-replay" "$out/gemm.seq.zst" --cores 1,2,4,8 --machine haswell --simulate --top 20 \
  --html "$out/demo-report.html" >/dev/null
echo "wrote $out/demo-report.html (open it in a browser; docs/report.md)"
