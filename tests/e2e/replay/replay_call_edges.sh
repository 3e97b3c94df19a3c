#!/usr/bin/env bash
# Call edges through the real runtime (docs/trace-format.md §3.3): a
# one-thread program built by pes-clang -O2 with and without
# -mllvm -pes-no-call-edges, traced with pes-collect --full. By hand: main
# stores first (its thread records from then on), calls work once, work calls
# leaf 1000 times and rec(5), which recurses 5 times: 1007 CALLs and 1007
# RETURNs, each RETURN with its CALL's stack pointer, pes-dump printing the
# call's file:line and function; no other record changes (the same access and
# block counts) and pes-replay's report is the same.
. "$(dirname "$0")/common.sh"
cat >"$work/prog.c" <<'C'
#include <stdio.h>
#define NOINL __attribute__((noinline))
static volatile long sink;
static long a[1000];
NOINL static long leaf(long i) { return a[i] += i; }
NOINL static long rec(int n) {
    if (n == 0)
        return sink;
    long r = rec(n - 1);
    sink = r;
    return r + 1;
}
NOINL static long work(void) {
    long s = 0;
    for (long i = 0; i < 1000; i++)
        s += leaf(i);
    return s + rec(5);
}
int main(void) {
    sink = 1;
    long s = work();
    printf("%ld\n", s);
    return 0;
}
C
for v in edges plain; do
  flags=()
  [ $v = plain ] && flags=(-mllvm -pes-no-call-edges)
  "$PES_BIN/pes-clang" -O2 "${flags[@]}" "$work/prog.c" -o "$work/prog.$v"
  "$PES_BIN/pes-collect" -q --full -o "$work/$v.zst" -- "$work/prog.$v" >"$work/$v.out"
  [ "$(cat "$work/$v.out")" = 499506 ] || fail "$v: printed $(cat "$work/$v.out")"
  "$PES_BIN/pes-dump" "$work/$v.zst" >"$work/$v.dump"
done
# 1 + 1000 + 1 + 5 calls, by call line (leaf returns i: 499500; rec(5) 6)
want="1 prog.c:21 main
1000 prog.c:16 work
1 prog.c:17 work
5 prog.c:9 rec"
got=$(sed -n 's/^T0 call .*\/\(prog\.c:[0-9]*\) \([a-z]*\) sp=.*/\1 \2/p' "$work/edges.dump" | sort |
      uniq -c | sed 's/^ *//')
[ "$got" = "$(echo "$want" | sort -k2)" ] || fail "calls by line: got
$got
want
$want"
[ "$(grep -c '^T0 return sp=' "$work/edges.dump")" = 1007 ] || fail "RETURN count"
# each RETURN closes the innermost open CALL of the same stack pointer
"${PYTHON:-python3}" - "$work/edges.dump" <<'PY' || fail "RETURNs do not match their CALLs"
import re, sys
stack = []
for line in open(sys.argv[1]):
    m = re.match(r"T0 (call|return) .*sp=(0x[0-9a-f]+)", line)
    if not m:
        continue
    sp = int(m.group(2), 16)
    if m.group(1) == "call":
        assert not stack or sp < stack[-1], f"callee's stack pointer {sp:#x} not below its caller's"
        stack.append(sp)
    else:
        assert stack and stack.pop() == sp, f"RETURN sp={sp:#x} closes no CALL"
assert not stack, f"{len(stack)} CALLs never returned"
PY
grep -q '^T0 \(call\|return\)' "$work/plain.dump" && fail "-pes-no-call-edges: CALL/RETURN records"
for v in edges plain; do
  "$PES_BIN/pes-dump" --stats "$work/$v.zst" | sed -n 's/^records *\(access [0-9]*  bb [0-9]*\).*/\1/p' >"$work/$v.stats"
  "$PES_BIN/pes-replay" "$work/$v.zst" --machine haswell | tail -n +3 >"$work/$v.full"
  # the report without the rows' call paths (only the trace with edges has them)
  grep -Ev '^ +[0-9]+\.[0-9]%  |^  \(under a row: its top call paths' "$work/$v.full" >"$work/$v.report" || true
done
grep -qx '    100.0%  main (prog.c:21) > work (prog.c:16) > leaf' "$work/edges.full" ||
  fail "the report of the trace with edges has no path main > work > leaf: $(grep '%  main' "$work/edges.full")"
[ -s "$work/edges.stats" ] || fail "no record counts from pes-dump --stats"
cmp -s "$work/edges.stats" "$work/plain.stats" || fail "access/bb counts differ: $(cat "$work/edges.stats") vs $(cat "$work/plain.stats")"
cmp -s "$work/edges.report" "$work/plain.report" || { diff "$work/edges.report" "$work/plain.report" | head >&2; fail "reports differ"; }
echo "call edges: 1007 calls and returns matched; records and report as without them"
