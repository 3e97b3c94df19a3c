# Unit tests of the sampled-trace modules (replay/sampling: time -> stack
# conversion, compare metrics; replay/analyses: sampled-trace analyses).
pes_add_unit_test(test_time_to_stack SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_time_to_stack.c
                  LIBS pes_sampling pes_reuse)
pes_add_unit_test(test_compare SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compare.c LIBS pes_sampling)
pes_add_unit_test(test_sampled SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sampled.c LIBS pes_replay_core)
pes_add_unit_test(test_survival SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_survival.c LIBS pes_sampling)
pes_add_unit_test(test_interleave SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_interleave.c LIBS pes_sampling)
# The period weights of pes-collect --samples traces; the schedule (rt_adapt.h)
# drives the synthetic sampler.
pes_add_unit_test(test_sampled_period SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sampled_period.c LIBS pes_sampling m)
target_include_directories(test_sampled_period PRIVATE ${PROJECT_SOURCE_DIR}/collector/src/core)
set_tests_properties(unit.test_sampled_period PROPERTIES LABELS "unit;accuracy")
