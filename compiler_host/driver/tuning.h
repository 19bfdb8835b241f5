// tuning.h — tuning files: register tiles measured on the user's machine
// for the layer geometries of models (tinyrt-tune writes them; --tuning
// FILE in tinyrt-compile, tinyrt-onnx-test and tinyrt-perf reads them).
// A file is JSON:
//   {"tinyrt_tuning": 1, "target": "x86-64-avx2", "measured_on": "...",
//    "measure": "median_ms" | "guest_instructions",
//    "tiles": [{"kind": "float", "oc": 64, "row": 56, "ic": 64,
//               "linear": false, "mr": 4, "nv": 3, ...}, ...],
//    "winograd": [{"ic": 64, "oc": 64, "out_h": 56, "out_w": 56, "batch": 1,
//                  "f2": 0.61, "f4": 0.48, ...}, ...],
//    "serial_step_ops": 400000, "threads": 2}
// keyed by layer geometry (Target::gemm_tile's arguments; a 3x3
// convolution's channels and output size with its Winograd forms' measured
// time over its direct form's, Target::tuned_winograd), so that it
// carries over between models; "serial_step_ops" (optional) replaces
// Target::serial_step_ops, measured at "threads"; other fields are
// reports.
#pragma once

#include <string>

#include "target/target.h"

namespace tinyrt {

// The tiles of the tuning file's text (named `path` in messages) applied
// to t (Target::tuned_tiles). A file for another target, malformed JSON,
// a missing field or a tile outside the target's registers is a usage
// error naming the file and the problem.
void apply_tuning(const std::string &text, const std::string &path, Target &t);

}  // namespace tinyrt
