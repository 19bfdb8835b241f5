// x86_64.cpp — the x86-64 targets' data: AVX2 + FMA (the baseline), AVX2
// with int8 dot products (AVX-VNNI's VEX form, or AVX-512 VNNI's EVEX form
// at 256 bits), and AVX-512 with and without VNNI. The float tile table was measured with
// bench/ab_bench.c --steps (bench/RESULTS.md, "GEMM tiles on AVX-512").
#include <cstdint>

#include "target/targets.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

Target x86_64_target(const std::string &name, bool avx512, X86Vnni vnni) {
  Target t;
  t.name = name;
  t.triple = "x86_64-pc-linux-gnu";
  t.arch = TINYRT_ARCH_X86_64;
  t.isa = TINYRT_ISA_X86_AVX2 | TINYRT_ISA_X86_FMA | TINYRT_ISA_X86_F16C | TINYRT_ISA_X86_BMI1 | TINYRT_ISA_X86_BMI2 |
          TINYRT_ISA_X86_POPCNT;
  t.cpu = avx512 ? "skylake-avx512" : "haswell";
  t.features = "+avx2,+fma,+f16c,+bmi,+bmi2,+popcnt";
  if (avx512) {
    t.features += ",+avx512f,+avx512bw,+avx512vl,+avx512dq,-prefer-256-bit";
    t.isa |= TINYRT_ISA_X86_AVX512F | TINYRT_ISA_X86_AVX512BW | TINYRT_ISA_X86_AVX512VL | TINYRT_ISA_X86_AVX512DQ;
  }
  if (vnni == X86Vnni::Evex && avx512) {  // Cascade Lake, Ice Lake, Zen 4 and later
    t.cpu = "cascadelake";
    t.features += ",+avx512vnni";
    t.isa |= TINYRT_ISA_X86_AVX512VNNI;
  }
  // 256-bit code with vpdpbusd: AVX-VNNI's VEX form (Alder Lake and its
  // N100-class parts, Zen 5), or, on AVX-512 VNNI machines, its EVEX
  // form on ymm registers (the same kernels and tiles: that is how they
  // run where AVX-VNNI is missing, Zen 4 and the Xeons before Sapphire
  // Rapids; LLVM picks the encoding from the features).
  // (The CPU model stays haswell's: scheduled as x86-64-avx2 and -256, and
  // no feature beyond the ones listed and checked at init.)
  if (vnni == X86Vnni::Vex) {
    t.features += ",+avxvnni";
    t.isa |= TINYRT_ISA_X86_AVXVNNI;
  }
  if (vnni == X86Vnni::Evex && !avx512) {
    t.features += ",+avx512vnni,+avx512vl,+prefer-256-bit";
    t.legal_vector_bits = 256;
    t.isa |= TINYRT_ISA_X86_AVX512F | TINYRT_ISA_X86_AVX512VL | TINYRT_ISA_X86_AVX512VNNI;
  }
  if (vnni != X86Vnni::None) t.dot_i8 = DotI8::X86Vnni;
  t.mask_registers = (t.isa & TINYRT_ISA_X86_AVX512F) != 0;
  t.vector_bytes = avx512 ? 64 : 32;
  // zmm input broadcasts of kernels with half weights as vpbroadcastd
  // (codegen/integer_broadcasts.h; bench/broadcast_pipes.c). Zen 4,
  // --weights fp16 over fp32, bench/ab.sh: with vbroadcastss (the
  // twenty-seventh session, 5 rounds of 10 runs) kws_dscnn 1.071,
  // audio_conv1d 1.107, vad_stft 1.097, resnet8_cifar 1.081,
  // transformer_encoder 1.066, sr_switch 1.061; with vpbroadcastd (5
  // rounds of 20) 0.990, 0.993, 0.994, 0.910, 0.991, 0.979 (bench/RESULTS.md,
  // twenty-eighth session).
  t.integer_broadcasts = avx512;
  t.vector_regs = avx512 ? 32 : 16;
  // Accumulators + a weight vector per column + a broadcast fit the
  // registers: mr * nv + nv + 1 <= 32. Narrow rows (7 and 14 pixels) take
  // 7x3: resnet18's layer4 convs 1.57 -> 1.48 ms. 14x2 (31 registers) was
  // slower than 12x2 on 56-pixel rows; 9x3, 6x4 and 5x4 lost on
  // mobilenet_v2 (4.9 -> 5.1-5.3 ms). AVX2 (16 registers): 6x2, and 4x2
  // for short rows, which 6x2 covers with a tail tile of few accumulators
  // (FMA latency-bound): rows of 7 and 8 (gemm_tile's score picks it there)
  // as 4 + 3 and 4 + 4 instead of 6 + 1 and 6 + 2; and 4x3 where three
  // vectors fit the channels (24, 72, 120: 6x2 computes 24 as 32) or one
  // pixel leaves 6x2 two independent sums (a matrix-vector product). Zen 4,
  // x86-64-avx2 code, 1 thread, ab_bench over 9 alternated rounds against
  // the list without it: shufflenet_v2_x0_5 0.968 (its 24-channel layers
  // 0.89-0.90, the 1000-class GEMV 0.85), dense_autoencoder 0.857,
  // mobilenet_v2 0.977, mobilenet_v3_small 0.988, googlenet 0.993,
  // efficientnet_b0 0.994, resnet18 0.999. Intel Emerald Rapids
  // (family 6 model 207), x86-64-avx2 code, 1 thread, ab_bench over 5
  // alternated rounds, one 3x3 convolution over 7x7 pixels
  // (bench/conv_layer.py), 4x2 against 6x2: 128 channels 0.911, 256 0.919,
  // 512 0.897 (where 4x3's padding is over the weights budget).
  // Tiles across output rows (span_rows) on AVX2, whose 6x2 ends rows of
  // 7 and 14 pixels in tiles of few accumulators; AVX-512's 7x3 fits
  // those rows, and spanned its 16-32-channel layers lost more (Emerald
  // Rapids, --winograd off, bench/ab.sh against row tiles: unet_small
  // 1.053, resnet8_cifar 1.019, resnet18 1.002). AVX2 view of the same
  // core: resnet18 0.955, googlenet 0.975, efficientnet_b0 0.952 with the
  // prefetch below (bench/RESULTS.md, thirty-first session). The prefetch
  // of the next panel's weights on both: AVX-512 defaults, 1 thread,
  // squeezenet1_1 0.934, efficientnet_b0 0.942, mobilenet_v2 0.961,
  // googlenet 0.963, resnet18 0.982; not for layers under 512 KB (vad_stft's
  // 643 KB STFT layer, cached in its small model, lost 2 % before the
  // model's 4 MB bound).
  if (!avx512) t.span_min_ic = 32;
  t.prefetch_panel_layer_bytes = 512 * 1024;
  t.winograd_plane_pad = true;
  t.prefetch_panel_model_bytes = 4 * 1024 * 1024;
  if (avx512)
    t.gemm_tiles = {{12, 2}, {7, 3}, {12, 1}};
  else
    t.gemm_tiles = {{6, 2}, {6, 1}, {4, 2}, {4, 3}};
  // int8 without VNNI (DotI8::X86Madd): each accumulator is two registers
  // of partial sums, and a step per quad of inputs takes mr widened input
  // broadcasts, 2 * nv widened weight registers and 4 * mr * nv
  // multiply-adds and adds. AVX2, 1 thread, Zen 3 (EPYC, family 25),
  // ab_bench over 6 alternated rounds: 2x2 against 4x1 and 1x4: resnet18
  // int8 (bench/make_qdq.py) 42.4 / 46.7 / 43.1 ms, mobilenet_v3_small
  // 2.66 / 2.93 / 2.80 ms, squeezenet1_1 8.51 / 9.64 / 8.88 ms; 6x2 (the
  // float tile, 24 accumulator registers) 52.7 ms on resnet18. AVX-512
  // without VNNI (32 registers, not measured): 4x2, 20 registers.
  if (vnni == X86Vnni::None)
    t.qgemm_tiles =
        avx512 ? std::vector<std::pair<int, int>>{{4, 2}, {4, 1}} : std::vector<std::pair<int, int>>{{2, 2}, {2, 1}};
  // int8 layers multiplied as bytes (GemmSpec::byte_pairs): one register
  // per accumulator, the weights read by vpmaddubsw from memory, a register
  // of 16-bit ones. AVX2, Zen 3, ab_bench over 5 alternated rounds, 7-bit
  // weights (bench/make_qdq.py --reduce-range), against 2x2: 4x2 0.895
  // (resnet18, 21.7 ms), 0.996 (mobilenet_v3_small), 0.973 (squeezenet1_1);
  // 3x2 0.894 / 0.941 / 0.988; 6x2 0.895 / 1.28 / 0.945; 6x1 0.960 / 0.919
  // / 0.869. (AVX-512 without VNNI: qgemm_tiles, not measured.)
  if (vnni == X86Vnni::None && !avx512) t.qgemm_byte_tiles = {{4, 2}, {4, 1}};
  // Signed bytes: each row's input quad costs as much as a product register
  // (vmovd, vpxor, vpbroadcastd, vpabsb against vpsignb, vpmaddubsw,
  // vpmaddwd, vpaddd), so wide tiles pay: 1x8 does 36 vector instructions
  // per 256 products where 4x2 does 48. AVX2 code on Zen 4 (EPYC, family 25
  // model 17), 1 thread, ab_bench over 5 alternated rounds, every int8 GEMM
  // forced to the tile (--gemm-tile), against 4x2: squeezenet1_1 2x4 0.905,
  // 1x8 0.872, 2x5 0.887, 1x6 0.889, 3x3 0.938; mobilenet_v3_small 0.980 /
  // 0.958 / 0.966 / 0.974 / 0.994; efficientnet_b0 0.945 / 0.929 / 0.963 /
  // 0.947 / 0.964 (bench/make_qdq.py models, weights in [-127, 127]).
  // Layers of fewer channels take 2x4 and 4x2 by the score.
  if (vnni == X86Vnni::None && !avx512) {
    t.qgemm_signed_tiles = {{1, 8}, {2, 4}, {4, 2}, {4, 1}};
    t.qgemm_signed_costs = {1.0, 0.25};
  }
  // int8 convolutions whose weights are not byte pairs: int16 pairs over a
  // widened copy of the input (passes/widen_int8_inputs.cpp) from this
  // many output channels. AVX2 on Zen 4, ab_bench over 5 alternated
  // rounds against 32: 16 mobilenet_v3_small 0.993, efficientnet_b0 0.999,
  // squeezenet1_1 1.002; 64 1.021 / 1.006 / 1.019.
  if (vnni == X86Vnni::None) t.int16_inputs_min_out_c = 16;
  // Their int8 weights as an int16 copy over many pixel tiles: AVX2 code
  // on Zen 4, ab_bench, 10 alternated rounds against no copies, int8
  // mobilenet_v2 from 8 tiles 0.987, 32 0.982, 128 0.992; from 32,
  // shufflenet_v2_x0_5 0.990-0.991, efficientnet_b0 0.980-0.999,
  // squeezenet1_1 0.995-1.017 (llvm-mca: 0.82x the 1x1 loop's cycles on
  // znver3, 0.78x on skylake, 1.00 on znver1/2 and haswell). AVX-512
  // without VNNI (its 12x2 tiles, natively): 1.003-1.006 on mobilenet_v2,
  // squeezenet1_1, efficientnet_b0, so not there.
  if (vnni == X86Vnni::None && !avx512) t.int16_weight_copy_min_tiles = 32;
  // First layers (k_run), AVX2 on Zen 4, the convolution's step and its
  // padded copy's (ab_bench --steps, 5 rounds), int16 pairs / signed bytes:
  // mobilenet_v3_small's 16 channels 0.88 and +0.011 ms of copy (the
  // model 1.006), efficientnet_b0's 32 1.05 (0.998 with the copy at
  // 1.30), resnet18's 64 (7x7) 0.93 with +0.005 ms of copy.
  if (vnni == X86Vnni::None) t.int16_run_min_out_c = 64;
  // Narrower first layers compute exactly in float (float_run_max_out_c),
  // AVX2 on Zen 4, ab_bench --steps over 5 rounds, the convolution's step
  // and its padded copy's against signed bytes: mobilenet_v3_small's 16
  // channels 0.79 and +0.008 ms of copy (the model 0.981), mobilenet_v2's
  // and efficientnet_b0's 32 0.87 and 0.86-0.90 (0.993, 0.999); against
  // int16 pairs at 64, squeezenet1_1's 3x3 0.91, resnet18's 7x7 1.02.
  // (AVX-512 without VNNI, whose first layers take widened products, not
  // measured: unchanged.)
  if (vnni == X86Vnni::None && !avx512) t.float_run_max_out_c = 32;
  // Their weights widen into a register each (vpmovsxbw): on AVX2's 16
  // registers 4x3 spills (12 accumulators, 3 weights, the input pair and
  // the widening's), so its tiles keep to two weight vectors; AVX-512's 32
  // hold the int16 pairs' tiles.
  if (vnni == X86Vnni::None && !avx512) t.qgemm_w8_tiles = {{6, 2}, {4, 2}, {6, 1}};
  // int16 pairs (int8 Winograd's grouped GEMM, vpmaddwd on weights read
  // from memory, one register per accumulator): AVX2 view of an Emerald
  // Rapids core, resnet18 int8 with F(2,3) forced (every 3x3 stride-1
  // layer), the sum of its 16 Winograd GEMM steps (tinyrt-perf --profile,
  // --gemm-tile): 4x2 (the byte tiles') 19.9 ms, 6x2 17.7, 4x3 18.3, 3x4
  // 19.8, 5x2 20.2, 8x1 21.8.
  // AVX-512 without VNNI, natively, the same sum: 4x2 (qgemm_tiles') 13.9,
  // 6x2 13.6, 8x2 10.3, 12x2 10.1, 8x3 11.6, 6x4 12.6, 4x4 12.9.
  if (vnni == X86Vnni::None) {
    if (avx512)
      t.qgemm_i16_tiles = {{12, 2}, {8, 2}, {12, 1}};
    else
      t.qgemm_i16_tiles = {{6, 2}, {4, 3}, {6, 1}};
  }
  // vpdpbusd on ymm (16 registers) reads its weights from memory: 4x3
  // holds 12 accumulators and the broadcast input. Zen 4 (EPYC, family 25
  // model 17), x86-64-avx512-vnni-256, 1 thread, ab_bench over 5
  // alternated rounds, against the float tiles' 6x2: 4x3 resnet18 int8
  // 0.881, mobilenet_v3_small 1.007, efficientnet_b0 0.973; 3x4 0.864 /
  // 1.020 / 0.994; 5x2 0.932 / 1.008 / 0.987; 7x1 1.003 / 1.107 / 1.026.
  // This table against 6x2 everywhere: resnet18 0.849, mobilenet_v3_small
  // 0.997, efficientnet_b0 1.001, squeezenet1_1 0.978.
  if (vnni != X86Vnni::None && !avx512) t.qgemm_tiles = {{4, 3}, {6, 2}, {6, 1}};
  // Int8 GEMM steps over float ones (the target's own float GEMM, direct),
  // time on Zen 4 (EPYC, family 25 model 17), 1 thread, best of 3 rounds,
  // bench/int8_over_float.py TARGET (resnet18, squeezenet1_1,
  // mobilenet_v3_small, efficientnet_b0): x86-64-avx2 (AVX2 code on Zen 4;
  // no AVX2-only machine at hand) widened 0.835, bytes 0.504, signed bytes
  // 0.882 (per model 0.69-1.08: squeezenet1_1's over 1); x86-64-avx512
  // widened 0.721, bytes 0.500; vpdpbusd on ymm (x86-64-avx512-vnni-256,
  // for x86-64-avx2-vnni) 0.296, on zmm 0.266.
  // Depthwise (every x86 target: inputs widened to float, the same code
  // with or without VNNI): bench/int8_over_float.py x86-64-avx2 (and
  // x86-64-avx512-vnni) mobilenet_v3_small mobilenet_v2 shufflenet_v2_x0_5
  // --depthwise --rounds 3, AVX2 / AVX-512 code on Zen 4 (2026-12-05):
  // 1.218 / 1.105 (per model 1.15-1.87 / 1.06-1.33; efficientnet_b0's, whose
  // float steps compute SiLU in their epilogue, 0.55 / 0.62); AVX2 1.116
  // (1.05-1.75) with the tiles below (the same day, 3 rounds).
  // int8 depthwise tiles on 16 registers: the kernel's window row of
  // widened inputs need not all be live (LLVM streams them into the
  // taps), so more pixels than the register count allows (5 for 5x5, 6
  // for 3x3, 4 at stride 2) pay. AVX2 on Zen 4, ab_bench --steps, 7
  // alternated rounds, each step against the register rule's tile, over
  // mobilenet_v3_small, mobilenet_v2 and efficientnet_b0 int8 (bench/
  // make_qdq.py): stride 1 at 7 pixels 0.70-0.99 (5x5 0.70-0.94), at 8
  // 0.71-0.99 but 2.04 on one 3x3 layer (88 channels, 28x28); stride 2
  // at 6 pixels 0.91-0.97, at 7 or 8 up to 1.33; a 7-pixel row at 6 as 6
  // + 1 1.09, hence tiles of equal sizes.
  if (!avx512) {
    t.depthwise_int8_mr[0] = 7;
    t.depthwise_int8_mr[1] = 6;
  }
  t.depthwise_int8_over_float = avx512 ? 1.105 : 1.116;
  if (vnni == X86Vnni::None) {
    t.int8_over_float[(int)MaddForm::Widened] = avx512 ? 0.721 : 0.835;
    t.int8_over_float[(int)MaddForm::Bytes] = avx512 ? 0.500 : 0.504;
    t.int8_over_float[(int)MaddForm::SignedBytes] = avx512 ? 0 : 0.882;  // (AVX-512 has no vpsignb)
  } else {
    t.int8_over_float[0] = avx512 ? 0.266 : 0.296;
  }
  // int8 Winograd F(2,3)'s grouped GEMM over int16 (vpmaddwd: two products
  // per 32-bit lane, then an add) per product over the float GEMM's FMA
  // (passes/winograd.cpp). Without VNNI; with it the direct int8 GEMM's
  // vpdpbusd (four products a lane) leaves Winograd little to gain.
  if (vnni == X86Vnni::None) t.i16_over_float = 0.6;
  // AVX-512 cells where a measured tile beats the model's choice by 3% or
  // more over at least 1 ms of GEMM time (dense_autoencoder's Gemm layers
  // 0.83-0.87 of the model, efficientnet_b0 and mobilenet_v2 about 0.98
  // with the table, bench/ab.sh): every GEMM layer of 15 models
  // (Winograd off) run with each of 10 tiles against the model's choice,
  // alternated in one process (bench/ab_bench.c --steps; bench/RESULTS.md).
  constexpr int64_t kAny = INT64_MAX;
  // AVX2, Zen 3 (EPYC, family 25), 1 thread, ab_bench --steps over 5-6
  // alternated rounds, --winograd off, against 6x2: 3x3 convs over rows of
  // 7 pixels take 0.82-0.85 of its time with 4x3 (resnet18's layer4;
  // googlenet's: 5x2 1.10-1.15 of 4x3's), over rows of 14 0.93-0.95 with
  // 4x3 or 5x2 (googlenet's inception 4: 5x2 0.91-0.95 of 4x3's); rows of
  // 28 and 56 keep 6x2 (4x3 0.99-1.02, 5x2 1.02-1.08); RGB first layers
  // 0.87 (googlenet) and 0.94 (resnet18) with 5x2.
  if (!avx512)
    t.gemm_tile_table = {
        {3, false, 0, kAny, 64, kAny, 5, 2},  // RGB first layers, long rows
        {4, false, 64, kAny, 4, 8, 4, 3},     // many channels, rows of 5-8 (7x7)
        {4, false, 64, kAny, 8, 16, 5, 2},    // many channels, rows of 9-16 (14x14)
    };
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
  return t;
}

}  // namespace tinyrt
