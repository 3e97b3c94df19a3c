# libFuzzer target for the trace reader (clang only). The trace sources are
# compiled into the target so that libFuzzer's coverage instrumentation sees them.
# Built in the plain and ASan builds; ASan cannot be combined with a TSan build.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT PES_SANITIZE MATCHES "thread")
  pes_fuzz_target(fuzz_trace_reader ${CMAKE_CURRENT_LIST_DIR}/fuzz_trace_reader.c)
  target_link_libraries(fuzz_trace_reader PRIVATE PkgConfig::ZSTD)

  # Seed corpus generated at test time: the sample trace, a cut copy, one without
  # footer, a sampled one, one with a loop descriptor group, and payload-mode
  # seeds (tests/fuzz/trace_seeds/; access_loop: an ACCESS payload with a group).
  # Longer runs: scripts/fuzz.sh.
  set(PES_FUZZ_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz_trace_reader)
  add_test(NAME fuzz.trace_reader
           COMMAND sh -c "rm -rf '${PES_FUZZ_WORK}' && mkdir -p '${PES_FUZZ_WORK}/corpus' && \
cp ${CMAKE_CURRENT_LIST_DIR}/trace_seeds/* '${PES_FUZZ_WORK}/corpus/' && \
$<TARGET_FILE:trace_sample_gen> '${PES_FUZZ_WORK}/corpus/sample.pes' && \
$<TARGET_FILE:trace_sample_gen> '${PES_FUZZ_WORK}/corpus/nofooter.pes' --no-footer && \
$<TARGET_FILE:trace_sample_gen> '${PES_FUZZ_WORK}/corpus/sampled.pes' --sampled && \
$<TARGET_FILE:trace_sample_gen> '${PES_FUZZ_WORK}/corpus/loops.pes' --loops && \
head -c 600 '${PES_FUZZ_WORK}/corpus/sample.pes' > '${PES_FUZZ_WORK}/corpus/cut.pes' && \
cd '${PES_FUZZ_WORK}' && $<TARGET_FILE:fuzz_trace_reader> -max_total_time=20 -runs=2000000 \
-max_len=8192 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 corpus")
  set_tests_properties(fuzz.trace_reader PROPERTIES LABELS fuzz TIMEOUT 120)
endif()

# libFuzzer target for the plain-text trace reader and pes_escape_text (a
# reference parser and an unescape round trip as oracles); seeds in
# tests/fuzz/text_seeds/. Longer runs: scripts/fuzz.sh.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT PES_SANITIZE MATCHES "thread")
  pes_fuzz_target(fuzz_text_reader ${CMAKE_CURRENT_LIST_DIR}/fuzz_text_reader.c)
  target_link_libraries(fuzz_text_reader PRIVATE PkgConfig::ZSTD)
  pes_fuzz_test(fuzz_text_reader ${CMAKE_CURRENT_LIST_DIR}/text_seeds)
endif()
