#!/usr/bin/env bash
# The main job end to end: install dependencies, build pes, then run the demo
# (scripts/pes-demo.sh: the bundled OpenMP kernel bench/kernels/gemm.c through
# pes-clang, pes-collect, pes-dump and pes-replay) from the build tree. An
# install runs the same demo as PREFIX/share/pes/demo/demo.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
PES_PREFIX=build PES_DEMO_KERNEL=bench/kernels/gemm.c scripts/pes-demo.sh build/demo
