# docs/OPERATORS.md must contain exactly what `tinyrt-compile --list-ops`
# prints between its GENERATED markers (regenerate: scripts/gen_operators.sh).
execute_process(COMMAND ${COMPILER} --list-ops OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tinyrt-compile --list-ops failed")
endif()
file(READ ${DOC} doc)
string(REGEX MATCH "<!-- BEGIN GENERATED[^\n]*\n(.*)<!-- END GENERATED" _ "${doc}")
set(in_doc "${CMAKE_MATCH_1}")
if(NOT in_doc STREQUAL table)
  message(FATAL_ERROR "docs/OPERATORS.md is out of date: run scripts/gen_operators.sh")
endif()
