// Expression IR: folding builders, range simplification, the interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/expr.h"
#include "ir/interp.h"

using namespace tinyrt;

TEST(Expr, IndexArithmeticFolds) {
  ExprP e = (var(0) + 1) + 2;
  ASSERT_EQ(e->op, EOp::Add);
  EXPECT_TRUE(e->a[1]->is_const_int(3));
  EXPECT_EQ((var(1) * cidx(1))->op, EOp::Var);
  EXPECT_TRUE((var(1) * cidx(0))->is_const_int(0));
  EXPECT_TRUE((cidx(6) / cidx(4))->is_const_int(1));
  EXPECT_EQ(land(cbool(true), lt(var(0), cidx(3)))->op, EOp::Lt);
}

TEST(Expr, SubstitutionIsAppliedOnce) {
  // in[i0 - 2] with i0 := i0 + 2 is in[i0]: the index folds back to Var(0),
  // which must not be substituted again (it once became in[i0 + 2]).
  ExprP e = load(0, DType::F32, {var(0) - 2});
  ExprP s = substitute_vars(e, {var(0) + 2});
  ASSERT_EQ(s->op, EOp::Load);
  ASSERT_EQ(s->a[0]->op, EOp::Var);
  EXPECT_EQ(s->a[0]->id, 0);
  // Fusion substitutes a producer's indices the same way.
  ExprP fused = substitute_vars(load(0, DType::F32, {var(0) + 1, var(1)}), {var(0) + (-1), var(0)});
  EXPECT_EQ(to_string(fused), "in0[i0,i0]");
}

TEST(Expr, RangesRemovePaddingChecksOfAValidConvolution) {
  // ih = oh + kh with oh < 6, kh < 3 always lies in [0, 8).
  ExprP ih = var(0) + var(kFirstReduceVar);
  ExprP cond = in_range(ih, 8);
  ExprP s = simplify_with_ranges(
      reduce(ReduceKind::Sum, {{kFirstReduceVar, 3}}, select(cond, cst(DType::F32, 1), cst(DType::F32, 0))), {{0, 6}});
  // The select disappears and the sum of a constant folds to a product.
  ASSERT_TRUE(s->is_const());
  EXPECT_EQ(s->fval, 3.0);
  // With padding it must stay.
  ExprP padded = simplify_with_ranges(in_range(var(0) + var(kFirstReduceVar) - 1, 8), {{0, 8}, {kFirstReduceVar, 3}});
  EXPECT_FALSE(padded->is_const());
}

TEST(Expr, RangesThatCouldWrapIn32BitsDecideNothing) {
  // i * 2^30 < 2^31 + 5 holds for i < 2 in exact arithmetic, but generated
  // code computes the product in 32 bits, where i = 1 gives 2^30 and i = 2
  // wraps: the comparison must stay for the code to decide. No overflow of
  // the analysis itself either (UBSan) with constants near int64's ends.
  ExprP big = cidx(int64_t(1) << 30);
  ExprP c = simplify_with_ranges(lt(var(0) * big, cidx((int64_t(1) << 31) + 5)), {{0, 4}});
  EXPECT_FALSE(c->is_const());
  ExprP huge = cidx(INT64_MAX);
  ExprP d = simplify_with_ranges(lt(var(0) * huge + huge, cidx(0)), {{0, 4}});
  EXPECT_FALSE(d->is_const());
  // Inside int32 the comparison still folds.
  ExprP f = simplify_with_ranges(lt(var(0) * cidx(1000), cidx(4000)), {{0, 4}});
  ASSERT_TRUE(f->is_const());
  EXPECT_EQ(f->ival, 1);
}

TEST(Expr, ReduceDropsUnitAxes) {
  ExprP body = load(0, DType::F32, {var(0) + var(kFirstReduceVar)});
  ExprP r = reduce(ReduceKind::Sum, {{kFirstReduceVar, 1}}, body);
  ASSERT_EQ(r->op, EOp::Load);
  EXPECT_EQ(r->a[0]->op, EOp::Var);
}

TEST(Interp, TransposeAndReduce) {
  ConstP x = make_const_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ConstP t = interpret(load(0, DType::F32, {var(1), var(0)}), DType::F32, {3, 2}, {x});
  EXPECT_EQ(std::vector<float>(t->as<float>(), t->as<float>() + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  ConstP s =
      interpret(reduce(ReduceKind::Sum, {{kFirstReduceVar, 3}}, load(0, DType::F32, {var(0), var(kFirstReduceVar)})),
                DType::F32, {2}, {x});
  EXPECT_FLOAT_EQ(s->as<float>()[0], 6);
  EXPECT_FLOAT_EQ(s->as<float>()[1], 15);
  ConstP m =
      interpret(reduce(ReduceKind::Max, {{kFirstReduceVar, 2}}, load(0, DType::F32, {var(kFirstReduceVar), var(0)})),
                DType::F32, {3}, {x});
  EXPECT_FLOAT_EQ(m->as<float>()[2], 6);
}

TEST(Interp, SelectIsLazy) {
  // Index 3 is out of bounds but never read: the guard is false there.
  ConstP x = make_const_f32({3}, {10, 20, 30});
  ExprP e = select(lt(var(0), cidx(3)), load(0, DType::F32, {var(0)}), cst(DType::F32, -1));
  ConstP y = interpret(e, DType::F32, {4}, {x});
  EXPECT_FLOAT_EQ(y->as<float>()[3], -1);
  EXPECT_FLOAT_EQ(y->as<float>()[1], 20);
}

TEST(Interp, IntegerSemantics) {
  EXPECT_EQ(eval_int_op(EOp::Add, 127, 1, DType::I8), -128);
  EXPECT_EQ(eval_int_op(EOp::Div, 7, 0, DType::I32), 0);  // defined, never a trap
  EXPECT_EQ(eval_int_op(EOp::Lt, 1, -1, DType::U32), 1);  // -1 is 0xffffffff unsigned
  EXPECT_EQ(eval_float_op(EOp::Max, NAN, 1, DType::F32) != eval_float_op(EOp::Max, NAN, 1, DType::F32), true);
}
