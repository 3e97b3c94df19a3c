# Unit tests of pes-replay's stream modules (replay/stream: merge).
pes_add_unit_test(test_merge SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_merge.c LIBS pes_stream)
