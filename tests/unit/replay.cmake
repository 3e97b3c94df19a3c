# Unit tests of pes-replay: stream modules (replay/stream: merge) and the analyses.
pes_add_unit_test(test_merge SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_merge.c LIBS pes_stream)
# The analyses (summary, reuse, sim), their pipeline and the JSON writer on hand-built batches.
pes_add_unit_test(test_analyses SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_analyses.c LIBS pes_replay_core m)
pes_add_unit_test(test_reports SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reports.c LIBS pes_replay_core m)
