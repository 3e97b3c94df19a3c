#!/usr/bin/env bash
# The progress line (pes/progress.h): never when stderr is not a
# terminal, not for a replay that ends within a second on one, and, forced
# with PES_PROGRESS=always, a line with the share, the rate and the time
# left that is erased before the report (stderr then holds nothing else).
. "$(dirname "$0")/common.sh"
data=$PES_SRC/tests/data
run() { "$PES_BIN/pes-replay" "$@" --machine haswell >"$work/out" 2>"$work/err"; }

for args in "$data/gemm40.full.zst --cores 1,2" "$data/mixed.addr" "$data/gemm40.reuse.zst" \
            "--compare $data/gemm40.reuse.zst $data/gemm40.reuse_full.zst"; do
  # shellcheck disable=SC2086  # words
  run $args || fail "$args: exit $?"
  grep -q $'\r' "$work/err" && fail "$args: a progress line on a pipe"
  cp "$work/out" "$work/quiet"
  # shellcheck disable=SC2086
  PES_PROGRESS=always run $args || fail "$args: exit $? with PES_PROGRESS=always"
  cmp -s "$work/out" "$work/quiet" || fail "$args: the report changed with the progress line"
  tr '\r' '\n' <"$work/err" >"$work/lines"
  grep -Eq '\[[#.]{20}\] +[0-9]+% [0-9.]+ M records/s' "$work/lines" || fail "$args: no progress line: $(cat "$work/lines")"
  # the last thing on the line is the erasure: the cursor back at column 0
  [ "$(tail -c 1 "$work/err" | od -An -c | tr -d ' ')" = '\r' ] || grep -q 'warning' "$work/err" ||
    fail "$args: the progress line is not erased"
  echo "ok: $args"
done

# on a terminal (script(1) gives one: stderr is the terminal, whose output is
# what script prints), a replay shorter than a second draws nothing
script -qec "'$PES_BIN/pes-replay' '$data/gemm40.full.zst' --machine haswell >'$work/out'" /dev/null \
  >"$work/tty.txt" || fail "under script: exit $?"
grep -q 'records/s' "$work/tty.txt" && fail "a short replay drew on the terminal: $(od -c "$work/tty.txt" | head -3)"
script -qec "PES_PROGRESS=always '$PES_BIN/pes-replay' '$data/gemm40.full.zst' --machine haswell >'$work/out'" \
  /dev/null >"$work/tty.txt" || fail "under script: exit $?"
grep -q 'records/s' "$work/tty.txt" || fail "no progress line on the terminal: $(od -c "$work/tty.txt" | head -3)"
echo "ok: a terminal: nothing under a second, the line when forced"
