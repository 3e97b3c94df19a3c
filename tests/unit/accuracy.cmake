# Unit tests of the accuracy modules (time -> stack conversion, compare metrics,
# sampled-trace analyses).
include(${CMAKE_CURRENT_LIST_DIR}/../../replay/reuse.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../../replay/accuracy.cmake)
pes_add_unit_test(test_time_to_stack SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_time_to_stack.c
                  LIBS pes_accuracy pes_reuse)
pes_add_unit_test(test_compare SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compare.c LIBS pes_accuracy)
if(TARGET pes_replay_core)
  pes_add_unit_test(test_sampled SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sampled.c LIBS pes_replay_core)
endif()
