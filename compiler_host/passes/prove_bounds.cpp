// prove_bounds.cpp — before code generation, every load of every kernel
// expression (a loop kernel's, a scheduled kernel's epilogue) is proved
// inside the tensor it reads, or the model is refused with the kernel, the
// ONNX nodes, the tensor, the axis and the index range that escapes it.
// A scheduled kernel's geometry (the GEMM, depthwise and Winograd
// emitters address their tensors from it) is checked against the shapes
// of the tensors it reads and writes.
//
// The proof is an interval analysis over the expression DAG. An index
// variable ranges over its axis; a value loaded from a tensor, or cast
// from a float (saturating), can be anything its type holds; arithmetic
// follows the operands (index arithmetic is 32-bit in generated code: a
// result that could leave int32 may wrap, so it ranges over all of
// int32). Inside a Select the condition narrows what it compares (both
// ways: `i < n` in the first branch, `i >= n` in the second), which is how
// padding guards, Concat's input choice and the negative-index wrap of
// gathers are proved; clamps (Min/Max) bound data-dependent indices.
// A comparison of two expressions also bounds their difference (`t < len`
// makes `len - t` at least 1, as ReverseSequence's index needs). A
// reduction variable ranges over its extent inside the reduction (sibling
// reductions may reuse its id). An integer constant tensor ranges between
// its smallest and largest element. Expressions are compared structurally,
// so a guard narrows every expression equal to the one it tests. A kernel
// with no output element, or a reduction over nothing, reads nothing.
#include <climits>
#include <tuple>
#include <set>
#include <unordered_map>

#include "ir/error.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

struct Range {
  int64_t lo, hi;
};

constexpr Range kAny32{INT32_MIN, INT32_MAX};
constexpr Range kAny64{INT64_MIN, INT64_MAX};
constexpr size_t kMaxVisits = 4000000;  // per kernel; a larger proof is refused
constexpr int kMaxDepth = 256;          // recursion into index expressions and conditions

int64_t sat(__int128 v) { return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v; }

Range any_of(DType t) {
  switch (t) {
    case DType::Bool: return {0, 1};
    case DType::U8: return {0, 255};
    case DType::I8: return {-128, 127};
    case DType::U16: return {0, 65535};
    case DType::I16: return {-32768, 32767};
    case DType::I32: return kAny32;
    case DType::U32: return {0, UINT32_MAX};
    default: return kAny64;
  }
}

Range meet(Range a, Range b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

// Facts a condition establishes: expression key -> range.
using Facts = std::map<std::string, Range>;

void add_fact(Facts *f, const std::string &key, Range r) {
  auto it = f->find(key);
  if (it == f->end())
    (*f)[key] = r;
  else
    it->second = meet(it->second, r);
}

class Prover {
 public:
  Prover(const Graph &g, const Kernel &k, const std::string &where) : g_(g), k_(k), where_(where) {
    contexts_.push_back({});
    for (int a = 0; a < g.v(k.out).rank(); ++a) ext_[a] = g.v(k.out).shape[(size_t)a];
  }

  void prove(const ExprP &e) { check(e, 0); }

 private:
  const Graph &g_;
  const Kernel &k_;
  std::string where_;
  std::map<int, int64_t> ext_;
  std::vector<Facts> contexts_;
  std::unordered_map<const Expr *, std::string> keys_;
  std::set<std::pair<const Expr *, int>> checked_;
  std::map<std::pair<const Expr *, int>, Range> ranges_;
  size_t visits_ = 0;
  int depth_ = 0;

  const std::string &key(const ExprP &e) {
    auto it = keys_.find(e.get());
    if (it != keys_.end()) return it->second;
    return keys_[e.get()] = to_string(e);
  }

  // The smallest and largest element of an integer constant.
  std::map<int, Range> const_ranges_;
  Range const_range(int v) {
    auto it = const_ranges_.find(v);
    if (it != const_ranges_.end()) return it->second;
    const Value &c = g_.v(v);
    Range r{INT64_MAX, INT64_MIN};
    for (int64_t i = 0; i < c.numel(); ++i) {
      int64_t x = c.data->get_i(i);
      r = {std::min(r.lo, x), std::max(r.hi, x)};
    }
    if (c.numel() == 0) r = any_of(c.dtype);
    return const_ranges_[v] = r;
  }

  void count() {
    if (++visits_ > kMaxVisits) fail_unsupported(where_ + ": its expression is too large to prove its loads in bounds");
  }

  // The context `ctx` plus what `cond` being `truth` establishes (one
  // context per condition, whether a check or a range asks for it).
  std::map<std::tuple<const Expr *, int, bool>, int> narrowed_;
  int narrowed(int ctx, const ExprP &cond, bool truth) {
    auto it = narrowed_.find({cond.get(), ctx, truth});
    if (it != narrowed_.end()) return it->second;
    Facts add;
    learn(cond, truth, ctx, &add);
    return narrowed_[{cond.get(), ctx, truth}] = with(ctx, add);
  }

  // The context `ctx` plus the facts `add`.
  int with(int ctx, const Facts &add) {
    if (add.empty()) return ctx;
    Facts f = contexts_[(size_t)ctx];
    for (auto &kv : add) add_fact(&f, kv.first, kv.second);
    contexts_.push_back(std::move(f));
    return (int)contexts_.size() - 1;
  }

  void learn(const ExprP &c, bool truth, int ctx, Facts *out) {
    if (depth_ >= kMaxDepth) return;  // fewer facts: sound
    if (c->op == EOp::Not) {
      ++depth_;
      learn(c->a[0], !truth, ctx, out);
      --depth_;
      return;
    }
    if ((c->op == EOp::And && truth) || (c->op == EOp::Or && !truth)) {
      if (c->type != DType::Bool) return;
      ++depth_;
      learn(c->a[0], truth, ctx, out);
      learn(c->a[1], truth, ctx, out);
      --depth_;
      return;
    }
    if (!is_compare(c->op) || dtype_is_float(c->a[0]->type)) return;
    EOp holds = truth ? c->op : negate_compare(c->op);  // a[0] holds a[1]
    // x (op) y of two expressions: a bound on x - y or y - x.
    if (!c->a[0]->is_const() && !c->a[1]->is_const()) {
      const std::string &x = key(c->a[0]), &y = key(c->a[1]);
      if (holds == EOp::Lt) add_fact(out, "sub(" + y + ", " + x + ")", {1, INT64_MAX});
      if (holds == EOp::Le) add_fact(out, "sub(" + y + ", " + x + ")", {0, INT64_MAX});
      if (holds == EOp::Gt) add_fact(out, "sub(" + x + ", " + y + ")", {1, INT64_MAX});
      if (holds == EOp::Ge) add_fact(out, "sub(" + x + ", " + y + ")", {0, INT64_MAX});
    }
    // x (op) y, as bounds on each side from the other's range.
    for (int side = 0; side < 2; ++side) {
      const ExprP &x = c->a[(size_t)side];
      if (x->is_const()) continue;
      Range y = range(c->a[(size_t)(1 - side)], ctx);
      EOp op = side == 1 ? swap_compare(holds) : holds;
      Range r = kAny64;
      switch (op) {
        case EOp::Lt: r.hi = sat((__int128)y.hi - 1); break;
        case EOp::Le: r.hi = y.hi; break;
        case EOp::Gt: r.lo = sat((__int128)y.lo + 1); break;
        case EOp::Ge: r.lo = y.lo; break;
        case EOp::Eq: r = y; break;
        default: continue;
      }
      add_fact(out, key(x), r);
    }
  }

  // Index arithmetic wraps at 32 bits in generated code.
  Range fit(const ExprP &e, __int128 lo, __int128 hi) {
    if (e->type == kIndexType && (lo < INT32_MIN || hi > INT32_MAX)) return kAny32;
    return {sat(lo), sat(hi)};
  }

  Range range(const ExprP &e, int ctx) {
    auto memo = ranges_.find({e.get(), ctx});
    if (memo != ranges_.end()) return memo->second;
    count();
    // Deeper than kMaxDepth: anything of its type (sound; no deep recursion).
    if (depth_ >= kMaxDepth) return any_of(e->type);
    ++depth_;
    Range r = compute(e, ctx);
    --depth_;
    const Facts &f = contexts_[(size_t)ctx];
    if (!f.empty() && !e->is_const()) {
      auto it = f.find(key(e));
      if (it != f.end()) r = meet(r, it->second);
    }
    return ranges_[{e.get(), ctx}] = r;
  }

  Range compute(const ExprP &e, int ctx) {
    if (dtype_is_float(e->type)) return kAny64;
    switch (e->op) {
      case EOp::Const: return {e->ival, e->ival};
      case EOp::Dim: return {e->ival, e->hi};  // a run-time extent, within its bounds
      case EOp::Var: {                         // reduction variables: the facts of their reduction's context
        auto it = ext_.find(e->id);
        return it == ext_.end() || it->second <= 0 ? any_of(e->type) : Range{0, it->second - 1};
      }
      case EOp::Load: {
        const Value &v = g_.v(k_.ins[(size_t)e->id]);
        return v.is_const() && !dtype_is_float(v.dtype) && v.dtype != DType::Bool ? const_range(k_.ins[(size_t)e->id])
                                                                                  : any_of(e->type);
      }
      case EOp::Cast: {
        if (dtype_is_float(e->a[0]->type)) return any_of(e->type);  // saturating
        Range a = range(e->a[0], ctx), t = any_of(e->type);
        return a.lo >= t.lo && a.hi <= t.hi ? a : t;
      }
      case EOp::Neg: {
        Range a = range(e->a[0], ctx);
        return fit(e, -(__int128)a.hi, -(__int128)a.lo);
      }
      case EOp::Abs: {
        Range a = range(e->a[0], ctx);
        __int128 hi = std::max(-(__int128)a.lo, (__int128)a.hi);
        return fit(e, a.lo >= 0 ? a.lo : a.hi <= 0 ? -(__int128)a.hi : 0, hi);
      }
      case EOp::Add:
      case EOp::Sub:
      case EOp::Mul: {
        Range a = range(e->a[0], ctx), b = range(e->a[1], ctx);
        if (e->op == EOp::Add) return fit(e, (__int128)a.lo + b.lo, (__int128)a.hi + b.hi);
        if (e->op == EOp::Sub) return fit(e, (__int128)a.lo - b.hi, (__int128)a.hi - b.lo);
        __int128 c[4] = {(__int128)a.lo * b.lo, (__int128)a.lo * b.hi, (__int128)a.hi * b.lo, (__int128)a.hi * b.hi};
        return fit(e, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
      }
      case EOp::Min:
      case EOp::Max: {
        Range a = range(e->a[0], ctx), b = range(e->a[1], ctx);
        if (e->op == EOp::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
        return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case EOp::Div:
      case EOp::Rem: {
        Range a = range(e->a[0], ctx), b = range(e->a[1], ctx);
        if (b.lo <= 0) return any_of(e->type);  // a divisor that may be 0 or negative
        if (e->op == EOp::Div) {                // truncating: the extremes are at the corners
          __int128 c[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
          return fit(e, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
        }
        if (a.lo >= 0) return {0, std::min(a.hi, b.hi - 1)};
        return {std::max(a.lo, -(b.hi - 1)), std::max<int64_t>(0, std::min(a.hi, b.hi - 1))};
      }
      case EOp::Select: {
        Range a = range(e->a[1], narrowed(ctx, e->a[0], true)), b = range(e->a[2], narrowed(ctx, e->a[0], false));
        return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      default: return any_of(e->type);
    }
  }

  // Walks the DAG from the root with an explicit stack (an expression may
  // be thousands of nodes deep: a Sum of 5000 inputs).
  void check(const ExprP &root, int root_ctx) {
    std::vector<std::pair<ExprP, int>> todo = {{root, root_ctx}};
    while (!todo.empty()) {
      ExprP e = todo.back().first;
      int ctx = todo.back().second;
      todo.pop_back();
      if (!checked_.insert({e.get(), ctx}).second) continue;
      count();
      if (e->op == EOp::Reduce) {
        Facts vars;
        bool empty = false;
        for (const RVar &r : e->rvars) {
          empty = empty || r.extent <= 0;                  // a reduction over nothing reads nothing
          vars[to_string(var(r.id))] = {0, r.extent - 1};  // a temporary: not through the key cache
        }
        if (!empty) todo.push_back({e->a[0], with(ctx, vars)});
        continue;
      }
      if (e->op == EOp::Select) {
        todo.push_back({e->a[0], ctx});
        todo.push_back({e->a[1], narrowed(ctx, e->a[0], true)});
        todo.push_back({e->a[2], narrowed(ctx, e->a[0], false)});
        continue;
      }
      for (const ExprP &a : e->a) todo.push_back({a, ctx});
      if (e->op == EOp::Load) check_load(e, ctx);
    }
  }

  void check_load(const ExprP &e, int ctx) {
    if (e->id < 0 || e->id >= (int)k_.ins.size()) fail_internal(where_ + ": a load of a missing slot");
    const Value &v = g_.v(k_.ins[(size_t)e->id]);
    if ((int)e->a.size() != v.rank()) fail_internal(where_ + ": a load of '" + v.name + "' with the wrong rank");
    for (size_t ax = 0; ax < e->a.size(); ++ax) {
      Range r = range(e->a[ax], ctx);
      if (r.lo >= 0 && r.hi < v.shape[ax]) continue;
      std::string index = to_string(e->a[ax]);
      if (index.size() > 300) index = index.substr(0, 300) + "...";
      fail_invalid(where_ + ": cannot prove its reads of '" + v.name + "' " + shape_str(v.shape) +
                   " inside the tensor: axis " + std::to_string(ax) + " index " + index + " may be " +
                   std::to_string(r.lo) + " to " + std::to_string(r.hi));
    }
  }
};

// The extent of a role's axis (-1: none, extent 1).
int64_t role_dim(const Value &v, int axis) { return axis < 0 ? 1 : axis < v.rank() ? v.shape[(size_t)axis] : -1; }

// A scheduled kernel's tensors have the shapes its geometry addresses
// (a Winograd input transform writes planes, its output transform reads
// them: only their other side is the convolution's).
void check_geometry(const Graph &g, const Kernel &k, const std::string &where) {
  const GemmSpec &s = k.gemm;
  auto mismatch = [&](const Value &v, const char *what) {
    fail_internal(where + ": its " + what + " '" + v.name + "' " + shape_str(v.shape) + " does not match its geometry");
  };
  if (k.kind != KernelKind::WinogradIn) {
    const Value &out = g.v(k.out);
    int64_t want[4] = {s.batch, s.out_c, s.out_h, s.out_w};
    for (int r = 0; r < 4; ++r)
      if (role_dim(out, s.out_axis[r]) != want[r]) mismatch(out, "output");
  }
  if (k.kind != KernelKind::WinogradOut) {
    const Value &x = g.v(k.ins[0]);
    int64_t want[4] = {s.batch, s.in_c, s.in_h, s.in_w};
    for (int r = 0; r < 4; ++r)
      if (role_dim(x, s.in_axis[r]) != want[r]) mismatch(x, "input");
  }
  if (s.groups <= 0 || s.in_c % s.groups || s.out_c % s.groups)
    fail_internal(where + ": groups do not divide its channels");
  if (is_scheduled(k.kind) && s.weight >= 0 && g.v(s.weight).numel() != s.out_c * (s.in_c / s.groups) * s.k_h * s.k_w)
    mismatch(g.v(s.weight), "weight");
}

// A recurrent kernel's tensors have the shapes its spec addresses.
void check_recurrent(const Graph &g, const Kernel &k, const std::string &where) {
  const RecurrentSpec &r = k.rnn;
  auto expect = [&](int slot, Shape want, const char *what) {
    if (slot < 0) return;
    const Value &v = g.v(slot == (int)k.ins.size() ? k.out : k.ins[(size_t)slot]);
    if (v.shape != want)
      fail_internal(where + ": its " + what + " '" + v.name + "' is " + shape_str(v.shape) + ", its spec addresses " +
                    shape_str(want));
  };
  int64_t D = r.D, H = r.H;
  expect(0, {r.T, r.B, D * r.G * H}, "input projection");
  expect((int)k.ins.size(), {r.T, D, r.B, r.width}, "state sequence");
  expect(r.h0, r.layout1 ? Shape{r.B, D, H} : Shape{D, r.B, H}, "initial state");
  expect(r.c0, r.layout1 ? Shape{r.B, D, H} : Shape{D, r.B, H}, "initial cell state");
  expect(r.p, {D, 3 * H}, "peepholes");
  expect(r.rbh, {D, H}, "recurrent bias");
  expect(r.sync, {r.sync_words()}, "counters");
  // A state row: h, then LSTM's c or GRU's r * h and z (without
  // linear_before_reset), then int8's quantized state (a float per quad).
  int64_t need = r.cell == CellKind::LSTM ? 2 * H : r.cell == CellKind::GRU && !r.linear_before_reset ? 3 * H : H;
  if (r.r_scale >= 0) need = std::max(need, r.q_offset + (H + 3) / 4);
  if (r.width < need) fail_internal(where + ": its state rows are too narrow");
}

}  // namespace

void prove_bounds(PassContext &c) {
  const Program &p = c.program;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    std::string nodes;
    for (size_t n = 0; n < k.nodes.size() && n < 3; ++n) nodes += (n ? ", " : "") + k.nodes[n];
    if (k.nodes.size() > 3) nodes += ", ...";
    std::string where = "kernel " + std::to_string(i) + " (" + k.label + (nodes.empty() ? "" : " of " + nodes) + ")";
    ExprP e;
    if (k.kind == KernelKind::Loop) e = k.expr;
    if (k.kind == KernelKind::Recurrent) check_recurrent(p.graph, k, where);
    if (is_scheduled(k.kind) || is_winograd(k.kind)) {
      check_geometry(p.graph, k, where);
      e = k.gemm.epilogue;
    }
    if (!e || p.graph.v(k.out).numel() == 0) continue;
    Prover(p.graph, k, where).prove(e);
  }
  if (c.log) *c.log << "  the loads of " << p.kernels.size() << " kernels proved in bounds\n";
}

}  // namespace tinyrt
