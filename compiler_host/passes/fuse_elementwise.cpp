// fuse_elementwise.cpp — a loop kernel without reductions whose output has
// exactly one reader (another loop kernel) is inlined into that reader: the
// reader's loads of it become the producer's expression at those indices.
// Chains of elementwise and data-movement ops become one kernel and their
// intermediates never touch memory.
#include <algorithm>

#include "passes/fusion.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr size_t kMaxFusedExpr = 400;  // nodes; keeps compile time and code size sane
constexpr size_t kMaxInputsIntoDynamic = 4;

// Inlines kernel ki into its only reader; returns the reader's index, or -1.
int try_inline(Program &p, int ki, ReaderIndex &readers, std::vector<int> *single, std::ostream *log) {
  const Kernel &prod = p.kernels[ki];
  int v = prod.out;
  if (prod.kind != KernelKind::Loop) return -1;
  int ci = readers.only_reader(v);
  if (ci < 0 || p.graph.is_graph_output(v)) return -1;
  const Kernel &cons = p.kernels[ci];
  if (cons.kind != KernelKind::Loop) return -1;
  int sv = cons.slot_of(v);
  // A value in several slots of its reader (Gemm(y, y, y)) stays in memory.
  for (size_t s = 0; s < cons.ins.size(); ++s)
    if ((int)s != sv && cons.ins[s] == v) return -1;
  // A reader with run-time extents would select per element among a
  // producer's many inputs (a Concat of a loop's iterations) where the
  // producer's own kernel copies each input's rows.
  if (p.graph.v(cons.out).is_dynamic() && prod.ins.size() > kMaxInputsIntoDynamic) return -1;
  size_t psize = expr_size(prod.expr);
  int nloads = count_loads(cons.expr, sv);
  const Shape &vs = p.graph.v(v).shape;
  if (has_reduce(prod.expr)) {
    // A reduction moves into its reader only when it is computed exactly
    // once per element there: one identity load, no reduction around it.
    bool once = nloads == 1 && !has_reduce(cons.expr) && p.graph.v(cons.out).shape == vs &&
                reads_only_identity(cons.expr, cons.ins, v, vs);
    if (!once) return -1;
  }
  // The cost model: inlining recomputes each produced element as often as
  // the reader evaluates it. That is free for an element read once, and
  // cheaper than a store and a load only for a few plain operations.
  double reads = loads_per_element(cons.expr, sv) * (double)shape_numel(p.graph.v(cons.out).shape) /
                 (double)std::max<int64_t>(1, shape_numel(vs));
  bool cheap = psize <= 6 && !has_costly_op(prod.expr);
  if (reads > 1.01 && !cheap) {
    if (log)
      *log << "    keep " << prod.label << " (" << p.graph.v(v).name << ") in memory: " << reads
           << " reads per element in " << cons.label << "\n";
    return -1;
  }
  if (!inline_into(p, ki, ci, kMaxFusedExpr)) return -1;
  *single = readers.merged(ki, ci, prod.ins, v);
  return ci;
}

}  // namespace

void fuse_elementwise(PassContext &c) {
  Program &p = c.program;
  int fused = 0;
  // One sweep in program order; a kernel is visited again only when a merge
  // leaves one of its outputs with a single reader.
  ReaderIndex readers(p);
  std::vector<int> producer = producers(p);
  std::vector<bool> dead(p.kernels.size(), false);
  Worklist work(p.kernels.size());
  while (!work.empty()) {
    int ki = work.pop();
    if (dead[ki]) continue;
    std::vector<int> single;
    int ci = try_inline(p, ki, readers, &single, c.log);
    if (ci < 0) continue;
    dead[ki] = true;
    ++fused;
    work.push(ci);
    for (int u : single)
      if (producer[u] >= 0 && !dead[producer[u]]) work.push(producer[u]);
  }
  drop_kernels(p, dead);
  if (c.log) *c.log << "  inlined " << fused << " kernels\n";
}

}  // namespace tinyrt
