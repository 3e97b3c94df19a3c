# libFuzzer target for pes-replay's sampled analyses (clang only, not with
# TSan): the sampled path's sources and the trace library are compiled into
# the target for coverage; the rest comes from pes_replay_core. Seeds in
# tests/fuzz/sampled_seeds/ (made by tests/fuzz/make_sampled_seeds.py).
# Longer runs: scripts/fuzz.sh.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT PES_SANITIZE MATCHES "thread")
  pes_fuzz_target(fuzz_sampled ${CMAKE_CURRENT_LIST_DIR}/fuzz_sampled.c
                  ${PES_FUZZ_ROOT}/replay/src/sampled.c ${PES_FUZZ_ROOT}/replay/src/time_to_stack.c
                  ${PES_FUZZ_ROOT}/replay/src/report_accuracy.c)
  target_include_directories(fuzz_sampled PRIVATE ${PES_FUZZ_ROOT}/replay/src)
  target_link_libraries(fuzz_sampled PRIVATE pes_replay_core)
  set(PES_FUZZ_SAMPLED_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz_sampled)
  add_test(NAME fuzz.sampled
           COMMAND sh -c "rm -rf '${PES_FUZZ_SAMPLED_WORK}' && mkdir -p '${PES_FUZZ_SAMPLED_WORK}/corpus' && \
cp ${CMAKE_CURRENT_LIST_DIR}/sampled_seeds/* '${PES_FUZZ_SAMPLED_WORK}/corpus/' && cd '${PES_FUZZ_SAMPLED_WORK}' && \
$<TARGET_FILE:fuzz_sampled> -max_total_time=10 -max_len=4096 -rss_limit_mb=2048 -timeout=20 \
-print_final_stats=1 corpus")
  set_tests_properties(fuzz.sampled PROPERTIES LABELS fuzz TIMEOUT 120)
endif()
