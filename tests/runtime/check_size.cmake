# check_size.cmake — the runtime's footprint on ARMv7-A Thumb-2 bare metal
# (ctest runtime/size-armv7-baremetal). Compiles runtime/*.c and
# ports/baremetal/*.c with the firmware's flags (-Os, Thumb-2,
# cmake/armv7_baremetal_flags.cmake), sums their `text` as
# arm-none-eabi-size reports it (code + read-only data: everything the
# runtime puts in flash but .data) and fails when it is above BUDGET (the
# 6 KB aim) or above CEILING (the size when the ceiling was last set, plus
# ~3%: growth must be a conscious change of the ceiling in
# tests/CMakeLists.txt).
#
#   cmake -DCC=arm-none-eabi-gcc -DSIZE=arm-none-eabi-size -DSRC=<source root>
#         -DOUT=<scratch dir> "-DFLAGS=<flags;...>" -DBUDGET=6144 -DCEILING=<n>
#         -P check_size.cmake
#
# Or, for a library as built (the installed bare-metal runtime):
#
#   cmake -DSIZE=<size> -DARCHIVE=<lib.a> -DBUDGET=<n> -DCEILING=<n> -P check_size.cmake
if(DEFINED ARCHIVE)
  set(required SIZE ARCHIVE BUDGET CEILING)
else()
  set(required CC SIZE SRC OUT FLAGS BUDGET CEILING)
endif()
foreach(v ${required})
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_size.cmake: -D${v}=... is required")
  endif()
endforeach()

set(objs "")
set(code 0)
if(DEFINED ARCHIVE)
  set(objs ${ARCHIVE})
  set(sources "")
  set(OUT "")
else()
  file(GLOB sources ${SRC}/runtime/*.c ${SRC}/ports/baremetal/*.c)
  list(SORT sources)
  file(REMOVE_RECURSE ${OUT})
  file(MAKE_DIRECTORY ${OUT})
endif()
foreach(src ${sources})
  get_filename_component(name ${src} NAME_WE)
  set(obj ${OUT}/${name}.o)
  execute_process(COMMAND ${CC} ${FLAGS} -I${SRC}/abi -I${SRC}/ports -I${SRC}/ports/baremetal -c ${src} -o ${obj}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot compile ${src}:\n${err}")
  endif()
  list(APPEND objs ${obj})
endforeach()
foreach(obj ${objs})
  # Code alone: the .text* sections (SysV format of size).
  execute_process(COMMAND ${SIZE} -A ${obj} OUTPUT_VARIABLE sysv RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SIZE} -A ${obj} failed")
  endif()
  string(REGEX MATCHALL "\n\\.text[^ \t\n]*[ \t]+[0-9]+" secs "${sysv}")
  set(obj_code 0)
  foreach(sec ${secs})
    string(REGEX REPLACE ".*[ \t]([0-9]+)$" "\\1" n "${sec}")
    math(EXPR obj_code "${obj_code} + ${n}")
  endforeach()
  math(EXPR code "${code} + ${obj_code}")
endforeach()

execute_process(COMMAND ${SIZE} -t ${objs} OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SIZE} -t failed")
endif()
if(OUT)
  string(REPLACE "${OUT}/" "" table "${table}")
endif()
message("${table}")
if(NOT table MATCHES "\n[ \t]*([0-9]+)[ \t]+([0-9]+)[ \t]+([0-9]+)[ \t]+[0-9]+[ \t]+[0-9a-f]+[ \t]+\\(TOTALS\\)")
  message(FATAL_ERROR "no (TOTALS) line in the output of ${SIZE} -t")
endif()
set(text ${CMAKE_MATCH_1})
set(data ${CMAKE_MATCH_2})
math(EXPR rodata "${text} - ${code}")
message("runtime, ARMv7-A Thumb-2 -Os, bare-metal port: text ${text} bytes (code ${code} + read-only data "
        "${rodata}), data ${data}; budget ${BUDGET}, ceiling ${CEILING}")
if(text GREATER BUDGET)
  message(FATAL_ERROR "the runtime's text (${text} bytes) is over its budget of ${BUDGET} bytes")
endif()
if(text GREATER CEILING)
  message(FATAL_ERROR "the runtime's text grew to ${text} bytes, past the ceiling of ${CEILING}: if the growth "
                      "is worth it, raise the ceiling in tests/CMakeLists.txt (runtime/size-*) "
                      "and say why in the commit")
endif()
message("passed: text within the budget and the ceiling")
