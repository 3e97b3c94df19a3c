# Unit tests of the sampled-trace modules (replay/sampling: time -> stack
# conversion, compare metrics; replay/analyses: sampled-trace analyses).
pes_add_unit_test(test_time_to_stack SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_time_to_stack.c
                  LIBS pes_sampling pes_reuse)
pes_add_unit_test(test_compare SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compare.c LIBS pes_sampling)
pes_add_unit_test(test_sampled SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sampled.c LIBS pes_replay_core)
pes_add_unit_test(test_survival SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_survival.c LIBS pes_sampling)
pes_add_unit_test(test_interleave SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_interleave.c LIBS pes_sampling)
