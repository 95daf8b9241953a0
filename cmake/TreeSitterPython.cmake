# tree-sitter-python at a pinned version from npm (cmake/NpmPackage.cmake): a static
# library from its src/parser.c and src/scanner.c (ABI 14), the scanner patched.
include(${CMAKE_CURRENT_LIST_DIR}/NpmPackage.cmake)
set(TSPY_VERSION 0.23.6)
npm_package(tree-sitter-python ${TSPY_VERSION}
  c8833dcf4a31288c53edb02d3ce860a1597a8135e59a5221b9eee58854f8a013c5fe585aec76b8750052f3602fea130c459a159c5248f0cea62fe4b05a82c3dc
  TSPY_DIR)

# Its scanner.c with cmake/patches/ applied in order, in a copy: comment runs inside a
# function or class otherwise parse in quadratic time (tree-sitter-python-comment-runs),
# and indentations of 256 columns or more wrap to 0 when the scanner's state is saved
# (tree-sitter-python-wide-indents); each patch says why and how. --fuzz=0: a scanner
# that is not exactly 0.23.6's stops the build rather than take a patch half-applied.
find_program(PATCH_PROGRAM patch REQUIRED)
set(TSPY_SCANNER_PATCHES
  ${CMAKE_CURRENT_LIST_DIR}/patches/tree-sitter-python-comment-runs.patch
  ${CMAKE_CURRENT_LIST_DIR}/patches/tree-sitter-python-wide-indents.patch)
set(TSPY_SCANNER ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TSPY_VERSION}-patched/scanner.c)
set(TSPY_PATCH_ARGS --quiet --fuzz=0 --no-backup-if-mismatch --reject-file=-)
set(TSPY_PATCH_COMMANDS)
foreach(p IN LISTS TSPY_SCANNER_PATCHES)
  if(NOT TSPY_PATCH_COMMANDS)  # the first makes the copy, the rest patch it in place
    list(APPEND TSPY_PATCH_COMMANDS COMMAND ${PATCH_PROGRAM} ${TSPY_PATCH_ARGS}
         -o ${TSPY_SCANNER} ${TSPY_DIR}/package/src/scanner.c ${p})
  else()
    list(APPEND TSPY_PATCH_COMMANDS COMMAND ${PATCH_PROGRAM} ${TSPY_PATCH_ARGS} ${TSPY_SCANNER} ${p})
  endif()
endforeach()
add_custom_command(OUTPUT ${TSPY_SCANNER}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TSPY_VERSION}-patched
  ${TSPY_PATCH_COMMANDS}
  DEPENDS ${TSPY_SCANNER_PATCHES} ${TSPY_DIR}/package/src/scanner.c
  COMMENT "Patching tree-sitter-python's scanner.c (comment runs, wide indents)")

add_library(tree_sitter_python STATIC ${TSPY_DIR}/package/src/parser.c ${TSPY_SCANNER})
target_include_directories(tree_sitter_python PRIVATE ${TSPY_DIR}/package/src)
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
