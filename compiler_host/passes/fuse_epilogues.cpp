// fuse_epilogues.cpp — a GEMM/conv kernel absorbs the elementwise kernel
// that is the only reader of its output (bias add, activation, residual
// add, and chains of them): that kernel's expression, with the GEMM output
// replaced by the accumulator, becomes the epilogue.
#include <algorithm>

#include "passes/fusion.h"
#include "passes/pass.h"

namespace tinyrt {

void fuse_epilogues(PassContext &c) {
  Program &p = c.program;
  int fused = 0;
  ReaderIndex readers(p);
  std::vector<bool> dead(p.kernels.size(), false);
  // The fused kernel takes its reader's place, later in program order, where
  // it may absorb the next reader in turn.
  for (size_t gi = 0; gi < p.kernels.size(); ++gi) {
    if (dead[gi] || p.kernels[gi].kind != KernelKind::Gemm) continue;
    Kernel &g = p.kernels[gi];
    int v = g.out;
    // The one reader must be an elementwise loop kernel over v's shape.
    int ci = readers.only_reader(v);
    if (ci < 0 || p.graph.is_graph_output(v)) continue;
    Kernel &k = p.kernels[ci];
    int sv = k.slot_of(v);
    if (k.kind != KernelKind::Loop || p.graph.v(k.out).shape != p.graph.v(v).shape || has_reduce(k.expr) ||
        p.graph.v(k.out).dtype != DType::F32 || !reads_only_identity(k.expr, k.ins, v, p.graph.v(v).shape))
      continue;
    std::vector<int> ins = g.ins;
    std::vector<int> map = merge_inputs(ins, k.ins, sv);
    ExprP body = rewrite(k.expr, [&](const ExprP &x) -> ExprP {
      if (x->op == EOp::Load && x->id != sv) return load(map[x->id], x->type, x->a);
      return nullptr;
    });
    ExprP epi = g.gemm.epilogue, full = g.expr;
    g.gemm.epilogue = replace_loads(body, sv, [&](const Expr &) { return epi; });
    g.expr = replace_loads(body, sv, [&](const Expr &) { return full; });
    std::vector<int> gemm_ins = g.ins;
    g.ins = std::move(ins);
    g.out = k.out;
    g.label += "+" + k.label;
    g.nodes.insert(g.nodes.end(), k.nodes.begin(), k.nodes.end());
    // The fused kernel runs where the reader ran: the reader's other
    // inputs (a residual) may be computed after the GEMM.
    k = std::move(g);
    dead[gi] = true;
    readers.merged((int)gi, ci, gemm_ins, v);
    ++fused;
  }
  drop_kernels(p, dead);
  if (c.log) *c.log << "  fused " << fused << " epilogues\n";
}

}  // namespace tinyrt
