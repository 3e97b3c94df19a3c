# Unit tests of the trace format library (trace/).
pes_add_unit_test(test_trace_roundtrip SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_roundtrip.c LIBS pes_trace)
pes_add_unit_test(test_trace_truncation SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_truncation.c LIBS pes_trace)
pes_add_unit_test(test_trace_corrupt SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_corrupt.c LIBS pes_trace)
pes_add_unit_test(test_trace_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_text.c LIBS pes_trace)
pes_add_unit_test(test_trace_escape SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_escape.c LIBS pes_trace)
# The collector's settings table (pes/settings.h) and the option tables (pes/cli.h).
pes_add_unit_test(test_settings SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_settings.c LIBS pes_trace)
pes_add_unit_test(test_cli SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.c LIBS pes_trace)

# A small fixed trace for command-line tests; `zstd -t` and `zstdcat` must accept it.
add_executable(trace_sample_gen ${CMAKE_CURRENT_LIST_DIR}/trace_sample_gen.c)
target_link_libraries(trace_sample_gen PRIVATE pes_trace)
# A trace with call edges whose call paths are known (e2e.replay_callpaths).
add_executable(trace_callpath_gen ${CMAKE_CURRENT_LIST_DIR}/trace_callpath_gen.c)
target_link_libraries(trace_callpath_gen PRIVATE pes_trace)
# Valid traces shaped to stress memory (e2e.replay_memory).
add_executable(trace_stress_gen ${CMAKE_CURRENT_LIST_DIR}/trace_stress_gen.c)
target_link_libraries(trace_stress_gen PRIVATE pes_trace)
find_program(PES_ZSTD_CLI zstd)
if(PES_ZSTD_CLI)
  add_test(NAME trace.zstd_cli_accepts
           COMMAND sh -c "$<TARGET_FILE:trace_sample_gen> sample-zstd.pes && ${PES_ZSTD_CLI} -q -t sample-zstd.pes && ${PES_ZSTD_CLI} -q -dc sample-zstd.pes | head -c 4 | grep -q PESB")
  set_tests_properties(trace.zstd_cli_accepts PROPERTIES LABELS unit TIMEOUT 300)
endif()

# pes-dump on the sample trace (only when replay/ builds pes-dump).
if(TARGET pes-dump)
  add_test(NAME trace.pes_dump
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/trace_dump_test.sh $<TARGET_FILE:pes-dump>
                   $<TARGET_FILE:trace_sample_gen> ${CMAKE_CURRENT_BINARY_DIR}/trace_dump_test)
  set_tests_properties(trace.pes_dump PROPERTIES LABELS unit TIMEOUT 300)
endif()
pes_add_unit_test(test_trace_layout SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_layout.c LIBS pes_trace PkgConfig::ZSTD)
# Block production apart from appending: encoder bytes = writer bytes = an
# oracle from the format doc; out-of-order and multi-threaded encoding.
pes_add_unit_test(test_trace_encoder SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_encoder.c
                  LIBS pes_trace PkgConfig::ZSTD Threads::Threads)
set_tests_properties(unit.test_trace_encoder PROPERTIES LABELS "unit;concurrent")
# The text reader's fast path and parallel blocks (1..8 threads) against a
# reference parser written in the test.
pes_add_unit_test(test_trace_text_parallel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_text_parallel.c
                  LIBS pes_trace Threads::Threads)
set_tests_properties(unit.test_trace_text_parallel PROPERTIES LABELS "unit;concurrent")
# ALLOC_SITES blocks and allocation records/events: layout, round trip, damage.
pes_add_unit_test(test_trace_alloc SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_alloc.c LIBS pes_trace PkgConfig::ZSTD)
# older traces (tests/data) read with no call stacks (issue 28)
target_compile_definitions(test_trace_alloc PRIVATE PES_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
# Loop descriptor groups: hand-computed expansions, a randomized oracle,
# expanded counts, the encoder's checks, forged malformed and version-1 blocks.
pes_add_unit_test(test_trace_loop SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_loop.c LIBS pes_trace PkgConfig::ZSTD)
target_include_directories(test_trace_loop PRIVATE ${PROJECT_SOURCE_DIR}/trace/src)
# Call edge records: round trip, CALLs naming no call site, version-2 files.
pes_add_unit_test(test_trace_calls SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_calls.c LIBS pes_trace PkgConfig::ZSTD)
target_include_directories(test_trace_calls PRIVATE ${PROJECT_SOURCE_DIR}/trace/src)
# Block facts in MODULE (version 4): round trip, version-3 files, malformed.
pes_add_unit_test(test_trace_facts SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_facts.c LIBS pes_trace PkgConfig::ZSTD)
target_include_directories(test_trace_facts PRIVATE ${PROJECT_SOURCE_DIR}/trace/src)
# pes-replay's reports on a trace and its twin with a loop descriptor group.
if(TARGET pes-replay)
  add_test(NAME trace.twin_replay
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/trace_twin_replay.sh $<TARGET_FILE:pes-replay>
                   $<TARGET_FILE:trace_sample_gen> ${CMAKE_CURRENT_BINARY_DIR}/trace_twin_replay)
  set_tests_properties(trace.twin_replay PROPERTIES LABELS unit TIMEOUT 300)
endif()
