// shape_options.h — the input shape options tinyrt-compile, tinyrt-onnx-test
// and tinyrt-perf share: `--input-shape NAME=D0,D1,...`, where a dimension
// may be a range MIN:MAX (a run-time extent, ir/graph.h DimSym), and
// `--dim NAME=MIN:MAX`, the range of a symbolic dimension the model names.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tinyrt {

inline void add_input_shape_options(CLI::App &app, std::vector<std::string> &shapes, std::vector<std::string> &dims) {
  app.add_option("--input-shape", shapes,
                 "NAME=D0,D1,...: the shape of a graph input; a dimension may be a range MIN:MAX, which the model "
                 "then takes at run time (the arena is planned for MAX)");
  app.add_option("--dim", dims,
                 "NAME=MIN:MAX: the range of the model's symbolic dimension NAME (every input dimension of that "
                 "name), taken at run time");
}

}  // namespace tinyrt
