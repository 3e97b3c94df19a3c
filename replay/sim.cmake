# Cache + MESI simulator and ReuseTracker ground truth (replay/src/{cachesim,mesi,rt_truth}).
# Included by replay/CMakeLists.txt and by tests; guarded so it is defined once.
if(NOT TARGET pes_sim)
  get_filename_component(PES_SIM_ROOT ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
  add_library(pes_sim STATIC
    ${PES_SIM_ROOT}/replay/src/cachesim.c
    ${PES_SIM_ROOT}/replay/src/mesi.c
    ${PES_SIM_ROOT}/replay/src/rt_truth.c)
  target_link_libraries(pes_sim PUBLIC pes_trace)   # pes_error_set
  target_include_directories(pes_sim PUBLIC
    ${PES_SIM_ROOT}/replay/src
    ${PES_SIM_ROOT}/trace/include
    ${PES_SIM_ROOT}/model/include)
  # Not a test: throughput benchmark on a synthetic stream (bench/sim_bench.c).
  if(EXISTS ${PES_SIM_ROOT}/bench/sim_bench.c)
    add_executable(pes-sim-bench ${PES_SIM_ROOT}/bench/sim_bench.c)
    target_link_libraries(pes-sim-bench PRIVATE pes_sim)
  endif()
endif()
