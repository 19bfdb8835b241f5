// armv7.cpp — the ARMv7 NEON target's data (32-bit Raspberry Pi OS,
// Cortex-A7/A53/A72 cores in AArch32). Tiles counted in executed
// instructions under qemu-arm -cpu cortex-a15; the table is fitted by
// bench/tune_tiles.py --target armv7-neon.
#include <cstdint>

#include "target/targets.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

Target armv7_target(const std::string &name) {
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
  // 16 q registers: a depthwise tile of 8 pixels (8 accumulators, the
  // window row's inputs and the tap weights) spilled vectors to the stack.
  // Executed instructions of every depthwise step of efficientnet_b0,
  // mobilenet_v2, mobilenet_v3_small and shufflenet_v2_x0_5 at 3, 4, 5, 6
  // and 8 pixels (tinyrt-perf --target armv7-neon --profile, 2026-12-05,
  // with the opaque row pointers and looped math epilogues): 3x3 windows
  // least at 4 (mobilenet_v2's 30.2 M at 8 -> 18.1 M; 5 pixels 0.99-1.42x
  // of 4's per layer), 5x5 at 5 or 6 (5 pixels 0.71-0.85x of 4's on the
  // 14-wide stride-1 layers; 5 and 6 within 1 % summed).
  t.depthwise_mr_max[0] = 4;
  t.depthwise_mr_max[1] = 5;
  // A Sigmoid+Mul loop over 1x96x112x112: 59 -> 43 instructions a vector
  // (11 constants); LSTM and GRU cells 0.99 (18); a Log loop over 13
  // constants with more temporaries live spills them: 1.12x (vad_stft's
  // front end; the model 1.005).
  t.hoist_math_constants = true;
  t.loop_math_epilogues = true;
  t.half_widen_neon = true;
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
      {1, false, 16, 64, 4, 16, 5, 1},     {1, false, 16, 64, 64, kAny, 2, 4}, {3, false, 0, 16, 16, 64, 2, 2},
      {3, false, 0, 16, 64, kAny, 4, 1},   {3, false, 16, 64, 64, kAny, 2, 2}, {4, false, 16, 64, 64, kAny, 7, 1},
      {4, true, 0, 16, 0, 4, 2, 4},        {4, true, 0, 16, 16, 64, 7, 1},     {4, true, 0, 16, 64, kAny, 7, 1},
      {4, true, 16, 64, 0, 4, 2, 4},       {4, true, 16, 64, 16, 64, 7, 1},    {4, true, 16, 64, 64, kAny, 7, 1},
      {4, true, 64, kAny, 0, 4, 2, 4},     {4, true, 64, kAny, 4, 16, 6, 1},   {4, true, 64, kAny, 16, 64, 7, 1},
      {4, true, 64, kAny, 64, kAny, 7, 1},
  };
  t.gemm_unroll = 2;
  t.gemm_lane_mac = Target::LaneMac::Unfused;
  t.vector_minmax = Target::MinMax::Varying;
  t.hard_float = true;
  t.ptr_bytes = 4;
  t.dot_i8 = DotI8::NeonPairs;
  // Int8 pair products (16 q registers: accumulators, their 16-bit
  // products, the weight halves): executed instructions (qemu cortex-a15),
  // one tile forced for all layers, squeezenet1_1 / mobilenet_v3_small QDQ:
  // 2x2 180.1 M / 63.1 M, 2x3 185.5 / 63.6, 4x1 194.0 / 65.3, 3x2 (the
  // float tiles' first, which int8 took before) 198.6 / 65.2, 3x1 200.6 /
  // 65.6, 1x3 208.2 / 64.8, 2x4 222.2 / 66.1, 1x4 222.3 / 65.7. With 2x3
  // in the list the tile model took it for 24 of squeezenet1_1's 26 layers
  // (185.4 M); this list: 180.1 M / 63.1 M, efficientnet_b0 349.9 M
  // against 370.9 M with 3x2.
  t.qgemm_tiles = {{2, 2}, {4, 1}, {2, 1}};
  // Int8 GEMM steps over float ones, executed instructions (qemu
  // cortex-a15; bench/int8_over_float.py armv7-neon squeezenet1_1
  // mobilenet_v3_small efficientnet_b0), with the tiles above and the
  // quantizing stores rounding by the float adder (2026-12-05): 0.943 with
  // no weight of -128 (0.870-1.088 per model), 1.034 with one per layer
  // (0.961-1.172); before that rounding 1.037 and 1.129, with 3x2 tiles
  // 1.146 and 1.170. On ARMv7 the pair products (vmull.s8, vmlal.s8,
  // vpadal.s16 and the lane broadcasts) take about as many instructions as
  // float's vmla by scalar, so where a -128 makes them widen the compile
  // says so.
  t.int8_over_float[0] = 0.943;
  t.int8_over_float[1] = 1.034;
  // Depthwise steps (bench/int8_over_float.py armv7-neon
  // mobilenet_v3_small mobilenet_v2 shufflenet_v2_x0_5 --depthwise,
  // 2026-12-05): 1.932 (1.71-2.02 per model) with the quantizing stores
  // rounding by the float adder; 2.336 after the float kernel's tiles of
  // 4-5 pixels and row pointers (depthwise_mr_max above) and before that;
  // 1.556 before them, with vmlal.s16; 2.341 before that, when LLVM split
  // the widened multiply into vmovl and 32-bit vmla.
  t.depthwise_int8_over_float = 1.932;
  return t;
}

}  // namespace tinyrt
