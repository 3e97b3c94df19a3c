# e2e tests of the LLVM pass (llvm-pass/) against a mock runtime
# (tests/e2e/pass/mock_rt.c); programs are built at test time with the
# freshly built plugin, at -O0 and -O2. See docs/llvm-pass.md.
if(TARGET PesPass)
  set(PES_PASS_TEST_DIR ${CMAKE_CURRENT_LIST_DIR}/pass)
  find_program(PES_TEST_CLANG NAMES clang-${PES_LLVM_VERSION} clang)
  set(PES_PASS_COMMON -DPES_CLANG=${PES_BIN_DIR}/pes-clang -DCLANG=${PES_TEST_CLANG}
                      -DPLUGIN=$<TARGET_FILE:PesPass>)
  # pes_pass_test(NAME SRC OPT [NOSAN] [MODE m] [FLAGS ..] [ENV ..])
  # NOSAN: the expectations describe clang's plain code shape (op counts,
  # labels, vectorised loops), which UBSan checks change: never sanitized.
  function(pes_pass_test name src opt)
    cmake_parse_arguments(T "NOSAN" "MODE" "FLAGS;ENV" ${ARGN})
    set(work ${CMAKE_BINARY_DIR}/e2e-pass/${name})
    # Test programs follow the build's sanitizers (TSan reports libomp internals).
    set(san "${PES_SANITIZE}")
    if(T_NOSAN OR (san MATCHES "thread" AND "-fopenmp" IN_LIST T_FLAGS))
      set(san "")
    endif()
    add_test(NAME e2e.pass.${name}
             COMMAND ${CMAKE_COMMAND} ${PES_PASS_COMMON} -DSRC=${PES_PASS_TEST_DIR}/${src}
                     -DOPT=${opt} -DWORK=${work} -DMODE=${T_MODE} "-DFLAGS=${T_FLAGS}"
                     "-DENV=${T_ENV}" "-DSANITIZE=${san}" -P ${PES_PASS_TEST_DIR}/run_test.cmake)
    set_tests_properties(e2e.pass.${name} PROPERTIES LABELS "e2e;pass" TIMEOUT 120)
  endfunction()
  foreach(opt O0 O2)
    foreach(prog scalar vector atomics memops)
      pes_pass_test(${prog}.${opt} ${prog}.c -${opt})
    endforeach()
    pes_pass_test(bb.${opt} bb.c -${opt} NOSAN)
    pes_pass_test(omp.${opt} omp.c -${opt} FLAGS -fopenmp ENV OMP_NUM_THREADS=4)
    pes_pass_test(cxx.${opt} cxx.cpp -${opt})
    # Block facts (forks, barriers, instrs, chains): hand-derived per function.
    pes_pass_test(facts.${opt} facts.c -${opt} NOSAN FLAGS -fopenmp ENV OMP_NUM_THREADS=2)
    # Call edges (pes/trace.h): hand-derived CALL/RETURN sequences and paths.
    pes_pass_test(calls.${opt} calls.c -${opt})
    pes_pass_test(calls_eh.${opt} calls_eh.cpp -${opt})
    pes_pass_test(calls_omp.${opt} calls_omp.c -${opt} FLAGS -fopenmp ENV OMP_NUM_THREADS=2)
    # ... and the other records as without them (same_main.c). Never
    # sanitized: ASan's fake stack moves locals to other addresses in each build.
    set(san "")
    add_test(NAME e2e.pass.calls_same.${opt}
             COMMAND ${CMAKE_COMMAND} -DPES_CLANG=${PES_BIN_DIR}/pes-clang -DCLANG=${PES_TEST_CLANG}
                     -DOPT=-${opt} -DWORK=${CMAKE_BINARY_DIR}/e2e-pass/calls_same.${opt}
                     "-DSANITIZE=${san}" -P ${PES_PASS_TEST_DIR}/same_test.cmake)
    set_tests_properties(e2e.pass.calls_same.${opt} PROPERTIES LABELS "e2e;pass" TIMEOUT 120)
  endforeach()
  # Loop descriptors against per-access records, shape by shape (O0: none qualify).
  foreach(opt O0 O1 O2 O3)
    pes_pass_test(loops.${opt} loops.c -${opt})
  endforeach()
  if(PES_GATHER_MARCH) # wide vectors, masked tails and gathers where the CPU has them
    pes_pass_test(loops.O2.wide loops.c -O2 NOSAN FLAGS ${PES_GATHER_MARCH} -DLOOPS_EQUALITY_ONLY)
  endif()
  # Lanes against instructions in vector bodies of a known width.
  pes_pass_test(facts_vec.O2 facts_vec.c -O2 NOSAN FLAGS -mllvm -force-vector-width=4 -mllvm
                -force-vector-interleave=1)
  # -mllvm -pes-skip-stack (at -O0, where locals live in allocas).
  pes_pass_test(skipstack.O0 skipstack.c -O0 FLAGS -mllvm -pes-skip-stack)
  # Full -g (clang then outlines OpenMP regions through *_debug__ functions).
  pes_pass_test(omp.O0g omp.c -O0 FLAGS -fopenmp -g ENV OMP_NUM_THREADS=4)
  # Plain clang -fpass-plugin, without pes-clang (no value names: "bbN" labels).
  pes_pass_test(scalar.direct scalar.c -O2 MODE direct)
  pes_pass_test(bb.direct bb.c -O2 NOSAN MODE direct)
  # Relative source name: site file = compilation directory + "/" + name.
  pes_pass_test(scalar.relative scalar.c -O1 MODE relative)
  if(PES_GATHER_MARCH)
    pes_pass_test(gather.O2 gather.c -O2 NOSAN FLAGS ${PES_GATHER_MARCH})
  else()
    message(STATUS "pes: no AVX2 on this CPU: e2e.pass.gather not registered")
  endif()
  # Stack frames of a recursive function, pes-clang against clang (never
  # sanitized: ASan's redzones are not ours). Allowed per level: -O2, the id
  # base and the TLS address in two callee-saved registers; -O0, see
  # docs/llvm-pass.md "Stack frames". On x86-64 also: slow paths via the GOT.
  find_program(PES_TEST_READELF NAMES llvm-readelf-${PES_LLVM_VERSION} readelf)
  set(readelf "")
  if(PES_TEST_READELF AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(readelf ${PES_TEST_READELF})
  endif()
  foreach(frame O2:16 O0:96)
    string(REPLACE ":" ";" frame ${frame})
    list(GET frame 0 opt)
    list(GET frame 1 allow)
    add_test(NAME e2e.pass.frame.${opt}
             COMMAND ${CMAKE_COMMAND} -DPES_CLANG=${PES_BIN_DIR}/pes-clang -DCLANG=${PES_TEST_CLANG}
                     -DOPT=-${opt} -DALLOW=${allow} -DREADELF=${readelf}
                     -DWORK=${CMAKE_BINARY_DIR}/e2e-pass/frame.${opt}
                     -P ${PES_PASS_TEST_DIR}/frame_test.cmake)
    set_tests_properties(e2e.pass.frame.${opt} PROPERTIES LABELS "e2e;pass" TIMEOUT 120)
  endforeach()
  add_test(NAME e2e.pass.pes-clang
           COMMAND ${CMAKE_COMMAND} -DPES_CLANG=${PES_BIN_DIR}/pes-clang -DCLANG=${PES_TEST_CLANG}
                   -DWORK=${CMAKE_BINARY_DIR}/e2e-pass/pes-clang
                   -P ${PES_PASS_TEST_DIR}/pes_clang_test.cmake)
  set_tests_properties(e2e.pass.pes-clang PROPERTIES LABELS "e2e;pass" TIMEOUT 120)
endif()
