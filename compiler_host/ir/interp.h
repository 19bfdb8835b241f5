// interp.h — evaluates an element expression on the host. Used for constant
// folding and as the reference the tests compare generated code against.
#pragma once

#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"

namespace tinyrt {

// Computes every element of an output of `shape` and `type` whose element
// (i0..in) is `e` with Var(k) = ik; Load(s, ...) reads inputs[s] (row-major).
ConstP interpret(const ExprP &e, DType type, const Shape &shape, const std::vector<ConstP> &inputs);

// The expression nodes `interpret` evaluates per output element: a tree
// walk (a node shared in the DAG counts each time it is reached), each
// Reduce's body times its extents, both arms of a Select. Saturates at
// INT64_MAX. Constant folding checks this times the output's elements
// against its budget (Limits::max_fold_ops) before it interprets.
int64_t interpret_cost(const ExprP &e);

// Scalar semantics shared with the code generator: the result of applying a
// unary/binary op to float or integer operands of type `t`.
double eval_float_op(EOp op, double a, double b, DType t);
int64_t eval_int_op(EOp op, int64_t a, int64_t b, DType t);
// Wraps an integer to the width and signedness of `t`.
int64_t wrap_int(int64_t v, DType t);

}  // namespace tinyrt
