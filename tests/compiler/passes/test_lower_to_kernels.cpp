// passes/lower_to_kernels.cpp: each node becomes kernels of its family, or
// a view.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(LowerToKernels, EachOpItsFamily) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,6,6]
    const w: f32[8,8,3,3] = random(1)
    const dw: f32[8,1,3,3] = random(2)
    const shape: i64[2] = [1, -1]
    c = Conv(x, w) {pads=[1,1,1,1]}
    d = Conv(c, dw) {pads=[1,1,1,1], group=8}
    r = Relu(d)
    y = Reshape(r, shape)
    output y
  )",
                        "lower_to_kernels");
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);
  EXPECT_EQ(p.kernels[1].kind, KernelKind::Depthwise);
  EXPECT_EQ(p.kernels[2].kind, KernelKind::Loop);
  EXPECT_EQ(p.kernels[0].gemm.k_h, 3);
  EXPECT_EQ(p.kernels[0].gemm.pad_t, 1);
  // The Reshape is a view of the Relu's output.
  int y = p.graph.outputs[0];
  ASSERT_TRUE(p.alias.count(y));
  EXPECT_EQ(p.alias.at(y), p.kernels[2].out);
}

TEST(LowerToKernels, ElementExpressionOfAnElementwiseOp) {
  Program p = run_until(R"(
    graph opset 17
    input a: f32[4,5]
    input b: f32[5]
    y = Add(a, b)
    output y
  )",
                        "lower_to_kernels");
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel &k = p.kernels[0];
  EXPECT_EQ(count_ops(k.expr, EOp::Add), 1);
  EXPECT_EQ(count_ops(k.expr, EOp::Load), 2);
  EXPECT_EQ(k.ins.size(), 2u);
}

TEST(LowerToKernels, MatMulIsAGemmOverItsRows) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[3,7,16]
    const w: f32[16,10] = random(3)
    y = MatMul(x, w)
    output y
  )",
                        "lower_to_kernels");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);
  EXPECT_EQ(p.kernels[0].gemm.in_c, 16);
  EXPECT_EQ(p.kernels[0].gemm.out_c, 10);
}

}  // namespace
