#!/usr/bin/env bash
# Runs a set of ctest tests many times while busy loops keep every CPU loaded,
# to find tests that fail only now and then (a flaky CI rejects good work).
#
#   bash scripts/soak.sh [REGEX [RUNS [BUSY]]]
#
# REGEX  ctest -R pattern (default: the sampling e2e tests, '^e2e\.sampling\.')
# RUNS   how many times the whole set runs (default 50)
# BUSY   busy loops running alongside (default: one per CPU, nproc)
# BUILD  environment: the build tree (default build/, as scripts/test.sh makes it)
#
# Prints one line per failed run and per-test failure counts at the end; the
# output of every failed run is kept in a log directory. Exit status 1 if any
# run failed, 2 on bad arguments or no matching test.
set -uo pipefail
cd "$(dirname "$0")/.."
regex=${1:-'^e2e\.sampling\.'}
runs=${2:-50}
busy=${3:-$(nproc)}
build=${BUILD:-build}
case "$runs$busy" in
*[!0-9]*) echo "soak.sh: RUNS and BUSY must be non-negative integers" >&2; exit 2 ;;
esac
n_tests=$(ctest --test-dir "$build" -N -R "$regex" | sed -n 's/^Total Tests: //p')
if [ -z "$n_tests" ] || [ "$n_tests" = 0 ]; then
    echo "soak.sh: no test in $build matches '$regex' (build first: scripts/test.sh)" >&2
    exit 2
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/pes-soak.XXXXXX")
pids=()
stop_load() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    pids=()
}
trap stop_load EXIT
# ^C or kill: finish the current run, then report what ran
stopped=
trap 'stopped=130' INT
trap 'stopped=143' TERM
for ((i = 0; i < busy; i++)); do
    (while :; do :; done) &
    pids+=($!)
done

echo "soak: $n_tests tests matching '$regex', $runs runs, $busy busy loops; logs in $logs"
failed_runs=0
declare -A fails=()
done_runs=0
for ((r = 1; r <= runs && ${#stopped} == 0; r++)); do
    log="$logs/run$r.txt"
    ctest --test-dir "$build" -R "$regex" --output-on-failure >"$log" 2>&1
    ok=$?
    [ ${#stopped} = 0 ] || [ $ok = 0 ] || break   # interrupted: this run does not count
    done_runs=$r
    if [ $ok = 0 ]; then
        rm -f "$log"
        continue
    fi
    failed_runs=$((failed_runs + 1))
    # ctest's summary lists each failed test as "  NN - name (Failed)"
    names=$(sed -n '/^The following tests FAILED:/,$ s/^[[:space:]]*[0-9][0-9]* - \([^ ]*\) .*/\1/p' "$log")
    echo "run $r: FAILED: ${names:-?} (see $log)"
    for t in $names; do fails[$t]=$((${fails[$t]:-0} + 1)); done
done
stop_load

[ ${#stopped} = 0 ] || echo "soak: interrupted after $done_runs of $runs runs"
echo "soak: $((done_runs - failed_runs)) of $done_runs runs passed, $failed_runs failed ($n_tests tests each)"
for t in "${!fails[@]}"; do
    echo "  $t: failed $((fails[$t])) of $done_runs"
done
if [ "$failed_runs" -ne 0 ]; then
    exit 1
fi
rm -rf "$logs"
[ ${#stopped} = 0 ] || exit "$stopped"
exit 0
