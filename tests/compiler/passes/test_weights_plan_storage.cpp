// passes/weights_plan.cpp, storage: under --weights fp16, the weights
// budget's room keeps float the GEMM and depthwise weights that widen most
// per byte.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// A first layer of few weights over many pixels (3 -> 16 channels, 3x3,
// 64x64: 432 weights, 65536 pixels) and a layer of many weights over few
// pixels (16 -> `oc` channels, 3x3, stride 4: 144 oc weights, 256 pixels).
std::string two_layers(int oc) {
  return R"(
  graph opset 17
  input x: f32[1,3,64,64]
  const a: f32[16,3,3,3] = random(1)
  const b: f32[)" +
         std::to_string(oc) + R"(,16,3,3] = random(2)
  y = Conv(x, a) {pads=[1,1,1,1]}
  z = Conv(y, b) {pads=[1,1,1,1], strides=[4,4]}
  output z
)";
}
const std::string kTwo = two_layers(64);

// budget 0: the default (1.1x the float plan as half), from the model's
// own float weights.
Program packed(const char *target, int64_t budget, WeightStorage w, Precision pr = Precision::F32,
               const std::string &ir = kTwo, int64_t model_bytes = (16 * 3 * 9 + 64 * 16 * 9) * 4,
               WinogradMode mode = WinogradMode::Off) {
  PassOptions o;
  o.winograd.mode = mode;
  o.winograd.weights = o.pack.weights = w;
  o.winograd.precision = o.pack.precision = pr;
  return run_until_limited(ir, "pack_weights", resolve_target(target), o, [&](Limits &l) {
    l.max_weights_bytes = budget;
    l.model_weights_bytes = model_bytes;
  });
}

std::vector<const Kernel *> gemms(const Program &p) {
  std::vector<const Kernel *> g;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) g.push_back(&k);
  return g;
}

// The GEMM weights' bytes packed as float with their tiles.
int64_t packed_bytes_as_float(const Program &p) {
  int64_t n = 0;
  for (const Kernel *k : gemms(p))
    n += packed_float_weight_bytes(k->gemm, resolve_target("x86-64-avx2"), WeightStorage::F32);
  return n;
}

int64_t packed_total(const Program &p) {
  int64_t n = 0;
  for (const Kernel *k : gemms(p)) n += (int64_t)p.graph.v(k->gemm.packed).data->bytes.size();
  return n;
}

// With room for one layer's float weights, the first layer (most
// widenings per byte) keeps them, the other stays half, and the weights
// stay within the budget; with room for both, both stay float.
TEST(KeepFloatWeights, TheRoomGoesToTheLayersThatWidenMostPerByte) {
  for (const char *target : {"x86-64-avx2", "x86-64-avx512", "aarch64-neon", "armv7-neon"}) {
    // Each layer's packed float bytes (the target's tiles; as half: half).
    const Program f = packed(target, int64_t(1) << 30, WeightStorage::F32);
    ASSERT_EQ(gemms(f).size(), 2u) << target << "\n" << describe(f);
    const int64_t f1 = (int64_t)f.graph.v(gemms(f)[0]->gemm.packed).data->bytes.size();
    const int64_t f2 = (int64_t)f.graph.v(gemms(f)[1]->gemm.packed).data->bytes.size();
    const int64_t first = f1 / 2, second = f2 / 2;  // half, and what float adds to each

    const Program half = packed(target, first + second, WeightStorage::F16);  // no room: all half
    for (const Kernel *k : gemms(half)) EXPECT_EQ(half.graph.v(k->gemm.packed).dtype, DType::F16) << target;
    EXPECT_TRUE(half.trades.empty()) << target;

    const int64_t one = first + second + first;  // room for the first layer's float bytes
    const Program p = packed(target, one, WeightStorage::F16);
    const std::vector<const Kernel *> g = gemms(p);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_TRUE(g[0]->gemm.float_weights) << target;
    EXPECT_EQ(p.graph.v(g[0]->gemm.packed).dtype, DType::F32) << target;
    EXPECT_FALSE(g[1]->gemm.float_weights) << target;
    EXPECT_EQ(p.graph.v(g[1]->gemm.packed).dtype, DType::F16) << target;
    EXPECT_LE(packed_total(p), one) << target;
    EXPECT_EQ(p.budgets.base_weights + p.budgets.traded_weights, packed_total(p)) << target;
    ASSERT_EQ(p.trades.size(), 1u) << target;
    EXPECT_EQ(p.trades[0].kind, "storage");
    EXPECT_EQ(p.trades[0].bytes, first) << target;

    const Program both = packed(target, f1 + f2, WeightStorage::F16);
    for (const Kernel *k : gemms(both)) EXPECT_EQ(both.graph.v(k->gemm.packed).dtype, DType::F32) << target;
    EXPECT_EQ(both.trades.size(), 2u) << target;
  }
}

// A depthwise convolution over many pixels (20 channels, 3x3, 32x32: 180
// weights, which every target's vectors pad) and a 1x1 product over few
// (20 -> 16 channels, stride 4: 64 pixels).
const std::string kDepthwise = R"(
  graph opset 17
  input x: f32[1,20,32,32]
  const d: f32[20,1,3,3] = random(3)
  const b: f32[16,20,1,1] = random(4)
  y = Conv(x, d) {pads=[1,1,1,1], group=20}
  z = Conv(y, b) {strides=[4,4]}
  output z
)";

// Both kernels' packed weights, depthwise first.
std::vector<const Kernel *> scheduled(const Program &p) {
  std::vector<const Kernel *> s;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Depthwise) s.push_back(&k);
  for (const Kernel *k : gemms(p)) s.push_back(k);
  return s;
}
int64_t packed_bytes(const Program &p, const Kernel *k) {
  return (int64_t)p.graph.v(k->gemm.packed).data->bytes.size();
}

// A depthwise layer widens a tap's weights once per tile of pixels, as a
// GEMM does: with room for its float weights (padded as packed) it keeps
// them, the product over few pixels stays half, and the weights as packed
// stay within a given budget.
TEST(KeepFloatWeights, DepthwiseWeightsTakeTheRoomToo) {
  const int64_t model = (20 * 9 + 16 * 20) * 4;
  for (const char *target : {"x86-64-avx2", "x86-64-avx512", "aarch64-neon", "armv7-neon"}) {
    const Program f = packed(target, int64_t(1) << 30, WeightStorage::F32, Precision::F32, kDepthwise, model);
    ASSERT_EQ(scheduled(f).size(), 2u) << target << "\n" << describe(f);
    ASSERT_EQ(scheduled(f)[0]->kind, KernelKind::Depthwise) << target;
    const int64_t dw = packed_bytes(f, scheduled(f)[0]) / 2, gemm = packed_bytes(f, scheduled(f)[1]) / 2;
    const int64_t budget = dw + gemm + dw;  // room for the depthwise layer's float bytes
    const Program p = packed(target, budget, WeightStorage::F16, Precision::F32, kDepthwise, model);
    const std::vector<const Kernel *> k = scheduled(p);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_TRUE(k[0]->gemm.float_weights) << target;
    EXPECT_EQ(p.graph.v(k[0]->gemm.packed).dtype, DType::F32) << target;
    EXPECT_EQ(p.graph.v(k[1]->gemm.packed).dtype, DType::F16) << target;
    EXPECT_EQ(packed_bytes(p, k[0]) + packed_bytes(p, k[1]), budget) << target;
    ASSERT_EQ(p.trades.size(), 1u) << target;
    EXPECT_EQ(p.trades[0].bytes, dw) << target;
    // One byte less: no room for it.
    const Program q = packed(target, budget - 1, WeightStorage::F16, Precision::F32, kDepthwise, model);
    for (const Kernel *kk : scheduled(q)) EXPECT_EQ(q.graph.v(kk->gemm.packed).dtype, DType::F16) << target;
  }
}

// The same second layer with 20 output channels, which x86-64-avx2's
// 16-channel tiles pack as 32.
const std::string kPadded = two_layers(20);

// The default budget keeps the half weights within 0.55x the float
// compile's: where the float plan fits the float default, the first layer
// keeps float weights; where the packing's padding takes the float plan
// over the float default (the float compile then narrows its tiles, so
// its weights are less than the plan's), nothing is kept. (With the
// Winograd choice on, the default half budget is 1.1x the float plan as
// half, which leaves room over such a plan; with it off, 1.1x the model's
// weights as half, which leaves none.)
TEST(KeepFloatWeights, TheDefaultBudgetStaysWithinHalfTheFloatCompile) {
  const int64_t model = (16 * 3 * 9 + 64 * 16 * 9) * 4;
  const Program fits = packed("x86-64-avx2", 0, WeightStorage::F16);
  ASSERT_EQ(gemms(fits).size(), 2u);
  EXPECT_LE(fits.budgets.float_plan, (int64_t)(1.1 * model));
  EXPECT_TRUE(gemms(fits)[0]->gemm.float_weights);
  EXPECT_LE(packed_total(fits), fits.budgets.weights);
  const Program pads = packed("x86-64-avx2", 0, WeightStorage::F16, Precision::F32, kPadded,
                              (16 * 3 * 9 + 20 * 16 * 9) * 4, WinogradMode::Auto);
  ASSERT_EQ(gemms(pads).size(), 2u);
  EXPECT_GT(packed_bytes_as_float(pads), (int64_t)(1.1 * (16 * 3 * 9 + 20 * 16 * 9) * 4)) << "the test wants padding";
  for (const Kernel *k : gemms(pads)) EXPECT_FALSE(k->gemm.float_weights);
  EXPECT_GT(pads.budgets.weights, pads.budgets.base_weights + pads.budgets.traded_weights) << "the test wants room";
  for (const MemoryTrade &tr : pads.trades) EXPECT_NE(tr.kind, "storage");
}

// Float weights (--weights fp32) are float already; half products
// (--precision fp16) multiply the half weights themselves: neither keeps
// anything.
TEST(KeepFloatWeights, OnlyForHalfWeightsOverFloatProducts) {
  const Program f32 = packed("x86-64-avx2", int64_t(1) << 30, WeightStorage::F32);
  EXPECT_TRUE(f32.trades.empty());
  const Program h = packed("aarch64-neon-fp16", int64_t(1) << 30, WeightStorage::F16, Precision::F16);
  for (const Kernel *k : gemms(h)) EXPECT_FALSE(k->gemm.float_weights);
  EXPECT_TRUE(h.trades.empty());
}

}  // namespace
