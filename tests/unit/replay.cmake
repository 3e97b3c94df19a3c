# Unit tests of pes-replay's own modules (replay/src: merge).
if(TARGET pes_replay_core)
  pes_add_unit_test(test_merge SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_merge.c LIBS pes_replay_core)
endif()
