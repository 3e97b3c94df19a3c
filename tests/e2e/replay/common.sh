# Shared by the replay e2e tests: strict mode, a scratch directory, and checks.
set -euo pipefail
: "${PES_BIN:?PES_BIN must name the bin directory of the build}"
: "${PES_SRC:?PES_SRC must name the source tree}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_fail NEEDLE CMD...: CMD must exit non-zero and print NEEDLE on stderr.
expect_fail() {
  local needle=$1; shift
  local rc=0
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -ne 0 ] || fail "expected failure: $*"
  grep -qF -- "$needle" "$work/err" || { cat "$work/err" >&2; fail "stderr of '$*' lacks '$needle'"; }
  [ "$(wc -l <"$work/err")" -ge 1 ] || fail "no message"
  grep -q 'Segmentation\|Aborted\|core dumped' "$work/err" && fail "crashed: $*"
  echo "ok: $* -> exit $rc: $(head -1 "$work/err")"
}
# expect_usage NEEDLE CMD...: CMD must exit 2 (usage) with exactly one line on stderr holding NEEDLE.
expect_usage() {
  local needle=$1; shift
  local rc=0
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$work/err" >&2; fail "expected exit 2, got $rc: $*"; }
  grep -qF -- "$needle" "$work/err" || { cat "$work/err" >&2; fail "stderr of '$*' lacks '$needle'"; }
  [ "$(wc -l <"$work/err")" -eq 1 ] || { cat "$work/err" >&2; fail "not one line: $*"; }
  echo "ok: $* -> exit 2: $(cat "$work/err")"
}
# two_thread_prog REPS: builds $work/prog (pes-clang -O1), a main thread that
# sums a 4096-double array REPS times and a second thread with a single small
# ACCESS block: the real program behind the damaged-trace tests.
two_thread_prog() {
  cat >"$work/prog.c" <<C
#include <pthread.h>
#include <stdio.h>
static volatile double a[4096], b[64];
static void *small(void *arg) { double s = 0; for (int i = 0; i < 64; i++) s += b[i]; return arg; }
int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, small, NULL);
  pthread_join(t, NULL);
  double s = 0;
  for (int r = 0; r < $1; r++) for (int i = 0; i < 4096; i++) s += a[i];
  printf("%g\\n", s);
  return 0;
}
C
  "$PES_BIN/pes-clang" -O1 -pthread "$work/prog.c" -o "$work/prog"
}
