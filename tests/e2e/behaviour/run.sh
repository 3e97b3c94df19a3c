#!/usr/bin/env bash
# run.sh PROGRAM BIN_DIR SOURCE_DIR — the collector behaviour suite for one program
# (docs/collector.md, "Behaviour suite"). PROGRAM is built with plain clang (the
# reference) and with pes-clang; the reference runs, then the instrumented build with
# the collector off and under every mode of pes-collect. Each run must end with the
# reference's exit status (or terminating signal), stdout and stderr, and every trace
# it leaves must be accepted by pes-dump: with its footer, or, where the program does
# not end through exit() (crash, abort, _exit, exec), at least its header.
# Every failure is printed; the exit status is 1 if there was any.
# No verdict depends on wall time (a loaded CI machine stretches it): each run's CPU
# time is bounded (`ulimit -t`, PES_BEHAVIOUR_CPU_S, default 60 s: a runaway loop);
# PES_BEHAVIOUR_TIMEOUT (default 300 s) only stops a run that never ends, which
# fails as "HANG: PROGRAM MODE".
set -u
prog=$1
bin=$2
src=$3
limit=${PES_BEHAVIOUR_TIMEOUT:-300}   # a hang guard, not a time verdict
cpu=${PES_BEHAVIOUR_CPU_S:-60}
period=1000   # sampled modes: many samples, watchpoints and traps in a short run

# What each program is: source, extra flags, arguments (@HELPER@ and @LIB@ become the
# files of the same build), the reference's exit status, and cut=1 if the process does
# not end through exit(), so its traces may lack the footer; wrap=1 runs the program
# through a shell script that execs it (an exec wrapper, as many codes ship).
file=$prog.c flags= args= want=0 cut=0 sigint=0 wrap=0
case $prog in
sig_alarm|sig_altstack|cancel_deferred|cancel_async|threads64|tls|recursion|sigtrap_own|atexit|longjmp) ;;
watch_runtime)  flags=-ldl ;;
dlopen_loop)    flags=-ldl args=@LIB@ ;;
fork_exit)      file=fork.c args=exit ;;
fork_uexit)     file=fork.c args=_exit ;;
fork_exec)      file=fork.c args="exec @HELPER@" ;;
vfork_exec)     args=@HELPER@ ;;
spawn)          args=@HELPER@ ;;
exec_self)      cut=1 ;;
uexit)          file=uexit.c args=late cut=1 ;;
uexit_early)    file=uexit.c args=early cut=1 ;;
segv_early)     file=segv.c args=early want=139 cut=1 ;;
segv_late)      file=segv.c args=late want=139 cut=1 ;;
abort)          want=134 cut=1 ;;
omp_tasks)      flags=-fopenmp ;;
omp_sigint)     flags=-fopenmp args=pid.txt want=130 sigint=1 ;;
cxx_exceptions) file=cxx_exceptions.cpp ;;
cxx_templates)  file=cxx_templates.cpp flags=-fno-exceptions ;;
omp_spin)       flags=-fopenmp ;;
exec_wrapper)   file=tls.c wrap=1 ;;
# zstd linked in, its ZSTD_compressBound the program's own (see zstd_bundled.c)
zstd_bundled)   flags="-l:libzstd.a -Wl,--allow-multiple-definition" ;;
*) echo "run.sh: unknown program '$prog'" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/pes-behaviour-$prog.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
ulimit -c 0   # the crashing programs leave no core files
ulimit -s 8192 2>/dev/null   # recursion.c is sized for the default 8 MiB stack
ulimit -t "$cpu"   # per process: the program, pes-collect, the runtime's writers
# The runtime reads PES_*; pes-collect sets what a run needs.
for v in $(env | sed -n 's/^\(PES_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export OMP_NUM_THREADS=2

failures=0
fail() {
    echo "FAIL: $prog $mode: $*" >&2
    failures=$((failures + 1))
}

# ---------------------------------------------------------------- build
cc=$("$bin/pes-clang" --pes-print-config | sed -n 's/^compiler=//p')
cxx=$("$bin/pes-clang++" --pes-print-config | sed -n 's/^compiler=//p')
mode=build
build() {   # build VARIANT(ref|inst) SOURCE OUTPUT FLAGS...
    local variant=$1 source=$2 out=$3 compiler
    shift 3
    case $variant:$source in
    ref:*.cpp) compiler=$cxx ;;
    ref:*) compiler=$cc ;;
    inst:*.cpp) compiler=$bin/pes-clang++ ;;
    inst:*) compiler=$bin/pes-clang ;;
    esac
    "$compiler" -O2 -pthread -I"$src" "$src/$source" -o "$variant/$out" "$@" 2>"$variant/$out.log" ||
        { head -n 20 "$variant/$out.log" >&2; fail "$variant build of $source failed"; exit 1; }
}
for variant in ref inst; do
    mkdir $variant
    build $variant "$file" "$prog" $flags
    case $args in *@HELPER@*) build $variant helper.c helper ;; esac
    case $args in *@LIB@*) build $variant dl_lib.c libbh_dl.so -shared -fPIC ;; esac
    if [ $wrap = 1 ]; then
        printf '#!/bin/sh\n# an exec wrapper: the program replaces the shell\nexec "$(dirname "$0")/%s" "$@"\n' \
            "$prog" >"$variant/$prog.sh"
        chmod +x "$variant/$prog.sh"
    fi
done

# ---------------------------------------------------------------- runs
signame() {   # status as shown in messages: "134 (SIGABRT)"
    if [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
        echo "$1 (SIG$(kill -l $(($1 - 128))))"
    else
        echo "$1"
    fi
}
# run MODE: runs the program in ./MODE/ (stdout, stderr, traces there) and sets
# st (exit status; 128 + signal) and hung (1 if the hang guard ended it).
run() {
    local dir=$work/$mode variant=inst
    local -a cmd=()
    mkdir "$dir"
    case $mode in
    reference) variant=ref ;;
    off) ;;
    full) cmd=("$bin/pes-collect" -q --full -o t.zst --) ;;
    comm+full) cmd=("$bin/pes-collect" -q --mode comm --full --period $period -o s.zst --full-output f.zst --) ;;
    *) cmd=("$bin/pes-collect" -q --mode "$mode" --period $period -o s.zst --) ;;
    esac
    local a=${args//@HELPER@/$work/$variant/helper}
    a=${a//@LIB@/$work/$variant/libbh_dl.so}
    if [ $wrap = 1 ]; then cmd+=("$work/$variant/$prog.sh" $a); else cmd+=("$work/$variant/$prog" $a); fi
    if [ $sigint = 0 ]; then
        # (bash's own "Segmentation fault" line about the child goes to /dev/null)
        { (cd "$dir" && exec timeout -k 2 "$limit" "${cmd[@]}" </dev/null >out 2>err); } 2>/dev/null
        st=$?
    else
        interrupt "$dir" "${cmd[@]}"
    fi
    echo "$prog $mode: exit $(signame "$st")"
    hung=0
    # timeout's own statuses: 124 (TERM), 137 (KILL after -k); a program that
    # dies by SIGKILL itself is no hang, but none here does
    if [ $st = 124 ] || [ $st = 137 ]; then hung=1; fi
    # SIGXCPU: the CPU-time bound ended it
    if [ $st = 152 ]; then fail "ran past $cpu s of CPU time (ulimit -t): a runaway loop"; fi
}

# interrupt DIR CMD...: starts CMD in DIR, waits for the pid it writes to pid.txt and
# sends that process SIGINT (as ^C does; pes-collect itself ignores it); the run must
# then end by that signal (the caller checks status, output and traces), however long
# a loaded machine takes.
interrupt() {
    local dir=$1 pid= job i
    shift
    (cd "$dir" && exec timeout -k 2 "$limit" "$@" </dev/null >out 2>err) &
    job=$!
    for ((i = 0; i < limit * 100; i++)); do
        pid=$(cat "$dir/pid.txt" 2>/dev/null)
        case $pid in '' | *[!0-9]*) ;; *) break ;; esac
        kill -0 $job 2>/dev/null || break
        sleep 0.01
    done
    case $pid in
    '' | *[!0-9]*)
        { wait $job; } 2>/dev/null
        st=$?
        case $st in
        124 | 137) ;;   # the caller reports the HANG
        *) fail "the program ended (exit $(signame "$st")) without starting its threads" ;;
        esac
        return ;;
    esac
    kill -INT "$pid"
    { wait $job; } 2>/dev/null
    st=$?
}

# check_trace FILE: pes-dump reads all of it; a missing footer is only allowed for cut
# programs, which must still leave the header.
check_trace() {
    local t=$1 n
    if [ ! -s "$t" ]; then
        fail "$(basename "$t"): $([ -e "$t" ] && echo "empty (0 bytes)" || echo "no trace written")"
        return
    fi
    n=$({ "$bin/pes-dump" "$t" 2>"$t.err"; echo $? >"$t.rc"; } | grep -c '^kind ')
    local rc
    rc=$(cat "$t.rc")
    if [ "$rc" != 0 ]; then
        fail "pes-dump rejects $(basename "$t") (exit $rc): $(head -n 3 "$t.err")"
    elif [ "$n" != 1 ]; then
        fail "pes-dump shows no header for $(basename "$t")"
    elif [ -s "$t.err" ] && [ $cut = 0 ]; then
        fail "$(basename "$t") is incomplete: $(head -n 3 "$t.err")"
    elif grep -qv '^pes-dump: warning: ' "$t.err"; then
        fail "pes-dump on $(basename "$t"): $(head -n 3 "$t.err")"
    fi
}

mode=reference
run
ref_st=$st
if [ $hung = 1 ]; then
    echo "HANG: $prog $mode (the plain clang build did not exit within $limit s)" >&2
    exit 1
fi
[ "$ref_st" = "$want" ] || { fail "exit status $(signame "$ref_st"), expected $(signame "$want")"; exit 1; }
[ -s reference/out ] || { fail "no output"; exit 1; }

for mode in off full samples reuse reuse-shared comm comm+full; do
    run
    dir=$work/$mode
    if [ $hung = 1 ]; then
        echo "HANG: $prog $mode (no exit within $limit s; killed)" >&2
        failures=$((failures + 1))
        continue
    fi
    [ "$st" = "$ref_st" ] || fail "exit status $(signame "$st"), clang build $(signame "$ref_st")"
    cmp -s reference/out "$dir/out" ||
        fail "stdout differs from the clang build: $(diff reference/out "$dir/out" | head -n 6)"
    # the collector's own lines (pes-collect:, pes-rt:) apart from the program's stderr
    grep -v -E '^pes-(collect|rt): ' "$dir/err" >"$dir/err.prog"
    cmp -s reference/err "$dir/err.prog" ||
        fail "stderr differs from the clang build: $(diff reference/err "$dir/err.prog" | head -n 6)"
    if grep -q -E '^pes-(collect|rt): ' "$dir/err"; then
        fail "collector messages (-q): $(grep -E '^pes-(collect|rt): ' "$dir/err" | head -n 3)"
    fi
    case $mode in
    off) traces= ;;
    full) traces=t.zst ;;
    comm+full) traces="s.zst f.zst" ;;
    *) traces=s.zst ;;
    esac
    for t in $traces; do check_trace "$dir/$t"; done
    # nothing else: the collector off writes no file, children and exec'd programs none
    for t in "$dir"/*.zst; do
        [ -e "$t" ] || continue
        case " $traces " in
        *" $(basename "$t") "*) ;;
        *) fail "unexpected trace $(basename "$t")"; check_trace "$t" ;;
        esac
    done
done

# the exec'd image says, without -q, that the trace is its own first image's
if [ $prog = exec_self ]; then
    mode=exec-message
    mkdir "$work/$mode"
    (cd "$work/$mode" && timeout -k 2 "$limit" "$bin/pes-collect" --full -o t.zst -- "$work/inst/$prog" \
        </dev/null >out 2>err)
    grep -q "t.zst was written by this process before it called exec; the new program is not traced" \
        "$work/$mode/err" || fail "no exec message: $(grep -E '^pes-(collect|rt): ' "$work/$mode/err" | head -n 3)"
fi

if [ $failures != 0 ]; then
    echo "$prog: $failures failures" >&2
    exit 1
fi
echo "$prog: output, exit status $(signame "$ref_st") and traces as expected in every mode"
exit 0
