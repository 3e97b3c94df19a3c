#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the prefix moved elsewhere
# (nothing may point back into the build tree or the configured prefix), and
# the installed demo (share/pes/demo/demo.sh: pes-clang builds the kernel,
# pes-collect records it, pes-dump and pes-replay read it) run from there with
# the build and source trees hidden (a mount namespace with empty tmpfs over
# both), so that nothing it uses can come from them. Also: every man page renders,
# pkg-config's pes-trace builds a program that reads the trace, and bash
# completion offers the commands' options.
set -euo pipefail
: "${PES_BUILD:?PES_BUILD must name the build directory}"
: "${PES_SRC:?PES_SRC must name the source tree}"
lib=${PES_LIBDIR:-lib}   # CMAKE_INSTALL_LIBDIR (lib, lib64, lib/x86_64-linux-gnu)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$PES_BUILD" --prefix "$work/first" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
mv "$work/first" "$work/moved"
p=$work/moved
for f in bin/pes-clang bin/pes-clang++ bin/pes-collect bin/pes-replay bin/pes-dump bin/pes-calibrate "$lib/libpes-rt.so" \
         "$lib/pes/PesPass.so" "$lib/libpes_trace.a" include/pes/trace.h "$lib/pkgconfig/pes-trace.pc" \
         share/pes/machines/haswell.machine include/pes/roi.h \
         share/pes/demo/demo.sh share/pes/demo/gemm.c share/pes/demo/kernel_common.h \
         share/man/man1/pes-clang.1 share/man/man1/pes-collect.1 share/man/man1/pes-replay.1 \
         share/man/man1/pes-dump.1 share/man/man1/pes-calibrate.1 share/bash-completion/completions/pes-replay \
         share/bash-completion/completions/pes-collect share/doc/pes/README.md share/doc/pes/replay.md; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
if grep -rqF "$PES_BUILD" "$p/bin/pes-clang" "$p/share/bash-completion" "$p/$lib/pkgconfig"; then
  fail "an installed file names the build tree"
fi
echo "ok: installed and moved"

# pes-clang finds the plugin and the runtime next to itself
"$p/bin/pes-clang" --pes-print-config >"$work/config"
grep -qx "plugin=$p/$lib/pes/PesPass.so" "$work/config" || { cat "$work/config"; fail "pes-clang's plugin"; }
grep -qx "runtime_dir=$p/$lib" "$work/config" || { cat "$work/config"; fail "pes-clang's runtime"; }

# pes-replay finds machine presets in the prefix (a preset only the prefix has)
sed 's/^name *=.*/name = testbox/' "$p/share/pes/machines/haswell.machine" >"$p/share/pes/machines/testbox.machine"
"$p/bin/pes-replay" --machine testbox --show-machine >"$work/machine" 2>&1 ||
  { cat "$work/machine"; fail "the installed presets are not found"; }

# the installed demo, exactly as a user runs it, with the build and source
# trees out of sight (root or not: unshare -r maps the caller to root)
hide() {
  local as_root=; [ "$(id -u)" = 0 ] || as_root=-r
  unshare $as_root -m bash -c 'mount -t tmpfs none "$1" && mount -t tmpfs none "$2" && shift 2 && "$@"' \
    _ "$PES_BUILD" "$PES_SRC" "$@"
}
hide true || fail "unshare -m: cannot hide the build tree (needs mount namespaces)"
hide test -e "$PES_BUILD/CMakeCache.txt" && fail "the build tree is still visible in the namespace"
hide "$p/share/pes/demo/demo.sh" "$work/demo" >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; fail "the installed demo"; }
for step in "== pes-collect --full" "== pes-dump --stats" "== pes-replay: the 4 recorded threads" \
            "== pes-replay: PPT-Multicore"; do
  grep -qF -- "$step" "$work/demo.log" || { cat "$work/demo.log"; fail "the demo did not reach: $step"; }
done
ldd "$work/demo/gemm" >"$work/ldd"
grep -qF "$p/$lib/libpes-rt.so" "$work/ldd" || { cat "$work/ldd"; fail "the demo program does not use the installed runtime"; }
cp "$work/demo/gemm.full.zst" "$work/gemm.zst"
"$p/bin/pes-replay" "$work/gemm.zst" --machine haswell --simulate --format json >"$work/report.json"
accesses=$(jq '.trace.accesses' "$work/report.json")
[ "$accesses" -gt 100000 ] || fail "pes-replay from the prefix: $accesses accesses"
echo "ok: the installed demo from the prefix, build and source trees hidden ($accesses accesses)"

# man pages render, with a synopsis
for m in pes-clang pes-collect pes-replay pes-dump pes-calibrate; do
  MANWIDTH=80 man -l "$p/share/man/man1/$m.1" 2>"$work/man.err" >"$work/man.txt" || { cat "$work/man.err"; fail "man -l $m.1"; }
  grep -q "^SYNOPSIS" "$work/man.txt" || fail "$m(1) has no synopsis"
  grep -q "^EXAMPLES" "$work/man.txt" || fail "$m(1) has no examples"
  grep -q "^EXIT STATUS" "$work/man.txt" || fail "$m(1) has no EXIT STATUS section"
done
echo "ok: man pages render"

# pkg-config: a program of our own reads the trace through libpes_trace
cat >"$work/count.c" <<'C'
#include <stdio.h>
#include "pes/trace.h"
int main(int argc, char **argv) {
    struct pes_error err = {0};
    struct pes_trace_reader *r = argc > 1 ? pes_trace_reader_open(argv[1], &err) : NULL;
    if (!r) { fprintf(stderr, "%s\n", err.message); return 1; }
    struct pes_block b;
    unsigned long long records = 0;
    while (pes_trace_reader_next(r, &b, &err) > 0)
        if (b.type == PES_BLOCK_ACCESS) records += b.n;
    pes_trace_reader_close(r);
    printf("%llu\n", records);
    return 0;
}
C
export PKG_CONFIG_PATH=$p/$lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config prints words
want=$(jq '.trace.records' "$work/report.json")
# libpes_trace is a static library: plain --libs must link it too (issue 28)
for static in --static ""; do
  # shellcheck disable=SC2046,SC2086  # pkg-config prints words; $static may be empty
  cc "$work/count.c" -o "$work/count" $(pkg-config --cflags --libs $static pes-trace) ||
    fail "cc count.c \$(pkg-config --cflags --libs $static pes-trace): $(pkg-config --cflags --libs $static pes-trace)"
  records=$("$work/count" "$work/gemm.zst")
  [ "$records" -ge "$want" ] || fail "pkg-config program read $records records, pes-replay $want"
done
echo "ok: pkg-config pes-trace, --libs and --libs --static ($records records)"

# bash completion: options from --help, values of --format
complete_words() {
  bash -c 'source /usr/share/bash-completion/bash_completion
           source "$1/share/bash-completion/completions/pes-replay"
           shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
           _pes "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"; printf "%s\n" "${COMPREPLY[@]}"' _ "$p" "$@"
}
# (the words are kept first: grep -q would stop reading them, a SIGPIPE under pipefail)
words=$(complete_words "$p/bin/pes-replay" --sim)
grep -qx -- "--simulate" <<<"$words" || fail "completion of pes-replay --sim: $words"
words=$(complete_words "$p/bin/pes-collect" --mo)
grep -qx -- "--mode" <<<"$words" || fail "completion of pes-collect --mo: $words"
words=$(complete_words "$p/bin/pes-dump" --format "")
grep -qx json <<<"$words" || fail "completion of pes-dump --format: $words"
# every option once (pes-collect's help names --skip again in a continuation line)
for c in pes-collect pes-replay pes-dump pes-calibrate; do
  words=$(complete_words "$p/bin/$c" --)
  dups=$(sort <<<"$words" | uniq -d)
  [ -z "$dups" ] || fail "completion of $c -- lists twice: $dups"
  [ "$(wc -l <<<"$words")" -ge 5 ] || fail "completion of $c --: $words"
done
# an option that takes one of a set completes to exactly that set, which is
# the set the command's own usage error names ("expected A, B or C"); no files
touch "$work/a-file-not-to-offer"
cd "$work"
for co in "pes-replay --sort" "pes-replay --by" "pes-replay --format" "pes-replay --runtime-model" \
          "pes-replay --interleave" "pes-replay --page-map" "pes-replay --reuse-estimator" \
          "pes-replay --stack-model" "pes-replay --interval-bias" "pes-replay --comm-estimator" \
          "pes-replay --input-format" "pes-collect --mode" "pes-collect --backend" \
          "pes-collect --granularity" "pes-dump --format" "pes-calibrate --sizes"; do
  c=${co% *} o=${co#* }
  got=$(complete_words "$p/bin/$c" "$o" "" | sort | tr '\n' ' ')
  rc=0
  "$p/bin/$c" "$o" zzz-not-a-value "$work/a-file-not-to-offer" >/dev/null 2>"$work/usage.err" </dev/null || rc=$?
  [ "$rc" -ne 0 ] || fail "$co zzz-not-a-value: accepted"
  want=$(sed -n 's/.*: expected \(.*\), got .zzz-not-a-value.*/\1/p' "$work/usage.err" |
         sed 's/,\? or /, /; s/, /\n/g' | sort | tr '\n' ' ')
  [ -n "$want" ] || fail "$co: no 'expected ...' in $(cat "$work/usage.err")"
  [ "$got" = "$want" ] || fail "completion of $co: '$got', the command takes '$want'"
done
# numbers: no file names
words=$(complete_words "$p/bin/pes-replay" --top "")
[ -z "$words" ] || fail "completion of pes-replay --top offers: $words"
cd - >/dev/null
echo "ok: bash completion (options once each; enumerated values as the commands take them)"
