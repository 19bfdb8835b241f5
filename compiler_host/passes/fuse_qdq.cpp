// fuse_qdq.cpp — quantized models in the QDQ format (what ONNX Runtime's
// quantizer writes: DequantizeLinear before and QuantizeLinear after each
// float op) run their convolutions and matrix products in integers.
//
//   Conv(DQ(xq, sx, zx), DQ(wq, sw, 0), b)
//     -> ConvInteger(xq, wq, zx) -> Cast(float) * (sx * sw) + b
//
// and likewise ConvTranspose (as tinyrt's ConvTransposeInteger), MatMul and
// Gemm (as MatMulInteger). The integer op runs in
// the int8 GEMM; the float tail, and the activation and QuantizeLinear
// that follow it, become its epilogue (fuse_epilogues). This is exact up
// to float rounding: sum (xq - zx) * wq * sx * sw is the float op's sum.
//
// Ops that only move or select elements (Concat, MaxPool, Reshape, ...)
// between DequantizeLinear and QuantizeLinear of one scale and zero point
// run on the integers: Q(op(DQ(q))) = op(q) exactly, as DQ and Q are
// increasing maps that are inverse on the integers.
//
// infer_and_fold leaves DequantizeLinear of 8-bit constants (quantized
// weights) unfolded so this pass can see them; those it does not use are
// folded to float here.
#include <algorithm>
#include <cmath>

#include "ops/op_registry.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

struct Producers {
  std::vector<int> of;  // value -> index of the node writing it, or -1
  explicit Producers(const Graph &g) : of(g.values.size(), -1) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int v : g.nodes[i].out)
        if (v >= 0) of[v] = (int)i;
  }
  const Node *dq(const Graph &g, int v) const {
    if (v < 0 || v >= (int)of.size() || of[v] < 0) return nullptr;
    const Node &n = g.nodes[of[v]];
    return n.op == "DequantizeLinear" && n.domain.empty() ? &n : nullptr;
  }
};

bool const_zero(const Graph &g, const Node &dq) {
  if (!dq.has_in(2)) return true;
  const Value &z = in_val(g, dq, 2);
  if (!z.is_const()) return false;
  for (int64_t i = 0; i < z.numel(); ++i)
    if (z.data->get_i(i) != 0) return false;
  return true;
}

// An activation DQ: a non-constant 8-bit tensor, constant scalar scale and
// zero point.
bool activation_dq(const Graph &g, const Node *dq) {
  if (!dq) return false;
  const Value &x = in_val(g, *dq, 0), &s = in_val(g, *dq, 1);
  if (x.is_const() || (x.dtype != DType::U8 && x.dtype != DType::I8)) return false;
  if (!s.is_const() || s.numel() != 1) return false;
  return !dq->has_in(2) || (in_val(g, *dq, 2).is_const() && in_val(g, *dq, 2).numel() == 1);
}

// A weight DQ: constant int8 with zero point 0, scale per tensor or per
// `channel_axis` of the weight. Returns the scale per output channel (n of
// them) or an empty vector.
std::vector<double> weight_scales(const Graph &g, const Node *dq, int channel_axis, int64_t n) {
  if (!dq) return {};
  const Value &w = in_val(g, *dq, 0), &s = in_val(g, *dq, 1);
  if (!w.is_const() || w.dtype != DType::I8 || !s.is_const() || !const_zero(g, *dq)) return {};
  std::vector<double> r((size_t)n);
  if (s.numel() == 1) {
    std::fill(r.begin(), r.end(), s.data->get_f(0));
    return r;
  }
  int axis = (int)dq->geti("axis", 1);
  if (axis < 0) axis += w.rank();
  if (axis != channel_axis || s.numel() != n) return {};
  for (int64_t i = 0; i < n; ++i) r[(size_t)i] = s.data->get_f(i);
  return r;
}

// The dequantized value of a DQ node whose inputs are all constants.
ConstP dequantize(const Graph &g, const Node &dq) {
  const Value &x = in_val(g, dq, 0), &s = in_val(g, dq, 1);
  int64_t n = x.numel(), per = 1, ch = s.numel();
  if (ch > 1) {
    int axis = (int)dq.geti("axis", 1);
    if (axis < 0) axis += x.rank();
    for (int a = axis + 1; a < x.rank(); ++a) per *= x.shape[a];
  }
  std::vector<float> out((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = ch > 1 ? (i / per) % ch : 0;
    int64_t z = dq.has_in(2) ? in_val(g, dq, 2).data->get_i(c) : 0;
    out[(size_t)i] = (float)((double)(x.data->get_i(i) - z) * (float)s.data->get_f(c));
  }
  return make_const_f32(x.shape, out);
}

class Rewriter {
 public:
  Rewriter(Graph &g) : g_(g) {}

  // Appends node `op` reading `ins` (attributes `attrs`) and infers its
  // output, a new value (or `out` when given); returns the output.
  int add(const std::string &op, const std::string &name, std::vector<int> ins, std::map<std::string, Attr> attrs,
          int out = -1, const std::string &domain = "") {
    if (out < 0) out = new_value(g_, name + "_out");
    Node n = make_node(g_, op, name, std::move(ins), {out});
    n.domain = domain;
    n.attrs = std::move(attrs);
    infer_node(n, g_);
    nodes.push_back(std::move(n));
    return out;
  }
  int constant(const std::string &name, std::vector<float> v, Shape shape) {
    return g_.add_const(g_.fresh_name(name), make_const_f32(std::move(shape), v));
  }
  std::vector<Node> nodes;

 private:
  Graph &g_;
};

// y = Cast(acc) * scale [+ bias], the per-channel vectors shaped to
// broadcast along `channel_axis` of a rank-`rank` output.
void float_tail(Rewriter &r, const Node &n, int acc, std::vector<double> scale, const std::vector<double> *bias,
                int rank, int channel_axis, int out) {
  Shape vs(rank - channel_axis, 1);
  vs[0] = (int64_t)scale.size();
  int f = r.add("Cast", n.name + "_float", {acc}, {{"to", int_attr((int64_t)DType::F32)}});
  std::vector<float> sc(scale.begin(), scale.end());
  int s = r.constant(n.name + "_scale", sc, vs);
  if (!bias) {
    r.add("Mul", n.name + "_scaled", {f, s}, {}, out);
    return;
  }
  int m = r.add("Mul", n.name + "_scaled", {f, s}, {});
  std::vector<float> bv(bias->begin(), bias->end());
  r.add("Add", n.name + "_biased", {m, r.constant(n.name + "_bias", bv, vs)}, {}, out);
}

std::vector<double> values(const Graph &g, int v) {
  const Value &x = g.v(v);
  std::vector<double> r((size_t)x.numel());
  for (size_t i = 0; i < r.size(); ++i) r[i] = x.data->get_f((int64_t)i);
  return r;
}

// Ops that commute with increasing maps: they move, select or take the
// maximum of elements, so they may work on the quantized integers.
bool moves_elements(const Node &n) {
  static const std::vector<std::string> ops = {"Concat",   "MaxPool", "GlobalMaxPool", "Reshape",
                                               "Flatten",  "Squeeze", "Unsqueeze",     "Transpose",
                                               "Identity", "Slice",   "SpaceToDepth",  "DepthToSpace"};
  return n.domain.empty() && std::find(ops.begin(), ops.end(), n.op) != ops.end() && n.out.size() == 1;
}

bool same_quantization(const Graph &g, const Node &a, const Node &b) {
  auto scalar = [&](const Node &n, size_t k, double *v) {
    if (!n.has_in(k)) return *v = 0, true;
    const Value &x = in_val(g, n, k);
    if (!x.is_const() || x.numel() != 1) return false;
    *v = x.data->get_f(0);
    return true;
  };
  double sa, sb, za, zb;
  DType ta = a.has_in(2) ? in_val(g, a, 2).dtype : DType::U8, tb = b.has_in(2) ? in_val(g, b, 2).dtype : DType::U8;
  return scalar(a, 1, &sa) && scalar(b, 1, &sb) && scalar(a, 2, &za) && scalar(b, 2, &zb) && sa == sb && za == zb &&
         ta == tb;
}

// Q(op(DQ(q0), DQ(q1), ...)) with one quantization throughout -> op(q0, q1,
// ...) writing Q's output. Float data inputs must all be such DQs.
bool rewrite_passthrough(Graph &g, const Producers &p, const std::vector<int> &uses, const std::vector<int> &reader,
                         const Node &n, Rewriter &r) {
  if (!moves_elements(n) || n.out[0] < 0 || uses[n.out[0]] != 1 || reader[n.out[0]] < 0) return false;
  const Node &q = g.nodes[reader[n.out[0]]];
  if (q.op != "QuantizeLinear" || !q.domain.empty() || q.in[0] != n.out[0] || g.is_graph_output(n.out[0])) return false;
  Node m = n;
  int dq_inputs = 0;
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.in[k] < 0 || g.v(n.in[k]).dtype != DType::F32) continue;  // shapes, axes
    const Node *d = p.dq(g, n.in[k]);
    if (!d || !activation_dq(g, d) || !same_quantization(g, *d, q)) return false;
    m.in[k] = d->in[0];
    ++dq_inputs;
  }
  if (!dq_inputs) return false;
  m.out = {q.out[0]};
  const OpDef &def = check_node(m, g);
  def.infer(m, g);
  r.nodes.push_back(std::move(m));
  return true;
}

// The inputs of an integer op (ConvInteger, ConvTransposeInteger,
// MatMulInteger): the activation DQ's integers, the weights, and the
// activation's zero point when its DQ has one (the weights' is zero).
std::vector<int> integer_inputs(const Node &dx, int w) {
  std::vector<int> ins = {dx.in[0], w};
  if (dx.has_in(2)) ins.push_back(dx.in[2]);
  return ins;
}

// Conv(DQ(x), DQ(w), b) -> ConvInteger + float tail.
bool rewrite_conv(Graph &g, const Producers &p, const Node &n, Rewriter &r) {
  const Node *dx = p.dq(g, n.in[0]), *dw = p.dq(g, n.in[1]);
  if (!activation_dq(g, dx) || !dw) return false;
  const Value &w = in_val(g, *dw, 0);
  if (w.rank() < 3) return false;
  std::vector<double> ws = weight_scales(g, dw, 0, w.shape[0]);
  if (ws.empty() || (n.has_in(2) && !in_val(g, n, 2).is_const())) return false;
  double sx = in_val(g, *dx, 1).data->get_f(0);
  for (double &s : ws) s = (double)((float)sx * (float)s);
  std::vector<int> ins = integer_inputs(*dx, dw->in[0]);
  std::map<std::string, Attr> attrs = n.attrs;
  int acc = r.add("ConvInteger", n.name + "_int", ins, attrs);
  std::vector<double> b;
  if (n.has_in(2)) b = values(g, n.in[2]);
  float_tail(r, n, acc, ws, n.has_in(2) ? &b : nullptr, w.rank(), 1, n.out[0]);
  return true;
}

// ConvTranspose(DQ(x), DQ(w), b) -> tinyrt's ConvTransposeInteger + float
// tail (w [IC, OC/group, k...] per tensor or per channel along axis 1).
bool rewrite_conv_transpose(Graph &g, const Producers &p, const Node &n, Rewriter &r) {
  const Node *dx = p.dq(g, n.in[0]), *dw = p.dq(g, n.in[1]);
  if (!activation_dq(g, dx) || !dw) return false;
  const Value &w = in_val(g, *dw, 0);
  if (w.rank() < 3) return false;
  int64_t G = n.geti("group", 1), OCg = w.shape[1];
  std::vector<double> per = weight_scales(g, dw, 1, OCg);
  if (per.empty() || G < 1 || (n.has_in(2) && !in_val(g, n, 2).is_const())) return false;
  double sx = in_val(g, *dx, 1).data->get_f(0);
  std::vector<double> ws((size_t)(G * OCg));
  for (int64_t oc = 0; oc < G * OCg; ++oc) ws[(size_t)oc] = (double)((float)sx * (float)per[(size_t)(oc % OCg)]);
  std::vector<int> ins = integer_inputs(*dx, dw->in[0]);
  int acc = r.add("ConvTransposeInteger", n.name + "_int", ins, n.attrs, -1, "tinyrt");
  std::vector<double> b;
  if (n.has_in(2)) b = values(g, n.in[2]);
  float_tail(r, n, acc, ws, n.has_in(2) ? &b : nullptr, w.rank(), 1, n.out[0]);
  return true;
}

// MatMul(DQ(a), DQ(b)) and Gemm(DQ(a), DQ(b), c) -> MatMulInteger + tail.
bool rewrite_product(Graph &g, const Producers &p, const Node &n, Rewriter &r) {
  bool gemm = n.op == "Gemm";
  const Node *da = p.dq(g, n.in[0]), *db = p.dq(g, n.in[1]);
  if (!activation_dq(g, da) || !db) return false;
  const Value &B = in_val(g, *db, 0);
  if (B.rank() != 2 || in_val(g, *da, 0).rank() < 2) return false;
  bool tb = gemm && n.geti("transB", 0);
  if (gemm && n.geti("transA", 0)) return false;
  int64_t N = tb ? B.shape[0] : B.shape[1], K = tb ? B.shape[1] : B.shape[0];
  std::vector<double> ws = weight_scales(g, db, tb ? 0 : 1, N);
  if (ws.empty()) return false;
  double alpha = gemm ? n.getf("alpha", 1.0f) : 1.0, beta = gemm ? n.getf("beta", 1.0f) : 1.0;
  std::vector<double> bias;
  if (gemm && n.has_in(2) && beta != 0) {
    const Value &c = in_val(g, n, 2);
    if (!c.is_const() || (c.numel() != 1 && c.shape != Shape{N} && c.shape != Shape{1, N})) return false;
    for (int64_t j = 0; j < N; ++j) bias.push_back(beta * c.data->get_f(c.numel() == 1 ? 0 : j));
  }
  double sx = in_val(g, *da, 1).data->get_f(0);
  for (double &s : ws) s = alpha * (double)((float)sx * (float)s);
  int wq = db->in[0];
  if (tb) {  // MatMulInteger wants B as [K, N]
    Bytes t((size_t)(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) t[(size_t)(k * N + j)] = B.data->bytes[(size_t)(j * K + k)];
    wq = g.add_const(g.fresh_name(B.name + "_kn"), make_const(DType::I8, {K, N}, std::move(t)));
  }
  std::vector<int> ins = integer_inputs(*da, wq);
  int acc = r.add("MatMulInteger", n.name + "_int", ins, {});
  float_tail(r, n, acc, ws, bias.empty() ? nullptr : &bias, 1, 0, n.out[0]);
  return true;
}

}  // namespace

void fuse_qdq(PassContext &c) {
  Graph &g = c.program.graph;
  int rewritten = 0, moved = 0, folded = 0;
  Producers p(g);
  std::vector<int> uses = g.use_counts(), reader(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].in)
      if (v >= 0) reader[v] = (int)i;
  std::vector<Node> out;
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (drop[i]) continue;
    const Node &n = g.nodes[i];
    Rewriter r(g);
    if (rewrite_passthrough(g, p, uses, reader, n, r)) {
      // The Q node is dropped: its output is now written by the op.
      drop[reader[n.out[0]]] = true;
      if (c.log) *c.log << "    " << n.where() << " works on the quantized integers\n";
      for (Node &m : r.nodes) out.push_back(std::move(m));
      ++moved;
      continue;
    }
    bool done = false;
    if (n.domain.empty() && n.op == "Conv")
      done = rewrite_conv(g, p, n, r);
    else if (n.domain.empty() && n.op == "ConvTranspose")
      done = rewrite_conv_transpose(g, p, n, r);
    else if (n.domain.empty() && (n.op == "MatMul" || n.op == "Gemm"))
      done = rewrite_product(g, p, n, r);
    if (!done) {
      out.push_back(n);
      continue;
    }
    if (c.log) *c.log << "    " << n.where() << " runs in int8\n";
    for (Node &m : r.nodes) {
      m.guard = n.guard;  // they replace n
      out.push_back(std::move(m));
    }
    ++rewritten;
  }
  g.nodes = std::move(out);
  g.remove_dead_nodes();
  // Quantized constants nothing reads as integers any more become floats.
  std::vector<bool> folds(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &n = g.nodes[i];
    bool consts = n.op == "DequantizeLinear" && n.domain.empty();
    for (int v : n.in) consts = consts && (v < 0 || g.v(v).is_const());
    if (!consts) continue;
    g.v(n.out[0]).data = dequantize(g, n);
    folds[i] = true;
    ++folded;
  }
  g.remove_nodes(folds);
  g.remove_dead_nodes();
  if (c.log)
    *c.log << "  " << rewritten << " convolutions and products in int8, " << moved << " ops on quantized integers, "
           << folded << " weight dequantizations folded\n";
}

}  // namespace tinyrt
