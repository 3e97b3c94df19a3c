# Accuracy end-to-end (sampled vs full trace of one execution): RIBench and
# False-Sharing through pes-clang, pes-collect --mode --full, pes-replay
# --compare. Not in sanitizer builds (instrumented programs link the runtime).
if(NOT PES_SANITIZE)
  add_test(NAME e2e.accuracy COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accuracy/accuracy_e2e.sh)
  set_tests_properties(e2e.accuracy PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
endif()
# The comm-volume estimator against the MESI simulation of the same run's full
# trace, ComDetective's four microbenchmarks (docs/accuracy.md).
if(NOT PES_SANITIZE)
  add_test(NAME e2e.accuracy_comm COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accuracy/comm_volume_e2e.sh)
  set_tests_properties(e2e.accuracy_comm PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
endif()

# pes-collect --samples N: >= N decided outcomes per long-enough thread, the
# periods the schedule implies (docs/accuracy.md, "Enough samples by design").
if(NOT PES_SANITIZE)
  add_test(NAME e2e.accuracy_samples COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accuracy/samples_e2e.sh)
  set_tests_properties(e2e.accuracy_samples PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
endif()

# --compare's peak memory does not grow with the full trace's length (same
# distinct addresses, 8x the accesses; issue 31).
if(NOT PES_SANITIZE)
  add_test(NAME e2e.accuracy_compare_memory COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accuracy/compare_memory.sh)
  set_tests_properties(e2e.accuracy_compare_memory PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR}")
endif()

# Programs nobody tuned the estimators for: bench/corpus's validation half,
# 2 threads, one seed; pooled 90 % interval coverage >= 0.80 per metric family
# and no null result (issue 25, bench/corpus/README.md).
if(NOT PES_SANITIZE)
  add_test(NAME e2e.accuracy_corpus COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accuracy/corpus_e2e.sh)
  set_tests_properties(e2e.accuracy_corpus PROPERTIES LABELS e2e TIMEOUT 1800
    ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
endif()
