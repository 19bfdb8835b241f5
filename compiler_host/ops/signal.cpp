// signal.cpp — audio front-end ops: the Hann/Hamming/Blackman windows and
// MelWeightMatrix (constants, folded at compile time), DFT and STFT (direct
// sums; the twiddle angle is reduced modulo the length in integers first,
// so large indices keep their precision).
#include <cmath>
#include <cstring>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

constexpr double kPi = 3.14159265358979323846;

int64_t scalar_int(const Graph &g, const Node &n, size_t k) {
  std::vector<int64_t> v = const_ints(g, n, k);
  if (v.size() != 1) fail_invalid(n.where() + ": input " + std::to_string(k) + " must be a scalar");
  return v[0];
}

// A folded output of shape `s`, checked against the tensor and folding
// caps before its values (doubles) are computed.
void check_folded(const Node &n, const Graph &g, const Shape &s) {
  g.check_size(s, n.where() + ": output 0");
  int64_t bytes = shape_numel(s) * (int64_t)sizeof(double);
  if (bytes > g.limits.max_folded_bytes)
    fail_cap(n.where() + ": a constant of " + std::to_string(bytes) + " bytes exceeds --max-folded-bytes " +
             std::to_string(g.limits.max_folded_bytes));
}

// A constant of `t` from doubles.
ConstP const_of(DType t, Shape shape, const std::vector<double> &v) {
  int eb = dtype_bytes(t);
  Bytes b(v.size() * eb);
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t *p = b.data() + i * eb;
    switch (t) {
      case DType::F32: {
        float x = (float)v[i];
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::F64: std::memcpy(p, &v[i], 8); break;
      case DType::F16: {
        uint16_t h = float_to_half((float)v[i]);
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::I32: {
        int32_t x = (int32_t)v[i];
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::I64: {
        int64_t x = (int64_t)v[i];
        std::memcpy(p, &x, 8);
        break;
      }
      case DType::U8: *p = (uint8_t)v[i]; break;
      case DType::I8: *p = (uint8_t)(int8_t)v[i]; break;
      default: fail_unsupported(std::string("output_datatype ") + dtype_name(t));
    }
  }
  return make_const(t, std::move(shape), std::move(b));
}

// a0 - a1 cos(2 pi n / d) + a2 cos(4 pi n / d)
void def_window(const std::string &name, double a0, double a1, double a2) {
  OpDef d;
  d.name = name;
  d.min_opset = 17;
  d.attrs = {"output_datatype", "periodic"};
  d.const_inputs = {0};
  auto compute = [a0, a1, a2](const Node &n, const Graph &g) {
    int64_t N = scalar_int(g, n, 0);
    if (N < 0) fail_invalid(n.where() + ": negative size");
    check_folded(n, g, {N});
    double den = n.geti("periodic", 1) ? (double)N : (double)(N - 1);
    std::vector<double> w(N);
    for (int64_t i = 0; i < N; ++i)
      w[i] = a0 - a1 * std::cos(2 * kPi * (double)i / den) + a2 * std::cos(4 * kPi * (double)i / den);
    return const_of((DType)n.geti("output_datatype", 1), {N}, w);
  };
  d.infer = [compute](Node &n, Graph &g) {
    ConstP c = compute(n, g);
    set_out(n, g, 0, c->dtype, c->shape);
  };
  d.fold = [compute](const Node &n, const Graph &g) { return std::vector<ConstP>{compute(n, g)}; };
  register_op(std::move(d));
}

// The ONNX reference's triangular filters over dft_length/2 + 1 bins.
void def_mel_weight_matrix() {
  OpDef d;
  d.name = "MelWeightMatrix";
  d.min_opset = 17;
  d.attrs = {"output_datatype"};
  d.const_inputs = {0, 1, 2, 3, 4};
  auto compute = [](const Node &n, const Graph &g) {
    int64_t mels = scalar_int(g, n, 0), dft = scalar_int(g, n, 1), rate = scalar_int(g, n, 2);
    require_one_element(n, g, 3, "lower_edge_hertz");
    require_one_element(n, g, 4, "upper_edge_hertz");
    double lo = in_val(g, n, 3).data->get_f(0), hi = in_val(g, n, 4).data->get_f(0);
    if (mels < 0 || dft < 0 || rate < 1 || !std::isfinite(lo) || !std::isfinite(hi))
      fail_invalid(n.where() + ": num_mel_bins " + std::to_string(mels) + ", dft_length " + std::to_string(dft) +
                   ", sample_rate " + std::to_string(rate) + ", edges " + std::to_string(lo) + " and " +
                   std::to_string(hi) + ": counts must be >= 0, the rate >= 1, the edges finite");
    int64_t bins = dft / 2 + 1;
    check_folded(n, g, {bins, mels});
    double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
    double step = (hi_mel - lo_mel) / (double)(mels + 2);
    std::vector<int64_t> f(mels + 2);
    for (int64_t i = 0; i < mels + 2; ++i) {
      double hz = 700 * (std::pow(10.0, ((double)i * step + lo_mel) / 2595) - 1);
      double bin = std::floor(((double)dft + 1) * hz / (double)rate);
      if (!(std::fabs(bin) < 0x1p62)) fail_invalid(n.where() + ": a filter falls outside the spectrum");
      f[i] = (int64_t)bin;
    }
    std::vector<double> w(bins * mels, 0.0);
    auto at = [&](int64_t j, int64_t i) -> double & {
      if (j < 0 || j >= bins) fail_invalid(n.where() + ": a filter falls outside the spectrum");
      return w[j * mels + i];
    };
    for (int64_t i = 0; i < mels; ++i) {
      int64_t l = f[i], c = f[i + 1], r = f[i + 2];
      if (c - l == 0)
        at(c, i) = 1;
      else
        for (int64_t j = l; j <= c; ++j) at(j, i) = (double)(j - l) / (double)(c - l);
      if (r - c > 0)
        for (int64_t j = c; j < r; ++j) at(j, i) = (double)(r - j) / (double)(r - c);
    }
    return const_of((DType)n.geti("output_datatype", 1), {bins, mels}, w);
  };
  d.infer = [compute](Node &n, Graph &g) {
    ConstP c = compute(n, g);
    set_out(n, g, 0, c->dtype, c->shape);
  };
  d.fold = [compute](const Node &n, const Graph &g) { return std::vector<ConstP>{compute(n, g)}; };
  register_op(std::move(d));
}

// cos and sin of 2 pi (k n mod len) / len.
void twiddle(ExprP k, ExprP nn, int64_t len, DType t, ExprP *c, ExprP *s) {
  ExprP m = bin(EOp::Rem, k * nn, cidx(len));
  ExprP theta = cast(m, t) * cst(t, 2 * kPi / (double)len);
  *c = un(EOp::Cos, theta);
  *s = un(EOp::Sin, theta);
}

// sum_n x[n] e^{-+i 2 pi k n / len} for the element (k, part) of an output.
// `load_x(n, part)` reads the (zero-padded) input; `complex_in` whether it
// has an imaginary part.
ExprP dft_sum(ExprP k, ExprP part, int64_t len, int64_t count, DType t, bool inverse, bool complex_in,
              const std::function<ExprP(ExprP, int)> &load_x) {
  ExprP nn = var(kFirstReduceVar);
  ExprP c, s;
  twiddle(k, nn, len, t, &c, &s);
  ExprP xr = load_x(nn, 0), xi = complex_in ? load_x(nn, 1) : cst(t, 0);
  double sg = inverse ? 1 : -1;  // e^{sg i theta} = cos + sg i sin
  ExprP re = xr * c - cst(t, sg) * xi * s;
  ExprP im = xi * c + cst(t, sg) * xr * s;
  std::vector<RVar> rv = {{kFirstReduceVar, count}};
  ExprP rsum = reduce(ReduceKind::Sum, rv, re), isum = reduce(ReduceKind::Sum, rv, im);
  ExprP y = select(bin(EOp::Eq, part, cidx(0)), rsum, isum);
  return inverse ? y / cst(t, (double)len) : y;
}

void def_dft() {
  OpDef d;
  d.name = "DFT";
  d.min_opset = 17;
  d.attrs = {"axis", "inverse", "onesided"};
  d.const_inputs = {1};
  auto geometry = [](const Node &n, const Graph &g, int *axis, int64_t *len, int64_t *outlen) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 3 || (x.shape.back() != 1 && x.shape.back() != 2))
      fail_invalid(n.where() + ": input must be [batch, ..., 1 or 2]");
    *axis = norm_axis(n.geti("axis", 1), x.rank() - 1, n);
    if (*axis == 0) fail_invalid(n.where() + ": axis 0 is the batch axis");
    *len = n.has_in(1) && in_val(g, n, 1).numel() > 0 ? scalar_int(g, n, 1) : x.shape[*axis];
    *outlen = n.geti("onesided", 0) ? *len / 2 + 1 : *len;
  };
  d.types = {DType::F32, DType::F64};
  d.infer = [geometry](Node &n, Graph &g) {
    int axis;
    int64_t len, outlen;
    geometry(n, g, &axis, &len, &outlen);
    Shape s = in_val(g, n, 0).shape;
    s[axis] = outlen;
    s.back() = 2;
    set_out(n, g, 0, in_val(g, n, 0).dtype, s);
  };
  d.lower = [geometry](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int axis;
    int64_t len, outlen;
    geometry(n, c.g, &axis, &len, &outlen);
    int r = x.rank();
    int64_t count = std::min(len, x.shape[axis]);
    auto load_x = [&](ExprP nn, int part) {
      std::vector<ExprP> idx = out_vars(r);
      idx[axis] = nn;
      idx[r - 1] = cidx(part);
      return load(0, x.dtype, idx);
    };
    c.kernel(n.out[0], {n.in[0]},
             dft_sum(var(axis), var(r - 1), len, count, x.dtype, n.geti("inverse", 0), x.shape.back() == 2, load_x));
  };
  register_op(std::move(d));
}

void def_stft() {
  OpDef d;
  d.name = "STFT";
  d.min_opset = 17;
  d.attrs = {"onesided"};
  d.const_inputs = {1, 3};
  struct Geo {
    int64_t step, frame, frames, bins;
  };
  auto geometry = [](const Node &n, const Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() != 3) fail_invalid(n.where() + ": signal must be [batch, length, 1 or 2]");
    Geo r;
    r.step = scalar_int(g, n, 1);
    if (n.has_in(3))
      r.frame = scalar_int(g, n, 3);
    else if (n.has_in(2) && in_val(g, n, 2).rank() == 1)
      r.frame = in_val(g, n, 2).shape[0];
    else
      fail_invalid(n.where() + ": needs a 1-D window or a frame_length");
    if (r.step < 1 || r.frame < 1 || r.frame > x.shape[1]) fail_invalid(n.where() + ": bad frame_step or frame_length");
    if (x.shape[2] != 1 && x.shape[2] != 2) fail_invalid(n.where() + ": signal must be [batch, length, 1 or 2]");
    if (n.has_in(2) && in_val(g, n, 2).shape != Shape{r.frame})  // read at each of the frame's positions
      fail_invalid(n.where() + ": window has shape " + shape_str(in_val(g, n, 2).shape) + ", expected [" +
                   std::to_string(r.frame) + "]");
    r.frames = (x.shape[1] - r.frame) / r.step + 1;
    r.bins = n.geti("onesided", 1) ? r.frame / 2 + 1 : r.frame;
    return r;
  };
  d.types = {DType::F32, DType::F64};
  d.infer = [geometry](Node &n, Graph &g) {
    Geo r = geometry(n, g);
    set_out(n, g, 0, in_val(g, n, 0).dtype, {in_val(g, n, 0).shape[0], r.frames, r.bins, 2});
  };
  d.lower = [geometry](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    Geo r = geometry(n, c.g);
    bool window = n.has_in(2);
    std::vector<int> ins = {n.in[0]};
    if (window) ins.push_back(n.in[2]);
    auto load_x = [&](ExprP nn, int part) {
      ExprP v = load(0, x.dtype, {var(0), var(1) * cidx(r.step) + nn, cidx(part)});
      return window ? v * load(1, x.dtype, {nn}) : v;
    };
    c.kernel(n.out[0], ins, dft_sum(var(2), var(3), r.frame, r.frame, x.dtype, false, x.shape[2] == 2, load_x));
  };
  register_op(std::move(d));
}

}  // namespace

void register_signal_ops() {
  def_window("HannWindow", 0.5, 0.5, 0);
  def_window("HammingWindow", 25.0 / 46, 21.0 / 46, 0);
  def_window("BlackmanWindow", 0.42, 0.5, 0.08);
  def_mel_weight_matrix();
  def_dft();
  def_stft();
}

}  // namespace tinyrt
