# Reuse distance engine, SHARDS sampling, profiles and PPT-Multicore mimicking
# (replay/src).
include(${CMAKE_CURRENT_LIST_DIR}/../../replay/reuse.cmake)
pes_add_unit_test(test_reuse_distance
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reuse_distance.c
  LIBS pes_reuse)
pes_add_unit_test(test_shards
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_shards.c
  LIBS pes_reuse m)
pes_add_unit_test(test_mimic
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mimic.c
  LIBS pes_reuse m)
