// kernel_bench — single-op models compiled by tinyrt for the host and timed
// with Google Benchmark through the runtime, reported as GFLOP/s and as a
// fraction of one core's FMA peak (the bound this code can reach).
//
//   build/kernel_bench [--benchmark_filter=conv3x3] [--peak_gflops=265]
//
// The shapes are the layers that dominate resnet18 and mobilenet_v2.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "onnx_builder.h"
#include "tinyrt.h"
#include "tool_common.h"

using namespace tinyrt;

namespace {

double g_peak = 0;  // GFLOP/s of one core, fp32 FMA

struct Case {
  std::string name;
  int64_t c, h, w, oc, k, stride, groups;
  bool matmul = false;
};

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (float)((i * 37) % 17) * 0.01f - 0.08f;
  return v;
}

// Builds, compiles and loads one case; returns the descriptor and its FLOPs.
const tinyrt_model *build(const Case &cs, double *flops) {
  test::OnnxBuilder b;
  if (cs.matmul) {
    b.input("x", {cs.h, cs.c});
    b.init("w", {cs.c, cs.oc}, ramp((size_t)(cs.c * cs.oc)));
    b.node("MatMul", {"x", "w"}, {"y"});
    b.output("y", {cs.h, cs.oc});
    *flops = 2.0 * cs.h * cs.c * cs.oc;
  } else {
    int64_t oh = (cs.h + 2 * (cs.k / 2) - cs.k) / cs.stride + 1, ow = (cs.w + 2 * (cs.k / 2) - cs.k) / cs.stride + 1;
    b.input("x", {1, cs.c, cs.h, cs.w});
    b.init("w", {cs.oc, cs.c / cs.groups, cs.k, cs.k}, ramp((size_t)(cs.oc * cs.c / cs.groups * cs.k * cs.k)));
    b.init("bias", {cs.oc}, ramp((size_t)cs.oc));
    auto &n = b.node("Conv", {"x", "w", "bias"}, {"c"});
    test::OnnxBuilder::attr(n, "pads", std::vector<int64_t>(4, cs.k / 2));
    test::OnnxBuilder::attr(n, "strides", std::vector<int64_t>{cs.stride, cs.stride});
    test::OnnxBuilder::attr(n, "group", cs.groups);
    b.node("Relu", {"c"}, {"y"});
    b.output("y", {1, cs.oc, oh, ow});
    *flops = 2.0 * oh * ow * cs.oc * (cs.c / cs.groups) * cs.k * cs.k;
  }
  CompileOptions co;
  co.name = "bench";
  BuiltModel m = build_model(b.save(), co, make_temp_dir("tinyrt-bench"));
  void *lib = dlopen(m.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::cerr << dlerror() << "\n";
    std::exit(1);
  }
  return static_cast<const tinyrt_model *>(dlsym(lib, m.symbol.c_str()));
}

void run(benchmark::State &state, const Case &cs) {
  double flops = 0;
  const tinyrt_model *model = build(cs, &flops);
  size_t bytes = tinyrt_model_arena_bytes(model);
  void *arena = nullptr;
  if (posix_memalign(&arena, TINYRT_ARENA_ALIGN, bytes)) std::abort();
  std::memset(arena, 0, bytes);
  tinyrt_session s;
  if (tinyrt_session_init(&s, model, arena, bytes, nullptr) != TINYRT_OK) {
    state.SkipWithError(tinyrt_session_message(&s));
    return;
  }
  for (auto _ : state) tinyrt_session_run(&s);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (g_peak > 0)
    state.counters["of_peak"] =
        benchmark::Counter(flops * 1e-9 / g_peak, benchmark::Counter::kIsIterationInvariantRate);
  free(arena);
}

}  // namespace

int main(int argc, char **argv) {
  // One core's fp32 FMA peak on the development machine (AVX-512: 2 x 16 x
  // 2 flops x ~4.1 GHz); override with --peak_gflops=N for other hosts.
  g_peak = (tinyrt_cpu_features() & TINYRT_ISA_X86_AVX512F) ? 265 : 130;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--peak_gflops=", 14) == 0) g_peak = std::atof(argv[i] + 14);
  static const Case cases[] = {
      {"conv3x3_64ch_56px", 64, 56, 56, 64, 3, 1, 1},        {"conv3x3_128ch_28px", 128, 28, 28, 128, 3, 1, 1},
      {"conv3x3_256ch_14px", 256, 14, 14, 256, 3, 1, 1},     {"conv3x3_512ch_7px", 512, 7, 7, 512, 3, 1, 1},
      {"conv1x1_96to24_56px", 96, 56, 56, 24, 1, 1, 1},      {"conv1x1_160to960_7px", 160, 7, 7, 960, 1, 1, 1},
      {"conv7x7s2_3to64_224px", 3, 224, 224, 64, 7, 2, 1},   {"depthwise3x3_144ch_56px", 144, 56, 56, 144, 3, 1, 144},
      {"matmul_1x512x1000", 512, 1, 0, 1000, 1, 1, 1, true},
  };
  for (const Case &cs : cases) benchmark::RegisterBenchmark(cs.name.c_str(), run, cs)->Unit(benchmark::kMillisecond);
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i)
    if (std::strncmp(argv[i], "--peak_gflops=", 14) != 0) args.push_back(argv[i]);
  int n = (int)args.size();
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
