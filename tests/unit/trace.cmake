# Unit tests of the trace format library (trace/).
pes_add_unit_test(test_trace_roundtrip SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_roundtrip.c LIBS pes_trace)
pes_add_unit_test(test_trace_truncation SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_truncation.c LIBS pes_trace)
