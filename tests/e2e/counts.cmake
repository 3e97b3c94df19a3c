# Exact load/store counts and sample placement through the real pass and the
# two-clone contract (rt_abi.h); see tests/e2e/counts/count_run.sh.
if(TARGET PesPass AND NOT PES_SANITIZE)
  string(REPLACE ";" " " PES_COUNTS_VFLAGS "${PES_GATHER_MARCH}")
  foreach(scenario counts vector switch handler)
    add_test(NAME e2e.counts.${scenario}
             COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/counts/count_run.sh ${scenario} ${PES_BIN_DIR}
                     ${CMAKE_CURRENT_LIST_DIR}/counts "${PES_COUNTS_VFLAGS}")
    set_tests_properties(e2e.counts.${scenario} PROPERTIES LABELS "e2e;collector;counts" TIMEOUT 300)
  endforeach()
endif()
