#!/usr/bin/env bash
# Regenerates the golden replay reports (tests/golden/*.out) from the committed
# traces in tests/data/, with the pes-replay of BUILD (default build/).
#
#   bash tests/golden/update.sh [--traces]
#
# --traces first records the traces again (pes-clang + pes-collect, OpenMP, 2
# threads): only when the trace format changes.
#
# The golden reports are a refactoring guard, not a correctness test: they are
# what pes-replay printed when they were made, so a change that alters any
# figure must say why in its commit, and regenerate them with this script.
# The correctness of the figures is tested elsewhere, against hand-computed
# cases and brute-force oracles. tests/e2e/replay/golden_reports.sh compares.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
bin=$(cd "$build/bin" && pwd)
if [ "${1:-}" = --traces ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    "$bin/pes-clang" -O2 -fopenmp bench/kernels/gemm.c -o "$work/gemm"
    "$bin/pes-clang" -O2 -fopenmp bench/kernels/false_sharing.c -o "$work/false_sharing"
    OMP_NUM_THREADS=2 "$bin/pes-collect" -q --full --force -o tests/data/gemm40.full.zst -- "$work/gemm" 40 >/dev/null
    OMP_NUM_THREADS=2 "$bin/pes-collect" -q --full --force -o tests/data/false_sharing.full.zst -- \
        "$work/false_sharing" small >/dev/null
    # sampled traces, each with the full trace of the same execution (soft backend, fixed seeds)
    c=("$bin/pes-collect" -q --force --backend soft)
    OMP_NUM_THREADS=2 "${c[@]}" --full --mode reuse --period 200 --seed 11 -o tests/data/gemm40.reuse.zst \
        --full-output tests/data/gemm40.reuse_full.zst -- "$work/gemm" 40 >/dev/null
    OMP_NUM_THREADS=2 "${c[@]}" --full --mode reuse --granularity spatial --period 300 --seed 14 \
        -o tests/data/gemm40.spatial.zst --full-output tests/data/gemm40.spatial_full.zst -- "$work/gemm" 40 >/dev/null
    OMP_NUM_THREADS=2 "${c[@]}" --mode reuse-shared --sockets 1 --period 200 --seed 13 \
        -o tests/data/gemm40.shared.zst -- "$work/gemm" 40 >/dev/null
    OMP_NUM_THREADS=2 "${c[@]}" --full --mode comm --period 400 --seed 12 -o tests/data/fs.comm.zst \
        --full-output tests/data/fs.comm_full.zst -- "$work/false_sharing" small >/dev/null
    # a sampled trace cut inside its blocks (read up to the last complete one, with a warning)
    head -c 9000 tests/data/gemm40.reuse.zst >tests/data/gemm40.reuse_cut.zst
fi
# NAME|TRACE|ARGS: one report each; keep in step with golden_reports.sh (it reads this list)
while IFS='|' read -r name trace args; do
    case $name in '' | '#'*) continue ;; esac
    # shellcheck disable=SC2086  # ARGS are words
    (cd tests/data && "$bin/pes-replay" "$trace" --machine haswell $args) >"tests/golden/$name.out"
    echo "tests/golden/$name.out"
done <tests/golden/reports.list
