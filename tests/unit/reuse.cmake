# Reuse distance engine, profiles (replay/reuse) and PPT-Multicore mimicking (replay/stream).
pes_add_unit_test(test_reuse_distance
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reuse_distance.c
  LIBS pes_reuse)
pes_add_unit_test(test_mimic
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mimic.c
  LIBS pes_stream m)
