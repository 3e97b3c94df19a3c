# Loop descriptors end to end (issue 27): every bench kernel and the loop
# shapes, recorded with descriptors and with --no-descriptors on the same
# address layout; expanded records equal per thread, reports equal at 1 thread.
if(TARGET PesPass)
  set(PES_TWINS_DIR ${CMAKE_CURRENT_LIST_DIR}/descriptors)
  set(PES_TWINS_WORK ${CMAKE_CURRENT_BINARY_DIR}/e2e-descriptors)
  function(pes_twins name threads size src)
    add_test(NAME e2e.descriptors.${name}.t${threads}
             COMMAND sh ${PES_TWINS_DIR}/twins.sh ${PES_BIN_DIR} ${PES_TWINS_WORK} ${threads}
                     ${size} ${src} ${ARGN})
    set_tests_properties(e2e.descriptors.${name}.t${threads} PROPERTIES
                         LABELS "e2e;descriptors" TIMEOUT 600)
  endfunction()
  foreach(k gemm transpose jacobi2d trisolv reduction atax cg mg is)
    pes_twins(${k} 1 small ${PROJECT_SOURCE_DIR}/bench/kernels/${k}.c)
    pes_twins(${k} 2 small ${PROJECT_SOURCE_DIR}/bench/kernels/${k}.c)
  endforeach()
  pes_twins(shapes 1 2 ${PES_TWINS_DIR}/shapes.c)
  pes_twins(omp_shapes 2 2 ${PES_TWINS_DIR}/omp_shapes.c)
  pes_twins(omp_shapes 1 2 ${PES_TWINS_DIR}/omp_shapes.c)
endif()
