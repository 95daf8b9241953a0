# Fetches tree-sitter-python at a pinned version from the npm registry, checks the
# tarball against the registry's published integrity (sha512), and builds a static
# library from its src/parser.c and src/scanner.c (ABI 14: Debian's libtree-sitter
# 0.20.7 loads it).
set(TSPY_VERSION 0.23.6)
set(TSPY_SHA512 c8833dcf4a31288c53edb02d3ce860a1597a8135e59a5221b9eee58854f8a013c5fe585aec76b8750052f3602fea130c459a159c5248f0cea62fe4b05a82c3dc)
set(TSPY_DIR ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TSPY_VERSION})
set(TSPY_TGZ ${TSPY_DIR}/tree-sitter-python-${TSPY_VERSION}.tgz)

if(NOT EXISTS ${TSPY_DIR}/package/src/parser.c)
  file(MAKE_DIRECTORY ${TSPY_DIR})
  if(NOT EXISTS ${TSPY_TGZ})
    find_program(NPM npm REQUIRED)
    execute_process(
      COMMAND ${NPM} pack tree-sitter-python@${TSPY_VERSION} --pack-destination ${TSPY_DIR}
      WORKING_DIRECTORY ${TSPY_DIR}
      RESULT_VARIABLE npm_rc OUTPUT_QUIET ERROR_VARIABLE npm_err)
    if(NOT npm_rc EQUAL 0)
      message(FATAL_ERROR "npm pack tree-sitter-python@${TSPY_VERSION} failed: ${npm_err}")
    endif()
  endif()
  file(SHA512 ${TSPY_TGZ} got)
  if(NOT got STREQUAL TSPY_SHA512)
    file(REMOVE ${TSPY_TGZ})
    message(FATAL_ERROR "tree-sitter-python-${TSPY_VERSION}.tgz: sha512 ${got}, expected ${TSPY_SHA512}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf ${TSPY_TGZ}
    WORKING_DIRECTORY ${TSPY_DIR} RESULT_VARIABLE tar_rc)
  if(NOT tar_rc EQUAL 0)
    message(FATAL_ERROR "could not unpack ${TSPY_TGZ}")
  endif()
endif()

add_library(tree_sitter_python STATIC
  ${TSPY_DIR}/package/src/parser.c ${TSPY_DIR}/package/src/scanner.c)
target_include_directories(tree_sitter_python PRIVATE ${TSPY_DIR}/package/src)
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
