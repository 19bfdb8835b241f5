// nms_emitter.cpp — KernelKind::Nms: greedy non-maximum suppression
// (ir/program.h NmsSpec), one task. Per batch entry and class:
//   1. the boxes scoring above the threshold are the candidates, sorted by
//      score (highest first, ties to the lower index: ONNX Runtime's order);
//   2. their corners (either box format) are laid out by their left edge
//      x0, with the running maximum of the right edge x1;
//   3. in score order, a candidate not yet suppressed is selected (a row
//      (batch, class, box) of the output), and suppresses every candidate
//      whose IoU with it is above the IoU threshold — testing only those
//      whose x-interval can meet its own: a window of the x0 order found by
//      two binary searches (x0 below its x1; running x1 maximum above its
//      x0), a branch-free loop over structure-of-arrays corners.
// Detectors' boxes are spread over the image (and batched NMS offsets each
// class's boxes apart), so a window holds few candidates: O(n log n) where
// the scan of every remaining candidate per selection was O(n^2).
// The IoU test follows ONNX Runtime's SuppressByIOU in float: corners from
// either box format, no overlap (or an empty box, or union) never
// suppresses, else intersection / union > threshold. Boxes outside the
// window have no overlap (for infinite corners too). A box with a NaN
// corner has a NaN area: it never suppresses nor is suppressed; its x0
// orders as +infinity (the searches' predicates hold for it).
// Scratch (the kernel's input 2, int32 [8, boxes]): rows 0 candidates in
// score order, 1 the x0 order (then: not suppressed), 2 each candidate's
// place in it, 3-6 corners x0, y0, x1, y1 by place, 7 x0 by rank (then:
// the running maximum of x1).
#include <limits>

#include "codegen/kernel_emitters.h"
#include "codegen/sort.h"

namespace tinyrt {

namespace {

struct Box {
  llvm::Value *x0, *y0, *x1, *y1, *area;
};

class NmsEmitter {
 public:
  NmsEmitter(EmitEnv &env, const Kernel &k, llvm::IRBuilder<> &b, llvm::Value *arena)
      : env_(env), k_(k), s_(k.nms), b_(b), arena_(arena) {}

  void emit() {
    const Graph &g = env_.program.graph;
    const Value &boxes = g.v(k_.ins[0]), &scores = g.v(k_.ins[1]);
    B_ = boxes.shape[0];
    N_ = boxes.shape[1];
    C_ = scores.shape[1];
    bound_ = g.v(k_.out).shape[0];
    boxes_ = slot_for(env_, b_, arena_, k_.ins[0]);
    scores_ = slot_for(env_, b_, arena_, k_.ins[1]);
    list_ = slot_for(env_, b_, arena_, k_.ins[2]);
    out_ = slot_for(env_, b_, arena_, k_.out);
    SlotRef count = slot_for(env_, b_, arena_, k_.count);
    llvm::Value *total = b_.getInt32(0);
    if (bound_ > 0 && N_ > 0) {
      std::map<int, llvm::Value *> dims = load_dims(env_, b_, arena_);
      n_ = extent_value(env_, b_, dims, k_.ins[1], 2);
      load_scalars();
      total = carried_loop(
          b_, 0, B_, 1, {total},
          [&](llvm::Value *bi, const Values &v) {
            return carried_loop(
                b_, 0, C_, 1, v, [&](llvm::Value *ci, const Values &w) { return Values{one_class(bi, ci, w[0])}; },
                "class");
          },
          "batch")[0];
    }
    b_.CreateStore(b_.CreateSExt(total, b_.getInt64Ty()), b_.CreateBitCast(count.base, i64()->getPointerTo()));
  }

 private:
  llvm::Type *f32() { return b_.getFloatTy(); }
  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *i64() { return b_.getInt64Ty(); }

  // Element (idx...) of a slot, as a typed pointer.
  llvm::Value *at(const SlotRef &s, llvm::Type *ty, std::initializer_list<llvm::Value *> idx) {
    llvm::Value *off = b_.getInt32(0);
    size_t a = 0;
    for (llvm::Value *i : idx) off = b_.CreateAdd(off, b_.CreateMul(i, b_.getInt32((int32_t)s.strides.at(a++))));
    return b_.CreateGEP(ty, b_.CreateBitCast(s.base, ty->getPointerTo()), off);
  }
  llvm::Value *clamp(llvm::Value *i, int64_t hi) { return clamp_i32(b_, i, 0, hi); }

  void load_scalars() {
    if (s_.max_slot >= 0) {
      SlotRef m = slot_for(env_, b_, arena_, k_.ins[(size_t)s_.max_slot]);
      llvm::Value *v = b_.CreateLoad(i64(), b_.CreateBitCast(m.base, i64()->getPointerTo()));
      v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, b_.getInt64(0));
      max_ = b_.CreateTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, b_.getInt64(N_)), i32());
    } else {
      max_ = b_.getInt32((int32_t)std::clamp<int64_t>(s_.max_out, 0, N_));
    }
    auto scalar = [&](int slot, float c) -> llvm::Value * {
      if (slot < 0) return llvm::ConstantFP::get(f32(), c);
      SlotRef r = slot_for(env_, b_, arena_, k_.ins[(size_t)slot]);
      return b_.CreateLoad(f32(), b_.CreateBitCast(r.base, f32()->getPointerTo()));
    };
    iou_ = scalar(s_.iou_slot, s_.iou);
    score_ = scalar(s_.score_slot, s_.score);
  }

  llvm::Value *score_of(llvm::Value *bi, llvm::Value *ci, llvm::Value *n) {
    return b_.CreateLoad(f32(), at(scores_, f32(), {bi, ci, n}));
  }
  // Row `row` (see the scratch layout above), element i clamped into it.
  llvm::Value *scratch(int row, llvm::Type *ty, llvm::Value *i) {
    return at(list_, ty, {b_.getInt32(row), clamp(i, N_ - 1)});
  }
  llvm::Value *load(int row, llvm::Type *ty, llvm::Value *i) { return b_.CreateLoad(ty, scratch(row, ty, i)); }
  void store(int row, llvm::Value *v, llvm::Value *i) { b_.CreateStore(v, scratch(row, v->getType(), i)); }
  enum Row { kRank, kOrder, kPlace, kX0, kY0, kX1, kY1, kKey };

  // std::min / std::max as C++ defines them (NaN operands as ONNX Runtime
  // sees them).
  llvm::Value *fmin(llvm::Value *a, llvm::Value *b) { return b_.CreateSelect(b_.CreateFCmpOLT(b, a), b, a); }
  llvm::Value *fmax(llvm::Value *a, llvm::Value *b) { return b_.CreateSelect(b_.CreateFCmpOLT(a, b), b, a); }

  Box box(llvm::Value *bi, llvm::Value *n) {
    llvm::Value *c[4];
    for (int j = 0; j < 4; ++j) c[j] = b_.CreateLoad(f32(), at(boxes_, f32(), {bi, n, b_.getInt32(j)}));
    Box r;
    if (s_.center_point_box) {  // [x_center, y_center, width, height]
      llvm::Value *hw = b_.CreateFDiv(c[2], llvm::ConstantFP::get(f32(), 2.0));
      llvm::Value *hh = b_.CreateFDiv(c[3], llvm::ConstantFP::get(f32(), 2.0));
      r = {b_.CreateFSub(c[0], hw), b_.CreateFSub(c[1], hh), b_.CreateFAdd(c[0], hw), b_.CreateFAdd(c[1], hh), nullptr};
    } else {  // [y1, x1, y2, x2], either diagonal: MaxMin's order
      auto lo = [&](llvm::Value *a, llvm::Value *b) { return b_.CreateSelect(b_.CreateFCmpOGE(a, b), b, a); };
      auto hi = [&](llvm::Value *a, llvm::Value *b) { return b_.CreateSelect(b_.CreateFCmpOGE(a, b), a, b); };
      r = {lo(c[1], c[3]), lo(c[0], c[2]), hi(c[1], c[3]), hi(c[0], c[2]), nullptr};
    }
    r.area = b_.CreateFMul(b_.CreateFSub(r.x1, r.x0), b_.CreateFSub(r.y1, r.y0));
    return r;
  }

  // Does selected box a suppress box c?
  llvm::Value *suppresses(const Box &a, const Box &c) {
    llvm::Value *zero = llvm::ConstantFP::get(f32(), 0.0);
    llvm::Value *w = fmax(b_.CreateFSub(fmin(a.x1, c.x1), fmax(a.x0, c.x0)), zero);
    llvm::Value *h = fmax(b_.CreateFSub(fmin(a.y1, c.y1), fmax(a.y0, c.y0)), zero);
    llvm::Value *inter = b_.CreateFMul(w, h);
    llvm::Value *uni = b_.CreateFSub(b_.CreateFAdd(a.area, c.area), inter);
    llvm::Value *ok = b_.CreateAnd(b_.CreateFCmpOGT(inter, zero), b_.CreateFCmpOGT(a.area, zero));
    ok = b_.CreateAnd(ok, b_.CreateAnd(b_.CreateFCmpOGT(c.area, zero), b_.CreateFCmpOGT(uni, zero)));
    return b_.CreateAnd(ok, b_.CreateFCmpOGT(b_.CreateFDiv(inter, uni), iou_));
  }

  // The corners laid out at place p, and its area.
  Box placed(llvm::Value *p) {
    Box r{load(kX0, f32(), p), load(kY0, f32(), p), load(kX1, f32(), p), load(kY1, f32(), p), nullptr};
    r.area = b_.CreateFMul(b_.CreateFSub(r.x1, r.x0), b_.CreateFSub(r.y1, r.y0));
    return r;
  }

  // A candidate's score as the order sees it: NaN below every number.
  llvm::Value *rank_score(llvm::Value *bi, llvm::Value *ci, llvm::Value *n) {
    llvm::Value *sc = score_of(bi, ci, clamp(n, N_ - 1));
    return b_.CreateSelect(b_.CreateFCmpUNO(sc, sc), llvm::ConstantFP::getInfinity(f32(), true), sc);
  }
  // x before y: the key lower (or, for the score order, higher), ties to
  // the lower index.
  llvm::Value *before(llvm::Value *kx, llvm::Value *ky, llvm::Value *x, llvm::Value *y, bool higher) {
    llvm::Value *strict = higher ? b_.CreateFCmpOGT(kx, ky) : b_.CreateFCmpOLT(kx, ky);
    return b_.CreateOr(strict, b_.CreateAnd(b_.CreateFCmpOEQ(kx, ky), b_.CreateICmpSLT(x, y)));
  }

  // Selections of class ci of batch entry bi, written from output row
  // `row`; returns the next free row.
  llvm::Value *one_class(llvm::Value *bi, llvm::Value *ci, llvm::Value *row) {
    // 1. The candidates, in index order, then by score.
    llvm::Value *m = carried_loop(
        b_, b_.getInt32(0), n_, {b_.getInt32(0)},
        [&](llvm::Value *n, const Values &v) {
          llvm::Value *keep = s_.has_score ? b_.CreateFCmpOGT(score_of(bi, ci, n), score_) : b_.getTrue();
          store(kRank, n, v[0]);  // (the next place, never past the one read)
          return Values{b_.CreateAdd(v[0], b_.CreateZExt(keep, i32()))};
        },
        "candidates")[0];
    m = clamp(m, N_);
    emit_heap_sort(
        b_, [&](llvm::Value *i) { return scratch(kRank, i32(), i); }, m,
        [&](llvm::Value *x, llvm::Value *y) {
          return before(rank_score(bi, ci, x), rank_score(bi, ci, y), x, y, true);
        });

    // 2. The x0 order: ranks sorted by their box's x0; the corners by place.
    emit_counted_loop(
        b_, b_.getInt32(0), m,
        [&](llvm::Value *k) {
          store(kOrder, k, k);
          llvm::Value *x0 = box(bi, clamp(load(kRank, i32(), k), N_ - 1)).x0;
          store(kKey, b_.CreateSelect(b_.CreateFCmpUNO(x0, x0), llvm::ConstantFP::getInfinity(f32()), x0), k);
        },
        "keys");
    emit_heap_sort(
        b_, [&](llvm::Value *i) { return scratch(kOrder, i32(), i); }, m,
        [&](llvm::Value *x, llvm::Value *y) {
          return before(load(kKey, f32(), x), load(kKey, f32(), y), x, y, false);
        });
    emit_counted_loop(
        b_, b_.getInt32(0), m,
        [&](llvm::Value *p) {
          llvm::Value *k = load(kOrder, i32(), p);
          Box c = box(bi, clamp(load(kRank, i32(), k), N_ - 1));
          store(kPlace, p, k);
          store(kX0, c.x0, p);
          store(kY0, c.y0, p);
          store(kX1, c.x1, p);
          store(kY1, c.y1, p);
          store(kOrder, b_.getInt32(1), p);  // (read above: from here on, "not suppressed")
        },
        "place");
    carried_loop(
        b_, b_.getInt32(0), m, {llvm::ConstantFP::getInfinity(f32(), true)},
        [&](llvm::Value *p, const Values &v) {
          llvm::Value *hi = fmax(v[0], load(kX1, f32(), p));
          store(kKey, hi, p);
          return Values{hi};
        },
        "reach");

    // 3. In score order: select what is not suppressed, suppress in its window.
    auto &C = b_.getContext();
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *head = llvm::BasicBlock::Create(C, "select.head", fn);
    auto *body = llvm::BasicBlock::Create(C, "select.body", fn);
    auto *pick = llvm::BasicBlock::Create(C, "select.pick", fn);
    auto *latch = llvm::BasicBlock::Create(C, "select.latch", fn);
    auto *exit = llvm::BasicBlock::Create(C, "select.exit", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *k = b_.CreatePHI(i32(), 2, "k"), *sel = b_.CreatePHI(i32(), 2, "selected");
    llvm::PHINode *r = b_.CreatePHI(i32(), 2, "row");
    k->addIncoming(b_.getInt32(0), pre);
    sel->addIncoming(b_.getInt32(0), pre);
    r->addIncoming(row, pre);
    b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpSLT(k, m), b_.CreateICmpSLT(sel, max_)), body, exit);

    b_.SetInsertPoint(body);
    llvm::Value *p = clamp(load(kPlace, i32(), k), N_ - 1);
    b_.CreateCondBr(b_.CreateICmpNE(load(kOrder, i32(), p), b_.getInt32(0)), pick, latch);

    b_.SetInsertPoint(pick);
    llvm::Value *orow = clamp(r, bound_ - 1);  // rows never pass the bound: the identity
    llvm::Value *vals[3] = {bi, ci, clamp(load(kRank, i32(), k), N_ - 1)};
    for (int j = 0; j < 3; ++j) b_.CreateStore(b_.CreateSExt(vals[j], i64()), at(out_, i64(), {orow, b_.getInt32(j)}));
    Box a = placed(p);
    llvm::Value *lo = emit_first_true(b_, b_.getInt32(0), m, N_,
                                      [&](llvm::Value *q) { return b_.CreateFCmpOGT(load(kKey, f32(), q), a.x0); });
    llvm::Value *hi = emit_first_true(b_, b_.getInt32(0), m, N_,
                                      [&](llvm::Value *q) { return b_.CreateFCmpUGE(load(kX0, f32(), q), a.x1); });
    emit_counted_loop(
        b_, clamp(lo, N_), clamp(hi, N_),
        [&](llvm::Value *q) {
          llvm::Value *alive = load(kOrder, i32(), q);
          store(kOrder, b_.CreateSelect(suppresses(a, placed(q)), b_.getInt32(0), alive), q);
        },
        "suppress");
    llvm::BasicBlock *picked = b_.GetInsertBlock();
    b_.CreateBr(latch);

    b_.SetInsertPoint(latch);
    llvm::PHINode *took = b_.CreatePHI(i32(), 2, "took");
    took->addIncoming(b_.getInt32(0), body);
    took->addIncoming(b_.getInt32(1), picked);
    k->addIncoming(b_.CreateAdd(k, b_.getInt32(1)), latch);
    sel->addIncoming(b_.CreateAdd(sel, took), latch);
    r->addIncoming(b_.CreateAdd(r, took), latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    return r;
  }

  EmitEnv &env_;
  const Kernel &k_;
  const NmsSpec &s_;
  llvm::IRBuilder<> &b_;
  llvm::Value *arena_;
  int64_t B_ = 0, N_ = 0, C_ = 0, bound_ = 0;
  SlotRef boxes_, scores_, list_, out_;  // list_: the scratch
  llvm::Value *n_ = nullptr, *max_ = nullptr, *iou_ = nullptr, *score_ = nullptr;
};

}  // namespace

EmittedKernel emit_nms_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  NmsEmitter(env, k, b, f->getArg(0)).emit();
  b.CreateRetVoid();
  return {f, 1};
}

}  // namespace tinyrt
