// expr.h — the element-level expression IR.
//
// Every op is defined by an expression giving one output element as a
// function of the output's index variables: Var(k) is the index along output
// axis k, Load(slot, i0..in) reads element (i0..in) of the kernel's input
// `slot` (logical indices; the physical layout is the buffer's business), and
// Reduce introduces reduction variables with static extents. The same
// expression is interpreted on the host (constant folding, references) and
// lowered by the code generators (vectorized along one output axis).
//
// Expressions are immutable DAGs shared through ExprP.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tinyrt {

enum class EOp : uint8_t {
  // leaves
  Const,  // fval / ival
  Var,    // index variable `id` (kIndexType)
  Load,   // input slot `id`, operands = indices (kIndexType)
  Acc,    // accumulator placeholder in a scheduled kernel's epilogue
  Dim,    // run-time extent `id` (Graph::syms, a base one), in [ival, hi] (kIndexType)
  // unary, result type = operand type unless noted
  Neg,
  Abs,
  Sqrt,
  Exp,
  Log,
  Tanh,
  Sigmoid,
  Erf,
  Floor,
  Ceil,
  Round,
  Recip,
  Sin,
  Cos,
  Tan,
  Atan,
  ExpNeg,  // e^-a for a >= 0 (the shifted exponent of softmax and logsumexp): e^-max(a, 0)
  Not,     // bool
  Cast,    // to `type`
  // binary, operands of one type
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Min,
  Max,
  Pow,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,  // -> Bool
  And,
  Or,
  Xor,  // bool, or bitwise on integers
  Shl,
  Shr,     // integers; Shr is logical for unsigned types
  Select,  // (cond: Bool, a, b)
  Reduce,  // operand 0 = body; `rk` and `rvars`
};

enum class ReduceKind : uint8_t { Sum, Max, Min, Prod };

// A reduction variable over [0, extent), or over [0, n) when `n` is set
// (a run-time extent, an index expression over Dim leaves; `extent` is
// then its upper bound).
struct RVar {
  int id;
  int64_t extent;
  std::shared_ptr<const struct Expr> n = nullptr;
};

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

struct Expr {
  EOp op;
  DType type;
  std::vector<ExprP> a;
  double fval = 0;
  int64_t ival = 0;
  int id = -1;     // Var id, Load slot, Dim extent
  int64_t hi = 0;  // Dim: the extent's upper bound (ival: its lower one)
  ReduceKind rk = ReduceKind::Sum;
  std::vector<RVar> rvars;

  bool is_const() const { return op == EOp::Const; }
  bool is_const_int(int64_t v) const { return op == EOp::Const && !dtype_is_float(type) && ival == v; }
};

// First id of reduction variables; output axes use ids 0..rank-1.
constexpr int kFirstReduceVar = 64;

// ---- builders (they fold constants and trivial index arithmetic) ----
ExprP cst(DType t, double v);
ExprP cidx(int64_t v);  // index-typed constant
ExprP cbool(bool v);
ExprP var(int id);
ExprP load(int slot, DType t, std::vector<ExprP> idx);
ExprP acc(DType t);
// The run-time extent `sym` (a base entry of Graph::syms), in [lo, hi].
ExprP dim_leaf(int sym, int64_t lo, int64_t hi);
// Does `e` read a run-time extent (a Dim leaf, or a reduction over one)?
bool has_dims(const ExprP &e);
ExprP un(EOp op, ExprP x);
ExprP cast(ExprP x, DType to);
ExprP bin(EOp op, ExprP x, ExprP y);
ExprP select(ExprP c, ExprP a, ExprP b);
ExprP reduce(ReduceKind k, std::vector<RVar> vars, ExprP body);

inline ExprP operator+(ExprP a, ExprP b) { return bin(EOp::Add, a, b); }
inline ExprP operator-(ExprP a, ExprP b) { return bin(EOp::Sub, a, b); }
inline ExprP operator*(ExprP a, ExprP b) { return bin(EOp::Mul, a, b); }
inline ExprP operator/(ExprP a, ExprP b) { return bin(EOp::Div, a, b); }
inline ExprP operator+(ExprP a, int64_t b) { return a + cidx(b); }
inline ExprP operator-(ExprP a, int64_t b) { return a - cidx(b); }
inline ExprP operator*(ExprP a, int64_t b) { return a * cidx(b); }
ExprP emin(ExprP a, ExprP b);
ExprP emax(ExprP a, ExprP b);
ExprP lt(ExprP a, ExprP b);
ExprP ge(ExprP a, ExprP b);
ExprP land(ExprP a, ExprP b);
// 0 <= i < n
ExprP in_range(ExprP i, int64_t n);
ExprP in_range(ExprP i, ExprP n);  // n: an index expression (a run-time extent)

// The value a reduction starts from. For integer types the double is not
// exact (INT64_MAX, UINT64_MAX): use reduce_init_int, the exact value (as
// the type's bits in an int64), or reduce_init_cst.
double reduce_init(ReduceKind k, DType t);
// The binary op a reduction combines its terms with (Sum: Add, ...).
EOp reduce_combiner(ReduceKind k);
int64_t reduce_init_int(ReduceKind k, DType t);
ExprP reduce_init_cst(ReduceKind k, DType t);

// ---- analysis and rewriting ----
bool is_binary(EOp op);
bool is_unary(EOp op);
bool is_compare(EOp op);
// Exp, Log, Tanh, Sigmoid, Erf, Sin, Cos, Tan, Atan, ExpNeg, Pow: the
// functions the code generator computes as polynomials (tens of
// instructions a vector, codegen/math_emitter.h).
bool is_math_function(EOp op);
// The comparison with its operands swapped (x < y is y > x) and the one
// that holds when `op` does not (x < y fails: x >= y; on integers).
EOp swap_compare(EOp op);
EOp negate_compare(EOp op);
const char *eop_name(EOp op);

// Calls f on every node once (DAG walk).
void visit(const ExprP &e, const std::function<void(const Expr &)> &f);
size_t expr_size(const ExprP &e);
bool has_reduce(const ExprP &e);
int count_loads(const ExprP &e, int slot);
int max_var_id(const ExprP &e);
// Rebuilds bottom-up; `f` may return a replacement for a node (after its
// operands were rewritten) or nullptr to keep it.
ExprP rewrite(const ExprP &e, const std::function<ExprP(const ExprP &)> &f);
// Visits nodes from the root: `f` may replace a node of `e` (its operands
// are then not visited) or return nullptr to rewrite its operands; the
// replacements are not visited again.
ExprP rewrite_top_down(const ExprP &e, const std::function<ExprP(const ExprP &)> &f);
// Gives reduction variable `id` the run-time extent `n` (an index
// expression of Dim leaves; its extent stays the upper bound) wherever a
// reduction in `e` has it.
ExprP with_runtime_extent(const ExprP &e, int id, const ExprP &n);
// Replaces Var(k) for k < vars.size() by vars[k] (reduction variables stay).
ExprP substitute_vars(const ExprP &e, const std::vector<ExprP> &vars);
// Replaces every Load of `slot` by f(load).
ExprP replace_loads(const ExprP &e, int slot, const std::function<ExprP(const Expr &)> &f);
// Renumbers load slots: slot s becomes map[s].
ExprP remap_slots(const ExprP &e, const std::vector<int> &map);
// Renumbers reduction variables to start at `first`; returns the next free id.
ExprP renumber_reduce_vars(const ExprP &e, int first, int *next);
// Is `e` Load(slot, i0, ..., in) with ik = Var(k), or 0 where shape[k] = 1
// (broadcasting writes those as constants)?
bool is_identity_load(const Expr &e, int slot, const Shape &shape);

// Interval of an index expression given variable extents (var id -> extent),
// as generated code computes it: in 32 bits, so unknown where it could wrap.
struct Interval {
  int64_t lo, hi;  // inclusive
  bool known;
};
Interval index_range(const ExprP &e, const std::map<int, int64_t> &extents);
// The value of an index expression without variables when its run-time
// dimensions (Dim leaves) have the values `dims` (sym -> value).
std::optional<int64_t> eval_index(const ExprP &e, const std::map<int, int64_t> &dims);
// The run-time dimensions (Dim leaves) of `e`, with their ranges, added to
// `dims` (sym -> [lo, hi]).
using DimRanges = std::map<int, std::pair<int64_t, int64_t>>;
// Combinations of run-time dimension values a compile-time proof over them
// tries at most (an image's H and W over 16:79).
constexpr int64_t kMaxDimCombos = 4096;
void add_dims(const ExprP &e, DimRanges *dims);
// Calls f with each combination of the dimensions' values (sym -> value)
// until f returns false; false when it did, or when there are more than
// `max` combinations (then f is never called).
bool for_each_dim_value(const DimRanges &dims, int64_t max,
                        const std::function<bool(const std::map<int, int64_t> &)> &f);
// Folds comparisons and selects that the variable extents decide, e.g. the
// padding checks of a convolution without padding.
ExprP simplify_with_ranges(const ExprP &e, const std::map<int, int64_t> &extents);
// As simplify_with_ranges, where some variables have a run-time extent
// (`run`: an index expression of Dim leaves; `extents` keeps its upper
// bound; a reduction's from its RVar::n): a comparison folds when it has
// the same value for every combination of the run-time dimensions it
// involves (their values tried one by one, up to a few thousand
// combinations), e.g. a pooling window's `2 * i + r < H` over out =
// (H - 2) / 2 + 1 rows.
ExprP simplify_with_run_extents(const ExprP &e, const std::map<int, int64_t> &extents, const std::map<int, ExprP> &run);

std::string to_string(const ExprP &e);

}  // namespace tinyrt
