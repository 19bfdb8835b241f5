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
  double percentile = 100;  // --calibration-percentile P (100: min/max)
  int weight_bits = 8;      // --weight-bits 8|7
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
  app.add_option("--calibration-percentile", q.percentile,
                 "with --quantize static: each activation's range from its values at this percentile from either "
                 "end (e.g. 99.99) instead of its min and max (100)")
      ->check(CLI::Range(50.0, 100.0))
      ->capture_default_str();
  app.add_option("--weight-bits", q.weight_bits,
                 "with --quantize: the int8 weights in [-127, 127] (8) or [-63, 63] (7: ONNX Runtime's reduce_range; "
                 "on x86 without VNNI 7-bit weights multiply as bytes, 1.3-1.9x as fast, one bit less precise)")
      ->check(CLI::IsMember({7, 8}))
      ->capture_default_str();
}

// --calibration means nothing without --quantize static: refused rather
// than ignored.
inline void check_quantize_args(const QuantizeArgs &q) {
  if ((!q.calibration.empty() || q.percentile != 100) && q.mode != Quantize::Static)
    fail_usage("--calibration and --calibration-percentile are only read by --quantize static");
  if (q.weight_bits != 8 && q.mode == Quantize::None) fail_usage("--weight-bits is only read by --quantize");
}

}  // namespace tinyrt
