// passes/fuse_qdq.cpp: QDQ convolutions and products as integer ops, and
// ops that only move elements between DQ and Q on the integers.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(FuseQdq, ConvOfDequantizedOperandsBecomesConvInteger) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,8,6,6]
    const xs: f32[] = [0.05]
    const xz: u8[] = [128]
    const w: i8[8,8,3,3] = random(1)
    const ws: f32[8] = fill(0.01)
    const wz: i8[8] = fill(0)
    q = QuantizeLinear(x, xs, xz)
    dq = DequantizeLinear(q, xs, xz)
    dw = DequantizeLinear(w, ws, wz) {axis=0}
    y = Conv(dq, dw) {pads=[1,1,1,1]}
    output y
  )",
                        "fuse_qdq");
  EXPECT_EQ(count_nodes(p.graph, "ConvInteger"), 1);
  EXPECT_EQ(count_nodes(p.graph, "Conv"), 0);
  // The weights' DQ is gone; the activation's zero point feeds the op.
  for (const Node &n : p.graph.nodes)
    if (n.op == "ConvInteger") {
      EXPECT_EQ(p.graph.v(n.in[1]).dtype, DType::I8);
      ASSERT_EQ(n.in.size(), 3u);
      EXPECT_EQ(p.graph.v(n.in[2]).data->get_i(0), 128);
    }
}

TEST(FuseQdq, MaxPoolBetweenDqAndQRunsOnTheIntegers) {
  Program p = run_until(R"(
    graph opset 17
    input x: u8[1,4,6,6]
    const s: f32[] = [0.1]
    const z: u8[] = [3]
    dq = DequantizeLinear(x, s, z)
    m = MaxPool(dq) {kernel_shape=[2,2], strides=[2,2]}
    y = QuantizeLinear(m, s, z)
    output y
  )",
                        "fuse_qdq");
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(p.graph.nodes[0].op, "MaxPool");
  EXPECT_EQ(p.graph.v(p.graph.nodes[0].in[0]).dtype, DType::U8);
}

TEST(FuseQdq, DifferentScalesStayFloat) {
  Program p = run_until(R"(
    graph opset 17
    input x: u8[1,4,6,6]
    const s: f32[] = [0.1]
    const s2: f32[] = [0.2]
    const z: u8[] = [3]
    dq = DequantizeLinear(x, s, z)
    m = MaxPool(dq) {kernel_shape=[2,2], strides=[2,2]}
    y = QuantizeLinear(m, s2, z)
    output y
  )",
                        "fuse_qdq");
  EXPECT_EQ(count_nodes(p.graph, "DequantizeLinear"), 1);
  EXPECT_EQ(count_nodes(p.graph, "QuantizeLinear"), 1);
}

}  // namespace
