// sort.cpp — see sort.h.
#include "codegen/sort.h"

#include "codegen/loops.h"

namespace tinyrt {

// The element at `root` moves down while a child is greater: the greater
// child, found without a branch, moves up.
void emit_sift_down(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *root,
                    llvm::Value *end, const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less) {
  auto &C = b.getContext();
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *head = llvm::BasicBlock::Create(C, "sift.head", f);
  auto *step = llvm::BasicBlock::Create(C, "sift.step", f);
  auto *move = llvm::BasicBlock::Create(C, "sift.move", f);
  auto *done = llvm::BasicBlock::Create(C, "sift.done", f);
  llvm::Value *x = b.CreateLoad(i32, at(root));
  b.CreateBr(head);

  b.SetInsertPoint(head);
  llvm::PHINode *r = b.CreatePHI(i32, 2, "sift.r");
  r->addIncoming(root, pre);
  llvm::Value *c = b.CreateAdd(b.CreateShl(r, 1), b.getInt32(1));
  b.CreateCondBr(b.CreateICmpSLT(c, end), step, done);

  b.SetInsertPoint(step);
  llvm::Value *c2 = b.CreateAdd(c, b.getInt32(1));
  llvm::Value *y1 = b.CreateLoad(i32, at(c)), *y2 = b.CreateLoad(i32, at(c2));
  llvm::Value *right = b.CreateAnd(b.CreateICmpSLT(c2, end), less(y1, y2));
  llvm::Value *pick = b.CreateSelect(right, c2, c), *y = b.CreateSelect(right, y2, y1);
  b.CreateCondBr(less(x, y), move, done);

  b.SetInsertPoint(move);
  b.CreateStore(y, at(r));
  r->addIncoming(pick, move);
  b.CreateBr(head);

  b.SetInsertPoint(done);
  llvm::PHINode *at_r = b.CreatePHI(i32, 2, "sift.at");
  at_r->addIncoming(r, head);
  at_r->addIncoming(r, step);
  b.CreateStore(x, at(at_r));
}

void emit_heapify(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *n,
                  const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less) {
  // Every parent sifted down, the last one first.
  llvm::Value *parents = b.CreateAShr(n, 1);
  emit_counted_loop(
      b, b.getInt32(0), parents,
      [&](llvm::Value *t) { emit_sift_down(b, at, b.CreateSub(b.CreateSub(parents, t), b.getInt32(1)), n, less); },
      "heapify");
}

void emit_heap_sort(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *n,
                    const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less) {
  emit_heapify(b, at, n, less);
  // Move the greatest behind the heap, which shrinks by one.
  emit_counted_loop(
      b, b.getInt32(1), n,
      [&](llvm::Value *t) {
        llvm::Value *end = b.CreateSub(n, t);
        llvm::Value *top = b.CreateLoad(b.getInt32Ty(), at(b.getInt32(0)));
        b.CreateStore(b.CreateLoad(b.getInt32Ty(), at(end)), at(b.getInt32(0)));
        b.CreateStore(top, at(end));
        emit_sift_down(b, at, b.getInt32(0), end, less);
      },
      "heapsort");
}

llvm::Value *emit_first_true(llvm::IRBuilder<> &b, llvm::Value *lo, llvm::Value *hi, int64_t cap,
                             const std::function<llvm::Value *(llvm::Value *)> &pred) {
  int steps = 0;
  while (steps < 62 && (int64_t(1) << steps) <= cap) ++steps;
  // The answer lies in [l, h]; each step halves it (none once l == h).
  Values lh = carried_loop(
      b, 0, steps, 1, {lo, hi},
      [&](llvm::Value *, const Values &v) {
        llvm::Value *open = b.CreateICmpSLT(v[0], v[1]);
        llvm::Value *mid = b.CreateAdd(v[0], b.CreateLShr(b.CreateSub(v[1], v[0]), 1));
        // (l == h: mid is h, perhaps past the range; its answer is unused.)
        llvm::Value *mid_in = b.CreateSelect(open, mid, lo);
        llvm::Value *t = pred(mid_in);
        return Values{b.CreateSelect(b.CreateAnd(open, b.CreateNot(t)), b.CreateAdd(mid, b.getInt32(1)), v[0]),
                      b.CreateSelect(b.CreateAnd(open, t), mid, v[1])};
      },
      "search");
  return lh[0];
}

}  // namespace tinyrt
