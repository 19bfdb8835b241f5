// fuse_elementwise.cpp — a loop kernel without reductions whose output has
// exactly one reader (another loop kernel) is inlined into that reader: the
// reader's loads of it become the producer's expression at those indices.
// Chains of elementwise and data-movement ops become one kernel and their
// intermediates never touch memory.
#include <algorithm>

#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr size_t kMaxFusedExpr = 400;  // nodes; keeps compile time and code size sane

bool try_inline(Program &p, size_t ki, const std::vector<int> &readers) {
  const Kernel &prod = p.kernels[ki];
  int v = prod.out;
  if (prod.kind != KernelKind::Loop) return false;
  if (readers[v] != 1 || p.graph.is_graph_output(v)) return false;
  size_t ci = ki + 1;
  while (ci < p.kernels.size() && p.kernels[ci].slot_of(v) < 0) ++ci;
  if (ci == p.kernels.size()) return false;
  Kernel &cons = p.kernels[ci];
  if (cons.kind != KernelKind::Loop) return false;
  int sv = cons.slot_of(v);
  size_t psize = expr_size(prod.expr);
  int nloads = count_loads(cons.expr, sv);
  if (has_reduce(prod.expr)) {
    // A reduction moves into its reader only when it is computed exactly
    // once per element there: one identity load, no reduction around it.
    const Shape &vs = p.graph.v(v).shape;
    bool once = nloads == 1 && !has_reduce(cons.expr) && p.graph.v(cons.out).shape == vs;
    visit(cons.expr, [&](const Expr &e) {
      if (e.op == EOp::Load && e.id == sv && !is_identity_load(e, sv, vs)) once = false;
    });
    if (!once) return false;
  }
  if (nloads > 1 && psize > 6) return false;                 // would recompute real work
  if (has_reduce(cons.expr) && psize > 12) return false;     // stencils re-read inputs
  // Producer slots -> consumer slots (appended, deduplicated).
  std::vector<int> ins = cons.ins;
  std::vector<int> map(prod.ins.size());
  for (size_t s = 0; s < prod.ins.size(); ++s) {
    auto it = std::find(ins.begin(), ins.end(), prod.ins[s]);
    if (it != ins.end()) {
      map[s] = (int)(it - ins.begin());
    } else {
      map[s] = (int)ins.size();
      ins.push_back(prod.ins[s]);
    }
  }
  int next_rvar = kFirstReduceVar;
  if (has_reduce(cons.expr)) next_rvar = std::max(kFirstReduceVar, max_var_id(cons.expr) + 1);
  ExprP pe = renumber_reduce_vars(remap_slots(prod.expr, map), next_rvar, nullptr);
  ExprP merged = replace_loads(cons.expr, sv, [&](const Expr &ld) { return substitute_vars(pe, ld.a); });
  if (expr_size(merged) > kMaxFusedExpr) return false;
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
  p.kernels.erase(p.kernels.begin() + (long)ki);
  return true;
}

}  // namespace

void fuse_elementwise(PassContext &c) {
  Program &p = c.program;
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int> readers = value_readers(p);
    for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
      if (try_inline(p, ki, readers)) {
        ++fused;
        changed = true;
        break;
      }
    }
  }
  if (c.log) *c.log << "  inlined " << fused << " kernels\n";
}

}  // namespace tinyrt
