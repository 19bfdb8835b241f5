// topk_emitter.cpp — KernelKind::TopK: per slice of the input along the
// axis, the indices of its first kk = min(k, length) elements in TopKSpec's
// order (largest or smallest value first, ties to the lower index, NaN
// above every number), one task. The output's slice holds a heap of the kk
// best seen so far, rooted at the worst of them:
//   1. the first kk indices, made a heap;
//   2. each later element that comes before the root replaces it and
//      sifts down;
//   3. the heap sorted, best first.
// O(length log kk) comparisons per slice, where the element expressions
// (a rank per element) took O(length^2). Lengths and kk are the run's
// extents; every slice of the run's other extents is selected.
#include "codegen/kernel_emitters.h"
#include "codegen/sort.h"

namespace tinyrt {

namespace {

class TopKEmitter {
 public:
  TopKEmitter(EmitEnv &env, const Kernel &k, llvm::IRBuilder<> &b, llvm::Value *arena)
      : env_(env), k_(k), b_(b), arena_(arena) {}

  void emit() {
    const Graph &g = env_.program.graph;
    const Value &x = g.v(k_.ins[0]), &out = g.v(k_.out);
    TINYRT_CHECK(out.dtype == DType::I32, "TopK's selection writes int32 indices");
    axis_ = k_.topk.axis;
    len_bound_ = x.shape[(size_t)axis_];
    k_bound_ = out.shape[(size_t)axis_];
    x_ = slot_for(env_, b_, arena_, k_.ins[0]);
    out_ = slot_for(env_, b_, arena_, k_.out);
    xty_ = ExprEmitter(b_, env_.target, 1).elem_type(x.dtype);
    float_ = dtype_is_float(x.dtype);
    signed_ = dtype_is_signed(x.dtype);
    if (len_bound_ == 0 || k_bound_ == 0) return;
    std::map<int, llvm::Value *> dims = load_dims(env_, b_, arena_);
    len_ = extent_value(env_, b_, dims, k_.ins[0], axis_);
    kk_ = extent_value(env_, b_, dims, k_.out, axis_);
    std::vector<llvm::Value *> extents;
    for (int a = 0; a < out.rank(); ++a) extents.push_back(extent_value(env_, b_, dims, k_.out, a));
    slices(extents, 0, b_.getInt32(0), b_.getInt32(0));
  }

 private:
  // Every slice: nested loops over the axes other than the selected one.
  void slices(const std::vector<llvm::Value *> &extents, int a, llvm::Value *xoff, llvm::Value *ooff) {
    if (a == (int)extents.size()) return select(xoff, ooff);
    if (a == axis_) return slices(extents, a + 1, xoff, ooff);
    emit_counted_loop(
        b_, b_.getInt32(0), extents[(size_t)a],
        [&](llvm::Value *i) {
          slices(extents, a + 1, b_.CreateAdd(xoff, b_.CreateMul(i, b_.getInt32((int32_t)x_.strides[(size_t)a]))),
                 b_.CreateAdd(ooff, b_.CreateMul(i, b_.getInt32((int32_t)out_.strides[(size_t)a]))));
        },
        "slice");
  }

  // Does value a come before value b (ties aside)? NaN above every number.
  llvm::Value *above(llvm::Value *a, llvm::Value *b) {
    if (!float_) return signed_ ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    llvm::Value *nan_a = b_.CreateFCmpUNO(a, a), *nan_b = b_.CreateFCmpUNO(b, b);
    return b_.CreateOr(b_.CreateFCmpOGT(a, b), b_.CreateAnd(nan_a, b_.CreateNot(nan_b)));
  }
  llvm::Value *same(llvm::Value *a, llvm::Value *b) {
    if (!float_) return b_.CreateICmpEQ(a, b);
    return b_.CreateOr(b_.CreateFCmpOEQ(a, b), b_.CreateAnd(b_.CreateFCmpUNO(a, a), b_.CreateFCmpUNO(b, b)));
  }

  void select(llvm::Value *xoff, llvm::Value *ooff) {
    auto value = [&](llvm::Value *i) {
      llvm::Value *at = b_.CreateAdd(
          xoff, b_.CreateMul(clamp_i32(b_, i, 0, len_bound_ - 1), b_.getInt32((int32_t)x_.strides[(size_t)axis_])));
      return b_.CreateLoad(xty_, b_.CreateGEP(xty_, b_.CreateBitCast(x_.base, xty_->getPointerTo()), at));
    };
    auto heap = [&](llvm::Value *p) {
      llvm::Value *at = b_.CreateAdd(
          ooff, b_.CreateMul(clamp_i32(b_, p, 0, k_bound_ - 1), b_.getInt32((int32_t)out_.strides[(size_t)axis_])));
      return b_.CreateGEP(b_.getInt32Ty(), b_.CreateBitCast(out_.base, b_.getInt32Ty()->getPointerTo()), at);
    };
    // i before j: the heap's `less` (its root is the last of the kept).
    auto before = [&](llvm::Value *i, llvm::Value *j) {
      llvm::Value *vi = value(i), *vj = value(j);
      llvm::Value *strict = k_.topk.largest ? above(vi, vj) : above(vj, vi);
      return b_.CreateOr(strict, b_.CreateAnd(same(vi, vj), b_.CreateICmpSLT(i, j)));
    };
    emit_counted_loop(
        b_, b_.getInt32(0), kk_, [&](llvm::Value *p) { b_.CreateStore(p, heap(p)); }, "first");
    emit_heapify(b_, heap, kk_, before);
    emit_counted_loop(
        b_, kk_, len_,
        [&](llvm::Value *i) {
          llvm::Value *root = b_.CreateLoad(b_.getInt32Ty(), heap(b_.getInt32(0)));
          emit_branch(
              b_, before(i, root),
              [&] {
                b_.CreateStore(i, heap(b_.getInt32(0)));
                emit_sift_down(b_, heap, b_.getInt32(0), kk_, before);
              },
              [] {}, "better");
        },
        "rest");
    emit_heap_sort(b_, heap, kk_, before);
  }

  EmitEnv &env_;
  const Kernel &k_;
  llvm::IRBuilder<> &b_;
  llvm::Value *arena_;
  int axis_ = 0;
  int64_t len_bound_ = 0, k_bound_ = 0;
  SlotRef x_, out_;
  llvm::Type *xty_ = nullptr;
  bool float_ = false, signed_ = false;
  llvm::Value *len_ = nullptr, *kk_ = nullptr;
};

}  // namespace

EmittedKernel emit_topk_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  TopKEmitter(env, k, b, f->getArg(0)).emit();
  b.CreateRetVoid();
  return {f, 1};
}

}  // namespace tinyrt
