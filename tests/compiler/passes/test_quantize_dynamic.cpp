// passes/quantize_dynamic.cpp (--quantize dynamic): float products with
// constant weights become ONNX Runtime's dynamically quantized ops.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kMatMuls = R"(
  graph opset 17
  input x: f32[4,16]
  const w: f32[16,8] = random(2)
  y = MatMul(x, w)
  t = Transpose(y) {perm=[1,0]}
  z = MatMul(t, y)
  output z
)";

PassOptions dynamic() {
  PassOptions o;
  o.quantize.mode = Quantize::Dynamic;
  return o;
}

TEST(QuantizeDynamic, ConstantWeightsBecomeInt8) {
  Program p = run_until(kMatMuls, "quantize_dynamic", "x86-64-avx2", dynamic());
  EXPECT_EQ(count_nodes(p.graph, "com.microsoft::DynamicQuantizeMatMul"), 1);
  // The product of two activations stays float.
  EXPECT_EQ(count_nodes(p.graph, "MatMul"), 1);
  for (const Node &n : p.graph.nodes)
    if (n.op == "DynamicQuantizeMatMul") {
      const Value &w = p.graph.v(n.in[1]);
      EXPECT_EQ(w.dtype, DType::I8);
      EXPECT_EQ(w.shape, (Shape{16, 8}));
      EXPECT_EQ(p.graph.v(n.in[2]).shape, (Shape{8}));  // a scale per output channel
    }
}

TEST(QuantizeDynamic, DoesNothingUnlessAsked) {
  Program p = run_until(kMatMuls, "quantize_dynamic");
  EXPECT_EQ(count_nodes(p.graph, "com.microsoft::DynamicQuantizeMatMul"), 0);
  EXPECT_EQ(count_nodes(p.graph, "MatMul"), 2);
}

TEST(QuantizeDynamic, LstmWithConstantWeights) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[5,1,8]
    const w: f32[1,64,8] = random(3)
    const r: f32[1,64,16] = random(4)
    y, h, c = LSTM(x, w, r) {hidden_size=16}
    output y
  )",
                        "quantize_dynamic", "x86-64-avx2", dynamic());
  EXPECT_EQ(count_nodes(p.graph, "com.microsoft::DynamicQuantizeLSTM"), 1);
  EXPECT_EQ(count_nodes(p.graph, "LSTM"), 0);
}

}  // namespace
