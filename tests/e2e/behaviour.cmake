# Collector behaviour suite (tests/e2e/behaviour/run.sh, docs/collector.md): each
# program built with plain clang and with pes-clang, run without and under every
# pes-collect mode; same output and exit status, a time limit per run (a hang is
# reported as "HANG: PROGRAM MODE"), traces that pes-dump accepts. One ctest entry per
# program, so they run in parallel. Not in sanitizer builds: pes-clang links the
# plain runtime.
if(TARGET PesPass AND NOT PES_SANITIZE)
  set(PES_BEHAVIOUR_DIR ${CMAKE_CURRENT_LIST_DIR}/behaviour)
  foreach(prog sig_alarm sig_altstack cancel_deferred cancel_async dlopen_loop
               fork_exit fork_uexit fork_exec vfork_exec spawn exec_self uexit uexit_early
               segv_early segv_late abort threads64 tls recursion sigtrap_own omp_tasks
               omp_sigint atexit longjmp cxx_exceptions watch_runtime zstd_bundled
               cxx_templates omp_spin exec_wrapper)
    add_test(NAME e2e.behaviour.${prog}
             COMMAND bash ${PES_BEHAVIOUR_DIR}/run.sh ${prog} ${PES_BIN_DIR} ${PES_BEHAVIOUR_DIR})
    set_tests_properties(e2e.behaviour.${prog} PROPERTIES LABELS "e2e;collector;behaviour" TIMEOUT 300)
  endforeach()
endif()
