// fuzz_compile_run — a model of 1 to 3 nodes generated from the input (ops
// drawn from elementwise, reduction, shape, convolution, matrix product,
// pooling and normalization ops, and If on a runtime condition; shapes, attributes and the values of
// inputs and weights from the input, NaN and infinities included), built
// with onnx's protobuf classes, compiled for the host by compile_model,
// linked, loaded and run in this process:
//
//   - once on 1 thread with the arena ending at a PROT_NONE page, once on a
//     pool of 3 threads with the arena starting right after one, each arena
//     filled with a different garbage pattern first: any access outside the
//     arena faults, and an output that depends on memory the model never
//     wrote differs between the two runs;
//   - the two runs' outputs must be identical bit for bit;
//   - and equal to the reference: the same model with every input bound to
//     its values, folded by the compiler's interpreter (ir/interp.cpp). Ops
//     the interpreter and generated code compute alike (moves, compares,
//     selects, +, -, *, /, sqrt, min/max, and sums whose terms the fuzzer
//     draws from small multiples of 1/8, so that every order and FMA gives
//     the same float) must match exactly (NaN for NaN, -0 for 0); ops with
//     transcendental or rounding-sensitive math (exp, tanh, softmax, means,
//     normalizations, pow, ...), only allowed as the last node, within
//     tinyrt-onnx-test's tolerance (|y - ref| <= 1e-5 max|ref| + 1e-3 |ref|,
//     infinities and NaN exact).
//
// A model the compiler refuses with a documented error is skipped (the
// generator aims at valid models but does not try to be the spec); an
// internal error, a crash or sanitizer report, a fault in generated code, a
// difference between the runs or from the reference is a finding.
// TINYRT_FUZZ_TRACE=1 prints the model, the verdicts and the first
// differing elements.
#include <dlfcn.h>
#include <unistd.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "driver/compiler.h"
#include "frontend/onnx_import.h"
#include "fuzz_common.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "tinyrt.h"

// After onnx's headers: <sys/mman.h> defines MAP_TYPE, an enumerator of
// onnx/defs/parser.h.
#include <sys/mman.h>

using namespace tinyrt;
using tinyrt::test::OnnxBuilder;
namespace fs = std::filesystem;

namespace {

bool g_trace = false;
#define TRACE(...)                             \
  do {                                         \
    if (g_trace) fprintf(stderr, __VA_ARGS__); \
  } while (0)

constexpr int F32 = onnx::TensorProto::FLOAT, I32 = onnx::TensorProto::INT32, I64 = onnx::TensorProto::INT64,
              BOOL = onnx::TensorProto::BOOL;

// How ops compare with the reference.
enum Cls {
  Exact,  // same float operations: identical results
  Accum,  // sums and products: identical when the terms are "nice"
  Approx  // within a tolerance; only as the last node
};

// Values of float tensors.
enum class Mode { Nice, NiceSpecial, Wide, Raw };

struct Val {
  std::string name;
  int elem = F32;
  Shape shape;
  int rank() const { return (int)shape.size(); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// A tensor whose values are drawn after the model is built (when the value
// mode is final): a runtime input or an initializer.
struct DataTensor {
  std::string name;
  int elem;
  Shape shape;
  bool runtime;
  int64_t index_dim = 0;  // > 0: int64 indices into a dimension of this size
  bool positive = false;  // float values > 0 (variances)
  Bytes bytes;
};

struct Ctx {
  FuzzedDataProvider &f;
  OnnxBuilder b{17};
  std::vector<DataTensor> data;
  int next = 0;
  bool accum = false, approx = false;
  bool rough = false;        // values of the chain so far may have left the nice set (Added::rough)
  bool no_extremes = false;  // specials only NaN, infinities and zeros (float Mod)

  explicit Ctx(FuzzedDataProvider &fdp) : f(fdp) {}
  std::string fresh(const char *p) { return p + std::to_string(next++); }
  int pick(int n) { return f.ConsumeIntegralInRange(0, n - 1); }
  bool chance(int one_in) { return f.ConsumeIntegralInRange(0, one_in - 1) == 0; }

  // A data tensor: a runtime input, or (if allowed) a weight.
  std::string tensor(const Shape &s, int elem, bool may_be_const = true, int64_t index_dim = 0, bool positive = false) {
    bool runtime = !may_be_const || f.ConsumeBool();
    std::string name = fresh(runtime ? "in" : "w");
    data.push_back({name, elem, s, runtime, index_dim, positive, {}});
    if (runtime) {
      b.input(name, s, elem);
    } else {
      auto *t = b.model().mutable_graph()->add_initializer();
      t->set_name(name);
      t->set_data_type(elem);
      for (int64_t d : s) t->add_dims(d);
    }
    return name;
  }
  std::string ints(const std::vector<int64_t> &v, bool scalar = false) {
    std::string name = fresh("p");
    b.init_i64(name, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{(int64_t)v.size()}, v);
    return name;
  }
  std::string floats(const std::vector<float> &v, bool scalar = false) {
    std::string name = fresh("p");
    b.init(name, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{(int64_t)v.size()}, v);
    return name;
  }
  onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &ins, int outs = 1) {
    std::vector<std::string> o;
    for (int k = 0; k < outs; ++k) o.push_back(fresh("t"));
    return b.node(op, ins, o);
  }
};

// ------------------------------------------------------------- values --
float nice(std::mt19937 &r) { return (float)((int)(r() % 65) - 32) / 8.0f; }

bool g_no_extremes = false;

float special(std::mt19937 &r) {
  static const float s[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -3.4e38f, 3.4028235e38f};
  return s[r() % (g_no_extremes ? 5 : 8)];
}

float value(std::mt19937 &r, Mode m) {
  switch (m) {
    case Mode::Nice: return nice(r);
    case Mode::NiceSpecial: return r() % 8 == 0 ? special(r) : nice(r);
    case Mode::Wide: {
      if (r() % 8 == 0) return special(r);
      float v = std::ldexp(1.0f + (float)(r() % 1024) / 1024.0f, (int)(r() % 49) - 24);
      return r() % 2 ? -v : v;
    }
    case Mode::Raw: {
      uint32_t bits = r();
      float v;
      memcpy(&v, &bits, 4);
      return v;
    }
  }
  return 0;
}

void fill(DataTensor &t, std::mt19937 &r, Mode m) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  t.bytes.clear();
  auto put = [&](const void *p, size_t k) {
    t.bytes.insert(t.bytes.end(), (const uint8_t *)p, (const uint8_t *)p + k);
  };
  for (int64_t i = 0; i < n; ++i) {
    if (t.elem == F32) {
      float v = value(r, m);
      if (t.positive) v = std::isnan(v) || v == 0 ? 0.5f : std::fabs(v);
      put(&v, 4);
    } else if (t.elem == I32) {
      static const int32_t ext[] = {INT32_MIN, INT32_MAX, 0, -1, 1};
      int32_t v = r() % 8 == 0 ? ext[r() % 5] : (int32_t)(r() % 17) - 8;
      put(&v, 4);
    } else if (t.elem == I64) {
      int64_t v;
      if (t.index_dim > 0) {
        // Mostly in [-dim, dim); a runtime index may be anything (clamped).
        v = t.runtime && r() % 8 == 0 ? (int64_t)(r() % 41) - 20 : (int64_t)(r() % (2 * t.index_dim)) - t.index_dim;
      } else {
        v = (int64_t)(r() % 17) - 8;
      }
      put(&v, 8);
    } else if (t.elem == BOOL) {
      uint8_t v = r() % 2;
      put(&v, 1);
    }
  }
}

// ------------------------------------------------------------ shapes --
// The shape onnx infers for `name` in the model so far (empty: unknown).
bool infer(const onnx::ModelProto &m, Val *v) {
  onnx::ModelProto copy = m;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception &) {
    return false;
  }
  for (const auto &vi : copy.graph().value_info()) {
    if (vi.name() != v->name || !vi.type().has_tensor_type()) continue;
    const auto &tt = vi.type().tensor_type();
    if (!tt.has_shape()) return false;
    v->elem = tt.elem_type();
    v->shape.clear();
    for (const auto &d : tt.shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0 || d.dim_value() > 4096) return false;
      v->shape.push_back(d.dim_value());
    }
    return v->numel() <= 1 << 16;
  }
  return false;
}

// x's shape with some dims set to 1 and maybe leading dims dropped: it
// broadcasts to x.
Shape broadcast_of(Ctx &c, const Shape &x) {
  int k = c.pick(4);
  if (k == 0) return x;
  if (k == 1) return {};
  Shape s(x.begin() + c.pick((int)x.size() + 1), x.end());
  for (auto &d : s)
    if (c.chance(3)) d = 1;
  return s;
}

std::vector<int64_t> some_axes(Ctx &c, int rank, bool allow_empty) {
  std::vector<int64_t> a;
  for (int i = 0; i < rank; ++i)
    if (c.f.ConsumeBool()) a.push_back(c.chance(3) ? i - rank : i);
  if (a.empty() && !allow_empty && rank > 0) a.push_back(c.pick(rank));
  return a;
}

// ---------------------------------------------------------------- ops --
// Adds a node reading x; returns its output (empty: not applicable) and the
// class of the op.
struct Added {
  std::string out;
  Cls cls = Exact;
  std::string extra;  // a second output worth checking (TopK indices)
  // Exact per element, but its values may leave the nice set (1/3,
  // sqrt 2, 0.01 x): a sum over them later depends on the order.
  bool rough = false;
};

Added unary_float(Ctx &c, const Val &x) {
  static const char *exact[] = {"Relu",  "Abs",  "Neg",  "Floor",      "Ceil",
                                "Round", "Sign", "Sqrt", "Reciprocal", "Identity"};
  static const char *approx[] = {"Exp", "Log", "Tanh", "Sigmoid", "Erf", "Softplus", "Softsign", "HardSwish"};
  if (c.f.ConsumeBool()) {
    std::string op = exact[c.pick(10)];
    Added a{c.node(op, {x.name}).output(0), Exact};
    a.rough = op == "Sqrt" || op == "Reciprocal";
    return a;
  }
  return {c.node(approx[c.pick(8)], {x.name}).output(0), Approx};
}

Added unary_attr(Ctx &c, const Val &x) {
  static const float alphas[] = {0.5f, 2.0f, -1.0f, 0.125f, 0.01f};
  switch (c.pick(6)) {
    case 0: {
      auto &n = c.node("LeakyRelu", {x.name});
      float alpha = alphas[c.pick(5)];
      OnnxBuilder::attr(n, "alpha", alpha);
      Added a{n.output(0), Exact};
      a.rough = alpha == 0.01f;
      return a;
    }
    case 1: {
      auto &n = c.node("Elu", {x.name});
      OnnxBuilder::attr(n, "alpha", alphas[c.pick(5)]);
      return {n.output(0), Approx};
    }
    case 2: {
      auto &n = c.node("HardSigmoid", {x.name});
      OnnxBuilder::attr(n, "alpha", alphas[c.pick(5)]);
      OnnxBuilder::attr(n, "beta", alphas[c.pick(5)]);
      return {n.output(0), Approx};
    }
    case 3: return {c.node("Selu", {x.name}).output(0), Approx};
    case 4: {
      // Clip with optional min / max (NaN bounds included).
      std::string lo = c.chance(3) ? "" : c.floats({c.chance(6) ? NAN : (float)(c.pick(9) - 4) / 2}, true);
      std::string hi = c.chance(3) ? "" : c.floats({c.chance(6) ? NAN : (float)(c.pick(9) - 2) / 2}, true);
      std::vector<std::string> ins = {x.name, lo};
      if (!hi.empty())
        ins.push_back(hi);
      else if (lo.empty())
        ins.pop_back();
      return {c.node("Clip", ins).output(0), Exact};
    }
    default: {
      auto &n = c.node(c.f.ConsumeBool() ? "IsNaN" : "IsInf", {x.name});
      if (n.op_type() == "IsInf" && c.f.ConsumeBool()) OnnxBuilder::attr(n, "detect_negative", (int64_t)0);
      return {n.output(0), Exact};
    }
  }
}

Added binary(Ctx &c, const Val &x) {
  Shape ys = broadcast_of(c, x.shape);
  bool swap = c.f.ConsumeBool();
  std::string y = c.tensor(ys, x.elem);
  std::vector<std::string> ins = swap ? std::vector<std::string>{y, x.name} : std::vector<std::string>{x.name, y};
  if (x.elem == F32) {
    static const char *ops[] = {
        "Add",   "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
        "PRelu", "Pow", "Mod"};
    std::string op = ops[c.pick(14)];
    if (op == "PRelu") ins = {x.name, y};  // the slope broadcasts to x
    auto &n = c.node(op, ins);
    if (op == "Mod") OnnxBuilder::attr(n, "fmod", (int64_t)1);
    // Float Mod is x - trunc(x / y) * y in the type: exact while the
    // quotient is small (docs/SECURITY.md), as it is for nice values
    // without denormal or huge specials.
    if (op == "Mod") c.no_extremes = true;
    Added a{n.output(0), op == "Pow" ? Approx : op == "Mod" ? Accum : Exact};
    a.rough = op == "Div";
    return a;
  }
  static const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "Equal", "Less", "Greater"};
  return {c.node(ops[c.pick(10)], ins).output(0), Exact};
}

Added where(Ctx &c, const Val &x) {
  std::string cond = c.tensor(broadcast_of(c, x.shape), BOOL);
  std::string y = c.tensor(broadcast_of(c, x.shape), x.elem);
  return {c.node("Where", c.f.ConsumeBool() ? std::vector<std::string>{cond, x.name, y}
                                            : std::vector<std::string>{cond, y, x.name})
              .output(0),
          Exact};
}

Added cast(Ctx &c, const Val &x) {
  static const int to[] = {F32,
                           I32,
                           I64,
                           BOOL,
                           onnx::TensorProto::INT8,
                           onnx::TensorProto::UINT8,
                           onnx::TensorProto::DOUBLE,
                           onnx::TensorProto::FLOAT16};
  int t = to[c.pick(8)];
  auto &n = c.node("Cast", {x.name});
  OnnxBuilder::attr(n, "to", (int64_t)t);
  // float -> int saturates (NaN: 0) in generated code and in folding alike.
  return {n.output(0), Exact};
}

Added reduce(Ctx &c, const Val &x) {
  static const char *ops[] = {"ReduceSum",  "ReduceSumSquare", "ReduceL1", "ReduceMax",       "ReduceMin",
                              "ReduceMean", "ReduceProd",      "ReduceL2", "ReduceLogSumExp", "ReduceLogSum"};
  static const Cls cls[] = {Accum, Accum, Accum, Exact, Exact, Approx, Approx, Approx, Approx, Approx};
  int k = c.pick(x.elem == F32 ? 10 : 5);
  if (x.elem != F32 && (k == 1 || k == 2)) k = 0;
  std::vector<int64_t> axes = some_axes(c, x.rank(), false);
  onnx::NodeProto *n;
  if (k == 0)
    n = &c.node(ops[k], {x.name, c.ints(axes)});  // opset 13: axes as an input
  else {
    n = &c.node(ops[k], {x.name});
    OnnxBuilder::attr(*n, "axes", axes);
  }
  if (c.f.ConsumeBool()) OnnxBuilder::attr(*n, "keepdims", (int64_t)0);
  return {n->output(0), cls[k]};
}

Added arg_reduce(Ctx &c, const Val &x) {
  if (x.rank() == 0) return {};
  switch (c.pick(4)) {
    case 0:
    case 1: {
      auto &n = c.node(c.f.ConsumeBool() ? "ArgMax" : "ArgMin", {x.name});
      OnnxBuilder::attr(n, "axis", (int64_t)(c.pick(2 * x.rank()) - x.rank()));
      OnnxBuilder::attr(n, "keepdims", (int64_t)c.pick(2));
      OnnxBuilder::attr(n, "select_last_index", (int64_t)c.pick(2));
      return {n.output(0), Exact};
    }
    case 2: {
      int axis = c.pick(x.rank());
      int64_t k = c.pick((int)x.shape[axis] + 1);
      auto &n = c.node("TopK", {x.name, c.ints({k})}, 2);
      OnnxBuilder::attr(n, "axis", (int64_t)axis);
      OnnxBuilder::attr(n, "largest", (int64_t)c.pick(2));
      return {n.output(0), Exact, n.output(1)};
    }
    default: {
      static const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax", "CumSum"};
      int k = c.pick(x.elem == F32 ? 4 : 1) + (x.elem == F32 ? 0 : 3);
      int64_t axis = c.pick(2 * x.rank()) - x.rank();
      if (k == 3) {
        auto &n = c.node("CumSum", {x.name, c.ints({axis}, true)});
        if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "exclusive", (int64_t)1);
        if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "reverse", (int64_t)1);
        return {n.output(0), Accum};
      }
      auto &n = c.node(ops[k], {x.name});
      OnnxBuilder::attr(n, "axis", axis);
      return {n.output(0), k == 2 ? Exact : Approx};
    }
  }
}

Added shape_op(Ctx &c, const Val &x) {
  int r = x.rank();
  switch (c.pick(12)) {
    case 0: {  // Transpose
      std::vector<int64_t> perm(r);
      for (int i = 0; i < r; ++i) perm[i] = i;
      for (int i = r - 1; i > 0; --i) std::swap(perm[i], perm[c.pick(i + 1)]);
      auto &n = c.node("Transpose", {x.name});
      OnnxBuilder::attr(n, "perm", perm);
      return {n.output(0)};
    }
    case 1: {  // Reshape to a factorization of the element count
      int64_t n = x.numel();
      std::vector<int64_t> s;
      for (int64_t rest = n; rest > 1 && s.size() < 4;) {
        int64_t d = 1 + c.pick((int)std::min<int64_t>(rest, 6));
        while (rest % d) --d;
        s.push_back(d);
        rest /= d;
        if (c.chance(3)) {
          s.push_back(rest);
          break;
        }
      }
      int64_t prod = 1;
      for (int64_t d : s) prod *= d;
      if (prod != n) s.push_back(n / std::max<int64_t>(prod, 1));
      if (!s.empty() && c.chance(3)) s[c.pick((int)s.size())] = -1;
      return {c.node("Reshape", {x.name, c.ints(s)}).output(0)};
    }
    case 2: {
      auto &n = c.node("Flatten", {x.name});
      OnnxBuilder::attr(n, "axis", (int64_t)(c.pick(2 * r + 1) - r));
      return {n.output(0)};
    }
    case 3: {  // Unsqueeze / Squeeze
      if (c.f.ConsumeBool() || r >= 5) {
        std::vector<int64_t> axes;
        for (int i = 0; i < r; ++i)
          if (x.shape[i] == 1 && c.f.ConsumeBool()) axes.push_back(i);
        if (axes.empty()) return {c.node("Squeeze", {x.name}).output(0)};
        return {c.node("Squeeze", {x.name, c.ints(axes)}).output(0)};
      }
      return {c.node("Unsqueeze", {x.name, c.ints({(int64_t)c.pick(r + 1)})}).output(0)};
    }
    case 4: {  // Concat with a tensor of another length on the axis
      if (r == 0) return {};
      int axis = c.pick(r);
      Shape s = x.shape;
      s[axis] = c.pick(4);
      std::string y = c.tensor(s, x.elem);
      auto &n = c.node(
          "Concat", c.f.ConsumeBool() ? std::vector<std::string>{x.name, y} : std::vector<std::string>{y, x.name, y});
      OnnxBuilder::attr(n, "axis", (int64_t)(c.f.ConsumeBool() ? axis : axis - r));
      return {n.output(0)};
    }
    case 5: {  // Slice
      if (r == 0) return {};
      std::vector<int64_t> starts, ends, axes, steps;
      for (int i = 0; i < r; ++i) {
        if (!c.f.ConsumeBool()) continue;
        int64_t d = x.shape[i];
        axes.push_back(i);
        starts.push_back(c.pick((int)(2 * d + 3)) - d - 1);
        ends.push_back(c.chance(4) ? (c.f.ConsumeBool() ? INT64_MAX : INT64_MIN) : c.pick((int)(2 * d + 3)) - d - 1);
        steps.push_back(c.chance(3) ? -(1 + c.pick(2)) : 1 + c.pick(2));
      }
      if (axes.empty()) return {};
      return {c.node("Slice", {x.name, c.ints(starts), c.ints(ends), c.ints(axes), c.ints(steps)}).output(0)};
    }
    case 6: {  // Gather / GatherElements
      if (r == 0) return {};
      int axis = c.pick(r);
      if (x.shape[axis] == 0) return {};
      if (c.f.ConsumeBool()) {
        Shape is;
        for (int k = c.pick(3); k > 0; --k) is.push_back(1 + c.pick(3));
        auto &n = c.node("Gather", {x.name, c.tensor(is, I64, true, x.shape[axis])});
        OnnxBuilder::attr(n, "axis", (int64_t)axis);
        return {n.output(0)};
      }
      Shape is = x.shape;
      for (auto &d : is) d = d ? 1 + c.pick((int)d) : 0;
      auto &n = c.node("GatherElements", {x.name, c.tensor(is, I64, true, x.shape[axis])});
      OnnxBuilder::attr(n, "axis", (int64_t)axis);
      return {n.output(0)};
    }
    case 7: {  // Pad
      static const char *modes[] = {"constant", "reflect", "edge"};
      std::string mode = modes[c.pick(3)];
      std::vector<int64_t> pads(2 * r);
      for (int i = 0; i < 2 * r; ++i) {
        int64_t d = x.shape[i % r];
        pads[i] =
            mode == "reflect" ? c.pick((int)std::max<int64_t>(d, 1)) : c.pick(3) - (mode == "constant" && c.chance(4));
      }
      std::vector<std::string> ins = {x.name, c.ints(pads)};
      if (mode == "constant" && x.elem == F32 && c.f.ConsumeBool())
        ins.push_back(c.floats({c.chance(4) ? NAN : 1.5f}, true));
      auto &n = c.node("Pad", ins);
      OnnxBuilder::attr(n, "mode", mode);
      return {n.output(0)};
    }
    case 8: {  // Tile / Expand
      if (c.f.ConsumeBool()) {
        std::vector<int64_t> rep(r);
        for (auto &v : rep) v = 1 + c.pick(3) - (c.chance(8) ? 1 : 0);
        return {c.node("Tile", {x.name, c.ints(rep)}).output(0)};
      }
      std::vector<int64_t> s;
      for (int k = c.pick(2); k > 0; --k) s.push_back(1 + c.pick(3));
      for (int64_t d : x.shape) s.push_back(d == 1 && c.f.ConsumeBool() ? 1 + c.pick(3) : (c.chance(3) ? 1 : d));
      return {c.node("Expand", {x.name, c.ints(s)}).output(0)};
    }
    case 9: {  // Split, output k
      if (r == 0) return {};
      int axis = c.pick(r);
      int64_t d = x.shape[axis];
      int64_t a = d ? c.pick((int)d + 1) : 0;
      auto &n = c.node("Split", {x.name, c.ints({a, d - a})}, 2);
      OnnxBuilder::attr(n, "axis", (int64_t)axis);
      return {n.output(c.pick(2))};
    }
    case 10: {  // DepthToSpace / SpaceToDepth
      if (r != 4) return {};
      int64_t bs = 1 + c.pick(3);
      bool d2s = c.f.ConsumeBool();
      auto &n = c.node(d2s ? "DepthToSpace" : "SpaceToDepth", {x.name});
      OnnxBuilder::attr(n, "blocksize", bs);
      if (d2s && c.f.ConsumeBool()) OnnxBuilder::attr(n, "mode", std::string("CRD"));
      return {n.output(0)};
    }
    default: {  // Trilu
      if (r < 2) return {};
      auto &n = c.node("Trilu", c.f.ConsumeBool() ? std::vector<std::string>{x.name}
                                                  : std::vector<std::string>{x.name, c.ints({c.pick(7) - 3}, true)});
      OnnxBuilder::attr(n, "upper", (int64_t)c.pick(2));
      return {n.output(0)};
    }
  }
}

// Convolutions and pooling over [N, C, spatial...] (1-D and 2-D).
Added conv_pool(Ctx &c, const Val &x) {
  int r = x.rank();
  if (r != 3 && r != 4) return {};
  int sp = r - 2;
  int64_t C = x.shape[1];
  if (C == 0) return {};
  auto ints_n = [&](int lo, int hi) {
    std::vector<int64_t> v(sp);
    for (auto &e : v) e = lo + c.pick(hi - lo + 1);
    return v;
  };
  int k = c.pick(8);
  if (k <= 2) {  // Conv / ConvTranspose
    bool transpose = k == 2;
    std::vector<int64_t> groups;
    for (int64_t g = 1; g <= C; ++g)
      if (C % g == 0) groups.push_back(g);
    int64_t g = c.chance(3) ? groups[c.pick((int)groups.size())] : 1;
    int64_t M = g * (1 + c.pick(3));
    std::vector<int64_t> ks = ints_n(1, 3);
    Shape w = transpose ? Shape{C, M / g} : Shape{M, C / g};
    w.insert(w.end(), ks.begin(), ks.end());
    std::vector<std::string> ins = {x.name, c.tensor(w, F32)};
    if (c.f.ConsumeBool()) ins.push_back(c.tensor({transpose ? M : M}, F32));
    auto &n = c.node(transpose ? "ConvTranspose" : "Conv", ins);
    if (g > 1) OnnxBuilder::attr(n, "group", g);
    if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "strides", ints_n(1, 2));
    if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "dilations", ints_n(1, 2));
    if (c.f.ConsumeBool()) {
      std::vector<int64_t> pads = ints_n(0, 2), end = ints_n(0, 2);
      pads.insert(pads.end(), end.begin(), end.end());
      OnnxBuilder::attr(n, "pads", pads);
    } else if (c.chance(3)) {
      OnnxBuilder::attr(n, "auto_pad", std::string(c.f.ConsumeBool() ? "SAME_UPPER" : "SAME_LOWER"));
    }
    if (transpose && c.chance(3)) OnnxBuilder::attr(n, "output_padding", ints_n(0, 0));
    return {n.output(0), Accum};
  }
  if (k <= 5) {  // MaxPool / AveragePool
    bool is_max = k != 5;
    std::vector<int64_t> ks = ints_n(1, 3);
    auto &n = c.node(is_max ? "MaxPool" : "AveragePool", {x.name});
    OnnxBuilder::attr(n, "kernel_shape", ks);
    if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "strides", ints_n(1, 2));
    if (c.f.ConsumeBool()) {
      std::vector<int64_t> pads(2 * sp);
      for (int i = 0; i < 2 * sp; ++i) pads[i] = c.pick((int)ks[i % sp]);  // pads smaller than the kernel
      OnnxBuilder::attr(n, "pads", pads);
    }
    if (c.chance(3)) OnnxBuilder::attr(n, "ceil_mode", (int64_t)1);
    if (is_max && c.chance(3)) OnnxBuilder::attr(n, "dilations", ints_n(1, 2));
    if (!is_max && c.f.ConsumeBool()) OnnxBuilder::attr(n, "count_include_pad", (int64_t)1);
    return {n.output(0), is_max ? Exact : Approx};
  }
  if (k == 6) {
    bool avg = c.f.ConsumeBool();
    return {c.node(avg ? "GlobalAveragePool" : "GlobalMaxPool", {x.name}).output(0), avg ? Approx : Exact};
  }
  // Normalizations with per-channel parameters.
  if (c.f.ConsumeBool()) {
    auto &n = c.node("BatchNormalization", {x.name, c.tensor({C}, F32), c.tensor({C}, F32), c.tensor({C}, F32),
                                            c.tensor({C}, F32, true, 0, true)});
    OnnxBuilder::attr(n, "epsilon", 0.001f);
    return {n.output(0), Approx};
  }
  return {c.node("InstanceNormalization", {x.name, c.tensor({C}, F32), c.tensor({C}, F32)}).output(0), Approx};
}

Added matmul(Ctx &c, const Val &x) {
  int r = x.rank();
  if (r == 0) return {};
  int64_t K = x.shape[r - 1], N = 1 + c.pick(5);
  if (r == 2 && c.f.ConsumeBool()) {  // Gemm
    bool ta = c.f.ConsumeBool(), tb = c.f.ConsumeBool();
    int64_t Kx = ta ? x.shape[0] : x.shape[1], Mx = ta ? x.shape[1] : x.shape[0];
    std::vector<std::string> ins = {x.name, c.tensor(tb ? Shape{N, Kx} : Shape{Kx, N}, F32)};
    if (c.f.ConsumeBool()) ins.push_back(c.tensor(broadcast_of(c, {Mx, N}), F32));
    auto &n = c.node("Gemm", ins);
    if (ta) OnnxBuilder::attr(n, "transA", (int64_t)1);
    if (tb) OnnxBuilder::attr(n, "transB", (int64_t)1);
    static const float ab[] = {1.0f, 0.5f, 2.0f, -1.0f, 0.0f};
    if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "alpha", ab[c.pick(5)]);
    if (c.f.ConsumeBool()) OnnxBuilder::attr(n, "beta", ab[c.pick(5)]);
    return {n.output(0), Accum};
  }
  if (c.chance(4)) {  // LayerNormalization over the last axes
    int64_t axis = -1 - c.pick(std::min(r, 2));
    Shape ps(x.shape.end() + axis, x.shape.end());
    auto &n = c.node("LayerNormalization", {x.name, c.tensor(ps, F32), c.tensor(ps, F32)});
    OnnxBuilder::attr(n, "axis", axis);
    return {n.output(0), Approx};
  }
  Shape ys = {K, N};
  if (r >= 3 && c.f.ConsumeBool()) ys.insert(ys.begin(), x.shape[r - 3]);
  if (c.chance(5)) ys = {K};
  std::vector<std::string> ins = {x.name, c.tensor(ys, F32)};
  return {c.node("MatMul", ins).output(0), Accum};
}

Added logical(Ctx &c, const Val &x) {
  if (c.chance(3)) return {c.node("Not", {x.name}).output(0)};
  static const char *ops[] = {"And", "Or", "Xor"};
  return {c.node(ops[c.pick(3)], {x.name, c.tensor(broadcast_of(c, x.shape), BOOL)}).output(0)};
}

// If on a runtime condition (a bool input): each branch applies an exact
// elementwise op to x, or returns x itself (a value from outside it). The
// compiled model runs only the taken branch's steps (the other's outputs
// hold whatever the arena did); the reference folds the branch the bound
// condition picks.
Added branch(Ctx &c, const Val &x) {
  std::string cond = c.tensor(c.f.ConsumeBool() ? Shape{} : Shape{1}, BOOL, false);
  onnx::NodeProto &n = c.node("If", {cond});
  for (const char *attr : {"then_branch", "else_branch"}) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto *g = a->mutable_g();
    g->set_name(attr);
    std::string out = x.name;
    if (!c.chance(4)) {
      static const char *float_ops[] = {"Relu", "Abs", "Neg", "Floor", "Sign", "Identity"};
      static const char *int_ops[] = {"Abs", "Neg", "Identity"};
      out = c.fresh("b");
      onnx::NodeProto *m = g->add_node();
      m->set_op_type(x.elem == F32 ? float_ops[c.pick(6)] : int_ops[c.pick(3)]);
      m->add_input(x.name);
      m->add_output(out);
    }
    onnx::ValueInfoProto *o = g->add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(x.elem);
  }
  return {n.output(0), Exact};
}

Added add_op(Ctx &c, const Val &x) {
  if (x.elem != F32 && x.elem != I32 && x.elem != I64) {
    if (x.elem == BOOL && c.pick(3)) return logical(c, x);
    auto &n = c.node("Cast", {x.name});
    OnnxBuilder::attr(n, "to", (int64_t)F32);
    return {n.output(0)};
  }
  if (c.chance(12)) return branch(c, x);
  switch (c.pick(x.elem == F32 ? 10 : 6)) {
    case 0:
      return x.elem == F32 ? unary_float(c, x) : Added{c.node(c.f.ConsumeBool() ? "Abs" : "Neg", {x.name}).output(0)};
    case 1: return binary(c, x);
    case 2: return reduce(c, x);
    case 3: return shape_op(c, x);
    case 4: return c.f.ConsumeBool() ? where(c, x) : cast(c, x);
    case 5: return arg_reduce(c, x);
    case 6: return unary_attr(c, x);
    case 7: return conv_pool(c, x);
    case 8: return matmul(c, x);
    default: return binary(c, x);
  }
}

// ------------------------------------------------------------ running --
// An arena of `bytes` between PROT_NONE pages, 64-byte aligned, either
// starting right after the lower guard or ending right at the upper one.
struct GuardedArena {
  uint8_t *map = nullptr, *arena = nullptr;
  size_t total = 0;
  GuardedArena(size_t bytes, bool at_end, uint8_t fill) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (bytes + 63) / 64 * 64;
    size_t body = (rounded + page - 1) / page * page;
    if (body == 0) body = page;
    total = body + 2 * page;
    void *m = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) abort();
    map = (uint8_t *)m;
    if (mprotect(map + page, body, PROT_READ | PROT_WRITE) != 0) abort();
    memset(map + page, fill, body);
    arena = at_end ? map + page + body - rounded : map + page;
  }
  ~GuardedArena() { munmap(map, total); }
};

tinyrt_pool *g_pool = nullptr;

struct RunResult {
  std::vector<Bytes> outputs;
};

RunResult run_model(const tinyrt_model *m, const std::vector<DataTensor> &data, bool threads) {
  GuardedArena a(tinyrt_model_arena_bytes(m), !threads, threads ? 0xA5 : 0xFF);
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_session_options_init(&opt);
  opt.pool = threads ? g_pool : nullptr;
  tinyrt_status st = tinyrt_session_init(&s, m, a.arena, tinyrt_model_arena_bytes(m), &opt);
  if (st != TINYRT_OK) fuzz::finding(std::string("session init: ") + tinyrt_session_message(&s));
  for (uint32_t i = 0; i < tinyrt_session_num_inputs(&s); ++i) {
    tinyrt_tensor t;
    if (tinyrt_session_input(&s, i, &t) != TINYRT_OK) fuzz::finding("input view failed");
    const DataTensor *d = nullptr;
    for (const DataTensor &x : data)
      if (x.runtime && x.name == t.name) d = &x;
    if (!d) fuzz::finding(std::string("the artifact has an input the model does not: ") + t.name);
    if (d->bytes.size() != t.bytes)
      fuzz::finding("input '" + d->name + "' has " + std::to_string(t.bytes) + " bytes, expected " +
                    std::to_string(d->bytes.size()));
    if (t.bytes) memcpy(t.data, d->bytes.data(), t.bytes);
  }
  st = tinyrt_session_run(&s);
  if (st != TINYRT_OK) fuzz::finding(std::string("run: ") + tinyrt_session_message(&s));
  RunResult r;
  for (uint32_t i = 0; i < tinyrt_session_num_outputs(&s); ++i) {
    tinyrt_tensor t;
    if (tinyrt_session_output(&s, i, &t) != TINYRT_OK) fuzz::finding("output view failed");
    const uint8_t *p = (const uint8_t *)t.data;
    r.outputs.emplace_back(p, p + t.bytes);
  }
  return r;
}

// ------------------------------------------------------------ compare --
double as_double(const ConstData &c, const uint8_t *p, int64_t i) {
  switch (c.dtype) {
    case DType::F32: {
      float v;
      memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case DType::F64: {
      double v;
      memcpy(&v, p + 8 * i, 8);
      return v;
    }
    case DType::F16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return half_to_float(h);
    }
    default: return 0;
  }
}

void compare(const std::string &what, const ConstData &ref, const Bytes &got, bool exact, const std::string &model) {
  if (got.size() != ref.bytes.size())
    fuzz::finding(what + ": " + std::to_string(got.size()) + " bytes, the reference has " +
                  std::to_string(ref.bytes.size()) + "\n" + model);
  int64_t n = shape_numel(ref.shape);
  if (!dtype_is_float(ref.dtype)) {
    if (!got.empty() && memcmp(got.data(), ref.bytes.data(), got.size()) != 0) {
      int eb = dtype_bytes(ref.dtype);
      for (int64_t i = 0; i < n; ++i)
        if (memcmp(got.data() + i * eb, ref.bytes.data() + i * eb, eb)) {
          ConstData g{ref.dtype, {1}, Bytes(got.begin() + i * eb, got.begin() + (i + 1) * eb)};
          fuzz::finding(what + " element " + std::to_string(i) + ": " + std::to_string(g.get_i(0)) +
                        ", the reference " + std::to_string(ref.get_i(i)) + "\n" + model);
        }
    }
    return;
  }
  double maxabs = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = as_double(ref, ref.bytes.data(), i);
    if (std::isfinite(r)) maxabs = std::max(maxabs, std::fabs(r));
  }
  double atol = std::max(1e-5 * maxabs, 1e-7);
  for (int64_t i = 0; i < n; ++i) {
    double r = as_double(ref, ref.bytes.data(), i), y = as_double(ref, got.data(), i);
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(y);
    else if (std::isinf(r) || exact)
      ok = y == r;
    else
      ok = std::fabs(y - r) <= atol + 1e-3 * std::fabs(r);
    if (!ok) {
      char buf[160];
      snprintf(buf, sizeof buf, " element %lld: %.9g, the reference %.9g (%s)", (long long)i, y, r,
               exact ? "exact" : "tolerance");
      fuzz::finding(what + buf + "\n" + model);
    }
  }
}

// A directory of this process for the models (in memory where possible);
// those of processes that died on a finding are removed.
std::string work_dir() {
  static std::string dir;
  if (dir.empty()) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string prefix = "tinyrt-fuzz-compile-run-";
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(base, ec)) {
      std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0 && !fs::exists("/proc/" + n.substr(prefix.size()))) fs::remove_all(e.path(), ec);
    }
    dir = std::string(base) + "/" + prefix + std::to_string(getpid());
    fs::create_directories(dir);
  }
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  g_trace = getenv("TINYRT_FUZZ_TRACE") != nullptr;
  resolve_target("host");
  static uint8_t storage[TINYRT_POOL_STORAGE_BYTES(3)] TINYRT_ALIGNED_ARENA;
  if (tinyrt_pool_create(storage, sizeof storage, 3, &g_pool) != TINYRT_OK) abort();
  work_dir();  // constructed before the handler is registered, so destroyed after it runs
  atexit([] { fs::remove_all(work_dir()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  FuzzedDataProvider f(bytes, size);
  Ctx c(f);
  // The graph input.
  Val x;
  x.elem = c.pick(6) == 0 ? I32 : F32;
  int rank = c.pick(5);
  for (int i = 0; i < rank; ++i) x.shape.push_back(c.chance(16) ? 0 : 1 + c.pick(rank >= 3 ? 5 : 8));
  x.name = c.tensor(x.shape, x.elem, false);
  // 1 to 3 nodes in a chain; an approximate op ends it.
  std::vector<Val> outs;
  int nodes = 1 + c.pick(3);
  for (int k = 0; k < nodes; ++k) {
    Added a;
    for (int tries = 0; tries < 4 && a.out.empty(); ++tries) a = add_op(c, x);
    if (a.out.empty()) break;
    c.accum = c.accum || a.cls == Accum;
    // A sum over values that left the nice set is compared with tolerance.
    c.approx = c.approx || a.cls == Approx || (a.cls == Accum && c.rough);
    c.rough = c.rough || a.rough;
    Val y;
    y.name = a.out;
    if (!infer(c.b.model(), &y)) return 0;
    if (!a.extra.empty()) {
      Val e;
      e.name = a.extra;
      if (infer(c.b.model(), &e)) outs.push_back(e);
    }
    x = y;
    if (a.cls == Approx) break;
  }
  if (c.b.model().graph().node_size() == 0) return 0;
  outs.insert(outs.begin(), x);
  for (const Val &o : outs) c.b.output(o.name, o.shape, o.elem);
  // Values, now that we know whether sums must be exact.
  Mode mode = (Mode)c.pick(4);
  if (c.accum && (mode == Mode::Wide || mode == Mode::Raw)) mode = Mode::NiceSpecial;
  std::mt19937 rng(f.ConsumeIntegral<uint32_t>());
  // Sums are exact in any order only without the huge (overflowing) and
  // denormal specials: infinities, NaN and zeros give the same result in
  // any order.
  g_no_extremes = c.no_extremes || c.accum;
  for (DataTensor &t : c.data) {
    fill(t, rng, mode);
    if (!t.runtime)
      for (auto &init : *c.b.model().mutable_graph()->mutable_initializer())
        if (init.name() == t.name) init.set_raw_data(std::string(t.bytes.begin(), t.bytes.end()));
  }
  if (g_trace)
    for (const DataTensor &t : c.data) {
      ConstData v{(DType)t.elem, t.shape, t.bytes};
      fprintf(stderr, "%s %s%s:", t.runtime ? "input" : "weight", t.name.c_str(), shape_str(t.shape).c_str());
      for (int64_t i = 0; i < shape_numel(t.shape) && i < 64; ++i)
        if (dtype_is_float(v.dtype))
          fprintf(stderr, " %.9g", v.get_f(i));
        else
          fprintf(stderr, " %lld", (long long)v.get_i(i));
      fprintf(stderr, "\n");
    }
  std::string model_bytes;
  c.b.model().SerializeToString(&model_bytes);
  std::string text = g_trace ? c.b.model().DebugString() : std::string("(TINYRT_FUZZ_TRACE=1 prints the model)");
  TRACE("%s", text.c_str());

  // Compile for the host (or the AVX2 target, also native here).
  static int counter = 0;
  std::string dir = work_dir(), path = dir + "/m.onnx";
  {
    std::ofstream o(path, std::ios::binary);
    o << model_bytes;
  }
  CompileOptions opt;
  opt.target = f.ConsumeBool() ? "host" : "x86-64-avx2";
  opt.name = "m" + std::to_string(counter++);
  opt.import.limits = fuzz::fuzz_limits();
  // Half the models (by their bytes, so that a replay does the same) with
  // every access tested against its kernel's tensors: a load from another
  // tensor of the arena traps, which the guard pages cannot see.
  opt.check_addresses = std::hash<std::string>()(model_bytes) % 2 == 0;
  TRACE("address checks: %s\n", opt.check_addresses ? "on" : "off");
  // Every step shared between the pool's threads, however small: the
  // comparison of 1 and 3 threads is about the kernels' task splits.
  opt.serial_step_ops = 0;
  Artifact art;
  if (!fuzz::compiles([&] { art = compile_model(path, opt); })) return 0;
  TRACE("compiled: arena %lld bytes\n", (long long)art.stats.arena_bytes);

  // The reference: every input bound, everything folded by the interpreter.
  CompileOptions ropt = opt;
  for (const DataTensor &t : c.data)
    if (t.runtime) ropt.import.bindings[t.name].tensor = make_const((DType)t.elem, t.shape, t.bytes);
  Program ref;
  bool have_ref = fuzz::compiles([&] {
    ref.graph = import_onnx_bytes(model_bytes, ropt.import).graph;
    Target target = resolve_target(opt.target);
    PassContext pc{ref, target, nullptr};
    infer_and_fold(pc, {});
  });
  if (!have_ref) TRACE("the reference refuses the model\n");

  // Link and load.
  std::string so = dir + "/" + opt.name + ".so", obj = dir + "/" + opt.name + ".o";
  {
    std::ofstream o(obj, std::ios::binary);
    o.write(art.object.data(), (std::streamsize)art.object.size());
  }
  std::string msg;
  if (!link_shared(art.target, obj, so, &msg)) fuzz::finding("cannot link the model: " + msg);
  void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) fuzz::finding(std::string("dlopen: ") + dlerror());
  fs::remove(so);
  fs::remove(obj);
  auto *m = (const tinyrt_model *)dlsym(h, (opt.name + "_model").c_str());
  if (!m) fuzz::finding("no model symbol");

  RunResult one = run_model(m, c.data, false), three = run_model(m, c.data, true);
  for (size_t k = 0; k < one.outputs.size(); ++k)
    if (one.outputs[k] != three.outputs[k])
      fuzz::finding("output " + std::to_string(k) +
                    " differs between 1 and 3 threads (or depends on memory the model did not write)\n" + text);

  if (have_ref) {
    if (ref.graph.outputs.size() != one.outputs.size()) fuzz::finding("output count differs from the reference");
    for (size_t k = 0; k < one.outputs.size(); ++k) {
      const Value &v = ref.graph.v(ref.graph.outputs[k]);
      if (!v.data) {
        TRACE("output %zu not folded: no reference\n", k);
        continue;
      }
      if (v.dtype != art.outputs[k].dtype || v.shape != art.outputs[k].shape)
        fuzz::finding("output " + std::to_string(k) + " is " + dtype_name(art.outputs[k].dtype) +
                      shape_str(art.outputs[k].shape) + ", the reference " + dtype_name(v.dtype) + shape_str(v.shape) +
                      "\n" + text);
      compare("output " + std::to_string(k) + " '" + v.name + "'", *v.data, one.outputs[k], !c.approx, text);
    }
    TRACE("outputs match the reference (%s)\n", c.approx ? "tolerance" : "exact");
  }
  dlclose(h);
  return 0;
}
