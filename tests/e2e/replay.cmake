# pes-replay end-to-end tests: programs built with pes-clang, traced with
# pes-collect --full, replayed. Not in sanitizer builds (the instrumented
# programs link the runtime, which is built with the sanitizer there).
if(NOT PES_SANITIZE)
  foreach(t replay_text_trace replay_bad_input replay_schema replay_false_sharing replay_damaged
          reader_campaign terminal_escapes golden_reports replay_approx replay_progress replay_diff
          replay_csv replay_reports replay_labels replay_timing replay_user_programs
          replay_diff_pair replay_conflicts replay_findings replay_call_edges
          replay_sdcm_assumptions replay_callpath_parts)
    add_test(NAME e2e.${t} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/${t}.sh)
    set_tests_properties(e2e.${t} PROPERTIES LABELS e2e TIMEOUT 300
      ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
  endforeach()
endif()

# Data objects: globals, heap sites and stacks of a program with known accesses
# (objects_dump: the per-object counts of the stream pes-replay reads).
if(NOT PES_SANITIZE)
  add_test(NAME e2e.replay_objects COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_objects.sh)
  set_tests_properties(e2e.replay_objects PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR}")
  # the same under --cores N (mimicked cores)
  add_test(NAME e2e.replay_mimic_objects COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_mimic_objects.sh)
  set_tests_properties(e2e.replay_mimic_objects PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR}")
endif()

# Needs no instrumented program: also run in sanitizer builds (TSan: the PRD worker thread).
add_test(NAME e2e.replay_jobs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_jobs.sh)
set_tests_properties(e2e.replay_jobs PROPERTIES LABELS "e2e;concurrent" TIMEOUT 1200
  ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};STRESS_GEN=$<TARGET_FILE:trace_stress_gen>")

# Call paths (trace format version 3): exact per-path counts of a synthetic
# trace, the same for every --jobs; no instrumented program (sanitizer builds too).
add_test(NAME e2e.replay_callpaths COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_callpaths.sh)
set_tests_properties(e2e.replay_callpaths PROPERTIES LABELS "e2e;concurrent" TIMEOUT 300
  ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};CALLPATH_GEN=$<TARGET_FILE:trace_callpath_gen>;PES_SANITIZE=${PES_SANITIZE}")

# Memory bounds on crafted traces (docs/replay.md, "Memory"), under `ulimit -v`:
# not in sanitizer builds, whose shadow memory needs more address space.
if(NOT PES_SANITIZE)
  add_test(NAME e2e.replay_memory COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_memory.sh)
  set_tests_properties(e2e.replay_memory PROPERTIES LABELS e2e TIMEOUT 600
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};STRESS_GEN=$<TARGET_FILE:trace_stress_gen>")
endif()

# --html (issue 13): the page parses, embeds the JSON, draws its data; headless
# Chromium renders it (scripts/install-deps.sh installs chromium and html5lib).
# In sanitizer builds without the parts that need an instrumented program or
# take long there (PES_SANITIZE: the annotated source, the large --diff).
add_test(NAME e2e.replay_html COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_html.sh)
set_tests_properties(e2e.replay_html PROPERTIES LABELS e2e TIMEOUT 300
  ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3;STRESS_GEN=$<TARGET_FILE:trace_stress_gen>;PES_SANITIZE=${PES_SANITIZE}")

# pes-replay-mpi against pes-replay on 1, 2 and 4 ranks (only where CMake found
# MPI). In ASan/UBSan builds too, without leak checks: Open MPI does not free
# all it allocates (the profiles' split has its leak-checked unit tests,
# unit.test_parda). Not under TSan: Open MPI's progress threads are noise there.
if(TARGET pes-replay-mpi AND NOT PES_SANITIZE MATCHES "thread")
  add_test(NAME e2e.replay_mpi COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replay/replay_mpi.sh)
  set_tests_properties(e2e.replay_mpi PROPERTIES LABELS e2e TIMEOUT 600
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};ASAN_OPTIONS=detect_leaks=0;STRESS_GEN=$<TARGET_FILE:trace_stress_gen>")
endif()
