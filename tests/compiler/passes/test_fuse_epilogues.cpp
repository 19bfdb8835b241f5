// passes/fuse_epilogues.cpp: a GEMM/conv/depthwise kernel absorbs its
// elementwise reader chains into its epilogue.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(FuseEpilogues, ConvBiasResidualReluIsOneKernel) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,6,6]
    const w: f32[8,8,3,3] = random(1)
    const b: f32[8] = random(2)
    c = Conv(x, w, b) {pads=[1,1,1,1]}
    a = Add(c, x)
    y = Relu(a)
    output y
  )",
                        "fuse_epilogues");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);
  EXPECT_EQ(p.kernels[0].label, "Conv+Add+Relu");
  EXPECT_EQ(p.kernels[0].out, p.graph.outputs[0]);
  EXPECT_EQ(count_ops(p.kernels[0].gemm.epilogue, EOp::Max), 1);  // the Relu
}

const char *kDepthwiseSilu = R"(
  graph opset 17
  input x: f32[1,16,6,6]
  const w: f32[16,1,3,3] = random(3)
  c = Conv(x, w) {group=16, pads=[1,1,1,1]}
  s = Sigmoid(c)
  m = Mul(c, s)
  y = READER(m)
  output y
)";

std::string with_reader(const std::string &reader) {
  std::string ir = kDepthwiseSilu;
  return ir.replace(ir.find("READER(m)"), 9, reader);
}

TEST(FuseEpilogues, DiamondActivationBecomesTheEpilogue) {
  Program p = run_until(with_reader("Relu(m)"), "fuse_epilogues");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Depthwise);
  EXPECT_EQ(p.kernels[0].label, "Conv+Sigmoid+Mul+Relu");
  EXPECT_EQ(count_ops(p.kernels[0].gemm.epilogue, EOp::Sigmoid), 1);  // computed once
}

TEST(FuseEpilogues, GeluSubgraphBecomesTheEpilogue) {
  // x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch exports GELU at opset 13.
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,5,5]
    const w: f32[8,8,1,1] = random(4)
    const s2: f32[] = [1.41421356]
    const one: f32[] = [1]
    const half: f32[] = [0.5]
    c = Conv(x, w)
    d = Div(c, s2)
    e = Erf(d)
    a = Add(e, one)
    m = Mul(c, a)
    y = Mul(m, half)
    output y
  )",
                        "fuse_epilogues");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].label, "Conv+Div+Erf+Add+Mul+Mul");
}

TEST(FuseEpilogues, AGraphOutputIsNotAbsorbedFrom) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,4,4]
    const w: f32[8,8,1,1] = random(5)
    c = Conv(x, w)
    y = Relu(c)
    output y, c
  )",
                        "fuse_epilogues");
  EXPECT_EQ(labels(p), (std::vector<std::string>{"Conv", "Relu"}));
}

}  // namespace
