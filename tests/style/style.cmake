# pes's own C and C++ sources are laid out by .clang-format: the check lists
# any file clang-format-19 would change (scripts/format.sh fixes them).
add_test(NAME style.clang_format
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/format.sh --check)
set_tests_properties(style.clang_format PROPERTIES LABELS "style")
