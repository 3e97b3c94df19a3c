#!/usr/bin/env bash
# findings-pages.sh [BUILD]: the HTML reports of the two programs users start
# with — two OpenMP threads writing neighbouring elements of one array
# (bench/kernels/false_sharing.c, adjacent) and a row-major array updated
# column by column (tests/e2e/replay/column_major.c) — and the first screen
# of each as docs/findings-false-sharing.png and docs/findings-column-major.png
# (scripts/report-screenshot.sh), the pictures in the README. BUILD: a build
# tree with bin/ (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/pes-clang" -O2 -g -fopenmp bench/kernels/false_sharing.c -o "$work/false_sharing"
OMP_NUM_THREADS=2 "$bin/pes-collect" -q --full -o "$work/fs.zst" -- "$work/false_sharing" adjacent 500 20 >/dev/null
"$bin/pes-replay" "$work/fs.zst" --machine haswell --simulate --html "$work/false_sharing.html" >/dev/null
"$bin/pes-clang" -O2 -g tests/e2e/replay/column_major.c -o "$work/column_major"
"$bin/pes-collect" -q --full -o "$work/cm.zst" -- "$work/column_major" 256 >/dev/null
"$bin/pes-replay" "$work/cm.zst" --machine haswell --simulate --html "$work/column_major.html" >/dev/null
bash scripts/report-screenshot.sh "$work/false_sharing.html" docs/findings-false-sharing.png 1200 1000
bash scripts/report-screenshot.sh "$work/column_major.html" docs/findings-column-major.png 1200 1000
echo "docs/findings-false-sharing.png docs/findings-column-major.png"
