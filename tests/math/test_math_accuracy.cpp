// test_math_accuracy — the generated transcendental approximations against
// float64 references over their whole float32 input range, on one target
// (natively or under qemu). Prints the max error in ULP per function and
// fails when a documented bound (codegen/math_emitter.h) is exceeded.
//
//   test_math_accuracy --target aarch64-neon
//
// Inputs: every float whose bit pattern is a multiple of 4099 (1.05M points
// over all exponents and both signs) plus special values. Denormal
// inputs and results are excluded from the ULP figures: ARMv7 NEON flushes
// them to zero by design.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "onnx_builder.h"
#include "tool_common.h"

using namespace tinyrt;

namespace {

struct Fn {
  const char *op;
  std::function<double(double)> ref;
  double max_ulp;  // documented bound
  double max_abs;  // or this absolute error, whichever is larger
};

double ulp_of(float x) {
  x = std::fabs(x);
  if (x < FLT_MIN) return std::ldexp(1.0, -149);
  int e;
  std::frexp(x, &e);
  return std::ldexp(1.0, e - 24);
}

}  // namespace

// Compiles model `b` (its input x: xs) for the target, runs it, and
// returns its outputs' bytes one after the other and the target's name;
// empty when the runner failed (its message printed).
std::string run_model(const test::OnnxBuilder &b, const std::string &target, const std::string &name,
                      const std::string &work, const std::vector<float> &xs, std::string *target_name) {
  CompileOptions co;
  co.target = target;
  co.name = name;
  BuiltModel m = build_model(b.save(), co, work);
  *target_name = m.artifact.target.name;
  std::string in = work + "/in.bin", out = work + "/out.bin";
  std::ofstream(in, std::ios::binary)
      .write(reinterpret_cast<const char *>(xs.data()), (std::streamsize)(xs.size() * sizeof(float)));
  ProcessResult r = run_runner(m.artifact.target, m, {"--in", in, "--out", out});
  if (r.exit_code != 0) {
    std::cerr << "runner failed: " << r.output << "\n";
    return {};
  }
  std::ifstream f(out, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Compiles one model computing every function of `fns` over `xs` for the
// target, runs it, and reports/validates the errors.
bool check(const std::string &target, const std::string &work, const std::string &domain, const std::vector<float> &xs,
           const std::vector<Fn> &fns) {
  int64_t n = (int64_t)xs.size();
  test::OnnxBuilder b;
  b.input("x", {n});
  for (auto &f : fns) {
    b.node(f.op, {"x"}, {std::string("y_") + f.op});
    b.output(std::string("y_") + f.op, {n});
  }
  std::string target_name;
  const std::string got = run_model(b, target, "math_accuracy", work, xs, &target_name);
  std::vector<float> ys((size_t)n * fns.size());
  if (got.size() < ys.size() * sizeof(float)) {
    std::cerr << "the runner wrote " << got.size() << " bytes, not " << ys.size() * sizeof(float) << "\n";
    return false;
  }
  std::memcpy(ys.data(), got.data(), ys.size() * sizeof(float));
  bool ok = true;
  std::cout << "target " << target_name << ", " << n << " inputs, " << domain << "\n";
  for (size_t k = 0; k < fns.size(); ++k) {
    const Fn &fn = fns[k];
    double worst_ulp = 0, worst_abs = 0, at = 0;
    int64_t special_bad = 0, counted = 0, over = 0;
    for (int64_t i = 0; i < n; ++i) {
      float x = xs[i], y = ys[k * n + i];
      if (x != 0 && std::fabs(x) < FLT_MIN) continue;  // flushed to zero on armv7
      double ref = fn.ref((double)x);
      float rf = (float)ref;
      if (std::isnan(ref) || std::isinf(rf) || std::isnan(x) || std::isinf(x)) {
        bool same = std::isnan(ref) ? std::isnan(y) : y == rf;  // special values exactly
        if (!same && special_bad++ < 3)
          std::cout << "  " << fn.op << "(" << x << ") = " << y << ", expected " << rf << "\n";
        continue;
      }
      if (ref != 0 && std::fabs(ref) < FLT_MIN) continue;
      double err = std::fabs((double)y - ref);
      double u = err / ulp_of(rf);
      ++counted;
      if (u > fn.max_ulp && err > fn.max_abs) ++over;
      if (u > worst_ulp) {
        worst_ulp = u;
        at = x;
      }
      worst_abs = std::max(worst_abs, err);
    }
    bool pass = over == 0 && special_bad == 0;
    ok = ok && pass;
    std::cout << "  " << fn.op << ": max error " << worst_ulp << " ulp (at x = " << at << "), max abs " << worst_abs
              << "; bound " << fn.max_ulp << " ulp" << (fn.max_abs > 0 ? " or abs " : "");
    if (fn.max_abs > 0) std::cout << fn.max_abs;
    std::cout << "; " << counted << " points, " << over << " beyond the bound, " << special_bad
              << " wrong special values -> " << (pass ? "ok" : "EXCEEDED") << "\n";
  }
  return ok;
}

// QuantizeLinear and Cast from float to 8- and 16-bit integers, which the
// code generator converts with the CPU's conversion instructions where it
// can (codegen/expr_emitter: rounded_int_cast): exactly ONNX's result on
// every input — ties to even, saturation, NaN and infinities included.
bool check_integer_casts(const std::string &target, const std::string &work, const std::vector<float> &xs) {
  int64_t n = (int64_t)xs.size();
  test::OnnxBuilder b;
  b.input("x", {n});
  auto scalar = [&](const std::string &name, int elem, const std::string &bytes) {
    onnx::TensorProto *t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    t->set_raw_data(bytes);
  };
  auto f32 = [](float v) { return std::string(reinterpret_cast<const char *>(&v), 4); };
  scalar("s1", onnx::TensorProto::FLOAT, f32(1.0f));
  scalar("s2", onnx::TensorProto::FLOAT, f32(0.37f));
  // Scales whose reciprocal x86 multiplies by (MathEmitter::divide_by_constant):
  // a calibrated-looking one, one with a significand of all ones, a tiny one.
  scalar("s3", onnx::TensorProto::FLOAT, f32(6.0f / 255.0f));
  scalar("s4", onnx::TensorProto::FLOAT, f32(0x1.fffffep-5f));
  scalar("s5", onnx::TensorProto::FLOAT, f32(3e-6f));
  scalar("zu", onnx::TensorProto::UINT8, std::string(1, (char)97));
  scalar("zu0", onnx::TensorProto::UINT8, std::string(1, (char)0));
  scalar("zi", onnx::TensorProto::INT8, std::string(1, (char)-3));
  struct Case {
    std::string out;
    int elem;
    double lo, hi;
    std::function<double(float)> ref;  // before saturation
  };
  auto quant = [](float s, double z) { return [s, z](float x) { return (double)std::nearbyint(x / s) + z; }; };
  auto trunc = [](float x) { return std::trunc((double)x); };
  const std::vector<Case> cases = {
      {"q_u8", onnx::TensorProto::UINT8, 0, 255, quant(1.0f, 97)},
      {"q_i8", onnx::TensorProto::INT8, -128, 127, quant(0.37f, -3)},
      {"q_u8_z0", onnx::TensorProto::UINT8, 0, 255, quant(0.37f, 0)},
      {"q_u8_s3", onnx::TensorProto::UINT8, 0, 255, quant(6.0f / 255.0f, 97)},
      {"q_i8_s4", onnx::TensorProto::INT8, -128, 127, quant(0x1.fffffep-5f, -3)},
      {"q_u8_s5", onnx::TensorProto::UINT8, 0, 255, quant(3e-6f, 0)},
      {"c_i8", onnx::TensorProto::INT8, -128, 127, trunc},
      {"c_u8", onnx::TensorProto::UINT8, 0, 255, trunc},
      {"c_i16", onnx::TensorProto::INT16, -32768, 32767, trunc},
      {"c_u16", onnx::TensorProto::UINT16, 0, 65535, trunc},
  };
  b.node("QuantizeLinear", {"x", "s1", "zu"}, {"q_u8"});
  b.node("QuantizeLinear", {"x", "s2", "zi"}, {"q_i8"});
  b.node("QuantizeLinear", {"x", "s2", "zu0"}, {"q_u8_z0"});
  b.node("QuantizeLinear", {"x", "s3", "zu"}, {"q_u8_s3"});
  b.node("QuantizeLinear", {"x", "s4", "zi"}, {"q_i8_s4"});
  b.node("QuantizeLinear", {"x", "s5", "zu0"}, {"q_u8_s5"});
  for (size_t k = 6; k < cases.size(); ++k)
    test::OnnxBuilder::attr(b.node("Cast", {"x"}, {cases[k].out}), "to", (int64_t)cases[k].elem);
  for (const Case &c : cases) b.output(c.out, {n}, c.elem);
  std::string target_name;
  const std::string got = run_model(b, target, "integer_casts", work, xs, &target_name);
  std::cout << "target " << target_name << ", " << n << " inputs, integer casts\n";
  bool ok = true;
  size_t off = 0;
  for (const Case &c : cases) {
    int bytes = c.hi > 255 ? 2 : 1;
    bool sg = c.lo < 0;
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i, off += (size_t)bytes) {
      if (got.size() < off + (size_t)bytes) {
        std::cerr << "  " << c.out << ": the runner wrote too few bytes\n";
        return false;
      }
      float x = xs[(size_t)i];
      if (x != 0 && std::fabs(x) < FLT_MIN) continue;  // flushed to zero on armv7
      double want = std::isnan(x) ? 0 : std::min(c.hi, std::max(c.lo, c.ref(x)));
      uint16_t u = (uint8_t)got[off];
      if (bytes == 2) u = (uint16_t)(u | (uint8_t)got[off + 1] << 8);
      double y = bytes == 1 ? (sg ? (double)(int8_t)u : (double)u) : (sg ? (double)(int16_t)u : (double)u);
      if (y != want && wrong++ < 3)
        std::cout << "  " << c.out << "(" << x << ") = " << y << ", expected " << want << "\n";
    }
    std::cout << "  " << c.out << ": " << n << " inputs, " << wrong << " wrong -> " << (wrong ? "WRONG" : "ok") << "\n";
    ok = ok && wrong == 0;
  }
  return ok;
}

int main(int argc, char **argv) {
  std::string target = "host";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--target") target = argv[i + 1];
  const std::vector<Fn> fns = {
      {"Exp", [](double x) { return std::exp(x); }, 2, 0},
      {"Log", [](double x) { return std::log(x); }, 3, 0},
      {"Tanh", [](double x) { return std::tanh(x); }, 8, 0},
      {"Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3, 0},
      {"Erf", [](double x) { return std::erf(x); }, 8, 3e-7},
      {"Atan", [](double x) { return std::atan(x); }, 4, 0},
  };
  // Trigonometric functions reduce by pi/2 in float arithmetic: checked on
  // |x| < 1e4 (absolute error, as relative error at their zeros is unbounded).
  const std::vector<Fn> trig = {
      {"Sin", [](double x) { return std::sin(x); }, 0, 2e-6},
      {"Cos", [](double x) { return std::cos(x); }, 0, 2e-6},
      {"Tan", [](double x) { return std::tan(x); }, 8, 1e-5},
  };
  std::vector<float> xs, xs_trig;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4099) {
    float x;
    uint32_t b = (uint32_t)bits;
    std::memcpy(&x, &b, 4);
    xs.push_back(x);
    if (std::fabs(x) < 1e4f) xs_trig.push_back(x);
  }
  for (float s : {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, FLT_MIN, 88.7f, 89.0f, -87.3f, -104.0f, 0.5f,
                  -0.5f, 4.0f, 9.0f, 0.2f, 1e-8f})
    xs.push_back(s);
  for (float s : {0.0f, 1.5707964f, 3.1415927f, -3.1415927f, 0.7853982f, 100.0f, 9999.0f}) xs_trig.push_back(s);
  std::string work = make_temp_dir("tinyrt-math");
  bool ok = true;
  try {
    ok = check(target, work, "all floats", xs, fns) && ok;
    ok = check(target, work, "|x| < 1e4", xs_trig, trig) && ok;
    // Ties: every half-integer and quarter within the types' ranges.
    std::vector<float> xs_int = xs;
    for (int k = -140000; k <= 140000; ++k) xs_int.push_back((float)k * 0.25f);
    // And the quotients' ties for each scale of check_integer_casts: the
    // floats nearest (k + 1/2) * s, four on each side.
    for (float s : {1.0f, 0.37f, 6.0f / 255.0f, 0x1.fffffep-5f, 3e-6f})
      for (int k = -300; k < 300; ++k) {
        float x = (float)((k + 0.5) * (double)s);
        for (int j = 0; j < 4; ++j) x = std::nextafter(x, -INFINITY);
        for (int j = 0; j < 9; ++j, x = std::nextafter(x, INFINITY)) xs_int.push_back(x);
      }
    for (float s : {2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 1073741824.0f, 3e9f, -3e9f})
      xs_int.push_back(s);
    ok = check_integer_casts(target, work, xs_int) && ok;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::filesystem::remove_all(work);
  return ok ? 0 : 1;
}
