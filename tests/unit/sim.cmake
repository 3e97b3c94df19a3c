# Cache/MESI simulator (replay/sim) and ReuseTracker ground-truth (replay/sampling) tests.
pes_add_unit_test(test_cachesim SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cachesim.c LIBS pes_sim)
pes_add_unit_test(test_mesi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mesi.c LIBS pes_sim)
pes_add_unit_test(test_rt_truth SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_truth.c LIBS pes_sampling)
