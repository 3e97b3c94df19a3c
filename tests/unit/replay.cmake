# Unit tests of pes-replay: stream modules (replay/stream: merge) and the analyses.
pes_add_unit_test(test_merge SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_merge.c LIBS pes_stream)
# A batch buffer's arrays passed to a sink that takes them (the pipeline's zero-copy hand-over).
pes_add_unit_test(test_batch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_batch.c LIBS pes_stream)
pes_add_unit_test(test_callpath SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_callpath.c LIBS pes_stream)
# (key, path, site) triples as dense ids against a first-seen oracle, on streams that defeat its memo.
pes_add_unit_test(test_pathkeys SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pathkeys.c LIBS pes_replay_core)
# The analyses (summary, reuse, sim), their pipeline and the JSON writer on hand-built batches.
pes_add_unit_test(test_analyses SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_analyses.c LIBS pes_replay_core m)
pes_add_unit_test(test_diff SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_diff.c LIBS pes_replay_core)
# Report rows (--by) and the cache-line table on hand-built batches; -g: its own globals are data objects.
pes_add_unit_test(test_reports SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reports.c LIBS pes_replay_core m)
target_compile_options(test_reports PRIVATE -g)
# The report tree packed and unpacked (a --cores section between MPI ranks).
pes_add_unit_test(test_report_pack SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_report_pack.c LIBS pes_replay_core)
# The TLB and prefetch facts read in parts against the whole stream (pes-replay-mpi).
pes_add_unit_test(test_reuse_parts SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_reuse_parts.c LIBS pes_replay_core)
# Data objects (replay/objects): this test's own globals through its DWARF, as
# a PIE and as a position-dependent executable; heap sites; live blocks vs an oracle.
pes_add_unit_test(test_objects SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_objects.c LIBS pes_objects)
target_compile_options(test_objects PRIVATE -g -fPIE)
target_compile_definitions(test_objects PRIVATE PES_TEST_PIE)
target_link_options(test_objects PRIVATE -pie)
pes_add_unit_test(test_objects_nopie SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_objects.c LIBS pes_objects)
set_target_properties(test_objects_nopie PROPERTIES POSITION_INDEPENDENT_CODE OFF)
target_compile_options(test_objects_nopie PRIVATE -g -fno-pie)
target_link_options(test_objects_nopie PRIVATE -no-pie)
# The object columns of replay/stream on synthetic traces (allocation records in merged order).
pes_add_unit_test(test_objects_stream SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_objects_stream.c LIBS pes_stream pes_objects)
target_compile_options(test_objects_stream PRIVATE -g)
# A tool for the objects e2e test: per-object and per-part access counts of a trace.
add_executable(objects_dump ${CMAKE_CURRENT_LIST_DIR}/objects_dump.c)
target_link_libraries(objects_dump PRIVATE pes_stream pes_objects)
# The report's miss-ratio curves (fully associative and SDCM) against hand values and cachesim.
pes_add_unit_test(test_mrc SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mrc.c LIBS pes_replay_core m)
# The replay's scheduler (replay/sched): strand order on 0..8 workers, urgent strands, nested waits, the --stats bound (TSan: `concurrent`).
pes_add_unit_test(test_scheduler SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_scheduler.c LIBS pes_sched)
set_tests_properties(unit.test_scheduler PROPERTIES LABELS "unit;concurrent")
pes_add_unit_test(test_part_link SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_part_link.c LIBS pes_replay_core)
set_tests_properties(unit.test_part_link PROPERTIES LABELS "unit;concurrent")
# The findings rules (replay/report/findings.c) on hand-built reports: thresholds, fixes, ranking.
pes_add_unit_test(test_findings SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_findings.c LIBS pes_replay_core)
pes_add_unit_test(test_assumptions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_assumptions.c LIBS pes_replay_core)
