// elementwise.cpp — unary and binary elementwise ops and activations, each
// a one-line element expression.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

using UnaryFn = std::function<ExprP(ExprP x, const Node &n)>;

const std::vector<DType> kFloat = {DType::F32, DType::F64};
const std::vector<DType> kNumeric = {DType::F32, DType::F64, DType::I8,  DType::U8,
                                     DType::I16, DType::U16, DType::I32, DType::U32,
                                     DType::I64, DType::U64};

ExprP fc(const ExprP &like, double v) { return cst(like->type, v); }

void def_unary(const std::string &name, int min_opset, std::vector<std::string> attrs,
               std::vector<DType> types, UnaryFn f) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = std::move(attrs);
  d.infer = [types](Node &n, Graph &g) {
    require_types(n, g, 0, types);
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [f](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    c.kernel(n.out[0], {n.in[0]}, f(load(0, x.dtype, out_vars(x.rank())), n));
  };
  register_op(std::move(d));
}

using BinaryFn = std::function<ExprP(ExprP a, ExprP b)>;

void def_binary(const std::string &name, int min_opset, std::vector<DType> types, BinaryFn f,
                bool compare = false) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.infer = [types, compare](Node &n, Graph &g) {
    require_types(n, g, 0, types);
    const Value &a = in_val(g, n, 0), &b = in_val(g, n, 1);
    if (a.dtype != b.dtype)
      fail_invalid(n.where() + ": input types differ (" + dtype_name(a.dtype) + " vs " +
                   dtype_name(b.dtype) + ")");
    set_out(n, g, 0, compare ? DType::Bool : a.dtype, broadcast_shapes(a.shape, b.shape, n));
  };
  d.lower = [f](const Node &n, LowerCtx &c) {
    const Value &a = in_val(c.g, n, 0), &b = in_val(c.g, n, 1);
    int r = c.g.v(n.out[0]).rank();
    c.kernel(n.out[0], {n.in[0], n.in[1]},
             f(load(0, a.dtype, broadcast_index(a.shape, r)),
               load(1, b.dtype, broadcast_index(b.shape, r))));
  };
  register_op(std::move(d));
}

// Clip: bounds are attributes before opset 11, optional scalar inputs after.
void def_clip() {
  OpDef d;
  d.name = "Clip";
  d.min_opset = 1;
  d.attrs = {"min", "max"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 0, kNumeric);
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
        if (!t.is_const() || t.data->get_i(0) != 0)
          fail_unsupported(n.where() + ": training_mode must be a constant false");
      }
      if (n.out.size() > 1 && n.out[1] >= 0)  // the mask of inference: all true
        c.kernel(n.out[1], {}, cbool(true));
    }
    c.alias(n.out[0], n.in[0]);
  };
  register_op(std::move(d));
}

}  // namespace

void register_elementwise_ops() {
  // Activations.
  def_unary("Relu", 6, {}, kNumeric, [](ExprP x, const Node &) { return emax(x, fc(x, 0)); });
  def_unary("Sigmoid", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Sigmoid, x); });
  def_unary("Tanh", 6, {}, kFloat, [](ExprP x, const Node &) { return un(EOp::Tanh, x); });
  def_unary("HardSigmoid", 6, {"alpha", "beta"}, kFloat, [](ExprP x, const Node &n) {
    ExprP y = x * fc(x, n.getf("alpha", 0.2f)) + fc(x, n.getf("beta", 0.5f));
    return emax(fc(x, 0), emin(fc(x, 1), y));
  });
  def_unary("HardSwish", 14, {}, kFloat, [](ExprP x, const Node &) {
    ExprP y = x * fc(x, 1.0 / 6.0) + fc(x, 0.5);
    return x * emax(fc(x, 0), emin(fc(x, 1), y));
  });
  def_unary("LeakyRelu", 6, {"alpha"}, kFloat, [](ExprP x, const Node &n) {
    return select(lt(x, fc(x, 0)), x * fc(x, n.getf("alpha", 0.01f)), x);
  });
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

  def_binary("Add", 7, kNumeric, [](ExprP a, ExprP b) { return a + b; });
  def_binary("Sub", 7, kNumeric, [](ExprP a, ExprP b) { return a - b; });
  def_binary("Mul", 7, kNumeric, [](ExprP a, ExprP b) { return a * b; });
  def_binary("Div", 7, kNumeric, [](ExprP a, ExprP b) { return a / b; });

  def_view("Identity", {});
  def_view("Dropout", {"ratio", "seed", "is_test"});
}

}  // namespace tinyrt
