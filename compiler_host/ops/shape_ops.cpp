// shape_ops.cpp — shape and data-movement ops: views (Reshape, Flatten,
// Squeeze, Unsqueeze), index remaps (Transpose, Slice, Pad, Gather, Expand,
// Concat, Split), casts, and the shape-only ops that fold to constants.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

// Run-time extents through a view (Reshape, Flatten, Squeeze, Unsqueeze).
// The axes of x and y fall into groups whose bounds hold the same
// elements ([1,4,H,W] as [1,4,H*W]: {1}, {4}, {H,W} -> {H*W}). A group with
// run-time extents gets its output extents from Reshape's shape input
// (constants, 0, symbolic elements) and, for the one axis left unknown,
// the group's element count over the others. Values are stored at their
// bounds, so the view stays an alias when each side of every such group
// has its run-time extent on its first axis only ([T, 40] as [T*40]: the
// run's elements are the group's first ones on both sides); otherwise
// (H and W merged) the run's elements move, by a copy kernel.
struct ViewGroup {
  int x0, x1, y0, y1;  // axes [x0, x1) of x hold the elements of axes [y0, y1) of y
};

struct ViewPlan {
  std::vector<ViewGroup> groups;
  std::vector<ExprP> ext;  // y's extents
  bool alias = true;
};

// A product of index expressions kept as a constant factor times the rest.
struct Product {
  int64_t c = 1;
  ExprP e;
  void mul(const ExprP &x) {
    if (x->is_const())
      c *= x->ival;
    else
      e = e ? e * x : x;
  }
  ExprP expr() const { return e ? (c == 1 ? e : e * cidx(c)) : cidx(c); }
};

bool view_groups(const Shape &x, const Shape &y, std::vector<ViewGroup> *out) {
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && x[i] == 1) {
      out->push_back({(int)i, (int)i + 1, (int)j, (int)j});
      ++i;
      continue;
    }
    if (j < y.size() && y[j] == 1) {
      out->push_back({(int)i, (int)i, (int)j, (int)j + 1});
      ++j;
      continue;
    }
    if (i >= x.size() || j >= y.size()) return false;
    ViewGroup gr{(int)i, 0, (int)j, 0};
    int64_t a = x[i++], b = y[j++];
    while (a != b) {
      if (a < b && i < x.size())
        a *= x[i++];
      else if (b < a && j < y.size())
        b *= y[j++];
      else
        return false;
    }
    gr.x1 = (int)i;
    gr.y1 = (int)j;
    out->push_back(gr);
  }
  return true;
}

// record_checks (dims_view): element counts that differ for some values
// of the ranges become tests of the run (agree_at_run_time); the lowering
// plans again without recording.
ViewPlan plan_view(const Node &n, Graph &g, bool record_checks) {
  const Value &x = in_val(g, n, 0), &y = g.v(n.out[0]);
  auto refuse = [&](const std::string &why) {
    fail_unsupported(n.where() + ": viewing " + shape_str(x.shape) + " as " + shape_str(y.shape) +
                     " with run-time dimensions: " + why);
  };
  // What the op says of each output axis (nullptr: to be computed).
  std::vector<ExprP> given((size_t)y.rank());
  for (int b = 0; b < y.rank(); ++b)
    if (y.shape[(size_t)b] == 1) given[(size_t)b] = cidx(1);
  if (n.op == "Reshape" && n.has_in(1)) {
    std::vector<ExprP> req = sym_ints(g, n, 1);
    for (size_t k = 0; k < req.size() && k < given.size(); ++k) {
      ExprP e = req[k];
      if (e->is_const() && e->ival == 0 && !n.geti("allowzero", 0) && (int)k < x.rank()) e = g.extent(n.in[0], (int)k);
      given[k] = e->is_const() && e->ival == -1 ? nullptr : e;
    }
  }
  ViewPlan p;
  if (!view_groups(x.shape, y.shape, &p.groups)) refuse("the axes do not group");
  p.ext.resize((size_t)y.rank());
  bool any = false;
  for (const ViewGroup &gr : p.groups) {
    Product count;
    int dyn_x = -1;  // a run-time axis of x in the group other than its first, or the first
    for (int a = gr.x0; a < gr.x1; ++a) {
      count.mul(g.extent(n.in[0], a));
      if (x.dim(a) >= 0 && (dyn_x < 0 || a != gr.x0)) dyn_x = a;
    }
    if (dyn_x < 0) {
      for (int b = gr.y0; b < gr.y1; ++b) {
        if (given[(size_t)b] && !given[(size_t)b]->is_const())
          refuse("output axis " + std::to_string(b) + " depends on a run-time dimension its input axes do not have");
        p.ext[(size_t)b] = cidx(y.shape[(size_t)b]);
      }
      continue;
    }
    any = true;
    if (dyn_x != gr.x0) p.alias = false;
    Product known;
    int unknown = -1;
    for (int b = gr.y0; b < gr.y1; ++b) {
      if (given[(size_t)b]) {
        known.mul(given[(size_t)b]);
        continue;
      }
      if (unknown >= 0)
        refuse("the run-time extent of " + describe_dim(g, n.in[0], dyn_x) + " splits over output axes " +
               std::to_string(unknown) + " and " + std::to_string(b) + " in a way the shape does not say");
      unknown = b;
    }
    if (unknown >= 0) {
      ExprP e;
      if (!known.e && known.c > 0 && count.c % known.c == 0)
        e = count.e ? (count.c / known.c == 1 ? count.e : count.e * cidx(count.c / known.c)) : cidx(count.c / known.c);
      else
        e = count.expr() / known.expr();
      p.ext[(size_t)unknown] = e;
    }
    ExprP total = cidx(1);
    for (int b = gr.y0; b < gr.y1; ++b) {
      ExprP &e = p.ext[(size_t)b];
      if (!e) e = given[(size_t)b];
      if (!e->is_const() && same_extent(g, e, cidx(y.shape[(size_t)b]))) e = cidx(y.shape[(size_t)b]);
      if (e->is_const() && e->ival != y.shape[(size_t)b])
        refuse("output axis " + std::to_string(b) + " is " + std::to_string(e->ival) + " at the bounds' " +
               std::to_string(y.shape[(size_t)b]));
      if (!e->is_const() && b != gr.y0) p.alias = false;
      total = total * e;
    }
    if (!same_extent(g, total, count.expr())) {
      if (!record_checks) continue;  // dims_view recorded the test
      if (!agree_at_run_time(g, n, total, count.expr(),
                             "views " + shape_str(x.shape) + " as " + shape_str(y.shape) + ": output axes " +
                                 std::to_string(gr.y0) + ".." + std::to_string(gr.y1 - 1) + " (" + to_string(total) +
                                 ") must hold the elements of input axes " + std::to_string(gr.x0) + ".." +
                                 std::to_string(gr.x1 - 1) + " (" + to_string(count.expr()) + ")"))
        refuse("the element counts differ for some run-time dimension, one computed from the data");
    }
  }
  if (!any) refuse("the shape depends on a run-time dimension the input does not have");
  return p;
}

void dims_view(Node &n, Graph &g) {
  ViewPlan p = plan_view(n, g, true);
  Value &y = g.v(n.out[0]);
  y.dims.assign((size_t)y.rank(), -1);
  for (int b = 0; b < y.rank(); ++b) {
    const ExprP &e = p.ext[(size_t)b];
    if (e->is_const()) continue;
    int sym = g.derived_sym(e, y.name + "[" + std::to_string(b) + "]");
    if (sym >= 0 && g.syms[(size_t)sym].hi > y.shape[(size_t)b])
      fail_unsupported(n.where() + ": viewing with run-time dimensions: output axis " + std::to_string(b) + " (" +
                       to_string(e) + ") may exceed its bound " + std::to_string(y.shape[(size_t)b]));
    y.dims[(size_t)b] = sym;
  }
  if (!y.is_dynamic()) y.dims.clear();
}

// The copy kernel of a view whose run's elements move (plan_view): per
// group, an output element's position among the group's actual elements,
// taken apart over the input's actual extents.
void lower_view_copy(const Node &n, LowerCtx &c, const ViewPlan &p) {
  const Value &x = in_val(c.g, n, 0);
  std::vector<ExprP> xi((size_t)x.rank(), cidx(0));
  for (const ViewGroup &gr : p.groups) {
    if (gr.x1 - gr.x0 == 1 && gr.y1 - gr.y0 == 1) {
      xi[(size_t)gr.x0] = var(gr.y0);
      continue;
    }
    ExprP flat = cidx(0);
    for (int b = gr.y0; b < gr.y1; ++b) flat = flat * c.g.extent(n.out[0], b) + var(b);
    ExprP inner = cidx(1);
    for (int a = gr.x1 - 1; a >= gr.x0; --a) {
      // The first axis's quotient is below its extent for every output
      // element; the clamp says so to the bounds proof, which bounds the
      // quotient by the extremes of its numerator and divisor apart.
      ExprP e = c.g.extent(n.in[0], a), q = flat / inner;
      xi[(size_t)a] = a == gr.x0 ? emin(q, e - cidx(1)) : bin(EOp::Rem, q, e);
      inner = inner * e;
    }
  }
  c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, xi));
}

void def_view_op(const std::string &name, std::vector<std::string> attrs, std::vector<int> const_inputs,
                 std::function<Shape(const Node &, const Graph &)> shape_fn) {
  OpDef d;
  d.name = name;
  d.attrs = std::move(attrs);
  d.const_inputs = std::move(const_inputs);
  d.infer = [shape_fn](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    Shape s = shape_fn(n, g);
    if (shape_numel(s) != x.numel())
      fail_invalid(n.where() + ": cannot view " + shape_str(x.shape) + " as " + shape_str(s));
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    if (in_val(c.g, n, 0).is_dynamic()) {
      ViewPlan p = plan_view(n, c.g, false);
      if (!p.alias) {
        lower_view_copy(n, c, p);
        return;
      }
    }
    c.alias(n.out[0], n.in[0]);
  };
  d.dims = dims_view;
  register_op(std::move(d));
}

Shape reshape_shape(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape;
  if (n.opset >= 5) {
    const Value &sv = in_val(g, n, 1);
    if (sv.dtype != DType::I64 || sv.rank() != 1)
      fail_invalid(n.where() + ": shape must be a 1-D int64 tensor, not " + dtype_name(sv.dtype) + shape_str(sv.shape));
  }
  std::vector<int64_t> req = n.opset < 5 ? n.getints("shape") : const_ints(g, n, 1);
  bool allowzero = n.geti("allowzero", 0) != 0;
  Shape s(req.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == -1) {
      if (infer >= 0) fail_invalid(n.where() + ": more than one -1 in the shape");
      infer = (int)i;
      continue;
    }
    if (req[i] == 0 && !allowzero) {
      if (i >= x.size()) fail_invalid(n.where() + ": 0 refers to a missing input dimension");
      s[i] = x[i];
    } else if (req[i] < 0) {
      fail_invalid(n.where() + ": invalid dimension " + std::to_string(req[i]));
    } else {
      s[i] = req[i];
    }
    if (__builtin_mul_overflow(known, s[i], &known))
      fail_invalid(n.where() + ": shape " + shape_str(req) + " has more elements than a 64-bit count holds");
  }
  if (infer >= 0) {
    if (known == 0 || shape_numel(x) % known) fail_invalid(n.where() + ": cannot infer -1 reshaping " + shape_str(x));
    s[infer] = shape_numel(x) / known;
  }
  return s;
}

Shape flatten_shape(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape;
  int r = (int)x.size();
  int64_t axis = n.geti("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) fail_invalid(n.where() + ": axis out of range");
  int64_t a = 1, b = 1;
  for (int i = 0; i < r; ++i) (i < axis ? a : b) *= x[i];
  return {a, b};
}

std::vector<int64_t> axes_of(const Node &n, const Graph &g, int input_opset) {
  if (n.opset >= input_opset) return n.has_in(1) ? const_ints(g, n, 1) : std::vector<int64_t>{};
  return n.getints("axes");
}

Shape squeeze_shape(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape;
  std::vector<int64_t> axes = axes_of(n, g, 13);
  std::vector<bool> drop(x.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
  } else {
    for (int64_t a : axes) {
      int k = norm_axis(a, (int)x.size(), n);
      if (x[k] != 1)
        fail_invalid(n.where() + ": cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x[k]));
      if (drop[k]) fail_invalid(n.where() + ": axis " + std::to_string(a) + " is named twice in axes");
      drop[k] = true;
    }
  }
  Shape s;
  for (size_t i = 0; i < x.size(); ++i)
    if (!drop[i]) s.push_back(x[i]);
  return s;
}

Shape unsqueeze_shape(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape;
  std::vector<int64_t> axes = axes_of(n, g, 13);
  int r = (int)(x.size() + axes.size());
  std::vector<bool> ins(r, false);
  for (int64_t a : axes) {
    int k = norm_axis(a, r, n);
    if (ins[k]) fail_invalid(n.where() + ": repeated axis");
    ins[k] = true;
  }
  Shape s;
  size_t j = 0;
  for (int i = 0; i < r; ++i) s.push_back(ins[i] ? 1 : x[j++]);
  return s;
}

// ------------------------------------------------------------ Transpose --

std::vector<int> transpose_perm(const Node &n, int r) {
  std::vector<int64_t> p = n.getints("perm");
  std::vector<int> perm(r);
  if (p.empty()) {
    for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    return perm;
  }
  if ((int)p.size() != r) fail_invalid(n.where() + ": perm has the wrong length");
  std::vector<bool> seen(r, false);
  for (int i = 0; i < r; ++i) {
    if (p[i] < 0) fail_invalid(n.where() + ": perm entry " + std::to_string(p[i]) + " is negative");
    perm[i] = norm_axis(p[i], r, n);
    if (seen[perm[i]]) fail_invalid(n.where() + ": perm is not a permutation");
    seen[perm[i]] = true;
  }
  return perm;
}

void def_transpose() {
  OpDef d;
  d.name = "Transpose";
  d.attrs = {"perm"};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int> p = transpose_perm(n, x.rank());
    Shape s;
    for (int a : p) s.push_back(x.shape[a]);
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    std::vector<int> p = transpose_perm(n, x.rank());
    std::vector<ExprP> idx(x.rank());
    for (int k = 0; k < x.rank(); ++k) idx[p[k]] = var(k);
    c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, idx));
  };
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int> p = transpose_perm(n, x.rank());
    Value &y = g.v(n.out[0]);
    y.dims.clear();
    for (int a : p) y.dims.push_back(x.dim(a));
  };
  register_op(std::move(d));
}

// ------------------------------------------------------- Concat / Split --

constexpr size_t kConcatFanIn = 16;

// out = the concatenation of `ins` (none of length 0) along `axis`, as one
// kernel: sel(i < end_k, in_k[i - begin_k], rest), built from the last
// input. Along a run-time axis the offsets are sums of the inputs'
// extents (the actual elements packed, as ONNX concatenates them) and
// each input's index is clamped into its bounds.
void concat_kernel(LowerCtx &c, int out, const std::vector<int> &ins, int axis) {
  const Value &o = c.g.v(out);
  int r = o.rank();
  std::vector<ExprP> begin;
  ExprP end = cidx(0);
  for (int v : ins) {
    begin.push_back(end);
    end = end + c.g.extent(v, axis);
  }
  ExprP e;
  for (size_t k = ins.size(); k-- > 0;) {
    const Value &x = c.g.v(ins[k]);
    std::vector<ExprP> idx = out_vars(r);
    idx[axis] = var(axis) - begin[k];
    if (!begin[k]->is_const() || x.dim(axis) >= 0) idx[axis] = emax(cidx(0), emin(cidx(x.shape[axis] - 1), idx[axis]));
    ExprP v = load((int)k, o.dtype, idx);
    e = e ? select(lt(var(axis), begin[k] + c.g.extent(ins[k], axis)), v, e) : v;
  }
  if (!e) e = cst(o.dtype, 0);
  c.kernel(out, ins, e);
}

// Dims of the concatenation of `ins` along `axis` into `out`: the other
// axes' extents agree (broadcasting's rule without the broadcast); along
// the axis, the sum of the inputs' lengths (a run-time extent when one
// is).
void concat_dims(Graph &g, const Node &n, const std::vector<int> &ins, int axis, int out) {
  Value &o = g.v(out);
  std::vector<int> dims((size_t)o.rank(), -1), from((size_t)o.rank(), -1);  // the extent and its input
  ExprP sum = cidx(0);
  for (int v : ins) {
    const Value &x = g.v(v);
    sum = sum + g.extent(v, axis);
    for (int a = 0; a < o.rank(); ++a) {
      if (a == axis || x.dim(a) < 0) continue;
      if (dims[(size_t)a] >= 0 && dims[(size_t)a] != x.dim(a)) {
        const int first = from[(size_t)a];
        if (!agree_at_run_time(g, n, first, a, v, a))
          fail_unsupported(
              n.where() + ": " + describe_dim(g, v, a) + " and " + describe_dim(g, first, a) + " meet on axis " +
              std::to_string(a) +
              ", and one is computed from the data: tinyrt cannot test that they are equal before the run");
        continue;
      }
      dims[(size_t)a] = x.dim(a);
      from[(size_t)a] = v;
    }
  }
  for (int v : ins)
    for (int a = 0; a < o.rank(); ++a)
      if (a != axis && dims[(size_t)a] >= 0 && g.v(v).dim(a) < 0)
        fail_unsupported(n.where() + ": '" + g.v(v).name + "' axis " + std::to_string(a) + " is fixed where " +
                         describe_dim(g, out, a) + " is not");
  dims[(size_t)axis] = g.derived_sym(sum, o.name + "[" + std::to_string(axis) + "]");
  o.dims = dims;
  if (!o.is_dynamic()) o.dims.clear();
}

void def_concat() {
  OpDef d;
  d.name = "Concat";
  d.min_opset = 4;
  d.attrs = {"axis"};
  d.infer = [](Node &n, Graph &g) {
    const Value &x0 = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", 0), x0.rank(), n);
    Shape s = x0.shape;
    s[axis] = 0;
    for (size_t k = 0; k < n.in.size(); ++k) {
      const Value &x = in_val(g, n, k);
      if (x.rank() != x0.rank() || x.dtype != x0.dtype) fail_invalid(n.where() + ": inputs differ in rank or type");
      for (int i = 0; i < x.rank(); ++i)
        if (i != axis && x.shape[i] != x0.shape[i])
          fail_invalid(n.where() + ": input shapes " + shape_str(x0.shape) + " and " + shape_str(x.shape) +
                       " differ off the axis");
      s[axis] += x.shape[axis];
    }
    set_out(n, g, 0, x0.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x0 = in_val(c.g, n, 0);
    int axis = norm_axis(n.geti("axis", 0), x0.rank(), n);
    std::vector<int> parts;
    for (int v : n.in)
      if (c.g.v(v).shape[axis] != 0) parts.push_back(v);
    // Many inputs concatenate in groups, then the groups: an element is a
    // select over at most kConcatFanIn inputs, so code and compile time
    // stay linear in the inputs (a 1000-input Concat was one expression of
    // 1000 selects per element).
    while (parts.size() > kConcatFanIn) {
      std::vector<int> groups;
      for (size_t i = 0; i < parts.size(); i += kConcatFanIn) {
        std::vector<int> g(parts.begin() + (long)i, parts.begin() + (long)std::min(parts.size(), i + kConcatFanIn));
        if (g.size() == 1) {
          groups.push_back(g[0]);
          continue;
        }
        Shape s = x0.shape;
        s[axis] = 0;
        for (int v : g) s[axis] += c.g.v(v).shape[axis];
        int t = c.temp(c.g.v(n.out[0]).name + "_part", x0.dtype, s);
        if (c.g.v(n.out[0]).is_dynamic()) concat_dims(c.g, n, g, axis, t);
        concat_kernel(c, t, g, axis);
        groups.push_back(t);
      }
      parts = groups;
    }
    concat_kernel(c, n.out[0], parts, axis);
  };
  d.dims = [](Node &n, Graph &g) {
    const Value &x0 = in_val(g, n, 0);
    concat_dims(g, n, n.in, norm_axis(n.geti("axis", 0), x0.rank(), n), n.out[0]);
  };
  register_op(std::move(d));
}

std::vector<int64_t> split_sizes(const Node &n, const Graph &g) {
  const Value &x = in_val(g, n, 0);
  int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
  std::vector<int64_t> sizes;
  if (n.opset >= 13 && n.has_in(1))
    sizes = const_ints(g, n, 1);
  else if (n.opset < 13)
    sizes = n.getints("split");
  size_t outs = n.out.size();
  if (sizes.empty()) {
    int64_t dim = x.shape[axis];
    int64_t chunk = (dim + (int64_t)outs - 1) / (int64_t)outs;
    for (size_t k = 0; k < outs; ++k) sizes.push_back(std::min(chunk, dim - chunk * (int64_t)k));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    // Each in [0, dim] (so the sum of a bounded count cannot overflow).
    if (s < 0 || s > x.shape[axis])
      fail_invalid(n.where() + ": split size " + std::to_string(s) + " outside [0, " + std::to_string(x.shape[axis]) +
                   "]");
    total += s;
  }
  if (sizes.size() != outs || total != x.shape[axis])
    fail_invalid(n.where() + ": split sizes do not add up to the axis");
  return sizes;
}

void def_split() {
  OpDef d;
  d.name = "Split";
  d.attrs = {"axis", "split", "num_outputs"};
  d.const_inputs = {1};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    std::vector<int64_t> sz = split_sizes(n, g);
    for (size_t k = 0; k < n.out.size(); ++k) {
      Shape s = x.shape;
      s[axis] = sz[k];
      set_out(n, g, k, x.dtype, s);
    }
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    std::vector<int64_t> sz = split_sizes(n, c.g);
    int64_t off = 0;
    for (size_t k = 0; k < n.out.size(); ++k) {
      std::vector<ExprP> idx = out_vars(x.rank());
      idx[axis] = var(axis) + cidx(off);
      if (n.out[k] >= 0) c.kernel(n.out[k], {n.in[0]}, load(0, x.dtype, idx));
      off += sz[k];
    }
  };
  // Run-time extents off the split axis carry to every part.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    if (x.dim(axis) >= 0)
      fail_unsupported(n.where() + ": splitting " + describe_dim(g, n.in[0], axis) + ": not supported yet");
    dims_like_input(n, g);
  };
  register_op(std::move(d));
}

// ---------------------------------------------------------------- Slice --

struct SliceSpec {
  std::vector<int64_t> start, step, count;
  // As given (before clamping into the axis), and the axis's step: for
  // an axis of run-time length (slice_extent).
  std::vector<int64_t> given_start, given_end, given_step;
};

// Start and count of the slice of a run-time axis (its extent `len`, an
// index expression; `bound` its upper bound) for positive steps: ONNX's
// clamping with the actual length. The count is at most the count at the
// bound (`count_bound`), which it is monotone up to.
std::pair<ExprP, ExprP> slice_extent(const SliceSpec &s, int a, const ExprP &len, int64_t bound) {
  auto clampv = [&](int64_t v) {  // a start or end of the actual axis
    v = std::max<int64_t>(std::min<int64_t>(v, bound), -bound);
    return v >= 0 ? emin(cidx(v), len) : emax(len + cidx(v), cidx(0));
  };
  ExprP b = clampv(s.given_start[(size_t)a]), e = clampv(s.given_end[(size_t)a]);
  const int64_t st = s.given_step[(size_t)a];
  ExprP span = emax(e - b, cidx(0));
  ExprP count = st == 1 ? span : bin(EOp::Div, span + cidx(st - 1), cidx(st));
  return {b, emin(count, cidx(s.count[(size_t)a]))};
}

SliceSpec slice_spec(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape;
  int r = (int)x.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.getints("starts");
    ends = n.getints("ends");
    axes = n.getints("axes");
  } else {
    starts = const_ints(g, n, 1);
    ends = const_ints(g, n, 2);
    if (n.has_in(3)) axes = const_ints(g, n, 3);
    if (n.has_in(4)) steps = const_ints(g, n, 4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back((int64_t)i);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail_invalid(n.where() + ": starts, ends, axes and steps differ in length");
  SliceSpec s;
  s.start.assign(r, 0);
  s.step.assign(r, 1);
  s.count = x;
  s.given_start.assign(r, 0);
  s.given_end.assign(r, INT64_MAX);
  s.given_step.assign(r, 1);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int a = norm_axis(axes[i], r, n);
    if (seen[a]) fail_invalid(n.where() + ": axis " + std::to_string(axes[i]) + " is named twice in axes");
    seen[a] = true;
    int64_t dim = x[a], st = steps[i];
    if (st == 0) fail_invalid(n.where() + ": step 0");
    int64_t b = starts[i], e = ends[i];
    s.given_start[a] = b;
    s.given_end[a] = e;
    s.given_step[a] = st;
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    // Steps may be as large as INT64_MAX or INT64_MIN: counts are taken in
    // unsigned arithmetic (|step| as uint64), never by negating or adding
    // to the step.
    if (st > 0) {
      b = std::max<int64_t>(0, std::min(b, dim));
      e = std::max<int64_t>(0, std::min(e, dim));
      s.count[a] = e > b ? (int64_t)((uint64_t)(e - b - 1) / (uint64_t)st) + 1 : 0;
    } else {
      b = std::max<int64_t>(-1, std::min(b, dim - 1));
      e = std::max<int64_t>(-1, std::min(e, dim - 1));
      s.count[a] = b > e ? (int64_t)((uint64_t)(b - e - 1) / (0 - (uint64_t)st)) + 1 : 0;
    }
    s.start[a] = b;
    // One element or none: the step is never applied (and never reaches
    // the 32-bit index arithmetic of generated code).
    s.step[a] = s.count[a] > 1 ? st : 1;
  }
  return s;
}

void def_slice() {
  OpDef d;
  d.name = "Slice";
  d.attrs = {"starts", "ends", "axes"};
  d.const_inputs = {1, 2, 3, 4};
  d.infer = [](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, slice_spec(n, g).count); };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    SliceSpec s = slice_spec(n, c.g);
    std::vector<ExprP> idx;
    for (int i = 0; i < x.rank(); ++i) {
      if (x.dim(i) >= 0 && (s.given_start[(size_t)i] != 0 || s.given_step[(size_t)i] != 1)) {
        // A run-time axis: the start from its actual length, clamped.
        ExprP b = slice_extent(s, i, c.g.extent(n.in[0], i), x.shape[(size_t)i]).first;
        idx.push_back(emin(b + var(i) * cidx(s.given_step[(size_t)i]), cidx(x.shape[(size_t)i] - 1)));
        continue;
      }
      idx.push_back(cidx(s.start[i]) + var(i) * cidx(s.step[i]));
    }
    c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, idx));
  };
  // Run-time extents: fixed axes slice as before; a run-time axis by
  // constant starts, ends and a positive step, clamped with its actual
  // length as ONNX says (keep[:300] after torchvision's NMS).
  // Ends computed from run-time extents (the first T rows: x[:T]): with a
  // step of 1 and a constant start from the front, the extent is
  // clamp(end, 0, length) - start.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    for (int k = 1; k <= 4; ++k)
      if (k != 2 && n.has_in((size_t)k) && g.v(n.in[k]).is_sym())
        fail_unsupported(n.where() + ": slice starts, axes or steps that depend on a run-time dimension: not " +
                         "supported yet");
    if (n.opset < 10 && x.is_dynamic())
      fail_unsupported(n.where() + ": Slice before opset 10 with run-time dimensions");
    SliceSpec s = slice_spec(n, g);
    std::vector<int> dims = x.dims;
    dims.resize((size_t)x.rank(), -1);
    std::map<int, ExprP> run_end;  // axis -> its end, computed from run-time extents
    if (n.opset >= 10 && g.v(n.in[2]).is_sym()) {
      std::vector<ExprP> ends = sym_ints(g, n, 2);
      std::vector<int64_t> axes = n.has_in(3) ? const_ints(g, n, 3) : std::vector<int64_t>{};
      for (size_t i = 0; i < ends.size(); ++i)
        if (!ends[i]->is_const()) run_end[norm_axis(i < axes.size() ? axes[i] : (int64_t)i, x.rank(), n)] = ends[i];
    }
    for (int a = 0; a < x.rank(); ++a) {
      if (run_end.count(a)) {
        const ExprP &end = run_end.at(a);
        Interval r = index_range(end, {});
        if (s.given_step[(size_t)a] != 1 || s.given_start[(size_t)a] < 0 || !r.known || r.lo < 0)
          fail_unsupported(n.where() + ": the end " + to_string(end) + " of " + describe_dim(g, n.in[0], a) +
                           " is computed at run time; it is taken with a step of 1, a start from the front and " +
                           "an end that is never negative");
        ExprP count = emax(emin(end, g.extent(n.in[0], a)) - cidx(s.given_start[(size_t)a]), cidx(0));
        dims[(size_t)a] = g.derived_sym(count, g.v(n.out[0]).name + "[" + std::to_string(a) + "]");
        TINYRT_CHECK(dims[(size_t)a] < 0 || g.syms[(size_t)dims[(size_t)a]].hi <= g.v(n.out[0]).shape[(size_t)a],
                     "a slice's run-time extent past its bound");
        continue;
      }
      if (x.dim(a) < 0) continue;
      if (s.given_step[(size_t)a] < 0)
        fail_unsupported(n.where() + ": slicing " + describe_dim(g, n.in[0], a) + " backwards: not supported yet");
      bool whole =
          s.given_start[(size_t)a] == 0 && s.given_end[(size_t)a] >= x.shape[(size_t)a] && s.given_step[(size_t)a] == 1;
      if (whole) continue;
      ExprP count = slice_extent(s, a, g.extent(n.in[0], a), x.shape[(size_t)a]).second;
      dims[(size_t)a] = g.derived_sym(count, g.v(n.out[0]).name + "[" + std::to_string(a) + "]");
    }
    g.v(n.out[0]).dims = dims;
    if (!g.v(n.out[0]).is_dynamic()) g.v(n.out[0]).dims.clear();
  };
  register_op(std::move(d));
}

// ------------------------------------------------------------------ Pad --

void def_pad() {
  OpDef d;
  d.name = "Pad";
  d.min_opset = 2;
  d.attrs = {"mode", "pads", "value"};
  d.const_inputs = {1, 3};
  auto pads_of = [](const Node &n, const Graph &g) {
    int r = in_val(g, n, 0).rank();
    std::vector<int64_t> p = n.opset < 11 ? n.getints("pads") : const_ints(g, n, 1);
    std::vector<int64_t> full(2 * r, 0);
    if (n.opset >= 18 && n.has_in(3)) {
      std::vector<int64_t> axes = const_ints(g, n, 3);
      for (size_t i = 0; i < axes.size(); ++i) {
        int a = norm_axis(axes[i], r, n);
        full[a] = p.at(i);
        full[a + r] = p.at(i + axes.size());
      }
      return full;
    }
    if ((int)p.size() != 2 * r) fail_invalid(n.where() + ": pads must have 2*rank entries");
    for (int64_t v : p)  // as the attribute's (prevalidate_attributes): sums stay far from wrapping
      if (v < -INT32_MAX || v > INT32_MAX) fail_invalid(n.where() + ": pads holds " + std::to_string(v));
    return p;
  };
  d.infer = [pads_of](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int64_t> p = pads_of(n, g);
    if (n.opset >= 11) require_one_element(n, g, 2, "constant_value");
    Shape s = x.shape;
    for (int i = 0; i < x.rank(); ++i) s[i] += p[i] + p[i + x.rank()];
    std::string mode = n.gets("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
      fail_unsupported(n.where() + ": mode '" + mode + "'");
    for (int i = 0; i < x.rank(); ++i)
      if (mode != "constant" && x.shape[i] == 0 && s[i] > 0)
        fail_invalid(n.where() + ": " + mode + " padding of axis " + std::to_string(i) + ", which is empty");
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [pads_of](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int r = x.rank();
    std::vector<int64_t> p = pads_of(n, c.g);
    std::string mode = n.gets("mode", "constant");
    std::vector<int> ins = {n.in[0]};
    ExprP value = cst(t, 0);
    if (n.opset < 11) {
      value = cst(t, n.getf("value", 0));
    } else if (n.has_in(2)) {
      const Value &cv = in_val(c.g, n, 2);
      if (cv.is_const()) {
        value = dtype_is_float(t) ? cst(t, cv.data->get_f(0)) : cst(t, (double)cv.data->get_i(0));
      } else {
        ins.push_back(n.in[2]);
        value = load(1, t, std::vector<ExprP>(cv.rank(), cidx(0)));
      }
    }
    std::vector<ExprP> idx;
    ExprP inside = cbool(true);
    for (int i = 0; i < r; ++i) {
      int64_t dim = x.shape[i];
      ExprP pos = var(i) - cidx(p[i]);
      if (x.dim(i) >= 0) {  // a run-time axis (the dims rule checked the pads against its range)
        ExprP ext = c.g.extent(n.in[0], i);
        if (mode == "constant") {
          inside = land(inside, in_range(pos, ext));
        } else if (mode == "edge") {
          pos = emax(cidx(0), emin(ext - cidx(1), pos));
        } else {  // pads under the smallest extent: one reflection; the clamp is for the bounds proof
          pos = select(lt(pos, cidx(0)), cidx(0) - pos, pos);
          pos = select(lt(pos, ext), pos, (ext - cidx(1)) * cidx(2) - pos);
          pos = emax(cidx(0), emin(ext - cidx(1), pos));
        }
      } else if (mode == "constant") {
        inside = land(inside, in_range(pos, dim));
      } else if (mode == "edge") {
        pos = emax(cidx(0), emin(cidx(dim - 1), pos));
      } else {  // reflect: -1 -> 1, dim -> dim - 2
        if (dim == 1) {
          pos = cidx(0);
        } else if (p[i] < dim && p[i + r] < dim) {
          pos = select(lt(pos, cidx(0)), cidx(0) - pos, pos);
          pos = select(lt(pos, cidx(dim)), pos, cidx(2 * (dim - 1)) - pos);
        } else {
          // Pads as wide as the axis or wider reflect again (numpy): a
          // triangle wave of period 2 (dim - 1).
          int64_t period = 2 * (dim - 1);
          ExprP m = bin(EOp::Rem, bin(EOp::Rem, pos, cidx(period)) + cidx(period), cidx(period));
          pos = select(lt(m, cidx(dim)), m, cidx(period) - m);
        }
      }
      idx.push_back(pos);
    }
    ExprP e = load(0, t, idx);
    if (mode == "constant") e = select(inside, e, value);
    c.kernel(n.out[0], ins, e);
  };
  // A run-time axis (an image of any size) padded by constant amounts:
  // the output's extent is the input's plus the pads.
  d.dims = [pads_of](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int64_t> p = pads_of(n, g);
    std::string mode = n.gets("mode", "constant");
    int r = x.rank();
    std::vector<int> dims((size_t)r, -1);
    for (int i = 0; i < r; ++i) {
      if (x.dim(i) < 0) continue;
      int64_t lo = g.syms[(size_t)x.dim(i)].lo, pb = p[(size_t)i], pe = p[(size_t)(i + r)];
      if (lo + pb + pe < 1)
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], i) + ": pads " + std::to_string(pb) + ", " +
                         std::to_string(pe) + " leave nothing of an input of " + std::to_string(lo));
      if (mode == "reflect" && (pb >= lo || pe >= lo || pb < 0 || pe < 0))
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], i) + ": reflect pads of " + std::to_string(pb) +
                         ", " + std::to_string(pe) + " must be under the range's smallest extent");
      if (mode == "edge" && (pb < 0 || pe < 0))
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], i) + ": negative edge pads");
      if (pb == 0 && pe == 0) {
        dims[(size_t)i] = x.dim(i);
        continue;
      }
      ExprP out = g.extent(n.in[0], i) + cidx(pb + pe);
      dims[(size_t)i] = g.derived_sym(out, g.v(n.out[0]).name + "[" + std::to_string(i) + "]");
    }
    g.v(n.out[0]).dims = dims;
    if (!g.v(n.out[0]).is_dynamic()) g.v(n.out[0]).dims.clear();
  };
  register_op(std::move(d));
}

// --------------------------------------------------------------- Gather --

void def_gather() {
  OpDef d;
  d.name = "Gather";
  d.attrs = {"axis"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, {DType::I32, DType::I64});
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    if (x.shape[axis] == 0 && ix.numel() > 0)
      fail_invalid(n.where() + ": gathers " + std::to_string(ix.numel()) + " indices from axis " +
                   std::to_string(axis) + " of length 0");
    require_indices_in_range(n, g, 1, {x.shape[axis]});
    Shape s(x.shape.begin(), x.shape.begin() + axis);
    s.insert(s.end(), ix.shape.begin(), ix.shape.end());
    s.insert(s.end(), x.shape.begin() + axis + 1, x.shape.end());
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    int q = ix.rank();
    std::vector<ExprP> ii;
    for (int k = 0; k < q; ++k) ii.push_back(var(axis + k));
    ExprP i = safe_index(load(1, ix.dtype, ii), c.g, n.in[0], axis);
    std::vector<ExprP> xi;
    for (int k = 0; k < axis; ++k) xi.push_back(var(k));
    xi.push_back(i);
    for (int k = axis + 1; k < x.rank(); ++k) xi.push_back(var(k - 1 + q));
    c.kernel(n.out[0], {n.in[0], n.in[1]}, load(0, x.dtype, xi));
  };
  // Run-time extents: the data's other axes and the indices' axes carry
  // theirs to the output (boxes[keep] after NonMaxSuppression); the
  // gathered axis may be one (negative indices count from its actual end).
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    std::vector<int> dims;
    for (int k = 0; k < axis; ++k) dims.push_back(x.dim(k));
    for (int k = 0; k < ix.rank(); ++k) dims.push_back(ix.dim(k));
    for (int k = axis + 1; k < x.rank(); ++k) dims.push_back(x.dim(k));
    g.v(n.out[0]).dims = dims;
  };
  register_op(std::move(d));
}

// --------------------------------------------------------------- Expand --

void def_expand() {
  OpDef d;
  d.name = "Expand";
  d.min_opset = 8;
  d.const_inputs = {1};
  // Run-time extents: x's, and the shape's elements computed from them
  // (Expand(w, Shape(x))); an axis takes the one that is not 1, and two
  // run-time extents meet only as one. Per output axis, its extent or -1.
  auto axes = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<ExprP> shape = sym_ints(g, n, 1);
    const int r = std::max(x.rank(), (int)shape.size());
    std::vector<int> dims((size_t)r, -1);
    for (int a = 0; a < r; ++a) {
      int k = a - (r - x.rank()), j = a - (r - (int)shape.size());
      int xd = k >= 0 ? x.dim(k) : -1;
      bool x_one = k < 0 || (xd < 0 && x.shape[(size_t)k] == 1);
      ExprP e = j >= 0 ? shape[(size_t)j] : cidx(1);
      int sd = g.derived_sym(e, g.v(n.out[0]).name + "[" + std::to_string(a) + "]");
      if (sd < 0 && xd >= 0 && !e->is_const_int(1))
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], k) + " meets the fixed size " + to_string(e) +
                         ": a fixed size equals a run-time extent only at one value");
      if (sd >= 0 && xd >= 0 && sd != xd)
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], k) + " and the shape's element " + to_string(e) +
                         " meet on one axis: tinyrt takes them to be equal only when they are one " +
                         "dimension (give them one name with --dim)");
      dims[(size_t)a] = sd >= 0 && x_one ? sd : xd;
    }
    return dims;
  };
  auto infer = [axes](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.is_dynamic() || in_val(g, n, 1).is_sym()) axes(n, g);  // (its refusals name the extents)
    set_out(n, g, 0, x.dtype, broadcast_shapes(x.shape, const_ints(g, n, 1), n));
  };
  d.infer = infer;
  d.dims = [axes](Node &n, Graph &g) {
    std::vector<int> dims = axes(n, g);
    Value &o = g.v(n.out[0]);
    o.dims = dims;
    if (!o.is_dynamic()) o.dims.clear();
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int r = c.g.v(n.out[0]).rank();
    c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, broadcast_index(x.shape, r)));
  };
  register_op(std::move(d));
}

// ------------------------------------------------------------------ Cast --

void def_cast() {
  OpDef d;
  d.name = "Cast";
  d.min_opset = 6;
  d.attrs = {"to", "saturate"};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    DType to = (DType)n.geti("to", 0);
    if (to == DType::String || x.dtype == DType::String)
      fail_unsupported(n.where() + ": casts to or from string are out of scope (strings)");
    if (!dtype_supported(to) || !dtype_supported(x.dtype))
      fail_unsupported(n.where() + ": cast from " + dtype_name(x.dtype) + " to " + dtype_name(to));
    set_out(n, g, 0, to, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    c.kernel(n.out[0], {n.in[0]}, cast(load(0, x.dtype, out_vars(x.rank())), (DType)n.geti("to", 0)));
  };
  d.dims = dims_like_input;
  register_op(std::move(d));
}

// ------------------------------------------- ops that fold to constants --

ConstP const_from_attr(const Node &n) {
  for (auto &kv : n.attrs) {
    const Attr &a = kv.second;
    if (kv.first == "value") return a.t;
    if (kv.first == "value_float") return make_const_f32({}, {a.f});
    if (kv.first == "value_floats") return make_const_f32({(int64_t)a.floats.size()}, a.floats);
    if (kv.first == "value_int") return make_const_i64({}, {a.i});
    if (kv.first == "value_ints") return make_const_i64({(int64_t)a.ints.size()}, a.ints);
    fail_unsupported(n.where() + ": attribute '" + kv.first + "'");
  }
  fail_invalid(n.where() + ": no value");
}

void def_folding(const std::string &name, std::vector<std::string> attrs, std::vector<int> const_inputs,
                 std::function<ConstP(const Node &, const Graph &)> f) {
  OpDef d;
  d.name = name;
  d.attrs = std::move(attrs);
  d.const_inputs = std::move(const_inputs);
  d.infer = [f](Node &n, Graph &g) {
    ConstP c = f(n, g);
    set_out(n, g, 0, c->dtype, c->shape);
  };
  d.fold = [f](const Node &n, const Graph &g) { return std::vector<ConstP>{f(n, g)}; };
  register_op(std::move(d));
}

// Axis k of output `out` takes element k of shape input `input` (a
// symbolic value's elements are expressions of run-time extents): the
// dims rule of an op whose output shape is an input (ConstantOfShape).
void dims_from_shape_input(Node &n, Graph &g, size_t input, int out) {
  std::vector<ExprP> e = sym_ints(g, n, input);
  Value &o = g.v(out);
  std::vector<int> dims((size_t)o.rank(), -1);
  const size_t off = (size_t)o.rank() - std::min(e.size(), (size_t)o.rank());
  for (size_t k = 0; k < e.size() && k < dims.size(); ++k)
    if (!e[k]->is_const()) dims[off + k] = g.derived_sym(e[k], o.name + "[" + std::to_string(off + k) + "]");
  o.dims = dims;
}

// ConstantOfShape: a constant; of a symbolic shape (torchvision's
// full_like over a data-dependent count), a kernel filling the bounds
// with run-time extents.
void def_constant_of_shape() {
  auto value_of = [](const Node &n) {
    ConstP v = n.has("value") ? n.attrs.at("value").t : make_const_f32({1}, {0.f});
    if (!v || shape_numel(v->shape) != 1)
      fail_invalid(n.where() + ": value must be a tensor of one element" +
                   (v ? ", it has shape " + shape_str(v->shape) : std::string()));
    return v;
  };
  auto shape_of = [](const Node &n, const Graph &g) {
    std::vector<int64_t> s = const_ints(g, n, 0);
    Shape shape(s.begin(), s.end());
    for (int64_t d : shape)
      if (d < 0) fail_invalid(n.where() + ": negative dimension in " + shape_str(shape));
    return shape;
  };
  OpDef d;
  d.name = "ConstantOfShape";
  d.attrs = {"value"};
  d.const_inputs = {0};
  d.infer = [value_of, shape_of](Node &n, Graph &g) { set_out(n, g, 0, value_of(n)->dtype, shape_of(n, g)); };
  d.fold = [value_of, shape_of](const Node &n, const Graph &g) {
    ConstP v = value_of(n);
    Shape shape = shape_of(n, g);
    int eb = dtype_bytes(v->dtype);
    if (shape_numel(shape) * eb > g.limits.max_folded_bytes)
      fail_cap(n.where() + ": a constant of " + std::to_string(shape_numel(shape) * eb) +
               " bytes exceeds --max-folded-bytes " + std::to_string(g.limits.max_folded_bytes));
    Bytes b((size_t)(shape_numel(shape) * eb));
    for (int64_t i = 0; i < shape_numel(shape); ++i) std::memcpy(b.data() + i * eb, v->bytes.data(), eb);
    return std::vector<ConstP>{make_const(v->dtype, shape, std::move(b))};
  };
  d.dims = [](Node &n, Graph &g) { dims_from_shape_input(n, g, 0, n.out[0]); };
  d.lower = [value_of](const Node &n, LowerCtx &c) {
    ConstP v = value_of(n);
    ExprP e = dtype_is_float(v->dtype) ? cst(v->dtype, v->get_f(0)) : cst(v->dtype, (double)v->get_i(0));
    c.kernel(n.out[0], {}, e);
  };
  register_op(std::move(d));
}

// Shape: a constant for fixed dimensions; of a value with run-time
// dimensions, a symbolic value (ops/sym_values.cpp) that is also computed
// at run time for readers that take it as data.
void def_shape() {
  auto range = [](const Node &n, int64_t r) {
    int64_t b = n.geti("start", 0), e = n.geti("end", r);
    if (b < 0) b += r;
    if (e < 0) e += r;
    b = std::max<int64_t>(0, std::min(b, r));
    e = std::max<int64_t>(b, std::min(e, r));
    return std::make_pair(b, e);
  };
  OpDef d;
  d.name = "Shape";
  d.attrs = {"start", "end"};
  d.infer = [range](Node &n, Graph &g) {
    auto be = range(n, in_val(g, n, 0).rank());
    set_out(n, g, 0, DType::I64, {be.second - be.first});
  };
  d.fold = [range](const Node &n, const Graph &g) {
    const Shape &x = in_val(g, n, 0).shape;
    auto be = range(n, (int64_t)x.size());
    std::vector<int64_t> v(x.begin() + be.first, x.begin() + be.second);
    return std::vector<ConstP>{make_const_i64({(int64_t)v.size()}, v)};
  };
  d.dims = [](Node &, Graph &) {};                 // the output's own shape is fixed
  d.lower = [range](const Node &n, LowerCtx &c) {  // run-time extents, as data
    auto be = range(n, in_val(c.g, n, 0).rank());
    ExprP e = cst(DType::I64, 0);
    for (int64_t a = be.second; a-- > be.first;)
      e = select(bin(EOp::Eq, var(0), cidx(a - be.first)), cast(c.g.extent(n.in[0], (int)a), DType::I64), e);
    c.kernel(n.out[0], {}, e);
  };
  register_op(std::move(d));
}

}  // namespace

void register_shape_ops() {
  def_view_op("Reshape", {"shape", "allowzero"}, {1}, reshape_shape);
  def_view_op("Flatten", {"axis"}, {}, flatten_shape);
  def_view_op("Squeeze", {"axes"}, {1}, squeeze_shape);
  def_view_op("Unsqueeze", {"axes"}, {1}, unsqueeze_shape);
  def_transpose();
  def_concat();
  def_split();
  def_slice();
  def_pad();
  def_gather();
  def_expand();
  def_cast();
  def_folding("Constant", {"value", "value_float", "value_floats", "value_int", "value_ints"}, {},
              [](const Node &n, const Graph &) { return const_from_attr(n); });
  def_shape();
  def_folding("Size", {}, {},
              [](const Node &n, const Graph &g) { return make_const_i64({}, {in_val(g, n, 0).numel()}); });
  def_constant_of_shape();
}

}  // namespace tinyrt
