// quantize_option.h — `--quantize none|dynamic`, shared by tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf (docs/QUANTIZATION.md).
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "ir/program.h"

namespace tinyrt {

inline void add_quantize_option(CLI::App &app, Quantize &q) {
  static const std::map<std::string, Quantize> names = {{"none", Quantize::None}, {"dynamic", Quantize::Dynamic}};
  app.add_option("--quantize", q,
                 "none | dynamic: float MatMul/Gemm/LSTM weights as int8 per output channel, activations "
                 "quantized per row at run time")
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case));
}

}  // namespace tinyrt
