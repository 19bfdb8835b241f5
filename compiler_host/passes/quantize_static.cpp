// quantize_static.cpp — `--quantize static`: post-training quantization
// from calibrated ranges (CalibrationRanges: each tensor's smallest and
// largest value over the calibration inputs, measured by running the float
// model; cli/tool_common.cpp). The pass writes the QDQ form ONNX
// Runtime's static quantizer writes, which fuse_qdq and the passes after
// it then run as int8 kernels:
//
//   Conv(x, W, b), Gemm(x, W, c), MatMul(x, W) with constant float W
//     -> Conv(DQ(Q(x)), DQ(Wq), b), ...
//
// - x: uint8, asymmetric, per tensor: the range widened to include 0,
//   scale = (max - min) / 255, zero point = round(-min / scale). One
//   QuantizeLinear/DequantizeLinear pair per tensor, read by the quantized
//   ops only (other readers keep the float tensor).
// - W: int8, symmetric per output channel (Conv's axis 0, a product's
//   column), values in [-127, 127]; biases stay float (fuse_qdq folds them
//   into the int8 kernel's epilogue).
// The op after the int8 kernel (an activation, the next layer's
// QuantizeLinear) becomes its epilogue, so chains of layers pass uint8
// between kernels. A node whose input has no range stays float (logged).
// Without the option the pass does nothing.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/op_registry.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

// Input 1 is a constant float weight of the ranks the int8 kernels take,
// input 0 a float activation.
bool quantizable(const Graph &g, const Node &n) {
  if (!n.domain.empty() || !n.has_in(0) || !n.has_in(1)) return false;
  const Value &x = in_val(g, n, 0), &w = in_val(g, n, 1);
  if (x.is_const() || x.dtype != DType::F32 || !w.is_const() || w.dtype != DType::F32) return false;
  if (n.op == "Conv") return w.rank() >= 3 && w.rank() <= 4;
  if (n.op == "MatMul") return w.rank() == 2 && x.rank() >= 2;
  if (n.op == "Gemm") return w.rank() == 2 && x.rank() == 2 && n.geti("transA", 0) == 0;
  return false;
}

struct Builder {
  Graph &g;
  std::vector<Node> &out;
  int guard = -1;  // of the nodes added: the quantized value's producer's

  int add(const std::string &op, const std::string &base, std::vector<int> ins,
          std::map<std::string, Attr> attrs = {}) {
    int v = new_value(g, base);
    Node m = make_node(g, op, base, std::move(ins), {v});
    m.opset = std::max(g.opset, 13);
    m.attrs = std::move(attrs);
    m.guard = guard;
    infer_node(m, g);
    out.push_back(std::move(m));
    return v;
  }
  int constant(const std::string &base, DType t, Shape s, Bytes b) {
    return g.add_const(g.fresh_name(base), make_const(t, std::move(s), std::move(b)));
  }
};

// DQ(Q(x)) for activation x with range [lo, hi].
int quantize_activation(Builder &b, int x, double lo, double hi) {
  lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  float scale = hi > lo && std::isfinite(hi - lo) ? (float)((hi - lo) / 255) : 1.0f;
  double zp = std::nearbyint(-lo / scale);
  uint8_t z = (uint8_t)std::max(0.0, std::min(255.0, zp));
  const std::string &name = b.g.v(x).name;
  Bytes sb(4);
  std::memcpy(sb.data(), &scale, 4);
  int s = b.constant(name + "_scale", DType::F32, {}, sb);
  int zv = b.constant(name + "_zero_point", DType::U8, {}, Bytes(1, z));
  int q = b.add("QuantizeLinear", name + "_quantized", {x, s, zv});
  return b.add("DequantizeLinear", name + "_dequantized", {q, s, zv});
}

// DQ(Wq): W int8 per channel along `axis` (0: rows of [C, ...]; 1: columns
// of a [K, N] matrix).
int quantize_weight(Builder &b, int w, int axis, int qmax) {
  const Value &W = b.g.v(w);
  int64_t C = W.shape[(size_t)axis], n = W.numel(), inner = axis == 0 ? n / std::max<int64_t>(C, 1) : 1;
  int64_t rows = axis == 0 ? 1 : W.shape[0];
  std::vector<double> ch((size_t)n);  // channel-major copy
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i)
        ch[(size_t)((c * rows + r) * inner + i)] = W.data->get_f((r * C + c) * inner + i);
  std::vector<int8_t> q;
  std::vector<float> sc;
  quantize_rows(ch, C, rows * inner, &q, &sc, qmax);
  Bytes qb((size_t)n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i)
        qb[(size_t)((r * C + c) * inner + i)] = (uint8_t)q[(size_t)((c * rows + r) * inner + i)];
  Bytes sb(sc.size() * 4);
  std::memcpy(sb.data(), sc.data(), sb.size());
  int wq = b.constant(W.name + "_quantized", DType::I8, W.shape, qb);
  int s = b.constant(W.name + "_scale", DType::F32, {C}, sb);
  int z = b.constant(W.name + "_zero_point", DType::I8, {C}, Bytes((size_t)C, 0));
  Attr a;
  a.i = axis;
  return b.add("DequantizeLinear", W.name + "_dequantized", {wq, s, z}, {{"axis", a}});
}

}  // namespace

std::vector<int> static_quantization_tensors(const Graph &g) {
  std::vector<int> r;
  for (const Node &n : g.nodes)
    if (quantizable(g, n) && std::find(r.begin(), r.end(), n.in[0]) == r.end()) r.push_back(n.in[0]);
  return r;
}

void quantize_static(PassContext &c, const QuantizeOptions &o) {
  if (o.mode != Quantize::Static) return;
  if (!o.ranges) fail_usage("--quantize static needs calibration ranges (--calibration DIR)");
  Graph &g = c.program.graph;
  std::vector<Node> out;
  Builder b{g, out};
  std::map<int, int> dequantized;  // activation -> its DQ(Q(x))
  std::map<int, int> guard_of;     // value -> its producer's guard
  int done = 0, left = 0;
  std::vector<Node> nodes = std::move(g.nodes);
  g.nodes.clear();
  for (Node &n : nodes) {
    if (quantizable(g, n)) {
      auto r = o.ranges->find(g.v(n.in[0]).name);
      if (r == o.ranges->end() || !std::isfinite(r->second.first) || !std::isfinite(r->second.second)) {
        if (c.log)
          *c.log << "    " << n.where() << " stays float: no calibrated range for '" << g.v(n.in[0]).name << "'\n";
        ++left;
      } else {
        // The activation's Q/DQ run where it is computed, so that every
        // reader (of any branch) may share them.
        auto made = guard_of.find(n.in[0]);
        b.guard = made != guard_of.end() ? made->second : -1;
        auto it = dequantized.find(n.in[0]);
        int x =
            it != dequantized.end() ? it->second : quantize_activation(b, n.in[0], r->second.first, r->second.second);
        dequantized[n.in[0]] = x;
        bool tb = n.op == "Gemm" && n.geti("transB", 0);
        int axis = n.op == "Conv" || tb ? 0 : 1;
        n.in[1] = quantize_weight(b, n.in[1], axis, o.weight_max);
        n.in[0] = x;
        if (c.log)
          *c.log << "    " << n.where() << " quantized (activation range [" << r->second.first << ", "
                 << r->second.second << "])\n";
        ++done;
      }
    }
    for (int o : n.out) guard_of[o] = n.guard;
    out.push_back(std::move(n));
  }
  g.nodes = std::move(out);
  g.remove_dead_nodes();
  if (c.log) *c.log << "  " << done << " convolutions and products quantized, " << left << " left float\n";
}

}  // namespace tinyrt
