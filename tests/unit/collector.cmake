# Unit tests of the runtime's side-effect-free parts (pes_rt_util).
foreach(t test_rt_env test_rt_host test_rt_module_table test_rt_quote)
  pes_add_unit_test(${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${t}.c LIBS pes_rt_util)
  set_tests_properties(unit.${t} PROPERTIES LABELS "unit;collector")
endforeach()
