// nn.cpp — convolution, matrix products, normalization, pooling, softmax
// and reductions. Convolutions and products with constant weights also get
// a GemmSpec so the scheduled GEMM emitter computes them; their expression
// stays the reference.
#include <cmath>

#include <cstring>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

const std::vector<DType> kFloat = {DType::F32, DType::F64};

// Spatial geometry shared by Conv and the pools.
struct Window {
  int nsp = 0;
  std::vector<int64_t> in, k, s, d, pb, pe, out;
};

// The spatial sizes of a convolution weight [OC, IC/group, k...], which
// must have at least one (a rank-1 Range as weight read past its end).
Shape weight_kernel(const Node &n, const Shape &w) {
  if (w.size() < 3) fail_invalid(n.where() + ": the weight must have rank >= 3, got " + shape_str(w));
  return Shape(w.begin() + 2, w.end());
}

Window window_geometry(const Node &n, const Shape &x, std::vector<int64_t> kernel, bool ceil_mode) {
  Window w;
  if (x.size() < 3) fail_invalid(n.where() + ": input must have rank >= 3, got " + shape_str(x));
  w.nsp = (int)x.size() - 2;
  w.in.assign(x.begin() + 2, x.end());
  if ((int)kernel.size() != w.nsp)
    fail_invalid(n.where() + ": kernel_shape has " + std::to_string(kernel.size()) + " dims for " +
                 std::to_string(w.nsp) + " spatial dims");
  w.k = kernel;
  w.s = n.getints("strides", std::vector<int64_t>(w.nsp, 1));
  w.d = n.getints("dilations", std::vector<int64_t>(w.nsp, 1));
  std::vector<int64_t> pads = n.getints("pads", std::vector<int64_t>(2 * w.nsp, 0));
  if ((int)w.s.size() != w.nsp || (int)w.d.size() != w.nsp || (int)pads.size() != 2 * w.nsp)
    fail_invalid(n.where() + ": strides/dilations/pads do not match the spatial rank");
  std::string ap = n.gets("auto_pad", "NOTSET");
  w.pb.resize(w.nsp);
  w.pe.resize(w.nsp);
  w.out.resize(w.nsp);
  for (int i = 0; i < w.nsp; ++i) {
    if (w.s[i] < 1 || w.d[i] < 1 || w.k[i] < 1)
      fail_invalid(n.where() + ": kernel, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + w.nsp] < 0) fail_invalid(n.where() + ": pads must not be negative");
    int64_t ext = (w.k[i] - 1) * w.d[i] + 1;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      w.out[i] = (w.in[i] + w.s[i] - 1) / w.s[i];
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.s[i] + ext - w.in[i]);
      w.pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pe[i] = total - w.pb[i];
      continue;
    }
    if (ap == "VALID") {
      w.pb[i] = w.pe[i] = 0;
    } else if (ap == "NOTSET") {
      w.pb[i] = pads[i];
      w.pe[i] = pads[i + w.nsp];
    } else {
      fail_invalid(n.where() + ": unknown auto_pad '" + ap + "'");
    }
    int64_t span = w.in[i] + w.pb[i] + w.pe[i] - ext;
    if (span < 0) fail_invalid(n.where() + ": kernel larger than the padded input");
    w.out[i] = (ceil_mode ? (span + w.s[i] - 1) / w.s[i] : span / w.s[i]) + 1;
    // The last window must start inside the input or its leading padding.
    if (ceil_mode && (w.out[i] - 1) * w.s[i] >= w.in[i] + w.pb[i]) w.out[i]--;
  }
  return w;
}

std::vector<int64_t> kernel_shape_of(const Node &n, const Graph &g, bool from_weight) {
  if (n.has("kernel_shape")) return n.getints("kernel_shape");
  if (!from_weight) fail_invalid(n.where() + ": kernel_shape is required");
  const Shape &w = in_val(g, n, 1).shape;
  return weight_kernel(n, w);
}

// ------------------------------------------------------------------ Conv --

}  // namespace

std::vector<ExprP> spatial_extents(const Graph &g, int x) {
  std::vector<ExprP> e;
  for (int a = 2; a < g.v(x).rank(); ++a) e.push_back(g.extent(x, a));
  return e;
}

// Refuses run-time channels in x (input 0) and run-time dimensions in the
// other inputs (weights, bias, parameters) of a windowed op.
void only_run_time_images(const Node &n, const Graph &g) {
  const Value &x = in_val(g, n, 0);
  if (x.rank() >= 2 && x.dim(1) >= 0)
    fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 1) + ": " + n.op +
                     " takes run-time batch and spatial dimensions only");
  for (size_t k = 1; k < n.in.size(); ++k)
    if (n.has_in(k) && g.v(n.in[k]).is_dynamic())
      fail_unsupported(n.where() + ": " + n.op + "'s input " + std::to_string(k) + " has run-time dimensions");
}

std::vector<ExprP> run_spatial_extents(const Graph &g, int x) {
  return g.v(x).is_dynamic() ? spatial_extents(g, x) : std::vector<ExprP>{};
}

void window_dims(Node &n, Graph &g, const std::vector<int64_t> &kernel) {
  const Value &x = in_val(g, n, 0);
  only_run_time_images(n, g);
  Window w = window_geometry(n, x.shape, kernel, n.geti("ceil_mode", 0));
  std::vector<int> dims((size_t)x.rank(), -1);
  dims[0] = x.dim(0);
  for (int i = 0; i < w.nsp; ++i) {
    int sym = x.dim(2 + i);
    if (sym < 0) continue;
    std::string ap = n.gets("auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID")
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 2 + i) + " with auto_pad " + ap +
                       ": the padding would depend on the run's size (export explicit pads)");
    if (n.geti("ceil_mode", 0))
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 2 + i) + " with ceil_mode 1");
    int64_t window = (w.k[i] - 1) * w.d[i] + 1, margin = w.pb[i] + w.pe[i] - window;
    if (g.syms[(size_t)sym].lo + margin < 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 2 + i) + ": the window of " +
                       std::to_string(window) + " does not fit an input of " + std::to_string(g.syms[(size_t)sym].lo) +
                       " with the pads; the range must start at " + std::to_string(-margin) + " or more");
    ExprP out = (g.extent(n.in[0], 2 + i) + cidx(margin)) / cidx(w.s[i]) + cidx(1);
    dims[(size_t)(2 + i)] = g.derived_sym(out, g.v(n.out[0]).name + "[" + std::to_string(2 + i) + "]");
  }
  for (int o : n.out)
    if (o >= 0) {
      g.v(o).dims = dims;
      if (!g.v(o).is_dynamic()) g.v(o).dims.clear();
    }
}

ExprP conv_sum(const Node &n, const Shape &X, const Shape &W, DType xt, DType wt, DType acc,
               const std::function<ExprP(ExprP)> &fx, const std::function<ExprP(ExprP)> &fw,
               const std::vector<ExprP> &extents) {
  Window win = window_geometry(n, X, n.has("kernel_shape") ? n.getints("kernel_shape") : weight_kernel(n, W), false);
  int64_t G = n.geti("group", 1), OC = W[0], ICg = W[1], OCg = OC / G;
  // Reduction vars: input channel within the group, then the window.
  std::vector<RVar> rv = {{kFirstReduceVar, ICg}};
  for (int i = 0; i < win.nsp; ++i) rv.push_back({kFirstReduceVar + 1 + i, win.k[i]});
  ExprP ic = var(kFirstReduceVar);
  if (G > 1) ic = (var(1) / cidx(OCg)) * cidx(ICg) + ic;
  std::vector<ExprP> xi = {var(0), ic}, wi = {var(1), var(kFirstReduceVar)};
  ExprP inside = cbool(true);
  for (int i = 0; i < win.nsp; ++i) {
    ExprP kv = var(kFirstReduceVar + 1 + i);
    ExprP pos = var(2 + i) * cidx(win.s[i]) + kv * cidx(win.d[i]) - cidx(win.pb[i]);
    inside =
        land(inside, extents.empty() ? in_range(pos, win.in[i]) : land(ge(pos, cidx(0)), lt(pos, extents[(size_t)i])));
    xi.push_back(pos);
    wi.push_back(kv);
  }
  ExprP x = cast(fx(load(0, xt, xi)), acc);
  ExprP body = select(inside, x, cst(acc, 0)) * cast(fw(load(1, wt, wi)), acc);
  return reduce(ReduceKind::Sum, rv, body);
}

const std::vector<std::string> &conv_attributes() {
  static const std::vector<std::string> a = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
  return a;
}

Shape conv_out_shape(const Node &n, const Shape &x, const Shape &w) {
  if (w.size() != x.size())
    fail_invalid(n.where() + ": weight " + shape_str(w) + " and input " + shape_str(x) + " differ in rank");
  if (n.has("kernel_shape") && n.getints("kernel_shape") != weight_kernel(n, w))
    fail_invalid(n.where() + ": kernel_shape does not match the weight " + shape_str(w));
  Window win = window_geometry(n, x, n.has("kernel_shape") ? n.getints("kernel_shape") : weight_kernel(n, w), false);
  int64_t groups = n.geti("group", 1);
  if (w.size() != x.size() || groups < 1 || x[1] % groups || w[0] % groups || w[1] * groups != x[1])
    fail_invalid(n.where() + ": weight " + shape_str(w) + " does not match input " + shape_str(x) +
                 " with group=" + std::to_string(groups));
  Shape out = {x[0], w[0]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

GemmSpec conv_gemm_spec(const Node &n, const Graph &g, int weight) {
  const Shape &X = in_val(g, n, 0).shape, &W = g.v(weight).shape;
  Window win = window_geometry(n, X, n.has("kernel_shape") ? n.getints("kernel_shape") : weight_kernel(n, W), false);
  TINYRT_CHECK(win.nsp <= 2, "a scheduled convolution has at most 2 spatial axes");
  GemmSpec s;
  s.batch = X[0];
  s.in_c = X[1];
  s.out_c = W[0];
  s.groups = n.geti("group", 1);
  s.weight = weight;
  // The last spatial axis takes the w role: a 1-D convolution's output
  // rows are then long runs of pixels the register tile walks along.
  int wi = win.nsp - 1;
  s.in_w = win.in[wi];
  s.out_w = win.out[wi];
  s.k_w = win.k[wi];
  s.stride_w = win.s[wi];
  s.dil_w = win.d[wi];
  s.pad_l = win.pb[wi];
  if (win.nsp == 2) {
    s.in_h = win.in[0];
    s.out_h = win.out[0];
    s.k_h = win.k[0];
    s.stride_h = win.s[0];
    s.dil_h = win.d[0];
    s.pad_t = win.pb[0];
  } else {
    s.out_axis[2] = s.in_axis[2] = -1;
    s.out_axis[3] = s.in_axis[3] = 2;
  }
  return s;
}

namespace {

// A 3-D convolution with constant float weights through the 2-D GEMM
// kernel, over depth slices:
//   U[n*OD + od, c*KD + kd, h, w] = X[n, c, od*sd + kd*dd - pd, h, w]
//     (zero where the depth is padding: a loop kernel, KD/sd copies of X);
//   Z = the 2-D convolution of U by W viewed as [OC, IC/G * KD, KH, KW]
//     (the same bytes; group g's channels stay contiguous), bias fused;
//   Y[n, oc, od, oh, ow] = Z[n*OD + od, oc, oh, ow]  (a loop kernel).
void lower_conv3d_gemm(const Node &n, LowerCtx &c, const Window &win) {
  const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 1);
  const DType t = X.dtype;
  const int64_t N = X.shape[0], C = X.shape[1], D = win.in[0], KD = win.k[0], OD = win.out[0];
  const int64_t OC = W.shape[0], ICg = W.shape[1];
  const std::string base = c.g.v(n.out[0]).name;
  Shape ushape = {N * OD, C * KD, win.in[1], win.in[2]};
  c.g.check_size(ushape, n.where() + ": the 3-D convolution's depth slices");
  int u = c.temp(base + "_slices", t, ushape);
  ExprP od = bin(EOp::Rem, var(0), cidx(OD)), kd = bin(EOp::Rem, var(1), cidx(KD));
  ExprP dpos = od * cidx(win.s[0]) + kd * cidx(win.d[0]) - cidx(win.pb[0]);
  // The depth is clamped into the input where the load is formed, so that
  // the (per-lane, gathered) load is in bounds whatever the select picks.
  ExprP dload = emax(cidx(0), emin(cidx(D - 1), dpos));
  c.kernel(
      u, {n.in[0]},
      select(in_range(dpos, D), load(0, t, {var(0) / cidx(OD), var(1) / cidx(KD), dload, var(2), var(3)}), cst(t, 0)));

  Shape wshape = {OC, ICg * KD, win.k[1], win.k[2]};
  int wv = c.g.add_const(c.g.fresh_name(W.name + "_2d"), make_const(W.dtype, wshape, W.data->bytes));
  Shape zshape = {N * OD, OC, win.out[1], win.out[2]};
  int z = c.temp(base + "_planes", t, zshape);
  // The 2-D convolution as a node of its own, for the shared lowering.
  Node n2 = n;
  n2.attrs.erase("auto_pad");
  n2.attrs["kernel_shape"] = ints_attr({win.k[1], win.k[2]});
  n2.attrs["strides"] = ints_attr({win.s[1], win.s[2]});
  n2.attrs["dilations"] = ints_attr({win.d[1], win.d[2]});
  n2.attrs["pads"] = ints_attr({win.pb[1], win.pb[2], win.pe[1], win.pe[2]});
  n2.in = {u, wv};
  n2.out = {z};
  auto id = [](ExprP v) { return v; };
  ExprP sum = conv_sum(n2, ushape, wshape, t, t, t, id, id);
  std::vector<int> ins = {u, wv};
  ExprP bias;
  if (n.has_in(2)) {
    ins.push_back(n.in[2]);
    bias = load(2, t, {var(1)});
  }
  GemmSpec s = conv_gemm_spec(n2, c.g, wv);
  s.epilogue = bias ? acc(t) + bias : acc(t);
  c.scheduled(KernelKind::Gemm, z, ins, bias ? sum + bias : sum, s);
  c.kernel(n.out[0], {z}, load(0, t, {var(0) * cidx(OD) + var(2), var(1), var(3), var(4)}));
}

void def_conv() {
  OpDef d;
  d.name = "Conv";
  d.attrs = conv_attributes();
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Shape &x = in_val(g, n, 0).shape, &w = in_val(g, n, 1).shape;
    Shape out = conv_out_shape(n, x, w);
    if (n.has_in(2) && in_val(g, n, 2).shape != Shape{w[0]})
      fail_invalid(n.where() + ": bias must have shape [" + std::to_string(w[0]) + "]");
    set_out(n, g, 0, in_val(g, n, 0).dtype, out);
  };
  // Run-time image sizes (a fully convolutional network compiled once for
  // a range of them).
  d.dims = [](Node &n, Graph &g) { window_dims(n, g, kernel_shape_of(n, g, true)); };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 1);
    DType t = X.dtype;
    Window win = window_geometry(n, X.shape, kernel_shape_of(n, c.g, true), false);
    int64_t G = n.geti("group", 1), OC = W.shape[0], ICg = W.shape[1];
    auto id = [](ExprP v) { return v; };
    ExprP sum = conv_sum(n, X.shape, W.shape, t, t, t, id, id, run_spatial_extents(c.g, n.in[0]));
    std::vector<int> ins = {n.in[0], n.in[1]};
    ExprP bias;
    if (n.has_in(2)) {
      ins.push_back(n.in[2]);
      bias = load(2, t, {var(1)});
    }
    ExprP expr = bias ? sum + bias : sum;
    // One input channel per group and one output channel per input channel:
    // the depthwise family (vector over channels). A channel multiplier
    // above 1 stays with the generic loop emitter.
    bool depthwise = G > 1 && ICg == 1;
    if (W.is_const() && t == DType::F32 && win.nsp == 3) {
      lower_conv3d_gemm(n, c, win);
      return;
    }
    if (!W.is_const() || t != DType::F32 || win.nsp > 2 || (depthwise && OC != G)) {
      c.kernel(n.out[0], ins, expr);  // the generic loop emitter
      return;
    }
    GemmSpec s = conv_gemm_spec(n, c.g, n.in[1]);
    s.epilogue = bias ? acc(t) + bias : acc(t);
    c.scheduled(depthwise ? KernelKind::Depthwise : KernelKind::Gemm, n.out[0], ins, expr, s);
  };
  register_op(std::move(d));
}

// -------------------------------------------------------- Gemm / MatMul --

}  // namespace

// A constant [N, K, 1, 1] weight from a constant B (alpha folded in; an
// int8 B is copied as int8).
int product_weight(LowerCtx &c, const Value &B, bool b_is_kn, double alpha, int64_t K, int64_t N) {
  if (B.dtype == DType::I8) {
    Bytes w((size_t)(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) w[(size_t)(j * K + k)] = B.data->bytes[(size_t)(b_is_kn ? k * N + j : j * K + k)];
    return c.g.add_const(c.g.fresh_name(B.name + "_w"), make_const(DType::I8, {N, K, 1, 1}, std::move(w)));
  }
  std::vector<float> w((size_t)(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) w[j * K + k] = (float)(alpha * B.data->get_f(b_is_kn ? k * N + j : j * K + k));
  return c.g.add_const(c.g.fresh_name(B.name + "_w"), make_const_f32({N, K, 1, 1}, w));
}

namespace {

void def_gemm() {
  OpDef d;
  d.name = "Gemm";
  d.attrs = {"alpha", "beta", "transA", "transB", "broadcast"};  // broadcast: opset < 7, C broadcasts either way
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Shape &a = in_val(g, n, 0).shape, &b = in_val(g, n, 1).shape;
    if (a.size() != 2 || b.size() != 2) fail_invalid(n.where() + ": A and B must be 2-D");
    bool ta = n.geti("transA", 0), tb = n.geti("transB", 0);
    int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1], K2 = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
    if (K != K2) fail_invalid(n.where() + ": inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    if (n.has_in(2)) broadcast_shapes(in_val(g, n, 2).shape, {M, N}, n);
    set_out(n, g, 0, in_val(g, n, 0).dtype, {M, N});
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, 1);
    DType t = A.dtype;
    bool ta = n.geti("transA", 0), tb = n.geti("transB", 0);
    double alpha = n.getf("alpha", 1.0f), beta = n.getf("beta", 1.0f);
    int64_t K = ta ? A.shape[0] : A.shape[1], N = c.g.v(n.out[0]).shape[1];
    ExprP k = var(kFirstReduceVar);
    ExprP a = ta ? load(0, t, {k, var(0)}) : load(0, t, {var(0), k});
    ExprP b = tb ? load(1, t, {var(1), k}) : load(1, t, {k, var(1)});
    ExprP sum = reduce(ReduceKind::Sum, {{kFirstReduceVar, K}}, a * b);
    // beta * C, read from kernel slot `slot`; beta = 0 drops C (BLAS's
    // convention: C is then not read).
    const bool with_c = n.has_in(2) && beta != 0;
    auto c_term = [&](int slot) {
      ExprP y = load(slot, t, broadcast_index(in_val(c.g, n, 2).shape, 2));
      return beta == 1 ? y : y * cst(t, beta);
    };
    // alpha = 0 drops the product likewise. Computing 0 * sum instead would
    // make the sign of a zero result depend on the path: the GEMM folds
    // alpha into its weights, where sum(a * 0w) is +0 and 0 * sum(a * w)
    // may be -0.
    if (alpha == 0) {
      if (with_c)
        c.kernel(n.out[0], {n.in[2]}, c_term(0));
      else
        c.kernel(n.out[0], {}, cst(t, 0.0));
      return;
    }
    std::vector<int> ins = {n.in[0], n.in[1]};
    ExprP tail;
    if (with_c) {
      ins.push_back(n.in[2]);
      tail = c_term(2);
    }
    ExprP scaled = alpha == 1 ? sum : sum * cst(t, alpha);
    ExprP expr = tail ? scaled + tail : scaled;
    if (!B.is_const() || t != DType::F32) {
      c.kernel(n.out[0], ins, expr);
      return;
    }
    GemmSpec s;
    // The M rows take the w role: the register tile walks mr of them.
    s.in_w = s.out_w = c.g.v(n.out[0]).shape[0];
    s.in_c = K;
    s.out_c = N;
    s.weight = product_weight(c, B, !tb, alpha, K, N);
    s.out_axis[0] = -1, s.out_axis[1] = 1, s.out_axis[2] = -1, s.out_axis[3] = 0;
    s.in_axis[0] = -1, s.in_axis[1] = ta ? 0 : 1, s.in_axis[2] = -1, s.in_axis[3] = ta ? 1 : 0;
    s.epilogue = tail ? acc(t) + tail : acc(t);
    c.scheduled(KernelKind::Gemm, n.out[0], ins, expr, s);
  };
  d.dims = [](Node &n, Graph &g) {
    const Value &A = in_val(g, n, 0), &B = in_val(g, n, 1);
    bool ta = n.geti("transA", 0), tb = n.geti("transB", 0);
    if (A.dim(ta ? 0 : 1) >= 0 || B.dim(tb ? 1 : 0) >= 0)
      fail_unsupported(n.where() + ": the summed axis is a run-time dimension: not supported yet");
    Value &Y = g.v(n.out[0]);
    Y.dims = {A.dim(ta ? 1 : 0), B.dim(tb ? 0 : 1)};
    if (n.has_in(2)) {
      const Value &C = in_val(g, n, 2);
      for (int k = 0; k < C.rank(); ++k) {
        int ya = 2 - C.rank() + k;
        if (C.dim(k) >= 0 ? C.dim(k) != Y.dims[(size_t)ya] : (C.shape[(size_t)k] != 1 && Y.dims[(size_t)ya] >= 0))
          fail_unsupported(n.where() + ": C " + describe_dim(g, n.in[2], k) + " does not match the product's axis " +
                           std::to_string(ya));
      }
    }
    if (!Y.is_dynamic()) Y.dims.clear();
  };
  register_op(std::move(d));
}

}  // namespace

// The dims rule of the matrix products (MatMul, MatMulInteger,
// QLinearMatMul: A and B at inputs a_in and b_in): rows, columns and
// batch axes carry their extents; a run-time summed axis must be one
// extent in both.
void matmul_dims(Node &n, Graph &g, int a_in, int b_in) {
  const Value &A = in_val(g, n, (size_t)a_in), &B = in_val(g, n, (size_t)b_in);
  Value &Y = g.v(n.out[0]);
  const int yr = Y.rank();
  const int ka = A.rank() - 1, kb = B.rank() >= 2 ? B.rank() - 2 : 0;
  if (A.dim(ka) != B.dim(kb))  // a run-time summed axis is one extent in both
    fail_unsupported(n.where() + ": the summed axes " + describe_dim(g, n.in[(size_t)a_in], ka) + " and " +
                     describe_dim(g, n.in[(size_t)b_in], kb) + " are not one dimension");
  std::vector<int> dims((size_t)yr, -1);
  auto take = [&](int ya, int v, int axis) {
    if (ya < 0 || axis < 0) return;
    int d = g.v(v).dim(axis);
    if (d < 0) return;
    if (dims[(size_t)ya] >= 0 && dims[(size_t)ya] != d)
      fail_unsupported(n.where() + ": two run-time dimensions meet on output axis " + std::to_string(ya));
    dims[(size_t)ya] = d;
  };
  if (B.rank() >= 2) take(yr - 1, n.in[(size_t)b_in], B.rank() - 1);
  if (A.rank() >= 2) take(yr - (B.rank() >= 2 ? 2 : 1), n.in[(size_t)a_in], A.rank() - 2);
  for (int k = 0; k + 2 < A.rank(); ++k) take(yr - (B.rank() >= 2 ? 2 : 1) - (A.rank() - 2 - k), n.in[(size_t)a_in], k);
  for (int k = 0; k + 2 < B.rank(); ++k) take(yr - 2 - (B.rank() - 2 - k), n.in[(size_t)b_in], k);
  Y.dims = dims;
  if (!Y.is_dynamic()) Y.dims.clear();
}

Shape matmul_out_shape(const Node &n, Shape a, Shape b) {
  if (a.empty() || b.empty()) fail_invalid(n.where() + ": scalar operands");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    fail_invalid(n.where() + ": inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Shape out = broadcast_shapes(ba, bb, n);
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return out;
}

ExprP matmul_sum(const Shape &A, const Shape &B, int out_rank, DType at, DType bt, DType acc,
                 const std::function<ExprP(ExprP, ExprP)> &fa, const std::function<ExprP(ExprP, ExprP)> &fb) {
  bool a1 = A.size() == 1, b1 = B.size() == 1;
  int64_t K = A.back();
  int nbatch = out_rank - (a1 ? 0 : 1) - (b1 ? 0 : 1);
  ExprP k = var(kFirstReduceVar);
  auto operand = [&](const Shape &s, bool is_a) {
    std::vector<ExprP> idx;
    int vb = (int)s.size() - 2;
    for (int i = 0; i < vb; ++i) idx.push_back(s[i] == 1 ? cidx(0) : var(nbatch - vb + i));
    ExprP row;  // the row of A / column of B this element uses
    if (is_a) {
      row = a1 ? cidx(0) : var(nbatch);
      if (!a1) idx.push_back(row);
      idx.push_back(k);
    } else {
      row = b1 ? cidx(0) : var(out_rank - 1);
      idx.push_back(k);
      if (!b1) idx.push_back(row);
    }
    ExprP v = load(is_a ? 0 : 1, is_a ? at : bt, idx);
    return cast(is_a ? fa(v, row) : fb(v, row), acc);
  };
  return reduce(ReduceKind::Sum, {{kFirstReduceVar, K}}, operand(A, true) * operand(B, false));
}

GemmSpec matmul_gemm_spec(const Shape &A, int yr, int weight, const Graph &g) {
  const Shape &W = g.v(weight).shape;  // [N, K, 1, 1]
  GemmSpec s = matmul_spec(A, yr, W[1], W[0]);
  s.weight = weight;
  return s;
}

GemmSpec matmul_spec(const Shape &A, int yr, int64_t K, int64_t N) {
  GemmSpec s;
  s.in_c = K;
  s.out_c = N;
  int ar = (int)A.size();
  // Pixel roles n, h, w take A's leading axes (a 1x1 convolution).
  int roles[3] = {-1, -1, -1};
  for (int i = 0; i < ar - 1; ++i) roles[3 - (ar - 1) + i] = i;
  int64_t ext[3];
  for (int i = 0; i < 3; ++i) ext[i] = roles[i] >= 0 ? A[roles[i]] : 1;
  s.batch = ext[0];
  s.in_h = s.out_h = ext[1];
  s.in_w = s.out_w = ext[2];
  int ymap = yr - ar;  // Y has the broadcast batch rank; equals A's when B is 2-D
  s.out_axis[0] = roles[0] >= 0 ? roles[0] + ymap : -1;
  s.out_axis[1] = yr - 1;
  s.out_axis[2] = roles[1] >= 0 ? roles[1] + ymap : -1;
  s.out_axis[3] = roles[2] >= 0 ? roles[2] + ymap : -1;
  s.in_axis[0] = roles[0];
  s.in_axis[1] = ar - 1;
  s.in_axis[2] = roles[1];
  s.in_axis[3] = roles[2];
  return s;
}

namespace {

void def_matmul() {
  OpDef d;
  d.name = "MatMul";
  d.types = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U32, DType::U64};
  d.infer = [](Node &n, Graph &g) {
    set_out(n, g, 0, in_val(g, n, 0).dtype, matmul_out_shape(n, in_val(g, n, 0).shape, in_val(g, n, 1).shape));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &A = in_val(c.g, n, 0), &B = in_val(c.g, n, 1);
    const Value &Y = c.g.v(n.out[0]);
    DType t = A.dtype;
    bool a1 = A.rank() == 1;
    int64_t K = A.shape.back();
    int yr = Y.rank();
    auto id = [](ExprP v, ExprP) { return v; };
    ExprP expr = matmul_sum(A.shape, B.shape, yr, t, B.dtype, t, id, id);
    // A run-time summed axis (P V in attention over T frames): the sum's
    // extent (the GEMM's row mode takes it too, gemm_runtime_rows).
    if (A.dim(A.rank() - 1) >= 0) expr = with_runtime_extent(expr, kFirstReduceVar, c.g.extent(n.in[0], A.rank() - 1));
    std::vector<int> ins = {n.in[0], n.in[1]};
    if (!B.is_const() && t == DType::F32 && (A.rank() == 3 || A.rank() == 4) && B.rank() == A.rank() &&
        Shape(A.shape.begin(), A.shape.end() - 2) == Shape(B.shape.begin(), B.shape.end() - 2) && A.numel() > 0 &&
        B.numel() > 0) {
      // Both operands computed (attention): B packed at run time
      // (GemmSpec::arena_weights).
      GemmSpec s = matmul_spec(A.shape, yr, K, B.shape.back());
      s.arena_weights = true;
      s.epilogue = acc(t);
      c.scheduled(KernelKind::Gemm, n.out[0], ins, expr, s);
      return;
    }
    if (!B.is_const() || B.rank() != 2 || t != DType::F32 || a1 || A.rank() > 4) {
      c.kernel(n.out[0], ins, expr);
      return;
    }
    GemmSpec s = matmul_gemm_spec(A.shape, yr, product_weight(c, B, true, 1.0, K, B.shape[1]), c.g);
    s.epilogue = acc(t);
    c.scheduled(KernelKind::Gemm, n.out[0], ins, expr, s);
  };
  // Run-time extents: the rows of A and the columns of B, and batch axes
  // broadcast; the sum's K is fixed.
  d.dims = [](Node &n, Graph &g) { matmul_dims(n, g, 0, 1); };
  register_op(std::move(d));
}

// ---------------------------------------------------- BatchNormalization --

void def_batchnorm() {
  OpDef d;
  d.name = "BatchNormalization";
  d.min_opset = 1;
  d.attrs = {"epsilon", "momentum", "training_mode", "spatial", "is_test", "consumed_inputs"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    if (n.geti("training_mode", 0) != 0 || (n.opset < 7 && n.has("is_test") && n.geti("is_test", 0) == 0))
      fail_unsupported(n.where() + (n.opset < 7 ? ": is_test=0" : ": training_mode=1") + " is out of scope (training)");
    if (n.geti("spatial", 1) != 1) fail_unsupported(n.where() + ": spatial=0");
    for (size_t k = 1; k < n.out.size(); ++k)
      if (n.out[k] >= 0) fail_unsupported(n.where() + ": training outputs (running mean/var)");
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 2) fail_invalid(n.where() + ": input rank must be >= 2");
    for (size_t k = 1; k < 5; ++k)
      if (in_val(g, n, k).shape != Shape{x.shape[1]})
        fail_invalid(n.where() + ": parameter " + std::to_string(k) + " must have shape [C]");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    double eps = n.getf("epsilon", 1e-5f);
    ExprP ch = var(1);
    auto p = [&](int k) { return load(k, t, {ch}); };
    // y = (x - mean) / sqrt(var + eps) * scale + bias
    ExprP y = (load(0, t, out_vars(x.rank())) - p(3)) / un(EOp::Sqrt, p(4) + cst(t, eps)) * p(1) + p(2);
    c.kernel(n.out[0], {n.in[0], n.in[1], n.in[2], n.in[3], n.in[4]}, y);
  };
  register_op(std::move(d));
}

// ------------------------------------------------------------- Pooling --

void def_pool(const std::string &name, bool is_max) {
  OpDef d;
  d.name = name;
  d.min_opset = 1;
  d.attrs = {"auto_pad", "ceil_mode", "kernel_shape", "pads", "strides"};
  if (is_max)
    d.attrs.insert(d.attrs.end(), {"dilations", "storage_order"});
  else
    d.attrs.insert(d.attrs.end(), {"count_include_pad", "dilations"});
  d.types = is_max ? std::vector<DType>{DType::F32, DType::F64, DType::I8, DType::U8} : kFloat;
  d.infer = [is_max](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    Window w = window_geometry(n, x.shape, kernel_shape_of(n, g, false), n.geti("ceil_mode", 0));
    Shape out = {x.shape[0], x.shape[1]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    set_out(n, g, 0, x.dtype, out);
    if (is_max) set_out(n, g, 1, DType::I64, out);
  };
  d.dims = [](Node &n, Graph &g) { window_dims(n, g, kernel_shape_of(n, g, false)); };
  d.lower = [is_max](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    Window w = window_geometry(n, x.shape, kernel_shape_of(n, c.g, false), n.geti("ceil_mode", 0));
    // The input's spatial sizes: its run-time extents, or constants.
    std::vector<ExprP> in = spatial_extents(c.g, n.in[0]);
    std::vector<RVar> rv;
    std::vector<ExprP> xi = {var(0), var(1)};
    ExprP inside = cbool(true), in_padded = cbool(true);
    for (int i = 0; i < w.nsp; ++i) {
      ExprP kv = var(kFirstReduceVar + i);
      rv.push_back({kFirstReduceVar + i, w.k[i]});
      ExprP pos = var(2 + i) * cidx(w.s[i]) + kv * cidx(w.d[i]) - cidx(w.pb[i]);
      inside = land(inside, land(ge(pos, cidx(0)), lt(pos, in[(size_t)i])));
      in_padded = land(in_padded, lt(pos, in[(size_t)i] + cidx(w.pe[i])));
      xi.push_back(pos);
    }
    ExprP xv = load(0, t, xi);
    if (is_max) {
      ExprP body = select(inside, xv, reduce_init_cst(ReduceKind::Max, t));
      bool want_idx = n.out.size() > 1 && n.out[1] >= 0;
      int mx = n.out[0] >= 0 ? n.out[0] : c.temp(x.name + "_max", t, c.g.v(n.out[1]).shape);
      c.kernel(mx, {n.in[0]}, reduce(ReduceKind::Max, rv, body));
      if (!want_idx) return;
      // Indices: the first window position holding the max, flattened over
      // the whole input (column-major within a plane for storage_order 1).
      ExprP lin = var(0) * cidx(x.shape[1]) + var(1);
      ExprP plane = cidx(1);
      for (int i = 0; i < w.nsp; ++i) plane = plane * in[(size_t)i];
      if (n.geti("storage_order", 0) == 0) {
        for (int i = 0; i < w.nsp; ++i) lin = lin * in[(size_t)i] + xi[2 + i];
      } else {
        ExprP inner = cidx(0);
        for (int i = w.nsp; i-- > 0;) inner = inner * in[(size_t)i] + xi[2 + i];
        lin = lin * plane + inner;
      }
      // The window element is read only inside the input (a select guards
      // its load; `inside && x == max` read it at padded positions too).
      ExprP hit = select(inside, bin(EOp::Eq, xv, load(1, t, out_vars(x.rank()))), cbool(false));
      int64_t big = x.numel();
      c.kernel(n.out[1], {n.in[0], mx}, cast(reduce(ReduceKind::Min, rv, select(hit, lin, cidx(big))), DType::I64));
      return;
    }
    ExprP sum = reduce(ReduceKind::Sum, rv, select(inside, xv, cst(t, 0)));
    // Divisor: window positions inside the input, or inside input plus
    // explicit padding with count_include_pad (never the ceil overhang).
    ExprP counted = n.geti("count_include_pad", 0) ? in_padded : inside;
    ExprP count = reduce(ReduceKind::Sum, rv, select(counted, cst(t, 1), cst(t, 0)));
    c.kernel(n.out[0], {n.in[0]}, sum / count);
  };
  register_op(std::move(d));
}

void def_global_pool(const std::string &name, bool is_max) {
  OpDef d;
  d.name = name;
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 3) fail_invalid(n.where() + ": input rank must be >= 3");
    Shape out = x.shape;
    for (size_t k = 2; k < out.size(); ++k) out[k] = 1;
    set_out(n, g, 0, x.dtype, out);
  };
  // Run-time spatial sizes are reduced over; a run-time batch carries over.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.dim(1) >= 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 1) + ": " + n.op +
                       " takes run-time batch and spatial dimensions only");
    Value &o = g.v(n.out[0]);
    o.dims.assign((size_t)o.rank(), -1);
    o.dims[0] = x.dim(0);
    if (!o.is_dynamic()) o.dims.clear();
  };
  d.lower = [is_max](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    std::vector<RVar> rv;
    std::vector<ExprP> xi = {var(0), var(1)};
    ExprP count = cidx(1);
    for (int i = 2; i < x.rank(); ++i) {
      ExprP e = c.g.extent(n.in[0], i);
      rv.push_back({kFirstReduceVar + i, x.shape[i], e->is_const() ? nullptr : e});
      xi.push_back(var(kFirstReduceVar + i));
      count = count * e;
    }
    ExprP r = reduce(is_max ? ReduceKind::Max : ReduceKind::Sum, rv, load(0, x.dtype, xi));
    c.kernel(n.out[0], {n.in[0]}, is_max ? r : r / cast(count, x.dtype));
  };
  register_op(std::move(d));
}

// ----------------------------------------------------- ConvTranspose --

struct TransposeGeometry {
  int nsp;
  std::vector<int64_t> in, k, s, d, pb, out;
  // x's spatial extents when some are run-time (Graph::extent), else empty.
  std::vector<ExprP> in_ext;
  // A tap's source position `pos` lies inside x along spatial axis i.
  ExprP inside(int i, ExprP pos) const { return in_ext.empty() ? lt(pos, cidx(in[i])) : lt(pos, in_ext[(size_t)i]); }
};

TransposeGeometry transpose_geometry(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape, &w = in_val(g, n, 1).shape;
  TransposeGeometry t;
  t.nsp = (int)x.size() - 2;
  if (t.nsp < 1 || w.size() != x.size()) fail_invalid(n.where() + ": input and weight ranks do not match");
  t.in.assign(x.begin() + 2, x.end());
  t.k = n.has("kernel_shape") ? n.getints("kernel_shape") : std::vector<int64_t>(w.begin() + 2, w.end());
  t.s = n.getints("strides", std::vector<int64_t>(t.nsp, 1));
  t.d = n.getints("dilations", std::vector<int64_t>(t.nsp, 1));
  std::vector<int64_t> pads = n.getints("pads", std::vector<int64_t>(2 * t.nsp, 0));
  std::vector<int64_t> opad = n.getints("output_padding", std::vector<int64_t>(t.nsp, 0));
  std::vector<int64_t> oshape = n.getints("output_shape");
  if (oshape.size() == x.size()) oshape.erase(oshape.begin(), oshape.begin() + 2);
  auto need = [&](const std::vector<int64_t> &v, size_t len, const char *what) {
    if (v.size() != len)
      fail_invalid(n.where() + ": " + what + " has " + std::to_string(v.size()) + " entries for " +
                   std::to_string(t.nsp) + " spatial dims");
  };
  need(t.k, t.nsp, "kernel_shape");
  need(t.s, t.nsp, "strides");
  need(t.d, t.nsp, "dilations");
  need(pads, 2 * t.nsp, "pads");
  need(opad, t.nsp, "output_padding");
  if (!oshape.empty()) need(oshape, t.nsp, "output_shape");
  for (int i = 0; i < t.nsp; ++i) {
    if (t.k[i] < 1 || t.s[i] < 1 || t.d[i] < 1 || t.k[i] != w[2 + i])
      fail_invalid(n.where() + ": kernel_shape, strides and dilations must be positive and match the weight " +
                   shape_str(w));
    if (opad[i] < 0) fail_invalid(n.where() + ": output_padding must not be negative");
  }
  std::string ap = n.gets("auto_pad", "NOTSET");
  t.pb.resize(t.nsp);
  t.out.resize(t.nsp);
  for (int i = 0; i < t.nsp; ++i) {
    int64_t ext = (t.k[i] - 1) * t.d[i] + 1;
    int64_t full = t.s[i] * (t.in[i] - 1) + opad[i] + ext;
    if (!oshape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t o = !oshape.empty() ? oshape.at(i) : t.in[i] * t.s[i];
      int64_t total = full - o;
      // Floor division: a negative total (output larger than the full
      // result) pads at the end, as ONNX's reference does.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      t.pb[i] = ap == "SAME_UPPER" ? half : total - half;
      t.out[i] = o;
    } else {
      t.pb[i] = ap == "VALID" ? 0 : pads[i];
      int64_t pe = ap == "VALID" ? 0 : pads[i + t.nsp];
      t.out[i] = full - t.pb[i] - pe;
    }
    if (t.out[i] <= 0) fail_invalid(n.where() + ": empty output");
  }
  t.in_ext = run_spatial_extents(g, n.in[0]);
  return t;
}

// The dims rule of ConvTranspose: a run-time batch carries over; a
// run-time spatial axis of x gives the output the extent
// s * (in - 1) + output_padding + (k - 1) * d + 1 - pads, for explicit pads
// (an output_shape or SAME padding would fix or shift the output by the
// run's size). Run-time channels are refused.
void transpose_dims(Node &n, Graph &g) {
  const Value &x = in_val(g, n, 0);
  only_run_time_images(n, g);
  TransposeGeometry t = transpose_geometry(n, g);
  std::vector<int64_t> pads = n.getints("pads", std::vector<int64_t>(2 * t.nsp, 0));
  std::vector<int64_t> opad = n.getints("output_padding", std::vector<int64_t>(t.nsp, 0));
  std::string ap = n.gets("auto_pad", "NOTSET");
  std::vector<int> dims((size_t)x.rank(), -1);
  dims[0] = x.dim(0);
  for (int i = 0; i < t.nsp; ++i) {
    if (x.dim(2 + i) < 0) continue;
    if (n.has("output_shape") || (ap != "NOTSET" && ap != "VALID"))
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 2 + i) +
                       (n.has("output_shape") ? " with output_shape" : " with auto_pad " + ap) +
                       ": the output size would not follow the run's input size (export explicit pads)");
    int64_t pe = ap == "VALID" ? 0 : pads[(size_t)(i + t.nsp)], pb = ap == "VALID" ? 0 : pads[(size_t)i];
    int64_t extra = opad[(size_t)i] + (t.k[i] - 1) * t.d[i] + 1 - t.s[i] - pb - pe;
    int64_t lo = g.syms[(size_t)x.dim(2 + i)].lo;
    if (t.s[i] * lo + extra < 1)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 2 + i) + ": an input of " + std::to_string(lo) +
                       " gives an empty output with these pads; the range must start higher");
    ExprP out = g.extent(n.in[0], 2 + i) * cidx(t.s[i]) + cidx(extra);
    dims[(size_t)(2 + i)] = g.derived_sym(out, g.v(n.out[0]).name + "[" + std::to_string(2 + i) + "]");
  }
  Value &y = g.v(n.out[0]);
  y.dims = dims;
  if (!y.is_dynamic()) y.dims.clear();
}

// The element types of a transposed convolution: float, or (ConvTransposeInteger)
// 8-bit x and w summed in int32 as (x - x_zero) * w.
struct TransposeTypes {
  DType x = DType::F32, w = DType::F32, acc = DType::F32;
  bool integer = false;
  int64_t x_zero = 0;  // constant x zero point (QGemm), when `zero_slot` < 0
  int zero_slot = -1;  // a run-time zero point's slot (the loop kernel), or -1
  int zero_rank = 0;
  ExprP xv(ExprP v) const {
    if (!integer) return v;
    ExprP r = cast(v, DType::I32);
    if (zero_slot >= 0) return r - cast(load(zero_slot, x, std::vector<ExprP>(zero_rank, cidx(0))), DType::I32);
    return x_zero ? r - cidx(x_zero) : r;
  }
  ExprP wv(ExprP v) const { return integer ? cast(v, DType::I32) : v; }
};

// ConvTranspose with constant weights as a GEMM then col2im:
//   Z[n, t*OC + oc, i...] = sum_ic x[n, ic, i...] * W[ic, oc, t]   (t = a tap)
// is a 1x1 convolution with OC*taps output channels (the GEMM emitter; the
// int8 GEMM for ConvTransposeInteger, Z then int32);
//   y[n, oc, o...] = sum_t Z[n, t*OC + oc, (o + pb - k*d) / s...]
// over the taps whose division is exact and in range (a loop kernel; with
// Z channels-last it reads vectors of output channels).
void lower_conv_transpose_gemm(const Node &n, LowerCtx &c, const TransposeGeometry &geo, const TransposeTypes &ty) {
  const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 1);
  const DType t = ty.acc;
  int64_t N = X.shape[0], IC = X.shape[1], OC = W.shape[1], taps = 1;
  for (int i = 0; i < geo.nsp; ++i) taps *= geo.k[i];
  // W'[t*OC + oc, ic, 1...] = W[ic, oc, t]
  int eb = dtype_bytes(W.dtype);
  Bytes wp((size_t)(taps * OC * IC * eb));
  const uint8_t *w = W.data->bytes.data();
  for (int64_t ic = 0; ic < IC; ++ic)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t tp = 0; tp < taps; ++tp)
        std::memcpy(&wp[(size_t)(((tp * OC + oc) * IC + ic) * eb)], w + ((ic * OC + oc) * taps + tp) * eb, (size_t)eb);
  Shape wshape = {taps * OC, IC};
  for (int i = 0; i < geo.nsp; ++i) wshape.push_back(1);
  int wv = c.g.add_const(c.g.fresh_name(W.name + "_taps"), make_const(W.dtype, wshape, std::move(wp)));
  Shape zshape = {N, taps * OC};
  zshape.insert(zshape.end(), geo.in.begin(), geo.in.end());
  c.g.check_size(zshape, n.where() + ": the ConvTranspose's intermediate");
  int z = c.temp(n.out[0] >= 0 ? c.g.v(n.out[0]).name + "_taps" : "taps", t, zshape);

  GemmSpec s;
  s.batch = N;
  s.in_c = IC;
  s.out_c = taps * OC;
  s.weight = wv;
  s.x_zero = ty.x_zero;
  s.in_w = s.out_w = geo.in[geo.nsp - 1];
  if (geo.nsp == 2) {
    s.in_h = s.out_h = geo.in[0];
  } else {
    s.out_axis[2] = s.in_axis[2] = -1;
    s.out_axis[3] = s.in_axis[3] = 2;
  }
  s.epilogue = acc(t);
  std::vector<ExprP> xi = {var(0), var(kFirstReduceVar)}, wi = {var(1), var(kFirstReduceVar)};
  for (int i = 0; i < geo.nsp; ++i) {
    xi.push_back(var(2 + i));
    wi.push_back(cidx(0));
  }
  ExprP zexpr = reduce(ReduceKind::Sum, {{kFirstReduceVar, IC}}, ty.xv(load(0, ty.x, xi)) * ty.wv(load(1, ty.w, wi)));
  c.scheduled(ty.integer ? KernelKind::QGemm : KernelKind::Gemm, z, {n.in[0], wv}, zexpr, s);

  // col2im: one reduction variable per spatial axis walks the kernel.
  ExprP ok = cbool(true), tap = cidx(0);
  std::vector<RVar> rv;
  std::vector<ExprP> zi = {var(0), nullptr};
  for (int i = 0; i < geo.nsp; ++i) {
    ExprP kv = var(kFirstReduceVar + i);
    rv.push_back({kFirstReduceVar + i, geo.k[i]});
    tap = tap * cidx(geo.k[i]) + kv;
    ExprP num = var(2 + i) + cidx(geo.pb[i]) - kv * cidx(geo.d[i]);
    ExprP pos = bin(EOp::Div, emax(num, cidx(0)), cidx(geo.s[i]));
    ok = land(ok, land(ge(num, cidx(0)), land(bin(EOp::Eq, bin(EOp::Rem, emax(num, cidx(0)), cidx(geo.s[i])), cidx(0)),
                                              geo.inside(i, pos))));
    zi.push_back(pos);
  }
  zi[1] = tap * cidx(OC) + var(1);
  ExprP y = reduce(ReduceKind::Sum, rv, select(ok, load(0, t, zi), cst(t, 0)));
  std::vector<int> ins = {z};
  if (!ty.integer && n.has_in(2)) {
    ins.push_back(n.in[2]);
    y = y + load(1, t, {var(1)});
  }
  c.kernel(n.out[0], ins, y);
}

Shape conv_transpose_shape(const Node &n, const Graph &g) {
  const Shape &x = in_val(g, n, 0).shape, &w = in_val(g, n, 1).shape;
  int64_t G = n.geti("group", 1);
  TransposeGeometry t = transpose_geometry(n, g);  // first: checks the ranks
  if (G < 1 || w[0] != x[1] || x[1] % G)
    fail_invalid(n.where() + ": weight " + shape_str(w) + " does not match input " + shape_str(x));
  Shape out = {x[0], w[1] * G};
  out.insert(out.end(), t.out.begin(), t.out.end());
  return out;
}

void lower_conv_transpose(const Node &n, LowerCtx &c, const TransposeTypes &ty) {
  const Value &X = in_val(c.g, n, 0), &W = in_val(c.g, n, 1);
  TransposeGeometry geo = transpose_geometry(n, c.g);
  int64_t G = n.geti("group", 1), Cg = X.shape[1] / G, OCg = W.shape[1];
  // out[n, oc, o] = sum_{ic, k} x[n, g*Cg + ic, (o + pb - k*d) / s] * W[g*Cg + ic, oc % OCg, k]
  // over the positions where the division is exact and in range.
  std::vector<RVar> rv = {{kFirstReduceVar, Cg}};
  ExprP cin = var(kFirstReduceVar);
  if (G > 1) cin = bin(EOp::Div, var(1), cidx(OCg)) * cidx(Cg) + cin;
  std::vector<ExprP> xi = {var(0), cin}, wi = {cin, G > 1 ? bin(EOp::Rem, var(1), cidx(OCg)) : var(1)};
  ExprP ok = cbool(true);
  for (int i = 0; i < geo.nsp; ++i) {
    ExprP kv = var(kFirstReduceVar + 1 + i);
    rv.push_back({kFirstReduceVar + 1 + i, geo.k[i]});
    ExprP num = var(2 + i) + cidx(geo.pb[i]) - kv * cidx(geo.d[i]);
    ExprP pos = bin(EOp::Div, emax(num, cidx(0)), cidx(geo.s[i]));
    ok = land(ok, land(ge(num, cidx(0)), land(bin(EOp::Eq, bin(EOp::Rem, emax(num, cidx(0)), cidx(geo.s[i])), cidx(0)),
                                              geo.inside(i, pos))));
    xi.push_back(pos);
    wi.push_back(kv);
  }
  ExprP sum =
      reduce(ReduceKind::Sum, rv, select(ok, ty.xv(load(0, ty.x, xi)) * ty.wv(load(1, ty.w, wi)), cst(ty.acc, 0)));
  std::vector<int> ins = {n.in[0], n.in[1]};
  if (!ty.integer && n.has_in(2)) {
    ins.push_back(n.in[2]);
    sum = sum + load(2, ty.acc, {var(1)});
  }
  if (ty.integer && ty.zero_slot >= 0) ins.push_back(n.in[2]);
  if (W.is_const() && G == 1 && geo.nsp <= 2 && ty.zero_slot < 0 && (ty.integer || X.dtype == DType::F32)) {
    lower_conv_transpose_gemm(n, c, geo, ty);
    return;
  }
  c.kernel(n.out[0], ins, sum);
}

const std::vector<std::string> kConvTransposeAttrs = {"auto_pad",       "dilations",    "group", "kernel_shape",
                                                      "output_padding", "output_shape", "pads",  "strides"};

void def_conv_transpose() {
  OpDef d;
  d.name = "ConvTranspose";
  d.attrs = kConvTransposeAttrs;
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, conv_transpose_shape(n, g)); };
  d.dims = transpose_dims;
  d.lower = [](const Node &n, LowerCtx &c) {
    TransposeTypes ty;
    ty.x = ty.w = ty.acc = in_val(c.g, n, 0).dtype;
    lower_conv_transpose(n, c, ty);
  };
  register_op(std::move(d));
}

// ConvTransposeInteger (domain tinyrt; what fuse_qdq writes for a QDQ
// ConvTranspose, as ConvInteger for a Conv): x uint8 or int8, w int8, an
// optional scalar x zero point; y int32 = the transposed convolution of
// (x - x_zero) by w, exact. Constant weights and zero point: the int8 GEMM
// then col2im in int32.
void def_conv_transpose_integer() {
  OpDef d;
  d.name = "ConvTransposeInteger";
  d.domain = "tinyrt";
  d.attrs = kConvTransposeAttrs;
  d.types = {DType::U8, DType::I8};
  d.infer = [](Node &n, Graph &g) {
    if (!n.has_in(1) || in_val(g, n, 1).dtype != DType::I8) fail_invalid(n.where() + ": w must be int8");
    if (n.has_in(2) && (in_val(g, n, 2).numel() != 1 || in_val(g, n, 2).dtype != in_val(g, n, 0).dtype))
      fail_invalid(n.where() + ": x_zero_point must be one element of x's type");
    set_out(n, g, 0, DType::I32, conv_transpose_shape(n, g));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    TransposeTypes ty;
    ty.x = in_val(c.g, n, 0).dtype;
    ty.w = DType::I8;
    ty.acc = DType::I32;
    ty.integer = true;
    if (n.has_in(2)) {
      const Value &z = in_val(c.g, n, 2);
      if (z.is_const())
        ty.x_zero = z.data->get_i(0);
      else
        ty.zero_slot = 2, ty.zero_rank = z.rank();
    }
    lower_conv_transpose(n, c, ty);
  };
  register_op(std::move(d));
}

// MaxUnpool: every input value goes to the output position its index names.
void def_max_unpool() {
  OpDef d;
  d.name = "MaxUnpool";
  d.min_opset = 9;
  d.attrs = {"kernel_shape", "pads", "strides"};
  d.const_inputs = {2};
  // The shape MaxPool's input had: indices are flat positions in it.
  auto unpooled = [](const Node &n, const Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int64_t> k = n.getints("kernel_shape"), s = n.getints("strides", std::vector<int64_t>(k.size(), 1));
    std::vector<int64_t> p = n.getints("pads", std::vector<int64_t>(2 * k.size(), 0));
    if ((int)k.size() != x.rank() - 2) fail_invalid(n.where() + ": kernel_shape does not match the input");
    if (s.size() != k.size() || p.size() != 2 * k.size())
      fail_invalid(n.where() + ": strides has " + std::to_string(s.size()) + " and pads " + std::to_string(p.size()) +
                   " entries for " + std::to_string(k.size()) + " spatial dims");
    Shape out = {x.shape[0], x.shape[1]};
    for (size_t i = 0; i < k.size(); ++i) out.push_back((x.shape[2 + i] - 1) * s[i] + k[i] - p[i] - p[i + k.size()]);
    return out;
  };
  d.types = kFloat;
  d.infer = [unpooled](Node &n, Graph &g) {
    Shape out = unpooled(n, g);
    // The kernel reads an index for every input element.
    require_types(n, g, 1, {DType::I64});
    if (in_val(g, n, 1).shape != in_val(g, n, 0).shape)
      fail_invalid(n.where() + ": indices have shape " + shape_str(in_val(g, n, 1).shape) + ", the input " +
                   shape_str(in_val(g, n, 0).shape));
    if (n.has_in(2)) {
      std::vector<int64_t> os = const_ints(g, n, 2);
      for (size_t i = 0; i < out.size(); ++i)  // the kernel indexes both alike
        if (os.size() != out.size() || os[i] < out[i])
          fail_invalid(n.where() + ": output_shape " + shape_str(Shape(os.begin(), os.end())) +
                       " is not the unpooled shape " + shape_str(out) + " or larger");
      out.assign(os.begin(), os.end());  // larger: the extra rows/columns stay zero
    }
    // Flat positions in the output; the kernel writes none for another.
    require_const_values_in(n, g, 1, 0, shape_numel(out), "index");
    set_out(n, g, 0, in_val(g, n, 0).dtype, out);
  };
  d.lower = [unpooled](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1);
    Shape os = unpooled(n, c.g);
    ExprP lin = cidx(0);
    ExprP inside = cbool(true);
    for (size_t i = 0; i < os.size(); ++i) {
      lin = lin * cidx(os[i]) + var((int)i);
      inside = land(inside, lt(var((int)i), cidx(os[i])));
    }
    lin = select(inside, lin, cidx(-1));
    std::vector<RVar> rv;
    std::vector<ExprP> xi = {var(0), var(1)};
    for (int i = 2; i < x.rank(); ++i) {
      rv.push_back({kFirstReduceVar + i, x.shape[i]});
      xi.push_back(var(kFirstReduceVar + i));
    }
    ExprP hit = bin(EOp::Eq, cast(load(1, ix.dtype, xi), kIndexType), lin);
    c.kernel(n.out[0], {n.in[0], n.in[1]},
             reduce(ReduceKind::Sum, rv, select(hit, load(0, x.dtype, xi), cst(x.dtype, 0))));
  };
  register_op(std::move(d));
}

ExprP lp_finish(ExprP sum, int64_t p) {
  if (p == 1) return sum;
  if (p == 2) return un(EOp::Sqrt, sum);
  return bin(EOp::Pow, sum, cst(sum->type, 1.0 / (double)p));
}

ExprP lp_term(ExprP x, int64_t p) {
  ExprP a = un(EOp::Abs, x);
  if (p == 1) return a;
  if (p == 2) return x * x;
  return bin(EOp::Pow, a, cst(x->type, (double)p));
}

void def_lp_pool() {
  OpDef d;
  d.name = "LpPool";
  d.min_opset = 2;
  d.attrs = {"auto_pad", "kernel_shape", "p", "pads", "strides", "dilations", "ceil_mode"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    Window w = window_geometry(n, x.shape, kernel_shape_of(n, g, false), n.geti("ceil_mode", 0));
    Shape out = {x.shape[0], x.shape[1]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    set_out(n, g, 0, x.dtype, out);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    Window w = window_geometry(n, x.shape, kernel_shape_of(n, c.g, false), n.geti("ceil_mode", 0));
    int64_t p = n.geti("p", 2);
    std::vector<RVar> rv;
    std::vector<ExprP> xi = {var(0), var(1)};
    ExprP inside = cbool(true);
    for (int i = 0; i < w.nsp; ++i) {
      ExprP kv = var(kFirstReduceVar + i);
      rv.push_back({kFirstReduceVar + i, w.k[i]});
      ExprP pos = var(2 + i) * cidx(w.s[i]) + kv * cidx(w.d[i]) - cidx(w.pb[i]);
      inside = land(inside, in_range(pos, w.in[i]));
      xi.push_back(pos);
    }
    ExprP term = select(inside, lp_term(load(0, x.dtype, xi), p), cst(x.dtype, 0));
    c.kernel(n.out[0], {n.in[0]}, lp_finish(reduce(ReduceKind::Sum, rv, term), p));
  };
  register_op(std::move(d));
}

void def_global_lp_pool() {
  OpDef d;
  d.name = "GlobalLpPool";
  d.min_opset = 2;
  d.attrs = {"p"};
  d.types = kFloat;
  d.infer = [](Node &n, Graph &g) {
    Shape out = in_val(g, n, 0).shape;
    for (size_t k = 2; k < out.size(); ++k) out[k] = 1;
    set_out(n, g, 0, in_val(g, n, 0).dtype, out);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int64_t p = n.geti("p", 2);
    std::vector<RVar> rv;
    std::vector<ExprP> xi = {var(0), var(1)};
    for (int i = 2; i < x.rank(); ++i) {
      rv.push_back({kFirstReduceVar + i, x.shape[i]});
      xi.push_back(var(kFirstReduceVar + i));
    }
    c.kernel(n.out[0], {n.in[0]}, lp_finish(reduce(ReduceKind::Sum, rv, lp_term(load(0, x.dtype, xi), p)), p));
  };
  register_op(std::move(d));
}

}  // namespace

void register_nn_ops() {
  def_conv();
  def_gemm();
  def_matmul();
  def_batchnorm();
  def_pool("MaxPool", true);
  def_pool("AveragePool", false);
  def_global_pool("GlobalAveragePool", false);
  def_global_pool("GlobalMaxPool", true);
  def_conv_transpose();
  def_conv_transpose_integer();
  def_max_unpool();
  def_lp_pool();
  def_global_lp_pool();
}

}  // namespace tinyrt
