// fuse_epilogues.cpp — a GEMM/conv kernel absorbs the elementwise kernel
// that is the only reader of its output (bias add, activation, residual
// add, and chains of them): that kernel's expression, with the GEMM output
// replaced by the accumulator, becomes the epilogue.
#include <algorithm>

#include "passes/pass.h"

namespace tinyrt {

namespace {

// Appends c's inputs (except `skip`) to ins; returns c's slot -> new slot.
std::vector<int> merge_inputs(std::vector<int> &ins, const Kernel &c, int skip) {
  std::vector<int> map(c.ins.size(), -1);
  for (size_t s = 0; s < c.ins.size(); ++s) {
    if ((int)s == skip) continue;
    auto it = std::find(ins.begin(), ins.end(), c.ins[s]);
    if (it != ins.end()) {
      map[s] = (int)(it - ins.begin());
    } else {
      map[s] = (int)ins.size();
      ins.push_back(c.ins[s]);
    }
  }
  return map;
}

}  // namespace

void fuse_epilogues(PassContext &c) {
  Program &p = c.program;
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int> readers = value_readers(p);
    for (size_t gi = 0; gi < p.kernels.size() && !changed; ++gi) {
      Kernel &g = p.kernels[gi];
      if (g.kind != KernelKind::Gemm) continue;
      int v = g.out;
      if (readers[v] != 1 || p.graph.is_graph_output(v)) continue;
      // The one reader must be an elementwise loop kernel over v's shape.
      size_t ci = gi + 1;
      while (ci < p.kernels.size() && p.kernels[ci].slot_of(v) < 0) ++ci;
      if (ci == p.kernels.size()) continue;
      Kernel &k = p.kernels[ci];
      int sv = k.slot_of(v);
      if (k.kind != KernelKind::Loop || p.graph.v(k.out).shape != p.graph.v(v).shape || has_reduce(k.expr) ||
          p.graph.v(k.out).dtype != DType::F32)
        continue;
      bool identity = true;
      visit(k.expr, [&](const Expr &e) {
        if (e.op == EOp::Load && e.id == sv && !is_identity_load(e, sv, p.graph.v(v).shape)) identity = false;
      });
      if (!identity) continue;
      std::vector<int> ins = g.ins;
      std::vector<int> map = merge_inputs(ins, k, sv);
      map[sv] = -1;
      ExprP body = rewrite(k.expr, [&](const ExprP &x) -> ExprP {
        if (x->op == EOp::Load && x->id != sv) return load(map[x->id], x->type, x->a);
        return nullptr;
      });
      ExprP epi = g.gemm.epilogue, full = g.expr;
      g.gemm.epilogue = replace_loads(body, sv, [&](const Expr &) { return epi; });
      g.expr = replace_loads(body, sv, [&](const Expr &) { return full; });
      g.ins = std::move(ins);
      g.out = k.out;
      g.label += "+" + k.label;
      g.nodes.insert(g.nodes.end(), k.nodes.begin(), k.nodes.end());
      // The fused kernel runs where the reader ran: the reader's other
      // inputs (a residual) may be computed after the GEMM.
      k = std::move(g);
      p.kernels.erase(p.kernels.begin() + (long)gi);
      ++fused;
      changed = true;
    }
  }
  if (c.log) *c.log << "  fused " << fused << " epilogues\n";
}

}  // namespace tinyrt
