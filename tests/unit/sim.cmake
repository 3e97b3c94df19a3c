# Cache/MESI simulator (replay/sim) and ReuseTracker ground-truth (replay/sampling) tests.
pes_add_unit_test(test_cachesim SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cachesim.c LIBS pes_sim)
pes_add_unit_test(test_mesi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mesi.c LIBS pes_sim)
pes_add_unit_test(test_rt_truth SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_truth.c LIBS pes_sampling)
# Address partitions of the simulation: set-index geometry of every preset and crafted ones, whole = sum of parts.
pes_add_unit_test(test_sim_partition SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sim_partition.c LIBS pes_sim pes_model)
# Miss causes (compulsory / capacity / conflict / coherence): hand-built traces, brute-force caches, the shadow's LRU stacks.
pes_add_unit_test(test_miss_causes SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_miss_causes.c LIBS pes_sim)
