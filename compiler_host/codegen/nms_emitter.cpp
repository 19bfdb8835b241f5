// nms_emitter.cpp — KernelKind::Nms: greedy non-maximum suppression
// (ir/program.h NmsSpec), one task. Per batch entry and class:
//   1. one pass over the boxes keeps those scoring above the threshold
//      in the scratch list (in index order) and notes the best;
//   2. while candidates remain and the class has selections left: the
//      best is selected (a row (batch, class, box) of the output), and one
//      pass over the list drops it and every candidate whose IoU with it is
//      above the IoU threshold, keeping the rest in order and finding the
//      next best (the highest score, ties to the lower index).
// That selects what sorting by score and suppressing by the boxes kept
// before does (ONNX Runtime's order), without a sort: each pass costs the
// remaining candidates, which suppression shrinks.
// The IoU test follows ONNX Runtime's SuppressByIOU in float: corners from
// either box format, no overlap (or an empty box, or union) never
// suppresses, else intersection / union > threshold.
#include <limits>

#include "codegen/kernel_emitters.h"

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
  llvm::Value *list_at(llvm::Value *r) { return at(list_, i32(), {r}); }

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

  // The list being written, as a pass carries it: {entries, position of
  // the best, its score}; empty, and with box idx (scoring sc) appended
  // when `keep` (stored unconditionally at the next position, which never
  // passes the position being read: the clamp is the identity).
  Values empty_list() { return {b_.getInt32(0), b_.getInt32(0), llvm::ConstantFP::get(f32(), 0.0)}; }
  Values append(const Values &v, llvm::Value *keep, llvm::Value *idx, llvm::Value *sc) {
    b_.CreateStore(idx, list_at(clamp(v[0], N_ - 1)));
    llvm::Value *first = b_.CreateICmpEQ(v[0], b_.getInt32(0));
    llvm::Value *better = b_.CreateAnd(keep, b_.CreateOr(first, b_.CreateFCmpOGT(sc, v[2])));
    return {b_.CreateAdd(v[0], b_.CreateZExt(keep, i32())), b_.CreateSelect(better, v[0], v[1]),
            b_.CreateSelect(better, sc, v[2])};
  }

  // Selections of class ci of batch entry bi, written from output row
  // `row`; returns the next free row.
  llvm::Value *one_class(llvm::Value *bi, llvm::Value *ci, llvm::Value *row) {
    // 1. Candidates, in index order, and the best of them.
    Values c = carried_loop(
        b_, b_.getInt32(0), n_, empty_list(),
        [&](llvm::Value *n, const Values &v) {
          llvm::Value *sc = score_of(bi, ci, n);
          return append(v, s_.has_score ? b_.CreateFCmpOGT(sc, score_) : b_.getTrue(), n, sc);
        },
        "candidates");

    // 2. while (m > 0 && selected < max): select the best, filter the rest.
    auto &C = b_.getContext();
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *head = llvm::BasicBlock::Create(C, "select.head", fn);
    auto *body = llvm::BasicBlock::Create(C, "select.body", fn);
    auto *exit = llvm::BasicBlock::Create(C, "select.exit", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *m = b_.CreatePHI(i32(), 2, "m"), *best = b_.CreatePHI(i32(), 2, "best");
    llvm::PHINode *sel = b_.CreatePHI(i32(), 2, "selected"), *r = b_.CreatePHI(i32(), 2, "row");
    m->addIncoming(c[0], pre);
    best->addIncoming(c[1], pre);
    sel->addIncoming(b_.getInt32(0), pre);
    r->addIncoming(row, pre);
    llvm::Value *more = b_.CreateAnd(b_.CreateICmpSGT(m, b_.getInt32(0)), b_.CreateICmpSLT(sel, max_));
    b_.CreateCondBr(more, body, exit);

    b_.SetInsertPoint(body);
    llvm::Value *bpos = clamp(best, N_ - 1);
    llvm::Value *s = clamp(b_.CreateLoad(i32(), list_at(bpos)), N_ - 1);
    llvm::Value *orow = clamp(r, bound_ - 1);  // rows never pass the bound: the identity
    llvm::Value *vals[3] = {bi, ci, s};
    for (int j = 0; j < 3; ++j) b_.CreateStore(b_.CreateSExt(vals[j], i64()), at(out_, i64(), {orow, b_.getInt32(j)}));
    Box a = box(bi, s);
    Values f = carried_loop(
        b_, b_.getInt32(0), m, empty_list(),
        [&](llvm::Value *q, const Values &v) {
          llvm::Value *cidx = clamp(b_.CreateLoad(i32(), list_at(clamp(q, N_ - 1))), N_ - 1);
          llvm::Value *keep = b_.CreateAnd(b_.CreateICmpNE(q, best), b_.CreateNot(suppresses(a, box(bi, cidx))));
          return append(v, keep, cidx, score_of(bi, ci, cidx));
        },
        "suppress");
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    m->addIncoming(f[0], latch);
    best->addIncoming(f[1], latch);
    sel->addIncoming(b_.CreateAdd(sel, b_.getInt32(1)), latch);
    r->addIncoming(b_.CreateAdd(r, b_.getInt32(1)), latch);
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
  SlotRef boxes_, scores_, list_, out_;
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
