// passes/weights_plan.cpp, tiles: where the packed weights are over their
// budget, GEMM tiles of fewer channel columns (less padding), until they
// fit or no narrower tile saves bytes.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// A convolution of `oc` output channels, which the targets' tiles pad to
// whole tiles of 4, 8 or 16 lanes.
std::string conv(int64_t oc) {
  return R"(
  graph opset 17
  input x: f32[1,48,12,12]
  const w: f32[)" +
         std::to_string(oc) + R"(,48,3,3] = random(1)
  y = Conv(x, w) {pads=[1,1,1,1]}
  output y
)";
}
constexpr int64_t kIC = 48;

Program packed(const char *target, int64_t budget, WeightStorage w = WeightStorage::F32, bool forced = false,
               int64_t oc = 40) {
  Target t = resolve_target(target);
  if (forced) {
    t.gemm_tiles = {{4, 3}};
    t.gemm_tile_table.clear();
    t.tiles_forced = true;
  }
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  o.winograd.weights = o.pack.weights = w;
  return run_until_limited(conv(oc), "pack_weights", t, o, [&](Limits &l) { l.max_weights_bytes = budget; });
}

const GemmSpec &gemm(const Program &p) {
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) return k.gemm;
  throw std::runtime_error("no GEMM kernel");
}

int64_t packed_bytes(const Program &p) { return (int64_t)p.graph.v(gemm(p).packed).data->bytes.size(); }

// Where a target's own tile for a layer pads it more than one vector
// column would, a budget of the one-column packing narrows the tile to
// fit, and the trade says so. Every target pads some of these layers.
TEST(NarrowTiles, OverTheBudgetTheTileNarrowsToFit) {
  for (const char *target : {"x86-64-avx2", "x86-64-avx512", "aarch64-neon", "armv7-neon"}) {
    const int L = resolve_target(target).f32_lanes();
    int narrowed = 0;
    for (int64_t oc : {20, 40, 72, 100, 136, 385}) {
      const int64_t one_column = (oc + L - 1) / L * L * kIC * 9 * 4;
      Program open = packed(target, int64_t(1) << 30, WeightStorage::F32, false, oc);
      const int64_t wide = packed_bytes(open);
      EXPECT_TRUE(open.trades.empty()) << target;
      if (wide <= one_column) continue;  // this tile pads no more than one column
      Program tight = packed(target, one_column, WeightStorage::F32, false, oc);
      EXPECT_LE(packed_bytes(tight), one_column) << target << " " << oc;
      EXPECT_LT(gemm(tight).nr, gemm(open).nr) << target << " " << oc;
      ASSERT_EQ(tight.trades.size(), 1u) << target << " " << oc;
      const MemoryTrade &tr = tight.trades[0];
      EXPECT_EQ(tr.kind, "tile");
      EXPECT_EQ(tr.bytes, packed_bytes(tight) - wide) << target << " " << oc;
      EXPECT_EQ(tr.wanted, std::to_string(gemm(open).mr) + "x" + std::to_string(gemm(open).nr));
      EXPECT_EQ(tr.taken, std::to_string(gemm(tight).mr) + "x" + std::to_string(gemm(tight).nr));
      EXPECT_EQ(tight.budgets.base_weights + tight.budgets.traded_weights, packed_bytes(tight)) << target << " " << oc;
      ++narrowed;
    }
    EXPECT_GT(narrowed, 0) << target << ": no layer's tile pads more than a column";
  }
}

// A budget no tile meets: the narrowest packing, no further; the driver
// then refuses a given budget by the weights as emitted.
TEST(NarrowTiles, ABudgetNoTileMeetsLeavesTheNarrowest) {
  Program p = packed("x86-64-avx512", 1000);
  EXPECT_EQ(gemm(p).nr, 16);  // one vector: 48 channels packed
  EXPECT_EQ(packed_bytes(p), 48 * kIC * 9 * 4);
}

// Half weights count half the bytes: a budget the half packing meets
// narrows nothing.
TEST(NarrowTiles, HalfWeightsCountHalfTheBytes) {
  const int64_t wide = packed_bytes(packed("x86-64-avx512", int64_t(1) << 30));
  Program p = packed("x86-64-avx512", wide / 2, WeightStorage::F16);
  EXPECT_EQ(packed_bytes(p), wide / 2);
  EXPECT_TRUE(p.trades.empty());
}

// --gemm-tile forces its tile on every GEMM (experiments, tinyrt-tune).
TEST(NarrowTiles, AForcedTileStays) {
  Program p = packed("x86-64-avx512", 1000, WeightStorage::F32, true);
  EXPECT_EQ(gemm(p).mr, 4);
  EXPECT_EQ(gemm(p).nr, 48);
  EXPECT_TRUE(p.trades.empty());
}

}  // namespace
