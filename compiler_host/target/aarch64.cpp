// aarch64.cpp — the AArch64 NEON targets' data (64-bit Raspberry Pi OS:
// Cortex-A72 of the Pi 4, and with the Armv8.2 dot product the Cortex-A76
// of the Pi 5). Tiles counted in executed instructions under qemu-aarch64
// -cpu cortex-a72 / cortex-a76 (bench/tune_tiles.py --target aarch64-neon).
#include <cstdint>

#include "target/targets.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

Target aarch64_target(const std::string &name) {
  // Armv8.2 half-precision arithmetic (Cortex-A55/A76, Raspberry Pi 5):
  // --precision fp16 computes GEMMs in half.
  bool fp16 = name == "aarch64-neon-fp16";
  bool dot = fp16 || name == "aarch64-neon-dot";  // Armv8.2 dot product (Cortex-A55/A76, Raspberry Pi 5)
  Target t;
  t.name = name;
  t.triple = "aarch64-unknown-linux-gnu";
  t.cpu = dot ? "cortex-a76" : "cortex-a72";  // the Pi 5's and the Pi 4's cores
  t.features = fp16 ? "+neon,+fp-armv8,+dotprod,+fullfp16" : dot ? "+neon,+fp-armv8,+dotprod" : "+neon,+fp-armv8";
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
  t.vector_minmax = Target::MinMax::All;
  t.dot_i8 = DotI8::NeonPairs;
  // int8 pair products: a pixel's 16 input bytes are loaded and flipped
  // once per 4 quads, then each pair is a 16-bit lane broadcast; 16-bit
  // products live beside the accumulators. Executed instructions (qemu),
  // forcing one tile for all layers, squeezenet1_1 / mobilenet_v2 QDQ:
  // 3x4 118.0 M / 125.7 M, 4x4 118.2 / 127.2, 3x5 119.4 / 125.8, 2x6
  // 120.5 / 127.3, 4x3 122.8 / 128.3, 5x3 123.3 / 130.8.
  t.qgemm_tiles = {{3, 4}, {3, 5}, {3, 2}, {3, 1}};
  // Int8 GEMM steps over float ones, executed instructions (qemu
  // cortex-a72; bench/int8_over_float.py aarch64-neon squeezenet1_1
  // mobilenet_v3_small efficientnet_b0): 0.857 with no weight of -128
  // (0.765-1.006 per model), 1.010 with one per layer (0.904-1.169): the
  // pair products widen each product on their own.
  t.int8_over_float[0] = 0.857;
  t.int8_over_float[1] = 1.010;
  // Depthwise steps (bench/int8_over_float.py aarch64-neon
  // mobilenet_v3_small mobilenet_v2 shufflenet_v2_x0_5 --depthwise,
  // 2026-12-05): 1.097 (0.90-1.27 per model; the same code with sdot)
  // with smlal/smlal2; 1.342 before, when LLVM widened the inputs to 32
  // bits and multiplied with mla.
  t.depthwise_int8_over_float = 1.097;
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
    // sdot (qemu cortex-a76, the same models): 0.344 (0.329-0.484).
    t.int8_over_float[0] = 0.344;
    t.int8_over_float[1] = 0;
  }
  if (fp16) {
    t.isa |= TINYRT_ISA_A64_FP16;
    t.half_arith = true;
    t.hgemm_tiles = {{4, 4}, {6, 2}, {2, 8}, {4, 2}};
  }
  return t;
}

}  // namespace tinyrt
