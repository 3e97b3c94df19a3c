# pass_script.cmake — included by the pass tests' `cmake -P` scripts: HERE (this
# folder), ROOT (the source tree), INCS (the headers of the mock runtime), and
# run(WHAT CMD...): runs CMD with the environment ENVS if the script set it,
# stops with WHAT and CMD's output if it fails, else leaves that output in OUT
# and ERR.
get_filename_component(HERE ${CMAKE_CURRENT_LIST_FILE} DIRECTORY)
get_filename_component(ROOT ${HERE}/../../.. ABSOLUTE)
set(INCS -I${HERE} -I${ROOT}/collector/include -I${ROOT}/trace/include)

function(run what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENVS} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()
