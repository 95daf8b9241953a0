# The tree-sitter library itself, at a pinned version from npm (cmake/NpmPackage.cmake):
# the `tree-sitter` package carries the library's C source (vendor/tree-sitter/lib, one
# lib.c), built here as a static library. Not Debian's libtree-sitter 0.20.7: it keeps a
# node's child count in 16 bits, so a module with 65,536 comment lines in a row (or a
# long enough syntax error) makes it free a bad pointer (tree-sitter#2134, fixed 0.20.8).
include(${CMAKE_CURRENT_LIST_DIR}/NpmPackage.cmake)
set(TSLIB_NPM_VERSION 0.21.1)
npm_package(tree-sitter ${TSLIB_NPM_VERSION}
  eddc6803a918bed816c3cd36eb9332a89964465e326b02233bb4b9322832b6310b917e377d5d96b005f3b0d7ceeec0693cf085e46a74f97cc79340f02c2ab7c5
  TSLIB_DIR)
set(TSLIB_ROOT ${TSLIB_DIR}/package/vendor/tree-sitter/lib)

add_library(tree_sitter_lib STATIC ${TSLIB_ROOT}/src/lib.c)
target_include_directories(tree_sitter_lib PRIVATE ${TSLIB_ROOT}/src ${TSLIB_ROOT}/include
  INTERFACE ${TSLIB_ROOT}/include)
set_target_properties(tree_sitter_lib PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_lib PRIVATE -w -O2)
target_compile_definitions(tree_sitter_lib PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
