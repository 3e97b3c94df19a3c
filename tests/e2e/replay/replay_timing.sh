#!/usr/bin/env bash
# Counts that depend on thread timing (docs/replay.md, "Counts that depend on
# thread timing"): timing_prog.c spin polls a flag that the other thread sets
# after its work, and writes how many times it loaded it (counted in a
# register, not by pes). The truth per run, from the program: fewer than 3
# polls are no wait, so no note; 3 or more, ended by the other thread's store
# (the program starts its work once the poller runs, so the store comes after
# the first poll), are one: the note names the polling line and nothing
# else, with that line's loads (the poll count, less the rotated loop's first
# test where the compiler gave it its own site) and their share of the
# trace's accesses. The poll counts differ from run to run (the reason for
# the note). join
# loads the flag 8 times in a row after joining the thread that set it: no
# note.
. "$(dirname "$0")/common.sh"
src="$PES_SRC/tests/e2e/replay/timing_prog.c"
line=$(grep -n 'SPIN-LOAD' "$src" | cut -d: -f1)
"$PES_BIN/pes-clang" -O2 -pthread "$src" -o "$work/prog"
ulimit -t 120   # CPU time: a poll that never ends is a failure, not a wait
declare -A counts=()
long=0
for run in 1 2 3 4 5 6; do
  "$PES_BIN/pes-collect" -q --full -o "$work/s$run.zst" -- "$work/prog" spin "$work/loads$run" >"$work/out$run"
  polls=$(cat "$work/loads$run")
  counts[$polls]=1
  "$PES_BIN/pes-replay" "$work/s$run.zst" --format json >"$work/s$run.json"
  "$PES_BIN/pes-replay" "$work/s$run.zst" --jobs 1 >"$work/s$run.txt"
  # in time parts (--parts yes, as pes-replay-mpi's ranks): the same report,
  # the wait found whole where a part's start cuts it (parts carry their runs on)
  for j in 2 3 5 8 16; do
    "$PES_BIN/pes-replay" "$work/s$run.zst" --format json --jobs $j --parts yes >"$work/s$run.p$j.json"
    cmp -s "$work/s$run.json" "$work/s$run.p$j.json" || fail "run $run: --jobs $j --parts yes differs"
  done
  note=$(grep '^  timing ' "$work/s$run.txt" || true)
  if [ "$polls" -lt 3 ]; then
    jq -e '.trace | has("timing_dependent") | not' "$work/s$run.json" >/dev/null ||
      fail "run $run: $polls polls, yet a wait was reported"
    [ -z "$note" ] || fail "run $run: $polls polls, yet a note: $note"
  else
    long=1
    jq -e --argjson line "$line" --argjson polls "$polls" '
      .trace as $t | $t.timing_dependent as $d | $d.spin_waits[0] as $w
      | $d.sites == 1 and ($d.spin_waits | length) == 1
      and ($w.file | endswith("/timing_prog.c")) and $w.line == $line and $w.function == "main"
      and ($w.accesses == $polls or $w.accesses == $polls - 1) and $d.accesses == $w.accesses
      and $w.waits == 1 and $w.longest_wait == $polls
      and (($d.share - $w.accesses / $t.accesses) | fabs) <= 1e-5 * $d.share' "$work/s$run.json" >/dev/null ||
      fail "run $run: $polls polls: $(jq -c .trace.timing_dependent "$work/s$run.json")"
    case $note in
    "  timing    counts at 1 site ("*"% of accesses) depend on thread timing: spin-waits at timing_prog.c:$line main") ;;
    *) fail "run $run: the text note is '$note'" ;;
    esac
  fi
  echo "ok: run $run: $polls polls; ${note:-no note}"
  [ ${#counts[@]} -lt 2 ] || [ $long = 0 ] || break
done
[ ${#counts[@]} -ge 2 ] || fail "the poll count was the same in every run (${!counts[*]})"
[ $long = 1 ] || fail "no run polled 3 times or more (counts ${!counts[*]})"
# every report with the note validates against the schema
"${PYTHON:-python3}" - "$PES_SRC/docs/replay.schema.json" "$work"/s*.json <<'PY' || fail "a report does not match docs/replay.schema.json"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for p in sys.argv[2:]:
    jsonschema.validate(json.load(open(p)), schema)
PY

"$PES_BIN/pes-collect" -q --full -o "$work/j.zst" -- "$work/prog" join "$work/loadsj" >"$work/outj"
[ "$(cat "$work/loadsj")" = 8 ] || fail "join: the flag was not 1 in its 8 loads"
cmp -s "$work/out1" "$work/outj" || fail "spin and join print different checksums"
"$PES_BIN/pes-replay" "$work/j.zst" --format json >"$work/j.json"
"$PES_BIN/pes-replay" "$work/j.zst" >"$work/j.txt"
jq -e '.trace | has("timing_dependent") | not' "$work/j.json" >/dev/null || fail "join: a wait was reported"
! grep -q '^  timing ' "$work/j.txt" || fail "join: $(grep '^  timing ' "$work/j.txt")"
echo "ok: join: no note"
