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

// Inlines kernel ki into its only reader; returns the reader's index, or -1.
int try_inline(Program &p, int ki, ReaderIndex &readers, std::vector<int> *single) {
  const Kernel &prod = p.kernels[ki];
  int v = prod.out;
  if (prod.kind != KernelKind::Loop) return -1;
  int ci = readers.only_reader(v);
  if (ci < 0 || p.graph.is_graph_output(v)) return -1;
  Kernel &cons = p.kernels[ci];
  if (cons.kind != KernelKind::Loop) return -1;
  int sv = cons.slot_of(v);
  // A value in several slots of its reader (Gemm(y, y, y)) stays in memory.
  for (size_t s = 0; s < cons.ins.size(); ++s)
    if ((int)s != sv && cons.ins[s] == v) return -1;
  size_t psize = expr_size(prod.expr);
  int nloads = count_loads(cons.expr, sv);
  if (has_reduce(prod.expr)) {
    // A reduction moves into its reader only when it is computed exactly
    // once per element there: one identity load, no reduction around it.
    const Shape &vs = p.graph.v(v).shape;
    bool once = nloads == 1 && !has_reduce(cons.expr) && p.graph.v(cons.out).shape == vs &&
                reads_only_identity(cons.expr, cons.ins, v, vs);
    if (!once) return -1;
  }
  if (nloads > 1 && psize > 6) return -1;              // would recompute real work
  if (has_reduce(cons.expr) && psize > 12) return -1;  // stencils re-read inputs
  // Producer slots -> consumer slots (appended, deduplicated).
  std::vector<int> ins = cons.ins;
  std::vector<int> map = merge_inputs(ins, prod.ins, -1);
  int next_rvar = kFirstReduceVar;
  if (has_reduce(cons.expr)) next_rvar = std::max(kFirstReduceVar, max_var_id(cons.expr) + 1);
  ExprP pe = renumber_reduce_vars(remap_slots(prod.expr, map), next_rvar, nullptr);
  ExprP merged = replace_loads(cons.expr, sv, [&](const Expr &ld) { return substitute_vars(pe, ld.a); });
  if (expr_size(merged) > kMaxFusedExpr) return -1;
  // Drop the inlined value's slot.
  std::vector<int> compact(ins.size());
  std::vector<int> kept;
  for (size_t s = 0; s < ins.size(); ++s) {
    if ((int)s == sv) continue;
    compact[s] = (int)kept.size();
    kept.push_back(ins[s]);
  }
  cons.expr = remap_slots(merged, compact);
  cons.ins = std::move(kept);
  cons.label = prod.label + "+" + cons.label;
  cons.nodes.insert(cons.nodes.begin(), prod.nodes.begin(), prod.nodes.end());
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
    int ci = try_inline(p, ki, readers, &single);
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
