// input_options.h — the command-line forms of a graph input's shape and of
// a binding (tinyrt-compile, tinyrt-onnx-test, tinyrt-perf).
#pragma once

#include <string>
#include <utility>

#include "frontend/onnx_import.h"

namespace tinyrt {

// Parses "NAME=D0,D1,..." (an input shape) and "NAME=V0,V1,..." or
// "NAME=@tensor.pb" (a binding); throws CompileError(Usage).
std::pair<std::string, Shape> parse_input_shape(const std::string &arg);
std::pair<std::string, Binding> parse_binding(const std::string &arg);

}  // namespace tinyrt
