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
