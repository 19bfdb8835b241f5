// passes/fold_batchnorm.cpp: BatchNormalization after Conv becomes the
// convolution's weights and bias.
#include <cmath>

#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kConvBn = R"(
  graph opset 17
  input x: f32[1,2,4,4]
  const w: f32[3,2,1,1] = [1, 2, 3, 4, 5, 6]
  const b: f32[3] = [0.5, -1, 2]
  const s: f32[3] = [2, 0.5, 1]
  const bb: f32[3] = [1, 1, -1]
  const mean: f32[3] = [0.5, 0, 1]
  const var: f32[3] = [4, 1, 0.25]
  c = Conv(x, w, b)
  y = BatchNormalization(c, s, bb, mean, var) {epsilon=0.0}
  z = Relu(y)
  output z
)";

TEST(FoldBatchnorm, ScalesWeightsAndBias) {
  Program p = run_until(kConvBn, "fold_batchnorm");
  ASSERT_EQ(p.graph.nodes.size(), 2u);  // Conv, Relu
  const Node &conv = p.graph.nodes[0];
  ASSERT_EQ(conv.op, "Conv");
  EXPECT_EQ(p.graph.nodes[1].in[0], conv.out[0]);  // the Relu reads the conv
  const ConstData &w = *p.graph.v(conv.in[1]).data;
  const ConstData &b = *p.graph.v(conv.in[2]).data;
  // Channel k: w * s/sqrt(var), (b - mean) * s/sqrt(var) + bb.
  const float k[3] = {2 / 2.0f, 0.5f / 1, 1 / 0.5f};
  const float w0[6] = {1, 2, 3, 4, 5, 6}, b0[3] = {0.5f, -1, 2}, mean[3] = {0.5f, 0, 1}, bb[3] = {1, 1, -1};
  for (int c = 0; c < 3; ++c) {
    EXPECT_FLOAT_EQ(w.as<float>()[2 * c], w0[2 * c] * k[c]);
    EXPECT_FLOAT_EQ(w.as<float>()[2 * c + 1], w0[2 * c + 1] * k[c]);
    EXPECT_FLOAT_EQ(b.as<float>()[c], (b0[c] - mean[c]) * k[c] + bb[c]);
  }
}

TEST(FoldBatchnorm, KeepsABatchNormWhoseInputHasOtherReaders) {
  std::string ir = kConvBn;
  ir.replace(ir.find("output z"), 8, "output z, c");
  Program p = run_until(ir, "fold_batchnorm");
  EXPECT_EQ(count_nodes(p.graph, "BatchNormalization"), 1);
}

}  // namespace
