// passes/fuse_elementwise.cpp: loop kernels inlined into their only
// reader, unless the reader would recompute a costly producer.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(FuseElementwise, ChainsBecomeOneLoopKernel) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[4,16]
    const c: f32[16] = random(1)
    s = Sigmoid(x)
    m = Mul(s, x)
    y = Add(m, c)
    output y
  )",
                        "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].label, "Sigmoid+Mul+Add");
  EXPECT_EQ(p.kernels[0].ins.size(), 2u);  // x (deduplicated) and c
}

TEST(FuseElementwise, CostlyProducerIsNotRecomputedPerWindow) {
  // The pool reads each SiLU output up to 9 times: it stays in memory.
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,16,6,6]
    const w: f32[16,1,3,3] = random(3)
    c = Conv(x, w) {group=16, pads=[1,1,1,1]}
    s = Sigmoid(c)
    m = Mul(c, s)
    y = MaxPool(m) {kernel_shape=[3,3]}
    output y
  )",
                        "fuse_elementwise");
  EXPECT_EQ(labels(p), (std::vector<std::string>{"Conv+Sigmoid+Mul", "MaxPool"}));
}

TEST(FuseElementwise, CheapProducersInlineIntoTheWindow) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,4,6,6]
    n = Neg(x)
    y = MaxPool(n) {kernel_shape=[3,3]}
    output y
  )",
                        "fuse_elementwise");
  EXPECT_EQ(labels(p), (std::vector<std::string>{"Neg+MaxPool"}));
}

}  // namespace
