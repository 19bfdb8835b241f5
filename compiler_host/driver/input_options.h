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
// A dimension may be a range MIN:MAX (a run-time extent): `lo` holds the
// lower bounds, `hi` the upper ones (equal for a fixed dimension).
struct InputShapeArg {
  std::string name;
  Shape lo, hi;
  bool ranged() const { return lo != hi; }
};
InputShapeArg parse_input_shape(const std::string &arg);
// "NAME=MIN:MAX" (--dim): a symbolic dimension's range.
std::pair<std::string, std::pair<int64_t, int64_t>> parse_dim_range(const std::string &arg);
// Adds the parsed options to `opt` (input_shapes, input_shape_mins, dim_ranges).
void add_shape_options(ImportOptions &opt, const std::vector<std::string> &shapes,
                       const std::vector<std::string> &dims);
std::pair<std::string, Binding> parse_binding(const std::string &arg);
// "DOMAIN::OP=SYMBOL[:same]" (--custom-op); throws CompileError(Usage).
CustomOpDecl parse_custom_op(const std::string &arg);
// "auto", "off", "f2", "f4" (--winograd); throws CompileError(Usage).
WinogradMode parse_winograd(const std::string &s);

}  // namespace tinyrt
