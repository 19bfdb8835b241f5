// passes/pack_weights.cpp: register tiles chosen per target, weights
// packed in the order the GEMM reads them.
#include "pass_test.h"
#include "qdq_models.h"
#include "tinyrt_artifact.h"

#include <algorithm>
#include <sstream>

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kConv = R"(
  graph opset 17
  input x: f32[1,16,8,8]
  const w: f32[20,16,3,3] = random(1)
  y = Conv(x, w) {pads=[1,1,1,1]}
  output y
)";

const Kernel &gemm(const Program &p) {
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) return k;
  throw std::runtime_error("no GEMM kernel");
}

TEST(PackWeights, GemmWeightsPaddedToWholeTiles) {
  for (const char *target : {"x86-64-avx2", "x86-64-avx512", "armv7-neon", "aarch64-neon"}) {
    Program p = run_until(kConv, "pack_weights", target, [] {
      PassOptions o;
      o.winograd.mode = WinogradMode::Off;
      return o;
    }());
    ASSERT_EQ(count_kernels(p, KernelKind::Gemm), 1) << target << "\n" << describe(p);
    const GemmSpec &s = gemm(p).gemm;
    ASSERT_GE(s.packed, 0) << target;
    EXPECT_GT(s.mr, 0) << target;
    ASSERT_GT(s.nr, 0) << target;
    int64_t oc_padded = (20 + s.nr - 1) / s.nr * s.nr;
    EXPECT_EQ(p.graph.v(s.packed).numel(), oc_padded * 16 * 9) << target;
    GemmTile t = resolve_target(target).gemm_tile(20, 8, false, 16);
    EXPECT_EQ(s.mr, t.mr) << target;
    EXPECT_EQ(s.nr, t.nv * resolve_target(target).f32_lanes()) << target;
  }
}

TEST(PackWeights, PackedOrderIsTileChannelTapInput) {
  // [oc tile][kh*kw][ic][nr]: element (oc, ic, kh, kw) of the logical
  // weights sits at ((tile * 9 + tap) * 16 + ic) * nr + oc % nr.
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  Program p = run_until(kConv, "pack_weights", "x86-64-avx2", o);
  const GemmSpec &s = gemm(p).gemm;
  const ConstData &packed = *p.graph.v(s.packed).data;
  const ConstData &logical = *p.graph.v(s.weight).data;
  for (int64_t oc : {0, 7, 19})
    for (int64_t ic : {0, 15})
      for (int64_t tap : {0, 4, 8}) {
        int64_t at = ((oc / s.nr * 9 + tap) * 16 + ic) * s.nr + oc % s.nr;
        EXPECT_EQ(packed.get_f(at), logical.get_f((oc * 16 + ic) * 9 + tap)) << oc << " " << ic << " " << tap;
      }
}

// --precision fp16: a GEMM of at least 8 input channels per tap over half
// weights computes in half on a target with half arithmetic, with a tile
// of whole half vectors; fewer channels, another target or F(4,3) (whose
// transformed weights stay float) compute in float.
TEST(PackWeights, HalfPrecisionWhereHalfArithmeticAndChannelsAllow) {
  const char *kTwo = R"(
    graph opset 17
    input x: f32[1,5,9,9]
    const a: f32[16,5,1,1] = random(1)
    const w: f32[20,16,3,3] = random(2)
    y = Conv(x, a)
    z = Conv(y, w) {pads=[1,1,1,1]}
    output z
  )";
  auto options = [](WinogradMode m) {
    PassOptions o;
    o.winograd.mode = m;
    o.pack.weights = o.winograd.weights = WeightStorage::F16;
    o.pack.precision = o.winograd.precision = Precision::F16;
    return o;
  };
  for (const char *target : {"aarch64-neon-fp16", "aarch64-neon-dot"}) {
    Program p = run_until_with(kTwo, "pack_weights", half_target(target), options(WinogradMode::Off));
    std::vector<const Kernel *> gemms;
    for (const Kernel &k : p.kernels)
      if (k.kind == KernelKind::Gemm) gemms.push_back(&k);
    ASSERT_EQ(gemms.size(), 2u) << describe(p);
    const bool half_arith = std::string(target) == "aarch64-neon-fp16";
    EXPECT_FALSE(gemms[0]->gemm.half) << target << ": 5 input channels";
    EXPECT_EQ(gemms[1]->gemm.half, half_arith) << target;
    if (half_arith) EXPECT_EQ(gemms[1]->gemm.nr % 8, 0);
  }
  // F(4,3): its GEMM's weights float, its products float; F(2,3)'s half.
  for (WinogradMode m : {WinogradMode::F4, WinogradMode::F2}) {
    Program p = run_until_with(kTwo, "pack_weights", half_target("aarch64-neon-fp16"), options(m));
    int winograd = 0;
    for (const Kernel &k : p.kernels) {
      if (k.kind != KernelKind::Gemm || k.wino.m == 0) continue;
      ++winograd;
      EXPECT_EQ(k.gemm.half, m == WinogradMode::F2);
      EXPECT_EQ(p.graph.v(k.gemm.packed).dtype, m == WinogradMode::F2 ? DType::F16 : DType::F32);
    }
    EXPECT_GT(winograd, 0) << describe(p);
  }
}

// Under --precision fp16 (tile_nv_step 2) float tiles are whole half
// vectors, also where the weights budget asks for one channel vector.
TEST(PackWeights, HalfTilesAreWholeHalfVectors) {
  Target t = half_target("aarch64-neon-fp16");
  for (int64_t oc : {1, 5, 9, 33, 64})
    for (int max_nv : {0, 1, 2, 3}) {
      GemmTile g = t.gemm_tile(oc, 7, false, 16, Target::TileKind::Float, nullptr, max_nv);
      EXPECT_EQ(g.nv % 2, 0) << oc << " " << max_nv;
    }
  for (auto [mr, nv] : t.tile_candidates()) EXPECT_EQ(nv % 2, 0) << mr << "x" << nv;
}

// --weights fp16: float GEMM and depthwise weights stored as half, each
// the float weight rounded to nearest even; the sizes the Winograd budget
// estimates (packed_float_weight_bytes) are the ones packed.
TEST(PackWeights, HalfWeightsAreTheRoundedFloats) {
  const char *kConvDw = R"(
    graph opset 17
    input x: f32[1,16,8,8]
    const w: f32[20,16,3,3] = random(1)
    const d: f32[20,1,3,3] = random(2)
    y = Conv(x, w) {pads=[1,1,1,1]}
    z = Conv(y, d) {pads=[1,1,1,1], group=20}
    output z
  )";
  for (const char *target : {"x86-64-avx2", "armv7-neon", "aarch64-neon"}) {
    PassOptions o;
    o.winograd.mode = WinogradMode::Off;
    o.pack.weights = o.winograd.weights = WeightStorage::F16;
    // A budget that leaves the weights plan no room for float storage: every weight half.
    const Target t = resolve_target(target);
    Program p;
    p.graph = parse_graph(kConvDw);
    p.graph.limits.max_weights_bytes = 1;
    PassContext c{p, t, nullptr};
    run_pipeline(c, o, "pack_weights");
    ASSERT_EQ(count_kernels(p, KernelKind::Depthwise), 1) << target << "\n" << describe(p);
    for (const Kernel &k : p.kernels) {
      if (!is_scheduled(k.kind)) continue;
      const Value &packed = p.graph.v(k.gemm.packed);
      EXPECT_EQ(packed.dtype, DType::F16) << target;
      if (k.kind == KernelKind::Gemm) {
        EXPECT_EQ((int64_t)packed.data->bytes.size(),
                  packed_float_weight_bytes(k.gemm, resolve_target(target), WeightStorage::F16));
      }
      const ConstData &logical = *p.graph.v(k.gemm.weight).data;
      // Every weight appears, rounded: the packed values are a permutation
      // of the rounded weights plus the padding's zeros.
      std::vector<float> want, got;
      for (int64_t i = 0; i < shape_numel(logical.shape); ++i)
        want.push_back(half_to_float(float_to_half((float)logical.get_f(i))));
      for (int64_t i = 0; i < packed.numel(); ++i)
        if (packed.data->get_f(i) != 0) got.push_back((float)packed.data->get_f(i));
      want.erase(std::remove(want.begin(), want.end(), 0.f), want.end());
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << target << " " << k.label;
    }
  }
}

TEST(PackWeights, HalfKeepsFloatForWeightsBeyondItsRange) {
  const char *kBig = R"(
    graph opset 17
    input x: f32[1,2,4,4]
    const w: f32[2,2,1,1] = [1, 70000, -3, 0.5]
    y = Conv(x, w)
    output y
  )";
  PassOptions o;
  o.pack.weights = WeightStorage::F16;
  Program p = run_until(kBig, "pack_weights", "x86-64-avx2", o);
  const GemmSpec &s = gemm(p).gemm;
  EXPECT_EQ(p.graph.v(s.packed).dtype, DType::F32);  // 70000 would become infinity
}

// The 256-bit dot-product targets: vpdpbusd on ymm, AVX-VNNI's VEX form or
// AVX-512 VNNI's EVEX form, with the same int8 tiles and packing.
TEST(PackWeights, AvxVnniTargetsShareTheirInt8Plan) {
  const Target vex = resolve_target("x86-64-avx2-vnni"), evex = resolve_target("x86-64-avx512-vnni-256");
  for (const Target *t : {&vex, &evex}) {
    EXPECT_EQ(t->dot_i8, DotI8::X86Vnni) << t->name;
    EXPECT_EQ(t->vector_bytes, 32) << t->name;
    EXPECT_EQ(t->vector_regs, 16) << t->name;
  }
  EXPECT_TRUE(vex.isa & TINYRT_ISA_X86_AVXVNNI);
  EXPECT_FALSE(vex.isa & (TINYRT_ISA_X86_AVX512F | TINYRT_ISA_X86_AVX512VNNI));
  EXPECT_EQ(evex.isa & (TINYRT_ISA_X86_AVX512VL | TINYRT_ISA_X86_AVX512VNNI),
            TINYRT_ISA_X86_AVX512VL | TINYRT_ISA_X86_AVX512VNNI);
  EXPECT_FALSE(evex.isa & TINYRT_ISA_X86_AVXVNNI);
  EXPECT_EQ(evex.legal_vector_bits, 256);  // no zmm
  EXPECT_EQ(resolve_target("x86-64-avx512-vnni").vector_bytes, 64);
  const std::string conv = qdq_conv(16, true);
  Program a = run_until_with(conv, "pack_weights", vex), b = run_until_with(conv, "pack_weights", evex);
  const Kernel &qa =
      *std::find_if(a.kernels.begin(), a.kernels.end(), [](const Kernel &k) { return k.kind == KernelKind::QGemm; });
  const Kernel &qb =
      *std::find_if(b.kernels.begin(), b.kernels.end(), [](const Kernel &k) { return k.kind == KernelKind::QGemm; });
  EXPECT_EQ(qa.gemm.mr, qb.gemm.mr);
  EXPECT_EQ(qa.gemm.nr, qb.gemm.nr);
  EXPECT_EQ(a.graph.v(qa.gemm.packed).data->bytes, b.graph.v(qb.gemm.packed).data->bytes);
}

// An int8 GEMM whose product form the target was measured to run slower
// than float (Target::int8_over_float) is named in the log; not where it
// runs faster or was not measured.
TEST(PackWeights, Int8SlowerThanFloatIsSaid) {
  const std::string conv = qdq_conv(16, true);
  for (double ratio : {1.4, 0.6, 0.0}) {
    Target t = resolve_target("x86-64-avx2");
    for (double &r : t.int8_over_float) r = ratio;
    t.i16_over_float = 0;  // (the layer stays a direct int8 GEMM: no int8 Winograd)
    std::ostringstream log;
    Program p = run_until_with(conv, "pack_weights", t, {}, &log);
    ASSERT_EQ(count_kernels(p, KernelKind::QGemm), 1) << describe(p);
    const bool said = log.str().find("int8 slower than float: 1 of 1 int8 GEMMs") != std::string::npos;
    EXPECT_EQ(said, ratio > 1) << ratio << ": " << log.str();
    if (said) EXPECT_NE(log.str().find("up to 1.4x"), std::string::npos) << log.str();
  }
}

// So is an int8 depthwise convolution where the target runs those slower
// than float ones (Target::depthwise_int8_over_float: every target's
// measured figure is above 1 today; ARMv7's 1.932).
TEST(PackWeights, Int8DepthwiseSlowerThanFloatIsSaid) {
  const std::string dw = qdq_depthwise(24);
  for (double ratio : {1.4, 0.6, 0.0}) {
    Target t = resolve_target("x86-64-avx2");
    t.depthwise_int8_over_float = ratio;
    std::ostringstream log;
    Program p = run_until_with(dw, "pack_weights", t, {}, &log);
    ASSERT_EQ(count_kernels(p, KernelKind::Depthwise), 1) << describe(p);
    EXPECT_TRUE(is_int8_depthwise(p, *std::find_if(p.kernels.begin(), p.kernels.end(),
                                                   [](const Kernel &k) { return k.kind == KernelKind::Depthwise; })))
        << describe(p);
    const bool said =
        log.str().find(
            "int8 slower than float: 1 int8 depthwise convolutions, which x86-64-avx2 was measured to run "
            "at about 1.4x") != std::string::npos;
    EXPECT_EQ(said, ratio > 1) << ratio << ": " << log.str();
  }
  EXPECT_GT(resolve_target("armv7-neon").depthwise_int8_over_float, 1);
}

}  // namespace
