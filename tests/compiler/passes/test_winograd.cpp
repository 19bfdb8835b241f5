// passes/winograd.cpp: 3x3 stride-1 float convolutions as Winograd
// transforms around a grouped GEMM, where asked or where it pays.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kConv3x3 = R"(
  graph opset 17
  input x: f32[1,32,16,16]
  const w: f32[32,32,3,3] = random(1)
  const b: f32[32] = random(2)
  c = Conv(x, w, b) {pads=[1,1,1,1]}
  y = Relu(c)
  output y
)";

PassOptions mode(WinogradMode m) {
  PassOptions o;
  o.winograd.mode = m;
  return o;
}

TEST(Winograd, F4MakesTransformsAroundAGroupedGemm) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::F4));
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradIn), 1);
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradOut), 1);
  for (const Kernel &k : p.kernels) {
    if (k.kind == KernelKind::Gemm) EXPECT_EQ(k.gemm.groups, 36);  // (4 + 2)^2 planes
    if (k.kind == KernelKind::WinogradOut) {
      EXPECT_EQ(k.wino.m, 4);
      EXPECT_EQ(count_ops(k.gemm.epilogue, EOp::Max), 1);  // the Relu stays in the epilogue
    }
  }
}

TEST(Winograd, F2TransformsWeightsToFourByFour) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::F2));
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) {
      EXPECT_EQ(k.gemm.groups, 16);
      EXPECT_EQ(p.graph.v(k.gemm.weight).numel(), 16 * 32 * 32);
    }
}

TEST(Winograd, OffKeepsTheDirectConvolution) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::Off));
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn), 0);
  EXPECT_EQ(count_kernels(p, KernelKind::Gemm), 1);
}

TEST(Winograd, StridedConvolutionsStayDirect) {
  std::string ir = kConv3x3;
  ir.replace(ir.find("pads=[1,1,1,1]"), 14, "pads=[1,1,1,1], strides=[2,2]");
  Program p = run_until(ir, "winograd", "x86-64-avx2", mode(WinogradMode::F4));
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn), 0);
}

}  // namespace
