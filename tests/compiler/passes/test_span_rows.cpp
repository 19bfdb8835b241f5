// passes/span_rows.cpp: on targets that ask for it, float convolutions
// over windows with enough input channels tile their pixels across output
// rows (GemmSpec::span), and the tile is chosen for one long row.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

std::string conv(int64_t ic, int64_t k, int64_t groups = 1) {
  const std::string pad = k == 3 ? "{pads=[1,1,1,1], group=" : "{group=";
  return R"(
  graph opset 17
  input x: f32[1,)" +
         std::to_string(ic) + R"(,7,7]
  const w: f32[64,)" +
         std::to_string(ic / groups) + "," + std::to_string(k) + "," + std::to_string(k) + R"(] = random(1)
  y = Conv(x, w) )" +
         pad + std::to_string(groups) + R"(}
  output y
)";
}

const GemmSpec &gemm(const Program &p) {
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) return k.gemm;
  throw std::runtime_error("no GEMM kernel");
}

Program packed(const std::string &ir, const char *target) {
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  return run_until_with(ir, "pack_weights", resolve_target(target), o);
}

}  // namespace

TEST(SpanRows, WindowsOverManyChannelsSpanRowsOnAvx2) {
  const Program p = packed(conv(64, 3), "x86-64-avx2");
  const GemmSpec &s = gemm(p);
  EXPECT_TRUE(s.span);
  const GemmTileShape ts = gemm_tile_shape(s);
  EXPECT_TRUE(ts.span && !ts.linear && ts.one_row());
  EXPECT_EQ(ts.row, 49);  // every pixel: one row of 7 x 7
  // As one long row: AVX2's 6x2, not the 4x3 its table gives rows of 7.
  EXPECT_EQ(s.mr, 6);
  EXPECT_EQ(s.nr, 16);
}

TEST(SpanRows, FewChannelsOneByOneAndOtherTargetsKeepRows) {
  EXPECT_FALSE(gemm(packed(conv(16, 3), "x86-64-avx2")).span);     // 16 input channels: rows
  EXPECT_FALSE(gemm(packed(conv(64, 3, 4), "x86-64-avx2")).span);  // 16 per group
  EXPECT_FALSE(gemm(packed(conv(64, 1), "x86-64-avx2")).span);     // 1x1: linear mode
  EXPECT_TRUE(gemm(packed(conv(64, 3, 2), "x86-64-avx2")).span);   // 32 per group
  for (const char *t : {"x86-64-avx512-vnni", "aarch64-neon", "armv7-neon"})
    EXPECT_FALSE(gemm(packed(conv(64, 3), t)).span) << t;
}

TEST(SpanRows, AForcedTileKeepsRows) {
  Target t = resolve_target("x86-64-avx2");
  t.gemm_tiles = {{4, 3}};
  t.gemm_tile_table.clear();
  t.tiles_forced = true;
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  const GemmSpec &s = gemm(run_until_with(conv(64, 3), "pack_weights", t, o));
  EXPECT_FALSE(s.span);
  EXPECT_EQ(s.mr, 4);
}
