# cmake -DJSON=demo.json -DOUT=demo_code_bytes.h -P code_bytes.cmake
# Writes the model's generated-code size from tinyrt-compile's JSON report
# as a C macro, for examples/raspberry-pi/classify.c.
file(READ "${JSON}" json)
if(NOT json MATCHES "\"code_bytes\": *([0-9]+)")
  message(FATAL_ERROR "no code_bytes in ${JSON}")
endif()
file(WRITE "${OUT}" "/* Generated from ${JSON}. */\n#define DEMO_CODE_BYTES ${CMAKE_MATCH_1}u\n")
