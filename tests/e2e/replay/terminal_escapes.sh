#!/usr/bin/env bash
# Terminal escapes (issue 16 item 10): strings from a trace or an input file
# (command line, host, module, file, function and label names, mapping
# paths, config, text-trace lines, file names) never reach the terminal raw.
# Traces whose every string holds ESC ] 0;title BEL, ESC [2J and C1 CSI
# (raw 0x9b and UTF-8 U+009B), in files whose names hold them too: no ESC,
# BEL or 0x9b byte in any output of pes-dump, pes-replay (text) or their
# messages, and the escaped form (\x1b...) is shown instead.
. "$(dirname "$0")/common.sh"
esc=$'\e]0;pwned\a\e[2J'
full="$work/full$esc.pes" sampled="$work/sampled$esc.pes"
"$PES_BIN/trace_sample_gen" "$full" --escapes
"$PES_BIN/trace_sample_gen" "$sampled" --escapes --sampled
head -c -20 "$full" >"$work/cut$esc.pes"                  # a truncation warning names the file
printf '0x1000 R\n0x2000 W\n' >"$work/ok$esc.txt"          # a text trace named with escapes
printf '0x1000 R\nbad%s line\n' "$esc" >"$work/bad.txt"     # a malformed line with escapes
printf 'not a trace%s\n' "$esc" >"$work/junk$esc.pes"

n=0
# out CMD...: stdout and stderr of CMD (any exit status) in $work/o.N / e.N
out() { n=$((n + 1)); "$@" >"$work/o.$n" 2>"$work/e.$n" || true; echo "$n: $*" >>"$work/cmds"; }
out "$PES_BIN/pes-dump" "$full"
out "$PES_BIN/pes-dump" --tables "$full"
out "$PES_BIN/pes-dump" --stats "$full"
out "$PES_BIN/pes-dump" "$sampled"
out "$PES_BIN/pes-dump" "$work/cut$esc.pes"
out "$PES_BIN/pes-dump" "$work/junk$esc.pes"
out "$PES_BIN/pes-dump" --format "$esc" "$full"
out "$PES_BIN/pes-replay" "$full" --machine haswell
out "$PES_BIN/pes-replay" "$full" --machine haswell --simulate
out "$PES_BIN/pes-replay" "$sampled"
out "$PES_BIN/pes-replay" --compare "$sampled" "$full" --machine haswell
out "$PES_BIN/pes-replay" "$work/cut$esc.pes" --machine haswell
out "$PES_BIN/pes-replay" "$work/ok$esc.txt" --machine haswell
out "$PES_BIN/pes-replay" "$work/bad.txt" --machine haswell
out "$PES_BIN/pes-replay" "$work/missing$esc.pes"
out "$PES_BIN/pes-replay" "$full" --format "$esc"
# JSON escapes control characters itself (\u001b): no raw ESC or BEL either
out "$PES_BIN/pes-dump" --format json "$full"
out "$PES_BIN/pes-replay" "$full" --machine haswell --format json
out "$PES_BIN/pes-replay" "$sampled" --format json

for i in $(seq 1 $n); do
  cmd=$(sed -n "${i}p" "$work/cmds" | cat -v)
  for f in "$work/o.$i" "$work/e.$i"; do
    if [ $i -le $((n - 3)) ]; then bytes=$'[\x1b\x07\x9b]'; else bytes=$'[\x1b\x07]'; fi
    LC_ALL=C grep -q "$bytes" "$f" && fail "raw control bytes in the output of $cmd: $(cat -v "$f" | grep -m1 '\^\[\|\^G\|M-')"
  done
  [ -s "$work/o.$i" ] || [ -s "$work/e.$i" ] || fail "no output at all from $cmd"
done
# shown escaped, not dropped: in a dump, a replay report, the sampled report and messages
for i in 1 8 9 10 11 5 6 7 14 15 16; do
  grep -qF '\x1b]0;pwned\x07\x1b[2J' "$work/o.$i" "$work/e.$i" ||
    fail "the escaped form is missing from $(sed -n "${i}p" "$work/cmds" | cat -v)"
done
grep -qF 'gemm.c\x1b]0;pwned\x07\x1b[2J\x9b2J\xc2\x9b2J' "$work/o.1" || fail "pes-dump: C1 bytes not escaped"
# the JSON outputs are JSON in UTF-8: the lone 0x9b byte of the file name is U+FFFD there
"${PYTHON:-python3}" - "$work" $((n - 2)) $((n - 1)) $n <<'PY' || fail "JSON output is not UTF-8 JSON"
import json, os, sys
for i in sys.argv[2:]:
    text = open(os.path.join(sys.argv[1], f"o.{i}"), "rb").read().decode("utf-8")   # strict
    for line in text.splitlines():
        json.loads(line)
    assert "\ufffd" in text, f"o.{i}: no U+FFFD for the 0x9b byte"
PY
echo "ok: $n commands, no raw ESC, BEL or C1 byte on the terminal"
