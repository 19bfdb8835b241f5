// compact_emitter.cpp — KernelKind::Compact: the row-major indices of the
// nonzero elements of a 1-D input, in order, as int64, and their count
// (the holder of a produced extent, ir/graph.h DimSym::produced). One task:
// a single pass that stores every index at the next free position and
// advances the position by the element's test (no branch), so the output
// is written only as far as the count.
#include "codegen/kernel_emitters.h"

namespace tinyrt {

EmittedKernel emit_compact_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  const Program &p = env.program;
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  const Value &in = p.graph.v(k.ins.at(0));
  TINYRT_CHECK(in.rank() == 1 && p.graph.v(k.out).numel() >= in.numel() && k.count >= 0,
               "a compact kernel's input must be 1-D and its output as long");
  SlotRef src = slot_for(env, b, arena, k.ins[0]);
  SlotRef dst = slot_for(env, b, arena, k.out);
  SlotRef cnt = slot_for(env, b, arena, k.count);
  ExprEmitter em(b, env.target, 1);
  llvm::Type *ty = em.mem_type(in.dtype), *i64 = b.getInt64Ty();
  llvm::Value *x = b.CreateBitCast(src.base, ty->getPointerTo());
  llvm::Value *y = b.CreateBitCast(dst.base, i64->getPointerTo());
  const int64_t n = in.numel();
  const int64_t xs = src.strides.empty() ? 1 : src.strides[0], ys = dst.strides.empty() ? 1 : dst.strides[0];
  Values end = carried_loop(
      b, 0, n, 1, {b.getInt32(0)},
      [&](llvm::Value *i, const Values &v) {
        llvm::Value *e = b.CreateLoad(ty, b.CreateGEP(ty, x, b.CreateMul(i, b.getInt32((int32_t)xs))));
        llvm::Value *nz = ty->isFloatingPointTy() ? b.CreateFCmpUNE(e, llvm::ConstantFP::get(ty, 0.0))
                                                  : b.CreateICmpNE(e, llvm::ConstantInt::get(ty, 0));
        // The position never passes i: the clamp is the identity, for the
        // bounds proof.
        llvm::Value *pos = clamp_i32(b, v[0], 0, n - 1);
        b.CreateStore(b.CreateSExt(i, i64), b.CreateGEP(i64, y, b.CreateMul(pos, b.getInt32((int32_t)ys))));
        return Values{b.CreateAdd(v[0], b.CreateZExt(nz, b.getInt32Ty()))};
      },
      "compact");
  b.CreateStore(b.CreateSExt(end[0], i64), b.CreateBitCast(cnt.base, i64->getPointerTo()));
  b.CreateRetVoid();
  return {f, 1};
}

}  // namespace tinyrt
