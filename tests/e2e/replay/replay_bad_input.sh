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
# outputs that cannot be written are said before the replay (issue 28): with a
# trace the replay would refuse, the error names the output flag, not the trace
expect_usage "--html $work/no/such/x.html: cannot be created: $work/no/such is no directory" \
  "$PES_BIN/pes-replay" "$work/garbage.zst" --machine haswell --html "$work/no/such/x.html"
expect_usage "--csv-dir $work/ok.txt: exists and is not a directory" \
  "$PES_BIN/pes-replay" "$work/garbage.zst" --machine haswell --csv-dir "$work/ok.txt"
expect_usage "--csv-dir $work/no/dir: cannot be created: $work/no is no directory" \
  "$PES_BIN/pes-replay" "$work/garbage.zst" --machine haswell --csv-dir "$work/no/dir"
expect_usage "-o $work/ok.txt/r.txt: " "$PES_BIN/pes-replay" "$work/garbage.zst" --machine haswell -o "$work/ok.txt/r.txt"
# an instrumented program that makes no instrumented access: empty full trace
cat >"$work/noop.c" <<'C'
int main(void) { return 0; }
C
"$PES_BIN/pes-clang" -O2 "$work/noop.c" -o "$work/noop"
"$PES_BIN/pes-collect" -q --full -o "$work/noop.zst" -- "$work/noop"
expect_fail "no memory accesses" "$PES_BIN/pes-replay" "$work/noop.zst" --machine haswell
# files that are not traces (issue 28): said what they are, what is expected, non-zero exit
expect_fail "$work/noop: is an ELF program or library (record its trace: pes-collect -o TRACE -- PROGRAM), not a trace; expected a pes trace or an address trace" \
  "$PES_BIN/pes-replay" "$work/noop" --machine haswell
"$PES_BIN/pes-replay" "$work/ok.txt" --machine haswell --format json -o "$work/report.json"
expect_fail "report.json: is a pes-replay JSON report (pes-replay --diff A B compares two), not a trace" \
  "$PES_BIN/pes-replay" "$work/report.json" --machine haswell
printf '{"a": 1}\n' >"$work/other.json"
expect_fail "other.json: is a JSON document, not a trace" "$PES_BIN/pes-replay" "$work/other.json" --machine haswell
gzip -c "$work/ok.txt" >"$work/ok.txt.gz"
expect_fail "ok.txt.gz: is gzip-compressed (decompress it first: gunzip -k), not a trace" \
  "$PES_BIN/pes-replay" "$work/ok.txt.gz" --machine haswell
# named explicitly, binary64 reads any bytes as addresses (the user's call)
"$PES_BIN/pes-replay" "$work/noop" --machine haswell --input-format binary64 >/dev/null ||
  fail "--input-format binary64 refuses an ELF file"

# usage errors (exit 2, one line), checked before anything is read or written
expect_usage "pes-replay: --comm-csv: expected a value" "$PES_BIN/pes-replay" "$work/ok.txt" --simulate --comm-csv
expect_usage "pes-replay: -o: expected a value" "$PES_BIN/pes-replay" "$work/ok.txt" -o
expect_usage "without empty elements, got '1,,2'" "$PES_BIN/pes-replay" "$work/ok.txt" --cores 1,,2
expect_usage "without empty elements, got '2,'" "$PES_BIN/pes-replay" "$work/ok.txt" --cores 2,
expect_usage "pes-replay: --chunk: only with --cores" "$PES_BIN/pes-replay" "$work/ok.txt" --chunk 4
expect_usage "pes-replay: --interleave: only with --cores" "$PES_BIN/pes-replay" "$work/ok.txt" --interleave uniform
# outputs never replace an input trace, nor each other: refused, the file unchanged
cat >"$work/loop.c" <<'C'
static volatile int a[4096];
int main(void) { for (int r = 0; r < 20; r++) for (int i = 0; i < 4096; i++) a[i] += i; return 0; }
C
"$PES_BIN/pes-clang" -O2 "$work/loop.c" -o "$work/loop"
"$PES_BIN/pes-collect" -q --mode samples --backend soft --period 97 --full -o "$work/s.zst" \
  --full-output "$work/f.zst" -- "$work/loop"
sums() { cksum "$work/f.zst" "$work/s.zst"; }
before=$(sums)
expect_usage "pes-replay: -o $work/f.zst: is the input trace $work/f.zst; refusing to overwrite it" \
  "$PES_BIN/pes-replay" "$work/f.zst" --machine haswell -o "$work/f.zst"
(cd "$work" && expect_usage "pes-replay: -o ./f.zst: is the input trace f.zst" \
  "$PES_BIN/pes-replay" f.zst --machine haswell -o ./f.zst)
ln "$work/f.zst" "$work/hard.zst"
expect_usage "pes-replay: --comm-csv $work/hard.zst: is the input trace" \
  "$PES_BIN/pes-replay" "$work/f.zst" --machine haswell --simulate --comm-csv "$work/hard.zst"
ln -s f.zst "$work/sym.zst"
expect_usage "pes-replay: --sites-csv $work/sym.zst: is the input trace" \
  "$PES_BIN/pes-replay" "$work/f.zst" --machine haswell --simulate --sites-csv "$work/sym.zst"
expect_usage "pes-replay: -o /dev/stdout: is the input trace" \
  sh -c '"$1" "$2" --machine haswell -o /dev/stdout >>"$2"' sh "$PES_BIN/pes-replay" "$work/f.zst"
expect_usage "pes-replay: -o $work/s.zst: is the input trace" \
  "$PES_BIN/pes-replay" "$work/s.zst" -o "$work/s.zst"
expect_usage "pes-replay: -o $work/f.zst: is the input trace" \
  "$PES_BIN/pes-replay" --compare "$work/s.zst" "$work/f.zst" -o "$work/f.zst"
cp "$PES_SRC/model/machines/haswell.machine" "$work/m.machine"
msum=$(cksum <"$work/m.machine")
expect_usage "pes-replay: -o $work/m.machine: is the input machine file $work/m.machine" \
  "$PES_BIN/pes-replay" "$work/f.zst" --machine "$work/m.machine" -o "$work/m.machine"
[ "$(cksum <"$work/m.machine")" = "$msum" ] || fail "the machine file was changed"
[ "$(sums)" = "$before" ] || fail "an input trace was changed"
(cd "$work" && expect_usage "pes-replay: --comm-csv x.csv and --sites-csv ./x.csv: the same file" \
  "$PES_BIN/pes-replay" f.zst --machine haswell --simulate --comm-csv x.csv --sites-csv ./x.csv)
[ ! -e "$work/x.csv" ] || fail "x.csv written"
mkdir "$work/dir"
expect_usage "pes-replay: -o $work/dir: is a directory, not a file to write" \
  "$PES_BIN/pes-replay" "$work/f.zst" --machine haswell -o "$work/dir"
# a stream is fine: nothing in it is replaced
"$PES_BIN/pes-replay" "$work/f.zst" --machine haswell -o /dev/null || fail "-o /dev/null refused"
# --compare SAMPLED FULL: each trace of the right kind, in that order (a usage error naming the trace)
expect_usage "pes-replay: --compare SAMPLED FULL: $work/s.zst is a sampled trace; the second trace must be the full trace" \
  "$PES_BIN/pes-replay" --compare "$work/s.zst" "$work/s.zst"
expect_usage "pes-replay: --compare SAMPLED FULL: $work/f.zst is a full trace and $work/s.zst a sampled one; give the sampled trace first" \
  "$PES_BIN/pes-replay" --compare "$work/f.zst" "$work/s.zst"
expect_usage "pes-replay: --compare SAMPLED FULL: $work/f.zst is a full trace; the first trace must be a sampled trace" \
  "$PES_BIN/pes-replay" --compare "$work/f.zst" "$work/f.zst"

# a sampled trace has no access stream to simulate or split into cores: say what works
expect_usage "s.zst: a sampled trace; --simulate needs a full trace (pes-collect --full)" \
  "$PES_BIN/pes-replay" "$work/s.zst" --simulate
expect_usage "s.zst: a sampled trace; --cores needs a full trace" "$PES_BIN/pes-replay" "$work/s.zst" --cores 2
expect_usage "pes-replay: --simulate: not with --compare; run pes-replay $work/f.zst --simulate" \
  "$PES_BIN/pes-replay" --compare "$work/s.zst" "$work/f.zst" --simulate
"$PES_BIN/pes-replay" "$work/s.zst" --top 3 >/dev/null || fail "sampled report"
