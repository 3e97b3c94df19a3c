# e2e tests of the LLVM pass (llvm-pass/) against a mock runtime
# (tests/e2e/pass/mock_rt.c); programs are built at test time with the
# freshly built plugin, at -O0 and -O2. See docs/llvm-pass.md.
if(TARGET PesPass)
  set(PES_PASS_TEST_DIR ${CMAKE_CURRENT_LIST_DIR}/pass)
  find_program(PES_TEST_CLANG NAMES clang-${PES_LLVM_VERSION} clang)
  set(PES_PASS_COMMON -DPES_CLANG=${PES_BIN_DIR}/pes-clang -DCLANG=${PES_TEST_CLANG}
                      -DPLUGIN=$<TARGET_FILE:PesPass>)
  # pes_pass_test(NAME SRC OPT [MODE m] [FLAGS ..] [ENV ..])
  function(pes_pass_test name src opt)
    cmake_parse_arguments(T "" "MODE" "FLAGS;ENV" ${ARGN})
    set(work ${CMAKE_BINARY_DIR}/e2e-pass/${name})
    add_test(NAME e2e.pass.${name}
             COMMAND ${CMAKE_COMMAND} ${PES_PASS_COMMON} -DSRC=${PES_PASS_TEST_DIR}/${src}
                     -DOPT=${opt} -DWORK=${work} -DMODE=${T_MODE} "-DFLAGS=${T_FLAGS}"
                     "-DENV=${T_ENV}" -P ${PES_PASS_TEST_DIR}/run_test.cmake)
    set_tests_properties(e2e.pass.${name} PROPERTIES LABELS "e2e;pass" TIMEOUT 120)
  endfunction()
  foreach(opt O0 O2)
    pes_pass_test(scalar.${opt} scalar.c -${opt})
  endforeach()
  pes_pass_test(scalar.direct scalar.c -O2 MODE direct)
endif()
