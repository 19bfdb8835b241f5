// dynamic_quant.cpp — dynamic quantization: float activations quantized at
// run time, int8 weights quantized at compile time.
//
// tinyrt's scheme (what `--quantize dynamic` produces, and how it runs
// ONNX Runtime's com.microsoft.DynamicQuantizeMatMul and
// DynamicQuantizeLSTM): weights int8 symmetric per output channel (values
// in [-127, 127]); activations int8 symmetric per row (the last axis),
// scale max|row| / 127, computed by the generated code for every row of
// every inference. A row's products are exact int32 sums, scaled back by
// the row's scale times the channel's. ONNX Runtime quantizes an
// activation per tensor (uint8, asymmetric), so the two agree within the
// quantization error, not bit for bit (docs/QUANTIZATION.md).
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

void quantize_rows(const std::vector<double> &src, int64_t rows, int64_t cols, std::vector<int8_t> *q,
                   std::vector<float> *scale, int qmax) {
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0;
    for (int64_t k = 0; k < cols; ++k) m = std::max(m, std::fabs(src[(size_t)(i * cols + k)]));
    float sc = m > 0 && std::isfinite(m) ? (float)(m / qmax) : 1.0f;
    scale->push_back(sc);
    for (int64_t k = 0; k < cols; ++k) {
      double v = std::nearbyint(src[(size_t)(i * cols + k)] / sc);
      q->push_back((int8_t)std::max(-(double)qmax, std::min((double)qmax, std::isnan(v) ? 0.0 : v)));
    }
  }
}

void int8_rows(int64_t rows, int64_t cols, const std::function<int64_t(int64_t, int64_t)> &value,
               const std::function<double(int64_t)> &scale, const std::function<int64_t(int64_t)> &zero,
               std::vector<int8_t> *q, std::vector<float> *scales) {
  for (int64_t r = 0; r < rows; ++r) {
    double sc = scale(r);
    int64_t zp = zero(r);
    std::vector<int64_t> v;
    bool fits = std::isfinite(sc);
    for (int64_t k = 0; k < cols; ++k) {
      v.push_back(value(r, k) - zp);
      fits = fits && v.back() >= -128 && v.back() <= 127;
    }
    if (fits) {
      for (int64_t x : v) q->push_back((int8_t)x);
      scales->push_back((float)sc);
      continue;
    }
    std::vector<double> f;
    for (int64_t x : v) f.push_back((double)x * sc);
    quantize_rows(f, 1, cols, q, scales);
  }
}

DynamicRows quantize_activation_rows(LowerCtx &c, int x) {
  const Value &X = c.g.v(x);
  int r = X.rank();
  DType t = X.dtype;
  Shape lead(X.shape.begin(), X.shape.end() - 1);
  std::vector<ExprP> lv, all;
  for (int i = 0; i < r - 1; ++i) lv.push_back(var(i));
  all = lv;
  all.push_back(var(kFirstReduceVar));
  DynamicRows d;
  d.absmax = c.temp(X.name + "_absmax", t, lead);
  c.kernel(d.absmax, {x}, reduce(ReduceKind::Max, {{kFirstReduceVar, X.shape.back()}}, un(EOp::Abs, load(0, t, all))));
  d.q = c.temp(X.name + "_q", DType::I8, X.shape);
  std::vector<ExprP> ov = lv;
  ov.push_back(var(r - 1));
  // x * 127 / max|row| rounded to int8 (rows of zeros stay zeros; NaN
  // saturates like the rest).
  ExprP v = un(EOp::Round, load(0, t, ov) * (cst(t, 127) / emax(load(1, t, lv), cst(t, 1e-30))));
  c.kernel(d.q, {x, d.absmax}, cast(emax(cst(t, -127), emin(cst(t, 127), v)), DType::I8));
  return d;
}

namespace {

// com.microsoft.DynamicQuantizeMatMul(A, B, b_scale, b_zero_point, bias):
// A float32 (rank 2 to 4) times a constant 8-bit B [K, N] with a scale
// and zero point per tensor or per column, plus an optional bias [N].
void def_dynamic_quantize_matmul() {
  OpDef d;
  d.name = "DynamicQuantizeMatMul";
  d.domain = "com.microsoft";
  d.types = {DType::F32};
  d.infer = [](Node &n, Graph &g) {
    if (!n.has_in(1) || !n.has_in(2)) fail_invalid(n.where() + ": B and b_scale are required");
    const Value &A = in_val(g, n, 0), &B = in_val(g, n, 1);
    if (B.rank() != 2 || A.rank() < 2) fail_invalid(n.where() + ": A must be at least 2-D and B 2-D");
    if (B.dtype != DType::I8 && B.dtype != DType::U8)
      fail_invalid(n.where() + ": B has type " + dtype_name(B.dtype) + ", expected int8 or uint8");
    int64_t N = B.shape[1];
    auto check = [&](size_t k, const char *what, DType t) {
      if (!n.has_in(k)) return;
      const Value &p = in_val(g, n, k);
      if (p.dtype != t)
        fail_invalid(n.where() + ": " + what + " has type " + dtype_name(p.dtype) + ", expected " + dtype_name(t));
      if (p.numel() != 1 && p.shape != Shape{N})
        fail_invalid(n.where() + ": " + what + " has shape " + shape_str(p.shape) + "; expected one element or [" +
                     std::to_string(N) + "]");
    };
    check(2, "b_scale", DType::F32);
    check(3, "b_zero_point", B.dtype);
    if (n.has_in(4) && (in_val(g, n, 4).shape != Shape{N} || in_val(g, n, 4).dtype != DType::F32))
      fail_invalid(n.where() + ": bias must be float32 [" + std::to_string(N) + "]");
    set_out(n, g, 0, DType::F32, matmul_out_shape(n, A.shape, B.shape));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    for (size_t k = 1; k < 5; ++k)
      if (n.has_in(k) && !in_val(c.g, n, k).is_const())
        fail_unsupported(n.where() + ": input " + std::to_string(k) +
                         " (weights, scale, zero point, bias) must be a constant");
    const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, 1);
    int64_t K = B.shape[0], N = B.shape[1];
    const Value &S = in_val(c.g, n, 2);
    std::vector<int8_t> w;  // [N, K]: a row per output channel
    std::vector<float> ws;
    int8_rows(
        N, K, [&](int64_t j, int64_t k) { return B.data->get_i(k * N + j); },
        [&](int64_t j) { return S.data->get_f(S.numel() == 1 ? 0 : j); },
        [&](int64_t j) {
          if (!n.has_in(3)) return (int64_t)0;
          const Value &Z = in_val(c.g, n, 3);
          return Z.data->get_i(Z.numel() == 1 ? 0 : j);
        },
        &w, &ws);
    DynamicRows rows = quantize_activation_rows(c, n.in[0]);
    Graph &g = c.g;
    int wv =
        g.add_const(g.fresh_name(B.name + "_rows"), make_const(DType::I8, {N, K, 1, 1}, Bytes(w.begin(), w.end())));
    int sv = g.add_const(g.fresh_name(B.name + "_scale"), make_const_f32({N}, ws));
    std::vector<float> bias((size_t)N, 0.f);
    if (n.has_in(4))
      for (int64_t j = 0; j < N; ++j) bias[(size_t)j] = (float)in_val(g, n, 4).data->get_f(j);
    int bv = g.add_const(g.fresh_name(B.name + "_bias"), make_const_f32({N}, bias));
    const Value &Y = g.v(n.out[0]);
    int yr = Y.rank(), ar = A.rank();
    // Slots: 0 A quantized, 1 W [N, K, 1, 1], 2 row max [A's leading axes], 3 scales, 4 bias.
    std::vector<ExprP> lead;
    for (int i = 0; i < ar - 1; ++i) lead.push_back(var(yr - ar + i));
    auto scaled = [&](ExprP sum) {
      return cast(sum, DType::F32) *
                 (load(2, DType::F32, lead) * cst(DType::F32, 1.0 / 127) * load(3, DType::F32, {var(yr - 1)})) +
             load(4, DType::F32, {var(yr - 1)});
    };
    ExprP sum = matmul_sum(
        A.shape, {K, N}, yr, DType::I8, DType::I8, DType::I32, [](ExprP v, ExprP) { return cast(v, DType::I32); },
        [](ExprP v, ExprP) { return cast(v, DType::I32); });
    // matmul_sum reads B as slot 1 [K, N]: give it the [K, N] view of W.
    int wkn = g.add_const(g.fresh_name(B.name + "_kn"), make_const(DType::I8, {K, N}, [&] {
                            Bytes t((size_t)(K * N));
                            for (int64_t k = 0; k < K; ++k)
                              for (int64_t j = 0; j < N; ++j) t[(size_t)(k * N + j)] = (uint8_t)w[(size_t)(j * K + k)];
                            return t;
                          }()));
    std::vector<int> ins = {rows.q, wkn, rows.absmax, sv, bv};
    if (ar > 4) {
      c.kernel(n.out[0], ins, scaled(sum));
      return;
    }
    GemmSpec s = matmul_gemm_spec(A.shape, yr, wv, g);
    s.epilogue = scaled(acc(DType::I32));
    c.scheduled(KernelKind::QGemm, n.out[0], ins, scaled(sum), s);
  };
  register_op(std::move(d));
}

}  // namespace

void register_dynamic_quant_ops() { def_dynamic_quantize_matmul(); }

}  // namespace tinyrt
