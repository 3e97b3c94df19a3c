# collector/src's folders may not depend on each other in a cycle, neither
# through #include nor through the symbols their objects use (nm):
# check_layering.py prints both graphs and any cycle.
add_test(NAME layering.collector
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_layering.py
                 --src ${PROJECT_SOURCE_DIR}/collector/src --nm ${CMAKE_NM}
                 $<TARGET_OBJECTS:pes-rt> $<TARGET_OBJECTS:pes_rt_util> $<TARGET_OBJECTS:pes_pmu>
                 $<TARGET_OBJECTS:pes-collect> $<TARGET_OBJECTS:pes_backend_probes>
         COMMAND_EXPAND_LISTS)
set_tests_properties(layering.collector PROPERTIES LABELS "unit;collector")

# The checker itself, on a made-up tree with and without a cycle.
add_test(NAME layering.selftest
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/selftest.sh ${CMAKE_CURRENT_LIST_DIR}/check_layering.py
                 ${CMAKE_C_COMPILER} ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/layering-selftest)
set_tests_properties(layering.selftest PROPERTIES LABELS "unit;collector")
