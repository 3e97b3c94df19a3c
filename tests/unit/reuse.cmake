# Reuse distance engine, SHARDS sampling, profiles (replay/reuse) and
# PPT-Multicore mimicking (replay/stream).
pes_add_unit_test(test_reuse_distance
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reuse_distance.c
  LIBS pes_reuse)
pes_add_unit_test(test_shards
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_shards.c
  LIBS pes_reuse m)
pes_add_unit_test(test_mimic
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mimic.c
  LIBS pes_stream m)
# Chunked (PARDA) reuse distances vs a brute-force LRU stack, summary packing,
# the worker pool and pes_profiles on 1..8 threads vs 1 (TSan: `concurrent`).
pes_add_unit_test(test_parda
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_parda.c
  LIBS pes_reuse Threads::Threads)
set_tests_properties(unit.test_parda PROPERTIES LABELS "unit;concurrent")
