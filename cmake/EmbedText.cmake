# Turns a text file into a C++ header holding it as a raw string, so the binary
# carries the agent program (and the shipped audit rules) and needs nothing installed
# beside it. NAMESPACE and NAME default to the agent's.
file(READ ${INPUT} content)
if(NOT NAMESPACE)
  set(NAMESPACE sitepatch::host::embedded)
endif()
if(NOT NAME)
  set(NAME agent_source)
endif()
set(delim "SITEPATCH_EMBED")
# Its sha256 too: hashing it at run time (OpenSSL's first use) came before every ssh start.
file(SHA256 ${INPUT} digest)
file(WRITE ${OUTPUT} "#pragma once\n// Generated from ${INPUT}; do not edit.\nnamespace ${NAMESPACE} {\ninline constexpr const char ${NAME}[] = R\"${delim}(${content})${delim}\";\ninline constexpr const char ${NAME}_sha256[] = \"${digest}\";\n}\n")
