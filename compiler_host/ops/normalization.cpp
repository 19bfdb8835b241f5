// normalization.cpp — normalizations (LayerNormalization,
// InstanceNormalization, LRN, MeanVarianceNormalization) and the losses
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), as reductions into
// temporaries followed by an elementwise kernel.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

const std::vector<DType> kFloat = {DType::F32, DType::F64, DType::F16, DType::BF16};

// Mean and 1/sqrt(var + eps) of x over the axes in `red` (kept as size 1),
// written to `mean_out` / `inv_out` (new temporaries when -1). A reduced
// run-time axis (an image of any size) is summed over the run's extent
// and counted as such (a temporary's kept extents follow from its loads:
// lower_to_kernels).
void moments(LowerCtx &c, int x_id, const std::vector<bool> &red, double eps, int *mean_out, int *inv_out) {
  const Value &x = c.g.v(x_id);
  DType t = x.dtype;
  Shape ks = x.shape;
  std::vector<RVar> rv;
  std::vector<ExprP> in_idx, kept_idx;
  ExprP count = cidx(1);  // a constant unless a reduced axis is run-time
  for (int i = 0; i < x.rank(); ++i) {
    if (red[i]) {
      ks[i] = 1;
      rv.push_back({kFirstReduceVar + i, x.shape[i], x.dim(i) >= 0 ? c.g.extent(x_id, i) : nullptr});
      in_idx.push_back(var(kFirstReduceVar + i));
      kept_idx.push_back(cidx(0));
      count = count * c.g.extent(x_id, i);
    } else {
      in_idx.push_back(var(i));
      kept_idx.push_back(var(i));
    }
  }
  ExprP n = count->is_const() ? cst(t, (double)count->ival) : cast(count, t);
  if (*mean_out < 0) *mean_out = c.temp(x.name + "_mean", t, ks);
  c.kernel(*mean_out, {x_id}, reduce(ReduceKind::Sum, rv, load(0, t, in_idx)) / n);
  if (*inv_out < 0) *inv_out = c.temp(x.name + "_invstd", t, ks);
  ExprP d = load(0, t, in_idx) - load(1, t, kept_idx);
  ExprP var_ = reduce(ReduceKind::Sum, rv, d * d) / n;
  c.kernel(*inv_out, {x_id, *mean_out}, cst(t, 1) / un(EOp::Sqrt, var_ + cst(t, eps)));
}

std::vector<ExprP> kept_index(const std::vector<bool> &red, int rank) {
  std::vector<ExprP> r;
  for (int i = 0; i < rank; ++i) r.push_back(red[i] ? cidx(0) : var(i));
  return r;
}

void def_layer_norm() {
  OpDef d;
  d.name = "LayerNormalization";
  d.min_opset = 17;
  d.attrs = {"axis", "epsilon", "stash_type"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    Shape ks = x.shape;
    for (int i = axis; i < x.rank(); ++i) ks[i] = 1;
    Shape normalized(x.shape.begin() + axis, x.shape.end());
    require_broadcastable(n, g, 1, normalized, "Scale");
    require_broadcastable(n, g, 2, normalized, "B");
    set_out(n, g, 0, x.dtype, x.shape);
    set_out(n, g, 1, x.dtype, ks);
    set_out(n, g, 2, x.dtype, ks);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int r = x.rank(), axis = norm_axis(n.geti("axis", -1), r, n);
    std::vector<bool> red(r, false);
    for (int i = axis; i < r; ++i) red[i] = true;
    int mean = n.out.size() > 1 ? n.out[1] : -1, inv = n.out.size() > 2 ? n.out[2] : -1;
    moments(c, n.in[0], red, n.getf("epsilon", 1e-5f), &mean, &inv);
    // Scale and B broadcast over the normalized axes.
    auto param = [&](int k, int slot) {
      const Value &p = in_val(c.g, n, k);
      return load(slot, p.dtype, broadcast_index(p.shape, r));
    };
    std::vector<int> ins = {n.in[0], mean, inv, n.in[1]};
    ExprP y = (load(0, t, out_vars(r)) - load(1, t, kept_index(red, r))) * load(2, t, kept_index(red, r)) * param(1, 3);
    if (n.has_in(2)) {
      ins.push_back(n.in[2]);
      y = y + param(2, 4);
    }
    c.kernel(n.out[0], ins, y);
  };
  // Run-time extents (a sequence of T frames): Y takes x's; Mean and
  // InvStdDev keep those of the axes before `axis`.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    for (size_t k = 1; k < n.in.size(); ++k)
      if (n.has_in(k) && g.v(n.in[k]).is_dynamic())
        fail_unsupported(n.where() + ": " + (k == 1 ? "Scale" : "B") + " has run-time dimensions");
    for (size_t k = 0; k < n.out.size(); ++k) {
      if (n.out[k] < 0) continue;
      std::vector<int> dims = x.dims;
      if (k > 0)
        for (int a = axis; a < x.rank(); ++a) dims[(size_t)a] = -1;
      g.v(n.out[k]).dims = dims;
      if (!g.v(n.out[k]).is_dynamic()) g.v(n.out[k]).dims.clear();
    }
  };
  register_op(std::move(d));
}

void def_instance_norm() {
  OpDef d;
  d.name = "InstanceNormalization";
  d.min_opset = 6;
  d.attrs = {"epsilon"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 3) fail_invalid(n.where() + ": input rank must be >= 3");
    for (size_t k : {1, 2}) {  // read per channel
      const Value &p = in_val(g, n, k);
      if (p.shape != Shape{x.shape[1]} || p.dtype != x.dtype)
        fail_invalid(n.where() + ": " + (k == 1 ? "scale" : "B") + " is " + dtype_name(p.dtype) + " " +
                     shape_str(p.shape) + ", expected " + dtype_name(x.dtype) + " [" + std::to_string(x.shape[1]) +
                     "]");
    }
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int r = x.rank();
    std::vector<bool> red(r, true);
    red[0] = red[1] = false;
    int mean = -1, inv = -1;
    moments(c, n.in[0], red, n.getf("epsilon", 1e-5f), &mean, &inv);
    ExprP y = (load(0, t, out_vars(r)) - load(1, t, kept_index(red, r))) * load(2, t, kept_index(red, r)) *
                  load(3, t, {var(1)}) +
              load(4, t, {var(1)});
    c.kernel(n.out[0], {n.in[0], mean, inv, n.in[1], n.in[2]}, y);
  };
  // Run-time batch and spatial axes (statistics per image and channel over
  // the run's pixels); run-time channels are refused.
  d.dims = [](Node &n, Graph &g) {
    if (in_val(g, n, 0).dim(1) >= 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 1) + ": run-time channels");
    dims_like_input(n, g);
  };
  register_op(std::move(d));
}

void def_lrn() {
  OpDef d;
  d.name = "LRN";
  d.attrs = {"alpha", "beta", "bias", "size"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    if (n.geti("size", 0) < 1) fail_invalid(n.where() + ": size must be >= 1");
    if (in_val(g, n, 0).rank() < 2) fail_invalid(n.where() + ": input rank must be >= 2 (axis 1 holds the channels)");
    set_out(n, g, 0, in_val(g, n, 0).dtype, in_val(g, n, 0).shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int64_t size = n.geti("size", 1), lo = (size - 1) / 2;
    std::vector<ExprP> xi = out_vars(x.rank());
    ExprP ch = var(1) + var(kFirstReduceVar) - cidx(lo);
    xi[1] = ch;
    ExprP v = load(0, t, xi);
    ExprP sq = reduce(ReduceKind::Sum, {{kFirstReduceVar, size}}, select(in_range(ch, x.shape[1]), v * v, cst(t, 0)));
    ExprP base = cst(t, n.getf("bias", 1.0f)) + cst(t, n.getf("alpha", 1e-4f) / (double)size) * sq;
    c.kernel(n.out[0], {n.in[0]}, load(0, t, out_vars(x.rank())) / bin(EOp::Pow, base, cst(t, n.getf("beta", 0.75f))));
  };
  register_op(std::move(d));
}

// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), ONNX's function body.
void def_mvn() {
  OpDef d;
  d.name = "MeanVarianceNormalization";
  d.min_opset = 9;
  d.attrs = {"axes"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, in_val(g, n, 0).shape); };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int r = x.rank();
    std::vector<bool> red(r, false);
    for (int64_t a : n.getints("axes", {0, 2, 3})) red[norm_axis(a, r, n)] = true;
    Shape ks = x.shape;
    std::vector<RVar> rv;
    std::vector<ExprP> in_idx;
    int64_t count = 1;
    for (int i = 0; i < r; ++i) {
      if (red[i]) {
        ks[i] = 1;
        rv.push_back({kFirstReduceVar + i, x.shape[i]});
        in_idx.push_back(var(kFirstReduceVar + i));
        count *= x.shape[i];
      } else {
        in_idx.push_back(var(i));
      }
    }
    int mean = c.temp(x.name + "_mean", t, ks), msq = c.temp(x.name + "_meansq", t, ks);
    ExprP v = load(0, t, in_idx);
    c.kernel(mean, {n.in[0]}, reduce(ReduceKind::Sum, rv, v) / cst(t, (double)count));
    c.kernel(msq, {n.in[0]}, reduce(ReduceKind::Sum, rv, v * v) / cst(t, (double)count));
    ExprP m = load(1, t, kept_index(red, r));
    ExprP sd = un(EOp::Sqrt, load(2, t, kept_index(red, r)) - m * m);
    c.kernel(n.out[0], {n.in[0], mean, msq}, (load(0, t, out_vars(r)) - m) / (sd + cst(t, 1e-9)));
  };
  register_op(std::move(d));
}

// x / ||x||_p along one axis (p = 1 or 2).
void def_lp_normalization() {
  OpDef d;
  d.name = "LpNormalization";
  d.attrs = {"axis", "p"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    norm_axis(n.geti("axis", -1), x.rank(), n);
    int64_t p = n.geti("p", 2);
    if (p != 1 && p != 2) fail_invalid(n.where() + ": p must be 1 or 2");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    std::vector<ExprP> xi = out_vars(x.rank());
    xi[axis] = var(kFirstReduceVar);
    ExprP v = load(0, t, xi);
    bool l1 = n.geti("p", 2) == 1;
    ExprP norm = reduce(ReduceKind::Sum, {{kFirstReduceVar, x.shape[axis]}}, l1 ? un(EOp::Abs, v) : v * v);
    if (!l1) norm = un(EOp::Sqrt, norm);
    c.kernel(n.out[0], {n.in[0]}, load(0, t, out_vars(x.rank())) / norm);
  };
  register_op(std::move(d));
}

// ------------------------------------------------------------- losses --

// NLL over `logp` (slot 0, [N, C, d...]) with targets (slot 1) and optional
// weights (slot 2): loss = -logp[n, t, d] * w[t], 0 where t == ignore_index.
void lower_nll(LowerCtx &c, const Node &n, int logp_id, int target_id, int weight_id, int out) {
  const Value &x = c.g.v(logp_id), &tg = c.g.v(target_id);
  DType t = x.dtype;
  int64_t C = x.shape[1];
  std::string red = n.gets("reduction", "mean");
  bool has_ignore = n.has("ignore_index");
  int64_t ignore = n.geti("ignore_index", 0);
  std::vector<int> ins = {logp_id, target_id};
  if (weight_id >= 0) ins.push_back(weight_id);
  // Elements as functions of target indices `ti`.
  auto parts = [&](const std::vector<ExprP> &ti, ExprP *loss, ExprP *weight) {
    ExprP cls = cast(load(1, tg.dtype, ti), kIndexType);
    ExprP safe = emax(cidx(0), emin(cidx(C - 1), cls));
    std::vector<ExprP> xi = {ti[0], safe};
    xi.insert(xi.end(), ti.begin() + 1, ti.end());
    ExprP w = weight_id >= 0 ? load(2, t, {safe}) : cst(t, 1);
    ExprP l = un(EOp::Neg, load(0, t, xi)) * w;
    if (has_ignore) {
      ExprP ig = bin(EOp::Eq, cls, cidx(ignore));
      l = select(ig, cst(t, 0), l);
      w = select(ig, cst(t, 0), w);
    }
    *loss = l;
    *weight = w;
  };
  if (red == "none") {
    ExprP l, w;
    parts(out_vars(tg.rank()), &l, &w);
    c.kernel(out, ins, l);
    return;
  }
  std::vector<RVar> rv;
  std::vector<ExprP> ti;
  for (int i = 0; i < tg.rank(); ++i) {
    rv.push_back({kFirstReduceVar + i, tg.shape[i]});
    ti.push_back(var(kFirstReduceVar + i));
  }
  ExprP l, w;
  parts(ti, &l, &w);
  ExprP total = reduce(ReduceKind::Sum, rv, l);
  if (red == "sum") {
    c.kernel(out, ins, total);
  } else if (red == "mean") {
    c.kernel(out, ins, total / reduce(ReduceKind::Sum, rv, w));
  } else {
    fail_invalid(n.where() + ": unknown reduction '" + red + "'");
  }
}

Shape loss_shape(const Node &n, const Graph &g) {
  if (n.gets("reduction", "mean") == "none") return in_val(g, n, 1).shape;
  return {};
}

void check_loss_inputs(const Node &n, const Graph &g) {
  require_types(n, g, 1, {DType::I32, DType::I64});
  const Value &x = in_val(g, n, 0), &tg = in_val(g, n, 1);
  // The kernels read the input at every target index and the weight at
  // every class: shapes must agree exactly.
  bool ok = x.rank() >= 2 && tg.rank() == x.rank() - 1;
  for (int i = 0; ok && i < tg.rank(); ++i) ok = tg.shape[i] == x.shape[i == 0 ? 0 : i + 1];
  if (!ok)
    fail_invalid(n.where() + ": targets must be [N, d...] for input [N, C, d...]; got targets " + shape_str(tg.shape) +
                 " for input " + shape_str(x.shape));
  const int64_t ignore = n.geti("ignore_index", 0);
  require_const_values_in(n, g, 1, 0, x.shape[1], "target class", n.has("ignore_index") ? &ignore : nullptr);
  if (n.has_in(2)) {
    require_types(n, g, 2, {x.dtype});
    const Value &w = in_val(g, n, 2);
    if (w.shape != Shape{x.shape[1]})
      fail_invalid(n.where() + ": weight has shape " + shape_str(w.shape) + ", expected [" +
                   std::to_string(x.shape[1]) + "] (one per class)");
  }
}

void def_nll() {
  OpDef d;
  d.name = "NegativeLogLikelihoodLoss";
  d.min_opset = 12;
  d.types = kFloat;
  d.attrs = {"ignore_index", "reduction"};
  d.infer = [](Node &n, Graph &g) {
    check_loss_inputs(n, g);
    set_out(n, g, 0, in_val(g, n, 0).dtype, loss_shape(n, g));
  };
  d.lower = [](const Node &n, LowerCtx &c) { lower_nll(c, n, n.in[0], n.in[1], n.has_in(2) ? n.in[2] : -1, n.out[0]); };
  register_op(std::move(d));
}

void def_softmax_cross_entropy() {
  OpDef d;
  d.name = "SoftmaxCrossEntropyLoss";
  d.min_opset = 12;
  d.types = kFloat;
  d.attrs = {"ignore_index", "reduction"};
  d.infer = [](Node &n, Graph &g) {
    check_loss_inputs(n, g);
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, x.dtype, loss_shape(n, g));
    set_out(n, g, 1, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int logp = n.out.size() > 1 && n.out[1] >= 0 ? n.out[1] : c.temp(x.name + "_logprob", x.dtype, x.shape);
    std::vector<bool> red(x.rank(), false);
    red[1] = true;
    lower_log_softmax(c, n.in[0], logp, red);
    lower_nll(c, n, logp, n.in[1], n.has_in(2) ? n.in[2] : -1, n.out[0]);
  };
  register_op(std::move(d));
}

}  // namespace

void register_normalization_ops() {
  def_layer_norm();
  def_instance_norm();
  def_lrn();
  def_mvn();
  def_lp_normalization();
  def_nll();
  def_softmax_cross_entropy();
}

}  // namespace tinyrt
