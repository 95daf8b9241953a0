# tree-sitter-python at a pinned version from npm (cmake/NpmPackage.cmake): a static
# library from its src/parser.c and src/scanner.c (ABI 14).
include(${CMAKE_CURRENT_LIST_DIR}/NpmPackage.cmake)
set(TSPY_VERSION 0.23.6)
npm_package(tree-sitter-python ${TSPY_VERSION}
  c8833dcf4a31288c53edb02d3ce860a1597a8135e59a5221b9eee58854f8a013c5fe585aec76b8750052f3602fea130c459a159c5248f0cea62fe4b05a82c3dc
  TSPY_DIR)

add_library(tree_sitter_python STATIC
  ${TSPY_DIR}/package/src/parser.c ${TSPY_DIR}/package/src/scanner.c)
target_include_directories(tree_sitter_python PRIVATE ${TSPY_DIR}/package/src)
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
