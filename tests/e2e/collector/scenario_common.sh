# Sourced by the collector end-to-end scripts after they set $scenario and
# $tag: a scratch directory removed at exit, `fail`, and the default `run`.
work=$(mktemp -d "${TMPDIR:-/tmp}/pes-e2e-$tag.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail() { echo "FAIL ($scenario): $*" >&2; exit 1; }

# run EXPECTED_STATUS command args... : captures stdout/stderr, checks the status
run() {
    want=$1; shift
    "$@" >out.txt 2>err.txt
    got=$?
    [ "$got" = "$want" ] || { cat err.txt >&2; fail "'$*' exited $got, expected $want"; }
}
