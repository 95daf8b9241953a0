# Turns a text file into a C++ header holding it as a raw string, so the binary
# carries the agent program and needs nothing installed beside it.
file(READ ${INPUT} content)
set(delim "SITEPATCH_EMBED")
file(WRITE ${OUTPUT} "#pragma once\n// Generated from ${INPUT}; do not edit.\nnamespace sitepatch::host::embedded {\ninline constexpr const char agent_source[] = R\"${delim}(${content})${delim}\";\n}\n")
