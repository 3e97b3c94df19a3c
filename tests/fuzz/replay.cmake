# libFuzzer target for pes-replay's sampled analyses (clang only, not with
# TSan): the sampled path's sources and the trace library are compiled into
# the target for coverage; the rest comes from pes_replay_core. Seeds in
# tests/fuzz/sampled_seeds/ (made by tests/fuzz/make_sampled_seeds.py).
# Longer runs: scripts/fuzz.sh.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT PES_SANITIZE MATCHES "thread")
  file(GLOB PES_FUZZ_SAMPLED_ANALYSES CONFIGURE_DEPENDS ${PES_FUZZ_ROOT}/replay/analyses/sampled_*.c)
  pes_fuzz_target(fuzz_sampled ${CMAKE_CURRENT_LIST_DIR}/fuzz_sampled.c
                  ${PES_FUZZ_ROOT}/replay/sampling/sampled.c ${PES_FUZZ_ROOT}/replay/sampling/weights.c
                  ${PES_FUZZ_ROOT}/replay/sampling/time_to_stack.c ${PES_FUZZ_SAMPLED_ANALYSES}
                  ${PES_FUZZ_ROOT}/replay/report/text_sampled.c)
  target_include_directories(fuzz_sampled PRIVATE ${PES_FUZZ_ROOT}/replay/analyses ${PES_FUZZ_ROOT}/replay/sampling)
  target_link_libraries(fuzz_sampled PRIVATE pes_replay_core)
  pes_fuzz_test(fuzz_sampled ${CMAKE_CURRENT_LIST_DIR}/sampled_seeds)
endif()
