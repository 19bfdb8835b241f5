// choose_layouts.cpp — physical layouts. Values keep their logical (ONNX)
// shapes; a layout is the physical order of the axes.
//  * GEMM/conv outputs put channels innermost (NHWC), so the micro-kernel
//    stores whole vectors and the next convolution reads rows of channels.
//  * Loop kernels that carry a value's channel axis through (activations,
//    pooling, residual adds, concat) inherit that layout.
//  * Graph outputs and viewed values (Reshape, Flatten) must be row-major:
//    loop producers simply write row-major, GEMM producers get a copy.
//  * Constants read by loop kernels (depthwise weights) store the axis
//    indexed by the vectorized output axis innermost.
#include "passes/pass.h"

namespace tinyrt {

namespace {

std::vector<int> innermost_last(int rank, int axis) {
  std::vector<int> perm;
  for (int a = 0; a < rank; ++a)
    if (a != axis) perm.push_back(a);
  perm.push_back(axis);
  return perm;
}

bool uses_var(const ExprP &e, int a) {
  bool used = false;
  visit(e, [&](const Expr &x) { used = used || (x.op == EOp::Var && x.id == a); });
  return used;
}

// Is e Var(a) plus terms that do not depend on Var(a) (a constant, or a
// reduction variable times a stride: col2im's tap * OC + oc)?
bool follows_axis(const ExprP &e, int a) {
  if (e->op == EOp::Var) return e->id == a;
  if (e->op == EOp::Add)
    return (follows_axis(e->a[0], a) && !uses_var(e->a[1], a)) || (follows_axis(e->a[1], a) && !uses_var(e->a[0], a));
  if (e->op == EOp::Sub) return follows_axis(e->a[0], a) && !uses_var(e->a[1], a);
  return false;
}

// The output axis the loop emitter vectorizes (last non-unit physical axis).
int vector_axis(const Program &p, int v) {
  const Shape &s = p.graph.v(v).shape;
  std::vector<int> perm = p.perm_of(v);
  if (perm.empty())
    for (int a = 0; a < (int)s.size(); ++a) perm.push_back(a);
  for (size_t i = perm.size(); i-- > 0;)
    if (s[perm[i]] != 1) return perm[i];
  return -1;
}

// A loop kernel writing `out` as a copy of `in` (of `src`'s type and
// shape) in out's layout.
Kernel copy_kernel(int out, int in, const Value &src, const char *label) {
  Kernel cp;
  cp.out = out;
  cp.ins = {in};
  std::vector<ExprP> idx;
  for (int a = 0; a < src.rank(); ++a) idx.push_back(var(a));
  cp.expr = load(0, src.dtype, idx);
  cp.label = label;
  return cp;
}

// Convolution outputs channels-last; loop kernels inherit the channels-last
// layout of an input whose channel axis they carry to the same output axis.
void kernel_output_layouts(Program &p) {
  Graph &g = p.graph;
  for (const Kernel &k : p.kernels) {
    if (is_scheduled(k.kind)) {
      int r = g.v(k.out).rank(), ca = k.gemm.out_axis[1];
      if (ca != r - 1) p.perm[k.out] = innermost_last(r, ca);
      continue;
    }
    if (k.kind == KernelKind::Recurrent || k.kind == KernelKind::Call || k.kind == KernelKind::Fail ||
        is_data_dependent(k.kind) || k.kind == KernelKind::TopK)
      continue;  // row-major state / C views / nothing / rows in their order / any strides
    int r = g.v(k.out).rank();
    for (size_t s = 0; s < k.ins.size() && p.perm[k.out].empty(); ++s) {
      int v = k.ins[s];
      const std::vector<int> &pv = p.perm_of(v);
      if (pv.empty() || g.v(v).rank() != r || g.v(v).is_const()) continue;
      int inner = pv.back();
      bool carried = false;
      visit(k.expr, [&](const Expr &e) {
        if (e.op == EOp::Load && e.id == (int)s && follows_axis(e.a[inner], inner)) carried = true;
      });
      if (carried) p.perm[k.out] = pv;
    }
  }
}

// Convolutions read channels-last inputs as contiguous rows: give their
// inputs that layout, through a copy when the application supplies them.
void channels_last_conv_inputs(Program &p) {
  Graph &g = p.graph;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    Kernel &k = p.kernels[i];
    if (!is_scheduled(k.kind) || k.gemm.in_axis[1] != 1) continue;
    int rank = g.v(k.ins[0]).rank();
    if (rank < 3 || rank > 4) continue;
    int x = k.ins[0];
    if (!p.perm_of(x).empty() && p.perm_of(x).back() == 1) continue;
    bool app_owned = g.v(x).is_const() || p.alias.count(x) || g.is_graph_output(x);
    for (int in : g.inputs) app_owned = app_owned || in == x;
    for (auto &kv : p.alias) app_owned = app_owned || kv.second == x;
    // A few int8 channels (a quantized RGB image) are read in place with
    // strided channels: a loop kernel writing 3-channel pixels is slow.
    // (pad_conv_rows gives those a channels-last copy of its own.)
    if (k.kind == KernelKind::QGemm && g.v(x).shape[1] < 8 && !k.gemm.k_run) continue;
    if (!app_owned) {
      p.perm[x] = innermost_last(rank, 1);  // its producing loop kernel writes channels-last
      continue;
    }
    // One channel is channels-last already; a few (an RGB image) are read
    // in place with strided channels: measured on shufflenet_v2's first
    // layer, the copy (0.084 ms) costs more than it saves the conv (0.139
    // -> 0.145 ms).
    if (g.v(x).shape[1] < 8) continue;
    const Value src = g.v(x);
    int nx = g.add_value(g.fresh_name(src.name + "_nhwc"), src.dtype, src.shape);
    g.v(nx).dims = src.dims;  // (a copy over the same run-time extents)
    p.perm.resize(g.values.size());
    p.perm[nx] = innermost_last(rank, 1);
    Kernel cp = copy_kernel(nx, x, src, "ToChannelsLast");
    // Every convolution reading x reads the copy, which runs in their
    // branch when they share one.
    cp.guard = k.guard;
    for (Kernel &other : p.kernels)
      if (is_scheduled(other.kind) && !other.ins.empty() && other.ins[0] == x) {
        other.ins[0] = nx;
        if (other.guard != cp.guard) cp.guard = -1;
      }
    p.kernels.insert(p.kernels.begin() + (long)i, cp);
    ++i;
  }
}

// Row-major where memory is shared with the application, a view or a custom
// op's C function: the producing loop kernel writes row-major, or a copy
// after a scheduled producer does.
void row_major_where_shared(Program &p) {
  Graph &g = p.graph;
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < p.kernels.size(); ++i) producer[p.kernels[i].out] = (int)i;
  std::map<int, int> copies;  // value -> its row-major copy
  auto need_row_major = [&](int v) -> int {
    int r = p.root(v);
    if (p.perm_of(r).empty() || perm_is_row_major(p.perm[r], g.v(r).shape)) return v;
    int k = producer[r];
    TINYRT_CHECK(k >= 0, "a non-row-major value without producer");
    if (p.kernels[k].kind == KernelKind::Loop) {
      p.perm[r].clear();
      return v;
    }
    auto it = copies.find(r);
    if (it == copies.end()) {
      const Value src = g.v(r);
      int nv = g.add_value(g.fresh_name(src.name + "_rowmajor"), src.dtype, src.shape);
      g.v(nv).dims = src.dims;
      p.perm.resize(g.values.size());
      producer.resize(g.values.size(), -1);
      Kernel cp = copy_kernel(nv, r, src, "ToRowMajor");
      cp.guard = p.kernels[k].guard;  // every reader runs where the value is computed
      p.kernels.insert(p.kernels.begin() + k + 1, cp);
      for (size_t i = 0; i < p.kernels.size(); ++i) producer[p.kernels[i].out] = (int)i;
      it = copies.emplace(r, nv).first;
    }
    return v == r ? it->second : v;
  };
  // A custom op's C function sees dense row-major views of its inputs.
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    if (p.kernels[i].kind != KernelKind::Call) continue;
    for (size_t s = 0; s < p.kernels[i].ins.size(); ++s) {
      int v = p.kernels[i].ins[s];
      if (g.v(v).is_const()) continue;  // constants read by calls stay row-major (below)
      size_t before = p.kernels.size();
      int nv = need_row_major(v);
      if (p.kernels.size() != before) ++i;  // a copy went in after v's producer, before the call
      p.kernels[i].ins[s] = nv;
    }
  }
  for (auto &kv : p.alias) {
    if (kv.second == p.root(kv.second))
      kv.second = need_row_major(kv.second);
    else
      need_row_major(kv.second);
  }
  for (int &o : g.outputs) {
    if (o == p.root(o)) {
      int nv = need_row_major(o);
      if (nv != o) g.rename_value(nv, g.v(o).name);
      o = nv;
    } else {
      need_row_major(o);
    }
  }
}

// Constants read by loop kernels: the vectorized axis innermost (row-major
// where a call reads them).
void constant_layouts(Program &p) {
  Graph &g = p.graph;
  std::vector<bool> called(g.values.size(), false);
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Call)
      for (int v : k.ins) called[p.root(v)] = true;
  for (const Kernel &k : p.kernels) {
    if (k.kind != KernelKind::Loop) continue;
    int va = vector_axis(p, k.out);
    if (va < 0) continue;
    for (size_t s = 0; s < k.ins.size(); ++s) {
      int v = k.ins[s];
      if (!g.v(v).is_const() || !p.perm[v].empty() || g.v(v).rank() < 2 || called[p.root(v)]) continue;
      int axis = -1;
      visit(k.expr, [&](const Expr &e) {
        if (e.op != EOp::Load || e.id != (int)s) return;
        for (size_t d = 0; d < e.a.size(); ++d)
          if (follows_axis(e.a[d], va)) axis = (int)d;
      });
      if (axis >= 0 && axis != g.v(v).rank() - 1) p.perm[v] = innermost_last(g.v(v).rank(), axis);
    }
  }
}

}  // namespace

void choose_layouts(PassContext &c) {
  Program &p = c.program;
  p.perm.assign(p.graph.values.size(), {});
  kernel_output_layouts(p);
  channels_last_conv_inputs(p);
  row_major_where_shared(p);
  constant_layouts(p);
}

}  // namespace tinyrt
