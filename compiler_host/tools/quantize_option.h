// quantize_option.h — `--quantize none|dynamic`, shared by tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf (docs/QUANTIZATION.md).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ir/error.h"
#include "ir/program.h"

namespace tinyrt {

struct QuantizeArgs {
  Quantize mode = Quantize::None;
  std::string calibration;  // --calibration DIR
};

inline void add_quantize_option(CLI::App &app, QuantizeArgs &q) {
  app.add_option_function<std::string>(
         "--quantize",
         [&q](const std::string &v) {
           q.mode = v == "dynamic" ? Quantize::Dynamic : v == "static" ? Quantize::Static : Quantize::None;
         },
         "none | dynamic: float MatMul/Gemm/LSTM/GRU/RNN weights as int8 per output channel, activations "
         "quantized per row at run time | static: Conv/Gemm/MatMul as int8 with activation ranges calibrated on "
         "--calibration DIR")
      ->check(CLI::IsMember({"none", "dynamic", "static"}))
      ->default_str("none");
  app.add_option("--calibration", q.calibration,
                 "with --quantize static: input sets in the ONNX test layout (DIR/test_data_set_*/input_*.pb) the "
                 "float model runs on to measure activation ranges");
}

// --calibration means nothing without --quantize static: refused rather
// than ignored.
inline void check_quantize_args(const QuantizeArgs &q) {
  if (!q.calibration.empty() && q.mode != Quantize::Static)
    fail_usage("--calibration is only read by --quantize static");
}

}  // namespace tinyrt
