# pes_reuse: exact reuse distance, PRD/CRD profiles, PPT-Multicore mimicking
# and SHARDS approximate histograms
# (replay/src/{histogram,reuse_distance,profiles,mimic,shards}.c). Included from
# replay/CMakeLists.txt and, guarded, from tests/unit/reuse.cmake.
if(NOT TARGET pes_reuse)
  add_library(pes_reuse STATIC
    ${CMAKE_CURRENT_LIST_DIR}/src/histogram.c
    ${CMAKE_CURRENT_LIST_DIR}/src/reuse_distance.c
    ${CMAKE_CURRENT_LIST_DIR}/src/profiles.c
    ${CMAKE_CURRENT_LIST_DIR}/src/mimic.c
    ${CMAKE_CURRENT_LIST_DIR}/src/shards.c)
  # Only plain structs of model.h are used (the histogram adapter fills struct
  # pes_reuse_profile directly); errors go through pes_trace's pes_error_set.
  target_link_libraries(pes_reuse PUBLIC pes_trace)   # pes_error_set
  target_link_libraries(pes_reuse PRIVATE m)          # shards.c: llround, fabs
  target_include_directories(pes_reuse PUBLIC
    ${CMAKE_CURRENT_LIST_DIR}/src
    ${CMAKE_CURRENT_LIST_DIR}/../trace/include
    ${CMAKE_CURRENT_LIST_DIR}/../model/include)

  # bench/reuse_bench.c: built on demand (`ninja -C BUILD reuse_bench`).
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/../bench/reuse_bench.c)
    add_executable(reuse_bench EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/../bench/reuse_bench.c)
    target_link_libraries(reuse_bench PRIVATE pes_reuse m)
  endif()
endif()
