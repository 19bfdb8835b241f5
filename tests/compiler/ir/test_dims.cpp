// Run-time extents in the IR (ir/graph.h DimSym, the Dim leaf, RVar::n)
// and symbolic values (ops/sym_values.cpp).
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops/op_registry.h"

using namespace tinyrt;

TEST(Dims, BaseAndDerivedExtents) {
  Graph g;
  int t = g.base_sym("T", 1, 128);
  EXPECT_EQ(g.base_sym("T", 1, 128), t);  // one name, one extent
  EXPECT_THROW(g.base_sym("T", 1, 64), CompileError);
  EXPECT_THROW(g.base_sym("U", 5, 3), CompileError);
  ExprP T = g.sym_expr(t);
  ASSERT_EQ(T->op, EOp::Dim);
  // T * 40 is one derived extent however it is reached, bounded by 40..5120.
  int d = g.derived_sym(T * 40, "x[0]");
  EXPECT_EQ(g.derived_sym(T * 40, "y[1]"), d);
  EXPECT_EQ(g.syms[(size_t)d].lo, 40);
  EXPECT_EQ(g.syms[(size_t)d].hi, 5120);
  // (T * 40) / 40 is T again; a constant is no extent; T itself is T.
  EXPECT_EQ(g.derived_sym((T * 40) / cidx(40), "z"), t);
  EXPECT_EQ(g.derived_sym(cidx(7), "c"), -1);
  // A dimension fixed by its range is a constant.
  EXPECT_TRUE(dim_leaf(3, 5, 5)->is_const_int(5));
}

TEST(Dims, ValuesReadTheirExtents) {
  Graph g;
  int t = g.base_sym("T", 2, 16);
  int x = g.add_value("x", DType::F32, {1, 16, 40});
  g.v(x).dims = {-1, t, -1};
  EXPECT_TRUE(g.v(x).is_dynamic());
  EXPECT_TRUE(g.extent(x, 0)->is_const_int(1));
  EXPECT_EQ(g.extent(x, 1)->op, EOp::Dim);
  // The range analysis and the proof see an extent as its bounds.
  Interval r = index_range(g.extent(x, 1) - 1, {});
  EXPECT_TRUE(r.known);
  EXPECT_EQ(r.lo, 1);
  EXPECT_EQ(r.hi, 15);
}

TEST(Dims, RuntimeReductionExtent) {
  ExprP T = dim_leaf(0, 1, 64);
  ExprP sum = reduce(ReduceKind::Sum, {{kFirstReduceVar, 64}}, load(0, DType::F32, {var(kFirstReduceVar)}));
  ExprP dyn = with_runtime_extent(sum, kFirstReduceVar, T);
  ASSERT_EQ(dyn->op, EOp::Reduce);
  ASSERT_TRUE(dyn->rvars[0].n);
  EXPECT_EQ(dyn->rvars[0].extent, 64);  // the bound stays
  EXPECT_TRUE(has_dims(dyn));
  EXPECT_FALSE(has_dims(sum));
  // A sum of a constant over a run-time extent is not folded to a product.
  ExprP c = reduce(ReduceKind::Sum, {{kFirstReduceVar, 64, T}}, cst(DType::F32, 1));
  EXPECT_EQ(c->op, EOp::Reduce);
}

TEST(Dims, SymbolicElementsAndTheirEquality) {
  Graph g;
  int t = g.base_sym("T", 1, 100);
  ExprP T = g.sym_expr(t);
  // Exporters' int64 arithmetic on a shape element becomes index arithmetic.
  ExprP e = bin(EOp::Mul, cast(T, DType::I64), cst(DType::I64, 4));
  ExprP i = sym_index(e);
  EXPECT_EQ(i->type, kIndexType);
  EXPECT_TRUE(same_extent(g, i, T * 4));
  EXPECT_FALSE(same_extent(g, i, T * 4 + 1));
  // (T * 64) / 16 is T * 4 for every T, (T + 3) / 4 * 4 is not T.
  EXPECT_TRUE(same_extent(g, (T * 64) / cidx(16), T * 4));
  EXPECT_FALSE(same_extent(g, (T + 3) / cidx(4) * 4, T));
  EXPECT_THROW(sym_index(cst(DType::F32, 1.5)), CompileError);
}

TEST(Dims, ProducedExtentsAreDistinctFromInputs) {
  Graph g;
  int t = g.base_sym("T", 1, 8);
  // A data-dependent extent (NonZero's count): from 0, its own even when
  // an input dimension has the same name, and one per name.
  int c = g.produced_sym("T", 32);
  EXPECT_NE(c, t);
  EXPECT_TRUE(g.syms[(size_t)c].produced);
  EXPECT_EQ(g.syms[(size_t)c].lo, 0);
  EXPECT_EQ(g.syms[(size_t)c].hi, 32);
  EXPECT_EQ(g.produced_sym("T", 32), c);
  EXPECT_EQ(g.base_sym("T", 1, 8), t);
  EXPECT_EQ(g.sym_expr(c)->op, EOp::Dim);
}

TEST(Dims, ConditionsOnExtentsAreIndexExpressions) {
  Graph g;
  ExprP N = g.sym_expr(g.produced_sym("n", 300));
  // torchvision's "no boxes" test: numel == 0 as 1 or 0, and the extent of
  // an If merge that takes 0 rows then and N else.
  ExprP empty = sym_index(bin(EOp::Eq, cast(N, DType::I64), cst(DType::I64, 0)));
  EXPECT_EQ(empty->type, kIndexType);
  ExprP rows = select(bin(EOp::Ne, empty, cidx(0)), cidx(0), N);
  EXPECT_TRUE(same_extent(g, rows, N));
  Interval r = index_range(rows, {});
  ASSERT_TRUE(r.known);
  EXPECT_EQ(r.lo, 0);
  EXPECT_EQ(r.hi, 300);
  EXPECT_FALSE(same_extent(g, sym_index(un(EOp::Not, bin(EOp::Eq, cast(N, DType::I64), cst(DType::I64, 0)))), N));
}

TEST(Dims, SameExtentOfManyExtentsStaysCheap) {
  // A sum of 90 per-class counts (torchvision's concatenated detections):
  // checked at sampled points, not at every combination.
  Graph g;
  ExprP sum = cidx(0), sum2 = cidx(0);
  for (int k = 0; k < 90; ++k) {
    ExprP c = emin(g.sym_expr(g.produced_sym("c" + std::to_string(k), 3000)), cidx(300));
    sum = sum + c;
    sum2 = c + sum2;
  }
  EXPECT_TRUE(same_extent(g, sum, sum2));
  EXPECT_FALSE(same_extent(g, sum, sum2 + 1));
}
