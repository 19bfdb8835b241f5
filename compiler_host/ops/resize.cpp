// resize.cpp — Resize (all modes and coordinate transformations),
// Upsample, GridSample and RoiAlign. Each output element is a weighted sum of input elements: per
// resized axis, 1 (nearest), 2 (linear) or 4 (cubic) neighbours with
// weights computed from the output index; the sum runs over their
// product. Coordinates and weights are computed in float64, as ONNX's
// reference does; float32 data is summed in float32.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

struct ResizeSpec {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
  std::vector<double> scales, roi;
  Shape out;
};

std::vector<double> const_floats(const Graph &g, const Node &n, size_t k) {
  const Value &v = in_val(g, n, k);
  if (!v.is_const()) throw_constant_required(g, n, n.in[k]);
  std::vector<double> r(v.numel());
  for (int64_t i = 0; i < v.numel(); ++i) r[i] = v.data->get_f(i);
  return r;
}

// Resize from opset 11 on, given its output sizes rather than scales.
bool sizes_given(const Node &n, const Graph &g) {
  return !(n.op == "Upsample" || n.opset < 11) && n.has_in(3) && in_val(g, n, 3).numel() > 0;
}

ResizeSpec resize_spec(const Node &n, const Graph &g) {
  ResizeSpec r;
  const Value &x = in_val(g, n, 0);
  int rank = x.rank();
  r.mode = n.gets("mode", "nearest");
  if (r.mode != "nearest" && r.mode != "linear" && r.mode != "cubic")
    fail_unsupported(n.where() + ": mode '" + r.mode + "'");
  bool upsample = n.op == "Upsample";
  if (upsample || n.opset < 11) {
    r.coord = "asymmetric";
    r.nearest = "floor";
    if (n.has("scales")) {
      for (float f : n.getfloats("scales")) r.scales.push_back(f);
    } else {
      r.scales = const_floats(g, n, 1);
    }
  } else {
    r.coord = n.gets("coordinate_transformation_mode", "half_pixel");
    r.nearest = n.gets("nearest_mode", "round_prefer_floor");
    r.cubic_a = n.getf("cubic_coeff_a", -0.75f);
    r.exclude_outside = n.geti("exclude_outside", 0);
    r.extrapolation = n.getf("extrapolation_value", 0.0f);
    if (n.has_in(1) && in_val(g, n, 1).numel() > 0) r.roi = const_floats(g, n, 1);
    if (sizes_given(n, g)) {
      std::vector<int64_t> s = const_ints(g, n, 3);
      if ((int)s.size() != rank) fail_invalid(n.where() + ": sizes must have one entry per axis");
      r.out.assign(s.begin(), s.end());
      for (int i = 0; i < rank; ++i) r.scales.push_back((double)(float)((float)s[i] / (float)x.shape[i]));
    } else if (n.has_in(2) && in_val(g, n, 2).numel() > 0) {
      r.scales = const_floats(g, n, 2);
    } else {
      fail_invalid(n.where() + ": neither scales nor sizes is given");
    }
  }
  if ((int)r.scales.size() != rank) fail_invalid(n.where() + ": scales must have one entry per axis");
  if (r.out.empty())  // scales given: each must be a positive number
    for (int i = 0; i < rank; ++i)
      if (!(r.scales[i] > 0))
        fail_invalid(n.where() + ": scale " + std::to_string(r.scales[i]) + " of axis " + std::to_string(i) +
                     " is not positive");
  if (r.out.empty())
    for (int i = 0; i < rank; ++i) {
      double d = std::floor((double)x.shape[i] * r.scales[i]);
      if (!(std::fabs(d) < 0x1p62))  // NaN, infinite or absurd: the cast would be undefined
        fail_invalid(n.where() + ": scale " + std::to_string(r.scales[i]) + " of axis " + std::to_string(i) +
                     " gives no output dimension");
      r.out.push_back((int64_t)d);
    }
  static const char *modes[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  bool known = false;
  for (const char *m : modes) known = known || r.coord == m;
  if (!known) fail_unsupported(n.where() + ": coordinate_transformation_mode '" + r.coord + "'");
  if (r.coord == "tf_crop_and_resize" && (int)r.roi.size() != 2 * rank)
    fail_invalid(n.where() + ": tf_crop_and_resize needs roi with 2*rank entries");
  return r;
}

using E = ExprP;
E d64(double v) { return cst(DType::F64, v); }

// The input coordinate (float64) of output index `i` on an axis. Like
// ONNX's reference, the resized length is scale * input length, unrounded.
E original_coordinate(const ResizeSpec &r, int axis, E i, int64_t in, int64_t) {
  E x = cast(i, DType::F64);
  double s = r.scales[axis];
  double out = s * (double)in;
  const std::string &m = r.coord;
  if (m == "half_pixel") return (x + d64(0.5)) / d64(s) - d64(0.5);
  if (m == "pytorch_half_pixel") return out > 1 ? (x + d64(0.5)) / d64(s) - d64(0.5) : d64(0);
  if (m == "align_corners") return out == 1 ? d64(0) : x * d64((double)(in - 1) / (out - 1));
  if (m == "asymmetric") return x / d64(s);
  if (m == "tf_half_pixel_for_nn") return (x + d64(0.5)) / d64(s);
  // tf_crop_and_resize
  size_t rank = r.scales.size();
  double start = r.roi[axis], end = r.roi[rank + axis];
  if (out > 1) return d64(start * (double)(in - 1)) + x * d64((end - start) * (double)(in - 1) / (out - 1));
  return d64(0.5 * (start + end) * (double)(in - 1));
}

struct Tap {
  E index;   // kIndexType, clamped into the input
  E weight;  // F64
};

// The input coordinate of output index i on an axis whose input length
// `in` (and so its scale s and resized length s * in, float64 expressions)
// are known at run time only: the modes original_coordinate computes, as
// expressions (tf_crop_and_resize is refused before).
E runtime_coordinate(const ResizeSpec &r, E i, E in, E s) {
  E x = cast(i, DType::F64), out = s * cast(in, DType::F64);
  const std::string &m = r.coord;
  if (m == "half_pixel") return (x + d64(0.5)) / s - d64(0.5);
  if (m == "pytorch_half_pixel") return select(bin(EOp::Gt, out, d64(1)), (x + d64(0.5)) / s - d64(0.5), d64(0));
  if (m == "align_corners")
    return select(bin(EOp::Eq, out, d64(1)), d64(0), x * (cast(in - cidx(1), DType::F64) / (out - d64(1))));
  if (m == "asymmetric") return x / s;
  return (x + d64(0.5)) / s;  // tf_half_pixel_for_nn
}

// The taps of output index var(axis) at input coordinate xo on an axis of
// `in` input elements (an index expression: a constant, or a run-time
// extent).
std::vector<Tap> axis_taps(const ResizeSpec &r, E xo, E in, E *outside) {
  if (r.coord == "tf_crop_and_resize")  // (a constant length: refused with run-time sizes)
    *outside = bin(EOp::Or, *outside, bin(EOp::Or, lt(xo, d64(0)), bin(EOp::Gt, xo, d64((double)(in->ival - 1)))));
  auto clamp = [&](E i) { return emax(cidx(0), emin(in - cidx(1), i)); };
  if (r.mode == "nearest") {
    E k;
    if (r.nearest == "floor")
      k = un(EOp::Floor, xo);
    else if (r.nearest == "ceil")
      k = un(EOp::Ceil, xo);
    else if (r.nearest == "round_prefer_ceil")
      k = un(EOp::Floor, xo + d64(0.5));
    else
      k = un(EOp::Ceil, xo - d64(0.5));  // round_prefer_floor
    return {{clamp(cast(k, kIndexType)), d64(1)}};
  }
  E fl = un(EOp::Floor, xo);
  E t = xo - fl;
  E i0 = cast(fl, kIndexType);
  if (r.mode == "linear") return {{clamp(i0), d64(1) - t}, {clamp(i0 + cidx(1)), t}};
  // cubic: neighbours i0-1 .. i0+2
  double a = r.cubic_a;
  E one = d64(1), two = d64(2);
  auto far = [&](E s) {  // 1 <= s < 2
    return ((d64(a) * s - d64(5 * a)) * s + d64(8 * a)) * s - d64(4 * a);
  };
  auto near = [&](E s) {  // 0 <= s <= 1
    return ((d64(a + 2) * s - d64(a + 3)) * s) * s + one;
  };
  std::vector<E> w = {far(t + one), near(t), near(one - t), far(two - t)};
  std::vector<E> idx = {i0 - cidx(1), i0, i0 + cidx(1), i0 + cidx(2)};
  std::vector<Tap> taps;
  if (r.exclude_outside) {
    E total = d64(0);
    for (int k = 0; k < 4; ++k) {
      w[k] = select(land(ge(idx[k], cidx(0)), lt(idx[k], in)), w[k], d64(0));
      total = total + w[k];
    }
    for (int k = 0; k < 4; ++k) w[k] = w[k] / total;
  }
  for (int k = 0; k < 4; ++k) taps.push_back({clamp(idx[k]), w[k]});
  return taps;
}

// Run-time sizes (a model compiled for a range of image sizes): per axis
// the output's extent and the scale as a float64 expression, from
// constant scales (an integer factor, or one over an integer: the output
// extent in * s stays an index expression) or from the sizes input (its
// elements may be computed from the extents, as F.interpolate(size=
// x.shape[-2:]) exports; scale = size / input length in float32, as
// ONNX says). Null scale: the axis keeps its size (identity).
struct RuntimeAxis {
  E out, scale;
};
std::vector<RuntimeAxis> runtime_axes(const Node &n, const Graph &g, const ResizeSpec &r) {
  const Value &x = in_val(g, n, 0);
  const bool sizes = sizes_given(n, g);
  if (r.coord == "tf_crop_and_resize") fail_unsupported(n.where() + ": tf_crop_and_resize with run-time sizes");
  std::vector<E> size_e = sizes ? sym_ints(g, n, 3) : std::vector<E>{};
  std::vector<RuntimeAxis> ax((size_t)x.rank());
  for (int i = 0; i < x.rank(); ++i) {
    E in = g.extent(n.in[0], i);
    if (sizes) {
      E out = size_e[(size_t)i];
      if (to_string(out) == to_string(in)) {
        ax[(size_t)i] = {in, nullptr};
        continue;
      }
      E s = cast(cast(out, DType::F32) / cast(in, DType::F32), DType::F64);
      ax[(size_t)i] = {out, s};
      continue;
    }
    double s = r.scales[(size_t)i];
    if (s == 1.0 && r.coord != "tf_half_pixel_for_nn") {
      ax[(size_t)i] = {in, nullptr};
    } else if (in->is_const()) {
      ax[(size_t)i] = {cidx(r.out[(size_t)i]), d64(s)};
    } else if (s == std::floor(s)) {
      ax[(size_t)i] = {in * cidx((int64_t)s), d64(s)};
    } else if (1.0 / s == std::floor(1.0 / s) && s == 1.0 / std::floor(1.0 / s)) {
      ax[(size_t)i] = {in / cidx((int64_t)(1.0 / s)), d64(s)};
    } else {
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], i) + " resized by " + std::to_string(s) +
                       ": with a run-time size the scale must be an integer or one over an integer");
    }
  }
  return ax;
}

bool runtime_sizes(const Node &n, const Graph &g) {
  return in_val(g, n, 0).is_dynamic() || (sizes_given(n, g) && in_val(g, n, 3).is_sym());
}

void lower_resize(const Node &n, LowerCtx &c) {
  const Value &x = in_val(c.g, n, 0);
  DType t = x.dtype;
  ResizeSpec r = resize_spec(n, c.g);
  int rank = x.rank();
  std::vector<std::vector<Tap>> taps(rank);
  E outside = cbool(false);
  const bool runtime = runtime_sizes(n, c.g);
  std::vector<RuntimeAxis> rt = runtime ? runtime_axes(n, c.g, r) : std::vector<RuntimeAxis>{};
  for (int i = 0; i < rank; ++i) {
    if (runtime) {
      E in = c.g.extent(n.in[0], i);
      taps[i] = !rt[(size_t)i].scale
                    ? std::vector<Tap>{{var(i), d64(1)}}
                    : axis_taps(r, runtime_coordinate(r, var(i), in, rt[(size_t)i].scale), in, &outside);
      continue;
    }
    bool identity = r.out[i] == x.shape[i] && r.scales[i] == 1.0 && r.coord != "tf_crop_and_resize" &&
                    r.coord != "tf_half_pixel_for_nn";
    if (identity)
      taps[i] = {{var(i), d64(1)}};
    else
      taps[i] = axis_taps(r, original_coordinate(r, i, var(i), x.shape[i], r.out[i]), cidx(x.shape[i]), &outside);
  }
  // Sum over the product of the axes' taps: in float64 (exact for the
  // integer types, as the reference), in float32 for float32 data, whose
  // weights (a function of the output position only, computed once per
  // position) are rounded to float32 before they meet the data.
  DType acc = t == DType::F32 ? DType::F32 : DType::F64;
  E sum;
  std::vector<size_t> pick(rank, 0);
  for (;;) {
    std::vector<E> idx;
    E w;
    for (int i = 0; i < rank; ++i) {
      const Tap &tp = taps[i][pick[i]];
      idx.push_back(tp.index);
      w = w ? w * tp.weight : tp.weight;
    }
    E v = cast(load(0, t, idx), acc);
    E term = r.mode == "nearest" ? v : cast(w, acc) * v;
    sum = sum ? sum + term : term;
    int k = rank - 1;
    while (k >= 0 && ++pick[k] == taps[k].size()) pick[k--] = 0;
    if (k < 0) break;
  }
  E y = cast(sum, t);
  if (r.coord == "tf_crop_and_resize") y = select(outside, cst(t, r.extrapolation), y);
  c.kernel(n.out[0], {n.in[0]}, y);
}

void def_resize(const std::string &name, int min_opset, std::vector<std::string> attrs, std::vector<int> const_inputs) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = std::move(attrs);
  d.const_inputs = std::move(const_inputs);
  d.types = {DType::F32, DType::F64, DType::U8, DType::I8, DType::I32, DType::I64};
  d.infer = [](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, resize_spec(n, g).out); };
  d.dims = [](Node &n, Graph &g) {
    std::vector<RuntimeAxis> ax = runtime_axes(n, g, resize_spec(n, g));
    Value &o = g.v(n.out[0]);
    o.dims.assign((size_t)o.rank(), -1);
    for (int i = 0; i < o.rank(); ++i)
      o.dims[(size_t)i] = g.derived_sym(ax[(size_t)i].out, o.name + "[" + std::to_string(i) + "]");
    if (!o.is_dynamic()) o.dims.clear();
  };
  d.lower = lower_resize;
  register_op(std::move(d));
}

// ---------------------------------------------------------- GridSample --

// Reflects x into [lo, hi] (ONNX's reference: whole reflections counted).
E reflect(E x, double lo, double hi) {
  double rng = hi - lo;
  auto side = [&](E dx, double from, double to) {
    E k = un(EOp::Floor, dx / d64(rng));
    E r = dx - k * d64(rng);
    E even = bin(EOp::Eq, k - d64(2) * un(EOp::Floor, k / d64(2)), d64(0));
    return select(even, d64(from) + (from < to ? r : un(EOp::Neg, r)), d64(to) + (from < to ? un(EOp::Neg, r) : r));
  };
  E below = side(d64(lo) - x, lo, hi), above = side(x - d64(hi), hi, lo);
  return select(lt(x, d64(lo)), below, select(bin(EOp::Gt, x, d64(hi)), above, x));
}

void def_grid_sample() {
  OpDef d;
  d.name = "GridSample";
  d.min_opset = 16;
  d.attrs = {"align_corners", "mode", "padding_mode"};
  d.types = {DType::F32, DType::F64};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &grid = in_val(g, n, 1);
    if (x.rank() != 4 || grid.rank() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0])
      fail_unsupported(n.where() + ": only 2-D sampling (X [N,C,H,W], grid [N,H,W,2])");
    std::string mode = n.gets("mode", "bilinear"), pad = n.gets("padding_mode", "zeros");
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") fail_invalid(n.where() + ": mode '" + mode + "'");
    if (pad != "zeros" && pad != "border" && pad != "reflection")
      fail_invalid(n.where() + ": padding_mode '" + pad + "'");
    set_out(n, g, 0, x.dtype, {x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &grid = in_val(c.g, n, 1);
    DType t = x.dtype;
    int64_t H = x.shape[2], W = x.shape[3];
    bool ac = n.geti("align_corners", 0);
    std::string mode = n.gets("mode", "bilinear"), pad = n.gets("padding_mode", "zeros");
    auto denorm = [&](E g, int64_t size) {
      return ac ? (g + d64(1)) / d64(2) * d64((double)(size - 1))
                : ((g + d64(1)) * d64((double)size) - d64(1)) / d64(2);
    };
    double lo_x = ac ? 0 : -0.5, hi_x = ac ? (double)(W - 1) : (double)W - 0.5;
    double lo_y = ac ? 0 : -0.5, hi_y = ac ? (double)(H - 1) : (double)H - 0.5;
    E gx = denorm(cast(load(1, grid.dtype, {var(0), var(2), var(3), cidx(0)}), DType::F64), W);
    E gy = denorm(cast(load(1, grid.dtype, {var(0), var(2), var(3), cidx(1)}), DType::F64), H);
    if (pad == "border") {
      gx = emax(d64(0), emin(d64((double)(W - 1)), gx));
      gy = emax(d64(0), emin(d64((double)(H - 1)), gy));
    } else if (pad == "reflection") {
      gx = reflect(gx, lo_x, hi_x);
      gy = reflect(gy, lo_y, hi_y);
    }
    // The input pixel at integer (r, c) under the padding mode.
    auto pixel = [&](E r, E col) {
      E v;
      if (pad == "zeros") {
        E in = land(in_range(r, H), in_range(col, W));
        E rr = emax(cidx(0), emin(cidx(H - 1), r)), cc = emax(cidx(0), emin(cidx(W - 1), col));
        return select(in, cast(load(0, t, {var(0), var(1), rr, cc}), DType::F64), d64(0));
      }
      if (pad == "reflection") {
        r = cast(reflect(cast(r, DType::F64), lo_y, hi_y), kIndexType);
        col = cast(reflect(cast(col, DType::F64), lo_x, hi_x), kIndexType);
      }
      E rr = emax(cidx(0), emin(cidx(H - 1), r)), cc = emax(cidx(0), emin(cidx(W - 1), col));
      return cast(load(0, t, {var(0), var(1), rr, cc}), DType::F64);
    };
    E y;
    if (mode == "nearest") {
      y = pixel(cast(un(EOp::Round, gy), kIndexType), cast(un(EOp::Round, gx), kIndexType));
    } else {
      E fx = un(EOp::Floor, gx), fy = un(EOp::Floor, gy);
      E tx = gx - fx, ty = gy - fy;
      E ix = cast(fx, kIndexType), iy = cast(fy, kIndexType);
      std::vector<E> wx, wy;
      int first;
      if (mode == "bilinear") {
        wx = {d64(1) - tx, tx};
        wy = {d64(1) - ty, ty};
        first = 0;
      } else {
        double a = -0.75;
        auto far = [&](E s) { return ((d64(a) * s - d64(5 * a)) * s + d64(8 * a)) * s - d64(4 * a); };
        auto near = [&](E s) { return ((d64(a + 2) * s - d64(a + 3)) * s) * s + d64(1); };
        wx = {far(tx + d64(1)), near(tx), near(d64(1) - tx), far(d64(2) - tx)};
        wy = {far(ty + d64(1)), near(ty), near(d64(1) - ty), far(d64(2) - ty)};
        first = -1;
      }
      for (size_t a = 0; a < wy.size(); ++a)
        for (size_t b = 0; b < wx.size(); ++b) {
          E term = wy[a] * wx[b] * pixel(iy + cidx(first + (int64_t)a), ix + cidx(first + (int64_t)b));
          y = y ? y + term : term;
        }
    }
    c.kernel(n.out[0], {n.in[0], n.in[1]}, cast(y, t));
  };
  register_op(std::move(d));
}

// ------------------------------------------------------------ RoiAlign --

// Average (or max) of bilinear samples on a sampling grid per output bin,
// following ONNX Runtime's reference. The grid is static: sampling_ratio,
// or the largest adaptive grid over constant rois (smaller ones masked).
void def_roi_align() {
  OpDef d;
  d.name = "RoiAlign";
  d.min_opset = 10;
  d.attrs = {
      "coordinate_transformation_mode", "mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"};
  auto grid_of = [](const Node &n, const Graph &g, int64_t *gh, int64_t *gw) {
    int64_t sr = n.geti("sampling_ratio", 0);
    if (sr > 0) {
      *gh = *gw = sr;
      return;
    }
    const Value &rois = in_val(g, n, 1);
    if (!rois.is_const())
      fail_unsupported(n.where() + ": sampling_ratio=0 with runtime rois (the sampling grid would depend on the data)");
    double scale = n.getf("spatial_scale", 1.0f);
    int64_t oh = n.geti("output_height", 1), ow = n.geti("output_width", 1);
    *gh = *gw = 1;
    // ceil(roi size / output size) samples per bin; a roi that is not finite
    // or needs more than 2^16 per axis is refused (the cast would be undefined,
    // the sums absurd).
    auto grid = [&](double size, int64_t out, int64_t *gv) {
      double v = std::ceil(std::max(size, 1.0) / (double)out);
      if (!(v <= 65536))
        fail_unsupported(n.where() + ": a roi of size " + std::to_string(size) + " needs " + std::to_string(v) +
                         " samples per bin (give sampling_ratio)");
      *gv = std::max(*gv, (int64_t)v);
    };
    for (int64_t r = 0; r < rois.shape[0]; ++r) {
      grid((rois.data->get_f(r * 4 + 3) - rois.data->get_f(r * 4 + 1)) * scale, oh, gh);
      grid((rois.data->get_f(r * 4 + 2) - rois.data->get_f(r * 4)) * scale, ow, gw);
    }
  };
  d.types = {DType::F32, DType::F64};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &rois = in_val(g, n, 1);
    if (x.rank() != 4 || rois.rank() != 2 || rois.shape[1] != 4)
      fail_invalid(n.where() + ": X [N,C,H,W] and rois [R,4]");
    // batch_indices: one int64 per roi (the kernel loads it at [roi]).
    require_types(n, g, 1, {x.dtype});
    require_types(n, g, 2, {DType::I64});
    if (!n.has_in(2) || in_val(g, n, 2).shape != Shape{rois.shape[0]})
      fail_invalid(n.where() + ": batch_indices has shape " +
                   (n.has_in(2) ? shape_str(in_val(g, n, 2).shape) : std::string("(omitted)")) + ", expected [" +
                   std::to_string(rois.shape[0]) + "] (one per roi)");
    require_const_values_in(n, g, 2, 0, x.shape[0], "batch index");
    std::string m = n.gets("mode", "avg");
    if (m != "avg" && m != "max") fail_invalid(n.where() + ": mode '" + m + "'");
    if (n.geti("output_height", 1) < 1 || n.geti("output_width", 1) < 1)
      fail_invalid(n.where() + ": output_height and output_width must be >= 1");
    set_out(n, g, 0, x.dtype, {rois.shape[0], x.shape[1], n.geti("output_height", 1), n.geti("output_width", 1)});
  };
  d.lower = [grid_of](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &rois = in_val(c.g, n, 1), &bi = in_val(c.g, n, 2);
    DType t = x.dtype;
    int64_t H = x.shape[2], W = x.shape[3], oh = n.geti("output_height", 1), ow = n.geti("output_width", 1);
    int64_t gh, gw;
    grid_of(n, c.g, &gh, &gw);
    bool half = n.opset >= 16 && n.gets("coordinate_transformation_mode", "half_pixel") == "half_pixel";
    double scale = n.getf("spatial_scale", 1.0f), off = half ? 0.5 : 0;
    bool is_max = n.gets("mode", "avg") == "max";
    auto roi = [&](int k) { return cast(load(1, rois.dtype, {var(0), cidx(k)}), DType::F64) * d64(scale) - d64(off); };
    E x0 = roi(0), y0 = roi(1), x1 = roi(2), y1 = roi(3);
    E rw = x1 - x0, rh = y1 - y0;
    if (!half) {
      rw = emax(rw, d64(1));
      rh = emax(rh, d64(1));
    }
    E bh = rh / d64((double)oh), bw = rw / d64((double)ow);
    int64_t sr = n.geti("sampling_ratio", 0);
    // Per-roi grid (adaptive) and whether a grid point exists.
    E ngh = sr > 0 ? d64((double)sr) : un(EOp::Ceil, rh / d64((double)oh));
    E ngw = sr > 0 ? d64((double)sr) : un(EOp::Ceil, rw / d64((double)ow));
    E count = emax(ngh * ngw, d64(1));
    E iy = var(kFirstReduceVar), ix = var(kFirstReduceVar + 1);
    E fy = cast(iy, DType::F64), fx = cast(ix, DType::F64);
    E in_grid = land(lt(fy, ngh), lt(fx, ngw));
    E yy = y0 + cast(var(2), DType::F64) * bh + (fy + d64(0.5)) * bh / ngh;
    E xx = x0 + cast(var(3), DType::F64) * bw + (fx + d64(0.5)) * bw / ngw;
    E outside = bin(EOp::Or, bin(EOp::Or, lt(yy, d64(-1)), bin(EOp::Gt, yy, d64((double)H))),
                    bin(EOp::Or, lt(xx, d64(-1)), bin(EOp::Gt, xx, d64((double)W))));
    yy = emax(yy, d64(0));
    xx = emax(xx, d64(0));
    auto corner = [&](E v, int64_t size, E *lo, E *hi, E *frac) {
      E l = emax(cidx(0), cast(un(EOp::Floor, v), kIndexType));  // v >= 0 (NaN casts to 0)
      E last = bin(EOp::Ge, l, cidx(size - 1));
      *lo = select(last, cidx(size - 1), l);
      *hi = select(last, cidx(size - 1), l + cidx(1));
      *frac = select(last, d64(0), v - cast(l, DType::F64));
    };
    E ylo, yhi, ly, xlo, xhi, lx;
    corner(yy, H, &ylo, &yhi, &ly);
    corner(xx, W, &xlo, &xhi, &lx);
    E hy = d64(1) - ly, hx = d64(1) - lx;
    E b = cast(load(2, bi.dtype, {var(0)}), kIndexType);
    b = emax(cidx(0), emin(cidx(x.shape[0] - 1), b));
    auto px = [&](E r, E col) { return cast(load(0, t, {b, var(1), r, col}), DType::F64); };
    E v1 = hy * hx * px(ylo, xlo), v2 = hy * lx * px(ylo, xhi), v3 = ly * hx * px(yhi, xlo),
      v4 = ly * lx * px(yhi, xhi);
    std::vector<RVar> rv = {{kFirstReduceVar, gh}, {kFirstReduceVar + 1, gw}};
    E skip = bin(EOp::Or, outside, un(EOp::Not, in_grid));
    E y;
    if (is_max) {
      E m = emax(emax(v1, v2), emax(v3, v4));
      y = reduce(ReduceKind::Max, rv, select(skip, d64(0), m));
    } else {
      y = reduce(ReduceKind::Sum, rv, select(skip, d64(0), v1 + v2 + v3 + v4)) / count;
    }
    c.kernel(n.out[0], {n.in[0], n.in[1], n.in[2]}, cast(y, t));
  };
  register_op(std::move(d));
}

// MaxRoiPool: max over each bin of each roi (Caffe's rounding), as a
// masked reduction over the whole feature map.
void def_max_roi_pool() {
  OpDef d;
  d.name = "MaxRoiPool";
  d.attrs = {"pooled_shape", "spatial_scale"};
  d.types = {DType::F32, DType::F64};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &rois = in_val(g, n, 1);
    std::vector<int64_t> ps = n.getints("pooled_shape");
    if (x.rank() != 4 || rois.rank() != 2 || rois.shape[1] != 5 || ps.size() != 2)
      fail_invalid(n.where() + ": X [N,C,H,W], rois [R,5] and pooled_shape [h,w] required");
    set_out(n, g, 0, x.dtype, {rois.shape[0], x.shape[1], ps[0], ps[1]});
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &rois = in_val(c.g, n, 1);
    DType t = x.dtype;
    int64_t H = x.shape[2], W = x.shape[3];
    std::vector<int64_t> ps = n.getints("pooled_shape");
    double scale = n.getf("spatial_scale", 1.0f);
    auto r = [&](int k) { return cast(load(1, rois.dtype, {var(0), cidx(k)}), DType::F64); };
    auto coord = [&](int k) { return cast(un(EOp::Round, r(k) * d64(scale)), kIndexType); };
    E b = emax(cidx(0), emin(cidx(x.shape[0] - 1), cast(r(0), kIndexType)));
    E x0 = coord(1), y0 = coord(2), x1 = coord(3), y1 = coord(4);
    E rh = cast(emax(y1 - y0 + cidx(1), cidx(1)), DType::F64), rw = cast(emax(x1 - x0 + cidx(1), cidx(1)), DType::F64);
    E bh = rh / d64((double)ps[0]), bw = rw / d64((double)ps[1]);
    auto lim = [&](E v, int64_t size) { return emax(cidx(0), emin(cidx(size), v)); };
    E hs = lim(cast(un(EOp::Floor, cast(var(2), DType::F64) * bh), kIndexType) + y0, H);
    E he = lim(cast(un(EOp::Ceil, cast(var(2) + cidx(1), DType::F64) * bh), kIndexType) + y0, H);
    E ws = lim(cast(un(EOp::Floor, cast(var(3), DType::F64) * bw), kIndexType) + x0, W);
    E we = lim(cast(un(EOp::Ceil, cast(var(3) + cidx(1), DType::F64) * bw), kIndexType) + x0, W);
    E h = var(kFirstReduceVar), w = var(kFirstReduceVar + 1);
    E in = land(land(ge(h, hs), lt(h, he)), land(ge(w, ws), lt(w, we)));
    E m = reduce(ReduceKind::Max, {{kFirstReduceVar, H}, {kFirstReduceVar + 1, W}},
                 select(in, load(0, t, {b, var(1), h, w}), cst(t, -INFINITY)));
    E empty = bin(EOp::Or, bin(EOp::Le, he, hs), bin(EOp::Le, we, ws));
    c.kernel(n.out[0], {n.in[0], n.in[1]}, select(empty, cst(t, 0), m));
  };
  register_op(std::move(d));
}

}  // namespace

void register_resize_ops() {
  def_resize("Resize", 10,
             {"mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value",
              "nearest_mode"},
             {1, 2, 3});
  def_resize("Upsample", 7, {"mode", "scales"}, {1});
  def_grid_sample();
  def_roi_align();
  def_max_roi_pool();
}

}  // namespace tinyrt
