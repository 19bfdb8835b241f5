#include "ir/expr.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"

namespace tinyrt {

static ExprP mk(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

static Expr node(EOp op, DType t, std::vector<ExprP> a = {}) {
  Expr e;
  e.op = op;
  e.type = t;
  e.a = std::move(a);
  return e;
}

ExprP cst(DType t, double v) {
  Expr e = node(EOp::Const, t);
  if (dtype_is_float(t)) {
    e.fval = t == DType::F32 ? (double)(float)v : v;
  } else {
    e.ival = (int64_t)v;
    e.fval = (double)e.ival;
  }
  if (t == DType::Bool) e.ival = v != 0;
  return mk(e);
}

ExprP cidx(int64_t v) {
  Expr e = node(EOp::Const, kIndexType);
  e.ival = v;
  e.fval = (double)v;
  return mk(e);
}

ExprP cbool(bool v) { return cst(DType::Bool, v ? 1 : 0); }

ExprP var(int id) {
  Expr e = node(EOp::Var, kIndexType);
  e.id = id;
  return mk(e);
}

ExprP load(int slot, DType t, std::vector<ExprP> idx) {
  for (auto &i : idx) TINYRT_CHECK(i->type == kIndexType, "load index type");
  Expr e = node(EOp::Load, t, std::move(idx));
  e.id = slot;
  return mk(e);
}

ExprP acc(DType t) { return mk(node(EOp::Acc, t)); }

ExprP dim_leaf(int sym, int64_t lo, int64_t hi) {
  TINYRT_CHECK(sym >= 0 && 0 <= lo && lo <= hi, "dim_leaf bounds");
  if (lo == hi) return cidx(lo);
  Expr e = node(EOp::Dim, kIndexType);
  e.id = sym;
  e.ival = lo;
  e.hi = hi;
  return mk(e);
}

bool has_dims(const ExprP &e) {
  bool r = false;
  visit(e, [&](const Expr &x) {
    r = r || x.op == EOp::Dim;
    for (const RVar &v : x.rvars) r = r || (v.n && has_dims(v.n));
  });
  return r;
}

bool is_unary(EOp op) { return op >= EOp::Neg && op <= EOp::Cast; }
bool is_binary(EOp op) { return op >= EOp::Add && op <= EOp::Shr; }
bool is_compare(EOp op) { return op >= EOp::Eq && op <= EOp::Ge; }

bool is_math_function(EOp op) {
  switch (op) {
    case EOp::Exp:
    case EOp::Log:
    case EOp::Tanh:
    case EOp::Sigmoid:
    case EOp::Erf:
    case EOp::Sin:
    case EOp::Cos:
    case EOp::Tan:
    case EOp::Atan:
    case EOp::ExpNeg:
    case EOp::Pow: return true;
    default: return false;
  }
}

EOp swap_compare(EOp op) {
  switch (op) {
    case EOp::Lt: return EOp::Gt;
    case EOp::Gt: return EOp::Lt;
    case EOp::Le: return EOp::Ge;
    case EOp::Ge: return EOp::Le;
    default: return op;  // Eq, Ne
  }
}

EOp negate_compare(EOp op) {
  switch (op) {
    case EOp::Lt: return EOp::Ge;
    case EOp::Ge: return EOp::Lt;
    case EOp::Le: return EOp::Gt;
    case EOp::Gt: return EOp::Le;
    case EOp::Eq: return EOp::Ne;
    default: return EOp::Eq;  // Ne
  }
}

ExprP un(EOp op, ExprP x) {
  TINYRT_CHECK(is_unary(op) && op != EOp::Cast, "un() op");
  if (op == EOp::Neg && x->is_const()) return cst(x->type, dtype_is_float(x->type) ? -x->fval : (double)-x->ival);
  return mk(node(op, op == EOp::Not ? DType::Bool : x->type, {x}));
}

ExprP cast(ExprP x, DType to) {
  if (x->type == to) return x;
  if (x->is_const()) {
    if (dtype_is_float(x->type)) {
      double v = x->fval;
      if (to == DType::Bool) return cbool(v != 0);
      return cst(to, dtype_is_float(to) ? v : std::trunc(v));
    }
    return cst(to, (double)x->ival);
  }
  Expr e = node(EOp::Cast, to, {x});
  return mk(e);
}

static bool both_const_int(const ExprP &x, const ExprP &y) {
  return x->is_const() && y->is_const() && !dtype_is_float(x->type);
}

ExprP bin(EOp op, ExprP x, ExprP y) {
  TINYRT_CHECK(is_binary(op), "bin() op");
  if (x->type != y->type)
    fail_internal(std::string("operand types differ in ") + eop_name(op) + ": " + dtype_name(x->type) + " vs " +
                  dtype_name(y->type));
  DType t = x->type;
  bool idx = t == kIndexType;
  // Index arithmetic folds eagerly: the vectorizer and the range analysis
  // depend on seeing simple affine forms.
  if (idx && both_const_int(x, y)) {
    int64_t a = x->ival, b = y->ival;
    switch (op) {
      case EOp::Add: return cidx(a + b);
      case EOp::Sub: return cidx(a - b);
      case EOp::Mul: return cidx(a * b);
      case EOp::Div:
        if (b != 0) return cidx(a / b);
        break;
      case EOp::Rem:
        if (b != 0) return cidx(a % b);
        break;
      case EOp::Min: return cidx(std::min(a, b));
      case EOp::Max: return cidx(std::max(a, b));
      case EOp::Lt: return cbool(a < b);
      case EOp::Le: return cbool(a <= b);
      case EOp::Gt: return cbool(a > b);
      case EOp::Ge: return cbool(a >= b);
      case EOp::Eq: return cbool(a == b);
      case EOp::Ne: return cbool(a != b);
      default: break;
    }
  }
  if (!dtype_is_float(t)) {
    if (op == EOp::Add && x->is_const_int(0)) return y;
    if ((op == EOp::Add || op == EOp::Sub) && y->is_const_int(0)) return x;
    if (op == EOp::Mul && (x->is_const_int(1))) return y;
    if ((op == EOp::Mul || op == EOp::Div) && y->is_const_int(1)) return x;
    if (op == EOp::Mul && (x->is_const_int(0) || y->is_const_int(0))) return cst(t, 0);
    if (op == EOp::Rem && y->is_const_int(1)) return cst(t, 0);
    // (a * c) / c -> a: a dimension's product taken apart again (a
    // Reshape of [T, 40] to [T * 40] and back); index arithmetic does not
    // wrap (the bounds proof checks it).
    if (idx && op == EOp::Div && y->is_const() && y->ival > 0 && x->op == EOp::Mul && x->a[1]->is_const() &&
        x->a[1]->ival == y->ival)
      return x->a[0];
    // (a + c1) + c2 -> a + (c1 + c2)
    if (idx && (op == EOp::Add || op == EOp::Sub) && y->is_const() && x->op == EOp::Add && x->a[1]->is_const()) {
      int64_t c = x->a[1]->ival + (op == EOp::Add ? y->ival : -y->ival);
      return bin(EOp::Add, x->a[0], cidx(c));
    }
  }
  if (t == DType::Bool && (op == EOp::And || op == EOp::Or)) {
    if (x->is_const()) return (x->ival != 0) == (op == EOp::And) ? y : x;
    if (y->is_const()) return (y->ival != 0) == (op == EOp::And) ? x : y;
  }
  Expr e = node(op, is_compare(op) ? DType::Bool : t, {x, y});
  return mk(e);
}

ExprP select(ExprP c, ExprP a, ExprP b) {
  TINYRT_CHECK(c->type == DType::Bool && a->type == b->type, "select types");
  if (c->is_const()) return c->ival ? a : b;
  return mk(node(EOp::Select, a->type, {c, a, b}));
}

ExprP reduce(ReduceKind k, std::vector<RVar> vars, ExprP body) {
  // Extent-1 variables are the constant 0; a reduction over nothing else is
  // its body; a sum of a constant is a product.
  std::vector<RVar> kept;
  std::map<int, bool> unit;
  int64_t count = 1;
  bool dynamic = false;
  for (RVar v : vars) {
    TINYRT_CHECK(v.extent >= 0, "reduce extent");
    if (v.n && v.n->is_const()) {
      v.extent = v.n->ival;
      v.n = nullptr;
    }
    dynamic = dynamic || v.n;
    if (v.extent == 1 && !v.n)
      unit[v.id] = true;
    else
      kept.push_back(v);
    count *= v.extent;
  }
  if (!unit.empty())
    body = rewrite(body,
                   [&](const ExprP &x) -> ExprP { return x->op == EOp::Var && unit.count(x->id) ? cidx(0) : nullptr; });
  if (kept.empty()) return body;
  if (body->is_const() && count > 0 && !dynamic) {
    if (k == ReduceKind::Sum && dtype_is_float(body->type)) return cst(body->type, body->fval * (double)count);
    if (k == ReduceKind::Max || k == ReduceKind::Min) return body;
  }
  Expr e = node(EOp::Reduce, body->type, {body});
  e.rk = k;
  e.rvars = std::move(kept);
  return mk(e);
}

ExprP emin(ExprP a, ExprP b) { return bin(EOp::Min, a, b); }
ExprP emax(ExprP a, ExprP b) { return bin(EOp::Max, a, b); }
ExprP lt(ExprP a, ExprP b) { return bin(EOp::Lt, a, b); }
ExprP ge(ExprP a, ExprP b) { return bin(EOp::Ge, a, b); }
ExprP land(ExprP a, ExprP b) { return bin(EOp::And, a, b); }
ExprP in_range(ExprP i, int64_t n) { return in_range(std::move(i), cidx(n)); }
ExprP in_range(ExprP i, ExprP n) { return land(ge(i, cidx(0)), lt(i, std::move(n))); }

EOp reduce_combiner(ReduceKind k) {
  return k == ReduceKind::Sum    ? EOp::Add
         : k == ReduceKind::Prod ? EOp::Mul
         : k == ReduceKind::Max  ? EOp::Max
                                 : EOp::Min;
}

double reduce_init(ReduceKind k, DType t) {
  switch (k) {
    case ReduceKind::Sum: return 0;
    case ReduceKind::Prod: return 1;
    case ReduceKind::Max:
      if (dtype_is_float(t)) return -std::numeric_limits<double>::infinity();
      if (t == DType::Bool || !dtype_is_signed(t)) return 0;
      return -std::ldexp(1.0, dtype_bytes(t) * 8 - 1);
    case ReduceKind::Min:
      if (dtype_is_float(t)) return std::numeric_limits<double>::infinity();
      if (t == DType::Bool) return 1;
      return dtype_is_signed(t) ? std::ldexp(1.0, dtype_bytes(t) * 8 - 1) - 1 : std::ldexp(1.0, dtype_bytes(t) * 8) - 1;
  }
  return 0;
}

int64_t reduce_init_int(ReduceKind k, DType t) {
  if (dtype_is_float(t)) return 0;
  int bits = dtype_bytes(t) * 8;
  bool is_signed = dtype_is_signed(t) && t != DType::Bool;
  switch (k) {
    case ReduceKind::Sum: return 0;
    case ReduceKind::Prod: return 1;
    case ReduceKind::Max: return is_signed ? (int64_t)((uint64_t)-1 << (bits - 1)) : 0;  // the type's lowest
    case ReduceKind::Min:
      if (t == DType::Bool) return 1;
      if (is_signed) return (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
      return bits == 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1);  // the type's highest
  }
  return 0;
}

ExprP reduce_init_cst(ReduceKind k, DType t) {
  if (dtype_is_float(t)) return cst(t, reduce_init(k, t));
  Expr e = node(EOp::Const, t);
  e.ival = reduce_init_int(k, t);
  e.fval = reduce_init(k, t);
  return mk(e);
}

const char *eop_name(EOp op) {
  static const char *names[] = {"const", "var",  "load",    "acc",    "dim",   "neg",  "abs",   "sqrt",   "exp",
                                "log",   "tanh", "sigmoid", "erf",    "floor", "ceil", "round", "recip",  "sin",
                                "cos",   "tan",  "atan",    "expneg", "not",   "cast", "add",   "sub",    "mul",
                                "div",   "rem",  "min",     "max",    "pow",   "eq",   "ne",    "lt",     "le",
                                "gt",    "ge",   "and",     "or",     "xor",   "shl",  "shr",   "select", "reduce"};
  return names[(int)op];
}

void visit(const ExprP &e, const std::function<void(const Expr &)> &f) {
  // Post order with an explicit stack: a node after its operands, each
  // node once.
  std::unordered_set<const Expr *> seen;
  std::vector<std::pair<const Expr *, size_t>> stack;  // node, next operand
  if (!e) return;
  seen.insert(e.get());
  stack.push_back({e.get(), 0});
  while (!stack.empty()) {
    auto &[x, next] = stack.back();
    if (next < x->a.size()) {
      const Expr *k = x->a[next++].get();
      if (seen.insert(k).second) stack.push_back({k, 0});
      continue;
    }
    const Expr *done = x;
    stack.pop_back();
    f(*done);
  }
}

size_t expr_size(const ExprP &e) {
  size_t n = 0;
  visit(e, [&](const Expr &) { ++n; });
  return n;
}

bool has_reduce(const ExprP &e) {
  bool r = false;
  visit(e, [&](const Expr &x) { r = r || x.op == EOp::Reduce; });
  return r;
}

int count_loads(const ExprP &e, int slot) {
  int n = 0;
  visit(e, [&](const Expr &x) { n += x.op == EOp::Load && x.id == slot; });
  return n;
}

int max_var_id(const ExprP &e) {
  int m = -1;
  visit(e, [&](const Expr &x) {
    if (x.op == EOp::Var) m = std::max(m, x.id);
    for (auto &r : x.rvars) m = std::max(m, r.id);
  });
  return m;
}

// Rebuilds a node with new operands through the folding builders.
static ExprP rebuild(const Expr &x, std::vector<ExprP> ops) {
  if (x.op == EOp::Load) return load(x.id, x.type, std::move(ops));
  if (x.op == EOp::Cast) return cast(ops[0], x.type);
  if (is_unary(x.op)) return un(x.op, ops[0]);
  if (is_binary(x.op)) return bin(x.op, ops[0], ops[1]);
  if (x.op == EOp::Select) return select(ops[0], ops[1], ops[2]);
  if (x.op == EOp::Reduce) return reduce(x.rk, x.rvars, ops[0]);
  Expr copy = x;
  copy.a = std::move(ops);
  return mk(copy);
}

// One memoized walk of the DAG: `pre` may replace an original node
// outright (its operands are then not visited); otherwise the operands are
// rewritten, the node rebuilt and `post` may replace the rebuilt node.
using RewriteFn = std::function<ExprP(const ExprP &)>;
static ExprP walk(const ExprP &e, const RewriteFn *pre, const RewriteFn *post) {
  std::unordered_map<const Expr *, ExprP> memo;
  std::function<ExprP(const ExprP &)> go = [&](const ExprP &x) -> ExprP {
    auto it = memo.find(x.get());
    if (it != memo.end()) return it->second;
    ExprP r = pre ? (*pre)(x) : nullptr;
    if (!r) {
      std::vector<ExprP> ops;
      bool changed = false;
      for (auto &k : x->a) {
        ops.push_back(go(k));
        changed = changed || ops.back() != k;
      }
      ExprP cur = changed ? rebuild(*x, std::move(ops)) : x;
      r = post ? (*post)(cur) : nullptr;
      if (!r) r = cur;
    }
    return memo[x.get()] = r;
  };
  return go(e);
}

ExprP rewrite(const ExprP &e, const RewriteFn &f) { return walk(e, nullptr, &f); }

ExprP rewrite_top_down(const ExprP &e, const RewriteFn &f) { return walk(e, &f, nullptr); }

ExprP substitute_vars(const ExprP &e, const std::vector<ExprP> &vars) {
  bool identity = true;
  for (size_t k = 0; k < vars.size(); ++k) identity = identity && vars[k]->op == EOp::Var && vars[k]->id == (int)k;
  if (identity) return e;
  // Top down: a node that folds to a Var while rebuilding ((i + 2) - 2 ->
  // i) is not substituted a second time.
  return rewrite_top_down(e, [&](const ExprP &x) -> ExprP {
    if (x->op != EOp::Var || x->id >= (int)vars.size()) return nullptr;
    const ExprP &v = vars[x->id];
    return v->op == EOp::Var && v->id == x->id ? x : v;  // an identity keeps the node (and its parents)
  });
}

ExprP replace_loads(const ExprP &e, int slot, const std::function<ExprP(const Expr &)> &f) {
  return rewrite(e, [&](const ExprP &x) -> ExprP {
    if (x->op == EOp::Load && x->id == slot) return f(*x);
    return nullptr;
  });
}

ExprP remap_slots(const ExprP &e, const std::vector<int> &map) {
  bool identity = true;
  for (size_t s = 0; s < map.size(); ++s) identity = identity && map[s] == (int)s;
  if (identity) return e;
  return rewrite(e, [&](const ExprP &x) -> ExprP {
    if (x->op != EOp::Load || map.at(x->id) == x->id) return nullptr;
    return load(map.at(x->id), x->type, x->a);
  });
}

ExprP renumber_reduce_vars(const ExprP &e, int first, int *next) {
  std::map<int, int> ren;
  int n = first;
  visit(e, [&](const Expr &x) {
    for (auto &r : x.rvars)
      if (!ren.count(r.id)) ren[r.id] = n++;
  });
  if (next) *next = n;
  if (ren.empty()) return e;
  return rewrite(e, [&](const ExprP &x) -> ExprP {
    if (x->op == EOp::Var && ren.count(x->id)) return var(ren[x->id]);
    if (x->op == EOp::Reduce) {
      std::vector<RVar> rv = x->rvars;
      for (auto &r : rv) r.id = ren.at(r.id);
      return reduce(x->rk, rv, x->a[0]);
    }
    return nullptr;
  });
}

bool is_identity_load(const Expr &e, int slot, const Shape &shape) {
  if (e.op != EOp::Load || e.id != slot || e.a.size() != shape.size()) return false;
  for (size_t k = 0; k < shape.size(); ++k) {
    const Expr &i = *e.a[k];
    bool ok = (i.op == EOp::Var && i.id == (int)k) || (shape[k] == 1 && i.is_const_int(0));
    if (!ok) return false;
  }
  return true;
}

namespace {

// index_range, with the Dim leaves in `dimv` taken at their given value.
Interval range_at(const ExprP &e, const std::map<int, int64_t> &ext, const std::map<int, int64_t> *dimv) {
  const Interval unknown{0, 0, false};
  // Generated code computes index expressions in 32 bits: a range that
  // leaves int32 may wrap there, so it is unknown (folding a comparison on
  // the unwrapped values would decide it differently from the code).
  auto known = [&](__int128 lo, __int128 hi) {
    if (lo < INT32_MIN || hi > INT32_MAX) return unknown;
    return Interval{(int64_t)lo, (int64_t)hi, true};
  };
  switch (e->op) {
    case EOp::Const:
      if (dtype_is_float(e->type)) return unknown;
      return known(e->ival, e->ival);
    case EOp::Var: {
      auto it = ext.find(e->id);
      if (it == ext.end() || it->second <= 0) return unknown;
      return known(0, (__int128)it->second - 1);
    }
    case EOp::Dim: {
      if (dimv && dimv->count(e->id)) return known(dimv->at(e->id), dimv->at(e->id));
      return known(e->ival, e->hi);
    }
    case EOp::Add:
    case EOp::Sub:
    case EOp::Mul:
    case EOp::Min:
    case EOp::Max: {
      Interval a = range_at(e->a[0], ext, dimv), b = range_at(e->a[1], ext, dimv);
      if (!a.known || !b.known) return unknown;
      if (e->op == EOp::Add) return known((__int128)a.lo + b.lo, (__int128)a.hi + b.hi);
      if (e->op == EOp::Sub) return known((__int128)a.lo - b.hi, (__int128)a.hi - b.lo);
      if (e->op == EOp::Min) return known(std::min(a.lo, b.lo), std::min(a.hi, b.hi));
      if (e->op == EOp::Max) return known(std::max(a.lo, b.lo), std::max(a.hi, b.hi));
      __int128 c[4] = {(__int128)a.lo * b.lo, (__int128)a.lo * b.hi, (__int128)a.hi * b.lo, (__int128)a.hi * b.hi};
      return known(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
    }
    case EOp::Div:
    case EOp::Rem: {
      Interval a = range_at(e->a[0], ext, dimv), b = range_at(e->a[1], ext, dimv);
      if (!a.known || !b.known || a.lo < 0 || b.lo <= 0) return unknown;
      if (e->op == EOp::Div) return {a.lo / b.hi, a.hi / b.lo, true};
      return {0, std::min(a.hi, b.hi - 1), true};
    }
    case EOp::Select: {  // either alternative
      Interval a = range_at(e->a[1], ext, dimv), b = range_at(e->a[2], ext, dimv);
      if (!a.known || !b.known) return unknown;
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), true};
    }
    default: return unknown;
  }
}

// The value a comparison of two index ranges must have: 1 true, 0 false,
// -1 either.
int decide(EOp op, const Interval &a, const Interval &b) {
  if (!a.known || !b.known) return -1;
  switch (op) {
    case EOp::Lt: return a.hi < b.lo ? 1 : a.lo >= b.hi ? 0 : -1;
    case EOp::Le: return a.hi <= b.lo ? 1 : a.lo > b.hi ? 0 : -1;
    case EOp::Gt: return a.lo > b.hi ? 1 : a.hi <= b.lo ? 0 : -1;
    case EOp::Ge: return a.lo >= b.hi ? 1 : a.hi < b.lo ? 0 : -1;
    default: return -1;
  }
}

}  // namespace

Interval index_range(const ExprP &e, const std::map<int, int64_t> &ext) { return range_at(e, ext, nullptr); }

std::optional<int64_t> eval_index(const ExprP &e, const std::map<int, int64_t> &dims) {
  Interval r = range_at(e, {}, &dims);
  if (!r.known || r.lo != r.hi) return std::nullopt;
  return r.lo;
}

void add_dims(const ExprP &e, DimRanges *dims) {
  visit(e, [&](const Expr &d) {
    if (d.op == EOp::Dim) dims->emplace(d.id, std::make_pair(d.ival, d.hi));
  });
}

bool for_each_dim_value(const DimRanges &dims, int64_t max,
                        const std::function<bool(const std::map<int, int64_t> &)> &f) {
  int64_t combos = 1;
  for (auto &[sym, r] : dims) {
    if (r.second < r.first) return false;
    combos *= r.second - r.first + 1;
    if (combos > max) return false;
  }
  std::map<int, int64_t> value;
  for (int64_t c = 0; c < combos; ++c) {
    int64_t rest = c;
    for (auto &[sym, r] : dims) {
      value[sym] = r.first + rest % (r.second - r.first + 1);
      rest /= r.second - r.first + 1;
    }
    if (!f(value)) return false;
  }
  return true;
}

ExprP simplify_with_ranges(const ExprP &e, const std::map<int, int64_t> &ext) {
  return simplify_with_run_extents(e, ext, {});
}

ExprP simplify_with_run_extents(const ExprP &e, const std::map<int, int64_t> &ext, const std::map<int, ExprP> &run) {
  std::map<int, int64_t> all = ext;
  std::map<int, ExprP> run_all;
  for (auto &[v, n] : run)
    if (!n->is_const()) run_all[v] = n;
  visit(e, [&](const Expr &x) {
    for (auto &r : x.rvars) {
      all[r.id] = r.extent;
      if (r.n && !r.n->is_const()) run_all[r.id] = r.n;
    }
  });
  return rewrite(e, [&](const ExprP &x) -> ExprP {
    if (!is_compare(x->op) || x->a[0]->type != kIndexType) return nullptr;
    int at_bounds = decide(x->op, range_at(x->a[0], all, nullptr), range_at(x->a[1], all, nullptr));
    if (at_bounds >= 0) return cbool(at_bounds == 1);
    if (run_all.empty() && !has_dims(x)) return nullptr;
    // Decided for every value of the dimensions it involves (its Dim
    // leaves and those of its variables' run-time extents), with the
    // variables' extents at those values? Independent values: a superset
    // of the runs there can be.
    DimRanges syms;
    add_dims(x, &syms);
    std::set<int> vars;  // its variables of run-time extent
    visit(x, [&](const Expr &v) {
      if (v.op == EOp::Var && run_all.count(v.id) && vars.insert(v.id).second) add_dims(run_all.at(v.id), &syms);
    });
    if (syms.empty()) return nullptr;
    int verdict = -2;  // -2: no run reaches the comparison yet
    std::map<int, int64_t> ext_c = all;
    bool decided = for_each_dim_value(syms, kMaxDimCombos, [&](const std::map<int, int64_t> &dimv) {
      for (int v : vars) {
        const ExprP &n = run_all.at(v);
        Interval iv = range_at(n, {}, &dimv);
        if (!iv.known) return false;
        if (iv.hi <= 0) return true;  // no iteration evaluates it
        ext_c[v] = std::min(iv.hi, all.count(v) ? all.at(v) : iv.hi);
      }
      int d = decide(x->op, range_at(x->a[0], ext_c, &dimv), range_at(x->a[1], ext_c, &dimv));
      if (d < 0 || (verdict >= 0 && d != verdict)) return false;
      verdict = d;
      return true;
    });
    return decided && verdict >= 0 ? cbool(verdict == 1) : nullptr;
  });
}

ExprP with_runtime_extent(const ExprP &e, int id, const ExprP &n) {
  if (n->is_const()) return e;
  return rewrite(e, [&](const ExprP &x) -> ExprP {
    if (x->op != EOp::Reduce) return nullptr;
    bool has = false;
    for (const RVar &v : x->rvars) has = has || v.id == id;
    if (!has) return nullptr;
    std::vector<RVar> vars = x->rvars;
    for (RVar &v : vars)
      if (v.id == id) v.n = n;
    return reduce(x->rk, vars, x->a[0]);
  });
}

std::string to_string(const ExprP &e) {
  switch (e->op) {
    case EOp::Const: return dtype_is_float(e->type) ? std::to_string(e->fval) : std::to_string(e->ival);
    case EOp::Var: return (e->id >= kFirstReduceVar ? "r" : "i") + std::to_string(e->id);
    case EOp::Acc: return "acc";
    case EOp::Dim:
      return "d" + std::to_string(e->id) + "<" + std::to_string(e->ival) + ":" + std::to_string(e->hi) + ">";
    case EOp::Load: {
      std::string s = "in" + std::to_string(e->id) + "[";
      for (size_t k = 0; k < e->a.size(); ++k) s += (k ? "," : "") + to_string(e->a[k]);
      return s + "]";
    }
    case EOp::Cast: return std::string(dtype_name(e->type)) + "(" + to_string(e->a[0]) + ")";
    case EOp::Reduce: {
      static const char *k[] = {"sum", "max", "min", "prod"};
      std::string s = std::string(k[(int)e->rk]) + "{";
      for (auto &r : e->rvars)
        s += "r" + std::to_string(r.id) + "<" + (r.n ? to_string(r.n) : std::to_string(r.extent)) + " ";
      return s + "}(" + to_string(e->a[0]) + ")";
    }
    default: {
      std::string s = std::string(eop_name(e->op)) + "(";
      for (size_t k = 0; k < e->a.size(); ++k) s += (k ? ", " : "") + to_string(e->a[k]);
      return s + ")";
    }
  }
}

}  // namespace tinyrt
