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
#include <set>

#include "codegen/kernel_emitters.h"

namespace tinyrt {

namespace {

constexpr size_t kMaxSegments = 16;

// Where a comparison of `i + c` (or `i - c`, or `i`) with a constant
// changes its value, for the index variable `axis`: the first index of
// the part after the change. Adds nothing for other comparisons.
void split_points(const ExprP &e, int axis, std::set<int64_t> *points) {
  visit(e, [&](const Expr &n) {
    if (!is_compare(n.op) || n.op == EOp::Eq || n.op == EOp::Ne) return;
    for (int side = 0; side < 2; ++side) {
      const ExprP &x = n.a[side], &k = n.a[1 - side];
      if (!k->is_const() || dtype_is_float(k->type)) continue;
      int64_t off = 0;
      if (x->op == EOp::Var && x->id == axis) {
        off = 0;
      } else if ((x->op == EOp::Add || x->op == EOp::Sub) && x->a[0]->op == EOp::Var && x->a[0]->id == axis &&
                 x->a[1]->is_const() && !dtype_is_float(x->a[1]->type)) {
        off = x->op == EOp::Add ? x->a[1]->ival : -x->a[1]->ival;
      } else {
        continue;
      }
      // i + off (op) k, with i on the left (side 0) or the right.
      EOp op = n.op;
      if (side == 1) op = op == EOp::Lt ? EOp::Gt : op == EOp::Gt ? EOp::Lt : op == EOp::Le ? EOp::Ge : EOp::Le;
      int64_t p = k->ival - off;  // i < p, i >= p flip at p; i <= p, i > p at p + 1
      points->insert(op == EOp::Lt || op == EOp::Ge ? p : p + 1);
    }
  });
}

}  // namespace

EmittedKernel emit_loop_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  const Program &p = env.program;
  const Value &out = p.graph.v(k.out);
  const Target &T = env.target;
  int r = out.rank();

  // Physical order without size-1 axes: the last one is vectorized.
  std::vector<int> perm = p.perm_of(k.out);
  if (perm.empty())
    for (int a = 0; a < r; ++a) perm.push_back(a);
  std::vector<int> phys;
  for (int a : perm)
    if (out.shape[a] != 1) phys.push_back(a);
  int inner_axis = phys.empty() ? -1 : phys.back();
  int64_t inner = inner_axis < 0 ? 1 : out.shape[inner_axis];
  int64_t tasks = 1;
  for (size_t i = 0; i + 1 < phys.size(); ++i) tasks *= out.shape[phys[i]];
  bool empty = out.numel() == 0;

  std::map<int, int64_t> extents;
  for (int a = 0; a < r; ++a) extents[a] = out.shape[a];
  ExprP expr = simplify_with_ranges(k.expr, extents);

  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  EmittedKernel result{f, empty ? 1 : tasks};
  if (empty) {
    b.CreateRetVoid();
    return result;
  }
  std::vector<SlotRef> slots;
  for (int v : k.ins) slots.push_back(slot_for(env, b, arena, v));
  SlotRef out_slot = slot_for(env, b, arena, k.out);
  int L = T.f32_lanes();

  // The row's segments: [begin, end) of the inner axis, each with the
  // expression in terms of the index within the segment, its comparisons
  // with the segment's bounds folded.
  struct Segment {
    int64_t begin, end;
    ExprP expr;
  };
  std::vector<Segment> segments;
  std::set<int64_t> points;
  if (inner_axis >= 0) split_points(expr, inner_axis, &points);
  std::vector<int64_t> cuts = {0};
  for (int64_t q : points)
    if (q > 0 && q < inner) cuts.push_back(q);
  cuts.push_back(inner);
  if (cuts.size() - 1 > kMaxSegments || cuts.size() == 2) {
    segments.push_back({0, inner, expr});
  } else {
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      std::vector<ExprP> vars;
      for (int a = 0; a < r; ++a) vars.push_back(a == inner_axis ? var(a) + cuts[i] : var(a));
      std::map<int, int64_t> ext = extents;
      ext[inner_axis] = cuts[i + 1] - cuts[i];
      segments.push_back({cuts[i], cuts[i + 1], simplify_with_ranges(substitute_vars(expr, vars), ext)});
    }
  }

  emit_counted_loop(b, f->getArg(1), f->getArg(2), [&](llvm::Value *t) {
    // Task index -> the outer physical axes.
    std::map<int, llvm::Value *> outer;
    llvm::Value *rem = t;
    for (size_t i = phys.size() - (phys.empty() ? 0 : 1); i-- > 0;) {
      llvm::Value *ext = b.getInt32((int32_t)out.shape[phys[i]]);
      outer[phys[i]] = i == 0 ? rem : b.CreateURem(rem, ext);
      if (i > 0) rem = b.CreateUDiv(rem, ext);
    }
    // Elements j .. j+lanes-1 of a segment starting at `begin`.
    auto run = [&](const Segment &seg, int lanes, llvm::Value *j, llvm::Value *mask) {
      ExprEmitter em(b, T, lanes);
      em.set_slots(slots);
      em.set_mask(mask);
      std::vector<VVal> idx(r);
      for (int a = 0; a < r; ++a) {
        if (a == inner_axis) {
          em.bind(a, em.affine(j, 1));
          idx[a] = em.affine(b.CreateAdd(j, b.getInt32((int32_t)seg.begin)), 1);
          continue;
        }
        idx[a] = em.uniform(outer.count(a) ? outer[a] : b.getInt32(0));
        em.bind(a, idx[a]);
      }
      em.store(out_slot, idx, em.emit(seg.expr), out.dtype);
    };
    if (inner_axis < 0) {  // a single element per task
      run(segments[0], 1, b.getInt32(0), nullptr);
      return;
    }
    for (const Segment &seg : segments) {
      int64_t n = seg.end - seg.begin;
      int64_t main = n / L;
      if (main > 0)
        emit_counted_loop(b, b.getInt32(0), b.getInt32((int32_t)main),
                          [&](llvm::Value *j) { run(seg, L, b.CreateMul(j, b.getInt32(L)), nullptr); }, "vec");
      int64_t tail = n % L;
      if (tail == 0) continue;
      if (T.masked_tail && L > 1) {
        std::vector<llvm::Constant *> m;
        for (int i = 0; i < L; ++i) m.push_back(b.getInt1(i < tail));
        run(seg, L, b.getInt32((int32_t)(main * L)), llvm::ConstantVector::get(m));
      } else {
        emit_counted_loop(b, b.getInt32((int32_t)(main * L)), b.getInt32((int32_t)n),
                          [&](llvm::Value *j) { run(seg, 1, j, nullptr); }, "tail");
      }
    }
  }, "task");
  b.CreateRetVoid();
  return result;
}

}  // namespace tinyrt
