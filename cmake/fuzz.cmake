# TINYRT_FUZZ=ON: the sanitizer build (tests/fuzz/). Every target of this
# build (the compiler library, the runtime, the tools and tests built here)
# is compiled with AddressSanitizer + UndefinedBehaviorSanitizer, stopping at
# the first report, and with libFuzzer's coverage instrumentation; the fuzz
# targets link libFuzzer's main. LLVM, onnx and protobuf are the prebuilt
# system libraries (not instrumented). Needs clang (Debian: clang-14 and
# libclang-rt-14-dev):
#
#   cmake -S . -B build-fuzz -G Ninja -DTINYRT_FUZZ=ON \
#         -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TINYRT_FUZZ=ON needs clang with libFuzzer: "
                      "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
endif()
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)
check_cxx_source_compiles(
  "#include <cstdint>\n#include <cstddef>\nextern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }"
  TINYRT_HAS_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT TINYRT_HAS_LIBFUZZER)
  message(FATAL_ERROR "TINYRT_FUZZ=ON: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer,address,undefined "
                      "(Debian: apt-get install clang-14 libclang-rt-14-dev)")
endif()

# -O1 keeps the sanitized build quick to compile and the stack traces exact;
# line tables are enough to symbolize reports.
set(TINYRT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all)
add_compile_options(${TINYRT_SANITIZE_FLAGS} -fsanitize=fuzzer-no-link -O1 -gline-tables-only
                    -fno-omit-frame-pointer)
add_link_options(${TINYRT_SANITIZE_FLAGS})
# Only the host: no cross builds of the runtime.
set(TINYRT_CROSS OFF CACHE BOOL "" FORCE)
