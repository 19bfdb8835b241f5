// limit_options.h — the command-line flags that raise or lower the caps of
// ir/limits.h, shared by tinyrt-compile, tinyrt-onnx-test and tinyrt-perf.
#pragma once

#include <CLI/CLI.hpp>

#include "ir/limits.h"

namespace tinyrt {

inline void add_limit_options(CLI::App &app, Limits &l) {
  app.add_option("--max-tensor-elements", l.max_tensor_elements, "largest tensor, in elements")
      ->check(CLI::Range(int64_t(1), kMaxTensorElementsHard))
      ->capture_default_str();
  app.add_option("--max-arena-bytes", l.max_arena_bytes, "largest arena the memory plan may need")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-expanded-nodes", l.max_expanded_nodes, "nodes control flow and recurrent ops may unroll into")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-folded-bytes", l.max_folded_bytes, "bytes of constants folding may create")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-weights-bytes", l.max_weights_bytes,
                 "bytes of (packed) weights the generated code may hold (default: the larger of 256 MiB and 4 times "
                 "the model file's size)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-fold-ops", l.max_fold_ops, "element operations constant folding may interpret")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

}  // namespace tinyrt
