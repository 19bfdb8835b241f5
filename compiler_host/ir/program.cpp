#include "ir/program.h"
#include <cctype>
#include <cstdint>
#include <initializer_list>

namespace tinyrt {

int Program::root(int v) const {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v)) v = it->second;
  return v;
}

const std::vector<int> &Program::perm_of(int v) const {
  static const std::vector<int> none;
  return v < (int)perm.size() ? perm[v] : none;
}

std::vector<int64_t> Program::layout_strides(int v) const {
  const Shape &s = graph.v(v).shape;
  const std::vector<int> &p = perm_of(v);
  if (p.empty()) return row_major_strides(s);
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t k = p.size(); k-- > 0;) {
    st[p[k]] = acc;
    acc *= s[p[k]];
  }
  return st;
}

int64_t Program::span_bytes(int v) const {
  const Value &val = graph.v(v);
  const std::vector<int64_t> &strides = storage.at(v).strides;
  if (val.numel() == 0) return 0;
  int64_t last = 0;  // element offset of the last element
  for (size_t k = 0; k < val.shape.size() && k < strides.size(); ++k) last += (val.shape[k] - 1) * strides[k];
  return (last + 1) * dtype_bytes(val.dtype);
}

GemmTileShape gemm_tile_shape(const GemmSpec &s) {
  // Arena weights differ per batch entry: tiles stay inside one.
  bool linear = s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_t == 0 && s.pad_l == 0 &&
                s.in_h == s.out_h && s.in_w == s.out_w && (!s.arena_weights || s.batch * s.out_h == 1);
  int64_t ic = s.in_c / s.groups;  // a k_run layer's inner K is a kernel row
  bool span = s.span && !linear;
  return {s.out_c / s.groups, s.k_run ? s.k_w * ic : ic, linear || span ? s.batch * s.out_h * s.out_w : s.out_w, linear,
          span};
}

int gemm_dynamic_role(const GemmSpec &s, const Value &out) {
  if (!out.is_dynamic() || !gemm_tile_shape(s).linear || s.arena_weights || s.k_run) return -1;
  if (s.out_axis[1] >= 0 && out.dim(s.out_axis[1]) >= 0) return -1;  // run-time output channels
  const int roles[3] = {0, 2, 3};
  const int64_t extent[4] = {s.batch, s.out_c, s.out_h, s.out_w};
  int role = -1;
  for (int r : roles) {
    bool dyn = s.out_axis[r] >= 0 && out.dim(s.out_axis[r]) >= 0;
    if (dyn && role >= 0) return -1;  // two run-time extents
    if (dyn) {
      role = r;
      continue;
    }
    if (role < 0 && extent[r] > 1) return -1;  // a fixed role of several pixels outside it
  }
  // Every output axis with a run-time extent is a role's.
  int seen = 0;
  for (int a = 0; a < out.rank(); ++a) seen += out.dim(a) >= 0;
  return seen == 1 ? role : -1;
}

int gemm_runtime_rows(const GemmSpec &s, const Value &out, const Value &x) {
  if (!out.is_dynamic() && !x.is_dynamic()) return -1;
  if (s.k_h != 1 || s.k_w != 1 || s.stride_h != 1 || s.stride_w != 1 || s.pad_t != 0 || s.pad_l != 0 || s.groups != 1 ||
      s.k_run || s.in_h != s.out_h || s.in_w != s.out_w)
    return 0;
  for (int a = 0; a < out.rank(); ++a)
    if (out.dim(a) >= 0 && a != s.out_axis[3] && a != s.out_axis[1]) return 0;
  for (int a = 0; a < x.rank(); ++a)
    if (x.dim(a) >= 0 && a != s.in_axis[3] && a != s.in_axis[1]) return 0;
  if (s.in_axis[3] >= 0 && s.out_axis[3] >= 0 && x.dim(s.in_axis[3]) != out.dim(s.out_axis[3])) return 0;
  return 1;
}

int gemm_runtime_spatial(const GemmSpec &s, const Value &out, const Value &x) {
  if (!out.is_dynamic() && !x.is_dynamic()) return -1;
  if (s.arena_weights || s.out_axis[2] < 0 || s.in_axis[2] < 0) return 0;
  for (int a = 0; a < out.rank(); ++a)
    if (out.dim(a) >= 0 && a != s.out_axis[2] && a != s.out_axis[3]) return 0;
  for (int a = 0; a < x.rank(); ++a)
    if (x.dim(a) >= 0 && a != s.in_axis[2] && a != s.in_axis[3]) return 0;
  return 1;
}

const char *kernel_family(KernelKind k) {
  switch (k) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::QGemm: return "qgemm";
    case KernelKind::Depthwise: return "depthwise";
    case KernelKind::Recurrent: return "recurrent";
    case KernelKind::Call: return "call";
    case KernelKind::WinogradIn: return "winograd_in";
    case KernelKind::WinogradOut: return "winograd_out";
    case KernelKind::Fail: return "fail";
    case KernelKind::Compact: return "compact";
    case KernelKind::Nms: return "nms";
    case KernelKind::TopK: return "topk";
    case KernelKind::WinogradWeights: return "winograd_weights";
    default: return "loop";
  }
}

// The product of the factors, INT64_MAX when it does not fit (the sizes of
// an untrusted model; these counts are estimates).
static int64_t saturating_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) r = sat_mul(r, f);
  return r;
}

int64_t kernel_flops(const Kernel &k) {
  if (is_scheduled(k.kind)) {
    const GemmSpec &s = k.gemm;
    int64_t in_per_group = k.kind != KernelKind::Depthwise ? s.in_c / s.groups : 1;
    return saturating_product({2, s.batch, s.out_h, s.out_w, s.out_c, in_per_group, s.k_h, s.k_w});
  }
  if (k.kind == KernelKind::Recurrent) {
    const RecurrentSpec &r = k.rnn;
    return saturating_product({2, r.T, r.B, r.D, r.G, r.H, r.H});
  }
  return -1;
}

int64_t kernel_ops(const Program &p, const Kernel &k) {
  if (k.kind == KernelKind::Fail || k.out < 0) return 0;
  int64_t n = p.graph.v(k.out).numel();
  if (kernel_flops(k) >= 0) return kernel_flops(k);
  if (has_expr(k.kind) && k.expr) return saturating_product({n, (int64_t)expr_size(k.expr)});
  if (is_winograd(k.kind)) {  // a band's share of its output
    if (k.wino.rows > 0 && k.gemm.batch * k.wino.tiles_h > 0) n = n * k.wino.rows / (k.gemm.batch * k.wino.tiles_h);
    // a chunk's share of the output channels
    if (k.kind == KernelKind::WinogradOut && k.gemm.out_c > 0) n = n / k.gemm.out_c * k.wino.channels;
    return saturating_product({n, k.wino.m + 2});
  }
  if (k.kind == KernelKind::WinogradWeights) return saturating_product({n, 3});
  return n;
}

const WinogradMatrices &winograd_matrices(int m) {
  // Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks"
  // (2015): interpolation points 0, -1, 1 (F(2,3)) and 0, 1, -1, 2, -2
  // (F(4,3)), plus infinity.
  static const WinogradMatrices f2{2,
                                   {1, 0, -1, 0,  //
                                    0, 1, 1, 0,   //
                                    0, -1, 1, 0,  //
                                    0, 1, 0, -1},
                                   {1, 1, 1, 0,  //
                                    0, 1, -1, -1},
                                   {1, 0, 0,         //
                                    0.5, 0.5, 0.5,   //
                                    0.5, -0.5, 0.5,  //
                                    0, 0, 1}};
  static const WinogradMatrices f4{4,
                                   {4, 0,  -5, 0,  1, 0,  //
                                    0, -4, -4, 1,  1, 0,  //
                                    0, 4,  -4, -1, 1, 0,  //
                                    0, -2, -1, 2,  1, 0,  //
                                    0, 2,  -1, -2, 1, 0,  //
                                    0, 4,  0,  -5, 0, 1},
                                   {1, 1, 1,  1, 1,  0,  //
                                    0, 1, -1, 2, -2, 0,  //
                                    0, 1, 1,  4, 4,  0,  //
                                    0, 1, -1, 8, -8, 1},
                                   {1 / 4.0, 0, 0,                 //
                                    -1 / 6.0, -1 / 6.0, -1 / 6.0,  //
                                    -1 / 6.0, 1 / 6.0, -1 / 6.0,   //
                                    1 / 24.0, 1 / 12.0, 1 / 6.0,   //
                                    1 / 24.0, -1 / 12.0, 1 / 6.0,  //
                                    0, 0, 1}};
  TINYRT_CHECK(m == 2 || m == 4, "Winograd F(m, 3) with m 2 or 4");
  return m == 2 ? f2 : f4;
}

bool perm_is_row_major(const std::vector<int> &perm, const Shape &shape) {
  int last = -1;
  for (int a : perm) {
    if (shape[a] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

}  // namespace tinyrt

namespace tinyrt {

const CustomOpDecl *Program::custom_op(const Node &n) const {
  for (const CustomOpDecl &d : custom_ops)
    if (d.domain == n.domain && d.op == n.op) return &d;
  return nullptr;
}

}  // namespace tinyrt
