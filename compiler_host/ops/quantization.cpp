// quantization.cpp — QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv. Integer products accumulate in int32; requantization rounds
// half to even and saturates, as the spec says. With constant int8 weights
// (zero point 0) and a constant input zero point, the products run in the
// scheduled int8 GEMM (KernelKind::QGemm) and the rest of the op becomes
// its epilogue; otherwise the expression is lowered as it is.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

const std::vector<DType> kQuant = {DType::U8, DType::I8};

double qmin(DType t) { return t == DType::U8 ? 0 : -128; }
double qmax(DType t) { return t == DType::U8 ? 255 : 127; }

// saturate(round_half_even(v) + zp) as type t (v in float32).
ExprP quantize(ExprP v, ExprP zp_f, DType t) {
  ExprP q = un(EOp::Round, v) + zp_f;
  q = emax(cst(DType::F32, qmin(t)), emin(cst(DType::F32, qmax(t)), q));
  return cast(q, t);
}

// A scale or zero point: scalar, or 1-D along `axis` of a tensor of rank r.
ExprP param(const Value &p, int slot, int axis) {
  if (p.numel() == 1) return load(slot, p.dtype, std::vector<ExprP>(p.rank(), cidx(0)));
  return load(slot, p.dtype, {var(axis)});
}

// The axis of per-axis scales; ignored (and not validated) for per-tensor ones.
int quant_axis(const Node &n, const Graph &g, int rank) {
  if (in_val(g, n, 1).numel() == 1) return 0;
  return norm_axis(n.geti("axis", 1), rank, n);
}

// Scales and zero points are read by index without a bound (param(),
// minus_zp()): input k, when present, must hold one element or, where
// len > 0, be 1-D with len entries; of type t unless t is Undefined.
void check_param(const Node &n, const Graph &g, size_t k, const char *what, DType t, int64_t len) {
  if (!n.has_in(k)) return;
  const Value &p = in_val(g, n, k);
  if (t != DType::Undefined && p.dtype != t)
    fail_invalid(n.where() + ": " + what + " has type " + dtype_name(p.dtype) + ", expected " + dtype_name(t));
  if (p.numel() == 1 || (len > 0 && p.shape == Shape{len})) return;
  fail_invalid(n.where() + ": " + what + " has shape " + shape_str(p.shape) + "; expected one element" +
               (len > 0 ? " or [" + std::to_string(len) + "]" : std::string()));
}

// QuantizeLinear, DequantizeLinear: scale (input 1) and zero point (input
// 2) per tensor or along the axis, the zero point shaped as the scale.
void check_linear_params(const Node &n, const Graph &g, const char *scale, const char *zero_point, DType zp_type) {
  const Value &x = in_val(g, n, 0);
  int64_t len = in_val(g, n, 1).numel() == 1 ? 0 : x.shape[quant_axis(n, g, x.rank())];
  check_param(n, g, 1, scale, DType::F32, len);
  check_param(n, g, 2, zero_point, zp_type, len);
}

// QuantizeLinear and DequantizeLinear elementwise over run-time extents
// (an image of any size, quantized per tensor or per channel); a
// run-time axis cannot be the per-axis parameters' axis.
void quant_dims(Node &n, Graph &g) {
  const Value &x = in_val(g, n, 0);
  if (in_val(g, n, 1).numel() > 1) {
    int axis = quant_axis(n, g, x.rank());
    if (x.dim(axis) >= 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], axis) + " carries per-axis scales");
  }
  dims_like_input(n, g);
}

void def_quantize() {
  OpDef d;
  d.name = "QuantizeLinear";
  d.min_opset = 10;
  d.attrs = {"axis", "saturate"};
  d.types = {DType::F32, DType::I32};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 2, kQuant);
    check_linear_params(n, g, "y_scale", "y_zero_point", DType::Undefined);
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, n.has_in(2) ? in_val(g, n, 2).dtype : DType::U8, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = c.g.v(n.out[0]).dtype;
    int axis = quant_axis(n, c.g, x.rank());
    std::vector<int> ins = {n.in[0], n.in[1]};
    ExprP v = cast(load(0, x.dtype, out_vars(x.rank())), DType::F32) / param(in_val(c.g, n, 1), 1, axis);
    ExprP zp = cst(DType::F32, 0);
    if (n.has_in(2)) {
      ins.push_back(n.in[2]);
      zp = cast(param(in_val(c.g, n, 2), 2, axis), DType::F32);
    }
    c.kernel(n.out[0], ins, quantize(v, zp, t));
  };
  d.dims = quant_dims;
  register_op(std::move(d));
}

void def_dequantize() {
  OpDef d;
  d.name = "DequantizeLinear";
  d.min_opset = 10;
  d.attrs = {"axis"};
  d.types = {DType::U8, DType::I8, DType::I32};
  d.infer = [](Node &n, Graph &g) {
    check_linear_params(n, g, "x_scale", "x_zero_point", in_val(g, n, 0).dtype);
    set_out(n, g, 0, DType::F32, in_val(g, n, 0).shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int axis = quant_axis(n, c.g, x.rank());
    std::vector<int> ins = {n.in[0], n.in[1]};
    ExprP v = cast(load(0, x.dtype, out_vars(x.rank())), DType::I32);
    if (n.has_in(2)) {
      ins.push_back(n.in[2]);
      v = v - cast(param(in_val(c.g, n, 2), 2, axis), DType::I32);
    }
    c.kernel(n.out[0], ins, cast(v, DType::F32) * param(in_val(c.g, n, 1), 1, axis));
  };
  d.dims = quant_dims;
  register_op(std::move(d));
}

// y_scale = (max(0, max x) - min(0, min x)) / 255, zero point and y uint8.
void def_dynamic_quantize() {
  OpDef d;
  d.name = "DynamicQuantizeLinear";
  d.min_opset = 11;
  d.types = {DType::F32};
  d.infer = [](Node &n, Graph &g) {
    set_out(n, g, 0, DType::U8, in_val(g, n, 0).shape);
    set_out(n, g, 1, DType::F32, {});
    set_out(n, g, 2, DType::U8, {});
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int r = x.rank();
    std::vector<RVar> rv;
    std::vector<ExprP> all;
    for (int i = 0; i < r; ++i) {
      rv.push_back({kFirstReduceVar + i, x.shape[i]});
      all.push_back(var(kFirstReduceVar + i));
    }
    ExprP f0 = cst(DType::F32, 0);
    int lo = c.temp(x.name + "_min", DType::F32, {}), hi = c.temp(x.name + "_max", DType::F32, {});
    c.kernel(lo, {n.in[0]}, emin(f0, reduce(ReduceKind::Min, rv, load(0, DType::F32, all))));
    c.kernel(hi, {n.in[0]}, emax(f0, reduce(ReduceKind::Max, rv, load(0, DType::F32, all))));
    int scale = n.out[1] >= 0 ? n.out[1] : c.temp(x.name + "_scale", DType::F32, {});
    c.kernel(scale, {lo, hi}, (load(1, DType::F32, {}) - load(0, DType::F32, {})) / cst(DType::F32, 255));
    int zp = n.out.size() > 2 && n.out[2] >= 0 ? n.out[2] : c.temp(x.name + "_zp", DType::U8, {});
    c.kernel(zp, {lo, scale}, quantize(un(EOp::Neg, load(0, DType::F32, {})) / load(1, DType::F32, {}), f0, DType::U8));
    c.kernel(n.out[0], {n.in[0], scale, zp},
             quantize(load(0, DType::F32, out_vars(r)) / load(1, DType::F32, {}),
                      cast(load(2, DType::U8, {}), DType::F32), DType::U8));
  };
  register_op(std::move(d));
}

// (v - zero point) in int32; zp slot < 0: none. The zero point is a scalar
// or 1-D, indexed by `row` (A's row, B's column, W's output channel).
ExprP minus_zp(ExprP v, const Node &n, const Graph &g, int input, int slot, ExprP row) {
  ExprP x = cast(v, DType::I32);
  if (!n.has_in(input)) return x;
  const Value &z = in_val(g, n, input);
  ExprP zp = z.numel() == 1 ? load(slot, z.dtype, std::vector<ExprP>(z.rank(), cidx(0))) : load(slot, z.dtype, {row});
  return x - cast(zp, DType::I32);
}

// MatMulInteger, QLinearMatMul: A's zero point (input az) per tensor or per
// row of A, B's (input bz) per tensor or per column of B, each of its
// matrix's type.
void check_matmul_params(const Node &n, const Graph &g, size_t a, size_t az, size_t b, size_t bz) {
  const Value &A = in_val(g, n, a), &B = in_val(g, n, b);
  check_param(n, g, az, "a_zero_point", A.dtype, A.rank() >= 2 ? A.shape[A.rank() - 2] : 0);
  check_param(n, g, bz, "b_zero_point", B.dtype, B.rank() >= 2 ? B.shape.back() : 0);
}

// The scheduled int8 GEMM applies: int8 constant weights `w` with zero
// point 0 (input `wz` absent or all zeros) and a constant scalar zero point
// of input `x` (input `xz`, or none). Sets *x_zero.
bool qgemm_applies(const Node &n, const Graph &g, int x, int w, int xz, int wz, int64_t *x_zero) {
  const Value &W = g.v(n.in[w]);
  if (!W.is_const() || W.dtype != DType::I8) return false;
  DType xt = in_val(g, n, x).dtype;
  if (xt != DType::U8 && xt != DType::I8) return false;
  *x_zero = 0;
  if (n.has_in(xz)) {
    const Value &z = in_val(g, n, xz);
    if (!z.is_const() || z.numel() != 1) return false;
    *x_zero = z.data->get_i(0);
  }
  if (n.has_in(wz)) {
    const Value &z = in_val(g, n, wz);
    if (!z.is_const()) return false;
    for (int64_t i = 0; i < z.numel(); ++i)
      if (z.data->get_i(i) != 0) return false;
  }
  return true;
}

// Conv-like node n (Conv's attributes, x at input 0, int8 weights at input
// w): the int8 GEMM with `epilogue`, if the layer fits it.
bool qgemm_conv(const Node &n, LowerCtx &c, int w, int xz, int wz, std::vector<int> ins, ExprP expr,
                const std::function<ExprP(ExprP)> &epilogue) {
  int64_t x_zero;
  const Value &W = in_val(c.g, n, w);
  if (!qgemm_applies(n, c.g, 0, w, xz, wz, &x_zero) || W.rank() < 3 || W.rank() > 4) return false;
  GemmSpec s = conv_gemm_spec(n, c.g, n.in[w]);
  s.x_zero = x_zero;
  // Depthwise: the depthwise family sums in float, exactly (see
  // depthwise_emitter.cpp) up to 514 taps.
  bool depthwise = s.groups > 1 && s.in_c == s.groups && s.out_c == s.groups && s.k_h * s.k_w <= 514;
  s.epilogue = epilogue(depthwise ? cast(acc(DType::F32), DType::I32) : acc(DType::I32));
  c.scheduled(depthwise ? KernelKind::Depthwise : KernelKind::QGemm, n.out[0], std::move(ins), std::move(expr), s);
  return true;
}

// MatMul-like node n (A at input 0, int8 B at input b): the int8 GEMM.
bool qgemm_matmul(const Node &n, LowerCtx &c, int bi, int xz, int wz, std::vector<int> ins, ExprP expr,
                  const std::function<ExprP(ExprP)> &epilogue) {
  int64_t x_zero;
  const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, bi);
  if (!qgemm_applies(n, c.g, 0, bi, xz, wz, &x_zero) || B.rank() != 2 || A.rank() < 2 || A.rank() > 4) return false;
  int64_t K = B.shape[0], N = B.shape[1];
  GemmSpec s = matmul_gemm_spec(A.shape, c.g.v(n.out[0]).rank(), product_weight(c, B, true, 1.0, K, N), c.g);
  s.x_zero = x_zero;
  s.epilogue = epilogue(acc(DType::I32));
  c.scheduled(KernelKind::QGemm, n.out[0], std::move(ins), std::move(expr), s);
  return true;
}

ExprP same(ExprP a) { return a; }

void def_matmul_integer() {
  OpDef d;
  d.name = "MatMulInteger";
  d.min_opset = 10;
  d.types = kQuant;
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, kQuant);
    set_out(n, g, 0, DType::I32, matmul_out_shape(n, in_val(g, n, 0).shape, in_val(g, n, 1).shape));
    check_matmul_params(n, g, 0, 2, 1, 3);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, 1);
    std::vector<int> ins = {n.in[0], n.in[1], n.has_in(2) ? n.in[2] : n.in[0], n.has_in(3) ? n.in[3] : n.in[1]};
    ExprP e = matmul_sum(
        A.shape, B.shape, c.g.v(n.out[0]).rank(), A.dtype, B.dtype, DType::I32,
        [&](ExprP v, ExprP row) { return minus_zp(v, n, c.g, 2, 2, row); },
        [&](ExprP v, ExprP col) { return minus_zp(v, n, c.g, 3, 3, col); });
    if (!qgemm_matmul(n, c, 1, 2, 3, ins, e, same)) c.kernel(n.out[0], ins, e);
  };
  d.dims = [](Node &n, Graph &g) { matmul_dims(n, g, 0, 1); };
  register_op(std::move(d));
}

// A convolution weight's window (its axes after the first two).
std::vector<int64_t> weight_window(const Graph &g, int w) {
  const Shape &s = g.v(w).shape;
  return s.size() > 2 ? std::vector<int64_t>(s.begin() + 2, s.end()) : std::vector<int64_t>{};
}

void def_conv_integer() {
  OpDef d;
  d.name = "ConvInteger";
  d.min_opset = 10;
  d.attrs = conv_attributes();
  d.types = kQuant;
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, kQuant);
    set_out(n, g, 0, DType::I32, conv_out_shape(n, in_val(g, n, 0).shape, in_val(g, n, 1).shape));
    const Value &x = in_val(g, n, 0), &w = in_val(g, n, 1);
    check_param(n, g, 2, "x_zero_point", x.dtype, 0);
    check_param(n, g, 3, "w_zero_point", w.dtype, w.shape[0]);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 1);
    std::vector<int> ins = {n.in[0], n.in[1], n.has_in(2) ? n.in[2] : n.in[0], n.has_in(3) ? n.in[3] : n.in[1]};
    ExprP e = conv_sum(
        n, X.shape, W.shape, X.dtype, W.dtype, DType::I32, [&](ExprP v) { return minus_zp(v, n, c.g, 2, 2, cidx(0)); },
        [&](ExprP v) { return minus_zp(v, n, c.g, 3, 3, var(1)); }, run_spatial_extents(c.g, n.in[0]));
    if (!qgemm_conv(n, c, 1, 2, 3, ins, e, same)) c.kernel(n.out[0], ins, e);
  };
  d.dims = [](Node &n, Graph &g) { window_dims(n, g, weight_window(g, n.in[1])); };
  register_op(std::move(d));
}

// QLinear*: requantize(sum * a_scale * b_scale / y_scale) with y's zero point.
ExprP requantize(ExprP acc_i32, ExprP scale, ExprP y_zp_f, DType t) {
  return quantize(cast(acc_i32, DType::F32) * scale, y_zp_f, t);
}

void def_qlinear_matmul() {
  OpDef d;
  d.name = "QLinearMatMul";
  d.min_opset = 10;
  d.types = kQuant;
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 3, kQuant);
    require_types(n, g, 7, kQuant);
    set_out(n, g, 0, in_val(g, n, 7).dtype, matmul_out_shape(n, in_val(g, n, 0).shape, in_val(g, n, 3).shape));
    // Scales and y's zero point are read per output column (or once);
    // a_scale per row is not implemented.
    int64_t cols = in_val(g, n, 3).rank() >= 2 ? in_val(g, n, 3).shape.back() : 0;
    check_matmul_params(n, g, 0, 2, 3, 5);
    check_param(n, g, 1, "a_scale", DType::F32, 0);
    check_param(n, g, 4, "b_scale", DType::F32, cols);
    check_param(n, g, 6, "y_scale", DType::F32, cols);
    check_param(n, g, 7, "y_zero_point", DType::Undefined, cols);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, 3);
    const Value &Y = c.g.v(n.out[0]);
    // slots: 0 A, 1 B, 2 a_zp, 3 b_zp, 4 a_scale, 5 b_scale, 6 y_scale, 7 y_zp
    std::vector<int> ins = {n.in[0], n.in[3], n.in[2], n.in[5], n.in[1], n.in[4], n.in[6], n.in[7]};
    Node m = n;  // zero points as inputs 2/3 of a MatMulInteger
    m.in = {n.in[0], n.in[3], n.in[2], n.in[5]};
    ExprP sum = matmul_sum(
        A.shape, B.shape, Y.rank(), A.dtype, B.dtype, DType::I32,
        [&](ExprP v, ExprP row) { return minus_zp(v, m, c.g, 2, 2, row); },
        [&](ExprP v, ExprP col) { return minus_zp(v, m, c.g, 3, 3, col); });
    auto scalar = [&](int slot, int input) { return param(in_val(c.g, n, input), slot, Y.rank() - 1); };
    ExprP scale = scalar(4, 1) * scalar(5, 4) / scalar(6, 6);
    auto rq = [&](ExprP a) { return requantize(a, scale, cast(scalar(7, 7), DType::F32), Y.dtype); };
    // inputs: 0 A, 1 a_scale, 2 a_zp, 3 B, 4 b_scale, 5 b_zp
    if (!qgemm_matmul(n, c, 3, 2, 5, ins, rq(sum), rq)) c.kernel(n.out[0], ins, rq(sum));
  };
  d.dims = [](Node &n, Graph &g) { matmul_dims(n, g, 0, 3); };
  register_op(std::move(d));
}

void def_qlinear_conv() {
  OpDef d;
  d.name = "QLinearConv";
  d.min_opset = 10;
  d.attrs = conv_attributes();
  d.types = kQuant;
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 3, kQuant);
    require_types(n, g, 7, kQuant);
    set_out(n, g, 0, in_val(g, n, 7).dtype, conv_out_shape(n, in_val(g, n, 0).shape, in_val(g, n, 3).shape));
    // Per tensor, except w's scale and zero point and the bias: per output channel.
    const Value &x = in_val(g, n, 0), &w = in_val(g, n, 3);
    int64_t m = w.shape[0];
    check_param(n, g, 1, "x_scale", DType::F32, 0);
    check_param(n, g, 2, "x_zero_point", x.dtype, 0);
    check_param(n, g, 4, "w_scale", DType::F32, m);
    check_param(n, g, 5, "w_zero_point", w.dtype, m);
    check_param(n, g, 6, "y_scale", DType::F32, 0);
    check_param(n, g, 7, "y_zero_point", DType::Undefined, 0);
    if (n.has_in(8) && (in_val(g, n, 8).shape != Shape{m} || in_val(g, n, 8).dtype != DType::I32))
      fail_invalid(n.where() + ": B must be int32 of shape [" + std::to_string(m) + "], got " +
                   dtype_name(in_val(g, n, 8).dtype) + " " + shape_str(in_val(g, n, 8).shape));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 3);
    const Value &Y = c.g.v(n.out[0]);
    // slots: 0 x, 1 w, 2 x_zp, 3 w_zp, 4 x_scale, 5 w_scale, 6 y_scale, 7 y_zp, 8 B
    std::vector<int> ins = {n.in[0], n.in[3], n.in[2], n.in[5], n.in[1], n.in[4], n.in[6], n.in[7]};
    Node m = n;
    m.in = {n.in[0], n.in[3], n.in[2], n.in[5]};
    ExprP sum = conv_sum(
        m, X.shape, W.shape, X.dtype, W.dtype, DType::I32, [&](ExprP v) { return minus_zp(v, m, c.g, 2, 2, cidx(0)); },
        [&](ExprP v) { return minus_zp(v, m, c.g, 3, 3, var(1)); }, run_spatial_extents(c.g, n.in[0]));
    ExprP bias;
    if (n.has_in(8)) {
      ins.push_back(n.in[8]);
      bias = cast(load(8, in_val(c.g, n, 8).dtype, {var(1)}), DType::I32);
    }
    auto p = [&](int slot, int input) { return param(in_val(c.g, n, input), slot, 1); };
    ExprP scale = p(4, 1) * p(5, 4) / p(6, 6);
    auto rq = [&](ExprP a) { return requantize(bias ? a + bias : a, scale, cast(p(7, 7), DType::F32), Y.dtype); };
    // inputs: 0 x, 1 x_scale, 2 x_zp, 3 w, 4 w_scale, 5 w_zp
    if (!qgemm_conv(n, c, 3, 2, 5, ins, rq(sum), rq)) c.kernel(n.out[0], ins, rq(sum));
  };
  d.dims = [](Node &n, Graph &g) { window_dims(n, g, weight_window(g, n.in[3])); };
  register_op(std::move(d));
}

}  // namespace

void register_quantization_ops() {
  def_quantize();
  def_dequantize();
  def_dynamic_quantize();
  def_matmul_integer();
  def_conv_integer();
  def_qlinear_matmul();
  def_qlinear_conv();
}

}  // namespace tinyrt
