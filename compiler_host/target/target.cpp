#include "target/target.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include "ir/error.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

GemmTile Target::gemm_tile(int64_t oc, int64_t row, bool linear, int64_t ic, bool int8, double *score_out) const {
  int lanes = f32_lanes();
  auto tiles = [](int64_t n, int64_t t) { return (n + t - 1) / t; };
  auto score = [&](int mr, int nv) {
    int64_t nr = (int64_t)nv * lanes;
    double pix = (double)row / (double)(tiles(row, mr) * mr);
    double ch = (double)oc / (double)(tiles(oc, nr) * nr);
    double latency = std::min(1.0, mr * nv / 8.0);  // FMA latency 4 x 2 pipes
    // Useful FMAs per instruction of the inner loop (mr broadcasts, nv
    // weight loads, mr * nv FMAs per input channel).
    return pix * ch * latency * (mr * nv) / (gemm_broadcast_cost * mr + nv + mr * nv);
  };
  if (!int8)
    for (const TileRule &r : gemm_tile_table)
      if (r.ic_class == tile_ic_class(ic) && r.linear == linear && oc > r.min_oc && oc <= r.max_oc &&
          row > r.min_row && row <= r.max_row) {
        if (score_out) *score_out = score(r.mr, r.nv);
        return {r.mr, r.nv, gemm_unroll};
      }
  GemmTile best{1, 1, gemm_unroll};
  double best_score = -1;
  for (auto [mr, nv] : int8 && !qgemm_tiles.empty() ? qgemm_tiles : gemm_tiles) {
    double s = score(mr, nv);
    // A later entry must win clearly: the first is the measured default.
    if (best_score < 0 ? true : s > best_score * 1.1) {
      best_score = s;
      best = {mr, nv, gemm_unroll};
    }
  }
  if (score_out) *score_out = best_score;
  return best;
}

int Target::recurrent_vectors(int gates) const {
  // 8 accumulators: measured on the int8 LSTM (hidden 256, AVX-512 VNNI),
  // 16 were slower (0.53 and, with the quad loop unrolled, 0.64 ms against
  // 0.50 ms).
  return std::max(1, std::min(4, 8 / std::max(1, gates)));
}

int dot_i8_x_sign(DotI8 d) {
  switch (d) {
    case DotI8::X86Vnni: return 1;
    case DotI8::NeonPairs:
    case DotI8::NeonSdot: return -1;
    case DotI8::Widen: break;
  }
  return 0;
}

int Target::depthwise_tile(int64_t taps) const {
  // One accumulator per pixel, the tap weights held in registers when they
  // fit, one register for the input vector.
  int64_t free_regs = vector_regs - 1 - (taps < vector_regs / 2 ? taps : 0);
  return (int)std::max<int64_t>(2, std::min<int64_t>(8, free_regs));
}

int Target::depthwise_tile_int8(int64_t k_w, int64_t stride_w) const {
  // m accumulators + (m - 1) * stride + k_w widened inputs + a weight.
  int64_t m = (vector_regs - 1 - k_w + stride_w) / (1 + stride_w);
  return (int)std::max<int64_t>(1, std::min<int64_t>(8, m));
}

int Target::depthwise_int8_channels() const { return arch == TINYRT_ARCH_X86_64 ? f32_lanes() : 8; }

static Target x86(const std::string &name, bool avx512, bool vnni = false) {
  Target t;
  t.name = name;
  t.triple = "x86_64-pc-linux-gnu";
  t.arch = TINYRT_ARCH_X86_64;
  t.isa = TINYRT_ISA_X86_AVX2 | TINYRT_ISA_X86_FMA | TINYRT_ISA_X86_F16C | TINYRT_ISA_X86_BMI1 | TINYRT_ISA_X86_BMI2 | TINYRT_ISA_X86_POPCNT;
  t.cpu = avx512 ? "skylake-avx512" : "haswell";
  t.features = "+avx2,+fma,+f16c,+bmi,+bmi2,+popcnt";
  if (avx512) {
    t.features += ",+avx512f,+avx512bw,+avx512vl,+avx512dq,-prefer-256-bit";
    t.isa |= TINYRT_ISA_X86_AVX512F | TINYRT_ISA_X86_AVX512BW | TINYRT_ISA_X86_AVX512VL |
             TINYRT_ISA_X86_AVX512DQ;
  }
  if (vnni) {  // Cascade Lake, Ice Lake, Zen 4 and later
    t.cpu = "cascadelake";
    t.features += ",+avx512vnni";
    t.isa |= TINYRT_ISA_X86_AVX512VNNI;
    t.dot_i8 = DotI8::X86Vnni;
  }
  t.vector_bytes = avx512 ? 64 : 32;
  t.vector_regs = avx512 ? 32 : 16;
  // Accumulators + a weight vector per column + a broadcast fit the
  // registers: mr * nv + nv + 1 <= 32. Narrow rows (7 and 14 pixels) take
  // 7x3: resnet18's layer4 convs 1.57 -> 1.48 ms. 14x2 (31 registers) was
  // slower than 12x2 on 56-pixel rows; 9x3, 6x4 and 5x4 lost on
  // mobilenet_v2 (4.9 -> 5.1-5.3 ms). AVX2 (16 registers) keeps 6x2, not
  // measured on an AVX2-only CPU.
  if (avx512) t.gemm_tiles = {{12, 2}, {7, 3}, {12, 1}};
  else t.gemm_tiles = {{6, 2}, {6, 1}};
  // AVX-512 cells where a measured tile beats the model's choice by 3% or
  // more over at least 1 ms of GEMM time (dense_autoencoder's Gemm layers
  // 0.83-0.87 of the model, efficientnet_b0 and mobilenet_v2 about 0.98
  // with the table, bench/ab.sh): every GEMM layer of 15 models
  // (Winograd off) run with each of 10 tiles against the model's choice,
  // alternated in one process (bench/ab_bench.c --steps; bench/RESULTS.md).
  constexpr int64_t kAny = INT64_MAX;
  if (avx512)
    t.gemm_tile_table = {
        {3, false, 16, 64, 64, kAny, 4, 4},  // RGB first layers, long rows: 0.919
        {4, false, 0, 16, 16, 64, 14, 2},    // few channels, rows of 17-64: 0.926
        {4, false, 64, kAny, 4, 16, 8, 3},   // many channels, rows of 5-16 (7x7, 14x14): 0.967
        {4, true, 64, kAny, 0, 4, 6, 4},     // 1x1 over 1-4 pixels: 0.862
    };
  // Not in the table: 4x4 on 1x1 layers of more than 64 channels and rows
  // of more than 64 pixels measured 0.954 in its cell, but 1.05 on
  // v_kws_wide's 96-channel layers (4x4 covers 96 channels with 128, 12x2
  // with 96): a cell of channel ranges cannot tell those apart.
  t.gemm_unroll = 4;
  t.gemm_broadcast_cost = 0;  // vfmadd231ps takes the broadcast from memory
  t.masked_tail = true;
  t.cc = "gcc";
  return t;
}

Target resolve_target(const std::string &name) {
  if (name == "host") {
#if defined(__x86_64__)
    // The host's features, asked once per process (cpuid is a VM exit on
    // virtual machines; the fuzzers resolve the target per input).
    static const std::pair<bool, bool> host = [] {
      llvm::StringMap<bool> f;
      llvm::sys::getHostCPUFeatures(f);
      bool avx512 = f.lookup("avx512f") && f.lookup("avx512bw") && f.lookup("avx512vl") && f.lookup("avx512dq");
      return std::make_pair(avx512, avx512 && f.lookup("avx512vnni"));
    }();
    auto [avx512, vnni] = host;
    return x86(vnni ? "x86-64-avx512-vnni" : avx512 ? "x86-64-avx512" : "x86-64-avx2", avx512, vnni);
#else
    fail_usage("--target host is only implemented on x86-64 hosts; name the target");
#endif
  }
  if (name == "x86-64-avx2") return x86(name, false);
  if (name == "x86-64-avx512") return x86(name, true);
  if (name == "x86-64-avx512-vnni") return x86(name, true, true);
  if (name == "armv7-neon") {
    Target t;
    t.name = name;
    t.triple = "armv7a-unknown-linux-gnueabihf";
    t.cpu = "cortex-a7";
    // -slowfpvmlx: vmla.f32 by scalar for the GEMM's lane products (LLVM
    // splits it into vmul + vadd for Cortex-A7 otherwise; the results are
    // the same, two roundings either way).
    t.features = "+neon,+vfp4,+fp16,+thumb2,-slowfpvmlx";
    t.arch = TINYRT_ARCH_ARMV7;
    t.isa = TINYRT_ISA_ARM_NEON | TINYRT_ISA_ARM_VFPV4;
    t.vector_bytes = 16;
    t.vector_regs = 16;
    t.vector_imm_offsets = false;
    // Pixel-major GEMM tasks only where each does >= 32k multiply-adds:
    // with 8 blocks for every layer, resnet8_cifar took 3.2% more
    // instructions (3.28 -> 3.38 M) and unet_small 2.9% (22.06 -> 22.71 M).
    t.pixel_split_min_macs = 32768;
    // Models whose steps average below about 8 us of a Cortex-A72 core
    // (x86 measured its break-even near 4 us) run on the caller. Not
    // measured: qemu-user runs a guest's threads one at a time, and no ARM
    // board is at hand.
    t.serial_step_ops = 100000;
    // Executed instructions (qemu), with the lane products (vmla by
    // scalar): 3x2 beats 4x2 (which spills), 2x4, 6x1, 2x2, 4x1 and 3x3 on
    // resnet8_cifar (6.30 M vs 7.05 / 6.62 / 6.73 / 6.85 / 6.84 / 9.10 M)
    // and squeezenet1_1 (132.9 M vs 146.1 M with 4x2). Before the lane
    // products 4x2 was best (resnet8_cifar 8.06 M, squeezenet1_1 166.7 M).
    t.gemm_tiles = {{3, 2}, {4, 1}};
    // Where a measured tile beats that choice by 3% or more over the zoo's
    // layers of a shape class (bench/tune_tiles.py, 640 GEMM layers of 12
    // models x 10 tiles): long linear rows take 7x1 (7 pixels, one load of 4
    // channels each, per weight vector), rows of at most 4 pixels 2x4, and
    // first layers with 1-3 input channels tiles of their own. GEMM
    // instructions, the formula's choice -> this table (-> fitted without
    // the model): resnet8_cifar 0.888 (0.912), shufflenet_v2_x0_5 0.847
    // (0.946), unet_small 0.872 (0.872), mobilenet_v3_small 0.945 (1.044),
    // squeezenet1_1 0.892 (0.943), googlenet 0.968 (1.063).
    constexpr int64_t kAny = INT64_MAX;
    t.gemm_tile_table = {
        {1, false, 16, 64, 4, 16, 5, 1},   {1, false, 16, 64, 64, kAny, 2, 4},
        {3, false, 0, 16, 16, 64, 2, 2},   {3, false, 0, 16, 64, kAny, 4, 1},
        {3, false, 16, 64, 64, kAny, 2, 2}, {4, false, 16, 64, 64, kAny, 7, 1},
        {4, true, 0, 16, 0, 4, 2, 4},      {4, true, 0, 16, 16, 64, 7, 1},
        {4, true, 0, 16, 64, kAny, 7, 1},  {4, true, 16, 64, 0, 4, 2, 4},
        {4, true, 16, 64, 16, 64, 7, 1},   {4, true, 16, 64, 64, kAny, 7, 1},
        {4, true, 64, kAny, 0, 4, 2, 4},   {4, true, 64, kAny, 4, 16, 6, 1},
        {4, true, 64, kAny, 16, 64, 7, 1}, {4, true, 64, kAny, 64, kAny, 7, 1},
    };
    t.gemm_unroll = 2;
    t.gemm_lane_mac = Target::LaneMac::Unfused;
    t.hard_float = true;
    t.ptr_bytes = 4;
    t.cc = "arm-linux-gnueabihf-gcc";
    t.emulator = {"qemu-arm", "-L", "/usr/arm-linux-gnueabihf", "-cpu", "cortex-a15"};
    t.dot_i8 = DotI8::NeonPairs;
    return t;
  }
  if (name == "aarch64-neon" || name == "aarch64-neon-dot") {
    bool dot = name == "aarch64-neon-dot";  // Armv8.2 dot product (Cortex-A55/A76, Raspberry Pi 5)
    Target t;
    t.name = name;
    t.triple = "aarch64-unknown-linux-gnu";
    t.cpu = dot ? "cortex-a76" : "cortex-a72";  // the Pi 5's and the Pi 4's cores
    t.features = dot ? "+neon,+fp-armv8,+dotprod" : "+neon,+fp-armv8";
    t.arch = TINYRT_ARCH_AARCH64;
    t.isa = TINYRT_ISA_A64_ASIMD;
    t.vector_bytes = 16;
    t.vector_regs = 32;
    // As ARMv7 (resnet8_cifar 2.31 -> 2.36 M, unet_small 16.63 -> 16.90 M
    // with 8 pixel blocks for every layer).
    t.pixel_split_min_macs = 32768;
    t.serial_step_ops = 100000;  // as ARMv7
    // Executed instructions (qemu), with the lane products (fmla by
    // element on 4 channels per load): 5x4 beats 6x4, 4x4, 8x2 and 6x3 on
    // resnet8_cifar (4.25 M vs 4.99 / 4.38 / 4.52 / 4.79 M) and squeezenet1_1
    // (91.9 M vs 99.3 M with 6x4). Before them (one ld1r per channel) 6x4
    // was best: resnet8_cifar 4.88 M, squeezenet1_1 101.1 M.
    // No gemm_tile_table: bench/tune_tiles.py --target aarch64-neon
    // (12 models x 10 tiles x Winograd off/auto, 2026-11-25) finds no shape
    // cell where another tile saves 3% against this choice; the best tile of
    // every layer would save at most 4.5% of a model's GEMM instructions
    // (squeezenet1_1 0.955, googlenet 0.960), and tables fitted without a
    // model made unet_small, mobilenet_v2 and efficientnet_b0 0.9-1.3% worse.
    t.gemm_tiles = {{5, 4}, {6, 3}, {6, 2}, {6, 1}};
    t.gemm_unroll = 2;
    t.gemm_lane_mac = Target::LaneMac::Fused;
    t.cc = "aarch64-linux-gnu-gcc";
    t.emulator = {"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu", t.cpu};
    t.dot_i8 = DotI8::NeonPairs;
    // int8 pair products: a pixel's 16 input bytes are loaded and flipped
    // once per 4 quads, then each pair is a 16-bit lane broadcast; 16-bit
    // products live beside the accumulators. Executed instructions (qemu),
    // forcing one tile for all layers, squeezenet1_1 / mobilenet_v2 QDQ:
    // 3x4 118.0 M / 125.7 M, 4x4 118.2 / 127.2, 3x5 119.4 / 125.8, 2x6
    // 120.5 / 127.3, 4x3 122.8 / 128.3, 5x3 123.3 / 130.8.
    t.qgemm_tiles = {{3, 4}, {3, 5}, {3, 2}, {3, 1}};
    if (dot) {
      // One sdot per 16 products, by element: a pixel's 16 input bytes
      // feed 4 of them, so the tile keeps mr input vectors beside mr x nv
      // accumulators and nv weights. Executed instructions (qemu
      // cortex-a76), one tile forced for all layers, squeezenet1_1 /
      // resnet18 QDQ: 5x4 50.8 M / 173 M, 4x4 52.3 / 177, 6x3 54.0 / 189,
      // 6x4 58.7 (spills).
      t.isa |= TINYRT_ISA_A64_DOTPROD;
      t.dot_i8 = DotI8::NeonSdot;
      t.qgemm_tiles = {{5, 4}, {4, 4}, {5, 2}, {5, 1}};
    }
    return t;
  }
  std::string all;
  for (auto &n : target_names()) all += " " + n;
  fail_usage("unknown target '" + name + "'; known:" + all);
}

std::vector<std::string> target_names() {
  return {"host", "x86-64-avx2", "x86-64-avx512", "x86-64-avx512-vnni", "armv7-neon", "aarch64-neon", "aarch64-neon-dot"};
}

}  // namespace tinyrt
