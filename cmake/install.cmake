# `cmake --install BUILD [--prefix DIR]`: the commands, the runtime, the pass
# plugin, the trace library with its header and pkg-config file, man pages,
# bash completion and the documentation. Everything that refers to another
# installed file does so relative to itself (pes-clang finds the plugin and
# the runtime from its own location; pes-trace.pc uses ${pcfiledir}), so an
# install can be moved or made with another --prefix than the configured one
# (with relative install directories, as GNUInstallDirs gives them).
include(GNUInstallDirs)

install(TARGETS pes-collect pes-replay pes-dump pes-calibrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET pes-replay-mpi)
  install(TARGETS pes-replay-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS pes-rt LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# machine presets: found from the commands' own location (model/src/machine_file.c)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/model/machines/ DESTINATION ${CMAKE_INSTALL_DATADIR}/pes/machines
        FILES_MATCHING PATTERN "*.machine")
# (pes-clang, pes-clang++ and the plugin: llvm-pass/CMakeLists.txt)
# The demo, runnable from the prefix: PREFIX/share/pes/demo/demo.sh [OUT_DIR]
# finds the commands in PREFIX/bin from its own location.
install(PROGRAMS ${CMAKE_SOURCE_DIR}/scripts/pes-demo.sh DESTINATION ${CMAKE_INSTALL_DATADIR}/pes/demo
        RENAME demo.sh)
install(FILES ${CMAKE_SOURCE_DIR}/bench/kernels/gemm.c ${CMAKE_SOURCE_DIR}/bench/kernels/kernel_common.h
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pes/demo)

# Reading and writing traces from other programs: libpes_trace.a + pes/trace.h, and
# pes/settings.h for the header config's settings, typed (pes_settings_from_header).
install(TARGETS pes_trace ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/trace/include/pes/trace.h ${CMAKE_SOURCE_DIR}/trace/include/pes/settings.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pes)
# Regions of interest in programs built by pes-clang (found there through its -idirafter).
install(FILES ${CMAKE_SOURCE_DIR}/collector/include/pes/roi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pes)
file(RELATIVE_PATH PES_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_SOURCE_DIR}/cmake/pes-trace.pc.in ${CMAKE_BINARY_DIR}/pes-trace.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pes-trace.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Man pages from each command's --help (help2man), with the sections in man/.
find_program(PES_HELP2MAN help2man)
if(PES_HELP2MAN)
  set(pages)
  foreach(spec "pes-collect|--help|--version|record the memory accesses of a program built with pes-clang"
               "pes-replay|--help|--version|reuse profiles, cache models and simulation of a pes trace"
               "pes-dump|--help|--version|print a pes trace as text or JSON"
               "pes-calibrate|--help|--version|measure this host for the runtime model"
               "pes-clang|--pes-help|--pes-version|clang with the pes instrumentation pass")
    string(REPLACE "|" ";" spec "${spec}")
    list(GET spec 0 cmd)
    list(GET spec 1 help)
    list(GET spec 2 version)
    list(GET spec 3 name)
    set(page ${CMAKE_BINARY_DIR}/man/${cmd}.1)
    if(TARGET ${cmd})
      set(exe $<TARGET_FILE:${cmd}>)
      set(dep ${cmd})
    else()
      set(exe ${PES_BIN_DIR}/${cmd})
      set(dep ${CMAKE_SOURCE_DIR}/llvm-pass/pes-clang.in)
    endif()
    add_custom_command(OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${PES_HELP2MAN} --no-info --no-discard-stderr --section=1 --name=${name}
              --help-option=${help} --version-option=${version}
              --include=${CMAKE_SOURCE_DIR}/man/${cmd}.h2m --include=${CMAKE_SOURCE_DIR}/man/common.h2m
              --output=${page} ${exe}
      DEPENDS ${dep} ${CMAKE_SOURCE_DIR}/man/${cmd}.h2m ${CMAKE_SOURCE_DIR}/man/common.h2m
      COMMENT "man page ${cmd}(1)" VERBATIM)
    list(APPEND pages ${page})
  endforeach()
  add_custom_target(man-pages ALL DEPENDS ${pages})
  install(FILES ${pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man pages (scripts/install-deps.sh installs it)")
endif()

install(FILES ${CMAKE_SOURCE_DIR}/scripts/completion/pes
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME pes-replay)
foreach(cmd pes-collect pes-dump pes-replay-mpi pes-calibrate)
  install(CODE "file(CREATE_LINK pes-replay
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/bash-completion/completions/${cmd}\" SYMBOLIC)")
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
