// passes/widen_packed_weights.cpp: in the arena budget's room, float
// copies of half GEMM weights (--weights fp16) and int16 copies of the int8
// weights of GEMMs over int16 pairs, widened once per run by a loop kernel
// before their GEMM.
#include "pass_test.h"
#include "qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// One 3x3 convolution, 16 -> `oc` channels (32: of 18432 float weight
// bytes), stride `stride` over `size` x `size`: (size / stride)^2 pixels;
// `pool`: then a global average pool (the convolution's step is then the
// plan's peak, rather than its output's copy back to channels-first).
std::string conv(int size, int stride = 2, int oc = 32, bool pool = false) {
  return R"(
  graph opset 17
  input x: f32[1,16,)" +
         std::to_string(size) + "," + std::to_string(size) + R"(]
  const w: f32[)" +
         std::to_string(oc) +
         R"(,16,3,3] = random(1)
  y = Conv(x, w) {pads=[1,1,1,1], strides=[)" +
         std::to_string(stride) + "," + std::to_string(stride) + R"(]}
)" + (pool ? "  z = GlobalAveragePool(y)\n  output z\n" : "  output y\n");
}

PassOptions options(WeightStorage w, Precision pr = Precision::F32) {
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  o.winograd.weights = o.pack.weights = w;
  o.winograd.precision = o.pack.precision = pr;
  return o;
}

// arena > 0: an arena budget of that many bytes; < 0: of the plan's lower
// bound itself (--max-arena-bytes 1x); 0: the default (1.1x it). The
// weights budget, 0.55x the float weights, leaves no room for float
// storage (the model's `oc` output channels).
Program widened(const std::string &ir, const char *target, WeightStorage w, int64_t arena = 0,
                Precision pr = Precision::F32, int oc = 32) {
  return run_until_limited(ir, "widen_packed_weights", resolve_target(target), options(w, pr), [&](Limits &l) {
    if (arena > 0) l.max_arena_bytes = arena, l.arena_budget_given = true;
    if (arena < 0) l.max_arena_ratio = 1.0;
    l.model_weights_bytes = oc * 16 * 9 * 4;
    l.max_weights_ratio = 0.55;
  });
}

const Kernel *only_gemm(const Program &p) { return only(p, KernelKind::Gemm); }

// GEMM g of p reads its packed weights (`narrow`, kept constant) from an
// arena copy of `numel` elements of `wide` in the same layout (slot 1),
// which `label`'s loop kernel right before it writes from them; its
// definition reads the copy at one index, as `wide`; one trade of `kind`
// taken with the copy's bytes.
void expect_copy(const Program &p, const Kernel &g, DType narrow, DType wide, int64_t numel, const char *label,
                 const char *kind) {
  const GemmSpec &s = g.gemm;
  EXPECT_TRUE(s.arena_packed);
  EXPECT_EQ(s.group_pad_bytes, 0);
  const Value &packed = p.graph.v(s.packed), &copy = p.graph.v(g.ins[1]);
  EXPECT_EQ(packed.dtype, narrow);
  EXPECT_TRUE(packed.is_const());
  EXPECT_EQ(copy.dtype, wide);
  EXPECT_FALSE(copy.is_const());
  EXPECT_EQ(copy.shape, packed.shape);
  EXPECT_EQ(copy.numel(), numel);
  const size_t gi = (size_t)(&g - p.kernels.data());
  ASSERT_GE(gi, 1u);
  const Kernel &w = p.kernels[gi - 1];
  EXPECT_EQ(w.label, label);
  EXPECT_EQ(w.kind, KernelKind::Loop);
  EXPECT_EQ(w.out, g.ins[1]);
  EXPECT_EQ(w.ins, std::vector<int>{s.packed});
  EXPECT_EQ(w.nodes, g.nodes);
  int loads = 0;
  visit(g.expr, [&](const Expr &e) {
    if (e.op != EOp::Load || e.id != 1) return;
    ++loads;
    EXPECT_EQ(e.a.size(), 1u);
    EXPECT_EQ(e.type, wide);
  });
  EXPECT_GE(loads, 1);
  const MemoryTrade *t = nullptr;
  for (const MemoryTrade &m : p.trades)
    if (m.kind == kind) {
      EXPECT_EQ(t, nullptr);
      t = &m;
    }
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->taken, t->kind == std::string("int16-copy") ? "int8" : "half");
  EXPECT_EQ(t->taken, t->wanted);
  EXPECT_EQ(t->arena_bytes, numel * (int64_t)dtype_bytes(wide));
  EXPECT_GT(t->gain, 0);
}

}  // namespace

// Over many pixel tiles, with room in the arena: a loop kernel just
// before the GEMM widens its packed half weights into a float arena tensor
// of the same layout, which the GEMM reads (arena_packed) and its
// definition addresses; the flash keeps the half weights.
TEST(WidenPackedWeights, ManyTilesReadAFloatCopyWidenedOncePerRun) {
  for (const char *target : {"x86-64-avx2", "x86-64-avx512", "aarch64-neon", "armv7-neon"}) {
    SCOPED_TRACE(target);
    const Program p = widened(conv(64), target, WeightStorage::F16, 1 << 22);
    const Kernel *g = only_gemm(p);
    ASSERT_NE(g, nullptr) << describe(p);
    const int64_t nr = g->gemm.nr;
    expect_copy(p, *g, DType::F16, DType::F32, (32 + nr - 1) / nr * nr * 16 * 9, "WidenHalfWeights", "float-copy");
    EXPECT_EQ(p.trades.size(), 1u);
  }
}

// No copy where the arena budget has no room for it (the trade says so),
// over too few tiles, with float weights, or under --precision fp16 (its
// GEMMs multiply the half weights themselves).
TEST(WidenPackedWeights, NoCopyWithoutRoomTilesHalfWeightsOrTheTarget) {
  // The convolution's step is the plan's peak (its 1 MB output): none at 1x.
  const Program lean = widened(conv(64, 1, 64, true), "x86-64-avx2", WeightStorage::F16, -1, Precision::F32, 64);
  ASSERT_NE(only_gemm(lean), nullptr);
  EXPECT_FALSE(only_gemm(lean)->gemm.arena_packed);
  ASSERT_EQ(lean.trades.size(), 1u);
  EXPECT_EQ(lean.trades[0].kind, "float-copy");
  EXPECT_EQ(lean.trades[0].taken, "half");
  EXPECT_EQ(lean.trades[0].arena_bytes, 0);

  const Program few = widened(conv(8), "x86-64-avx2", WeightStorage::F16, 1 << 22);  // 16 pixels
  EXPECT_FALSE(only_gemm(few)->gemm.arena_packed);
  EXPECT_TRUE(few.trades.empty());

  const Program fp32 = widened(conv(64), "x86-64-avx2", WeightStorage::F32, 1 << 22);
  EXPECT_FALSE(only_gemm(fp32)->gemm.arena_packed);
  EXPECT_TRUE(fp32.trades.empty());

  const Program h = widened(conv(64), "aarch64-neon-fp16", WeightStorage::F16, 1 << 22, Precision::F16);
  ASSERT_NE(only_gemm(h), nullptr);
  EXPECT_FALSE(only_gemm(h)->gemm.arena_packed);
  EXPECT_TRUE(h.trades.empty());
}

namespace {

// A QDQ 1x1 convolution over 16 channels of a `size` x `size` image to 48,
// its weights over the int8 range without -128 (not byte pairs: int16 pairs
// over a widened copy of the input on x86 without VNNI).
std::string pointwise_int8(int size) {
  std::string w = "[";
  for (int i = 0; i < 48 * 16; ++i) w += (i ? "," : "") + std::to_string((i * 37) % 255 - 127);
  std::string ir = qdq_conv_graph(16, 48, 16, 1, w + "]", false, "", true);
  const std::string sz = std::to_string(size) + "," + std::to_string(size);
  ir.replace(ir.find("12,12"), 5, sz);
  return ir;
}

// With 4 MB of arena budget.
Program widened_int8(const std::string &ir, const char *target) {
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  return run_until_limited(ir, "widen_packed_weights", resolve_target(target), o, [](Limits &l) {
    l.max_arena_bytes = 1 << 22;
    l.arena_budget_given = true;
  });
}

const Kernel *only_qgemm(const Program &p) { return only(p, KernelKind::QGemm); }

}  // namespace

// An int8 GEMM over int16 pairs (x86 without VNNI) of many pixel tiles
// reads its weights from an int16 copy in the packed layout, which a loop
// kernel just before it writes from the int8 bytes; the flash keeps them.
TEST(WidenPackedWeights, Int8PairWeightsReadAnInt16CopyOverManyTiles) {
  const Program p = widened_int8(pointwise_int8(48), "x86-64-avx2");  // 2304 pixels
  const Kernel *g = only_qgemm(p);
  ASSERT_NE(g, nullptr) << describe(p);
  EXPECT_TRUE(g->gemm.i16);
  EXPECT_FALSE(g->gemm.w8);  // int16 weights now
  const int64_t nr = g->gemm.nr;
  expect_copy(p, *g, DType::I8, DType::I16, (48 + nr - 1) / nr * nr * 16, "WidenInt8Weights", "int16-copy");
}

// None over few tiles (a 12 x 12 image: 144 pixels), on targets with dot
// products (no int16 pairs), or on AVX-512 without VNNI (its int16 pairs
// measured no gain from the copies). (The arena budget's refusal is the half
// copies' code: WidenPackedWeights.NoCopyWithoutRoomTilesHalfWeightsOrTheTarget.)
TEST(WidenPackedWeights, Int8PairWeightsStayBytesOverFewTilesOrWithDotProducts) {
  const Program few = widened_int8(pointwise_int8(12), "x86-64-avx2");
  ASSERT_NE(only_qgemm(few), nullptr);
  EXPECT_TRUE(only_qgemm(few)->gemm.w8);
  EXPECT_FALSE(only_qgemm(few)->gemm.arena_packed);
  for (const MemoryTrade &m : few.trades) EXPECT_NE(m.kind, "int16-copy");
  for (const char *target : {"x86-64-avx512", "x86-64-avx512-vnni", "x86-64-avx2-vnni", "aarch64-neon"}) {
    const Program vnni = widened_int8(pointwise_int8(48), target);
    ASSERT_NE(only_qgemm(vnni), nullptr) << target;
    EXPECT_FALSE(only_qgemm(vnni)->gemm.arena_packed) << target;
  }
}
