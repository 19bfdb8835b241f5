// passes/bypass_views.cpp: readers of a view with its value's shape and
// type read the value itself.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kViews = R"(
  graph opset 17
  input x: f32[4,16]
  const shape: i64[2] = [8, 8]
  n = Neg(x)
  i = Identity(n)
  a = Add(i, n)
  r = Reshape(a, shape)
  y = Abs(r)
  output y
)";

TEST(BypassViews, IdentityReadersReadTheValue) {
  Program before = run_until(kViews, "lower_to_kernels");
  EXPECT_EQ(before.alias.size(), 2u);
  Program p = run_until(kViews, "bypass_views");
  // The Identity is gone (its reader reads n in both slots); the Reshape
  // changes the shape and stays a view.
  EXPECT_EQ(p.alias.size(), 1u);
  const Kernel &add = p.kernels[1];
  ASSERT_EQ(add.label, "Add");
  ASSERT_EQ(add.ins.size(), 1u) << describe(p);  // one slot, read twice
  EXPECT_EQ(add.ins[0], p.kernels[0].out);
  EXPECT_EQ(count_ops(add.expr, EOp::Load), 2);
}

TEST(BypassViews, TheChainThenFusesThroughIt) {
  Program p = run_until(kViews, "fuse_elementwise");
  EXPECT_EQ(labels(p), (std::vector<std::string>{"Neg+Add", "Abs"}));
}

}  // namespace
