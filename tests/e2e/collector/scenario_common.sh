# Sourced by the collector end-to-end scripts after they set $scenario and
# $tag: a scratch directory removed at exit, `fail`, and the default `run`.
work=$(mktemp -d "${TMPDIR:-/tmp}/pes-e2e-$tag.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail() { echo "FAIL ($scenario): $*" >&2; exit 1; }

# Hang guards, never time verdicts (a loaded CI machine stretches wall time):
# what runs longer than HANG_S seconds is stopped and fails as HANG.
HANG_S=300
# guard CMD...: runs CMD under `timeout`; its status, or a HANG failure.
guard() {
    timeout -k 5 "$HANG_S" "$@"
    local rc=$?
    { [ $rc != 124 ] && [ $rc != 137 ]; } || fail "HANG: $* (still running after $HANG_S s; stopped)"
    return $rc
}
# wait_started PID: until out.txt says "started"; the process ending first fails,
# and so (HANG) does one that has not started after HANG_S s.
wait_started() {
    local i=0
    while ! grep -q started out.txt 2>/dev/null; do
        case $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) in
        '' | Z) fail "the program ended without starting: $(head -n 3 err.txt)" ;;
        esac
        i=$((i + 1))
        [ $i -lt $((HANG_S * 100)) ] || { kill -KILL "$1"; fail "HANG: the program did not start in $HANG_S s"; }
        sleep 0.01
    done
}
# wait_guarded PID: the status of background job PID; still running HANG_S s
# later, it is killed and fails as HANG.
wait_guarded() {
    local pid=$1 dog st
    (i=0
     while [ $i -lt $((HANG_S * 10)) ]; do
         sleep 0.1
         kill -0 "$pid" 2>/dev/null || exit 0
         i=$((i + 1))
     done
     kill -KILL "$pid" 2>/dev/null) >/dev/null 2>&1 &
    dog=$!
    wait "$pid"
    st=$?
    wait "$dog"
    [ $st != 137 ] || fail "HANG: still running $HANG_S s after the signal (killed)"
    return $st
}

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
