# The pebs/ibs backends of libpes-rt, LD_PRELOADed into an uninstrumented
# program that fakes perf_event_open with memfd "ring buffers" (pmu_app.c).
# Sanitizer runtimes must come first in the link, so LD_PRELOAD of the
# runtime is only tested in plain builds.
if(NOT PES_SANITIZE)
  add_executable(pmu_app ${CMAKE_CURRENT_LIST_DIR}/pmu_app.c)
  target_link_libraries(pmu_app PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(pmu_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/e2e
                                           ENABLE_EXPORTS ON)
  add_library(pmu_fake_syscall SHARED ${CMAKE_CURRENT_LIST_DIR}/pmu_fake_syscall.c)
  target_link_libraries(pmu_fake_syscall PRIVATE ${CMAKE_DL_LIBS})
  foreach(scenario pebs pebs-samples pebs-samples-refused threads ibs pebs-nested pebs-reuse pebs-comm no-pmu collect collect-pebs instrumented)
    add_test(NAME e2e.pmu.${scenario}
             COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pmu_run.sh ${scenario} ${PES_BIN_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/e2e $<TARGET_FILE:pes-rt>
                     $<TARGET_FILE:pmu_fake_syscall>)
    set_tests_properties(e2e.pmu.${scenario} PROPERTIES LABELS "e2e;collector;pmu" TIMEOUT 60)
  endforeach()
endif()
