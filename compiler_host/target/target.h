// target.h — a compilation target (neutral: passes and code generators both
// read it, so it lives outside codegen/): what the generated code depends
// on, the LLVM triple/CPU/features, vector width and register budget, tile
// tables, the runtime's arch and ISA bits. The values are data, one file
// per family (targets.h); the host programs that link and run a target's
// code are the driver's (driver/host_tools.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/madd_form.h"
#include "ir/task_split.h"

namespace tinyrt {

struct GemmTile {
  int mr;      // output pixels per register tile
  int nv;      // vectors of output channels per register tile
  int unroll;  // input channels per iteration of the inner loop
};

// How the int8 GEMM forms 4-element dot products into int32 lanes.
enum class DotI8 {
  X86Madd,    // vpmaddwd: X and the weights widened to 16 bits, products
              // summed in pairs into int32 (x86 without VNNI; exact)
  X86Vnni,    // vpdpbusd: u8 x s8, 4 products per int32 lane
  NeonPairs,  // s8 x s8 widening multiplies (smull/vmull.s8), two products
              // summed in 16 bits, pairwise add-accumulate into int32
              // (sadalp/vpadal.s16); weights packed as lane pairs
  NeonSdot,   // sdot (Armv8.2 dot product): s8 x s8, 4 products per lane
};

// Whether the dot product takes X's bytes as uint8 (+1), int8 (-1) or
// either (0): the emitter flips X (xor 0x80) when its type differs.
int dot_i8_x_sign(DotI8 d);

struct Target {
  std::string name;  // x86-64-avx2(-vnni), x86-64-avx512(-vnni, -vnni-256), armv7-neon, aarch64-neon(-dot, -fp16)
  std::string triple, cpu, features;
  uint32_t arch = 0;  // TINYRT_ARCH_*
  uint32_t isa = 0;   // TINYRT_ISA_* the code needs
  int vector_bytes = 16;
  int vector_regs = 16;
  bool hard_float = false;   // armhf calling convention
  bool masked_tail = false;  // cheap masked loads/stores for loop tails
  // Float Max and Min of vectors (NaN-propagating): compares and a select
  // (x86, whose maxps returns its second operand on NaN), or NEON's
  // fmax/fmin, vmax/vmin (llvm.maximum/minimum: one instruction) for two
  // varying operands, or for a constant one too (AArch64; on ARMv7 the
  // compare against a constant, which LLVM makes one vmax, counts fewer
  // instructions in GEMM epilogues: squeezenet1_1 under qemu).
  enum class MinMax { Select, Varying, All };
  MinMax vector_minmax = MinMax::Select;
  // Vector compares give mask registers (AVX-512's k): a float Max/Min
  // reduction's NaN flag (codegen/expr_emitter.cpp) is carried as bits
  // there, as 32-bit lanes elsewhere (AVX2's compares give vectors).
  bool mask_registers = false;
  // Vector loads and stores take a register plus an immediate offset
  // (x86-64, AArch64; ARMv7 NEON's vld1/vst1 take a register only, and
  // walk constant strides by post-increment instead).
  bool vector_imm_offsets = true;
  // The float depthwise kernel's pixels per tile at most (depthwise_tile)
  // where its tap weights do not stay in registers, for windows up to 3
  // wide and wider ones.
  int depthwise_mr_max[2] = {8, 8};
  // Math constants (polynomial coefficients, clamps) that the vector
  // instructions cannot take as immediates live in registers set once per
  // kernel (math_emitter.cpp, hoisted_constant) instead of being loaded
  // from the constant pool where they are used: ARMv7, where LLVM reloads
  // each one (adr + vld1) in every loop trip.
  bool hoist_math_constants = false;
  // A tile's epilogues that call math functions (sigmoid, exp, tanh, ...)
  // run one accumulator at a time in a rolled loop (looped_epilogue)
  // instead of all of them interleaved: with 16 vector registers the
  // interleaved chains spill.
  bool loop_math_epilogues = false;
  int ptr_bytes = 8;
  // > 0: every kernel function's LLVM "min-legal-vector-width", so that
  // with "prefer-256-bit" wider vector types are split rather than held
  // in zmm registers (x86-64-avx512-vnni-256: AVX-512 instructions on ymm
  // only, as x86-64-avx2-vnni's kernels).
  int legal_vector_bits = 0;
  // Float splats of a loaded scalar at 512 bits as `vpbroadcastd` from
  // memory, not `vbroadcastss` (codegen/integer_broadcasts.h: on Zen 4 the
  // latter takes a floating-point pipe that half weights' vcvtph2ps also
  // needs).
  bool integer_broadcasts = false;
  // Fewest multiply-adds per task for which a GEMM may order its tasks
  // pixel blocks outermost (gemm_emitter.cpp): that keeps each thread on
  // the pixels it wrote the step before, which pays where cores have their
  // own caches (x86: bench/ab.sh at 2 threads), while each extra task
  // costs its setup on one thread (ARM: counted under qemu).
  int64_t pixel_split_min_macs = 1024;
  // Run-time Winograd weights (passes/winograd.cpp): a plane of U that is a
  // multiple of 128 bytes is followed by 64 bytes, so that the transform's
  // a*a stores of one step (16 planes at a multiple of 4 KB apart) do not
  // all fall in one L1 set. x86: resnet18 int8's transforms 0.59-0.82x on
  // Zen 4 (bench/RESULTS.md); ARM: not measured on a core (qemu counts
  // show no cache), so not padded.
  bool winograd_plane_pad = false;
  // Whether a Winograd F(m,3) transform's a*a intermediate vectors (a =
  // m + 2) exceed the vector registers by more than half, so that it goes
  // in two passes through memory (rows into the transform buffer, then
  // columns read back) instead of spilling most of them (codegen/
  // winograd_emitter.cpp; measured under qemu: F(4,3)'s 36 vectors take
  // 1.9x fewer instructions through memory on ARMv7's 16 registers; on
  // AArch64's 32, spilling a few is cheaper).
  bool winograd_two_pass(int m) const { return 2 * (m + 2) * (m + 2) > 3 * vector_regs; }
  // A model whose layers do fewer arithmetic operations on average
  // (ir/program.h kernel_ops; a layer's steps counted once) runs each
  // step on the calling thread alone,
  // all its tasks in one call (codegen/module_emitter.cpp): handing a step
  // to other threads costs a wake-up and moves its data between the cores'
  // caches, more than so small steps gain. x86: measured at 2 threads on
  // 32 models (bench/RESULTS.md): about 4 us of one core per step.
  // A tuning file may measure it for the user's machine (tinyrt-tune
  // --threads N, N > 1: "serial_step_ops").
  int64_t serial_step_ops = 750000;
  // Register tiles (pixels x channel vectors) the GEMM emitter may use on
  // this target, and the input-channel unroll; gemm_tile picks one per
  // layer.
  std::vector<std::pair<int, int>> gemm_tiles;
  // The same for the int8 GEMM, when its register needs differ (empty:
  // gemm_tiles), and on x86 without VNNI for its layers multiplied as
  // bytes or signed bytes, one register per accumulator (MaddForm,
  // ir/madd_form.h; empty: qgemm_tiles).
  // int16 pairs (GemmSpec::i16, int8 Winograd's product): qgemm_i16_tiles
  // (empty: qgemm_byte_tiles). Signed bytes (MaddForm::SignedBytes):
  // qgemm_signed_tiles (empty: qgemm_byte_tiles), scored in units of one
  // product register's instructions (vpsignb, vpmaddubsw, vpmaddwd,
  // vpaddd): a row's input quad costs qgemm_signed_costs.first of them
  // (vmovd, vpxor, vpbroadcastd, vpabsb: 1), a weight vector's load
  // .second (1/4), so that wide tiles win where the channels fill them.
  // int16 pairs over int8 weights (GemmSpec::w8, widened as they load:
  // a register per weight vector): qgemm_w8_tiles (empty: qgemm_i16_tiles).
  std::vector<std::pair<int, int>> qgemm_tiles, qgemm_byte_tiles, qgemm_i16_tiles, qgemm_signed_tiles, qgemm_w8_tiles;
  std::pair<double, double> qgemm_signed_costs = {0, 1};
  // x86 without VNNI: int8 convolutions of at least this many output
  // channels whose weights are not byte pairs multiply int16 pairs over a
  // widened copy of their input (passes/widen_int8_inputs.cpp; 0: never).
  int64_t int16_inputs_min_out_c = 0;
  // Such int16 pairs' int8 weights are read from an int16 copy widened
  // once per run (passes/widen_packed_weights.cpp) in layers of at least
  // this many pixel tiles, where the arena budget has room (0: never).
  int64_t int16_weight_copy_min_tiles = 0;
  // Of them, a first layer over an image's few channels (k_run: each kernel
  // row one run of inputs) only from this many: its padded copy gains a
  // channel (RGB's 3 to 4, a third more products) and its short sums
  // leave the epilogue a large share.
  int64_t int16_run_min_out_c = 0;
  // x86 without VNNI: first layers (k_run) of at most this many output
  // channels compute their int8 products exactly in float over a float
  // padded copy (passes/widen_int8_inputs.cpp; 0: never).
  int64_t float_run_max_out_c = 0;
  // Measured float tiles (bench/tune_tiles.py: every GEMM layer of the
  // model zoo run with every candidate tile, executed instructions under
  // qemu summed per cell of a grid over output channels and row pixels,
  // apart for the linear mode and by input channels: 1, 2-3 or more, as
  // the lane products take 4 at a time): a layer in a rule's cell (its
  // input channel class, linear as the rule says, min_oc < output channels
  // per group <= max_oc, min_row < pixels per tiled row <= max_row) takes
  // its tile. Layers in no rule's cell, and targets without a table, are
  // scored by gemm_tile's model over gemm_tiles.
  struct TileRule {
    int ic_class;  // tile_ic_class
    bool linear;
    int64_t min_oc, max_oc, min_row, max_row;
    int mr, nv;
  };
  std::vector<TileRule> gemm_tile_table;
  int gemm_unroll = 4;
  // Float GEMMs over windows (not 1x1 stride 1) walk their pixels in order
  // across output rows (GemmSpec::span, passes/span_rows.cpp) when they
  // have at least span_min_ic input channels per group; 0: tiles follow
  // output rows.
  int64_t span_min_ic = 0;
  // A float GEMM's ic loop prefetches (into L2) the weights the next
  // output-channel tile will read, at the same place in its panel: the
  // first pixel tile over a panel then reads it from L2 instead of
  // streaming it from memory at the FMAs' pace (a deep layer's weights
  // outgrow the caches; between inferences every layer's are evicted).
  // For layers of several pixel tiles with at least
  // prefetch_panel_layer_bytes of weights (0: never) in models with at
  // least prefetch_panel_model_bytes: smaller ones stay cached between
  // runs (codegen/gemm_emitter.cpp).
  int64_t prefetch_panel_layer_bytes = 0, prefetch_panel_model_bytes = 0;
  // --gemm-tile (experiments, tinyrt-tune): every GEMM takes that one
  // tile; the weights budget does not narrow it (passes/weights_plan.cpp).
  bool tiles_forced = false;
  double gemm_broadcast_cost = 1;  // instructions per broadcast input (0: folded into the FMA)
  DotI8 dot_i8 = DotI8::X86Madd;
  // An int8 GEMM's time (x86) or executed instructions (ARM) over the
  // float GEMM's for the same layers (direct), measured on whole models'
  // GEMM steps (bench/int8_over_float.py), per product form: on x86
  // without VNNI indexed by MaddForm (widened, bytes, signed bytes); on
  // NEON without sdot [0] where no weight is -128 (two products summed in
  // 16 bits) and [1] where one is; dot products (vpdpbusd, sdot) [0]. 0:
  // not measured. Above 1 the compile says that the float model would run
  // those layers faster (-v, the JSON's int8_over_float). Where and how
  // each was measured: the target's file.
  double int8_over_float[3] = {0, 0, 0};
  double int8_time_over_float(MaddForm madd, bool pair16) const;
  // An int8 depthwise convolution's time (x86) or executed instructions
  // (ARM) over the float depthwise convolution's for the same layers,
  // measured on whole models' depthwise steps whose epilogues cost alike
  // (mobilenet_v3_small, mobilenet_v2, shufflenet_v2_x0_5:
  // bench/int8_over_float.py TARGET --depthwise). 0: not measured. Above 1
  // the compile says so, as for the GEMMs (-v, the JSON's int8_over_float).
  double depthwise_int8_over_float = 0;
  // The int8 depthwise kernel's pixels per tile at most, for stride 1
  // and for larger strides (0: as many as the registers hold the widened
  // window row, depthwise_tile_int8).
  int depthwise_int8_mr[2] = {0, 0};
  // An int8 Winograd convolution's grouped GEMM over int16 (GemmSpec::i16)
  // per product, over a float GEMM's (passes/winograd.cpp's cost model).
  // 0: the cost model never takes int8 Winograd (--winograd f2 still does).
  double i16_over_float = 0;
  // Float GEMM on NEON: a pixel's input channels are loaded 4 at a time as
  // one vector and multiplied by lane (AArch64: fmla by element, fused;
  // ARMv7: vmla by scalar, a multiply then an add, as ARMv7 NEON has no
  // fused form by scalar), instead of one broadcast load per channel.
  enum class LaneMac { None, Fused, Unfused };
  LaneMac gemm_lane_mac = LaneMac::None;
  // Half weights (--weights fp16) widened by NEON's vcvt.f32.f16 on 4
  // halves as 16-bit integers (ARMv7: LLVM widens a vector of half lane by
  // lane), else by a vector fpext (vcvtph2ps, fcvtl).
  bool half_widen_neon = false;
  // Half-precision arithmetic (Armv8.2 FP16: fmla .8h, 8 lanes a vector):
  // --precision fp16 computes the float GEMMs over half weights in half
  // (codegen/gemm_emitter.cpp), with these register tiles in place of
  // gemm_tiles (pixels x float channel vectors, an even count: a half
  // vector holds two). Each product sum runs in half for at most
  // half_chunk products, then adds into float accumulators.
  bool half_arith = false;
  std::vector<std::pair<int, int>> hgemm_tiles;
  int half_chunk = 32;
  // Float tiles have a multiple of this many channel vectors (2 under
  // --precision fp16: whole half vectors; the weights budget narrows
  // tiles no further).
  int tile_nv_step = 1;
  // --precision fp16 (half_arith targets): hgemm_tiles in place of the
  // float tiles and their table, whole half vectors only.
  void use_half_tiles() {
    gemm_tiles = hgemm_tiles;
    gemm_tile_table.clear();
    tile_nv_step = 2;
  }

  int f32_lanes() const { return vector_bytes / 4; }
  int half_lanes() const { return vector_bytes / 2; }
  // The register tile for `oc` output channels (per group) and output rows
  // of `row` pixels (`linear`: all pixels of a 1x1 stride-1 convolution as
  // one row) over `ic` input channels per group (ir/program.h,
  // gemm_tile_shape): from gemm_tile_table when a rule holds the layer;
  // otherwise the candidate with the most useful FMAs per inner-loop instruction
  // (lanes wasted on partial tiles count against it), with at least 8
  // accumulators to hide FMA latency; ties go to the earlier entry.
  // `score`, when given, receives that figure for the chosen tile
  // (passes/winograd.cpp compares forms of a convolution with it).
  // `max_nv` > 0: tiles of at most that many channel vectors only (the
  // weights budget narrows tiles that pad many channels: passes/
  // weights_plan.cpp), the best of them by the same rules.
  static int tile_ic_class(int64_t ic) { return ic >= 4 ? 4 : ic == 1 ? 1 : 3; }
  enum class TileKind { Float, Int8, Int8Bytes, Int16, Int8SignedBytes, Int16Bytes };
  // "float", "int8", "int8-bytes", "int16", "int8-signed-bytes", "int16-bytes": the kind's name in the JSON
  // report and
  // the tuning file; tile_kind_of returns false for another name.
  static const char *tile_kind_name(TileKind k);
  static bool tile_kind_of(const std::string &name, TileKind *k);
  // A GEMM's tile geometry: gemm_tile's arguments, by which a tuning file
  // keys what it measured (the JSON's gemm.tile_class).
  struct TileClass {
    TileKind kind;
    int64_t oc, row, ic;
    bool linear;
    bool operator==(const TileClass &o) const {
      return kind == o.kind && oc == o.oc && row == o.row && ic == o.ic && linear == o.linear;
    }
  };
  // Tiles measured on the user's machine (tinyrt-tune, --tuning FILE):
  // a layer of exactly this geometry takes this tile, before the table.
  struct TunedTile {
    TileClass at;
    int mr, nv;
  };
  std::vector<TunedTile> tuned_tiles;
  // Winograd forms measured on the user's machine (tinyrt-tune, --tuning
  // FILE): a float 3x3 stride-1 convolution of exactly this geometry
  // (input and output channels, output height and width, batch; fixed
  // sizes) costs ratio[i] of its direct form's time as F(2,3), F(4,3),
  // F(2,3)/rt and F(4,3)/rt (weights transformed at run time, in chunks of
  // 16 output channels): passes/winograd.cpp takes these in place of its
  // estimate of those ratios (0: not measured, the estimate stays).
  struct TunedWinograd {
    int64_t ic, oc, out_h, out_w, batch;
    double ratio[4];
  };
  std::vector<TunedWinograd> tuned_winograd;
  // Task splits measured on the user's machine (tinyrt-tune at more than
  // one thread, --tuning FILE): a GEMM of exactly this tile geometry takes
  // this split instead of the rule's.
  struct TunedSplit {
    TileClass at;
    TaskSplit split;
  };
  std::vector<TunedSplit> tuned_splits;
  // --task-split: every GEMM takes this split (experiments, tinyrt-tune's
  // measurements, the split sweep of the kernel cases).
  bool split_forced = false;
  TaskSplit forced_split;
  // The split of a GEMM of this geometry: forced, else tuned, else the rule.
  TaskSplit task_split(const TileClass &c) const {
    if (split_forced) return forced_split;
    for (const TunedSplit &t : tuned_splits)
      if (t.at == c) return t.split;
    return {};
  }
  const TunedWinograd *tuned_winograd_of(int64_t ic, int64_t oc, int64_t out_h, int64_t out_w, int64_t batch) const {
    for (const TunedWinograd &w : tuned_winograd)
      if (w.ic == ic && w.oc == oc && w.out_h == out_h && w.out_w == out_w && w.batch == batch) return &w;
    return nullptr;
  }
  // The float tiles a tuner may try: every (mr, nv) whose accumulators,
  // weight vectors and a broadcast fit the vector registers, with at
  // least 4 accumulators: the target's candidates and table first, then the
  // ones using the most registers.
  std::vector<std::pair<int, int>> tile_candidates() const;
  // The vector registers a float tile takes: its mr * nv accumulators, nv
  // weight vectors and a broadcast input; whether they fit the target's.
  static int tile_regs(int mr, int nv) { return mr * nv + nv + 1; }
  bool tile_fits(int mr, int nv) const { return tile_regs(mr, nv) <= vector_regs; }
  GemmTile gemm_tile(int64_t oc, int64_t row, bool linear, int64_t ic, TileKind kind = TileKind::Float,
                     double *score = nullptr, int max_nv = 0) const;
  // Output pixels per register tile of the depthwise kernel with a
  // k_h x k_w window.
  int depthwise_tile(int64_t k_h, int64_t k_w) const;
  // The same for int8 input, whose kernel widens each input vector of a
  // window row once and keeps the row's (m - 1) * stride + k_w vectors in
  // registers; or, where depthwise_int8_mr is set, that many pixels at
  // most, spread evenly over an output row of out_w pixels.
  int depthwise_tile_int8(int64_t k_w, int64_t stride_w, int64_t out_w) const;
  // Channels per vector column of the int8 depthwise kernel: NEON sums
  // 16-bit products into int32 (smlal/vmlal.s16, 8 channels: one widened
  // input register); x86 sums exactly in float (f32_lanes channels).
  int depthwise_int8_channels() const;
  // Vectors of hidden units the recurrent kernel keeps in flight per gate
  // (gates * vectors accumulators, 8 in all), float and int8.
  int recurrent_vectors(int gates) const;
};

// Resolves a --target name ("host" picks the best x86-64 variant this CPU
// supports); throws CompileError(Usage) for unknown names.
Target resolve_target(const std::string &name);
std::vector<std::string> target_names();

}  // namespace tinyrt
