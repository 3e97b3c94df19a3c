# frame_test.cmake — the stack frame of a recursive function built by pes-clang
# against the same function built by clang (tests/e2e/pass/frame.c), and the
# recursion depth that fits in a 2 MiB stack. docs/llvm-pass.md, "Stack frames".
#   cmake -DPES_CLANG=.. -DCLANG=.. -DOPT=-O2 -DALLOW=bytes -DWORK=dir
#         [-DREADELF=..] -P frame_test.cmake
# ALLOW: how many bytes per level the instrumented build may add.
# READELF: also check that the slow paths are called through the GOT.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/pass_script.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENVS PES_CLANG_RT_DIR=${WORK} PES_CLANG_RT_LIB=pes-mock-rt)

# Stack bytes per recursion level and the program's result.
function(measure exe prefix)
  run("${exe}" ${exe})
  if(NOT OUT MATCHES "bytes_per_level=([0-9]+) \\(([-0-9]+)\\)")
    message(FATAL_ERROR "${exe}: no bytes_per_level in:\n${OUT}")
  endif()
  set(${prefix}_BYTES ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${prefix}_SUM ${CMAKE_MATCH_2} PARENT_SCOPE)
endfunction()

# Exit code of `exe --run depth` under a 2 MiB stack limit (non-zero: overflow).
set(STACK_KIB 2048)
function(deep exe depth outvar)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENVS} sh -c "ulimit -s ${STACK_KIB} && exec \"$0\" --run $1"
                          ${exe} ${depth}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  set(${outvar} ${rc} PARENT_SCOPE)
endfunction()

# Plain (never sanitized): the mock and both builds of the program.
run("mock runtime" ${CLANG} -O1 -shared -fPIC ${INCS} ${HERE}/mock_rt.c -o ${WORK}/libpes-mock-rt.so)
run("clang build" ${CLANG} ${OPT} -Wall -Wextra -Werror ${HERE}/frame.c -o ${WORK}/frame-clang)
run("pes-clang build" ${PES_CLANG} ${OPT} -Wall -Wextra -Werror -fverify-intermediate-code ${INCS}
    ${HERE}/frame.c -o ${WORK}/frame-pes)
measure(${WORK}/frame-clang CLANG)
measure(${WORK}/frame-pes PES)
message("bytes per level ${OPT}: clang ${CLANG_BYTES}, pes-clang ${PES_BYTES} (allowed ${ALLOW} more)")
if(NOT PES_SUM STREQUAL CLANG_SUM)
  message(FATAL_ERROR "results differ: clang ${CLANG_SUM}, pes-clang ${PES_SUM}")
endif()
math(EXPR limit "${CLANG_BYTES} + ${ALLOW}")
if(PES_BYTES GREATER limit)
  message(FATAL_ERROR "pes-clang ${OPT}: ${PES_BYTES} bytes per level, more than clang's "
                      "${CLANG_BYTES} + ${ALLOW}")
endif()

# The stack limit is what ends the recursion: clang's build overflows 10 %
# beyond the depth its frames fill, and pes-clang's build survives 90 % of the
# depth that frames of clang's size + ALLOW would fill.
math(EXPR too_deep "${STACK_KIB} * 1024 * 11 / 10 / ${CLANG_BYTES}")
deep(${WORK}/frame-clang ${too_deep} rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "clang build survived ${too_deep} levels in ${STACK_KIB} KiB: the limit is not in force")
endif()
math(EXPR fits "${STACK_KIB} * 1024 * 9 / 10 / ${limit}")
deep(${WORK}/frame-pes ${fits} rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pes-clang build did not survive ${fits} levels in ${STACK_KIB} KiB (${rc})")
endif()
message("${STACK_KIB} KiB stack: clang build overflows at ${too_deep} levels, pes-clang build survives ${fits}")

# The slow paths save registers the C convention would not (pes/rt_abi.h): a
# lazily bound PLT entry would clobber r10 before reaching them, so every call
# goes through the GOT.
if(READELF)
  run("pes-clang -c" ${PES_CLANG} ${OPT} ${HERE}/frame.c -c -o ${WORK}/frame.o)
  run("readelf" ${READELF} -rW ${WORK}/frame.o)
  string(REGEX MATCHALL "[^\n]*__pes_(record_slow|check_due)[^\n]*" relocs "${OUT}")
  if(NOT relocs)
    message(FATAL_ERROR "no relocation against the slow paths in:\n${OUT}")
  endif()
  foreach(r IN LISTS relocs)
    if(NOT r MATCHES "GOTPCREL")
      message(FATAL_ERROR "slow path not called through the GOT:\n${r}")
    endif()
  endforeach()
endif()
