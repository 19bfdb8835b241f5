// quantize_option.h — `--quantize none|dynamic`, shared by tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf (docs/QUANTIZATION.md).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ir/program.h"

namespace tinyrt {

inline void add_quantize_option(CLI::App &app, Quantize &q) {
  app.add_option_function<std::string>(
         "--quantize", [&q](const std::string &v) { q = v == "dynamic" ? Quantize::Dynamic : Quantize::None; },
         "none | dynamic: float MatMul/Gemm/LSTM weights as int8 per output channel, activations quantized per row "
         "at run time")
      ->check(CLI::IsMember({"none", "dynamic"}))
      ->default_str("none");
}

}  // namespace tinyrt
