#!/usr/bin/env bash
# Bad input to pes-replay: each a clear one-line error naming what is wrong, non-zero exit, no crash.
. "$(dirname "$0")/common.sh"
printf '0x1000\n0x2000\n' >"$work/ok.txt"
expect_fail "unknown machine 'pentium9'" "$PES_BIN/pes-replay" "$work/ok.txt" --machine pentium9
expect_fail "256Q" "$PES_BIN/pes-replay" "$work/ok.txt" --machine haswell --cache L1=32K:8,L2=256Q:8
expect_fail "--cores" "$PES_BIN/pes-replay" "$work/ok.txt" --cores 0,2
expect_fail "--format" "$PES_BIN/pes-replay" "$work/ok.txt" --format xml
expect_fail "--line" "$PES_BIN/pes-replay" "$work/ok.txt" --line 48
expect_fail "no trace given" "$PES_BIN/pes-replay" --machine haswell
expect_fail "$work/missing.zst" "$PES_BIN/pes-replay" "$work/missing.zst" --machine haswell
: >"$work/empty.txt"
expect_fail "no memory accesses" "$PES_BIN/pes-replay" "$work/empty.txt" --machine haswell
printf '0x1000\nbogus line\n' >"$work/bad.txt"
expect_fail "bad.txt:2" "$PES_BIN/pes-replay" "$work/bad.txt" --machine haswell
expect_fail "basic-block table" "$PES_BIN/pes-replay" "$work/ok.txt" --machine haswell --cores 2
# a pes trace that is not a trace: zstd magic followed by garbage
printf '\x28\xb5\x2f\xfd garbage garbage garbage' >"$work/garbage.zst"
expect_fail "garbage.zst" "$PES_BIN/pes-replay" "$work/garbage.zst" --machine haswell
# an instrumented program that makes no instrumented access: empty full trace
cat >"$work/noop.c" <<'C'
int main(void) { return 0; }
C
"$PES_BIN/pes-clang" -O2 "$work/noop.c" -o "$work/noop"
"$PES_BIN/pes-collect" -q --full -o "$work/noop.zst" -- "$work/noop"
expect_fail "no memory accesses" "$PES_BIN/pes-replay" "$work/noop.zst" --machine haswell
