// limits.h — caps on what a model may ask of the compiler. Every model is
// untrusted: sizes come from the file, so each figure that drives memory,
// time or generated addresses is checked against a cap here, with a
// message that names the cap's command-line flag. docs/SECURITY.md lists
// them.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tinyrt {

struct Limits {
  // Elements of one tensor. Generated code indexes elements with 32-bit
  // integers, so this cap cannot be raised above 2^31 - 1.
  int64_t max_tensor_elements = (int64_t(1) << 31) - 1;
  // Bytes of the planned arena (--max-arena-bytes); given, it is also the
  // budget the speed-for-memory choices keep within (else they keep within
  // kDefaultArenaRatio of the plan without them).
  int64_t max_arena_bytes = int64_t(1) << 31;
  bool arena_budget_given = false;
  // --max-arena-bytes Rx: the budget is R times the plan's lower bound
  // without the speed-for-memory transforms (what the default measures
  // against: passes/winograd.cpp sets Program::budgets.arena from it, and
  // plan_memory refuses a placed arena above that).
  double max_arena_ratio = 0;
  // Nodes that control flow (Loop, Scan, If) and recurrent ops may expand
  // into (--max-unrolled-nodes).
  int64_t max_expanded_nodes = 200000;
  // Bytes of constants that folding may materialize, in all (--max-folded-bytes).
  // 256 MiB: LLVM takes about 5 bytes of memory per byte of weights, so
  // a folded weight of 1 GiB (a ConstantOfShape in a 150-byte file) took
  // 6.4 GB.
  int64_t max_folded_bytes = int64_t(1) << 28;
  // Element operations constant folding may interpret, in all
  // (--max-fold-ops): each folded output element times the nodes of its
  // expression (ir/interp.h, interpret_cost). The bytes cap alone let a
  // Conv of two constants of 268 MB ask for 10^12 multiply-adds.
  int64_t max_fold_ops = int64_t(1) << 30;
  // Bytes of weights the kernels read, packed (--max-weights-bytes N, or
  // R x the model's own weights as `--max-weights-bytes Rx`): a budget
  // that the choices trading memory for speed honour (Winograd per layer,
  // passes/winograd.cpp) and that the compile refuses to exceed. 0 and 0:
  // not given; the trades then keep within kDefaultWeightsRatio of the
  // model's weights, and the weights are capped only against what LLVM
  // can hold (weights_safety_cap).
  int64_t max_weights_bytes = 0;
  double max_weights_ratio = 0;
  // Bytes of machine code (--max-code-bytes; 0: none): the compile drops
  // the Winograd layers that add the most code for their gain until the
  // code fits, and refuses a model whose smallest plan does not.
  int64_t max_code_bytes = 0;
  // --max-code-bytes Rx: R times the code of the plan with every Winograd
  // layer direct (the driver compiles that plan to measure it).
  double max_code_ratio = 0;
  // The model's own weights: the bytes of its initializers and Constant
  // nodes as imported (the base of a ratio). Set by the import.
  int64_t model_weights_bytes = 0;
  // Without a given budget: the constants handed to LLVM, which takes
  // about 5 bytes of memory per byte of weights while it writes the
  // object. The import sets the larger of 256 MiB and 4 times the model
  // file's size; a graph built without the import (tests, tools) gets the
  // 256 MiB floor.
  int64_t weights_safety_cap = 0;
  static constexpr int64_t kMinWeightsCap = int64_t(256) << 20;
  static constexpr double kDefaultWeightsRatio = 1.1;
  // The arena the speed-for-memory choices keep within when no budget is
  // given: this ratio of the plan's lower bound without them (or the cap,
  // max_arena_bytes, if lower); a budget given replaces it.
  static constexpr double kDefaultArenaRatio = 1.1;
  // The arena budget the speed-for-memory choices keep within, given the
  // plan's lower bound without them (`peak`): --max-arena-bytes Rx as R
  // times it, --max-arena-bytes N as given, else kDefaultArenaRatio of it
  // (each within max_arena_bytes).
  int64_t arena_budget(int64_t peak) const {
    if (max_arena_ratio > 0) return std::min<int64_t>(max_arena_bytes, (int64_t)(max_arena_ratio * (double)peak));
    if (arena_budget_given) return max_arena_bytes;
    return std::min<int64_t>(max_arena_bytes, (int64_t)(kDefaultArenaRatio * (double)peak));
  }
  bool weights_budget_given() const { return max_weights_bytes > 0 || max_weights_ratio > 0; }
  // The budget given, in bytes (a ratio of the model's weights rounded
  // down), or 0.
  int64_t given_weights_budget() const {
    if (max_weights_bytes > 0) return max_weights_bytes;
    if (max_weights_ratio > 0) return (int64_t)(max_weights_ratio * (double)model_weights_bytes);
    return 0;
  }
  // The budget the speed-for-memory choices keep within: the given one,
  // else kDefaultWeightsRatio of the model's weights as stored, `stored`
  // bytes per byte of the model's. (--weights fp16: passes/winograd.cpp
  // takes kDefaultWeightsRatio of the float plan's weights as half.)
  int64_t weights_budget(double stored = 1.0) const {
    if (weights_budget_given()) return given_weights_budget();
    if (model_weights_bytes > 0) return (int64_t)(kDefaultWeightsRatio * stored * (double)model_weights_bytes);
    return weights_cap();
  }
  // What LLVM may be handed (a bound on the compiler's memory, checked
  // before code generation; the budget is checked on the weights as
  // emitted): the safety cap, or a larger budget given.
  int64_t weights_cap() const {
    const int64_t safety = weights_safety_cap > 0 ? weights_safety_cap : kMinWeightsCap;
    return safety > given_weights_budget() ? safety : given_weights_budget();
  }
  // Nesting of subgraphs (If/Loop/Scan bodies) and function expansions.
  int max_nesting = 64;
};

constexpr int64_t kMaxTensorElementsHard = (int64_t(1) << 31) - 1;

}  // namespace tinyrt
