// lower_to_kernels.cpp — every remaining node becomes kernels (one per
// output expression) or a view (alias) through its op-table lowering.
#include <algorithm>

#include "ops/op_registry.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

// The run-time extents of an op's intermediate value (a temporary of its
// lowering, which has none yet): axis k takes the extent of the input axis
// that Var(k) indexes directly, with the same bound (Softmax's exponentials
// and sums run over the actual rows, not the bounds').
void temp_dims(Graph &g, int out, const std::vector<int> &ins, const ExprP &expr) {
  Value &o = g.v(out);
  if (o.is_dynamic() || g.is_graph_output(out)) return;
  bool dynamic_in = false;
  for (int v : ins) dynamic_in = dynamic_in || g.v(v).is_dynamic();
  if (!dynamic_in) return;
  std::vector<int> dims((size_t)o.rank(), -1);
  visit(expr, [&](const Expr &x) {
    if (x.op != EOp::Load) return;
    const Value &in = g.v(ins.at((size_t)x.id));
    for (size_t j = 0; j < x.a.size(); ++j) {
      const Expr &i = *x.a[j];
      if (i.op != EOp::Var || i.id >= o.rank() || in.dim((int)j) < 0) continue;
      if (in.shape[j] == o.shape[(size_t)i.id]) dims[(size_t)i.id] = in.dim((int)j);
    }
  });
  o.dims = dims;
  if (!o.is_dynamic()) o.dims.clear();
}

// A constant carrying symbolic elements (a shape computed from run-time
// extents that an op with a dims rule read: its data holds only the
// elements' bounds, infer_and_fold) is read as its elements: loads of it
// become the element expressions, selected by the flat index.
ExprP read_symbolic_constants(const Graph &g, const std::vector<int> &ins, ExprP expr) {
  for (size_t s = 0; s < ins.size() && expr; ++s) {
    const Value &v = g.v(ins[s]);
    if (!v.is_const() || !v.is_sym()) continue;
    const std::vector<int64_t> st = row_major_strides(v.shape);
    expr = replace_loads(expr, (int)s, [&](const Expr &ld) {
      ExprP flat = cidx(0);
      for (size_t j = 0; j < ld.a.size(); ++j) flat = flat + ld.a[j] * cidx(st[j]);
      ExprP r = cast(sym_index(v.sym.back()), ld.type);
      for (size_t i = v.sym.size() - 1; i-- > 0;)
        r = select(bin(EOp::Eq, flat, cidx((int64_t)i)), cast(sym_index(v.sym[i]), ld.type), r);
      return r;
    });
  }
  return expr;
}

class ProgramCtx : public LowerCtx {
 public:
  ProgramCtx(Program &p, const Node &n) : LowerCtx(p.graph), p_(p), n_(n) {}
  void kernel(int out, std::vector<int> ins, ExprP expr) override {
    expr = read_symbolic_constants(g, ins, std::move(expr));
    if (expr && std::find(n_.out.begin(), n_.out.end(), out) == n_.out.end()) temp_dims(g, out, ins, expr);
    Kernel k;
    k.out = out;
    k.ins = std::move(ins);
    k.expr = std::move(expr);
    k.nodes = {n_.name};
    k.label = n_.op;
    k.guard = n_.guard;
    p_.kernels.push_back(std::move(k));
  }
  void scheduled(KernelKind kind, int out, std::vector<int> ins, ExprP expr, const GemmSpec &spec) override {
    // Run-time extents: the GEMM family takes them on its linear mode's
    // pixels (gemm_dynamic_role), as run-time rows (gemm_runtime_rows) and
    // as run-time image sizes, as the depthwise family does
    // (gemm_runtime_spatial); elsewhere the reference expression runs as a
    // loop kernel.
    kernel(out, std::move(ins), std::move(expr));  // (a temporary's dims are set there)
    const std::vector<int> &in = p_.kernels.back().ins;
    bool dynamic = g.v(out).is_dynamic();
    for (int v : in) dynamic = dynamic || g.v(v).is_dynamic();
    bool rest_fixed = true;  // the inputs after X (bias, residuals)
    for (size_t i = 1; i < in.size(); ++i) rest_fixed = rest_fixed && !g.v(in[i]).is_dynamic();
    bool takes = rest_fixed && kind != KernelKind::Depthwise && gemm_dynamic_role(spec, g.v(out)) >= 0 &&
                 (in.empty() || g.v(in[0]).dims == g.v(out).dims || !g.v(in[0]).is_dynamic());
    // Row mode (float): run-time rows, output channels and K, B packed at
    // run time too (attention).
    if (!takes && kind == KernelKind::Gemm && !in.empty()) takes = gemm_runtime_rows(spec, g.v(out), g.v(in[0])) == 1;
    // Run-time image sizes (float and int8 convolutions, depthwise ones).
    if (!takes && kind != KernelKind::Loop && !in.empty())
      takes = rest_fixed && gemm_runtime_spatial(spec, g.v(out), g.v(in[0])) == 1;
    if (dynamic && !takes) return;
    p_.kernels.back().kind = kind;
    p_.kernels.back().gemm = spec;
  }
  void recurrent(int out, std::vector<int> ins, const RecurrentSpec &spec) override {
    kernel(out, std::move(ins), nullptr);
    p_.kernels.back().kind = KernelKind::Recurrent;
    p_.kernels.back().rnn = spec;
  }
  void alias(int out, int in) override { p_.alias[out] = in; }
  void compact(int out, int in) override {
    kernel(out, {in}, nullptr);
    p_.kernels.back().kind = KernelKind::Compact;
    p_.kernels.back().count = holder(out);
  }
  void nms(int out, std::vector<int> ins, const NmsSpec &spec) override {
    kernel(out, std::move(ins), nullptr);
    p_.kernels.back().kind = KernelKind::Nms;
    p_.kernels.back().nms = spec;
    p_.kernels.back().count = holder(out);
  }
  void topk(int out, int in, const TopKSpec &spec, const std::function<void()> &) override {
    kernel(out, {in}, nullptr);
    p_.kernels.back().kind = KernelKind::TopK;
    p_.kernels.back().topk = spec;
  }
  void fail(int out, std::vector<int> ins, const std::string &message) override {
    kernel(out, std::move(ins), nullptr);
    p_.kernels.back().kind = KernelKind::Fail;
    p_.kernels.back().message = message;
  }

 private:
  // The int64 value a data-dependent kernel writing `out` stores the
  // produced extent of out's axis in (DimSym::holder), made here.
  int holder(int out) {
    for (int s : g.v(out).dims)
      if (s >= 0 && g.syms[(size_t)s].produced) {
        DimSym &d = g.syms[(size_t)s];
        if (d.holder < 0) d.holder = temp(g.v(out).name + "_count", DType::I64, {});
        return d.holder;
      }
    fail_internal("a data-dependent kernel's output '" + g.v(out).name + "' has no produced extent");
  }

  Program &p_;
  const Node &n_;
};

// The run-time extents the compile took to be equal (Graph::extent_checks)
// are tested first: a kernel writes whether they differ, and a step
// guarded by it stops the run with TINYRT_ERR_SHAPE.
void check_extents(Program &p) {
  Graph &g = p.graph;
  for (size_t i = 0; i < g.extent_checks.size(); ++i) {
    const Graph::ExtentCheck &ec = g.extent_checks[i];
    std::string base = "extents_differ" + std::to_string(i);
    int differ = g.add_value(g.fresh_name(base), DType::Bool, {});
    Kernel k;
    k.out = differ;
    k.expr = bin(EOp::Ne, ec.a, ec.b);
    k.label = "ExtentCheck";
    k.nodes = {ec.what};
    p.kernels.push_back(k);
    Guard gd;
    gd.cond = gd.eff = differ;
    gd.what = "test of the run's extents";
    g.guards.push_back(gd);
    int stop = g.add_value(g.fresh_name(base + "_stop"), DType::Bool, {});
    g.effects.push_back(stop);
    Kernel f;
    f.out = stop;
    f.kind = KernelKind::Fail;
    f.shape_error = true;
    f.message = ec.what;
    f.label = "ExtentCheck";
    f.nodes = {ec.what};
    f.guard = (int)g.guards.size() - 1;
    p.kernels.push_back(f);
  }
}

}  // namespace

void lower_to_kernels(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  check_extents(p);
  for (const Node &n : g.nodes) {
    if (const CustomOpDecl *cd = p.custom_op(n)) {  // one call of the C function
      ProgramCtx(p, n).kernel(n.out.at(0), n.in, nullptr);
      Kernel &k = p.kernels.back();
      k.kind = KernelKind::Call;
      k.call.symbol = cd->symbol;
      k.call.op = cd->domain + "::" + cd->op;
      k.call.outs = n.out;
      continue;
    }
    const OpDef *d = find_op(n.domain, n.op);
    TINYRT_CHECK(d && d->lower, "node without lowering reached lower_to_kernels");
    ProgramCtx ctx(p, n);
    d->lower(n, ctx);
  }
  // Outputs must live in the arena: copy constant ones there.
  for (int &o : g.outputs) {
    int r = p.root(o);
    if (!g.v(r).is_const()) continue;
    const Value src = g.v(o);
    int nv = g.add_value(src.name, src.dtype, src.shape);
    Kernel k;
    k.out = nv;
    k.ins = {r};
    std::vector<ExprP> idx;
    // The constant may be a differently shaped alias: index it row-major.
    const Shape &rs = g.v(r).shape;
    if (rs == src.shape) {
      for (int a = 0; a < src.rank(); ++a) idx.push_back(var(a));
    } else {
      ExprP lin = cidx(0);
      for (int a = 0; a < src.rank(); ++a) lin = lin * cidx(src.shape[a]) + var(a);
      std::vector<int64_t> st = row_major_strides(rs);
      for (size_t a = 0; a < rs.size(); ++a) idx.push_back(bin(EOp::Rem, bin(EOp::Div, lin, cidx(st[a])), cidx(rs[a])));
    }
    k.expr = load(0, src.dtype, idx);
    k.label = "Output";
    k.nodes = {"(constant output " + src.name + ")"};
    p.kernels.push_back(std::move(k));
    o = nv;
  }
  if (c.log) *c.log << "  " << p.kernels.size() << " kernels, " << p.alias.size() << " views\n";
}

}  // namespace tinyrt
