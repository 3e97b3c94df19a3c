# pes_clang_test.cmake — checks the pes-clang driver logic:
#   two-step build (-c then link), -fopenmp in both steps, an argument with
#   spaces, -gline-tables-only added only without a user -g, nothing added to
#   pure link steps but the runtime, --pes-print-config.
#   cmake -DPES_CLANG=.. -DCLANG=.. -DWORK=dir -P pes_clang_test.cmake
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/pass_script.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY "${WORK}/dir with space")
set(ENVS PES_CLANG_RT_DIR=${WORK} PES_CLANG_RT_LIB=pes-mock-rt)
function(expect what text regex)
  if(NOT "${text}" MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected /${regex}/ in:\n${text}")
  endif()
endfunction()
function(reject what text regex)
  if("${text}" MATCHES "${regex}")
    message(FATAL_ERROR "${what}: did not expect /${regex}/ in:\n${text}")
  endif()
endfunction()

run("mock runtime" ${CLANG} -O1 -shared -fPIC ${INCS} ${HERE}/mock_rt.c -o ${WORK}/libpes-mock-rt.so)

# --pes-print-config names the plugin and runtime directory.
run("print-config" ${PES_CLANG} --pes-print-config)
expect("print-config" "${OUT}" "plugin=[^\n]*PesPass\\.so")
expect("print-config" "${OUT}" "runtime_dir=${WORK}")

# Two steps, an argument with two spaces, an output path with a space.
set(obj "${WORK}/dir with space/hello.o")
set(exe "${WORK}/dir with space/hello")
run("compile -c" ${PES_CLANG} -O2 "-DGREETING=\"hello  world\"" ${INCS} -c ${HERE}/hello.c -o ${obj})
reject("compile -c" "${ERR}" "unused|warning")
run("link" ${PES_CLANG} ${obj} -o ${exe})
reject("link" "${ERR}" "unused|warning")
run("run hello" ${exe})
expect("run hello" "${OUT}" "greeting=\\[hello  world\\] counter=45 modules=1")
expect("run hello" "${OUT}" "mock: invariants ok")

# -fopenmp in both steps.
set(oobj ${WORK}/omp.o)
run("compile -fopenmp" ${PES_CLANG} -O1 -fopenmp ${INCS} -c ${HERE}/omp.c -o ${oobj})
run("link -fopenmp" ${PES_CLANG} -fopenmp ${oobj} -o ${WORK}/omp)
set(ENVS ${ENVS} OMP_NUM_THREADS=4)
run("run omp" ${WORK}/omp)
expect("run omp" "${OUT}" "checks passed")

# What gets added, read from the driver's -### listing.
run("-### -c" ${PES_CLANG} "-###" -c ${HERE}/hello.c ${INCS} -o ${WORK}/x.o)
expect("no -g: line tables added" "${ERR}" "-debug-info-kind=line-tables-only")
expect("plugin on compile" "${ERR}" "-fpass-plugin=[^\" ]*PesPass\\.so")
reject("no runtime on -c" "${ERR}" "-lpes-mock-rt")
run("-### -g -c" ${PES_CLANG} "-###" -g -c ${HERE}/hello.c ${INCS} -o ${WORK}/x.o)
reject("user -g kept" "${ERR}" "line-tables-only")
expect("user -g kept" "${ERR}" "-debug-info-kind=(constructor|limited|standalone)")
run("-### -g0 -c" ${PES_CLANG} "-###" -g0 -c ${HERE}/hello.c ${INCS} -o ${WORK}/x.o)
reject("user -g0 respected" "${ERR}" "debug-info-kind")
run("-### link only" ${PES_CLANG} "-###" ${obj} -o ${WORK}/x)
reject("pure link: no plugin" "${ERR}" "pass-plugin|line-tables-only")
expect("pure link: runtime" "${ERR}" "-lpes-mock-rt")
expect("pure link: rpath" "${ERR}" "-rpath")
run("-### compile+link" ${PES_CLANG} "-###" ${HERE}/hello.c ${INCS} -o ${WORK}/x)
expect("one step: plugin" "${ERR}" "-fpass-plugin=")
expect("one step: runtime" "${ERR}" "-lpes-mock-rt")
run("-E" ${PES_CLANG} -E ${HERE}/hello.c ${INCS} -o ${WORK}/x.i)
reject("-E: nothing added" "${ERR}" "unused|warning")
run("-x c from stdin -###" ${PES_CLANG} "-###" -x c -c - -o ${WORK}/y.o)
expect("-x c -: plugin" "${ERR}" "-fpass-plugin=")
message("pes-clang driver checks passed")
