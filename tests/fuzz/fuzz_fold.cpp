// fuzz_fold — constant folding driven hard: a model of 1 to 4 nodes over
// constants only (initializers and ConstantOfShape/Range of fuzzed sizes
// and values; Conv, MatMul, Gemm, Pow on floats and integers, reductions,
// CumSum, TopK, Softmax, Tile, Expand, Transpose, Gather, Mod, Div, Cast),
// whose result is added to the graph input (and summed), so that everything
// before the Add folds. It goes through import and every pass up to memory planning
// (plan_model, no code generation) under the fuzzing caps, which include a
// small folding budget (fuzz_common.h: 2^24 element operations).
//
// A documented refusal (a cap, an invalid model) is fine. A crash, a
// sanitizer report, an internal error or another exception, and a time-out
// (libFuzzer's -timeout: folding that does not bound its own work) are
// findings. TINYRT_FUZZ_TRACE=1 prints the model's nodes and the verdict.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/compiler.h"
#include "fuzz_common.h"
#include "onnx_builder.h"

using namespace tinyrt;
using tinyrt::test::OnnxBuilder;

namespace {

constexpr int F32 = onnx::TensorProto::FLOAT, I64 = onnx::TensorProto::INT64, I32 = onnx::TensorProto::INT32;

struct Gen {
  FuzzedDataProvider &f;
  OnnxBuilder b{13};
  int count = 0;

  std::string fresh() { return "v" + std::to_string(count++); }

  // Sizes that reach the caps as well as small ones.
  int64_t dim() {
    static const int64_t dims[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 255, 1024, 4096, 65536, 1 << 20};
    return dims[f.ConsumeIntegralInRange<size_t>(0, sizeof dims / sizeof dims[0] - 1)];
  }
  std::vector<int64_t> shape(int rank) {
    std::vector<int64_t> s;
    for (int i = 0; i < rank; ++i) s.push_back(dim());
    return s;
  }

  // A constant of `elem` type: a small initializer, or ConstantOfShape of
  // any size, or Range.
  std::string constant(int elem, int rank) {
    std::string name = fresh();
    switch (f.ConsumeIntegralInRange<int>(0, 2)) {
      case 0: {
        std::vector<int64_t> s;
        int64_t n = 1;
        for (int i = 0; i < rank; ++i) {
          s.push_back(f.ConsumeIntegralInRange<int64_t>(0, 4));
          n *= s.back();
        }
        if (elem == I64) {
          std::vector<int64_t> v;
          for (int64_t i = 0; i < n; ++i)
            v.push_back(f.ConsumeIntegral<int64_t>() % (f.ConsumeBool() ? 70 : INT64_MAX));
          b.init_i64(name, s, v);
        } else {
          std::vector<float> v;
          for (int64_t i = 0; i < n; ++i) v.push_back(f.ConsumeFloatingPoint<float>());
          b.init(name, s, v);
        }
        if (elem == I32) {
          std::string c = fresh();
          OnnxBuilder::attr(b.node("Cast", {name}, {c}), "to", (int64_t)I32);
          return c;
        }
        return name;
      }
      case 1: {
        std::string s = fresh();
        b.init_i64(s, {(int64_t)rank}, shape(rank));
        auto &n = b.node("ConstantOfShape", {s}, {name});
        auto *a = n.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto *t = a->mutable_t();
        t->set_data_type(elem);
        t->add_dims(1);
        if (elem == F32)
          t->add_float_data(f.ConsumeFloatingPoint<float>());
        else if (elem == I64)
          t->add_int64_data(f.ConsumeIntegral<int64_t>());
        else
          t->add_int32_data(f.ConsumeIntegral<int32_t>());
        return name;
      }
      default: {
        std::string s = fresh(), l = fresh(), d = fresh();
        if (elem == F32) {
          b.init(s, {}, {f.ConsumeFloatingPoint<float>()});
          b.init(l, {}, {f.ConsumeFloatingPoint<float>()});
          b.init(d, {}, {f.ConsumeFloatingPoint<float>()});
        } else {
          b.init_i64(s, {}, {f.ConsumeIntegral<int64_t>() % 100000});
          b.init_i64(l, {}, {f.ConsumeIntegral<int64_t>()});
          b.init_i64(d, {}, {f.ConsumeIntegral<int64_t>()});
        }
        b.node("Range", {s, l, d}, {name});
        return name;
      }
    }
  }

  // One op over `x` (and new constants); returns its output.
  std::string op(const std::string &x, int elem) {
    std::string y = fresh();
    switch (f.ConsumeIntegralInRange<int>(0, 13)) {
      case 0: {
        auto &n = b.node("Conv", {x, constant(elem, 4)}, {y});
        if (f.ConsumeBool()) OnnxBuilder::attr(n, "group", f.ConsumeIntegralInRange<int64_t>(1, 4));
        break;
      }
      case 1: b.node("MatMul", {x, constant(elem, f.ConsumeIntegralInRange<int>(1, 3))}, {y}); break;
      case 2: {
        auto &n = b.node("Gemm", {x, constant(elem, 2)}, {y});
        if (f.ConsumeBool()) OnnxBuilder::attr(n, "transB", (int64_t)1);
        break;
      }
      case 3:
        b.node("Pow", {x, constant(f.ConsumeBool() ? I64 : elem, f.ConsumeIntegralInRange<int>(0, 2))}, {y});
        break;
      case 4: {
        static const char *ops[] = {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceLogSumExp", "ReduceL2"};
        auto &n = b.node(ops[f.ConsumeIntegralInRange<int>(0, 4)], {x}, {y});
        if (f.ConsumeBool()) OnnxBuilder::attr(n, "keepdims", (int64_t)0);
        break;
      }
      case 5:
        OnnxBuilder::attr(b.node("CumSum", {x, constant(I64, 0)}, {y}), "reverse", (int64_t)f.ConsumeBool());
        break;
      case 6: {
        std::string vals = y, idx = fresh();
        y = fresh();
        b.node("TopK", {x, constant(I64, 1)}, {vals, idx});
        OnnxBuilder::attr(b.node("Cast", {idx}, {y}), "to", (int64_t)elem);
        break;
      }
      case 7:
        OnnxBuilder::attr(b.node("Softmax", {x}, {y}), "axis", (int64_t)f.ConsumeIntegralInRange<int>(-2, 1));
        break;
      case 8: b.node("Tile", {x, constant(I64, 1)}, {y}); break;
      case 9: b.node("Expand", {x, constant(I64, 1)}, {y}); break;
      case 10: b.node("Gather", {x, constant(I64, f.ConsumeIntegralInRange<int>(0, 2))}, {y}); break;
      case 11: OnnxBuilder::attr(b.node("Mod", {x, constant(elem, 1)}, {y}), "fmod", (int64_t)(elem == F32)); break;
      case 12:
        b.node(f.ConsumeBool() ? "Div" : "Mul", {x, constant(elem, f.ConsumeIntegralInRange<int>(0, 3))}, {y});
        break;
      default: {
        std::vector<int64_t> perm = {1, 0};
        OnnxBuilder::attr(b.node("Transpose", {x}, {y}), "perm", perm);
        break;
      }
    }
    return y;
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  resolve_target("host");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider f(data, size);
  Gen g{f};
  static const int elems[] = {F32, I64, I32};
  const int elem = elems[f.ConsumeIntegralInRange<int>(0, 2)];
  std::string v = g.constant(elem, f.ConsumeIntegralInRange<int>(0, 4));
  const int nodes = f.ConsumeIntegralInRange<int>(1, 4);
  for (int i = 0; i < nodes; ++i) v = g.op(v, elem);
  // The sum of x + the folded constant: kernels at run time, and a scalar
  // output whatever v's shape.
  g.b.input("x", {1}, elem);
  g.b.node("Add", {"x", v}, {"s"});
  OnnxBuilder::attr(g.b.node("ReduceSum", {"s"}, {"y"}), "keepdims", (int64_t)0);
  g.b.output("y", {}, elem);
  std::string bytes;
  g.b.model().SerializeToString(&bytes);
  static const bool trace = getenv("TINYRT_FUZZ_TRACE") != nullptr;
  if (trace)
    for (const auto &n : g.b.model().graph().node())
      fprintf(stderr, "node %s (%s)\n", n.name().c_str(), n.op_type().c_str());
  CompileOptions opt;
  opt.target = "host";
  opt.import.limits = fuzz::fuzz_limits();
  fuzz::compiles([&] { plan_model(bytes, opt); });
  return 0;
}
