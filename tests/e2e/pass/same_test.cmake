# same_test.cmake — call edges add records and change no other: same_work.c
# built twice (with edges, and with -mllvm -pes-no-call-edges) into one
# program with same_main.c, against the mock runtime (docs/llvm-pass.md,
# "Call edges").
#   cmake -DPES_CLANG=.. -DCLANG=.. -DOPT=-O2 -DWORK=dir [-DSANITIZE=..] -P same_test.cmake
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/pass_script.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(SAN "")
if(SANITIZE)
  set(SAN -fsanitize=${SANITIZE} -fno-sanitize-recover=all)
endif()
run("building the mock runtime" ${CLANG} -O1 -g -shared -fPIC -Wall -Wextra -Werror ${SAN} ${INCS}
    ${HERE}/mock_rt.c -o ${WORK}/libpes-mock-rt.so)
set(ENVS PES_CLANG_RT_DIR=${WORK} PES_CLANG_RT_LIB=pes-mock-rt)
run("compiling same_work.c with call edges" ${PES_CLANG} ${OPT} -Wall -Wextra -Werror
    -fverify-intermediate-code ${SAN} -DPFX=edges_ -c ${HERE}/same_work.c -o ${WORK}/edges.o)
run("compiling same_work.c without call edges" ${PES_CLANG} ${OPT} -Wall -Wextra -Werror
    -fverify-intermediate-code ${SAN} -DPFX=plain_ -mllvm -pes-no-call-edges -c
    ${HERE}/same_work.c -o ${WORK}/plain.o)
run("linking" ${PES_CLANG} ${OPT} -Wall -Wextra -Werror ${SAN} ${INCS} ${HERE}/same_main.c
    ${WORK}/edges.o ${WORK}/plain.o -o ${WORK}/same)
set(ENVS "")
execute_process(COMMAND ${WORK}/same RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "checks passed" OR NOT out MATCHES "mock: invariants ok")
  message(FATAL_ERROR "same ${OPT}: exit ${rc} or missing verdict lines")
endif()
