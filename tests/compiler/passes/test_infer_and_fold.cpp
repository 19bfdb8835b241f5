// passes/infer_and_fold.cpp: shapes inferred, constant subgraphs folded,
// control flow spliced in, declarations checked.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(InferAndFold, InfersConvolutionShapes) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[1,3,8,8]
    const w: f32[4,3,3,3] = random(1)
    y = Conv(x, w) {pads=[1,1,1,1], strides=[2,2]}
    output y
  )",
                        "infer_and_fold");
  const Value &y = p.graph.v(p.graph.outputs[0]);
  EXPECT_TRUE(y.shape_known);
  EXPECT_EQ(y.dtype, DType::F32);
  EXPECT_EQ(y.shape, (Shape{1, 4, 4, 4}));
}

TEST(InferAndFold, FoldsConstantSubgraphs) {
  // PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain:
  // only the Reshape is left, with a constant shape.
  Program p = run_until(R"(
    graph opset 17
    input x: f32[2,3,4]
    const zero: i64[] = [0]
    const axes: i64[1] = [0]
    const minus1: i64[1] = [-1]
    s = Shape(x)
    n = Gather(s, zero) {axis=0}
    n1 = Unsqueeze(n, axes)
    shape = Concat(n1, minus1) {axis=0}
    y = Reshape(x, shape)
    output y
  )",
                        "infer_and_fold");
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  const Node &r = p.graph.nodes[0];
  EXPECT_EQ(r.op, "Reshape");
  ASSERT_TRUE(p.graph.v(r.in[1]).is_const());
  EXPECT_EQ(p.graph.v(r.in[1]).data->get_i(0), 2);
  EXPECT_EQ(p.graph.v(p.graph.outputs[0]).shape, (Shape{2, 12}));
}

TEST(InferAndFold, SplicesTheTakenBranchOfAConstantIf) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[4]
    const c: bool[] = [false]
    y = If(c) {
      then_branch=graph then { t = Neg(x)
                               output t },
      else_branch=graph else { e = Abs(x)
                               output e }
    }
    output y
  )",
                        "infer_and_fold");
  EXPECT_EQ(count_nodes(p.graph, "If"), 0);
  EXPECT_EQ(count_nodes(p.graph, "Neg"), 0);
  EXPECT_EQ(count_nodes(p.graph, "Abs"), 1);
}

TEST(InferAndFold, UnrollsACountedLoop) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[3]
    const trips: i64[] = [4]
    const yes: bool[] = [true]
    y = Loop(trips, yes, x) {
      body=graph body { input i, cond, acc
                        next = Add(acc, acc)
                        c2 = Identity(cond)
                        output c2, next }
    }
    output y
  )",
                        "infer_and_fold");
  EXPECT_EQ(count_nodes(p.graph, "Loop"), 0);
  EXPECT_EQ(count_nodes(p.graph, "Add"), 4);
}

TEST(InferAndFold, RefusesADeclarationInferenceContradicts) {
  std::string msg = error_of([] {
    run_until(R"(
      graph opset 17
      input x: f32[2,3]
      y: f32[3,2] = Relu(x)
      output y
    )",
              "infer_and_fold");
  });
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3,2]"), std::string::npos) << msg;
}

TEST(InferAndFold, NamesAnUnsupportedOp) {
  std::string msg = error_of([] {
    run_until(R"(
      graph opset 17
      input x: f32[2]
      y = NoSuchOp(x)
      output y
    )",
              "infer_and_fold");
  });
  EXPECT_NE(msg.find("NoSuchOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
}

}  // namespace
