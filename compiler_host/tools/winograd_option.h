// winograd_option.h — `--winograd auto|off|f2|f4`, shared by tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf (passes/winograd.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include "driver/compiler.h"

namespace tinyrt {

inline void add_winograd_option(CLI::App &app, WinogradMode &mode) {
  app.add_option_function<std::string>(
         "--winograd", [&mode](const std::string &v) { mode = parse_winograd(v); },
         "auto: 3x3 stride-1 float convolutions as Winograd F(2,3) or F(4,3) where the cost model says it pays "
         "(fewer multiplies; transformed weights up to 4x larger, transform buffers in the arena) | off: never "
         "| f2, f4: every such convolution with that tile (tests, experiments)")
      ->check(CLI::IsMember({"auto", "off", "f2", "f4"}))
      ->default_str("auto");
}

}  // namespace tinyrt
