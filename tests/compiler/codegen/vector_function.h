// A function `void k(<4 x float>* p)` under construction, for the
// codegen tests that emit vector code into it (test_math_emitter.cpp,
// test_kernel_common.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace tinyrt {

struct VectorFunction {
  llvm::LLVMContext C;
  llvm::Module m{"m", C};
  llvm::IRBuilder<> b{C};
  llvm::Function *f;
  llvm::Type *v4 = llvm::FixedVectorType::get(b.getFloatTy(), 4);
  VectorFunction() {
    auto *fty = llvm::FunctionType::get(b.getVoidTy(), {v4->getPointerTo()}, false);
    f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "k", m);
    b.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  }
  // p + i (i: i32), a vector's address.
  llvm::Value *at(llvm::Value *i) { return b.CreateInBoundsGEP(v4, f->getArg(0), i); }
};

}  // namespace tinyrt
