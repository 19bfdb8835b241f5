// quantize_dynamic.cpp — `--quantize dynamic` (Nuphar's scheme): float
// matrix products and LSTMs with constant weights run in int8. Weights are
// quantized here, symmetric per output channel; activations are quantized
// per row by the generated code at run time (ops/dynamic_quant.cpp).
//
//   MatMul(A, B const [K, N]), Gemm(A, B const, C const [N] or scalar)
//     -> com.microsoft.DynamicQuantizeMatMul(A, Bq, scale, 0, bias)
//   LSTM(X, W const, R const, ...)
//     -> com.microsoft.DynamicQuantizeLSTM(X, Wq, Rq, ..., scales, 0)
//   GRU, RNN (and LSTM with layout 1) with constant W and R
//     -> the same op marked with the attribute kQuantizeDynamicAttr
//
// The rewritten nodes are the ONNX Runtime contrib ops of the same meaning,
// so the dump shows them and `tinyrt-compile` accepts them from a file as
// well. Convolutions and products whose weights are not constants stay
// float (the log says which). Without the option the pass
// does nothing.
#include <cmath>

#include "ops/op_registry.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

std::vector<double> floats(const Value &v) {
  std::vector<double> r((size_t)v.numel());
  for (int64_t i = 0; i < v.numel(); ++i) r[(size_t)i] = v.data->get_f(i);
  return r;
}

int int8_const(Graph &g, const std::string &name, Shape shape, const std::vector<int8_t> &v) {
  return g.add_const(g.fresh_name(name), make_const(DType::I8, std::move(shape), Bytes(v.begin(), v.end())));
}

int float_const(Graph &g, const std::string &name, Shape shape, std::vector<float> v) {
  return g.add_const(g.fresh_name(name), make_const_f32(std::move(shape), std::move(v)));
}

bool float_weights(const Graph &g, const Node &n, size_t k) {
  if (!n.has_in(k)) return false;
  const Value &v = in_val(g, n, k);
  return v.is_const() && v.dtype == DType::F32;
}

// MatMul(A, B) and Gemm(A, B, C) with constant float B (2-D) and, for Gemm,
// transA = 0 and C absent, one element or [N] (or [1, N]).
bool rewrite_product(Graph &g, Node &n, int qmax) {
  bool gemm = n.op == "Gemm";
  const Value &A = in_val(g, n, 0);
  if (A.dtype != DType::F32 || A.is_const() || A.rank() < 2 || !float_weights(g, n, 1)) return false;
  const Value &B = in_val(g, n, 1);
  if (B.rank() != 2 || (gemm && n.geti("transA", 0))) return false;
  bool tb = gemm && n.geti("transB", 0);
  int64_t K = tb ? B.shape[1] : B.shape[0], N = tb ? B.shape[0] : B.shape[1];
  double alpha = gemm ? n.getf("alpha", 1.0f) : 1.0, beta = gemm ? n.getf("beta", 1.0f) : 1.0;
  std::vector<float> bias((size_t)N, 0.f);
  bool has_bias = false;
  if (gemm && n.has_in(2) && beta != 0) {
    const Value &C = in_val(g, n, 2);
    if (!C.is_const() || !dtype_is_float(C.dtype) || (C.numel() != 1 && C.shape != Shape{N} && C.shape != Shape{1, N}))
      return false;
    for (int64_t j = 0; j < N; ++j) bias[(size_t)j] = (float)(beta * C.data->get_f(C.numel() == 1 ? 0 : j));
    has_bias = true;
  }
  // Rows of the quantizer: output channels (columns of B).
  std::vector<double> cols((size_t)(N * K));
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) cols[(size_t)(j * K + k)] = alpha * B.data->get_f(tb ? j * K + k : k * N + j);
  std::vector<int8_t> q;
  std::vector<float> scale;
  quantize_rows(cols, N, K, &q, &scale, qmax);
  std::vector<int8_t> kn((size_t)(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) kn[(size_t)(k * N + j)] = q[(size_t)(j * K + k)];
  std::vector<int> ins = {n.in[0], int8_const(g, B.name + "_quantized", {K, N}, kn),
                          float_const(g, B.name + "_scale", {N}, scale),
                          int8_const(g, B.name + "_zero_point", {N}, std::vector<int8_t>((size_t)N, 0))};
  if (has_bias) ins.push_back(float_const(g, n.name + "_bias", {N}, bias));
  n.op = "DynamicQuantizeMatMul";
  n.domain = "com.microsoft";
  n.opset = 1;
  n.in = ins;
  n.attrs.clear();
  return true;
}

// LSTM with constant float W and R, layout 0.
bool rewrite_lstm(Graph &g, Node &n, int qmax) {
  if (in_val(g, n, 0).dtype != DType::F32 || !float_weights(g, n, 1) || !float_weights(g, n, 2)) return false;
  if (n.geti("layout", 0) != 0 || n.geti("input_forget", 0) != 0) return false;
  // Per direction d and column j (a gate unit): W [D, 4H, I] row (d, j)
  // becomes column j of Wq [D, I, 4H]; likewise R.
  std::vector<int> q;
  for (size_t k : {1, 2}) {
    const Value &M = in_val(g, n, k);
    if (M.rank() != 3) return false;
    int64_t D = M.shape[0], GH = M.shape[1], K = M.shape[2];
    std::vector<int8_t> rows;
    std::vector<float> scale;
    quantize_rows(floats(M), D * GH, K, &rows, &scale, qmax);
    std::vector<int8_t> t((size_t)(D * K * GH));
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < GH; ++j)
        for (int64_t i = 0; i < K; ++i) t[(size_t)((d * K + i) * GH + j)] = rows[(size_t)((d * GH + j) * K + i)];
    q.push_back(int8_const(g, M.name + "_quantized", {D, K, GH}, t));
    q.push_back(float_const(g, M.name + "_scale", {D, GH}, scale));
    q.push_back(int8_const(g, M.name + "_zero_point", {D, GH}, std::vector<int8_t>((size_t)(D * GH), 0)));
  }
  std::vector<int> ins = n.in;
  ins.resize(8, -1);
  ins[1] = q[0];
  ins[2] = q[3];
  ins.insert(ins.end(), {q[1], q[2], q[4], q[5]});
  n.op = "DynamicQuantizeLSTM";
  n.domain = "com.microsoft";
  n.opset = 1;
  n.in = ins;
  n.attrs.erase("layout");
  return true;
}

// GRU, RNN and LSTM with layout 1 (no contrib op has their meaning): the
// op itself, marked; its lowering quantizes W and R (ops/recurrent.cpp).
bool mark_recurrent(const Graph &g, Node &n, int qmax) {
  if (in_val(g, n, 0).dtype != DType::F32 || !float_weights(g, n, 1) || !float_weights(g, n, 2)) return false;
  n.attrs[kQuantizeDynamicAttr] = int_attr(qmax);  // lower_rnn_dynamic quantizes to it
  return true;
}

}  // namespace

void quantize_dynamic(PassContext &c, const QuantizeOptions &o) {
  if (o.mode != Quantize::Dynamic) return;
  Graph &g = c.program.graph;
  int products = 0, recurrent = 0, left = 0;
  for (Node &n : g.nodes) {
    if (!n.domain.empty()) continue;
    std::string where = n.where();
    bool done = false;
    if (n.op == "MatMul" || n.op == "Gemm") {
      done = rewrite_product(g, n, o.weight_max);
      products += done;
    } else if (n.op == "LSTM" || n.op == "GRU" || n.op == "RNN") {
      done = (n.op == "LSTM" && rewrite_lstm(g, n, o.weight_max)) || mark_recurrent(g, n, o.weight_max);
      recurrent += done;
    } else if (n.op != "Conv") {
      continue;
    }
    if (!done) ++left;
    if (c.log) *c.log << "    " << where << (done ? " runs in dynamic int8\n" : " stays float\n");
  }
  g.remove_dead_nodes();
  if (c.log)
    *c.log << "  " << products << " matrix products and " << recurrent << " recurrent layers in dynamic int8, " << left
           << " candidates left float\n";
}

}  // namespace tinyrt
