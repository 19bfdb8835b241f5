// kernel_common.cpp — what every kernel family shares: the function
// prototype, value addressing and counted loops.
#include "codegen/kernel_emitters.h"

namespace tinyrt {

llvm::Function *begin_kernel_function(EmitEnv &env, llvm::IRBuilder<> &b, const std::string &name) {
  auto &C = env.module.getContext();
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(C),
                                      {llvm::Type::getInt8PtrTy(C), llvm::Type::getInt32Ty(C),
                                       llvm::Type::getInt32Ty(C)},
                                      false);
  auto *f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, env.module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  // Never turn loops into memset/memcpy calls: generated code calls nothing.
  f->addFnAttr("no-builtins");
  f->addFnAttr("target-cpu", env.target.cpu);
  f->addFnAttr("target-features", env.target.features);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->getArg(0)->setName("arena");
  f->getArg(1)->setName("task_begin");
  f->getArg(2)->setName("task_end");
  b.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  return f;
}

SlotRef slot_for(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, int v) {
  const Program &p = env.program;
  const Storage &st = p.storage.at(v);
  SlotRef s;
  s.type = p.graph.v(v).dtype;
  s.strides = st.strides;
  switch (st.where) {
    case Storage::Where::Arena:
      s.base = b.CreateGEP(b.getInt8Ty(), arena, b.getInt64(st.offset));
      break;
    case Storage::Where::Const:
      s.base = env.const_data(v);
      break;
    default:
      fail_internal("value '" + p.graph.v(v).name + "' has no storage");
  }
  return s;
}

void emit_counted_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end,
                       const std::function<void(llvm::Value *)> &body, const char *name) {
  auto &C = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(C, std::string(name) + ".body", f);
  auto *exit = llvm::BasicBlock::Create(C, std::string(name) + ".exit", f);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), header, exit);
  b.SetInsertPoint(header);
  llvm::PHINode *iv = b.CreatePHI(begin->getType(), 2, std::string(name) + ".i");
  iv->addIncoming(begin, pre);
  body(iv);
  llvm::Value *next = b.CreateAdd(iv, llvm::ConstantInt::get(begin->getType(), 1));
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, end), header, exit);
  b.SetInsertPoint(exit);
}

}  // namespace tinyrt
