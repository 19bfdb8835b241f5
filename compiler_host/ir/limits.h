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
  int64_t max_folded_bytes = int64_t(1) << 30;
  // Nesting of subgraphs (If/Loop/Scan bodies) and function expansions.
  int max_nesting = 64;
};

constexpr int64_t kMaxTensorElementsHard = (int64_t(1) << 31) - 1;

}  // namespace tinyrt
