# pes_accuracy: sampled-trace analyses and their comparison with the full-trace
# ground truth (replay/src/{time_to_stack,compare,sampled}.c). Included from
# replay/CMakeLists.txt and, guarded, from tests/unit/accuracy.cmake.
if(NOT TARGET pes_accuracy)
  include(${CMAKE_CURRENT_LIST_DIR}/sim.cmake)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(PES_ACC_GSL REQUIRED IMPORTED_TARGET gsl)
  add_library(pes_accuracy STATIC
    ${CMAKE_CURRENT_LIST_DIR}/src/time_to_stack.c
    ${CMAKE_CURRENT_LIST_DIR}/src/compare.c)
  target_include_directories(pes_accuracy PUBLIC ${CMAKE_CURRENT_LIST_DIR}/src)
  target_link_libraries(pes_accuracy PUBLIC pes_sim PkgConfig::PES_ACC_GSL m)
endif()
