// passes/fuse_residuals.cpp: the residual add of a QDQ graph (DQ of both
// operands, Add, Q) joins the convolution that feeds it.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kResidual = R"(
  graph opset 17
  input x: u8[1,8,6,6]
  const s: f32[] = [0.05]
  const z: u8[] = [128]
  const w: i8[8,8,3,3] = random(1)
  const ws: f32[8] = fill(0.01)
  const wz: i8[8] = fill(0)
  const cs: f32[] = [0.1]
  const cz: u8[] = [100]
  dq = DequantizeLinear(x, s, z)
  dw = DequantizeLinear(w, ws, wz) {axis=0}
  c = Conv(dq, dw) {pads=[1,1,1,1]}
  qc = QuantizeLinear(c, cs, cz)
  dc = DequantizeLinear(qc, cs, cz)
  a = Add(dc, dq)
  qa = QuantizeLinear(a, s, z)
  output qa
)";

TEST(FuseResiduals, QuantizedResidualAddJoinsTheConvolution) {
  Program before = run_until(kResidual, "fuse_elementwise");
  ASSERT_EQ(before.kernels.size(), 2u);
  EXPECT_EQ(before.kernels[0].kind, KernelKind::QGemm);
  Program p = run_until(kResidual, "fuse_residuals");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::QGemm);
  EXPECT_EQ(p.kernels[0].out, p.graph.outputs[0]);
  // The epilogue reads the residual: x, which the convolution reads too.
  const Kernel &k = p.kernels[0];
  int x = p.graph.inputs[0], residual_loads = 0;
  visit(k.gemm.epilogue, [&](const Expr &e) { residual_loads += e.op == EOp::Load && k.ins[e.id] == x; });
  EXPECT_EQ(residual_loads, 1) << to_string(k.gemm.epilogue);
}

TEST(FuseResiduals, AReaderOfTheOutputAloneStaysALoop) {
  std::string ir = kResidual;
  ir.replace(ir.find("a = Add(dc, dq)"), 15, "a = Sigmoid(dc)");
  Program p = run_until(ir, "fuse_residuals");
  EXPECT_EQ(p.kernels.size(), 2u);
}

}  // namespace
