// passes/choose_layouts.cpp: convolution outputs channels-last, copies
// where an application-owned or viewed value must be another layout.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(ChooseLayouts, ConvOutputsAreChannelsLastAndViewsRowMajor) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,5,5]
    const w: f32[8,8,1,1] = random(1)
    c = Conv(x, w)
    y = Flatten(c)
    output y
  )",
                        "choose_layouts");
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.kernels[0].label, "ToChannelsLast");  // the application's NCHW input
  EXPECT_EQ(p.perm_of(p.kernels[0].out), (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(p.kernels[1].ins[0], p.kernels[0].out);
  EXPECT_EQ(p.perm_of(p.kernels[1].out), (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(p.kernels[2].label, "ToRowMajor");  // Flatten views a row-major copy
  EXPECT_TRUE(p.perm_of(p.kernels[2].out).empty());
}

TEST(ChooseLayouts, FewChannelInputNeedsNoCopy) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,1,9,7]
    const w: f32[8,1,3,2] = random(2)
    y = Conv(x, w)
    output y
  )",
                        "choose_layouts");
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);  // not mistaken for depthwise
  EXPECT_EQ(p.kernels[0].ins[0], p.graph.inputs[0]);
}

TEST(ChooseLayouts, LoopKernelsCarryingChannelsInheritTheLayout) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,5,5]
    const w: f32[8,8,1,1] = random(3)
    const w2: f32[8,8,1,1] = random(4)
    c = Conv(x, w)
    m = MaxPool(c) {kernel_shape=[2,2]}
    y = Conv(m, w2)
    output y
  )",
                        "choose_layouts");
  for (const Kernel &k : p.kernels)
    if (k.label == "MaxPool") EXPECT_EQ(p.perm_of(k.out), (std::vector<int>{0, 2, 3, 1}));
}

}  // namespace
