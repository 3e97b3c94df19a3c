#!/usr/bin/env bash
# Damaged full traces (issue 16 item 7): pes-dump, pes-dump --stats and
# pes-replay (text and json) reach the same verdict on every mutant of a real
# trace. Cut-off files are read up to the last complete block with a warning
# (and "truncated": true in JSON); structural damage is one error line with
# the same offset from every command and a non-zero exit.
. "$(dirname "$0")/common.sh"
two_thread_prog 100
"$PES_BIN/pes-collect" -q --full -o "$work/ok.zst" -- "$work/prog" >/dev/null

# mutate OUT KIND: builds a mutant of ok.zst from its block list (index frames).
mutate() {
  "${PYTHON:-python3}" - "$work/ok.zst" "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
blocks, off = [], 0
while off < len(d):
    _, _, typ, th, cnt, fs = struct.unpack_from('<6I', d, off)
    blocks.append((off, off + 24 + fs, typ, th, cnt))
    off += 24 + fs
raw = [d[s:e] for s, e, *_ in blocks]
acc = [i for i, b in enumerate(blocks) if b[2] == 4]
# thread indices follow the first record, not creation: pick threads by size
threads = sorted({blocks[i][3] for i in acc}, key=lambda t: -sum(blocks[i][3] == t for i in acc))
main_acc = [i for i in acc if blocks[i][3] == threads[0]]   # many ACCESS blocks
kind = sys.argv[3]
if kind == 'cut_boundary':      # ends after a complete block: no FOOTER
    out = d[:blocks[-1][0]]
elif kind == 'cut_mid':         # ends inside an ACCESS data frame
    s, e = blocks[main_acc[2]][:2]
    out = d[:(s + 24 + e) // 2]
elif kind == 'after_footer':    # a block appended after the FOOTER
    out = d + raw[main_acc[0]]
elif kind == 'second_header':
    out = b''.join(raw[:2] + [raw[0]] + raw[2:])
elif kind == 'dup_access':
    i = main_acc[1]
    out = b''.join(raw[:i + 1] + [raw[i]] + raw[i + 1:])
elif kind == 'del_access':
    i = main_acc[1]
    out = b''.join(raw[:i] + raw[i + 1:])
elif kind == 'del_thread_block':  # the second thread's only ACCESS block
    i = [i for i in acc if blocks[i][3] == threads[-1]][0]
    out = b''.join(raw[:i] + raw[i + 1:])
elif kind == 'swap_access':     # two ACCESS blocks of one thread swapped
    i, j = main_acc[1], main_acc[2]
    raw[i], raw[j] = raw[j], raw[i]
    out = b''.join(raw)
elif kind == 'index_count':     # an index frame field changed (count - 1)
    s = blocks[main_acc[1]][0]
    b = bytearray(d); struct.pack_into('<I', b, s + 16, blocks[main_acc[1]][4] - 1); out = bytes(b)
elif kind == 'index_thread':    # one bit of the thread field flipped
    s = blocks[main_acc[1]][0]
    b = bytearray(d); b[s + 12] ^= 1; out = bytes(b)
elif kind == 'index_type':      # one bit flip: the thread's only ACCESS block claims to be EVENTS
    s = blocks[[i for i in acc if blocks[i][3] == threads[-1]][0]][0]
    b = bytearray(d); b[s + 8] ^= 1; out = bytes(b)
elif kind == 'index_size':      # frame_size one byte too large
    s = blocks[main_acc[1]][0]
    b = bytearray(d); struct.pack_into('<I', b, s + 20, len(raw[main_acc[1]]) - 24 + 1); out = bytes(b)
else:
    sys.exit('unknown mutant ' + kind)
open(sys.argv[2], 'wb').write(out)
PY
}

# run NAME CMD...: stdout in $work/NAME.out, stderr in $work/NAME.err, exit code echoed.
run() {
  local name=$1; shift
  local rc=0
  "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  grep -q 'Segmentation\|Aborted\|core dumped' "$work/$name.err" && fail "crashed: $*"
  echo "$rc"
}
# the commands that must agree, as "name|cmd args"; TRACE is substituted.
# pes-replay --jobs 1 merges on the reading thread, --jobs 3 on a thread of
# its own (stream/input.c): the same verdicts either way.
commands() {
  printf '%s\n' "dump|$PES_BIN/pes-dump TRACE" "dumpjson|$PES_BIN/pes-dump --format json TRACE" \
    "stats|$PES_BIN/pes-dump --stats TRACE" "replay|$PES_BIN/pes-replay TRACE --machine haswell" \
    "replayjson|$PES_BIN/pes-replay TRACE --machine haswell --format json" \
    "replayj1|$PES_BIN/pes-replay TRACE --machine haswell --jobs 1" \
    "replayj3|$PES_BIN/pes-replay TRACE --machine haswell --jobs 3"
}

# expect_warning MUTANT NEEDLE: every command exits 0 and warns with NEEDLE;
# pes-replay's JSON says "truncated": true.
expect_warning() {
  local m=$1 needle=$2 name cmd rc
  mutate "$work/$m.zst" "$m"
  while IFS='|' read -r name cmd; do
    rc=$(run "$m.$name" ${cmd//TRACE/$work/$m.zst})
    [ "$rc" -eq 0 ] || { cat "$work/$m.$name.err" >&2; fail "$m: $name exits $rc, expected 0 with a warning"; }
    grep -q "warning: .*$needle" "$work/$m.$name.err" ||
      { cat "$work/$m.$name.err" >&2; fail "$m: $name does not warn '$needle'"; }
  done < <(commands)
  jq -e '.trace.truncated == true' "$work/$m.replayjson.out" >/dev/null || fail "$m: JSON lacks \"truncated\": true"
  echo "ok: $m: warning from every command: $(head -1 "$work/$m.dump.err")"
}

# expect_error MUTANT NEEDLE: every command exits non-zero with one line naming
# the file, the same offset and NEEDLE.
expect_error() {
  local m=$1 needle=$2 name cmd rc line first=""
  mutate "$work/$m.zst" "$m"
  while IFS='|' read -r name cmd; do
    rc=$(run "$m.$name" ${cmd//TRACE/$work/$m.zst})
    [ "$rc" -ne 0 ] || fail "$m: $name accepts the damaged trace"
    line=$(grep -F -- "$needle" "$work/$m.$name.err" | head -1) ||
      { cat "$work/$m.$name.err" >&2; fail "$m: $name does not report '$needle'"; }
    [[ "$line" == *"$work/$m.zst: offset "* ]] || fail "$m: $name: message does not name file and offset: $line"
    line=${line#*: }          # drop the command name: the rest must be identical
    [ -z "$first" ] && first=$line
    [ "$line" = "$first" ] || fail "$m: $name says '$line', pes-dump says '$first'"
  done < <(commands)
  echo "ok: $m: same error from every command: $first"
}

# the intact trace: no warning anywhere
while IFS='|' read -r name cmd; do
  rc=$(run "ok.$name" ${cmd//TRACE/$work/ok.zst})
  [ "$rc" -eq 0 ] || { cat "$work/ok.$name.err" >&2; fail "intact trace: $name exits $rc"; }
  grep -q warning "$work/ok.$name.err" && fail "intact trace: $name warns: $(cat "$work/ok.$name.err")"
done < <(commands)
jq -e '.trace.truncated == false' "$work/ok.replayjson.out" >/dev/null || fail "intact trace reported truncated"

expect_warning cut_boundary "no FOOTER block"
expect_warning cut_mid "truncated at offset"
expect_error after_footer "block after the FOOTER block"
expect_error second_header "second HEADER block"
expect_error dup_access "the footer says"
expect_error del_access "the footer says"
expect_error del_thread_block "the footer says"
expect_error swap_access "blocks out of order"
expect_error index_count "index frame (type/thread/count) disagrees with the block header"
expect_error index_thread "index frame (type/thread/count) disagrees with the block header"
expect_error index_type "index frame (type/thread/count) disagrees with the block header"
expect_error index_size "index frame size does not match the data frame that follows"

# Sampled traces and --compare: the same warnings and "truncated" flags.
# A sampled + full pair from one execution (soft backend, as accuracy_e2e.sh).
"$PES_BIN/pes-clang" -O2 -fopenmp -o "$work/ribench" "$PES_SRC/bench/micro/ribench.c"
"$PES_BIN/pes-collect" --mode reuse --full --backend soft --period 211 --seed 5 -q \
  -o "$work/s.zst" --full-output "$work/f.zst" "$work/ribench" --divide 20 --outer 1 --threads 2 >/dev/null
cut_footer() { # IN OUT: drops the FOOTER (the last block)
  "${PYTHON:-python3}" - "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read(); off = last = 0
while off < len(d):
    last = off; off += 24 + struct.unpack_from('<I', d, off + 20)[0]
open(sys.argv[2], 'wb').write(d[:last])
PY
}
cut_footer "$work/s.zst" "$work/s_cut.zst"
cut_footer "$work/f.zst" "$work/f_cut.zst"
for t in "$work/s_cut.zst" "$work/f_cut.zst"; do
  for cmd in "pes-dump" "pes-dump --stats"; do
    rc=$(run sc $PES_BIN/$cmd "$t")
    [ "$rc" -eq 0 ] && grep -q "warning: .*no FOOTER block" "$work/sc.err" || fail "$cmd $t: no truncation warning"
  done
done
rc=$(run sc "$PES_BIN/pes-replay" "$work/s_cut.zst")
[ "$rc" -eq 0 ] && grep -q "warning: .*no FOOTER block" "$work/sc.err" || fail "sampled replay: no truncation warning"
rc=$(run sc "$PES_BIN/pes-replay" "$work/s_cut.zst" --format json)
[ "$rc" -eq 0 ] && grep -q "warning: .*no FOOTER block" "$work/sc.err" || fail "sampled json: no truncation warning"
jq -e '.truncated == true' "$work/sc.out" >/dev/null || fail "sampled JSON lacks \"truncated\": true"
rc=$(run sc "$PES_BIN/pes-replay" "$work/s.zst" --format json)
jq -e '.truncated == false' "$work/sc.out" >/dev/null || fail "intact sampled trace reported truncated"
for pair in "s_cut.zst f.zst sampled_truncated" "s.zst f_cut.zst full_truncated"; do
  set -- $pair
  rc=$(run cmp "$PES_BIN/pes-replay" --compare "$work/$1" "$work/$2")
  [ "$rc" -eq 0 ] && grep -q "warning: .*no FOOTER block" "$work/cmp.err" || fail "--compare $1 $2: no warning"
  rc=$(run cmp "$PES_BIN/pes-replay" --compare "$work/$1" "$work/$2" --format json)
  [ "$rc" -eq 0 ] && grep -q "warning: .*no FOOTER block" "$work/cmp.err" || fail "--compare json $1 $2: no warning"
  jq -e ".truncated == true and .$3 == true" "$work/cmp.out" >/dev/null || fail "--compare $1 $2: JSON not truncated"
  jq -e '.skipped_blocks == 0 and .lost == 0' "$work/cmp.out" >/dev/null || fail "--compare $1 $2: no skipped_blocks, lost"
done
echo "ok: sampled and --compare: truncation warned and flagged in JSON"
