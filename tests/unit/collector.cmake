# Unit tests of the runtime's side-effect-free parts (pes_rt_util).
foreach(t test_rt_env test_rt_host test_rt_module_table test_rt_quote test_rt_reservoir
          test_rt_check test_rt_adapt)
  pes_add_unit_test(${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${t}.c LIBS pes_rt_util)
  set_tests_properties(unit.${t} PROPERTIES LABELS "unit;collector")
endforeach()
target_link_libraries(test_rt_reservoir PRIVATE m)

# PEBS/IBS building blocks without a PMU: forced libpfm4 models, synthetic ring
# buffers, injected perf_event_open failures.
pes_add_unit_test(test_rt_pmu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_pmu.c LIBS pes_pmu)
set_tests_properties(unit.test_rt_pmu PROPERTIES LABELS "unit;collector")
