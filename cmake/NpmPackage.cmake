# npm_package(NAME VERSION SHA512 OUT_DIR): fetches NAME@VERSION from the npm registry
# once (`npm pack`), checks the tarball against the registry's published integrity
# (sha512, hex), and unpacks it; OUT_DIR is set to the folder holding its `package/`.
function(npm_package name version sha512 out_dir)
  set(dir ${CMAKE_BINARY_DIR}/_deps/${name}-${version})
  set(tgz ${dir}/${name}-${version}.tgz)
  if(NOT EXISTS ${dir}/package/package.json)
    file(MAKE_DIRECTORY ${dir})
    if(NOT EXISTS ${tgz})
      find_program(NPM npm REQUIRED)
      execute_process(
        COMMAND ${NPM} pack ${name}@${version} --pack-destination ${dir}
        WORKING_DIRECTORY ${dir}
        RESULT_VARIABLE npm_rc OUTPUT_QUIET ERROR_VARIABLE npm_err)
      if(NOT npm_rc EQUAL 0)
        message(FATAL_ERROR "npm pack ${name}@${version} failed: ${npm_err}")
      endif()
    endif()
    file(SHA512 ${tgz} got)
    if(NOT got STREQUAL sha512)
      file(REMOVE ${tgz})
      message(FATAL_ERROR "${name}-${version}.tgz: sha512 ${got}, expected ${sha512}")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf ${tgz}
      WORKING_DIRECTORY ${dir} RESULT_VARIABLE tar_rc)
    if(NOT tar_rc EQUAL 0)
      message(FATAL_ERROR "could not unpack ${tgz}")
    endif()
  endif()
  set(${out_dir} ${dir} PARENT_SCOPE)
endfunction()
