# Unit tests of the model library (model/): profiles, SDCM, runtime, machines.
foreach(t profile sdcm runtime machine)
  pes_add_unit_test(test_model_${t}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_model_${t}.c
    LIBS pes_model)
endforeach()

# pes-calibrate's analysis, hwloc topology (XML fixtures in tests/data/hwloc)
# and .machine writer (model/calibrate/); no clock.
pes_add_unit_test(test_calibrate
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_calibrate.c
  LIBS pes_calibrate)
target_compile_definitions(test_calibrate PRIVATE PES_SRC="${PROJECT_SOURCE_DIR}")
