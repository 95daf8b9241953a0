# Carries the guides (docs/guide/*.md) inside the binary, for `sitepatch help --guide
# TOPIC`: one header with each guide's name (its file name without .md; README is the
# index) and text, in name order.
file(GLOB guides ${DIR}/*.md)
list(SORT guides)
set(delim "SITEPATCH_EMBED")
set(body "#pragma once\n// Generated from ${DIR}; do not edit.\nnamespace sitepatch::cli::embedded {\nstruct Guide {\n  const char* name;\n  const char* text;\n};\ninline constexpr Guide guides[] = {\n")
foreach(guide IN LISTS guides)
  get_filename_component(name ${guide} NAME_WE)
  file(READ ${guide} content)
  string(APPEND body "    {\"${name}\", R\"${delim}(${content})${delim}\"},\n")
endforeach()
string(APPEND body "};\n}\n")
file(WRITE ${OUTPUT} "${body}")
