// resize.cpp — Resize (all modes and coordinate transformations) and
// Upsample. Each output element is a weighted sum of input elements: per
// resized axis, 1 (nearest), 2 (linear) or 4 (cubic) neighbours with
// weights computed from the output index; the sum runs over their
// product. Coordinates are computed in float64, as ONNX's reference does.
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
    bool sizes = n.has_in(3) && in_val(g, n, 3).numel() > 0;
    if (sizes) {
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
  if (r.out.empty())
    for (int i = 0; i < rank; ++i) r.out.push_back((int64_t)std::floor((double)x.shape[i] * r.scales[i]));
  static const char *modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                "tf_half_pixel_for_nn", "tf_crop_and_resize"};
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

std::vector<Tap> axis_taps(const ResizeSpec &r, int axis, int64_t in, int64_t out, E *outside) {
  E xo = original_coordinate(r, axis, var(axis), in, out);
  if (r.coord == "tf_crop_and_resize")
    *outside = bin(EOp::Or, *outside, bin(EOp::Or, lt(xo, d64(0)), bin(EOp::Gt, xo, d64((double)(in - 1)))));
  auto clamp = [&](E i) { return emax(cidx(0), emin(cidx(in - 1), i)); };
  if (r.mode == "nearest") {
    E k;
    if (r.nearest == "floor") k = un(EOp::Floor, xo);
    else if (r.nearest == "ceil") k = un(EOp::Ceil, xo);
    else if (r.nearest == "round_prefer_ceil") k = un(EOp::Floor, xo + d64(0.5));
    else k = un(EOp::Ceil, xo - d64(0.5));  // round_prefer_floor
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
      w[k] = select(in_range(idx[k], in), w[k], d64(0));
      total = total + w[k];
    }
    for (int k = 0; k < 4; ++k) w[k] = w[k] / total;
  }
  for (int k = 0; k < 4; ++k) taps.push_back({clamp(idx[k]), w[k]});
  return taps;
}

void lower_resize(const Node &n, LowerCtx &c) {
  const Value &x = in_val(c.g, n, 0);
  DType t = x.dtype;
  ResizeSpec r = resize_spec(n, c.g);
  int rank = x.rank();
  std::vector<std::vector<Tap>> taps(rank);
  E outside = cbool(false);
  for (int i = 0; i < rank; ++i) {
    bool identity = r.out[i] == x.shape[i] && r.scales[i] == 1.0 && r.coord != "tf_crop_and_resize" &&
                    r.coord != "tf_half_pixel_for_nn";
    if (identity) taps[i] = {{var(i), d64(1)}};
    else taps[i] = axis_taps(r, i, x.shape[i], r.out[i], &outside);
  }
  // Sum over the product of the axes' taps.
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
    E v = cast(load(0, t, idx), DType::F64);
    E term = r.mode == "nearest" ? v : w * v;
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
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 0, {DType::F32, DType::F64, DType::U8, DType::I8, DType::I32, DType::I64});
    set_out(n, g, 0, in_val(g, n, 0).dtype, resize_spec(n, g).out);
  };
  d.lower = lower_resize;
  register_op(std::move(d));
}

}  // namespace

void register_resize_ops() {
  def_resize("Resize", 10,
             {"mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value",
              "nearest_mode"},
             {1, 2, 3});
  def_resize("Upsample", 7, {"mode", "scales"}, {1});
}

}  // namespace tinyrt
