// loop_emitter.cpp — the generic kernel family: any element expression as
// a loop nest over the output in its physical order. One task is one row
// of the innermost physical axis; the row is computed `lanes` elements at a
// time, and its remainder with a masked vector (x86) or scalar code.
//
// A row whose expression compares the inner index with constants (Concat
// along the inner axis, Pad's borders) is split at those points into
// segments, each with the comparisons decided: a Concat becomes plain
// copies instead of two masked loads and a select per element.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "codegen/kernel_emitters.h"

namespace tinyrt {

namespace {

constexpr size_t kMaxSegments = 16;

// Is `x` the index variable `axis` plus a constant (`i`, `i + c`,
// `i - c`)? Gives c.
std::optional<int64_t> offset_from(const ExprP &x, int axis) {
  if (x->op == EOp::Var && x->id == axis) return 0;
  if ((x->op == EOp::Add || x->op == EOp::Sub) && x->a[0]->op == EOp::Var && x->a[0]->id == axis &&
      x->a[1]->is_const() && !dtype_is_float(x->a[1]->type))
    return x->op == EOp::Add ? x->a[1]->ival : -x->a[1]->ival;
  return std::nullopt;
}

// Calls f(op, off, k) for each comparison `i + off (op) k` in `e` of the
// index variable `axis` (i on the left) with an index expression k that
// `bound_ok` accepts.
void axis_comparisons(const ExprP &e, int axis, const std::function<bool(const ExprP &)> &bound_ok,
                      const std::function<void(EOp, int64_t, const ExprP &)> &f) {
  visit(e, [&](const Expr &n) {
    if (!is_compare(n.op) || n.op == EOp::Eq || n.op == EOp::Ne) return;
    for (int side = 0; side < 2; ++side) {
      const ExprP &k = n.a[1 - side];
      std::optional<int64_t> off = offset_from(n.a[side], axis);
      if (!off || !bound_ok(k)) continue;
      f(side == 1 ? swap_compare(n.op) : n.op, *off, k);
    }
  });
}

// Where a comparison of `i + c` (or `i - c`, or `i`) with a constant
// changes its value, for the index variable `axis`: the first index of
// the part after the change. Adds nothing for other comparisons.
void split_points(const ExprP &e, int axis, std::set<int64_t> *points) {
  axis_comparisons(
      e, axis, [](const ExprP &k) { return k->is_const() && !dtype_is_float(k->type); },
      [&](EOp op, int64_t off, const ExprP &k) {
        int64_t p = k->ival - off;  // i < p, i >= p flip at p; i <= p, i > p at p + 1
        points->insert(op == EOp::Lt || op == EOp::Ge ? p : p + 1);
      });
}

// A row's segments along `axis` (extent `n`): [begin, end), each with the
// expression in terms of the index within the segment and its comparisons
// with the segment's bounds folded (`extents`: the output's shape), so a
// Concat along the row becomes plain copies and a Pad's interior reads
// without guards. One segment when nothing compares, or more than
// kMaxSegments would.
struct Segment {
  int64_t begin, end;
  ExprP expr;
  // A run-time row's segment (run_row_segments): its first index and
  // length as index expressions of run-time extents, and their values,
  // computed once at the kernel's entry; `begin`, `end` are then 0 and the
  // row's bound.
  ExprP rt_begin = nullptr, rt_len = nullptr;
  llvm::Value *vbegin = nullptr, *vlen = nullptr;
};
std::vector<Segment> row_segments(const ExprP &expr, int axis, int64_t n, const std::map<int, int64_t> &extents) {
  std::set<int64_t> points;
  split_points(expr, axis, &points);
  std::vector<int64_t> cuts = {0};
  for (int64_t q : points)
    if (q > 0 && q < n) cuts.push_back(q);
  cuts.push_back(n);
  if (cuts.size() - 1 > kMaxSegments || cuts.size() == 2) return {{0, n, expr}};
  std::vector<Segment> segments;
  int r = (int)extents.size();
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    std::vector<ExprP> vars;
    for (int a = 0; a < r; ++a) vars.push_back(a == axis ? var(a) + cuts[i] : var(a));
    std::map<int, int64_t> ext = extents;
    ext[axis] = cuts[i + 1] - cuts[i];
    segments.push_back({cuts[i], cuts[i + 1], simplify_with_ranges(substitute_vars(expr, vars), ext)});
  }
  return segments;
}

// The interior of an outer axis (extent n): the longest run of its
// indices [lo, hi) at each of which every index comparison of `e` that
// involves it is decided the same way, whatever the other variables
// (reduction variables included) hold: a pooling window's padding checks
// `2 * i + r - 1 >= 0` and `< H` are true for every r from the second
// output row to the last but one. nullopt when the run is the whole axis
// (nothing to decide) or shorter than half of it, or when the axis is
// longer than kMaxInteriorScan (a scan over its indices).
constexpr int64_t kMaxInteriorScan = 4096;
std::optional<std::pair<int64_t, int64_t>> axis_interior(const ExprP &e, int axis, int64_t n,
                                                         const std::map<int, int64_t> &extents) {
  if (n > kMaxInteriorScan || n < 3) return std::nullopt;
  std::vector<ExprP> cmps;
  std::set<const Expr *> seen;
  visit(e, [&](const Expr &x) {
    if (!is_compare(x.op) || x.a[0]->type != kIndexType) return;
    bool uses = false;
    for (const ExprP &o : x.a) visit(o, [&](const Expr &v) { uses = uses || (v.op == EOp::Var && v.id == axis); });
    if (uses && seen.insert(&x).second) cmps.push_back(bin(x.op, x.a[0], x.a[1]));
  });
  if (cmps.empty()) return std::nullopt;
  std::map<int, int64_t> all = extents;
  visit(e, [&](const Expr &x) {
    for (const RVar &r : x.rvars) all[r.id] = r.extent;
  });
  // Per index: each comparison's verdict (0, 1; -1 undecided).
  auto verdicts = [&](int64_t i) {
    std::vector<ExprP> vars;
    for (int a = 0; a <= axis; ++a) vars.push_back(a == axis ? cidx(i) : var(a));
    std::vector<int> v;
    for (const ExprP &c : cmps) {
      ExprP f = simplify_with_ranges(substitute_vars(c, vars), all);
      v.push_back(f->is_const() ? (int)(f->ival != 0) : -1);
    }
    return v;
  };
  int64_t best_lo = 0, best_len = 0, lo = 0;
  std::vector<int> run;
  for (int64_t i = 0; i <= n; ++i) {
    std::vector<int> v = i < n ? verdicts(i) : std::vector<int>{};
    bool decided = i < n && std::find(v.begin(), v.end(), -1) == v.end();
    if (decided && v == run) continue;
    if (!run.empty() && i - lo > best_len) best_lo = lo, best_len = i - lo;
    run = decided ? v : std::vector<int>{};
    lo = i;
  }
  if (best_len == n || 2 * best_len < n) return std::nullopt;
  return std::make_pair(best_lo, best_lo + best_len);
}

// A run-time row's segments: the row (length `len`, an index expression
// of run-time extents, at most `n`) cut where a comparison of `i + c` with
// a constant or an expression of run-time extents changes its value (a
// padded copy's borders at the run's edges, a Concat along a run-time
// axis). The cuts must keep one order for every combination of the
// extents' values (tried one by one, up to kMaxDimCombos); each segment's bounds are clamped
// into [0, len], and its comparisons fold over its run-time length
// (simplify_with_run_extents: `run` gives the other axes' run-time
// extents). One segment, the whole row, when nothing compares, the order
// varies, or more than kMaxSegments would.
std::vector<Segment> run_row_segments(const ExprP &expr, int axis, const ExprP &len, int64_t n,
                                      const std::map<int, int64_t> &extents, std::map<int, ExprP> run) {
  const std::vector<Segment> whole = {{0, n, expr}};
  std::vector<ExprP> points;
  std::set<std::string> seen;
  auto uniform = [](const ExprP &k) {  // constants and run-time extents only
    bool u = k->type == kIndexType;
    visit(k, [&](const Expr &q) { u = u && (q.op == EOp::Const || q.op == EOp::Dim || is_binary(q.op)); });
    return u;
  };
  axis_comparisons(expr, axis, uniform, [&](EOp op, int64_t off, const ExprP &k) {
    ExprP p = k - off;  // i < p, i >= p flip at p; i <= p, i > p at p + 1
    if (op == EOp::Le || op == EOp::Gt) p = p + 1;
    if (seen.insert(to_string(p)).second) points.push_back(p);
  });
  if (points.empty() || points.size() + 1 > kMaxSegments) return whole;
  // Clamped into [0, len]: cuts. Ordered by their values at the first
  // combination of the extents involved, which every other must keep.
  DimRanges syms;
  add_dims(len, &syms);
  for (const ExprP &p : points) add_dims(p, &syms);
  std::vector<ExprP> cuts;
  for (const ExprP &p : points) cuts.push_back(emin(emax(p, cidx(0)), len));
  std::vector<size_t> order;
  bool ordered = for_each_dim_value(syms, kMaxDimCombos, [&](const std::map<int, int64_t> &dimv) {
    std::vector<int64_t> v;
    for (const ExprP &q : cuts) {
      std::optional<int64_t> x = eval_index(q, dimv);
      if (!x) return false;
      v.push_back(*x);
    }
    if (order.empty()) {
      for (size_t i = 0; i < cuts.size(); ++i) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    }
    for (size_t i = 0; i + 1 < order.size(); ++i)
      if (v[order[i]] > v[order[i + 1]]) return false;
    return true;
  });
  if (!ordered) return whole;
  std::vector<ExprP> bounds = {cidx(0)};
  for (size_t i : order) bounds.push_back(cuts[i]);
  bounds.push_back(len);
  std::vector<Segment> segments;
  int r = (int)extents.size();
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    std::vector<ExprP> vars;
    for (int a = 0; a < r; ++a) vars.push_back(a == axis ? var(a) + bounds[i] : var(a));
    ExprP seg_len = bounds[i + 1] - bounds[i];
    run[axis] = seg_len;
    Segment seg{0, n, simplify_with_run_extents(substitute_vars(expr, vars), extents, run)};
    seg.rt_begin = bounds[i];
    seg.rt_len = seg_len;
    segments.push_back(seg);
  }
  return segments;
}

// Whether every value `e` computes (not counting index arithmetic) is a
// byte: such a row runs a vector of bytes at a time instead of a vector
// of floats' worth (tables of 256 bytes read at a byte, copies, byte
// selects).
bool bytes_only(const ExprP &e) {
  if (e->op == EOp::Load) {
    bool flip;
    ExprP x = byte_table_index(*e, &flip);
    return dtype_bytes(e->type) == 1 && (!x || bytes_only(x));
  }
  if (e->op == EOp::Reduce || dtype_bytes(e->type) != 1) return false;
  for (const ExprP &a : e->a)
    if (!bytes_only(a)) return false;
  return true;
}

// The coefficient of index variable `v` in the index expression `e` when
// `e` is affine in it (0 where `v` does not appear), else nullopt (also
// when a coefficient would overflow: constants come from the model).
std::optional<int64_t> coef_of(const ExprP &e, int v) {
  switch (e->op) {
    case EOp::Var: return e->id == v ? 1 : 0;
    case EOp::Const: return 0;
    case EOp::Add:
    case EOp::Sub:
    case EOp::Mul: {
      std::optional<int64_t> a = coef_of(e->a[0], v), b = coef_of(e->a[1], v);
      if (!a || !b) return std::nullopt;
      int64_t r;
      bool over = false;
      if (e->op == EOp::Add)
        over = __builtin_add_overflow(*a, *b, &r);
      else if (e->op == EOp::Sub)
        over = __builtin_sub_overflow(*a, *b, &r);
      else if (*a == 0 && *b == 0)
        r = 0;
      else if (*b == 0 && e->a[1]->is_const())
        over = __builtin_mul_overflow(*a, e->a[1]->ival, &r);
      else if (*a == 0 && e->a[0]->is_const())
        over = __builtin_mul_overflow(*b, e->a[0]->ival, &r);
      else
        return std::nullopt;
      if (over) return std::nullopt;
      return r;
    }
    default: {
      bool uses = false;
      visit(e, [&](const Expr &x) { uses = uses || (x.op == EOp::Var && x.id == v); });
      return uses ? std::nullopt : std::optional<int64_t>(0);
    }
  }
}

// Loads in `e` that walk memory other than contiguously (or not at all)
// as index variable `v` steps: gathers when `v` is vectorized.
int gathers_along(const ExprP &e, int v, const std::vector<SlotRef> &slots) {
  int n = 0;
  visit(e, [&](const Expr &x) {
    if (x.op != EOp::Load) return;
    int64_t step = 0;
    bool known = true;
    for (size_t k = 0; k < x.a.size() && known; ++k) {
      std::optional<int64_t> c = coef_of(x.a[k], v);
      int64_t term;
      known = c && !__builtin_mul_overflow(*c, slots[(size_t)x.id].strides[k], &term) &&
              !__builtin_add_overflow(step, term, &step);
    }
    n += !known || (step != 0 && step != 1);
  });
  return n;
}

// Whether the rows are better computed one output at a time with each
// reduction's innermost variable vectorized (ExprEmitter::
// set_vector_reductions): fewer of the reduced loads gather along that
// variable than along the row's axis. Q K^T in attention (a row of keys,
// each read along its features) and a reduction over the last axis of a
// tensor whose reduced-away outputs form the row (Softmax's max and sum,
// LayerNormalization's means) are such rows.
bool reduce_along_inner(const ExprP &e, int row_axis, int lanes, const std::vector<SlotRef> &slots) {
  int along_row = 0, along_reduction = 0;
  bool any = false;
  visit(e, [&](const Expr &x) {
    if (x.op != EOp::Reduce || x.type != DType::F32 || x.rvars.back().extent < lanes) return;
    any = true;
    along_row += gathers_along(x.a[0], row_axis, slots);
    along_reduction += gathers_along(x.a[0], x.rvars.back().id, slots);
  });
  return any && along_row > along_reduction;
}

constexpr int64_t kMinRow = 512;      // elements; shorter rows merge with the next axis out
constexpr int kElementsTogether = 4;  // rows that reduce along the reduction: outputs computed together

// Whether the index variables of `axes` (physical order, innermost last)
// can run as one flattened row: they are used only as load indices at
// their own axis, and every tensor read through them, and the output, is
// either dense over them in that order or not indexed by them at all.
// Element j of the flattened row is then at offset j of each tensor's
// (broadcast or dense) block.
bool can_flatten(const ExprP &expr, const std::vector<int> &axes, const std::vector<SlotRef> &slots, const SlotRef &out,
                 const Shape &shape) {
  auto merged = [&](int id) { return std::find(axes.begin(), axes.end(), id) != axes.end(); };
  auto dense = [&](const std::vector<int64_t> &eff) {
    bool none = true;
    for (int a : axes) none = none && eff[(size_t)a] == 0;
    if (none) return true;
    int64_t want = 1;
    for (size_t i = axes.size(); i-- > 0;) {
      if (eff[(size_t)axes[i]] != want) return false;
      want *= shape[(size_t)axes[i]];
    }
    return true;
  };
  std::map<const Expr *, bool> memo;
  std::function<bool(const ExprP &)> clean = [&](const ExprP &e) -> bool {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    bool ok = true;
    if (e->op == EOp::Var) {
      ok = !merged(e->id);
    } else if (e->op == EOp::Load) {
      std::vector<int64_t> eff(shape.size(), 0);
      for (size_t a = 0; a < e->a.size() && ok; ++a) {
        const ExprP &i = e->a[a];
        if (i->op == EOp::Var && merged(i->id)) {
          ok = i->id == (int)a && a < eff.size();
          if (ok) eff[a] = slots[(size_t)e->id].strides[a];
        } else {
          ok = clean(i);
        }
      }
      ok = ok && dense(eff);
    } else {
      for (const ExprP &a : e->a) ok = ok && clean(a);
    }
    return memo[e.get()] = ok;
  };
  return clean(expr) && dense(out.strides);
}

// Task t's indices over the outer physical axes phys[0 .. count): row
// major over their extents (`extent_of`: constants, or run-time extents
// when `dynamic`, then clamped into the bounds `shape`: a remainder by a
// run-time extent is below the axis's bound, which the bounds proof cannot
// see; the clamp, the identity, tells it).
std::map<int, llvm::Value *> task_indices(llvm::IRBuilder<> &b, llvm::Value *t, const std::vector<int> &phys,
                                          size_t count, const std::function<llvm::Value *(int)> &extent_of,
                                          const Shape &shape, bool dynamic) {
  std::map<int, llvm::Value *> at;
  llvm::Value *rem = t;
  for (size_t i = count; i-- > 0;) {
    llvm::Value *ext = extent_of(phys[i]);
    at[phys[i]] = i == 0 ? rem : b.CreateURem(rem, ext);
    if (i > 0) rem = b.CreateUDiv(rem, ext);
    if (dynamic) at[phys[i]] = clamp_i32(b, at[phys[i]], 0, std::max<int64_t>(0, shape[(size_t)phys[i]] - 1));
  }
  return at;
}

// The interleaved rows (see emit_loop_kernel): one task per row of the two
// innermost physical axes, [w][c] with C = extent of c.
// The row of pixels is cut into segments where the expression compares w
// with constants (a padded copy's borders), so the interior reads without
// guards.
// Run-time extents (`extent_of` gives an axis's, a constant where fixed;
// `dynamic`): the tasks [begin, end) are shares of the run's rows, and the
// segments are the run's (run_row_segments: their bounds computed at the
// kernel's entry), or the row of the run's width.
void emit_interleaved_rows(llvm::IRBuilder<> &b, const Target &T, llvm::Value *begin, llvm::Value *end,
                           const std::vector<SlotRef> &slots, const SlotRef &out_slot, const Value &out,
                           const std::vector<int> &phys, const std::vector<Segment> &segments, int L, bool dynamic,
                           const std::function<llvm::Value *(int)> &extent_of,
                           const std::function<void(ExprEmitter &)> &attach_dims) {
  const int r = out.rank();
  const int c_axis = phys.back(), w_axis = phys[phys.size() - 2];
  const int C = (int)out.shape[(size_t)c_axis];
  const int64_t W = out.shape[(size_t)w_axis];
  llvm::Value *run_w = dynamic ? extent_of(w_axis) : nullptr;
  emit_counted_loop(
      b, begin, end,
      [&](llvm::Value *t) {
        std::map<int, llvm::Value *> outer = task_indices(b, t, phys, phys.size() - 2, extent_of, out.shape, dynamic);
        auto bind_outer = [&](ExprEmitter &em, std::vector<VVal> &idx) {
          for (int a = 0; a < r; ++a)
            if (a != c_axis && a != w_axis) {
              idx[(size_t)a] = em.uniform(outer.count(a) ? outer[a] : b.getInt32(0));
              em.bind(a, idx[(size_t)a]);
            }
        };
        // Pixels j .. j+lanes-1 (`active` of them) of a segment starting at
        // pixel `begin`, all C elements of each.
        auto group = [&](const ExprP &expr, llvm::Value *begin, int lanes, llvm::Value *j, int active) {
          llvm::Value *at = b.CreateAdd(j, begin);  // the pixel in the row
          if (lanes == 1) {
            for (int c = 0; c < C; ++c) {
              ExprEmitter em(b, T, 1);
              em.set_slots(slots);
              attach_dims(em);
              std::vector<VVal> idx((size_t)r);
              bind_outer(em, idx);
              idx[(size_t)w_axis] = em.uniform(at);
              idx[(size_t)c_axis] = em.uniform(b.getInt32(c));
              em.bind(w_axis, em.uniform(j));
              em.bind(c_axis, idx[(size_t)c_axis]);
              em.store(out_slot, idx, em.emit(expr), out.dtype);
            }
            return;
          }
          llvm::Value *mask = active < lanes ? lane_mask(b, lanes, active) : nullptr;
          std::vector<llvm::Value *> vs;
          for (int c = 0; c < C; ++c) {
            ExprEmitter em(b, T, lanes);
            em.set_slots(slots);
            attach_dims(em);
            em.set_mask(mask);
            em.set_split_offsets(true);
            std::vector<VVal> idx((size_t)r);
            bind_outer(em, idx);
            em.bind(w_axis, em.affine(j, 1));
            em.bind(c_axis, em.uniform(b.getInt32(c)));
            vs.push_back(em.vec(em.emit(expr)));
          }
          // Lane i*C + c of the store is lane i of vector c.
          std::vector<int> pick;
          for (int i = 0; i < lanes; ++i)
            for (int c = 0; c < C; ++c) pick.push_back(c * lanes + i);
          llvm::Value *all = b.CreateShuffleVector(concat_vectors(b, vs), pick);
          ExprEmitter es(b, T, C * lanes);
          es.set_slots(slots);
          es.set_split_offsets(true);
          es.set_mask(active < lanes ? lane_mask(b, C * lanes, C * active) : nullptr);
          std::vector<VVal> idx((size_t)r);
          bind_outer(es, idx);
          idx[(size_t)w_axis] = es.uniform(at);
          idx[(size_t)c_axis] = es.affine(b.getInt32(0), 1);
          es.store(out_slot, idx, es.vector(all), out.dtype);
        };
        if (dynamic) {  // each segment's run-time length: full vectors, then the rest
          for (const Segment &seg : segments) {
            llvm::Value *first = seg.vbegin ? seg.vbegin : b.getInt32(0), *n = seg.vlen ? seg.vlen : run_w;
            llvm::Value *main = b.CreateUDiv(n, b.getInt32(L)), *done = b.CreateMul(main, b.getInt32(L));
            emit_counted_loop(
                b, b.getInt32(0), main,
                [&](llvm::Value *j) {
                  group(seg.expr, first, L, b.CreateMul(clamp_i32(b, j, 0, W / L - 1), b.getInt32(L)), L);
                },
                "vec");
            if (T.masked_tail) {
              llvm::Value *at = clamp_i32(b, done, 0, W - 1);
              for (int a = 1; a < L; ++a)
                emit_branch(
                    b, b.CreateICmpEQ(b.CreateSub(n, done), b.getInt32(a)),
                    [&] { group(seg.expr, first, L, clamp_i32(b, at, 0, W - a), a); }, [] {}, "vtail");
            } else {
              emit_counted_loop(
                  b, done, n, [&](llvm::Value *j) { group(seg.expr, first, 1, clamp_i32(b, j, 0, W - 1), 1); }, "tail");
            }
          }
          return;
        }
        for (const Segment &seg : segments) {
          int64_t n = seg.end - seg.begin, main = n / L, tail = n % L;
          if (main > 0)
            emit_counted_loop(
                b, b.getInt32(0), b.getInt32((int32_t)main),
                [&](llvm::Value *j) {
                  group(seg.expr, b.getInt32((int32_t)seg.begin), L, b.CreateMul(j, b.getInt32(L)), L);
                },
                "vec");
          if (tail && T.masked_tail) {
            group(seg.expr, b.getInt32((int32_t)seg.begin), L, b.getInt32((int32_t)(main * L)), (int)tail);
          } else if (tail) {
            emit_counted_loop(
                b, b.getInt32((int32_t)(main * L)), b.getInt32((int32_t)n),
                [&](llvm::Value *j) { group(seg.expr, b.getInt32((int32_t)seg.begin), 1, j, 1); }, "tail");
          }
        }
      },
      "task");
}

}  // namespace

namespace {

// One loop kernel: tasks over the outer physical axes of the output, each
// a row along the innermost non-unit axis (vectorized), split into
// segments where the expression changes form along the row.
class LoopKernel {
 public:
  LoopKernel(EmitEnv &env, const Kernel &k)
      : env_(env),
        k_(k),
        p_(env.program),
        out_(p_.graph.v(k.out)),
        T_(env.target),
        r_(out_.rank()),
        b_(env.module.getContext()) {}

  EmittedKernel emit(const std::string &name) {
    plan_axes();
    llvm::Function *f = begin_kernel_function(env_, b_, name);
    llvm::Value *arena = f->getArg(0);
    bool empty = out_.numel() == 0;
    EmittedKernel result{f, empty ? 1 : tasks_};
    if (empty) {
      b_.CreateRetVoid();
      return result;
    }
    for (int v : k_.ins) slots_.push_back(slot_for(env_, b_, arena, v));
    out_slot_ = slot_for(env_, b_, arena, k_.out);
    if (dynamic_) load_extents(arena);
    plan_rows();
    result.tasks = tasks_;
    if (interleaved_rows()) {
      const int w_axis = phys_[phys_.size() - 2];
      std::vector<Segment> segments =
          dynamic_ ? run_segments(w_axis) : row_segments(expr_, w_axis, out_.shape[(size_t)w_axis], extents_);
      result.tasks = tasks_ / out_.shape[(size_t)w_axis];
      llvm::Value *begin = f->getArg(1), *end = f->getArg(2);
      if (dynamic_) share_rows(2, result.tasks, &begin, &end);
      emit_interleaved_rows(
          b_, T_, begin, end, slots_, out_slot_, out_, phys_, segments, L_, dynamic_,
          [this](int a) { return extent_of(a); }, [this](ExprEmitter &em) { attach_dims(em); });
      b_.CreateRetVoid();
      return result;
    }
    wide_ = 1;
    if (!by_reduction_ && dtype_bytes(out_.dtype) <= 4 && L_ > 1) {
      bool reduces = false;
      visit(expr_, [&](const Expr &x) { reduces = reduces || (x.op == EOp::Reduce && x.type == DType::F32); });
      if (reduces) wide_ = inner_ >= 4 * L_ ? 4 : inner_ >= 2 * L_ ? 2 : 1;
    }
    segments_ = row_segments_of(expr_);
    llvm::Value *begin = f->getArg(1), *end = f->getArg(2);
    if (pixel_rows()) {
      // Short rows over run-time extents: a task is a row of them along
      // the next axis out (its run-time length), so that no row's indices
      // are divided out of a task index (a division and the clamps per
      // pixel; the loop's own index is in bounds for the proof).
      const size_t outer = phys_.size() - row_axes_ - 1;
      const int w_axis = phys_[outer];
      result.tasks = tasks_ / out_.shape[(size_t)w_axis];
      share_rows(row_axes_ + 1, result.tasks, &begin, &end);
      emit_counted_loop(
          b_, begin, end,
          [&](llvm::Value *t) {
            std::map<int, llvm::Value *> at = task_indices(
                b_, t, phys_, outer, [this](int a) { return extent_of(a); }, out_.shape, dynamic_);
            emit_counted_loop(
                b_, b_.getInt32(0), extent_of(w_axis),
                [&](llvm::Value *w) {
                  outer_ = at;
                  outer_[w_axis] = w;
                  row();
                },
                "pixel");
          },
          "task");
    } else {
      if (dynamic_) share_rows(row_axes_, tasks_, &begin, &end);
      plan_interior();
      emit_counted_loop(
          b_, begin, end,
          [&](llvm::Value *t) {
            outer_ = task_indices(
                b_, t, phys_, phys_.size() - row_axes_, [this](int a) { return extent_of(a); }, out_.shape, dynamic_);
            if (interior_.empty()) {
              row();
              return;
            }
            llvm::Value *inside = b_.getTrue();
            for (auto &[a, r] : interior_)
              inside = b_.CreateAnd(inside, b_.CreateICmpULT(b_.CreateSub(outer_.at(a), b_.getInt32((int32_t)r.first)),
                                                             b_.getInt32((int32_t)(r.second - r.first))));
            emit_branch(
                b_, inside, [&] { interior_row(); }, [&] { row(); }, "interior");
          },
          "task");
    }
    b_.CreateRetVoid();
    return result;
  }

 private:
  // Physical order without size-1 axes: the last one is vectorized; a task
  // per index of the others.
  void plan_axes() {
    dynamic_ = out_.is_dynamic() || has_dims(k_.expr);
    std::vector<int> perm = p_.perm_of(k_.out);
    if (perm.empty())
      for (int a = 0; a < r_; ++a) perm.push_back(a);
    for (int a : perm)
      if (out_.shape[a] != 1) phys_.push_back(a);
    inner_axis_ = phys_.empty() ? -1 : phys_.back();
    inner_ = inner_axis_ < 0 ? 1 : out_.shape[inner_axis_];
    tasks_ = 1;
    for (size_t i = 0; i + 1 < phys_.size(); ++i) tasks_ *= out_.shape[phys_[i]];
    // Comparisons decided for every extent in range fold too (a window
    // inside a run-time image: `2 * i + r < H` over (H - 2) / 2 + 1 rows).
    for (int a = 0; a < r_; ++a) {
      extents_[a] = out_.shape[a];
      if (axis_dyn(a)) run_ext_[a] = p_.graph.extent(k_.out, a);
    }
    expr_ = simplify_with_run_extents(k_.expr, extents_, run_ext_);
  }

  // The tasks (their count fixed, from the bounds) share the actual rows
  // (the outer physical axes but the last `inner_axes`) evenly: tasks
  // [begin, end) compute rows [begin * A / N, end * A / N) of the A there
  // are, so that every thread gets its share of a short run too.
  void share_rows(size_t inner_axes, int64_t tasks, llvm::Value **begin, llvm::Value **end) {
    llvm::Value *rows = b_.getInt32(1);
    for (size_t i = 0; i + inner_axes < phys_.size(); ++i) rows = b_.CreateMul(rows, extent_of(phys_[i]));
    *begin = share_units(b_, *begin, rows, tasks);
    *end = share_units(b_, *end, rows, tasks);
  }

  // Run-time extents: the base ones loaded at the kernel's entry, and each
  // output axis's extent (derived ones computed there too).
  void load_extents(llvm::Value *arena) {
    dimv_ = load_dims(env_, b_, arena);
    for (int a = 0; a < r_; ++a) ext_[(size_t)a] = extent_value(env_, b_, dimv_, k_.out, a);
  }
  bool axis_dyn(int a) const { return out_.dim(a) >= 0; }
  bool inner_dyn() const { return inner_axis_ >= 0 && axis_dyn(inner_axis_); }
  // Is the row's length a run-time one (its axis's extent, or a run-time
  // axis merged into it), and that length.
  bool row_is_dyn() const { return inner_dyn() || row_dyn_; }
  llvm::Value *row_len() { return row_dyn_ ? row_n_ : ext_[(size_t)inner_axis_]; }
  llvm::Value *extent_of(int a) { return axis_dyn(a) ? ext_[(size_t)a] : b_.getInt32((int32_t)out_.shape[(size_t)a]); }
  // An emitter for the kernel's expression: its Dim leaves read the loaded extents.
  void attach_dims(ExprEmitter &em) {
    if (dynamic_) em.set_dims([this](int s) { return dimv_.at(s); });
  }

  // Short rows (a channels-last tensor of few channels) merge with the
  // axes around them into one row of at least kMinRow elements where the
  // addressing allows (can_flatten): vectors stay full, loops long. A row
  // whose elements reduce along it (vectorized per element) stays.
  void plan_rows() {
    row_axes_ = phys_.empty() ? 0 : 1;
    L_ = bytes_only(k_.expr) && dtype_bytes(out_.dtype) == 1 ? T_.vector_bytes : T_.f32_lanes();
    by_reduction_ = L_ > 1 && inner_axis_ >= 0 && reduce_along_inner(expr_, inner_axis_, L_, slots_);
    for (;;) {
      if (by_reduction_) break;
      if (row_axes_ == 0 || row_axes_ >= phys_.size() || inner_ >= kMinRow) break;
      std::vector<int> axes(phys_.end() - (long)row_axes_ - 1, phys_.end());
      // A run-time axis merges only as the row's outermost one: the actual
      // elements of [T, fixed...] are the first ones of the bounds' layout.
      if (inner_dyn() || row_dyn_) break;
      std::set<int64_t> cmp;
      for (int a : axes) split_points(expr_, a, &cmp);
      if (!cmp.empty() || !can_flatten(expr_, axes, slots_, out_slot_, out_.shape)) break;
      if (axis_dyn(axes.front())) {
        row_dyn_ = true;
        row_n_ = b_.CreateMul(extent_of(axes.front()), b_.getInt32((int32_t)inner_));
      }
      ++row_axes_;
      inner_ *= out_.shape[(size_t)axes.front()];
      tasks_ /= out_.shape[(size_t)axes.front()];
    }
    row_outer_.assign(phys_.end() - (long)row_axes_, phys_.end() - (row_axes_ ? 1 : 0));
  }

  // Rows of 2 to 4 elements (the channels of a channels-last image, as
  // pad_conv_rows' copies have them) whose next axis out is dense with
  // them: each inner index is computed as a vector along that axis, and
  // the vectors are interleaved into one contiguous store.
  bool interleaved_rows() const {
    int w_axis = phys_.size() >= 2 ? phys_[phys_.size() - 2] : -1;
    // (Over a run-time width: copies only, such as the padded copies; a
    // reduction per element does better in rows of its own there.)
    if (dynamic_ && has_reduce(expr_)) return false;
    return !inner_dyn() && !row_dyn_ && !by_reduction_ && row_axes_ == 1 && w_axis >= 0 && inner_ >= 2 && inner_ <= 4 &&
           out_.dtype != DType::Bool && out_slot_.strides[(size_t)inner_axis_] == 1 &&
           out_slot_.strides[(size_t)w_axis] == inner_ && out_.shape[(size_t)w_axis] >= L_;
  }

  // The row's segments: cut at constant points (row_segments), or, along
  // a run-time axis, at points of run-time extents (run_segments).
  std::vector<Segment> row_segments_of(const ExprP &e) {
    if (inner_axis_ < 0) return {{0, inner_, e}};
    if (!row_is_dyn()) return row_segments(e, inner_axis_, inner_, extents_);
    if (row_dyn_) return {{0, inner_, e}};
    return run_segments(inner_axis_);
  }
  // The segments of a row along run-time axis `axis`, their first index
  // and length computed here (the kernel's entry), clamped into the row's
  // bound for the proof.
  std::vector<Segment> run_segments(int axis) {
    const int64_t n = out_.shape[(size_t)axis];
    std::vector<Segment> segs = run_row_segments(expr_, axis, p_.graph.extent(k_.out, axis), n, extents_, run_ext_);
    for (Segment &seg : segs) {
      if (!seg.rt_begin) continue;
      ExprEmitter em(b_, T_, 1);
      attach_dims(em);
      seg.vbegin = clamp_i32(b_, em.emit(seg.rt_begin).v, 0, n);
      seg.vlen = clamp_i32(b_, em.emit(seg.rt_len).v, 0, n);
    }
    return segs;
  }

  // The interior box of the tasks' axes (axis_interior): tasks whose
  // indices lie in it evaluate interior_segments_, the expression with the
  // comparisons the box decides folded (a pooling window inside the
  // input: no padding checks, no clamped addresses), each boxed axis's
  // variable counted from the box's first index. Fixed extents only.
  void plan_interior() {
    if (dynamic_ || inner_axis_ < 0) return;
    std::map<int, int64_t> ext = extents_;
    std::vector<ExprP> vars;
    for (int a = 0; a < r_; ++a) vars.push_back(var(a));
    for (size_t i = 0; i + row_axes_ < phys_.size(); ++i) {
      const int a = phys_[i];
      auto r = axis_interior(expr_, a, out_.shape[(size_t)a], extents_);
      if (!r) continue;
      interior_[a] = *r;
      vars[(size_t)a] = var(a) + r->first;
      ext[a] = r->second - r->first;
    }
    if (interior_.empty()) return;
    ExprP e = simplify_with_ranges(substitute_vars(expr_, vars), ext);
    interior_segments_ = row_segments(e, inner_axis_, inner_, ext);
  }
  // One row of an interior task (plan_interior).
  void interior_row() {
    for (auto &[a, r] : interior_)
      shift_[a] = clamp_i32(b_, b_.CreateSub(outer_.at(a), b_.getInt32((int32_t)r.first)), 0, r.second - r.first - 1);
    std::swap(segments_, interior_segments_);
    row();
    std::swap(segments_, interior_segments_);
    shift_.clear();
  }

  // Binds the output's axes for the elements from j of a segment (a vector
  // of them along the row, or one) and returns the output index.
  std::vector<VVal> bind_row(ExprEmitter &em, const Segment &seg, llvm::Value *j, bool one) {
    std::vector<VVal> idx(r_);
    for (int a = 0; a < r_; ++a) {
      if (a == inner_axis_) {
        llvm::Value *at = b_.CreateAdd(j, seg.vbegin ? seg.vbegin : b_.getInt32((int32_t)seg.begin));
        em.bind(a, one ? em.uniform(j) : em.affine(j, 1));
        idx[a] = one ? em.uniform(at) : em.affine(at, 1);
        continue;
      }
      idx[a] = em.uniform(outer_.count(a) ? outer_[a] : b_.getInt32(0));
      em.bind(a, shift_.count(a) ? em.uniform(shift_.at(a)) : idx[a]);
    }
    return idx;
  }

  // `lanes` elements from j of a segment (masked by `mask` when given).
  void run(const Segment &seg, int lanes, llvm::Value *j, llvm::Value *mask) {
    ExprEmitter em(b_, T_, lanes);
    em.set_slots(slots_);
    em.set_mask(mask);
    em.set_split_offsets(true);
    attach_dims(em);
    std::vector<VVal> idx = bind_row(em, seg, j, false);
    em.store(out_slot_, idx, em.emit(seg.expr), out_.dtype);
  }

  // Tasks of rows of pixels (see emit): a kernel over run-time extents
  // whose rows stayed short (channels-last pixels) and have two outer
  // axes or more.
  bool pixel_rows() const {
    return dynamic_ && !by_reduction_ && inner_axis_ >= 0 && inner_ < kMinRow && phys_.size() >= row_axes_ + 2;
  }

  // One row, at the outer physical axes' indices outer_.
  void row() {
    for (int a : row_outer_) outer_[a] = b_.getInt32(0);  // flattened into the row
    if (inner_axis_ < 0) {                                // a single element per task
      run(segments_[0], 1, b_.getInt32(0), nullptr);
      return;
    }
    if (by_reduction_) {
      for (const Segment &seg : segments_) reduction_row(seg);
      return;
    }
    for (const Segment &seg : segments_) vector_row(seg);
  }

  // Elements j .. j+n-1, each on its own with its reductions vectorized;
  // all computed before any is stored, so that loads they share (the row
  // of Q that every key of Q K^T meets) are loaded once.
  void elements(const Segment &seg, llvm::Value *j, int n) {
    std::vector<std::pair<std::vector<VVal>, VVal>> done;
    std::vector<std::unique_ptr<ExprEmitter>> ems;
    for (int g = 0; g < n; ++g) {
      ems.push_back(std::make_unique<ExprEmitter>(b_, T_, L_));
      ExprEmitter &em = *ems.back();
      em.set_slots(slots_);
      em.set_vector_reductions(true);
      attach_dims(em);
      std::vector<VVal> idx = bind_row(em, seg, b_.CreateAdd(j, b_.getInt32(g)), true);
      done.push_back({idx, em.emit(seg.expr)});
    }
    for (int g = 0; g < n; ++g)
      ems[(size_t)g]->store(out_slot_, done[(size_t)g].first, done[(size_t)g].second, out_.dtype);
  }

  void reduction_row(const Segment &seg) {
    if (row_is_dyn()) {  // a run-time row: one element at a time
      emit_counted_loop(
          b_, b_.getInt32(0), seg.vlen ? seg.vlen : row_len(), [&](llvm::Value *j) { elements(seg, j, 1); }, "elem");
      return;
    }
    int64_t n = seg.end - seg.begin, main = n / kElementsTogether;
    if (main > 0)
      emit_counted_loop(
          b_, b_.getInt32(0), b_.getInt32((int32_t)main),
          [&](llvm::Value *q) { elements(seg, b_.CreateMul(q, b_.getInt32(kElementsTogether)), kElementsTogether); },
          "elems");
    if (n % kElementsTogether)
      emit_counted_loop(
          b_, b_.getInt32((int32_t)(main * kElementsTogether)), b_.getInt32((int32_t)n),
          [&](llvm::Value *j) { elements(seg, j, 1); }, "elem");
  }

  // A segment in vectors of L elements, then its tail (masked where the
  // target has cheap masked stores, else one element at a time).
  void vector_row(const Segment &seg) {
    int L = L_;
    if (row_is_dyn()) {
      dynamic_row(seg);
      return;
    }
    int64_t n = seg.end - seg.begin;
    // Rows that reduce per element: several vectors at once (one vector
    // `wide` times wider, which LLVM splits into registers), so that each
    // step of the reduction loads what the vectors share once (the row
    // of attention weights that every column of V meets), and so that
    // the sums run as independent chains: a quantized pool (bytes out,
    // float sums) summed one vector at a time waited on each add's
    // latency (mobilenet_v3_small int8's pools 0.045 -> 0.028 ms, AVX2).
    int64_t done = 0;
    if (wide_ > 1 && n >= (int64_t)L * wide_) {
      int Lw = L * wide_;
      emit_counted_loop(
          b_, b_.getInt32(0), b_.getInt32((int32_t)(n / Lw)),
          [&](llvm::Value *j) { run(seg, Lw, b_.CreateMul(j, b_.getInt32(Lw)), nullptr); }, "wide");
      done = n / Lw * Lw;
    }
    int64_t main = n / L;
    if (main * L > done)
      emit_counted_loop(
          b_, b_.getInt32((int32_t)(done / L)), b_.getInt32((int32_t)main),
          [&](llvm::Value *j) { run(seg, L, b_.CreateMul(j, b_.getInt32(L)), nullptr); }, "vec");
    int64_t tail = n % L;
    if (tail == 0) return;
    if (T_.masked_tail && L > 1) {
      std::vector<llvm::Constant *> m;
      for (int i = 0; i < L; ++i) m.push_back(b_.getInt1(i < tail));
      run(seg, L, b_.getInt32((int32_t)(main * L)), llvm::ConstantVector::get(m));
    } else {
      emit_counted_loop(
          b_, b_.getInt32((int32_t)(main * L)), b_.getInt32((int32_t)n),
          [&](llvm::Value *j) { run(seg, 1, j, nullptr); }, "tail");
    }
  }

  // A row of run-time length n: vectors of L, then the n % L left, under
  // a mask made at run time (targets with cheap masked access) or one at a time.
  void dynamic_row(const Segment &seg) {
    int L = L_;
    llvm::Value *n = seg.vlen ? seg.vlen : row_len();
    llvm::Value *main = b_.CreateUDiv(n, b_.getInt32(L));
    // Vectors kDynUnroll at a time (a run-time trip count keeps LLVM from
    // unrolling), then one at a time.
    llvm::Value *groups = L > 1 ? b_.CreateUDiv(main, b_.getInt32(kDynUnroll)) : b_.getInt32(0);
    if (L > 1)
      emit_counted_loop(
          b_, b_.getInt32(0), groups,
          [&](llvm::Value *j) {
            for (int u = 0; u < kDynUnroll; ++u)
              run(seg, L,
                  b_.CreateMul(b_.CreateAdd(b_.CreateMul(j, b_.getInt32(kDynUnroll)), b_.getInt32(u)), b_.getInt32(L)),
                  nullptr);
          },
          "vec4");
    // The loops that start at a run-time index (past the groups, past the
    // vectors) clamp it into the row's bound (clamp_i32: the identity
    // there), which the bounds proof cannot derive from a start and a trip
    // count that are both run-time.
    const int64_t bound = seg.end - seg.begin;
    emit_counted_loop(
        b_, b_.CreateMul(groups, b_.getInt32(kDynUnroll)), main,
        [&](llvm::Value *j) {
          run(seg, L, b_.CreateMul(clamp_i32(b_, j, 0, std::max<int64_t>(0, bound / L - 1)), b_.getInt32(L)), nullptr);
        },
        "vec");
    llvm::Value *done = b_.CreateMul(main, b_.getInt32(L));
    if (L == 1) return;
    if (T_.masked_tail) {
      llvm::Value *left = b_.CreateSub(n, done);
      emit_branch(
          b_, b_.CreateICmpNE(left, b_.getInt32(0)),
          [&] {
            std::vector<llvm::Constant *> iota;
            for (int i = 0; i < L; ++i) iota.push_back(b_.getInt32(i));
            llvm::Value *mask = b_.CreateICmpULT(llvm::ConstantVector::get(iota), b_.CreateVectorSplat(L, left));
            run(seg, L, done, mask);
          },
          [] {}, "tail");
    } else {
      emit_counted_loop(
          b_, done, n,
          [&](llvm::Value *j) { run(seg, 1, clamp_i32(b_, j, 0, std::max<int64_t>(0, bound - 1)), nullptr); }, "tail");
    }
  }

  EmitEnv &env_;
  const Kernel &k_;
  const Program &p_;
  const Value &out_;
  const Target &T_;
  int r_;
  llvm::IRBuilder<> b_;
  std::vector<int> phys_, row_outer_;
  int inner_axis_ = -1;
  int64_t inner_ = 1, tasks_ = 1;
  std::map<int, int64_t> extents_;
  ExprP expr_;
  std::vector<SlotRef> slots_;
  SlotRef out_slot_;
  size_t row_axes_ = 0;
  int L_ = 1, wide_ = 1;
  bool by_reduction_ = false;
  bool dynamic_ = false;  // run-time extents (the output's, or the expression's)
  bool row_dyn_ = false;  // a run-time axis merged into the row (plan_rows)
  llvm::Value *row_n_ = nullptr;
  static constexpr int kDynUnroll = 4;
  std::map<int, llvm::Value *> dimv_;
  std::vector<llvm::Value *> ext_ = std::vector<llvm::Value *>(16, nullptr);  // per output axis, when dynamic_
  std::vector<Segment> segments_;
  // plan_interior: the box per task axis [lo, hi), the interior's
  // segments, and while one is emitted each boxed axis's index from lo.
  std::map<int, std::pair<int64_t, int64_t>> interior_;
  std::vector<Segment> interior_segments_;
  std::map<int, llvm::Value *> shift_;
  std::map<int, ExprP> run_ext_;  // the output axes' run-time extents
  std::map<int, llvm::Value *> outer_;
};

}  // namespace

EmittedKernel emit_loop_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  return LoopKernel(env, k).emit(name);
}

}  // namespace tinyrt
