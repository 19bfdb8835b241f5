// passes/fold_epilogue_constants.cpp: requantization by multiply-add and
// per-channel constants of an epilogue as tables computed on the host.
#include "pass_test.h"
#include "qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const Kernel &qgemm(const Program &p) {
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::QGemm) return k;
  throw std::runtime_error("no QGemm kernel");
}

TEST(FoldEpilogueConstants, RequantizationBecomesAMultiplyAdd) {
  Program before = run_until(qdq_conv(8, true), "fuse_residuals");
  EXPECT_GE(count_ops(qgemm(before).gemm.epilogue, EOp::Div), 1);
  Program p = run_until(qdq_conv(8, true), "fold_epilogue_constants");
  EXPECT_EQ(count_ops(qgemm(p).gemm.epilogue, EOp::Div), 0);
  // The per-channel multiplier is one table read, not a product of scales.
  int loads = count_ops(qgemm(p).gemm.epilogue, EOp::Load),
      before_loads = count_ops(qgemm(before).gemm.epilogue, EOp::Load);
  EXPECT_LE(loads, before_loads);
}

TEST(FoldEpilogueConstants, FloatEpiloguesOfActivationsOnlyStay) {
  const char *ir = R"(
    graph opset 17
    input x: f32[1,8,4,4]
    const w: f32[8,8,1,1] = random(1)
    c = Conv(x, w)
    y = Relu(c)
    output y
  )";
  Program before = run_until(ir, "fuse_residuals"), p = run_until(ir, "fold_epilogue_constants");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(to_string(p.kernels[0].gemm.epilogue), to_string(before.kernels[0].gemm.epilogue));
}

}  // namespace
