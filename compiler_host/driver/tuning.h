// tuning.h — tuning files: register tiles, Winograd forms, task splits and
// the serial-step threshold measured on the user's machine for the layer
// geometries of models (tinyrt-tune writes them; --tuning
// FILE in tinyrt-compile, tinyrt-onnx-test and tinyrt-perf reads them).
// A file is JSON:
//   {"tinyrt_tuning": 1, "target": "x86-64-avx2", "measured_on": "...",
//    "measure": "median_ms" | "guest_instructions",
//    "tiles": [{"kind": "float", "oc": 64, "row": 56, "ic": 64,
//               "linear": false, "mr": 4, "nv": 3, ...}, ...],
//    "winograd": [{"ic": 64, "oc": 64, "out_h": 56, "out_w": 56, "batch": 1,
//                  "f2": 0.61, "f4": 0.48, ...}, ...],
//    "task_splits": [{"kind": "float", "oc": 64, "row": 56, "ic": 64,
//                     "linear": false, "split": "pixels,16", ...}, ...],
//    "serial_step_ops": 400000, "threads": 2,
//    "weights": "fp16", "precision": "fp32"}
// keyed by layer geometry (Target::gemm_tile's arguments: "kind" is the
// tile list a GEMM chooses from, "float", "int8", "int8-bytes" or
// "int8-signed-bytes" (x86 without VNNI, products as bytes or signed
// bytes), "int16" (int8 Winograd's products) or "int16-bytes" (int16
// pairs over int8 weights: Target::TileKind); a 3x3
// convolution's channels and output size with its Winograd forms' measured
// time over its direct form's, Target::tuned_winograd), so that it
// carries over between models; "task_splits" (optional, measured at
// "threads" > 1) the split of a GEMM of that tile geometry
// (Target::tuned_splits, ir/task_split.h: an order and about a number of
// tasks, or "serial": the step on the calling thread alone);
// "serial_step_ops" (optional) replaces Target::serial_step_ops, measured
// at "threads"; "weights" and
// "precision" (optional, fp32 when absent) are the tinyrt-tune options
// the file was measured with, which a compile must share (half weights
// and half products take other tiles and forms); other fields are
// reports.
#pragma once

#include <string>
#include <vector>

#include "passes/pass.h"
#include "target/target.h"

namespace tinyrt {

// The tiles of the tuning file's text (named `path` in messages) applied
// to t (Target::tuned_tiles), for a compile with these --weights and
// --precision. A file for another target or measured with other weights
// or precision, malformed JSON, a missing field or a tile outside the
// target's registers is a usage error naming the file and the problem.
void apply_tuning(const std::string &text, const std::string &path, Target &t,
                  WeightStorage weights = WeightStorage::F32, Precision precision = Precision::F32);

// A model timed at more than one thread with its steps shared by the
// threads and on the calling thread alone, and its steps' mean arithmetic
// operations (ir/program.h kernel_ops).
struct SerialPoint {
  double mean_step_ops, shared, serial;
};
// The serial-step threshold (Target::serial_step_ops: steps below it run
// on one thread) that costs these models least, each model's cost taken
// relative to its faster way: every threshold between two models' mean
// step sizes costs the same, and the one taken is their geometric mean,
// so that it carries over to other models. Only thresholds under which no
// model is slower than under `builtin` (the tables') by more than `slack`
// count: a single threshold cannot serve models that disagree (a model
// faster alone with bigger steps than one faster shared), and tuning must
// not trade one model's time for another's. `builtin` when none costs
// less. `cost` and `builtin_cost` (when given) receive the summed
// relative costs.
int64_t choose_serial_threshold(std::vector<SerialPoint> pts, int64_t builtin, double slack = 0.02,
                                double *cost = nullptr, double *builtin_cost = nullptr);

}  // namespace tinyrt
