# cmake --install into a temporary prefix, moved, and the main job run from
# there (tests/e2e/install/install.sh). Not in sanitizer builds: the installed
# programs would need the sanitizer runtimes.
include(GNUInstallDirs)
if(NOT PES_SANITIZE)
  add_test(NAME e2e.install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install/install.sh)
  set_tests_properties(e2e.install PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "PES_BUILD=${CMAKE_BINARY_DIR};PES_SRC=${PROJECT_SOURCE_DIR};PES_LIBDIR=${CMAKE_INSTALL_LIBDIR}")
endif()
