# Reuse distance engine, profiles and PPT-Multicore mimicking (replay/src).
include(${CMAKE_CURRENT_LIST_DIR}/../../replay/reuse.cmake)
pes_add_unit_test(test_reuse_distance
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reuse_distance.c
  LIBS pes_reuse)
pes_add_unit_test(test_mimic
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mimic.c
  LIBS pes_reuse m)
# Chunked (PARDA) reuse distances vs a brute-force LRU stack, summary packing,
# the worker pool and pes_profiles on 1..8 threads vs 1 (TSan: `concurrent`).
pes_add_unit_test(test_parda
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_parda.c
  LIBS pes_reuse Threads::Threads)
set_tests_properties(unit.test_parda PROPERTIES LABELS "unit;concurrent")
