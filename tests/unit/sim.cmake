# Cache/MESI simulator and ReuseTracker ground-truth tests.
if(NOT TARGET pes_sim)
  include(${CMAKE_SOURCE_DIR}/replay/sim.cmake)
endif()
pes_add_unit_test(test_cachesim SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cachesim.c LIBS pes_sim)
pes_add_unit_test(test_mesi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mesi.c LIBS pes_sim)
pes_add_unit_test(test_rt_truth SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_truth.c LIBS pes_sim)
