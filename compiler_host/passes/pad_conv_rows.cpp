// pad_conv_rows.cpp — a convolution (2-D or 1-D) over a few input channels
// (an RGB image, raw audio, a spectrogram) reads a padded, channels-last
// copy of its input, so that each kernel row's k_w * in_c inputs are
// contiguous and inside the copy: the GEMM then takes them as one K of
// k_w * in_c (GemmSpec::k_run) instead of k_w taps of in_c channels, and no
// tile needs border handling. int8: always (otherwise each tap's channels
// are padded to a quad of 4 bytes). float: where the GEMM multiplies by
// lane (NEON, Target::gemm_lane_mac), whose 4-input loads need 4
// contiguous inputs (one to three channels give none); x86 broadcasts one
// input at a time, where the copy would only cost a pass.
//
// The copy is a loop kernel placed before the convolution; the kernel
// that quantizes the input is inlined into it later (fuse_elementwise),
// so the image is read once.
//
// Run-time image sizes: the copy's extents are computed from the run's
// output size ((out - 1) * stride + window), its padding placed at the
// run's edges; its layout is the bounds' as every value's. The GEMM then
// reads every window inside it, as with fixed sizes: no tile tests its
// borders at run time.
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr int64_t kMaxChannels = 8;  // as choose_layouts: fewer are read strided

// 2-D (N, C, H, W) or 1-D (N, C, W) convolutions in the standard axis
// order.
bool applies(const Graph &g, const Kernel &k, const Target &t) {
  const GemmSpec &s = k.gemm;
  bool int8 = k.kind == KernelKind::QGemm;
  bool lane_float = k.kind == KernelKind::Gemm && t.gemm_lane_mac != Target::LaneMac::None;
  if (!(int8 || lane_float) || s.groups != 1 || s.in_c >= kMaxChannels || s.dil_w != 1 || s.k_w * s.in_c < 4)
    return false;
  const Value &x = g.v(k.ins[0]);
  if (x.is_const() || s.in_axis[0] != 0 || s.in_axis[1] != 1) return false;
  // Run-time extents: the image's sizes only (as the GEMM takes them).
  if ((x.is_dynamic() || g.v(k.out).is_dynamic()) && gemm_runtime_spatial(s, g.v(k.out), x) <= 0) return false;
  if (x.rank() == 4) return s.in_axis[2] == 2 && s.in_axis[3] == 3;
  return x.rank() == 3 && s.in_axis[2] == -1 && s.in_axis[3] == 2 && s.k_h == 1;
}

}  // namespace

void pad_conv_rows(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  int copies = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    if (!applies(g, p.kernels[i], c.target)) continue;
    GemmSpec &s = p.kernels[i].gemm;
    const Value x = g.v(p.kernels[i].ins[0]);
    // Rows and columns the windows read, padding included.
    int64_t H = (s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dil_h + 1;
    int64_t W = (s.out_w - 1) * s.stride_w + s.k_w;
    bool one_d = x.rank() == 3;
    Shape shape = one_d ? Shape{x.shape[0], x.shape[1], W} : Shape{x.shape[0], x.shape[1], H, W};
    check_tensor_size(shape, g.limits, "the padded input of '" + p.kernels[i].label + "'");
    const std::string name = g.fresh_name(x.name + "_padded");
    // The padded extents and the input's (its run-time ones, else fixed).
    const int oh_axis = s.out_axis[2], ow_axis = s.out_axis[3];
    ExprP rows_at =
        oh_axis >= 0 ? (g.extent(p.kernels[i].out, oh_axis) - 1) * s.stride_h + ((s.k_h - 1) * s.dil_h + 1) : cidx(H);
    ExprP cols_at = (g.extent(p.kernels[i].out, ow_axis) - 1) * s.stride_w + s.k_w;
    std::vector<int> dims;
    if (x.is_dynamic() || g.v(p.kernels[i].out).is_dynamic()) {
      dims.assign(shape.size(), -1);
      dims.back() = g.derived_sym(cols_at, name + "[" + std::to_string(shape.size() - 1) + "]");
      if (!one_d) dims[2] = g.derived_sym(rows_at, name + "[2]");
    }
    int xp = g.add_value(name, x.dtype, shape);
    g.values[(size_t)xp].dims = dims;
    for (size_t a = 0; a < dims.size(); ++a)
      TINYRT_CHECK(dims[a] < 0 || g.syms[(size_t)dims[a]].hi <= shape[a], "padded input past its bounds");
    Kernel pad;
    pad.out = xp;
    pad.ins = {p.kernels[i].ins[0]};
    ExprP zp = cst(x.dtype, (double)s.x_zero);
    const int xv = pad.ins[0];  // (its extents: run-time ones, or fixed)
    if (one_d) {
      ExprP w = var(2) - s.pad_l;
      pad.expr = select(in_range(w, g.extent(xv, 2)), load(0, x.dtype, {var(0), var(1), w}), zp);
    } else {
      ExprP h = var(2) - s.pad_t, w = var(3) - s.pad_l;
      pad.expr = select(land(in_range(h, g.extent(xv, 2)), in_range(w, g.extent(xv, 3))),
                        load(0, x.dtype, {var(0), var(1), h, w}), zp);
    }
    pad.label = "PadConvInput";
    pad.nodes = p.kernels[i].nodes;  // the convolution it serves
    pad.guard = p.kernels[i].guard;
    p.kernels[i].ins[0] = xp;
    s.in_h = H;
    s.in_w = W;
    s.pad_t = s.pad_l = 0;
    s.k_run = true;
    p.kernels.insert(p.kernels.begin() + (long)i, pad);
    ++i;
    ++copies;
  }
  if (c.log && copies) *c.log << "pad_conv_rows: " << copies << " convolutions read padded channels-last rows\n";
}

}  // namespace tinyrt
