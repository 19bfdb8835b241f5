// tool_common.h — what tinyrt-onnx-test and tinyrt-perf share: building a
// model into a loadable .so and running it with the target's runner,
// natively or under qemu.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "driver/compiler.h"
#include "driver/host_tools.h"
#include "driver/input_options.h"
#include "frontend/onnx_tensors.h"
#include "util/process.h"

namespace tinyrt {

struct BuiltModel {
  Artifact artifact;
  std::string dir, so_path, symbol;
};

// The runner executable for a target (override: TINYRT_RUNNER_<TARGET>):
// beside an installed tool (P/bin, P/LIBDIR/tinyrt/<target>/), else in
// the build tree that built the tool.
std::string runner_path(const Target &t);
// The QEMU instruction-count plugin, installed or in the build tree.
std::string icount_plugin_path();

// Compiles `onnx` into `dir` and links the shared object.
BuiltModel build_model(const std::string &onnx, const CompileOptions &opt, const std::string &dir);

// Runs the runner on the built model with `args` (under the target's
// emulator, with `emulator_args` such as a plugin, when it has one).
ProcessResult run_runner(const Target &t, const BuiltModel &m, const std::vector<std::string> &args,
                         const std::vector<std::string> &emulator_args = {}, double timeout_seconds = 900);

// A fresh temporary directory.
std::string make_temp_dir(const std::string &prefix);

// --quantize static's calibration: the range of every tensor
// calibration_tensors() names, over the input sets in `dir` (the ONNX test
// layout: test_data_set_*/input_*.pb, or input_*.pb in `dir` itself;
// inputs matched by tensor name, else by position), measured by running
// the float model on the host with those tensors as extra outputs: the
// smallest and largest values (percentile 100), or the values at the
// given percentile from each end, so that rare outliers do not stretch
// the scale. NaN and infinities are ignored. Progress (one line per set)
// to `log`.
CalibrationRanges calibrate(const std::string &onnx, const CompileOptions &opt, const std::string &dir,
                            double percentile = 100, std::ostream *log = nullptr);

// tinyrt-runner's --dims for inputs of these shapes (descriptor order):
// "D0,D1,...;D0,...".
std::string runner_dims(const std::vector<Shape> &shapes);
// The outputs' actual dims the runner printed after a run with --dims
// ("dims K: D0,D1,..." lines), by output index.
std::map<size_t, Shape> runner_output_dims(const std::string &output);

}  // namespace tinyrt
