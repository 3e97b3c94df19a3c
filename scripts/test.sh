#!/usr/bin/env bash
# Builds pes and runs every test: the normal build (unit, end-to-end, fuzz), an
# ASan+UBSan build of the unit tests, and a TSan build of the concurrent parts
# (runtime, collector, replay worker). Exit status is non-zero if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
ctest --test-dir build --output-on-failure -j"$jobs"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPES_SANITIZE=address,undefined >/dev/null
ninja -C build-asan
ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPES_SANITIZE=thread >/dev/null
ninja -C build-tsan
ctest --test-dir build-tsan --output-on-failure -j"$jobs" -L 'collector|concurrent'
