# Unit tests of the model library (model/): profiles, SDCM, runtime, machines.
foreach(t profile sdcm runtime machine)
  pes_add_unit_test(test_model_${t}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_model_${t}.c
    LIBS pes_model)
endforeach()
