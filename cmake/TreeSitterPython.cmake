# tree-sitter-python at a pinned version from npm (cmake/NpmPackage.cmake): a static
# library from its src/parser.c and src/scanner.c (ABI 14), the scanner patched.
include(${CMAKE_CURRENT_LIST_DIR}/NpmPackage.cmake)
set(TSPY_VERSION 0.23.6)
npm_package(tree-sitter-python ${TSPY_VERSION}
  c8833dcf4a31288c53edb02d3ce860a1597a8135e59a5221b9eee58854f8a013c5fe585aec76b8750052f3602fea130c459a159c5248f0cea62fe4b05a82c3dc
  TSPY_DIR)

# Its scanner.c with cmake/patches/tree-sitter-python-comment-runs.patch applied, in a
# copy: comment runs inside a function or class otherwise parse in quadratic time (the
# patch says why and how). --fuzz=0: a scanner that is not exactly 0.23.6's stops the
# build rather than take the patch half-applied.
find_program(PATCH_PROGRAM patch REQUIRED)
set(TSPY_SCANNER_PATCH ${CMAKE_CURRENT_LIST_DIR}/patches/tree-sitter-python-comment-runs.patch)
set(TSPY_SCANNER ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TSPY_VERSION}-patched/scanner.c)
add_custom_command(OUTPUT ${TSPY_SCANNER}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TSPY_VERSION}-patched
  COMMAND ${PATCH_PROGRAM} --quiet --fuzz=0 --no-backup-if-mismatch --reject-file=-
          -o ${TSPY_SCANNER} ${TSPY_DIR}/package/src/scanner.c ${TSPY_SCANNER_PATCH}
  DEPENDS ${TSPY_SCANNER_PATCH} ${TSPY_DIR}/package/src/scanner.c
  COMMENT "Patching tree-sitter-python's scanner.c (comment runs)")

add_library(tree_sitter_python STATIC ${TSPY_DIR}/package/src/parser.c ${TSPY_SCANNER})
target_include_directories(tree_sitter_python PRIVATE ${TSPY_DIR}/package/src)
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
