// limits.h — caps on what a model may ask of the compiler. Every model is
// untrusted: sizes come from the file, so each figure that drives memory,
// time or generated addresses is checked against a cap here, with a
// message that names the cap's command-line flag. docs/SECURITY.md lists
// them.
#pragma once

#include <cstdint>

namespace tinyrt {

struct Limits {
  // Elements of one tensor. Generated code indexes elements with 32-bit
  // integers, so this cap cannot be raised above 2^31 - 1.
  int64_t max_tensor_elements = (int64_t(1) << 31) - 1;
  // Bytes of the planned arena (--max-arena-bytes).
  int64_t max_arena_bytes = int64_t(1) << 31;
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
  // Bytes of weights the kernels read, packed (--max-weights-bytes): the
  // constants handed to LLVM, which takes about 5 bytes of memory per byte
  // while it writes the object. 0: the import sets the larger of 256 MiB
  // and 4 times the model file's size.
  int64_t max_weights_bytes = 0;
  // The weights cap in force: a graph built without the import (tests,
  // tools) gets the 256 MiB floor.
  int64_t weights_cap() const { return max_weights_bytes > 0 ? max_weights_bytes : kMinWeightsCap; }
  static constexpr int64_t kMinWeightsCap = int64_t(256) << 20;
  // Nesting of subgraphs (If/Loop/Scan bodies) and function expansions.
  int max_nesting = 64;
};

constexpr int64_t kMaxTensorElementsHard = (int64_t(1) << 31) - 1;

}  // namespace tinyrt
