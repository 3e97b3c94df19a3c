# pes-calibrate end to end: a --quick calibration of this machine parses and
# its figures are in plausible ranges (never timing-exact), the host cache and
# `pes-replay --machine host` use it, bad command lines fail clearly. Runs in
# sanitizer builds too (the probe kernels are not instrumented).
add_test(NAME e2e.calibrate COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/calibrate/calibrate.sh)
set_tests_properties(e2e.calibrate PROPERTIES LABELS e2e TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "PES_BIN=${PES_BIN_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PYTHON=/usr/bin/python3")
