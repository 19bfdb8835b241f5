// Passes, IR in -> IR out: fusion, batch-norm folding, layouts, memory plan.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_import.h"
#include "onnx_builder.h"
#include "passes/pass.h"

using namespace tinyrt;
using tinyrt::test::OnnxBuilder;

namespace {

Program run_until(OnnxBuilder &b, const std::string &last) {
  Program p;
  p.graph = import_onnx_file(b.save(), {}).graph;
  static Target t = resolve_target("x86-64-avx2");
  PassContext c{p, t, nullptr};
  for (const Pass &pass : pipeline()) {
    pass.run(c, {});
    verify_program(p, pass.name);
    if (last == pass.name) break;
  }
  return p;
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (float)((i * 37) % 11) - 0.3f;
  return v;
}

// x -> Conv(3x3, pad 1) -> [BatchNormalization] -> Add(residual) -> Relu
OnnxBuilder conv_block(bool with_bn) {
  OnnxBuilder b;
  b.input("x", {1, 8, 6, 6});
  b.init("w", {8, 8, 3, 3}, ramp(8 * 8 * 9, 0.1f));
  b.init("bias", {8}, ramp(8, 1));
  auto &c = b.node("Conv", {"x", "w", "bias"}, {"c"});
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  std::string last = "c";
  if (with_bn) {
    b.init("s", {8}, ramp(8, 0.5f));
    b.init("bb", {8}, ramp(8, 0.2f));
    b.init("mean", {8}, ramp(8, 0.1f));
    b.init("var", {8}, std::vector<float>(8, 2.0f));
    b.node("BatchNormalization", {"c", "s", "bb", "mean", "var"}, {"bn"});
    last = "bn";
  }
  b.node("Add", {last, "x"}, {"a"});
  b.node("Relu", {"a"}, {"y"});
  b.output("y", {1, 8, 6, 6});
  return b;
}

}  // namespace

TEST(FoldBatchnorm, ScalesWeightsAndBias) {
  OnnxBuilder b = conv_block(true);
  Program p = run_until(b, "fold_batchnorm");
  ASSERT_EQ(p.graph.nodes.size(), 3u);  // Conv, Add, Relu
  const Node &conv = p.graph.nodes[0];
  ASSERT_EQ(conv.op, "Conv");
  const ConstData &w = *p.graph.v(conv.in[1]).data;
  std::vector<float> w0 = ramp(8 * 8 * 9, 0.1f), s = ramp(8, 0.5f);
  float k = s[3] / std::sqrt(2.0f + 1e-5f);
  EXPECT_NEAR(w.as<float>()[3 * 72 + 5], w0[3 * 72 + 5] * k, 1e-6);
  EXPECT_EQ(p.graph.nodes[1].in[0], conv.out[0]);  // the Add now reads the conv
}

TEST(FuseEpilogues, ConvBiasResidualReluIsOneKernel) {
  OnnxBuilder b = conv_block(true);
  Program p = run_until(b, "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);
  EXPECT_EQ(p.kernels[0].label, "Conv+Add+Relu");
  EXPECT_EQ(p.kernels[0].out, p.graph.outputs[0]);
}

TEST(FuseElementwise, ChainsBecomeOneLoopKernel) {
  OnnxBuilder b;
  b.input("x", {4, 16});
  b.init("c", {16}, ramp(16, 1));
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Mul", {"s", "x"}, {"m"});
  b.node("Add", {"m", "c"}, {"y"});
  b.output("y", {4, 16});
  Program p = run_until(b, "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].label, "Sigmoid+Mul+Add");
  EXPECT_EQ(p.kernels[0].ins.size(), 2u);  // x (deduplicated) and c
}

TEST(BypassViews, IdentityBetweenElementwiseOpsDoesNotSplitTheChain) {
  OnnxBuilder b;
  b.input("x", {4, 16});
  b.node("Neg", {"x"}, {"n"});
  b.node("Identity", {"n"}, {"i"});
  b.node("Add", {"i", "n"}, {"a"});  // the value once directly, once through the view
  b.node("Reshape", {"a", "shape"}, {"r"});
  b.init_i64("shape", {2}, {8, 8});
  b.node("Abs", {"r"}, {"y"});
  b.output("y", {8, 8});
  Program before = run_until(b, "lower_to_kernels");
  EXPECT_EQ(before.alias.size(), 2u);
  Program p = run_until(b, "fuse_elementwise");
  // Neg and Add fuse through the Identity (Add reads n in one slot); the
  // Reshape changes the shape, so it stays a view and Abs a kernel of its own.
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].label, "Neg+Add");
  EXPECT_EQ(p.kernels[0].ins.size(), 1u);
  EXPECT_EQ(p.alias.size(), 1u);
}

TEST(ChooseLayouts, ConvOutputsAreChannelsLastAndViewsRowMajor) {
  OnnxBuilder b;
  b.input("x", {1, 8, 5, 5});
  b.init("w", {8, 8, 1, 1}, ramp(64, 0.3f));
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Flatten", {"c"}, {"y"});
  b.output("y", {1, 200});
  Program p = run_until(b, "choose_layouts");
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.kernels[0].label, "ToChannelsLast");  // the application's NCHW input
  EXPECT_EQ(p.perm_of(p.kernels[0].out), (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(p.kernels[1].ins[0], p.kernels[0].out);
  EXPECT_EQ(p.perm_of(p.kernels[1].out), (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(p.kernels[2].label, "ToRowMajor");  // Flatten views a row-major copy
  EXPECT_TRUE(p.perm_of(p.kernels[2].out).empty());
}

TEST(ChooseLayouts, FewChannelInputNeedsNoCopy) {
  OnnxBuilder b;
  b.input("x", {1, 1, 9, 7});
  b.init("w", {8, 1, 3, 2}, ramp(48, 0.3f));
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y", {1, 8, 7, 6});
  Program p = run_until(b, "choose_layouts");
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);  // not mistaken for depthwise
  EXPECT_EQ(p.kernels[0].ins[0], p.graph.inputs[0]);
}

// x * sigmoid(x) after a depthwise convolution: the diamond becomes the
// convolution's epilogue.
OnnxBuilder depthwise_silu(const std::string &reader) {
  OnnxBuilder b;
  b.input("x", {1, 16, 6, 6});
  b.init("w", {16, 1, 3, 3}, ramp(144, 0.05f));
  auto &conv = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(conv, "group", (int64_t)16);
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Sigmoid", {"c"}, {"s"});
  b.node("Mul", {"c", "s"}, {"m"});
  if (reader == "MaxPool") {
    OnnxBuilder::attr(b.node("MaxPool", {"m"}, {"y"}), "kernel_shape", std::vector<int64_t>{3, 3});
    b.output("y", {1, 16, 4, 4});
  } else {
    b.node("Relu", {"m"}, {"y"});
    b.output("y", {1, 16, 6, 6});
  }
  return b;
}

TEST(FuseEpilogues, DiamondActivationBecomesTheEpilogue) {
  OnnxBuilder b = depthwise_silu("Relu");
  Program p = run_until(b, "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Depthwise);
  EXPECT_EQ(p.kernels[0].label, "Conv+Sigmoid+Mul+Relu");
  int sigmoids = 0;
  visit(p.kernels[0].gemm.epilogue, [&](const Expr &e) { sigmoids += e.op == EOp::Sigmoid; });
  EXPECT_EQ(sigmoids, 1);
}

TEST(FuseEpilogues, GeluSubgraphBecomesTheEpilogue) {
  // x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch exports GELU at opset 13.
  OnnxBuilder b;
  b.input("x", {1, 8, 5, 5});
  b.init("w", {8, 8, 1, 1}, ramp(64, 0.02f));
  b.init("s2", {}, {1.41421356f});
  b.init("one", {}, {1.0f});
  b.init("half", {}, {0.5f});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Div", {"c", "s2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"c", "a"}, {"m"});
  b.node("Mul", {"m", "half"}, {"y"});
  b.output("y", {1, 8, 5, 5});
  Program p = run_until(b, "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Gemm);
  EXPECT_EQ(p.kernels[0].label, "Conv+Div+Erf+Add+Mul+Mul");
}

TEST(FuseElementwise, CostlyProducerIsNotRecomputedPerWindow) {
  // The pool reads each SiLU output up to 9 times: it stays in memory.
  OnnxBuilder b = depthwise_silu("MaxPool");
  Program p = run_until(b, "fuse_elementwise");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].label, "Conv+Sigmoid+Mul");
  EXPECT_EQ(p.kernels[1].label, "MaxPool");
}

TEST(PlanMemory, BuffersLiveTogetherNeverOverlap) {
  OnnxBuilder b;
  b.input("x", {1, 64});
  std::string prev = "x";
  for (int i = 0; i < 5; ++i) {
    std::string w = "w" + std::to_string(i), y = "y" + std::to_string(i), r = "r" + std::to_string(i);
    b.init(w, {64, 64}, ramp(64 * 64, 0.01f));
    b.node("MatMul", {prev, w}, {y});
    b.node("Add", {y, prev}, {r});  // the residual keeps two buffers live
    prev = r;
  }
  b.output(prev, {1, 64});
  Program p = run_until(b, "plan_memory");
  const auto &bufs = p.stats.buffers;
  ASSERT_GE(bufs.size(), 2u);
  int64_t top = 0;
  for (size_t i = 0; i < bufs.size(); ++i) {
    top = std::max(top, bufs[i].offset + bufs[i].bytes);
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool live_together = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
      bool apart = bufs[i].offset + bufs[i].bytes <= bufs[j].offset || bufs[j].offset + bufs[j].bytes <= bufs[i].offset;
      EXPECT_TRUE(!live_together || apart) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_EQ(top, p.stats.arena_bytes);
}

TEST(PlanMemory, ChainReusesBuffersAndMeetsTheBound) {
  OnnxBuilder b;
  b.input("x", {1, 256});
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    std::string w = "w" + std::to_string(i), y = "y" + std::to_string(i);
    b.init(w, {256, 256}, ramp(256 * 256, 0.01f));
    b.node("MatMul", {prev, w}, {y});
    prev = y;
  }
  b.output(prev, {1, 256});
  Program p = run_until(b, "plan_memory");
  // Two 1 KiB buffers alternate: input/output of each step.
  EXPECT_EQ(p.stats.lower_bound_bytes, 2048);
  EXPECT_EQ(p.stats.arena_bytes, 2048);
  int64_t o0 = p.storage[p.kernels[0].out].offset, o1 = p.storage[p.kernels[1].out].offset;
  EXPECT_NE(o0, o1);
  EXPECT_EQ(o0 % 64, 0);
}

TEST(PlanMemory, ElementwiseKernelsWriteOverDyingInputs) {
  // MatMul -> Softmax: exp(h - max) reads h at its own index and h dies
  // there, so it writes over h.
  OnnxBuilder b;
  b.input("x", {4, 32});
  b.init("w", {32, 64}, ramp(32 * 64, 0.01f));
  b.node("MatMul", {"x", "w"}, {"h"});
  auto &sm = b.node("Softmax", {"h"}, {"y"});
  OnnxBuilder::attr(sm, "axis", (int64_t)1);
  b.output("y", {4, 64});
  Program p = run_until(b, "plan_memory");
  int h = p.kernels[0].out, ex = -1;
  for (const Kernel &k : p.kernels)
    if (k.label == "Softmax" && k.ins.size() == 2 && k.ins[0] == h && p.graph.v(k.out).shape == Shape{4, 64}) ex = k.out;
  ASSERT_GE(ex, 0);
  EXPECT_EQ(p.storage[ex].offset, p.storage[h].offset);
  EXPECT_LE(p.stats.arena_bytes, p.stats.lower_bound_bytes);
}

namespace {

// A Relu over [2, 5] through every pass before prove_bounds; the test then
// replaces its one loop kernel's expression and runs the proof.
struct ProveCase {
  Program p;
  Target t = resolve_target("x86-64-avx2");
  ProveCase() {
    OnnxBuilder b;
    b.input("x", {2, 5});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", {2, 5});
    p = run_until(b, "split_recurrent");
  }
  // The proof's message, or "" when it holds.
  std::string prove(ExprP e, std::vector<int> extra_ins = {}) {
    Kernel &k = p.kernels.at(0);
    k.expr = e;
    for (int v : extra_ins) k.ins.push_back(v);
    PassContext c{p, t, nullptr};
    try {
      prove_bounds(c);
    } catch (const CompileError &err) {
      return err.what();
    }
    return "";
  }
  ExprP x(ExprP i0, ExprP i1) { return load(0, DType::F32, {i0, i1}); }
  int int_const(std::vector<int64_t> v) {
    Bytes b((const uint8_t *)v.data(), (const uint8_t *)(v.data() + v.size()));
    return p.graph.add_const("idx", make_const(DType::I64, {(int64_t)v.size()}, std::move(b)));
  }
};

}  // namespace

TEST(ProveBounds, IdentityLoadHolds) {
  ProveCase c;
  EXPECT_EQ(c.prove(c.x(var(0), var(1))), "");
}

TEST(ProveBounds, ShiftedLoadIsRefusedWithItsRange) {
  ProveCase c;
  std::string m = c.prove(c.x(var(0), var(1) + 1));
  EXPECT_NE(m.find("cannot prove its reads of 'x' [2,5]"), std::string::npos) << m;
  EXPECT_NE(m.find("may be 1 to 5"), std::string::npos) << m;
}

TEST(ProveBounds, GuardsNarrowBothBranches) {
  ProveCase c;
  // Padding: the load only where the shifted index is inside.
  ExprP i = var(1) - 1;
  EXPECT_EQ(c.prove(select(in_range(i, 5), c.x(var(0), i), cst(DType::F32, 0))), "");
  // Concat's choice: i < 3 reads at i, otherwise at i - 3 (in [0, 2)).
  EXPECT_EQ(c.prove(select(lt(var(1), cidx(3)), c.x(var(0), var(1)), c.x(var(0), var(1) - 3))), "");
  // A guard next to the load in an And does not protect it (both sides run).
  std::string m = c.prove(cast(land(in_range(i, 5), bin(EOp::Gt, c.x(var(0), i), cst(DType::F32, 0))), DType::F32));
  EXPECT_NE(m.find("cannot prove"), std::string::npos) << m;
}

TEST(ProveBounds, DataIndicesNeedClampsConstantsTheirValues) {
  ProveCase c;
  // An index read from a tensor may be anything until clamped.
  int idx = c.int_const({0, 4, 3, 1, 2});
  ExprP raw = cast(load(1, DType::I64, {var(1)}), kIndexType);
  EXPECT_EQ(c.prove(c.x(var(0), raw), {idx}), "");  // a constant: 0 .. 4
  ProveCase d;
  int big = d.int_const({0, 4, 5, 1, 2});
  std::string m = d.prove(d.x(var(0), cast(load(1, DType::I64, {var(1)}), kIndexType)), {big});
  EXPECT_NE(m.find("may be 0 to 5"), std::string::npos) << m;
  ProveCase e;
  int in = e.p.graph.inputs.at(0);
  ExprP data = cast(load(1, DType::F32, {var(0), var(1)}), kIndexType);
  EXPECT_NE(e.prove(e.x(var(0), data), {in}).find("cannot prove"), std::string::npos);
  EXPECT_EQ(e.prove(e.x(var(0), emax(cidx(0), emin(cidx(4), data)))), "");
}

TEST(ProveBounds, ComparisonsBoundDifferences) {
  ProveCase c;
  // ReverseSequence: t < len reads at (len - t) - 1, len clamped to [0, 5].
  ExprP len = emax(cidx(0), emin(cidx(5), cast(load(1, DType::F32, {var(0), cidx(0)}), kIndexType)));
  int in = c.p.graph.inputs.at(0);
  EXPECT_EQ(c.prove(c.x(var(0), select(lt(var(1), len), (len - var(1)) - 1, var(1))), {in}), "");
}
