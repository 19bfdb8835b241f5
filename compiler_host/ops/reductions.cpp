// reductions.cpp — reductions over axes: Reduce*, the softmax family,
// ArgMax/ArgMin, CumSum and TopK. Multi-pass ops (softmax, arg-reductions,
// top-k) lower to several kernels through temporaries.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

const std::vector<DType> kFloat = {DType::F32, DType::F64};
const std::vector<DType> kNumeric = {DType::F32, DType::F64, DType::I8,  DType::U8,  DType::I16,
                                     DType::U16, DType::I32, DType::U32, DType::I64, DType::U64};

// How a reduction over some axes indexes its input and its output.
struct AxisPlan {
  std::vector<bool> reduced;
  bool keep = true;
  Shape out_shape;              // reduced axes dropped or kept as 1
  std::vector<RVar> rvars;      // one per reduced axis
  std::vector<ExprP> in_index;  // input index in terms of output vars and rvars
  std::vector<ExprP> bcast;     // index of the reduced result (kept dims) from the full input's vars
  int64_t count = 1;
};

AxisPlan plan_axes(const Shape &x, std::vector<bool> reduced, bool keep) {
  AxisPlan p;
  p.reduced = std::move(reduced);
  p.keep = keep;
  int o = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (p.reduced[i]) {
      int id = kFirstReduceVar + (int)i;
      p.rvars.push_back({id, x[i]});
      p.in_index.push_back(var(id));
      p.count *= x[i];
      p.bcast.push_back(cidx(0));
      if (keep) {
        p.out_shape.push_back(1);
        ++o;
      }
    } else {
      p.out_shape.push_back(x[i]);
      p.in_index.push_back(var(o++));
      p.bcast.push_back(var((int)i));
    }
  }
  return p;
}

// The run-time extents of the reduced axes of value x (RVar::n).
void runtime_rvars(AxisPlan &p, const Graph &g, int x) {
  size_t j = 0;
  for (size_t i = 0; i < p.reduced.size(); ++i) {
    if (!p.reduced[i]) continue;
    if (g.v(x).dim((int)i) >= 0) p.rvars[j].n = g.extent(x, (int)i);
    ++j;
  }
}

// Dims of a reduction's output: the kept axes' (a reduced axis must be
// fixed unless `runtime_reduced`).
void dims_reduced(Node &n, Graph &g, const std::vector<bool> &red, bool keep, bool runtime_reduced) {
  const Value &x = in_val(g, n, 0);
  std::vector<int> dims;
  for (int a = 0; a < x.rank(); ++a) {
    if (!red[(size_t)a]) {
      dims.push_back(x.dim(a));
      continue;
    }
    if (x.dim(a) >= 0 && !runtime_reduced)
      fail_unsupported(n.where() + ": it reduces over " + describe_dim(g, n.in[0], a) +
                       ", a run-time dimension: not supported yet");
    if (keep) dims.push_back(-1);
  }
  for (int o : n.out)
    if (o >= 0 && g.v(o).rank() == (int)dims.size()) g.v(o).dims = dims;
}

std::vector<bool> axes_from(const Node &n, const Graph &g, int rank, bool axes_input) {
  std::vector<int64_t> axes;
  bool have = false;
  if (axes_input) {
    if (n.has_in(1)) {
      axes = const_ints(g, n, 1);
      have = true;
    }
  } else if (n.has("axes")) {
    axes = n.getints("axes");
    have = true;
  }
  if (!have || axes.empty()) return std::vector<bool>(rank, !n.geti("noop_with_empty_axes", 0));
  std::vector<bool> r(rank, false);
  for (int64_t a : axes) {
    int k = norm_axis(a, rank, n);
    if (r[k]) fail_invalid(n.where() + ": axis " + std::to_string(a) + " is named twice in axes");
    r[k] = true;
  }
  return r;
}

// out = finish(reduce(kind, body(x)), count) over the chosen axes; over a
// run-time axis the reduction runs over its actual elements, and `count`
// (the elements reduced, as a value of the output's type) is computed.
void def_reduce(const std::string &name, ReduceKind kind, int axes_input_opset, std::vector<DType> types,
                std::function<ExprP(ExprP)> body, std::function<ExprP(ExprP, ExprP)> finish) {
  OpDef d;
  d.name = name;
  d.attrs = {"axes", "keepdims", "noop_with_empty_axes"};
  d.const_inputs = {1};
  d.types = types;
  d.infer = [axes_input_opset, types](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    AxisPlan p = plan_axes(x.shape, axes_from(n, g, x.rank(), n.opset >= axes_input_opset), n.geti("keepdims", 1));
    set_out(n, g, 0, x.dtype, p.out_shape);
  };
  d.lower = [=](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    std::vector<bool> red = axes_from(n, c.g, x.rank(), n.opset >= axes_input_opset);
    AxisPlan p = plan_axes(x.shape, red, n.geti("keepdims", 1));
    runtime_rvars(p, c.g, n.in[0]);
    ExprP r = reduce(kind, p.rvars, body(load(0, x.dtype, p.in_index)));
    ExprP count = cst(r->type, (double)p.count);
    if (x.is_dynamic()) {
      ExprP k = cidx(1);
      for (int a = 0; a < x.rank(); ++a)
        if (red[(size_t)a]) k = k * c.g.extent(n.in[0], a);
      if (!k->is_const()) count = cast(k, r->type);
    }
    c.kernel(n.out[0], {n.in[0]}, finish(r, count));
  };
  d.dims = [axes_input_opset](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (n.has_in(1) && g.v(n.in[1]).is_sym())
      fail_unsupported(n.where() + ": axes that depend on a run-time dimension");
    dims_reduced(n, g, axes_from(n, g, x.rank(), n.opset >= axes_input_opset), n.geti("keepdims", 1), true);
  };
  register_op(std::move(d));
}

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))).
void def_reduce_logsumexp() {
  OpDef d;
  d.name = "ReduceLogSumExp";
  d.attrs = {"axes", "keepdims", "noop_with_empty_axes"};
  d.const_inputs = {1};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, x.dtype,
            plan_axes(x.shape, axes_from(n, g, x.rank(), n.opset >= 18), n.geti("keepdims", 1)).out_shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    std::vector<bool> red = axes_from(n, c.g, x.rank(), n.opset >= 18);
    AxisPlan keep = plan_axes(x.shape, red, true), out = plan_axes(x.shape, red, n.geti("keepdims", 1));
    int mx = c.temp(x.name + "_max", t, keep.out_shape);
    c.kernel(mx, {n.in[0]}, reduce(ReduceKind::Max, keep.rvars, load(0, t, keep.in_index)));
    // Index of the kept-dims max from the output's vars.
    std::vector<ExprP> mi;
    int o = 0;
    for (size_t i = 0; i < red.size(); ++i) {
      if (red[i]) {
        mi.push_back(cidx(0));
        if (out.keep) ++o;
      } else {
        mi.push_back(var(o++));
      }
    }
    ExprP m = load(1, t, mi);
    // Infinite maxima (all -inf, or +inf present) need no shift.
    ExprP shift = select(bin(EOp::Eq, un(EOp::Abs, m), cst(t, INFINITY)), cst(t, 0), m);
    ExprP s = reduce(ReduceKind::Sum, out.rvars, un(EOp::Exp, load(0, t, out.in_index) - shift));
    c.kernel(n.out[0], {n.in[0], mx}, un(EOp::Log, s) + shift);
  };
  register_op(std::move(d));
}

// --------------------------------------------------- softmax family --

// Softmax-family axes: from `axis` on, flattened (opset < 13), or one axis.
std::vector<bool> softmax_axes(const Node &n, int rank) {
  int axis = norm_axis(n.geti("axis", n.opset >= 13 ? -1 : 1), rank, n);
  std::vector<bool> red(rank, false);
  for (int i = axis; i < rank; ++i) red[i] = n.opset < 13 || i == axis;
  return red;
}

// numpy's order for sorting and arg-reductions: NaN ranks above every
// number and equals itself, so ArgMax/ArgMin/Hardmax pick the first NaN and
// TopK places NaNs first (largest) or last (smallest), never an invalid index.
ExprP is_nan(const ExprP &x) { return bin(EOp::Ne, x, x); }
ExprP same(const ExprP &a, const ExprP &b) {
  if (!dtype_is_float(a->type)) return bin(EOp::Eq, a, b);
  return bin(EOp::Or, bin(EOp::Eq, a, b), land(is_nan(a), is_nan(b)));
}
ExprP above(const ExprP &a, const ExprP &b) {
  if (!dtype_is_float(a->type)) return bin(EOp::Gt, a, b);
  return bin(EOp::Or, bin(EOp::Gt, a, b), land(is_nan(a), un(EOp::Not, is_nan(b))));
}

enum class SoftKind { Softmax, LogSoftmax, Hardmax };

// Emits out = softmax-family(x) over `red`; returns nothing. Shared with
// the losses (SoftmaxCrossEntropyLoss needs log-softmax).
void lower_softmax(LowerCtx &c, int x_id, int out, const std::vector<bool> &red, SoftKind kind) {
  const Value &x = c.g.v(x_id);
  DType t = x.dtype;
  int r = x.rank();
  AxisPlan keep = plan_axes(x.shape, red, true);
  runtime_rvars(keep, c.g, x_id);
  std::vector<ExprP> all = out_vars(r);
  int mx = c.temp(x.name + "_max", t, keep.out_shape);
  c.kernel(mx, {x_id}, reduce(ReduceKind::Max, keep.rvars, load(0, t, keep.in_index)));
  if (kind == SoftKind::Hardmax) {
    // 1 at the first maximum along the axes, 0 elsewhere.
    int64_t total = keep.count;
    ExprP lin = cidx(0), lin_r = cidx(0);
    for (int i = 0; i < r; ++i)
      if (red[i]) {
        lin = lin * cidx(x.shape[i]) + var(i);
        lin_r = lin_r * cidx(x.shape[i]) + var(kFirstReduceVar + i);
      }
    int first = c.temp(x.name + "_argmax", kIndexType, keep.out_shape);
    std::vector<ExprP> mi;  // the max, read at the first kernel's own vars
    for (int i = 0; i < r; ++i) mi.push_back(red[i] ? cidx(0) : var(i));
    ExprP hit = same(load(0, t, keep.in_index), load(1, t, mi));  // max propagates NaN
    c.kernel(first, {x_id, mx}, reduce(ReduceKind::Min, keep.rvars, select(hit, lin_r, cidx(total))));
    c.kernel(out, {first}, select(bin(EOp::Eq, load(0, kIndexType, keep.bcast), lin), cst(t, 1), cst(t, 0)));
    return;
  }
  ExprP shifted = load(0, t, all) - load(1, t, keep.bcast);
  if (kind == SoftKind::Softmax) {
    // e^(x - max) as e^-(max - x): the argument is never positive.
    int ex = c.temp(x.name + "_exp", t, x.shape);
    c.kernel(ex, {x_id, mx}, un(EOp::ExpNeg, load(1, t, keep.bcast) - load(0, t, all)));
    int sm = c.temp(x.name + "_sum", t, keep.out_shape);
    c.kernel(sm, {ex}, reduce(ReduceKind::Sum, keep.rvars, load(0, t, keep.in_index)));
    c.kernel(out, {ex, sm}, load(0, t, all) / load(1, t, keep.bcast));
    return;
  }
  // log softmax = x - max - log(sum(exp(x - max)))
  int ls = c.temp(x.name + "_logsum", t, keep.out_shape);
  std::vector<ExprP> mi;
  for (int i = 0; i < r; ++i) mi.push_back(red[i] ? cidx(0) : var(i));
  c.kernel(
      ls, {x_id, mx},
      un(EOp::Log, reduce(ReduceKind::Sum, keep.rvars, un(EOp::ExpNeg, load(1, t, mi) - load(0, t, keep.in_index)))));
  c.kernel(out, {x_id, mx, ls}, shifted - load(2, t, keep.bcast));
}

void def_softmax(const std::string &name, SoftKind kind) {
  OpDef d;
  d.name = name;
  d.attrs = {"axis"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    softmax_axes(n, x.rank());
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [kind](const Node &n, LowerCtx &c) {
    lower_softmax(c, n.in[0], n.out[0], softmax_axes(n, in_val(c.g, n, 0).rank()), kind);
  };
  d.dims = [kind](Node &n, Graph &g) {  // Hardmax over fixed axes only, for now
    const Value &x = in_val(g, n, 0);
    std::vector<bool> axes = softmax_axes(n, x.rank());
    for (int a = 0; a < x.rank(); ++a)
      if (axes[(size_t)a] && x.dim(a) >= 0 && kind == SoftKind::Hardmax)
        fail_unsupported(n.where() + ": it normalizes over " + describe_dim(g, n.in[0], a) +
                         ", a run-time dimension: not supported yet");
    dims_like_input(n, g);
  };
  register_op(std::move(d));
}

// ------------------------------------------------------ ArgMax/ArgMin --

void def_arg(const std::string &name, bool is_max) {
  OpDef d;
  d.name = name;
  d.attrs = {"axis", "keepdims", "select_last_index"};
  d.types = kNumeric;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<bool> red(x.rank(), false);
    const int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    red[axis] = true;
    const Shape out = plan_axes(x.shape, red, n.geti("keepdims", 1)).out_shape;
    // No index exists along an empty axis (numpy raises); an output
    // without elements asks for none.
    if (x.shape[axis] == 0 && shape_numel(out) > 0)
      fail_invalid(n.where() + ": axis " + std::to_string(axis) + " of the input " + shape_str(x.shape) +
                   " is empty, so there is no index to return");
    set_out(n, g, 0, DType::I64, out);
  };
  d.lower = [is_max](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    std::vector<bool> red(x.rank(), false);
    red[axis] = true;
    AxisPlan p = plan_axes(x.shape, red, n.geti("keepdims", 1));
    AxisPlan keep = plan_axes(x.shape, red, true);
    int best = c.temp(x.name + (is_max ? "_max" : "_min"), t, keep.out_shape);
    c.kernel(best, {n.in[0]},
             reduce(is_max ? ReduceKind::Max : ReduceKind::Min, keep.rvars, load(0, t, keep.in_index)));
    // The first (or last) index holding it.
    std::vector<ExprP> bi;
    int o = 0;
    for (int i = 0; i < x.rank(); ++i) {
      if (red[i]) {
        bi.push_back(cidx(0));
        if (p.keep) ++o;
      } else {
        bi.push_back(var(o++));
      }
    }
    ExprP r = var(kFirstReduceVar + axis);
    ExprP hit = same(load(0, t, p.in_index), load(1, t, bi));  // Max/Min propagate NaN
    bool last = n.geti("select_last_index", 0);
    ExprP idx = last ? reduce(ReduceKind::Max, p.rvars, select(hit, r, cidx(-1)))
                     : reduce(ReduceKind::Min, p.rvars, select(hit, r, cidx(x.shape[axis])));
    c.kernel(n.out[0], {n.in[0], best}, cast(idx, DType::I64));
  };
  register_op(std::move(d));
}

// --------------------------------------------------------------- CumSum --

void def_cumsum() {
  OpDef d;
  d.name = "CumSum";
  d.min_opset = 11;
  d.attrs = {"exclusive", "reverse"};
  d.const_inputs = {1};
  d.types = kNumeric;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    require_one_element(n, g, 1, "axis");
    norm_axis(const_ints(g, n, 1).at(0), x.rank(), n);
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int axis = norm_axis(const_ints(c.g, n, 1).at(0), x.rank(), n);
    std::vector<ExprP> idx = out_vars(x.rank());
    ExprP j = var(kFirstReduceVar), i = var(axis);
    idx[axis] = j;
    bool excl = n.geti("exclusive", 0), rev = n.geti("reverse", 0);
    ExprP take = rev ? (excl ? bin(EOp::Gt, j, i) : bin(EOp::Ge, j, i)) : (excl ? lt(j, i) : bin(EOp::Le, j, i));
    ExprP body = select(take, load(0, x.dtype, idx), cst(x.dtype, 0));
    c.kernel(n.out[0], {n.in[0]}, reduce(ReduceKind::Sum, {{kFirstReduceVar, x.shape[axis]}}, body));
  };
  register_op(std::move(d));
}

// ----------------------------------------------------------------- TopK --

// Rank of each element (how many come before it in the requested order,
// ties by index), then output k picks the element of rank k.
void def_topk() {
  OpDef d;
  d.name = "TopK";
  d.attrs = {"axis", "largest", "sorted", "k"};
  d.const_inputs = {1};
  auto k_of = [](const Node &n, const Graph &g) { return n.opset < 10 ? n.geti("k", 1) : const_ints(g, n, 1).at(0); };
  d.types = kNumeric;
  d.infer = [k_of](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    if (n.opset >= 10) require_one_element(n, g, 1, "k");
    int64_t k = k_of(n, g);
    if (k < 0 || k > x.shape[axis]) fail_invalid(n.where() + ": k out of range");
    Shape s = x.shape;
    s[axis] = k;
    set_out(n, g, 0, x.dtype, s);
    set_out(n, g, 1, DType::I64, s);
  };
  d.lower = [k_of](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    int64_t len = x.shape[axis], k = k_of(n, c.g);
    // A run-time length: the reductions run over the actual elements.
    ExprP actual = x.dim(axis) >= 0 ? c.g.extent(n.in[0], axis) : nullptr;
    bool largest = n.geti("largest", 1);
    Shape os = x.shape;
    os[axis] = k;
    int index = c.temp(x.name + "_topk_index", kIndexType, os);
    for (int o : n.out)
      if (o >= 0) c.g.v(index).dims = c.g.v(o).dims;  // (the outputs': min(k, length) along the axis)
    // The selection (a TopK kernel when compiled); its reference, for
    // folding: rank[i] = #{j : x[j] before x[i]}, index[k] = the i whose
    // rank is k.
    auto reference = [&] {
      std::vector<ExprP> xi = out_vars(x.rank()), xj = out_vars(x.rank());
      ExprP j = var(kFirstReduceVar);
      xj[axis] = j;
      ExprP a = load(0, t, xi), bj = load(0, t, xj);
      ExprP better = largest ? above(bj, a) : above(a, bj);
      ExprP before = bin(EOp::Or, better, land(same(bj, a), lt(j, var(axis))));
      int rank = c.temp(x.name + "_rank", kIndexType, x.shape);
      c.kernel(rank, {n.in[0]},
               reduce(ReduceKind::Sum, {{kFirstReduceVar, len, actual}}, select(before, cidx(1), cidx(0))));
      std::vector<ExprP> ri = out_vars(x.rank());
      ri[axis] = j;
      ExprP who = reduce(ReduceKind::Sum, {{kFirstReduceVar, len, actual}},
                         select(bin(EOp::Eq, load(0, kIndexType, ri), var(axis)), j, cidx(0)));
      c.kernel(index, {rank}, who);
    };
    TopKSpec spec;
    spec.axis = axis;
    spec.largest = largest;
    c.topk(index, n.in[0], spec, reference);
    std::vector<ExprP> gi = out_vars(x.rank());
    // Ranks are a permutation, so the index is in range; clamp regardless.
    gi[axis] = emin(emax(load(1, kIndexType, out_vars(x.rank())), cidx(0)), cidx(len - 1));
    if (n.out[0] >= 0) c.kernel(n.out[0], {n.in[0], index}, load(0, t, gi));
    if (n.out.size() > 1 && n.out[1] >= 0)
      c.kernel(n.out[1], {index}, cast(load(0, kIndexType, out_vars(x.rank())), DType::I64));
  };
  // Run-time extents: the input's carry over, and the output's axis is
  // min(k, the axis's actual length) for a run-time k (a symbolic value:
  // torchvision's min(candidates, 300)) or a run-time length.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", -1), x.rank(), n);
    ExprP k = n.opset < 10 ? cidx(n.geti("k", 1)) : sym_ints(g, n, 1).at(0);
    ExprP len = g.extent(n.in[0], axis);
    ExprP kk = k->is_const() && len->is_const() ? k : emin(k, len);
    std::vector<int> dims = x.dims;
    dims.resize((size_t)x.rank(), -1);
    dims[(size_t)axis] = g.derived_sym(kk, g.v(n.out[0]).name + "[" + std::to_string(axis) + "]");
    for (int o : n.out)
      if (o >= 0) g.v(o).dims = dims;
  };
  register_op(std::move(d));
}

}  // namespace

void lower_log_softmax(LowerCtx &c, int x, int out, const std::vector<bool> &axes) {
  lower_softmax(c, x, out, axes, SoftKind::LogSoftmax);
}

void register_reduction_ops() {
  auto id = [](ExprP x) { return x; };
  auto keep = [](ExprP r, ExprP) { return r; };
  def_reduce("ReduceMean", ReduceKind::Sum, 18, kNumeric, id, [](ExprP r, ExprP n) { return r / n; });
  def_reduce("ReduceSum", ReduceKind::Sum, 13, kNumeric, id, keep);
  def_reduce("ReduceMax", ReduceKind::Max, 18, kNumeric, id, keep);
  def_reduce("ReduceMin", ReduceKind::Min, 18, kNumeric, id, keep);
  def_reduce("ReduceProd", ReduceKind::Prod, 18, kNumeric, id, keep);
  def_reduce(
      "ReduceSumSquare", ReduceKind::Sum, 18, kNumeric, [](ExprP x) { return x * x; }, keep);
  def_reduce(
      "ReduceL1", ReduceKind::Sum, 18, kNumeric, [](ExprP x) { return un(EOp::Abs, x); }, keep);
  def_reduce(
      "ReduceL2", ReduceKind::Sum, 18, kFloat, [](ExprP x) { return x * x; },
      [](ExprP r, ExprP) { return un(EOp::Sqrt, r); });
  def_reduce("ReduceLogSum", ReduceKind::Sum, 18, kFloat, id, [](ExprP r, ExprP) { return un(EOp::Log, r); });
  def_reduce_logsumexp();
  def_softmax("Softmax", SoftKind::Softmax);
  def_softmax("LogSoftmax", SoftKind::LogSoftmax);
  def_softmax("Hardmax", SoftKind::Hardmax);
  def_arg("ArgMax", true);
  def_arg("ArgMin", false);
  def_cumsum();
  def_topk();
}

}  // namespace tinyrt
