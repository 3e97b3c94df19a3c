#!/bin/sh
# rt_imports.sh LIBPES_RT — the runtime takes nothing from the program it runs in
# but libc's and the unwinder's functions (issue 31): a program that defines a
# symbol the runtime imports (zstd's ZSTD_*, say) would have the dynamic linker
# bind the runtime's calls to the program's instrumented copy. Checks the
# libraries it needs and every undefined dynamic symbol against an allow-list.
set -u
lib=$1
fail() { echo "FAIL (imports): $*" >&2; exit 1; }
[ -r "$lib" ] || fail "no $lib"
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
    case $n in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | ld-linux*.so.* | libgcc_s.so.*) ;;
    # sanitizer builds: their runtimes are the process's anyway
    libasan.so.* | libubsan.so.* | libtsan.so.* | libclang_rt.*) ;;
    *) fail "libpes-rt.so needs $n: its symbols could be the program's (link it in, hidden)" ;;
    esac
done
# undefined dynamic symbols: "name@VERSION" for versioned ones
bad=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | while read -r s; do
    case $s in
    *@GLIBC_* | *@GCC_*) ;;              # libc (with libpthread, libdl), the unwinder
    __gmon_start__ | _ITM_*) ;;          # the C start files' weak hooks
    __pes_roi_used | pes_rt_pmu_test_open) ;;   # the runtime's own weak hooks (pes/roi.h, tests)
    __asan_* | __ubsan_* | __tsan_* | __sanitizer_* | __lsan_*) ;;
    *) echo "$s" ;;
    esac
done)
[ -z "$bad" ] || fail "libpes-rt.so imports symbols a program could define: $(echo $bad | head -c 300)"
echo "libpes-rt.so: needs $(echo $needed), imports only libc and unwinder symbols"
