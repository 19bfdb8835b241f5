// elementwise.cpp — unary and binary elementwise ops and activations, each
// a one-line element expression.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

using UnaryFn = std::function<ExprP(ExprP x, const Node &n)>;

const std::vector<DType> kFloat = {DType::F32, DType::F64, DType::F16, DType::BF16};
const std::vector<DType> kNumeric = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,  DType::U8,
                                     DType::I16, DType::U16, DType::I32, DType::U32,  DType::I64, DType::U64};

ExprP fc(const ExprP &like, double v) { return cst(like->type, v); }

void def_unary(const std::string &name, int min_opset, std::vector<std::string> attrs, std::vector<DType> types,
               UnaryFn f, DType out_type = DType::Undefined) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = std::move(attrs);
  d.types = types;
  d.infer = [types, out_type](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, out_type == DType::Undefined ? x.dtype : out_type, x.shape);
  };
  d.lower = [f](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    c.kernel(n.out[0], {n.in[0]}, f(load(0, x.dtype, out_vars(x.rank())), n));
  };
  d.dims = dims_like_input;
  register_op(std::move(d));
}

using BinaryFn = std::function<ExprP(ExprP a, ExprP b)>;

// Before opset 7, B broadcasts to A only with broadcast=1, its axes
// aligned from `axis` (default: trailing). Returns B's index, or empty when
// the numpy rules apply.
std::vector<ExprP> legacy_broadcast(const Node &n, const Shape &a, const Shape &b) {
  if (n.opset >= 7) return {};
  if (!n.geti("broadcast", 0)) {
    if (a != b) fail_invalid(n.where() + ": shapes differ and broadcast=0");
    return out_vars((int)a.size());
  }
  int64_t axis = n.geti("axis", (int64_t)(a.size() - b.size()));
  if (axis < 0) axis += (int64_t)a.size();
  std::vector<ExprP> idx;
  for (size_t k = 0; k < b.size(); ++k) {
    int64_t ak = axis + (int64_t)k;
    if (ak >= (int64_t)a.size() || (b[k] != 1 && b[k] != a[ak]))
      fail_invalid(n.where() + ": B " + shape_str(b) + " does not broadcast to A " + shape_str(a) + " at axis " +
                   std::to_string(axis));
    idx.push_back(b[k] == 1 ? cidx(0) : var((int)ak));
  }
  return idx;
}

void def_binary(const std::string &name, int min_opset, std::vector<DType> types, BinaryFn f, bool compare = false,
                std::vector<std::string> attrs = {}) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = std::move(attrs);
  if (min_opset < 7) d.attrs.insert(d.attrs.end(), {"broadcast", "axis", "consumed_inputs"});
  d.types = types;
  d.infer = [types, compare](Node &n, Graph &g) {
    const Value &a = in_val(g, n, 0), &b = in_val(g, n, 1);
    if (a.dtype != b.dtype)
      fail_invalid(n.where() + ": input types differ (" + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype) + ")");
    Shape s = n.opset < 7 ? (legacy_broadcast(n, a.shape, b.shape), a.shape) : broadcast_shapes(a.shape, b.shape, n);
    set_out(n, g, 0, compare ? DType::Bool : a.dtype, s);
  };
  d.lower = [f](const Node &n, LowerCtx &c) {
    const Value &a = in_val(c.g, n, 0), &b = in_val(c.g, n, 1);
    int r = c.g.v(n.out[0]).rank();
    std::vector<ExprP> bi = legacy_broadcast(n, a.shape, b.shape);
    if (n.opset >= 7) bi = broadcast_index(b.shape, r);
    c.kernel(n.out[0], {n.in[0], n.in[1]}, f(load(0, a.dtype, broadcast_index(a.shape, r)), load(1, b.dtype, bi)));
  };
  d.dims = [](Node &n, Graph &g) {
    if (n.opset < 7) fail_unsupported(n.where() + ": run-time dimensions need numpy broadcasting (opset 7 or later)");
    dims_broadcast(n, g);
  };
  register_op(std::move(d));
}

// Clip: bounds are attributes before opset 11, optional scalar inputs after.
void def_clip() {
  OpDef d;
  d.name = "Clip";
  d.min_opset = 1;
  d.attrs = {"min", "max"};
  d.types = kNumeric;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    for (size_t k = 1; k < 3; ++k)
      if (n.has_in(k) && (in_val(g, n, k).numel() != 1 || in_val(g, n, k).dtype != x.dtype))
        fail_invalid(n.where() + ": min/max must be scalars of the input's type");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    std::vector<int> ins = {n.in[0]};
    ExprP y = load(0, x.dtype, out_vars(x.rank()));
    auto bound = [&](size_t k, const char *attr, double def) -> ExprP {
      if (n.opset < 11) return n.has(attr) ? fc(y, n.getf(attr, 0)) : (std::isinf(def) ? nullptr : fc(y, def));
      if (!n.has_in(k)) return nullptr;
      const Value &b = in_val(c.g, n, k);
      if (b.is_const()) return dtype_is_float(b.dtype) ? fc(y, b.data->get_f(0)) : fc(y, (double)b.data->get_i(0));
      ins.push_back(n.in[k]);
      return load((int)ins.size() - 1, b.dtype, std::vector<ExprP>(b.rank(), cidx(0)));
    };
    ExprP lo = bound(1, "min", -INFINITY), hi = bound(2, "max", INFINITY);
    if (lo) y = emax(y, lo);
    if (hi) y = emin(y, hi);
    c.kernel(n.out[0], ins, y);
  };
  d.dims = dims_like_input;
  register_op(std::move(d));
}

// Identity-like ops are views of their input.
void def_view(const std::string &name, std::vector<std::string> attrs) {
  OpDef d;
  d.name = name;
  d.attrs = std::move(attrs);
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, x.dtype, x.shape);
    set_out(n, g, 1, DType::Bool, x.shape);  // Dropout's mask
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    if (n.op == "Dropout") {
      if (n.has_in(2)) {
        const Value &t = in_val(c.g, n, 2);
        require_one_element(n, c.g, 2, "training_mode");
        if (!t.is_const() || t.data->get_i(0) != 0)
          fail_unsupported(n.where() + ": training_mode is out of scope (training, random)");
      }
      if (n.out.size() > 1 && n.out[1] >= 0)  // the mask of inference: all true
        c.kernel(n.out[1], {}, cbool(true));
    }
    c.alias(n.out[0], n.in[0]);
  };
  d.dims = dims_like_input;
  register_op(std::move(d));
}

const std::vector<DType> kAll = {DType::F32, DType::F64, DType::I8,  DType::U8,  DType::I16, DType::U16,
                                 DType::I32, DType::U32, DType::I64, DType::U64, DType::Bool};
const std::vector<DType> kInts = {DType::I8,  DType::U8,  DType::I16, DType::U16,
                                  DType::I32, DType::U32, DType::I64, DType::U64};

// Shape of all inputs broadcast together.
Shape broadcast_all(const Node &n, const Graph &g, size_t first = 0) {
  Shape s;
  for (size_t k = first; k < n.in.size(); ++k)
    if (n.has_in(k)) s = k == first ? in_val(g, n, k).shape : broadcast_shapes(s, in_val(g, n, k).shape, n);
  return s;
}

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
void def_variadic(const std::string &name, int min_opset, EOp op, bool mean) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.types = kNumeric;
  d.infer = [](Node &n, Graph &g) {
    for (size_t k = 1; k < n.in.size(); ++k)
      if (in_val(g, n, k).dtype != in_val(g, n, 0).dtype) fail_invalid(n.where() + ": input types differ");
    set_out(n, g, 0, in_val(g, n, 0).dtype, broadcast_all(n, g));
  };
  d.lower = [op, mean](const Node &n, LowerCtx &c) {
    const Value &y = c.g.v(n.out[0]);
    ExprP e;
    for (size_t k = 0; k < n.in.size(); ++k) {
      const Value &x = in_val(c.g, n, k);
      ExprP v = load((int)k, x.dtype, broadcast_index(x.shape, y.rank()));
      e = e ? bin(op, e, v) : v;
    }
    if (mean) e = e / cst(y.dtype, (double)n.in.size());
    c.kernel(n.out[0], n.in, e);
  };
  d.dims = dims_broadcast;
  register_op(std::move(d));
}

// Pow: base and exponent may differ in type (opset 12). Integer by integer
// is exact (EOp::Pow on integers: repeated squaring, wrapping modulo 2^w;
// operands of two integer types are computed in int64 and wrapped to the
// base's type, which gives the same bits); with a float operand it is
// computed in floating point and an integer result rounded.
void def_pow() {
  OpDef d;
  d.name = "Pow";
  d.min_opset = 1;
  d.attrs = {"broadcast", "axis"};
  d.types = {DType::F32, DType::F64, DType::I32, DType::I64};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, kNumeric);
    const Shape &as = in_val(g, n, 0).shape, &bs = in_val(g, n, 1).shape;
    set_out(n, g, 0, in_val(g, n, 0).dtype,
            n.opset < 7 ? (legacy_broadcast(n, as, bs), as) : broadcast_shapes(as, bs, n));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &a = in_val(c.g, n, 0), &b = in_val(c.g, n, 1);
    int r = c.g.v(n.out[0]).rank();
    if (!dtype_is_float(a.dtype) && !dtype_is_float(b.dtype)) {
      DType it = a.dtype == b.dtype ? a.dtype : DType::I64;
      ExprP x = cast(load(0, a.dtype, broadcast_index(a.shape, r)), it);
      std::vector<ExprP> bi = n.opset < 7 ? legacy_broadcast(n, a.shape, b.shape) : broadcast_index(b.shape, r);
      ExprP p = bin(EOp::Pow, x, cast(load(1, b.dtype, bi), it));
      c.kernel(n.out[0], {n.in[0], n.in[1]}, it == a.dtype ? p : cast(p, a.dtype));
      return;
    }
    DType ct = a.dtype == DType::F32 ? DType::F32 : DType::F64;
    ExprP x = cast(load(0, a.dtype, broadcast_index(a.shape, r)), ct);
    std::vector<ExprP> bi = n.opset < 7 ? legacy_broadcast(n, a.shape, b.shape) : broadcast_index(b.shape, r);
    ExprP y = cast(load(1, b.dtype, bi), ct);
    // A constant exponent of 1, 2 or 3 (LayerNorm's variance, ...) is
    // multiplication: exact for 1 and 2, and no exp/log per element.
    double e = 0;
    bool uniform = b.is_const() && b.numel() > 0;
    for (int64_t i = 0; uniform && i < b.numel(); ++i) {
      if (i == 0) e = b.data->get_f(0);
      uniform = b.data->get_f(i) == e;
    }
    if (uniform && (e == 1 || e == 2 || e == 3)) {
      ExprP q = e == 1 ? x : e == 2 ? x * x : x * x * x;
      c.kernel(n.out[0], {n.in[0]}, dtype_is_float(a.dtype) ? q : cast(q, a.dtype));
      return;
    }
    ExprP p = bin(EOp::Pow, x, y);
    if (!dtype_is_float(a.dtype)) p = cast(un(EOp::Round, p), a.dtype);
    c.kernel(n.out[0], {n.in[0], n.in[1]}, p);
  };
  d.dims = [](Node &n, Graph &g) {
    if (n.opset < 7) fail_unsupported(n.where() + ": run-time dimensions need numpy broadcasting (opset 7 or later)");
    dims_broadcast(n, g);
  };
  register_op(std::move(d));
}

// Where(cond, x, y) with broadcasting. The merge of an If with a runtime
// condition (control_flow.cpp, attribute _if_condition) selects between the
// branches' values, which must have one shape, by its one-element
// condition: the output has the branches' shape.
void def_where() {
  OpDef d;
  d.name = "Where";
  d.min_opset = 9;
  d.types = {DType::Bool};
  d.infer = [](Node &n, Graph &g) {
    if (in_val(g, n, 1).dtype != in_val(g, n, 2).dtype) fail_invalid(n.where() + ": x and y types differ");
    // A Loop's carried value past a run-time trip count (control_flow.cpp,
    // attribute _loop_carried): the iteration's value or
    // the one before it, which must have one shape (broadcasting one to the
    // other would change the value).
    if (n.has("_loop_carried")) {
      const Value &x = in_val(g, n, 1), &y = in_val(g, n, 2);
      if (x.shape != y.shape || x.dims != y.dims)
        fail_unsupported(n.where() + ": the carried value '" + y.name + "' changes shape from " + shape_str(y.shape) +
                         " to " + shape_str(x.shape) + " in an iteration, with a trip count computed at run time");
    }
    if (n.has("_if_condition")) {
      // Branches that differ in shape: a constant condition decides; a
      // symbolic one (a condition on run-time extents) gives the output
      // the larger bounds and the taken branch's extents (dims below).
      const Value &t = in_val(g, n, 1), &e = in_val(g, n, 2);
      Shape s = t.shape;
      if (t.shape != e.shape) {
        if (!in_val(g, n, 0).is_sym() || t.rank() != e.rank()) throw_constant_required(g, n, n.in[0]);
        for (size_t a = 0; a < s.size(); ++a) s[a] = std::max(t.shape[a], e.shape[a]);
      }
      set_out(n, g, 0, t.dtype, s);
      return;
    }
    set_out(n, g, 0, in_val(g, n, 1).dtype, broadcast_all(n, g));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &o = c.g.v(n.out[0]);
    int r = o.rank();
    auto ld = [&](int k) {
      const Value &x = in_val(c.g, n, k);
      const Shape &s = x.shape;
      if (k == 0 && n.has("_if_condition")) return load(0, DType::Bool, std::vector<ExprP>(s.size(), cidx(0)));
      if (n.has("_if_condition") && s != o.shape) {  // a branch of smaller bounds: its elements, clamped
        if (x.numel() == 0) return cst(x.dtype, 0);  // (never read: its extents are then 0)
        std::vector<ExprP> idx = out_vars(r);
        for (int a = 0; a < r; ++a)
          if (s[(size_t)a] != o.shape[(size_t)a]) idx[(size_t)a] = emin(idx[(size_t)a], cidx(s[(size_t)a] - 1));
        return load(k, x.dtype, idx);
      }
      return load(k, x.dtype, broadcast_index(s, r));
    };
    c.kernel(n.out[0], n.in, select(ld(0), ld(1), ld(2)));
  };
  // An If's merge under a symbolic condition: each axis takes the taken
  // branch's extent.
  d.dims = [](Node &n, Graph &g) {
    const Value &cond = in_val(g, n, 0);
    if (!n.has("_if_condition") || !cond.is_sym() || cond.is_const()) {
      dims_broadcast(n, g);
      return;
    }
    Value &o = g.v(n.out[0]);
    ExprP taken = bin(EOp::Ne, sym_index(cond.sym.at(0)), cidx(0));
    std::vector<int> dims((size_t)o.rank(), -1);
    for (int a = 0; a < o.rank(); ++a) {
      ExprP t = g.extent(n.in[1], a), e = g.extent(n.in[2], a);
      if (t->is_const() && e->is_const() && t->ival == e->ival) continue;
      dims[(size_t)a] = g.derived_sym(select(taken, t, e), o.name + "[" + std::to_string(a) + "]");
    }
    o.dims = dims;
    if (!o.is_dynamic()) o.dims.clear();
  };
  register_op(std::move(d));
}

// x ? where slope broadcasts to x (PRelu).
void def_prelu() {
  OpDef d;
  d.name = "PRelu";
  d.min_opset = 6;
  d.attrs = {"consumed_inputs"};
  // Before opset 7 a 1-D slope runs along the channel axis.
  auto channel_slope = [](const Node &n, const Value &x, const Value &sl) {
    return n.opset < 7 && sl.rank() == 1 && sl.numel() > 1 && x.rank() >= 2 && sl.shape[0] == x.shape[1];
  };
  d.types = {DType::F32, DType::F64, DType::I32, DType::I64};
  d.infer = [channel_slope](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &sl = in_val(g, n, 1);
    if (!channel_slope(n, x, sl) && broadcast_shapes(x.shape, sl.shape, n) != x.shape)
      fail_invalid(n.where() + ": slope does not broadcast to the input");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [channel_slope](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &sl = in_val(c.g, n, 1);
    ExprP v = load(0, x.dtype, out_vars(x.rank()));
    ExprP a =
        channel_slope(n, x, sl) ? load(1, sl.dtype, {var(1)}) : load(1, sl.dtype, broadcast_index(sl.shape, x.rank()));
    c.kernel(n.out[0], {n.in[0], n.in[1]}, select(lt(v, cst(x.dtype, 0)), v * a, v));
  };
  d.dims = [](Node &n, Graph &g) {
    if (n.opset < 7) fail_unsupported(n.where() + ": run-time dimensions need numpy broadcasting (opset 7 or later)");
    dims_broadcast(n, g);
  };
  register_op(std::move(d));
}

// Mod: fmod=1 is C's fmod (sign of the dividend); fmod=0 (integers) is
// Python's (sign of the divisor).
void def_mod() {
  OpDef d;
  d.name = "Mod";
  d.min_opset = 10;
  d.attrs = {"fmod"};
  d.types = kNumeric;
  d.infer = [](Node &n, Graph &g) {
    const Value &a = in_val(g, n, 0), &b = in_val(g, n, 1);
    if (a.dtype != b.dtype) fail_invalid(n.where() + ": input types differ");
    if (dtype_is_float(a.dtype) && n.geti("fmod", 0) == 0)
      fail_invalid(n.where() + ": fmod=0 is not defined for floating-point inputs");
    set_out(n, g, 0, a.dtype, broadcast_shapes(a.shape, b.shape, n));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &a = in_val(c.g, n, 0), &b = in_val(c.g, n, 1);
    int r = c.g.v(n.out[0]).rank();
    ExprP x = load(0, a.dtype, broadcast_index(a.shape, r)), y = load(1, b.dtype, broadcast_index(b.shape, r));
    ExprP m = bin(EOp::Rem, x, y);
    if (!n.geti("fmod", 0) && dtype_is_signed(a.dtype)) {
      ExprP zero = cst(a.dtype, 0);
      ExprP fix = land(bin(EOp::Ne, m, zero), bin(EOp::Ne, lt(m, zero), lt(y, zero)));
      m = select(fix, m + y, m);
    }
    c.kernel(n.out[0], {n.in[0], n.in[1]}, m);
  };
  d.dims = dims_broadcast;
  register_op(std::move(d));
}

void def_bitshift() {
  OpDef d;
  d.name = "BitShift";
  d.min_opset = 11;
  d.attrs = {"direction"};
  d.types = {DType::U8, DType::U16, DType::U32, DType::U64};
  d.infer = [](Node &n, Graph &g) {
    std::string dir = n.gets("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") fail_invalid(n.where() + ": direction must be LEFT or RIGHT");
    set_out(n, g, 0, in_val(g, n, 0).dtype, broadcast_shapes(in_val(g, n, 0).shape, in_val(g, n, 1).shape, n));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &a = in_val(c.g, n, 0), &b = in_val(c.g, n, 1);
    int r = c.g.v(n.out[0]).rank();
    EOp op = n.gets("direction", "") == "LEFT" ? EOp::Shl : EOp::Shr;
    c.kernel(n.out[0], {n.in[0], n.in[1]},
             bin(op, load(0, a.dtype, broadcast_index(a.shape, r)), load(1, b.dtype, broadcast_index(b.shape, r))));
  };
  register_op(std::move(d));
}

void def_castlike() {
  OpDef d;
  d.name = "CastLike";
  d.min_opset = 15;
  d.attrs = {"saturate"};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &like = in_val(g, n, 1);
    if (!dtype_supported(x.dtype) || !dtype_supported(like.dtype))
      fail_unsupported(n.where() + ": cast from " + dtype_name(x.dtype) + " to " + dtype_name(like.dtype));
    set_out(n, g, 0, like.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    c.kernel(n.out[0], {n.in[0]}, cast(load(0, x.dtype, out_vars(x.rank())), in_val(c.g, n, 1).dtype));
  };
  d.dims = dims_like_input;
  register_op(std::move(d));
}

ExprP sinh_expr(ExprP x) {
  ExprP e = un(EOp::Exp, x), one = fc(x, 1);
  ExprP big = (e - one / e) * fc(x, 0.5);
  ExprP x2 = x * x;  // x + x^3/6 + x^5/120 + x^7/5040 near 0 (no cancellation)
  ExprP small = x * (one + x2 * (fc(x, 1.0 / 6) + x2 * (fc(x, 1.0 / 120) + x2 * fc(x, 1.0 / 5040))));
  return select(lt(un(EOp::Abs, x), fc(x, 0.5)), small, big);
}

ExprP log1p_expr(ExprP x) { return un(EOp::Log, fc(x, 1) + x); }

}  // namespace

ExprP activation_expr(const std::string &f, ExprP x, double alpha, double beta) {
  auto c = [&](double v) { return fc(x, v); };
  if (f == "Relu") return emax(x, c(0));
  if (f == "Sigmoid") return un(EOp::Sigmoid, x);
  if (f == "Tanh") return un(EOp::Tanh, x);
  if (f == "HardSigmoid") return emax(c(0), emin(c(1), x * c(alpha) + c(beta)));
  if (f == "LeakyRelu") return select(lt(x, c(0)), x * c(alpha), x);
  if (f == "ThresholdedRelu") return select(bin(EOp::Gt, x, c(alpha)), x, c(0));
  if (f == "Elu") return select(lt(x, c(0)), c(alpha) * (un(EOp::Exp, x) - c(1)), x);
  // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): never overflows.
  if (f == "Softplus") return emax(x, c(0)) + log1p_expr(un(EOp::Exp, un(EOp::Neg, un(EOp::Abs, x))));
  if (f == "Softsign") return x / (c(1) + un(EOp::Abs, x));
  // Only the recurrent ops' (ONNX's Affine and ScaledTanh ops are gone).
  if (f == "Affine") return c(alpha) * x + c(beta);
  if (f == "ScaledTanh") return c(alpha) * un(EOp::Tanh, c(beta) * x);
  return nullptr;
}

namespace {

// An elementwise op that is one of the activation functions.
void def_activation(const std::string &name, int min_opset, std::vector<std::string> attrs, std::vector<DType> types,
                    float alpha = 0, float beta = 0) {
  def_unary(name, min_opset, attrs, types, [name, alpha, beta](ExprP x, const Node &n) {
    return activation_expr(name, x, n.getf("alpha", alpha), n.getf("beta", beta));
  });
}

}  // namespace

void register_elementwise_ops() {
  // Activations.
  def_activation("Relu", 6, {}, kNumeric);
  def_activation("Sigmoid", 6, {}, kFloat);
  def_activation("Tanh", 6, {}, kFloat);
  def_activation("HardSigmoid", 6, {"alpha", "beta"}, kFloat, 0.2f, 0.5f);
  def_unary("HardSwish", 14, {}, kFloat, [](ExprP x, const Node &) {
    ExprP y = x * fc(x, 1.0 / 6.0) + fc(x, 0.5);
    return x * emax(fc(x, 0), emin(fc(x, 1), y));
  });
  def_activation("LeakyRelu", 6, {"alpha"}, kFloat, 0.01f);
  def_clip();
  // Plain math.
  def_unary("Neg", 6, {}, kNumeric, [](ExprP x, const Node &) { return un(EOp::Neg, x); });
  def_unary("Abs", 6, {}, kNumeric, [](ExprP x, const Node &) { return un(EOp::Abs, x); });
  def_unary("Sqrt", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Sqrt, x); });
  def_unary("Exp", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Exp, x); });
  def_unary("Log", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Log, x); });
  def_unary("Erf", 9, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Erf, x); });
  def_unary("Floor", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Floor, x); });
  def_unary("Ceil", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Ceil, x); });
  def_unary("Reciprocal", 6, {}, kFloat, [](ExprP x, const Node &) { return fc(x, 1) / x; });

  def_binary("Add", 1, kNumeric, [](ExprP a, ExprP b) { return a + b; });
  def_binary("Sub", 1, kNumeric, [](ExprP a, ExprP b) { return a - b; });
  def_binary("Mul", 1, kNumeric, [](ExprP a, ExprP b) { return a * b; });
  def_binary("Div", 1, kNumeric, [](ExprP a, ExprP b) { return a / b; });

  // Trigonometric and hyperbolic functions.
  def_unary("Sin", 7, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Sin, x); });
  def_unary("Cos", 7, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Cos, x); });
  def_unary("Tan", 7, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Tan, x); });
  def_unary("Atan", 7, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Atan, x); });
  def_unary("Asin", 7, {}, kFloat, [](ExprP x, const Node &) {
    // asin x = atan(x / sqrt(1 - x^2)); |x| > 1 gives NaN through the sqrt.
    ExprP one = fc(x, 1);
    return un(EOp::Atan, x / un(EOp::Sqrt, (one - x) * (one + x)));
  });
  def_unary("Acos", 7, {}, kFloat, [](ExprP x, const Node &) {
    ExprP one = fc(x, 1);  // acos x = 2 atan(sqrt((1 - x) / (1 + x)))
    return fc(x, 2) * un(EOp::Atan, un(EOp::Sqrt, (one - x) / (one + x)));
  });
  def_unary("Sinh", 9, {}, kFloat, [](ExprP x, const Node &) { return sinh_expr(x); });
  def_unary("Cosh", 9, {}, kFloat, [](ExprP x, const Node &) {
    ExprP e = un(EOp::Exp, x);
    return (e + fc(x, 1) / e) * fc(x, 0.5);
  });
  def_unary("Asinh", 9, {}, kFloat, [](ExprP x, const Node &) {
    ExprP a = un(EOp::Abs, x);  // sign(x) log(|x| + sqrt(x^2 + 1))
    ExprP r = un(EOp::Log, a + un(EOp::Sqrt, a * a + fc(x, 1)));
    return select(lt(x, fc(x, 0)), un(EOp::Neg, r), r);
  });
  def_unary("Acosh", 9, {}, kFloat,
            [](ExprP x, const Node &) { return un(EOp::Log, x + un(EOp::Sqrt, (x - fc(x, 1)) * (x + fc(x, 1)))); });
  def_unary("Atanh", 9, {}, kFloat,
            [](ExprP x, const Node &) { return fc(x, 0.5) * un(EOp::Log, (fc(x, 1) + x) / (fc(x, 1) - x)); });
  // More activations.
  def_activation("Softplus", 1, {}, kFloat);
  def_activation("Softsign", 1, {}, kFloat);
  def_activation("Elu", 6, {"alpha"}, kFloat, 1.0f);
  def_unary("Selu", 6, {"alpha", "gamma"}, kFloat, [](ExprP x, const Node &n) {
    double alpha = n.getf("alpha", 1.67326319217681884765625f), gamma = n.getf("gamma", 1.05070102214813232421875f);
    return fc(x, gamma) * select(bin(EOp::Le, x, fc(x, 0)), fc(x, alpha) * (un(EOp::Exp, x) - fc(x, 1)), x);
  });
  def_unary("Celu", 12, {"alpha"}, kFloat, [](ExprP x, const Node &n) {
    ExprP a = fc(x, n.getf("alpha", 1.0f));
    return emax(fc(x, 0), x) + emin(fc(x, 0), a * (un(EOp::Exp, x / a) - fc(x, 1)));
  });
  def_activation("ThresholdedRelu", 10, {"alpha"}, kFloat, 1.0f);
  def_unary("Shrink", 9, {"bias", "lambd"}, kNumeric, [](ExprP x, const Node &n) {
    double l = n.getf("lambd", 0.5f), b = n.getf("bias", 0.0f);
    return select(lt(x, fc(x, -l)), x + fc(x, b), select(bin(EOp::Gt, x, fc(x, l)), x - fc(x, b), fc(x, 0)));
  });
  def_unary("Round", 11, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Round, x); });
  def_unary("Sign", 9, {}, kNumeric, [](ExprP x, const Node &) {
    return select(bin(EOp::Gt, x, fc(x, 0)), fc(x, 1), select(lt(x, fc(x, 0)), fc(x, -1), fc(x, 0)));
  });
  def_unary(
      "IsNaN", 9, {}, kFloat, [](ExprP x, const Node &) { return bin(EOp::Ne, x, x); }, DType::Bool);
  def_unary(
      "IsInf", 10, {"detect_negative", "detect_positive"}, kFloat,
      [](ExprP x, const Node &n) {
        ExprP pos = bin(EOp::Eq, x, fc(x, INFINITY)), neg = bin(EOp::Eq, x, fc(x, -INFINITY));
        bool dn = n.geti("detect_negative", 1), dp = n.geti("detect_positive", 1);
        return dn && dp ? bin(EOp::Or, pos, neg) : dn ? neg : dp ? pos : cbool(false);
      },
      DType::Bool);
  def_unary("Not", 1, {}, {DType::Bool}, [](ExprP x, const Node &) { return un(EOp::Not, x); });

  // Comparisons and logic.
  def_binary(
      "Equal", 7, kAll, [](ExprP a, ExprP b) { return bin(EOp::Eq, a, b); }, true);
  def_binary(
      "Less", 7, kNumeric, [](ExprP a, ExprP b) { return bin(EOp::Lt, a, b); }, true);
  def_binary(
      "Greater", 7, kNumeric, [](ExprP a, ExprP b) { return bin(EOp::Gt, a, b); }, true);
  def_binary(
      "LessOrEqual", 12, kNumeric, [](ExprP a, ExprP b) { return bin(EOp::Le, a, b); }, true);
  def_binary(
      "GreaterOrEqual", 12, kNumeric, [](ExprP a, ExprP b) { return bin(EOp::Ge, a, b); }, true);
  def_binary("And", 7, {DType::Bool}, [](ExprP a, ExprP b) { return bin(EOp::And, a, b); });
  def_binary("Or", 7, {DType::Bool}, [](ExprP a, ExprP b) { return bin(EOp::Or, a, b); });
  def_binary("Xor", 7, {DType::Bool}, [](ExprP a, ExprP b) { return bin(EOp::Xor, a, b); });
  // Before opset 8 these take equal shapes, which the broadcasting covers.
  def_variadic("Max", 6, EOp::Max, false);
  def_variadic("Min", 6, EOp::Min, false);
  def_variadic("Sum", 6, EOp::Add, false);
  def_variadic("Mean", 6, EOp::Add, true);
  def_pow();
  def_where();
  def_prelu();
  def_mod();
  def_bitshift();
  def_castlike();

  def_view("Identity", {});
  def_view("Dropout", {"ratio", "seed", "is_test"});
}

}  // namespace tinyrt
