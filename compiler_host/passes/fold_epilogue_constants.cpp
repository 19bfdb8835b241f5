// fold_epilogue_constants.cpp — what a scheduled kernel's epilogue (the
// code run on each accumulator before its store) computes from constants
// alone is computed once, on the host.
//
// * Requantization. QuantizeLinear of an affine function of the sum,
//   round((float(acc) * a[c] + b[c]) / s), as fuse_qdq and fuse_epilogues
//   leave a QDQ convolution, becomes round(float(acc) * (a[c] / s) +
//   b[c] / s): a multiply-add per output instead of a division, as ONNX
//   Runtime's and TFLite's requantization do; the output zero point z
//   joins the addend, round(v) + z -> round(v + z). Not exact: the quotient is
//   rounded at another place, which can move a value lying on a rounding
//   boundary by one quantization step (QDQ graphs' fused kernels already
//   differ from op-by-op evaluation by that much; docs/ARCHITECTURE.md).
// * Channel tables (exact). A subexpression that reads only constants and
//   the output channel index, such as QLinearConv's multiplier x_scale *
//   w_scale[c] / y_scale or the quotients above, is evaluated with the code
//   generator's float32 semantics (ir/interp) into a constant [C] read per
//   channel, or into a literal when it does not depend on the channel.
#include <cmath>
#include <map>

#include "ir/interp.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr int64_t kMaxTable = int64_t(1) << 20;  // channels; larger stays as it is

struct EpilogueFolder {
  Graph &g;
  Kernel &k;
  int cvar;  // the output channel's index variable
  int64_t channels;
  int tables = 0, requants = 0;
  std::map<const Expr *, bool> only_memo;

  // Reads nothing but constants, literals and the channel index.
  bool channel_only(const ExprP &e) {
    auto it = only_memo.find(e.get());
    if (it != only_memo.end()) return it->second;
    bool ok = true;
    switch (e->op) {
      case EOp::Acc:
      case EOp::Reduce: ok = false; break;
      case EOp::Var: ok = e->id == cvar; break;
      case EOp::Load: ok = g.v(k.ins[e->id]).is_const(); break;
      default: break;
    }
    for (const ExprP &a : e->a) ok = ok && channel_only(a);
    return only_memo[e.get()] = ok;
  }

  // x = p * a + b with p reading the sum and a, b channel-only (either may
  // be null: 1 and 0).
  bool affine(const ExprP &x, ExprP *p, ExprP *a, ExprP *b) {
    if (x->op == EOp::Add) {
      for (int i = 0; i < 2; ++i)
        if (channel_only(x->a[1 - i]) && affine(x->a[i], p, a, b) && !*b) {
          *b = x->a[1 - i];
          return true;
        }
      return false;
    }
    if (x->op == EOp::Mul) {
      for (int i = 0; i < 2; ++i)
        if (channel_only(x->a[1 - i]) && !channel_only(x->a[i])) {
          *p = x->a[i], *a = x->a[1 - i], *b = nullptr;
          return true;
        }
      return false;
    }
    if (channel_only(x)) return false;
    *p = x, *a = *b = nullptr;
    return true;
  }

  ExprP requantize(const ExprP &e) {
    return rewrite(e, [&](const ExprP &n) -> ExprP {
      // round(v) + 0: the sign of a zero does not survive the cast to an
      // integer that follows. round(v) + z, z an integer (a zero point):
      // round(v + z), so that z joins the per-channel addend (and AArch64
      // rounds while converting); like the division above, it can move a
      // value on a rounding boundary by one step.
      if (n->op == EOp::Add && n->a[0]->op == EOp::Round && n->a[1]->is_const() && dtype_is_float(n->type)) {
        double z = n->a[1]->fval;
        if (z == 0) return n->a[0];
        if (z == std::nearbyint(z) && std::fabs(z) <= 65536) return un(EOp::Round, n->a[0]->a[0] + n->a[1]);
      }
      if (n->op != EOp::Round || n->a[0]->op != EOp::Div || !dtype_is_float(n->type)) return nullptr;
      const ExprP &q = n->a[0];
      ExprP p, a, b;
      if (!channel_only(q->a[1]) || !affine(q->a[0], &p, &a, &b)) return nullptr;
      const ExprP &s = q->a[1];
      ExprP v = p * (a ? a / s : cst(s->type, 1) / s);
      if (b) v = v + b / s;
      ++requants;
      return un(EOp::Round, v);
    });
  }

  // The value of channel-only `e` for every channel, as a literal or a
  // constant [C] loaded at the channel index.
  ExprP table(const ExprP &e) {
    std::vector<ConstP> inputs(k.ins.size());
    for (size_t s = 0; s < k.ins.size(); ++s)
      if (g.v(k.ins[s]).is_const()) inputs[s] = g.v(k.ins[s]).data;
    bool per_channel = false;
    visit(e, [&](const Expr &n) { per_channel |= n.op == EOp::Var; });
    std::vector<ExprP> vars((size_t)cvar + 1, cidx(0));
    vars[(size_t)cvar] = var(0);
    ConstP t = interpret(substitute_vars(e, vars), e->type, {per_channel ? channels : 1}, inputs);
    if (!per_channel && dtype_is_float(e->type)) {
      double v = e->type == DType::F64 ? t->as<double>()[0] : t->as<float>()[0];
      return cst(e->type, v);
    }
    int id = g.add_const(g.fresh_name(g.v(k.out).name + "_epilogue"), t);
    k.ins.push_back(id);
    ++tables;
    return load((int)k.ins.size() - 1, e->type, {per_channel ? var(cvar) : cidx(0)});
  }

  // Replaces each maximal channel-only subexpression that computes
  // something (not a bare load or literal).
  ExprP fold(const ExprP &e) {
    return rewrite_top_down(e, [&](const ExprP &x) -> ExprP {
      bool computes = x->op != EOp::Load && x->op != EOp::Const && x->op != EOp::Var;
      return computes && channels <= kMaxTable && channel_only(x) ? table(x) : nullptr;
    });
  }
};

}  // namespace

void fold_epilogue_constants(PassContext &c) {
  Program &p = c.program;
  int tables = 0, requants = 0;
  for (Kernel &k : p.kernels) {
    if (!is_scheduled(k.kind) || !k.gemm.epilogue) continue;
    int cvar = k.gemm.out_axis[1];
    if (cvar < 0) continue;
    EpilogueFolder f{p.graph, k, cvar, p.graph.v(k.out).shape[(size_t)cvar], 0, 0, {}};
    // Requantization rewrites only epilogues that quantize.
    ExprP e = f.fold(k.gemm.epilogue);
    if (!dtype_is_float(p.graph.v(k.out).dtype)) e = f.fold(f.requantize(e));
    k.gemm.epilogue = e;
    tables += f.tables;
    requants += f.requants;
  }
  if (c.log && (tables || requants))
    *c.log << "fold_epilogue_constants: " << requants << " requantizations as multiply-adds, " << tables
           << " per-channel constant tables\n";
}

}  // namespace tinyrt
