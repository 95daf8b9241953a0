# Joins text files, byte for byte and in the order given, into one: the agent program is
# several files of one concept each (src/host/agent/), run as one text. INPUTS is the
# ordered list with `|` between paths (a `;` would not survive the build tool's command
# line). Each part must end with a newline, so that no line of one runs into the next:
# every line of the joined text is a whole line of one part.
string(REPLACE "|" ";" inputs "${INPUTS}")
set(joined "")
foreach(input IN LISTS inputs)
  file(READ ${input} content)
  if(NOT content MATCHES "\n$")
    message(FATAL_ERROR "${input} does not end with a newline: the next part would run into its last line")
  endif()
  string(APPEND joined "${content}")
endforeach()
file(WRITE ${OUTPUT} "${joined}")
