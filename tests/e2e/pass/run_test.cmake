# run_test.cmake — builds one pass test program with the freshly built plugin
# against the mock runtime, runs it, and checks its verdict.
#   cmake -DPES_CLANG=.. -DCLANG=.. -DPLUGIN=.. -DSRC=.. -DOPT=-O2 -DWORK=dir
#         [-DMODE=pes-clang|direct|relative] [-DFLAGS=a;b] [-DENV=K=V;..] [-DSANITIZE=address,..]
#         -P run_test.cmake
# SANITIZE (the build's PES_SANITIZE) builds the mock and the program with it.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/pass_script.cmake)
if(NOT MODE)
  set(MODE pes-clang)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# Release builds of clang skip the IR verifier: have it check the pass's output.
set(VERIFY -fverify-intermediate-code)
set(SAN "")
if(SANITIZE)
  set(SAN -fsanitize=${SANITIZE} -fno-sanitize-recover=all)
endif()

# The mock runtime is not instrumented (plain clang), like the real one.
run("building the mock runtime" ${CLANG} -O1 -g -shared -fPIC -Wall -Wextra -Werror ${SAN} ${INCS}
    ${HERE}/mock_rt.c -o ${WORK}/libpes-mock-rt.so)

get_filename_component(name ${SRC} NAME_WE)
if(SRC MATCHES "\\.cpp$")
  set(PES_CLANG ${PES_CLANG}++)   # bin/pes-clang++
endif()
set(exe ${WORK}/${name})
if(MODE STREQUAL "direct")
  run("compiling ${name} with -fpass-plugin" ${CLANG} ${OPT} -g -fpass-plugin=${PLUGIN} -Wall -Wextra
      -Werror ${VERIFY} ${SAN} ${FLAGS} ${INCS} ${SRC} -o ${exe} -L${WORK} -lpes-mock-rt -Wl,-rpath,${WORK})
elseif(MODE STREQUAL "relative")
  # Source named relative to the working directory: the site table must hold
  # the compilation directory joined with it.
  get_filename_component(srcdir ${SRC} DIRECTORY)
  get_filename_component(srcname ${SRC} NAME)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PES_CLANG_RT_DIR=${WORK}
                  PES_CLANG_RT_LIB=pes-mock-rt ${PES_CLANG} ${OPT} -Wall -Wextra -Werror ${VERIFY}
                  ${SAN} ${FLAGS} ${INCS} ${srcname} -o ${exe}
                  WORKING_DIRECTORY ${srcdir} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${srcname} in ${srcdir} failed:\n${err}")
  endif()
else()
  run("compiling ${name} with pes-clang" ${CMAKE_COMMAND} -E env PES_CLANG_RT_DIR=${WORK}
      PES_CLANG_RT_LIB=pes-mock-rt ${PES_CLANG} ${OPT} -Wall -Wextra -Werror ${VERIFY} ${SAN} ${FLAGS}
      ${INCS} ${SRC} -o ${exe})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV} ${exe} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${name} ${OPT}: exit ${rc}")
endif()
if(NOT out MATCHES "checks passed" OR NOT out MATCHES "mock: invariants ok")
  message(FATAL_ERROR "${name} ${OPT}: missing verdict lines")
endif()
