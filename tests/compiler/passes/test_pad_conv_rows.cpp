// passes/pad_conv_rows.cpp: a convolution over few input channels reads a
// padded channels-last copy, each kernel row's inputs one K run.
#include "pass_test.h"
#include "qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(PadConvRows, Int8ConvolutionOverThreeChannelsReadsAPaddedCopy) {
  Program before = run_until(qdq_conv(3, false), "fuse_epilogues");
  Program p = run_until(qdq_conv(3, false), "pad_conv_rows");
  ASSERT_EQ(p.kernels.size(), before.kernels.size() + 1);
  int conv = -1;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].kind == KernelKind::QGemm) conv = (int)i;
  ASSERT_GT(conv, 0);
  const Kernel &copy = p.kernels[conv - 1];
  EXPECT_EQ(copy.kind, KernelKind::Loop);
  EXPECT_EQ(p.kernels[conv].ins[0], copy.out);
  EXPECT_TRUE(p.kernels[conv].gemm.k_run);
  // The copy holds the padding: 14 x 14 pixels of the 12 x 12 image.
  const Shape &s = p.graph.v(copy.out).shape;
  EXPECT_EQ(shape_numel(s) % (14 * 14), 0) << shape_str(s);
}

TEST(PadConvRows, ManyChannelsReadTheInputAsItIs) {
  Program before = run_until(qdq_conv(16, false), "fuse_epilogues");
  Program p = run_until(qdq_conv(16, false), "pad_conv_rows");
  EXPECT_EQ(p.kernels.size(), before.kernels.size());
}

TEST(PadConvRows, FloatOnlyWhereTheGemmMultipliesByLane) {
  const char *ir = R"(
    graph opset 17
    input x: f32[1,3,12,12]
    const w: f32[8,3,3,3] = random(1)
    y = Conv(x, w) {pads=[1,1,1,1]}
    output y
  )";
  EXPECT_EQ(run_until(ir, "pad_conv_rows", "x86-64-avx2").kernels.size(), 1u);
  Program arm = run_until(ir, "pad_conv_rows", "aarch64-neon");
  ASSERT_EQ(arm.kernels.size(), 2u);
  EXPECT_TRUE(arm.kernels[1].gemm.k_run);
}

}  // namespace
