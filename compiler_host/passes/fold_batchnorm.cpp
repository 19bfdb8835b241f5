// fold_batchnorm.cpp — BatchNormalization after a Conv or Gemm whose
// weights are constants becomes part of that node's weights and bias:
// y = (conv(x) - mean) * s + beta with s = scale / sqrt(var + eps).
#include <cmath>

#include "passes/pass.h"

namespace tinyrt {

namespace {

bool all_const(const Graph &g, const Node &n, size_t from, size_t to) {
  for (size_t k = from; k < to; ++k)
    if (!n.has_in(k) || !g.v(n.in[k]).is_const()) return false;
  return true;
}

std::vector<double> vec_of(const Graph &g, int v) {
  const ConstData &c = *g.v(v).data;
  std::vector<double> r(shape_numel(c.shape));
  for (size_t i = 0; i < r.size(); ++i) r[i] = c.get_f((int64_t)i);
  return r;
}

// Scale s[c] and shift t[c] of an inference BatchNormalization.
void bn_affine(const Graph &g, const Node &bn, std::vector<double> &s, std::vector<double> &t) {
  std::vector<double> scale = vec_of(g, bn.in[1]), beta = vec_of(g, bn.in[2]), mean = vec_of(g, bn.in[3]),
                      var = vec_of(g, bn.in[4]);
  double eps = bn.getf("epsilon", 1e-5f);
  s.resize(scale.size());
  t.resize(scale.size());
  for (size_t c = 0; c < s.size(); ++c) {
    s[c] = scale[c] / std::sqrt(var[c] + eps);
    t[c] = beta[c] - mean[c] * s[c];
  }
}

// Folds into a Conv: W'[oc] = W[oc] * s[oc], b'[oc] = b[oc] * s[oc] + t[oc].
bool fold_into_conv(Graph &g, Node &conv, const Node &bn) {
  const Value &w = g.v(conv.in[1]);
  if (!w.is_const() || w.dtype != DType::F32) return false;
  if (conv.has_in(2) && !g.v(conv.in[2]).is_const()) return false;
  std::vector<double> s, t;
  bn_affine(g, bn, s, t);
  int64_t oc = w.shape[0], per = w.numel() / oc;
  if ((int64_t)s.size() != oc) return false;
  std::vector<float> nw(w.numel()), nb(oc);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < per; ++i) nw[o * per + i] = (float)(w.data->get_f(o * per + i) * s[o]);
  std::vector<double> b = conv.has_in(2) ? vec_of(g, conv.in[2]) : std::vector<double>(oc, 0.0);
  for (int64_t o = 0; o < oc; ++o) nb[o] = (float)(b[o] * s[o] + t[o]);
  Shape ws = w.shape;
  conv.in[1] = g.add_const(g.fresh_name(w.name + "_bn"), make_const_f32(ws, nw));
  int bias = g.add_const(g.fresh_name(conv.name + "_bias_bn"), make_const_f32({oc}, nb));
  if (conv.in.size() < 3) conv.in.resize(3, -1);
  conv.in[2] = bias;
  return true;
}

// Folds into a Gemm whose C is absent or a per-column vector.
bool fold_into_gemm(Graph &g, Node &gemm, const Node &bn) {
  const Value &b = g.v(gemm.in[1]);
  if (!b.is_const() || b.dtype != DType::F32) return false;
  const Value &y = g.v(gemm.out[0]);
  int64_t N = y.shape[1];
  std::vector<double> cvec(N, 0.0);
  if (gemm.has_in(2)) {
    const Value &c = g.v(gemm.in[2]);
    if (!c.is_const()) return false;
    double beta = gemm.getf("beta", 1.0f);
    if (c.numel() == 1)
      cvec.assign(N, c.data->get_f(0) * beta);
    else if (c.numel() == N && c.shape.back() == N)
      for (int64_t n = 0; n < N; ++n) cvec[n] = c.data->get_f(n) * beta;
    else
      return false;
  }
  std::vector<double> s, t;
  bn_affine(g, bn, s, t);
  if ((int64_t)s.size() != N) return false;
  bool tb = gemm.geti("transB", 0);
  std::vector<float> nb(b.numel());
  for (int64_t i = 0; i < b.numel(); ++i) {
    int64_t n = tb ? i / b.shape[1] : i % b.shape[1];
    nb[i] = (float)(b.data->get_f(i) * s[n]);
  }
  std::vector<float> nc(N);
  for (int64_t n = 0; n < N; ++n) nc[n] = (float)(cvec[n] * s[n] + t[n]);
  gemm.in[1] = g.add_const(g.fresh_name(b.name + "_bn"), make_const_f32(b.shape, nb));
  if (gemm.in.size() < 3) gemm.in.resize(3, -1);
  gemm.in[2] = g.add_const(g.fresh_name(gemm.name + "_bias_bn"), make_const_f32({N}, nc));
  gemm.attrs["beta"].kind = Attr::Kind::Float;
  gemm.attrs["beta"].f = 1.0f;
  return true;
}

}  // namespace

void fold_batchnorm(PassContext &c) {
  Graph &g = c.program.graph;
  std::vector<int> uses = g.use_counts();
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].out)
      if (o >= 0) producer[o] = (int)i;
  std::vector<bool> drop(g.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node &bn = g.nodes[i];
    if (bn.op != "BatchNormalization" || !all_const(g, bn, 1, 5)) continue;
    int x = bn.in[0];
    int pi = producer[x];
    if (pi < 0 || uses[x] != 1 || g.is_graph_output(x)) continue;
    Node &prod = g.nodes[pi];
    bool ok = false;
    if (prod.op == "Conv")
      ok = fold_into_conv(g, prod, bn);
    else if (prod.op == "Gemm")
      ok = fold_into_gemm(g, prod, bn);
    if (!ok) continue;
    prod.out[0] = bn.out[0];  // the producer now writes the BN's output
    drop[i] = true;
    ++folded;
  }
  g.remove_nodes(drop);
  if (c.log) *c.log << "  folded " << folded << " BatchNormalization nodes\n";
}

}  // namespace tinyrt
