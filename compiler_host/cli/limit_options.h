// limit_options.h — the command-line flags that raise or lower the caps of
// ir/limits.h, shared by tinyrt-compile, tinyrt-onnx-test and tinyrt-perf.
#pragma once

#include <CLI/CLI.hpp>

#include "ir/limits.h"

namespace tinyrt {

// A budget given as bytes ("50000000", > 0) or a ratio ("1.1x", R > 0 of
// what the option measures against): one of *bytes, *ratio set, the other
// 0; false if it is neither.
inline bool parse_budget(const std::string &v, int64_t *bytes, double *ratio) {
  if (v.empty()) return false;
  const bool is_ratio = v.back() == 'x' || v.back() == 'X';
  std::string num = is_ratio ? v.substr(0, v.size() - 1) : v;
  if (num.empty() || num.find_first_not_of("0123456789.") != std::string::npos) return false;
  try {
    size_t used = 0;
    if (is_ratio) {
      double r = std::stod(num, &used);
      if (used != num.size() || !(r > 0) || r > 1e6) return false;
      *ratio = r, *bytes = 0;
    } else {
      long long b = std::stoll(num, &used);
      if (used != num.size() || b <= 0) return false;
      *bytes = b, *ratio = 0;
    }
  } catch (const std::exception &) {
    return false;
  }
  return true;
}

// The budgets, which also steer the compile (tinyrt-compile, tinyrt-onnx-test
// and tinyrt-perf): --max-arena-bytes, --max-weights-bytes.
inline void add_budget_options(CLI::App &app, Limits &l) {
  app.add_option_function<std::string>(
      "--max-arena-bytes",
      [&l](const std::string &v) {
        int64_t bytes = 0;
        if (!parse_budget(v, &bytes, &l.max_arena_ratio))
          throw CLI::ValidationError("--max-arena-bytes", "'" + v +
                                                              "': expected bytes (e.g. 4000000) or a ratio of the "
                                                              "plan without speed-for-memory transforms (e.g. 1.2x)");
        if (bytes > 0) l.max_arena_bytes = bytes;
        l.arena_budget_given = true;
      },
      "largest arena the memory plan may need, and the budget the Winograd choices keep within, in bytes or as a "
      "ratio of the plan without them (its peak of live bytes, e.g. 1.2x) (default: those keep within 1.1x the "
      "plan without them; the plan may take up to 2147483648)");
  app.add_option_function<std::string>(
      "--max-weights-bytes",
      [&l](const std::string &v) {
        if (!parse_budget(v, &l.max_weights_bytes, &l.max_weights_ratio))
          throw CLI::ValidationError("--max-weights-bytes",
                                     "'" + v +
                                         "': expected bytes (e.g. 50000000) or a ratio of the model's own "
                                         "weights (e.g. 1.1x)");
      },
      "budget of (packed) weights, in bytes or as a ratio of the model's own weights (e.g. 1.5x): the Winograd "
      "choices keep within it and the compile refuses a plan above it (default: the choices trading memory for "
      "speed keep within 1.1x; with --weights fp16, 1.1x the float plan's weights as half)");
  app.add_option_function<std::string>(
      "--max-code-bytes",
      [&l](const std::string &v) {
        if (!parse_budget(v, &l.max_code_bytes, &l.max_code_ratio))
          throw CLI::ValidationError("--max-code-bytes", "'" + v +
                                                             "': expected bytes (e.g. 200000) or a ratio of the "
                                                             "code with every Winograd layer direct (e.g. 1.5x)");
      },
      "budget of machine code, in bytes or as a ratio of the code with every Winograd layer direct (e.g. 1.5x): "
      "Winograd layers (whose transforms add code) are dropped, least gain per byte first, until the code fits; a "
      "model whose smallest plan does not fit is refused (default: no budget)");
}

inline void add_limit_options(CLI::App &app, Limits &l) {
  app.add_option("--max-tensor-elements", l.max_tensor_elements, "largest tensor, in elements")
      ->check(CLI::Range(int64_t(1), kMaxTensorElementsHard))
      ->capture_default_str();
  app.add_option("--max-expanded-nodes", l.max_expanded_nodes, "nodes control flow and recurrent ops may unroll into")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-folded-bytes", l.max_folded_bytes, "bytes of constants folding may create")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_budget_options(app, l);
  app.add_option("--max-fold-ops", l.max_fold_ops, "element operations constant folding may interpret")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

}  // namespace tinyrt
