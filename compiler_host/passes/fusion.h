// fusion.h — what the fusion passes share: who reads each value (kept
// current while kernels merge, so a pass runs in near-linear time), slot
// merging, and the identity-read test.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "ir/program.h"

namespace tinyrt {

class ReaderIndex {
 public:
  explicit ReaderIndex(const Program &p);
  // The one kernel that reads v, or -1 (none, several, v is also a graph
  // output, viewed or a guard's condition, or the reader runs in a branch
  // where v's producer may not: a producer fuses into its reader only when
  // the reader's guard implies the producer's).
  int only_reader(int v) const;
  // The kernels reading v (each once), and whether the application or a
  // view also reads it.
  const std::vector<int> &readers(int v) const { return readers_[v]; }
  bool external(int v) const { return external_[v] != 0; }
  // Kernel `from` (reading `from_ins`) was merged into kernel `into`, which
  // consumed `value` (from's output, or into's former input). Returns the
  // values left with exactly one reader by the merge.
  std::vector<int> merged(int from, int into, const std::vector<int> &from_ins, int value);

 private:
  const Graph &g_;
  std::vector<std::vector<int>> readers_;  // kernel indices, each once
  std::vector<int> external_;              // graph outputs, views and guard conditions
  std::vector<int> value_guard_;           // the guard of each value's producer
  std::vector<int> kernel_guard_;          // each kernel's (a merge keeps the reader's)
};

// Kernel indices still to visit, smallest first; each index at most once.
class Worklist {
 public:
  explicit Worklist(size_t n);
  bool empty() const { return s_.empty(); }
  int pop();
  void push(int k) { s_.insert(k); }

 private:
  std::set<int> s_;
};

// Appends c's inputs (except slot `skip`) to `ins`, reusing slots of values
// already there; returns c's slot -> slot in `ins` (-1 for `skip`).
std::vector<int> merge_inputs(std::vector<int> &ins, const std::vector<int> &c_ins, int skip);

// Does `e` read the value at slot(s) holding `v` only at the element being
// computed (each index Var(k), or 0 on a broadcast axis of `shape`)?
bool reads_only_identity(const ExprP &e, const std::vector<int> &ins, int v, const Shape &shape);

// Can GEMM/conv kernel g take loop kernel k (its output's only reader)
// into its epilogue: k is elementwise over g's output, reads it only at
// the element it computes, without reductions, and stores a type the
// epilogue can?
bool absorbable_reader(const Program &p, const Kernel &g, const Kernel &k);
// Takes reader ci into kernel gi's epilogue; the fused kernel replaces ci
// (later in program order, after the reader's other inputs), gi is marked
// dead and the reader index updated.
void absorb_reader(Program &p, ReaderIndex &readers, std::vector<bool> &dead, int gi, int ci);
// The epilogue fusions' loop (fuse_epilogues, fuse_residuals): each live
// scheduled kernel (GEMM, conv, depthwise, ...) in program order whose
// output is not a graph output absorbs the reader `pick` names (-1: none)
// and takes its place, later in program order, where it may absorb the
// next reader in turn; the absorbed kernels are dropped at the end.
// Returns how many were absorbed.
using PickReader = std::function<int(Program &p, ReaderIndex &readers, std::vector<bool> &dead, int gi)>;
int absorb_readers(Program &p, const PickReader &pick);

// Inlines loop kernel `ki` into loop kernel `ci`, which reads ki's output
// in one slot: ci's loads of it become ki's expression at those indices.
// Returns false, changing nothing, if the result would exceed `max_nodes`
// expression nodes. The caller updates its ReaderIndex and drops ki.
bool inline_into(Program &p, int ki, int ci, size_t max_nodes);

// Is k elementwise over `shape`: a loop kernel without reductions whose
// float output has that shape?
bool is_elementwise_over(const Program &p, const Kernel &k, const Shape &shape);

// Does e compute something costly per element (exp, log, tanh, sigmoid,
// erf, trigonometry, pow, division, square root, a reduction)?
bool has_costly_op(const ExprP &e);

// How many times the kernel's expression evaluates its loads of `slot`
// per output element (reductions around a load multiply; shared
// subexpressions, and outside reductions loads of the same element, count
// once: inline_into gives them one shared copy of the producer).
double loads_per_element(const ExprP &e, int slot);

// The producer kernel of each value, or -1.
std::vector<int> producers(const Program &p);

// Removes the kernels flagged dead, keeping the others' order.
void drop_kernels(Program &p, const std::vector<bool> &dead);

}  // namespace tinyrt
