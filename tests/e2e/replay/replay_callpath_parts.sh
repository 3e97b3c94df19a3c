#!/usr/bin/env bash
# Call paths read in time parts (docs/replay.md, "Parts"): an OpenMP program
# built by pes-clang -O2 -fopenmp with nested calls (a call chain inside each
# parallel region, recursion, regions in a loop, calls between regions),
# traced at 1, 2 and 16 threads; `--parts yes --jobs 2, 3, 4, 8, 16` must
# give the report of `--jobs 1` byte for byte (JSON, text and HTML; by line,
# by call path at the default depth and cut at depth 2), the parts must have
# run, and the report must hold paths that only a part's resolution names
# (a worker's path through its master's fork).
. "$(dirname "$0")/common.sh"
cat >"$work/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#define NOINL __attribute__((noinline))
static double *a;
static long n;
NOINL static double leaf(long i) { return a[i] += 1.0; }
NOINL static double mid(long i) { return leaf(i) + leaf((i * 7) % n); }
NOINL static double rec(long i, int d) { return d == 0 ? leaf(i) : rec(i, d - 1) + a[(i + d) % n]; }
NOINL static double step(int s) {
    double t = 0;
#pragma omp parallel for reduction(+ : t) schedule(static)
    for (long i = 0; i < n; i++)
        t += (s & 1) ? mid(i) : rec(i, (int)(i % 4));
    return t;
}
NOINL static double serial(void) {
    double t = 0;
    for (long i = 0; i < n; i += 3)
        t += mid(i);
    return t;
}
int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 2000;
    a = calloc((size_t)n, sizeof *a);
    double t = 0;
    for (int s = 0; s < 6; s++)
        t += step(s) + serial();
    printf("%.0f\n", t);
    return 0;
}
C
"$PES_BIN/pes-clang" -O2 -fopenmp "$work/prog.c" -o "$work/prog"
for th in 1 2 16; do
  OMP_NUM_THREADS=$th "$PES_BIN/pes-collect" -q --full -o "$work/t$th.zst" -- "$work/prog" 3000 >/dev/null
done
same() {   # NAME TRACE ARGS...: --parts yes at every count gives --jobs 1's report
  local name=$1 trace=$2
  shift 2
  "$PES_BIN/pes-replay" "$trace" --machine haswell --jobs 1 "$@" >"$work/$name.1" || fail "$name --jobs 1 failed"
  for j in 2 3 4 8 16; do
    "$PES_BIN/pes-replay" "$trace" --machine haswell --jobs "$j" --parts yes "$@" >"$work/$name.$j" ||
      fail "$name --jobs $j --parts yes failed"
    cmp -s "$work/$name.1" "$work/$name.$j" || {
      diff "$work/$name.1" "$work/$name.$j" | head -6 | cut -c1-300 >&2
      fail "$name: --jobs $j --parts yes differs from --jobs 1"
    }
  done
}
for th in 1 2 16; do
  t=$work/t$th.zst
  same "json$th" "$t" --format json
  same "path$th" "$t" --format json --by callpath
  same "cut$th" "$t" --format json --by callpath --callpath-depth 2 --top 40
  same "text$th" "$t" --callpath-depth 3
  same "html$th" "$t" --format json --html /dev/stdout --by function
  # the parts ran (a later part's paths resolved by part 0)
  "$PES_BIN/pes-replay" "$t" --machine haswell --jobs 4 --parts yes --stats --format json 2>"$work/stats$th" >/dev/null
  grep -q '^  part 3 ' "$work/stats$th" || fail "t$th: --parts yes ran no part 3"
  grep -q 'parts resolution' "$work/stats$th" || fail "t$th: no parts resolution"
  # and the paths are the program's: leaf reached through mid, rec through rec
  jq -e '[.configs[0].groups[] | .callpaths[]?.path] | (map(test("> mid .* > leaf$")) | any)
         and (map(test("> rec .* > rec$")) | any)' "$work/json$th.1" >/dev/null ||
    fail "t$th: the expected paths are missing: $(jq -c '[.configs[0].groups[] | .callpaths[]?.path]' "$work/json$th.1")"
done
# the workers' paths start at their master's fork: main > step > (the outlined region)
jq -e '[.configs[0].groups[] | .callpaths[]?.path] | map(test("^main \\(.*\\) > step \\(.*\\) > .*omp_outlined")) | any' \
  "$work/json16.1" >/dev/null || fail "t16: no worker path through main > step"
echo "call paths in parts: --jobs 2, 3, 4, 8 and 16 identical to --jobs 1 at 1, 2 and 16 threads"
