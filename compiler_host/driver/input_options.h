// input_options.h — the command-line forms of compile options that are more
// than a number or a name (tinyrt-compile, tinyrt-onnx-test, tinyrt-perf).
#pragma once

#include <string>
#include <utility>

#include "frontend/onnx_import.h"
#include "ir/program.h"
#include "passes/pass.h"

namespace tinyrt {

// Parses "NAME=D0,D1,..." (an input shape) and "NAME=V0,V1,..." or
// "NAME=@tensor.pb" (a binding); throws CompileError(Usage).
std::pair<std::string, Shape> parse_input_shape(const std::string &arg);
std::pair<std::string, Binding> parse_binding(const std::string &arg);
// "DOMAIN::OP=SYMBOL[:same]" (--custom-op); throws CompileError(Usage).
CustomOpDecl parse_custom_op(const std::string &arg);
// "auto", "off", "f2", "f4" (--winograd); throws CompileError(Usage).
WinogradMode parse_winograd(const std::string &s);

}  // namespace tinyrt
