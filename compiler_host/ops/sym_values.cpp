// sym_values.cpp — symbolic values (Value::sym): the small integer tensors
// that exporters compute from the shapes of tensors with run-time
// dimensions (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), known at
// compile time as expressions of the run-time extents. Shape of such a
// value gives its extents; any other op is evaluated element by element
// through its own lowering, with loads of symbolic inputs replaced by
// their elements; what reads such a value as a shape (an op with a dims
// rule) takes its elements as index expressions (sym_index).
#include <algorithm>
#include <map>
#include <set>

#include "ir/interp.h"
#include "ops/op_registry.h"

namespace tinyrt {

namespace {

// Raised by SymCtx when a lowering does something element-wise evaluation
// cannot follow (a recurrent layer, a reduction over a symbolic value):
// the node then stays a run-time computation without symbolic elements.
struct NotSymbolic {};

constexpr int64_t kMaxSymElements = 64;

bool is_leaf_constant(const Expr &x) { return x.op == EOp::Const; }

// Folds operations whose operands are all constants (any type) with the
// interpreter's semantics.
ExprP fold_constants(const ExprP &e) {
  return rewrite(e, [](const ExprP &x) -> ExprP {
    if (x->op == EOp::Const || x->op == EOp::Load || x->op == EOp::Var || x->op == EOp::Dim || x->op == EOp::Reduce ||
        x->op == EOp::Acc || x->a.empty())
      return nullptr;
    for (const ExprP &a : x->a)
      if (!is_leaf_constant(*a)) return nullptr;
    ConstP c = interpret(x, x->type, {}, {});
    return dtype_is_float(x->type) ? cst(x->type, c->get_f(0)) : cst(x->type, (double)c->get_i(0));
  });
}

// A reduction over few fixed elements written out as the chain of its
// operation (torchvision's min(candidates, 300) is a ReduceMin of a
// Concat): Sum/Prod/Max/Min over at most kMaxSymElements combinations;
// throws NotSymbolic otherwise.
ExprP unroll_reductions(const ExprP &e) {
  return rewrite_top_down(e, [](const ExprP &x) -> ExprP {
    if (x->op != EOp::Reduce) return nullptr;
    int64_t total = 1;
    int top = 0;
    for (const RVar &r : x->rvars) {
      if (r.n || r.extent <= 0) throw NotSymbolic{};
      total *= r.extent;
      top = std::max(top, r.id + 1);
      if (total > kMaxSymElements) throw NotSymbolic{};
    }
    EOp op;
    switch (x->rk) {
      case ReduceKind::Sum: op = EOp::Add; break;
      case ReduceKind::Prod: op = EOp::Mul; break;
      case ReduceKind::Max: op = EOp::Max; break;
      case ReduceKind::Min: op = EOp::Min; break;
      default: throw NotSymbolic{};
    }
    ExprP acc;
    for (int64_t c = 0; c < total; ++c) {
      std::vector<ExprP> vars;
      for (int k = 0; k < top; ++k) vars.push_back(var(k));
      int64_t rest = c;
      for (size_t k = x->rvars.size(); k-- > 0;) {
        vars[(size_t)x->rvars[k].id] = cidx(rest % x->rvars[k].extent);
        rest /= x->rvars[k].extent;
      }
      ExprP term = unroll_reductions(substitute_vars(x->a.at(0), vars));
      acc = acc ? bin(op, acc, term) : term;
    }
    return acc;
  });
}

class SymCtx : public LowerCtx {
 public:
  SymCtx(Graph &g, std::map<int, std::vector<ExprP>> &elems) : LowerCtx(g), elems_(elems) {}

  void kernel(int out, std::vector<int> ins, ExprP expr) override {
    const Value &o = g.v(out);
    const int64_t n = o.numel();
    if (n > kMaxSymElements || o.is_dynamic()) throw NotSymbolic{};
    std::vector<ExprP> r;
    std::vector<int64_t> strides = row_major_strides(o.shape);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<ExprP> at;
      for (size_t k = 0; k < o.shape.size(); ++k) at.push_back(cidx(i / strides[k] % o.shape[k]));
      ExprP e = fold_constants(unroll_reductions(substitute_vars(expr, at)));
      e = rewrite(e, [&](const ExprP &x) -> ExprP {
        if (x->op == EOp::Reduce || x->op == EOp::Var) throw NotSymbolic{};
        if (x->op != EOp::Load) return nullptr;
        const std::vector<ExprP> &src = elements_of(ins.at((size_t)x->id));
        const Value &sv = g.v(ins.at((size_t)x->id));
        std::vector<int64_t> ss = row_major_strides(sv.shape);
        int64_t flat = 0;
        for (size_t k = 0; k < x->a.size(); ++k) {
          if (!x->a[k]->is_const()) throw NotSymbolic{};  // an index computed from a symbolic element
          flat += x->a[k]->ival * (k < ss.size() ? ss[k] : 0);
        }
        if (flat < 0 || flat >= (int64_t)src.size()) throw NotSymbolic{};
        return cast(src[(size_t)flat], x->type);
      });
      r.push_back(fold_constants(e));
    }
    elems_[out] = r;
  }
  void scheduled(KernelKind, int out, std::vector<int> ins, ExprP expr, const GemmSpec &) override {
    kernel(out, std::move(ins), std::move(expr));
  }
  void recurrent(int, std::vector<int>, const RecurrentSpec &) override { throw NotSymbolic{}; }
  void alias(int out, int in) override { elems_[out] = elements_of(in); }

 private:
  const std::vector<ExprP> &elements_of(int v) {
    auto it = elems_.find(v);
    if (it != elems_.end()) return it->second;
    const Value &x = g.v(v);
    std::vector<ExprP> r;
    if (x.is_sym()) {
      r = x.sym;
    } else if (x.is_const() && x.numel() <= kMaxSymElements) {
      for (int64_t i = 0; i < x.numel(); ++i)
        r.push_back(dtype_is_float(x.dtype) ? cst(x.dtype, x.data->get_f(i)) : cst(x.dtype, (double)x.data->get_i(i)));
    } else {
      throw NotSymbolic{};
    }
    return elems_[v] = r;
  }
  std::map<int, std::vector<ExprP>> &elems_;
};

// Sets value v to `elems`: a constant when they all are, else symbolic.
// Returns whether it became a constant.
bool set_elements(Graph &g, int v, const std::vector<ExprP> &elems) {
  Value &o = g.v(v);
  bool all_const = true;
  for (const ExprP &e : elems) all_const = all_const && e->is_const();
  if (!all_const) {
    o.sym = elems;
    return false;
  }
  std::vector<double> vals;
  for (const ExprP &e : elems) vals.push_back(dtype_is_float(e->type) ? e->fval : (double)e->ival);
  o.data = values_as_tensor(vals, o.dtype, o.shape, "the symbolic value '" + o.name + "'");
  o.sym.clear();
  return true;
}

int64_t eval_index(const ExprP &e, const std::map<int, int64_t> &vals, bool *ok) {
  auto a = [&](size_t k) { return eval_index(e->a[k], vals, ok); };
  switch (e->op) {
    case EOp::Const: return e->ival;
    case EOp::Dim: return vals.at(e->id);
    case EOp::Cast: return a(0);
    case EOp::Add: return a(0) + a(1);
    case EOp::Sub: return a(0) - a(1);
    case EOp::Mul: return a(0) * a(1);
    case EOp::Min: return std::min(a(0), a(1));
    case EOp::Max: return std::max(a(0), a(1));
    case EOp::Div:
    case EOp::Rem: {
      int64_t x = a(0), y = a(1);
      if (y == 0) {
        *ok = false;
        return 0;
      }
      return e->op == EOp::Div ? x / y : x % y;
    }
    case EOp::Select: return a(0) ? a(1) : a(2);
    case EOp::Lt: return a(0) < a(1);
    case EOp::Le: return a(0) <= a(1);
    case EOp::Gt: return a(0) > a(1);
    case EOp::Ge: return a(0) >= a(1);
    case EOp::Eq: return a(0) == a(1);
    case EOp::Ne: return a(0) != a(1);
    default: *ok = false; return 0;
  }
}

}  // namespace

ExprP sym_index(const ExprP &e) {
  switch (e->op) {
    case EOp::Const:
      if (dtype_is_float(e->type)) break;
      return cidx(e->ival);
    case EOp::Dim: return e;
    case EOp::Cast:
      if (dtype_is_float(e->a[0]->type)) break;
      return sym_index(e->a[0]);  // (a bool is 0 or 1, below)
    // Conditions on extents (torchvision's "no boxes" If): 1 or 0.
    case EOp::Eq:
    case EOp::Ne:
    case EOp::Lt:
    case EOp::Le:
    case EOp::Gt:
    case EOp::Ge:
      if (dtype_is_float(e->a[0]->type)) break;
      return select(bin(e->op, sym_index(e->a[0]), sym_index(e->a[1])), cidx(1), cidx(0));
    case EOp::Not: return cidx(1) - sym_index(e->a[0]);
    case EOp::And: return sym_index(e->a[0]) * sym_index(e->a[1]);
    case EOp::Or: return emax(sym_index(e->a[0]), sym_index(e->a[1]));
    case EOp::Add:
    case EOp::Sub:
    case EOp::Mul:
    case EOp::Div:
    case EOp::Rem:
    case EOp::Min:
    case EOp::Max:
      if (dtype_is_float(e->type)) break;
      return bin(e->op, sym_index(e->a[0]), sym_index(e->a[1]));
    default: break;
  }
  fail_unsupported("the value " + to_string(e) + " is not an integer expression of run-time dimensions");
}

std::vector<ExprP> sym_ints(const Graph &g, const Node &n, size_t input) {
  const Value &v = in_val(g, n, input);
  std::vector<ExprP> r;
  if (v.is_sym()) {
    for (const ExprP &e : v.sym) r.push_back(sym_index(e));
    return r;
  }
  for (int64_t x : const_ints(g, n, input)) r.push_back(cidx(x));
  return r;
}

bool fold_symbolic(Node &n, Graph &g, const OpDef &d) {
  // (A load of an input that is neither constant nor symbolic, a dynamic
  // output, a reduction or a large output stops the evaluation: SymCtx.)
  if (!d.lower) return false;
  for (int o : n.out)
    if (o >= 0 && (g.v(o).numel() > kMaxSymElements || g.v(o).is_dynamic())) return false;
  std::map<int, std::vector<ExprP>> elems;
  try {
    SymCtx c(g, elems);
    d.lower(n, c);
  } catch (const NotSymbolic &) {
    return false;
  }
  bool all = true;
  for (int o : n.out) {
    if (o < 0) continue;
    auto it = elems.find(o);
    if (it == elems.end()) return false;
    all = set_elements(g, o, it->second) && all;
  }
  return all;
}

bool same_extent(const Graph &g, const ExprP &a, const ExprP &b) {
  if (a == b || to_string(a) == to_string(b)) return true;
  std::set<int> ids;
  for (const ExprP *e : {&a, &b})
    visit(*e, [&](const Expr &x) {
      if (x.op == EOp::Dim) ids.insert(x.id);
    });
  // The values each extent takes in the check.
  std::vector<std::pair<int, std::vector<int64_t>>> axes;
  for (int id : ids) {
    const DimSym &s = g.syms.at((size_t)id);
    std::vector<int64_t> v;
    if (s.hi - s.lo < 512) {
      for (int64_t x = s.lo; x <= s.hi; ++x) v.push_back(x);
    } else {
      for (int k = 0; k <= 64; ++k) v.push_back(s.lo + (s.hi - s.lo) * k / 64);
    }
    axes.push_back({id, v});
  }
  // Every combination up to 2^16 points, else 256 of them: each extent at
  // its lower bound, its upper one, its middle, then pseudo-random values
  // (many extents: torchvision's sum of 90 per-class counts).
  std::map<int, int64_t> vals;
  auto agree = [&]() {
    bool ok = true;
    int64_t x = eval_index(a, vals, &ok), y = eval_index(b, vals, &ok);
    return ok && x == y;
  };
  int64_t points = 1;
  for (auto &ax : axes) points = std::min<int64_t>(points * (int64_t)ax.second.size(), 1 << 20);
  if (points <= (1 << 16)) {
    std::function<bool(size_t)> all = [&](size_t k) -> bool {
      if (k == axes.size()) return agree();
      for (int64_t x : axes[k].second) {
        vals[axes[k].first] = x;
        if (!all(k + 1)) return false;
      }
      return true;
    };
    return all(0);
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int sample = 0; sample < 256; ++sample) {
    for (auto &ax : axes) {
      const std::vector<int64_t> &v = ax.second;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      size_t pick = sample == 0   ? 0
                    : sample == 1 ? v.size() - 1
                    : sample == 2 ? v.size() / 2
                                  : (state >> 33) % v.size();
      vals[ax.first] = v[pick];
    }
    if (!agree()) return false;
  }
  return true;
}

}  // namespace tinyrt
