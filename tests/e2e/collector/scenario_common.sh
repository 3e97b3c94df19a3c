# Sourced by the collector end-to-end scripts after they set $scenario and
# $tag: a scratch directory removed at exit, `fail`, and the default `run`.
work=$(mktemp -d "${TMPDIR:-/tmp}/pes-e2e-$tag.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail() { echo "FAIL ($scenario): $*" >&2; exit 1; }

# main_traced TRACE: 1 when the trace's T0 is the program's main thread (it
# allocates before starting its workers, which makes it a traced thread), 0
# when it is not (sanitizer builds have no allocation interposer); uses $bin.
main_traced() {
    "$bin/pes-dump" --limit 0 "$1" 2>/dev/null | awk '/^pid /{p=$2} /^thread T0 /{print ($4 == p) ? 1 : 0; exit}'
}

# run EXPECTED_STATUS command args... : captures stdout/stderr, checks the status
run() {
    want=$1; shift
    "$@" >out.txt 2>err.txt
    got=$?
    [ "$got" = "$want" ] || { cat err.txt >&2; fail "'$*' exited $got, expected $want"; }
}
