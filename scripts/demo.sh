#!/usr/bin/env bash
# The main job end to end: install dependencies, build pes, compile the bundled
# OpenMP demo (bench/kernels/gemm.c) with pes-clang, record a full trace with
# pes-collect, and print what was recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
out=build/demo
mkdir -p "$out"
build/bin/pes-clang -O2 -fopenmp bench/kernels/gemm.c -o "$out/gemm"
echo "== pes-collect --full (4 threads)"
OMP_NUM_THREADS=4 build/bin/pes-collect --full --force -o "$out/gemm.full.zst" -- "$out/gemm" small
zstd -tq "$out/gemm.full.zst" && echo "zstd -t: ok"
echo "== pes-dump --stats"
build/bin/pes-dump --stats "$out/gemm.full.zst"
echo "== pes-dump (first records)"
build/bin/pes-dump --limit 20 "$out/gemm.full.zst" | sed -n '/^T[0-9]/p'
echo "== pes-replay: the 4 recorded threads, with the cache + MESI simulation"
build/bin/pes-replay "$out/gemm.full.zst" --machine haswell --simulate --top 5
echo "== pes-replay: PPT-Multicore mimicking of a sequential run for 1, 2, 4, 8, 16 cores"
OMP_NUM_THREADS=1 build/bin/pes-collect -q --full --force -o "$out/gemm.seq.zst" -- "$out/gemm" small >/dev/null
build/bin/pes-replay "$out/gemm.seq.zst" --cores 1,2,4,8,16 --machine haswell --top 3
