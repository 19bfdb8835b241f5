// passes/quantize_static.cpp (--quantize static): QuantizeLinear and
// DequantizeLinear from calibrated ranges around products with constant
// weights.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kConv = R"(
  graph opset 17
  input x: f32[1,4,6,6]
  const w: f32[8,4,3,3] = random(5)
  y = Conv(x, w) {pads=[1,1,1,1]}
  output y
)";

TEST(QuantizeStatic, ConvInputAndWeightsGetQdq) {
  CalibrationRanges ranges = {{"x", {-1.0, 3.0}}};
  PassOptions o;
  o.quantize.mode = Quantize::Static;
  o.quantize.ranges = &ranges;
  Program p = run_until(kConv, "quantize_static", "x86-64-avx2", o);
  EXPECT_EQ(count_nodes(p.graph, "QuantizeLinear"), 1);
  EXPECT_EQ(count_nodes(p.graph, "DequantizeLinear"), 2);
  for (const Node &n : p.graph.nodes) {
    if (n.op != "QuantizeLinear") continue;
    // uint8 over [-1, 3]: scale 4/255, zero point 64 (rounded -min/scale).
    EXPECT_NEAR(p.graph.v(n.in[1]).data->get_f(0), 4.0 / 255, 1e-7);
    EXPECT_EQ(p.graph.v(n.in[2]).dtype, DType::U8);
    EXPECT_EQ(p.graph.v(n.in[2]).data->get_i(0), 64);
  }
}

TEST(QuantizeStatic, NeedsRanges) {
  PassOptions o;
  o.quantize.mode = Quantize::Static;
  std::string msg = error_of([&] { run_until(kConv, "quantize_static", "x86-64-avx2", o); });
  EXPECT_NE(msg.find("--calibration"), std::string::npos) << msg;
}

TEST(QuantizeStatic, DoesNothingUnlessAsked) {
  Program p = run_until(kConv, "quantize_static");
  EXPECT_EQ(count_nodes(p.graph, "QuantizeLinear"), 0);
}

}  // namespace
