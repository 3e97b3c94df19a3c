#!/bin/sh
# The layering checker on a made-up tree: folder a includes and calls b, and
# b includes and calls a (two cycles, both reported, exit 1); then b stops
# doing either (no cycle, exit 0). Usage: selftest.sh CHECKER CC NM WORKDIR
set -u
checker=$1 cc=$2 nm=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/src/a" "$work/src/b" "$work/obj.dir/src/a" "$work/obj.dir/src/b" || exit 1
cd "$work" || exit 1
printf 'int pes_a(void);\n' >src/a/a.h
printf 'int pes_b(void);\n' >src/b/b.h
printf '#include "b/b.h"\nint pes_a(void) { return pes_b() + 1; }\n' >src/a/a.c
printf '#include "a/a.h"\nint pes_b(void) { return pes_a() - 1; }\n' >src/b/b.c
build() {
    for f in a b; do
        "$cc" -c -I src -o obj.dir/src/$f/$f.c.o src/$f/$f.c || fail "cannot compile src/$f/$f.c"
    done
}
build
python3 "$checker" --src src --nm "$nm" obj.dir/src/a/a.c.o obj.dir/src/b/b.c.o >out.txt
rc=$?
cat out.txt
[ $rc = 1 ] || fail "a cycle: exit $rc, expected 1"
grep -q '^INCLUDE cycle between folders: a -> b -> a' out.txt || fail "include cycle not reported"
grep -q '^CALL cycle between folders: a -> b -> a' out.txt || fail "call cycle not reported"
grep -q 'b/b.c uses pes_a (a/a.c)' out.txt || fail "the symbol behind b -> a not named"
# an unqualified include of another folder's header is refused
printf '#include "a.h"\nint pes_b(void) { return 0; }\n' >src/b/b.c
"$cc" -c -I src -I src/a -o obj.dir/src/b/b.c.o src/b/b.c || fail "cannot compile"
python3 "$checker" --src src --nm "$nm" obj.dir/src/a/a.c.o obj.dir/src/b/b.c.o >out.txt
[ $? = 1 ] && grep -q 'INCLUDE error: b/b.c includes "a.h"' out.txt || { cat out.txt; fail "unqualified include accepted"; }
# b no longer depends on a: one arrow, no cycle
printf 'int pes_b(void) { return 0; }\n' >src/b/b.c
build
python3 "$checker" --src src --nm "$nm" obj.dir/src/a/a.c.o obj.dir/src/b/b.c.o >out.txt
rc=$?
cat out.txt
[ $rc = 0 ] || fail "no cycle: exit $rc, expected 0"
grep -q '^include graph: a -> b$' out.txt && grep -q '^call graph: a -> b$' out.txt || fail "graphs wrong"
echo "selftest ok"
