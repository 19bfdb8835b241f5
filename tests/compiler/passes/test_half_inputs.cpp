// passes/half_inputs.cpp: under --precision fp16, the tensors that only
// half products read are stored as half, and the depthwise convolutions
// over them multiply in half.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

PassOptions half_options(Precision pr = Precision::F16) {
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  o.pack.weights = o.winograd.weights = WeightStorage::F16;
  o.pack.precision = o.winograd.precision = pr;
  return o;
}

// x (5 channels) -> 1x1 (a GEMM of 5 input channels: float products) ->
// Relu -> depthwise 3x3 -> 1x1 to 12 channels (a half GEMM) -> `tail`.
std::string block(const std::string &tail, const std::string &out = "z") {
  return R"(
    graph opset 17
    input x: f32[1,5,9,9]
    const a: f32[24,5,1,1] = random(1)
    const d: f32[24,1,3,3] = random(2)
    const b: f32[12,24,1,1] = random(3)
    p = Conv(x, a)
    h = Relu(p)
    e = Conv(h, d) {pads=[1,1,1,1], group=24}
    z = Conv(e, b)
)" + tail +
         "    output " + out + "\n";
}

DType dtype_of(const Program &p, const std::string &name) {
  for (const Value &v : p.graph.values)
    if (v.name == name) return v.dtype;
  ADD_FAILURE() << "no value " << name;
  return DType::F32;
}

const Kernel &depthwise(const Program &p) {
  const Kernel *k = only(p, KernelKind::Depthwise);
  if (!k) throw std::runtime_error("not one depthwise kernel:\n" + describe(p));
  return *k;
}

TEST(HalfInputs, WhatOnlyHalfProductsReadIsStoredAsHalf) {
  Program p = run_until_with(block(""), "pack_weights", half_target("aarch64-neon-fp16"), half_options());
  // h: read by the depthwise only; e: by the half GEMM only.
  EXPECT_EQ(dtype_of(p, "h"), DType::F16) << describe(p);
  EXPECT_EQ(dtype_of(p, "e"), DType::F16);
  EXPECT_EQ(dtype_of(p, "x"), DType::F32);  // a graph input
  EXPECT_EQ(dtype_of(p, "z"), DType::F32);  // the output
  const Kernel &dw = depthwise(p);
  EXPECT_TRUE(dw.gemm.half);
  EXPECT_EQ(dw.gemm.nr, 8);  // half columns
  EXPECT_EQ(p.graph.v(dw.gemm.packed).dtype, DType::F16);
  int half_gemms = 0;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) {
      half_gemms += k.gemm.half;
      // Every GEMM over a half input computes in half.
      if (p.graph.v(k.ins[0]).dtype == DType::F16) EXPECT_TRUE(k.gemm.half) << k.label;
    }
  EXPECT_EQ(half_gemms, 1) << describe(p);
  // The depthwise definition reads its input as half.
  bool half_load = false;
  visit(dw.expr, [&](const Expr &e) { half_load = half_load || (e.op == EOp::Load && e.type == DType::F16); });
  EXPECT_TRUE(half_load);
}

TEST(HalfInputs, AnotherReaderKeepsTheTensorFloat) {
  // h also read by a max pool: float, and the depthwise multiplies in float.
  Program p = run_until_with(block(R"(    m = MaxPool(h) {kernel_shape=[3,3], pads=[1,1,1,1]}
    s = ReduceSum(m) {keepdims=0}
    w = Mul(z, s)
)",
                                   "w"),
                             "pack_weights", half_target("aarch64-neon-fp16"), half_options());
  EXPECT_EQ(dtype_of(p, "h"), DType::F32) << describe(p);
  EXPECT_FALSE(depthwise(p).gemm.half);
  EXPECT_EQ(depthwise(p).gemm.nr, 4);
  EXPECT_EQ(dtype_of(p, "e"), DType::F16);  // still only the half GEMM reads e
}

TEST(HalfInputs, OnlyUnderHalfPrecisionOnHalfArithmetic) {
  for (const auto &[target, pr] : {std::pair<const char *, Precision>{"aarch64-neon-fp16", Precision::F32},
                                   {"aarch64-neon-dot", Precision::F16}}) {
    Program p = run_until_with(block(""), "pack_weights", half_target(target), half_options(pr));
    for (const Value &v : p.graph.values)
      if (!v.is_const()) EXPECT_NE(v.dtype, DType::F16) << target << " " << v.name;
    EXPECT_FALSE(depthwise(p).gemm.half) << target;
  }
}

TEST(HalfInputs, WeightsBeyondHalfsRangeKeepTheDepthwiseFloat) {
  // A depthwise weight of 1e5 (past 65504): its weights stay float, and so
  // do its products and its input.
  Program p = run_until_with(R"(
    graph opset 17
    input x: f32[1,5,9,9]
    const a: f32[16,5,1,1] = random(1)
    const d: f32[16,1,1,1] = fill(100000)
    p = Conv(x, a)
    e = Conv(p, d) {group=16}
    output e
  )",
                             "pack_weights", half_target("aarch64-neon-fp16"), half_options());
  EXPECT_EQ(dtype_of(p, "p"), DType::F32) << describe(p);
  EXPECT_FALSE(depthwise(p).gemm.half);
}

}  // namespace
