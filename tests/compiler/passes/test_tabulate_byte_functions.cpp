// passes/tabulate_byte_functions.cpp: a costly function of one 8-bit
// element becomes a lookup in a 256-entry table.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

std::string sigmoid_between_qdq(const std::string &op) {
  return R"(
    graph opset 17
    input x: u8[1,16,5,5]
    const s: f32[] = [0.05]
    const z: u8[] = [128]
    const ys: f32[] = [0.004]
    const yz: u8[] = [0]
    dq = DequantizeLinear(x, s, z)
    f = )" +
         op + R"((dq)
    y = QuantizeLinear(f, ys, yz)
    output y
  )";
}

bool reads_a_table(const Program &p, const Kernel &k) {
  for (int v : k.ins)
    if (p.graph.v(v).is_const() && p.graph.v(v).numel() == 256) return true;
  return false;
}

TEST(TabulateByteFunctions, SigmoidOfAByteBecomesATable) {
  Program before = run_until(sigmoid_between_qdq("Sigmoid"), "fold_epilogue_constants");
  ASSERT_EQ(before.kernels.size(), 1u);
  EXPECT_EQ(count_ops(before.kernels[0].expr, EOp::Sigmoid), 1);
  Program p = run_until(sigmoid_between_qdq("Sigmoid"), "tabulate_byte_functions");
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel &k = p.kernels[0];
  EXPECT_EQ(count_ops(k.expr, EOp::Sigmoid), 0);
  EXPECT_TRUE(reads_a_table(p, k)) << describe(p);  // 256 bytes, indexed by the input byte
}

TEST(TabulateByteFunctions, CheapFunctionsStayExpressions) {
  // x + 1 on bytes costs less than a lookup.
  Program p = run_until(R"(
    graph opset 17
    input x: u8[64]
    const one: u8[] = [1]
    y = Add(x, one)
    output y
  )",
                        "tabulate_byte_functions");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_FALSE(reads_a_table(p, p.kernels[0]));
}

TEST(TabulateByteFunctions, FunctionsOfTwoTensorsStayExpressions) {
  Program p = run_until(R"(
    graph opset 17
    input x: u8[64]
    input z: u8[64]
    const s: f32[] = [0.05]
    const zp: u8[] = [128]
    a = DequantizeLinear(x, s, zp)
    b = DequantizeLinear(z, s, zp)
    e = Div(a, b)
    t = Tanh(e)
    y = QuantizeLinear(t, s, zp)
    output y
  )",
                        "tabulate_byte_functions");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_FALSE(reads_a_table(p, p.kernels[0]));
  EXPECT_EQ(count_ops(p.kernels[0].expr, EOp::Tanh), 1);
}

}  // namespace
