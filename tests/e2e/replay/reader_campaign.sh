#!/usr/bin/env bash
# Reader campaign (issue 16 item 7): every mutant of a real full trace and a
# real sampled trace (cuts at every block boundary and inside every block;
# each block duplicated, deleted, swapped with the next, appended after the
# FOOTER; index-frame fields changed; a data byte flipped) gets one verdict
# from pes-dump, pes-dump --stats, pes-replay and pes-replay --format json.
# The rules and the expected verdicts: reader_campaign.py.
. "$(dirname "$0")/common.sh"
two_thread_prog 4
# small buffers: the main thread's records span several ACCESS blocks
"$PES_BIN/pes-collect" -q --full --buffer-records 4096 -o "$work/full.zst" -- "$work/prog" >/dev/null
# a sampled trace with a MAPS block and several EVENTS blocks per thread, and
# no lost events (a loaded machine can make the collector lose some: the
# campaign wants an original that gives no warning)
"$PES_BIN/pes-clang" -O2 -fopenmp -o "$work/ribench" "$PES_SRC/bench/micro/ribench.c"
for try in 1 2 3; do
  "$PES_BIN/pes-collect" --mode reuse --backend soft --period 50 --seed 5 -q --force -o "$work/sampled.zst" \
    "$work/ribench" --divide 20 --outer 1 --threads 2 >/dev/null
  [ "$("$PES_BIN/pes-replay" "$work/sampled.zst" --format json | jq .lost)" = 0 ] && break
done
mkdir "$work/mutants"
"${PYTHON:-python3}" "$(dirname "$0")/reader_campaign.py" "$PES_BIN" "$work/mutants" "$work/full.zst" "$work/sampled.zst"
