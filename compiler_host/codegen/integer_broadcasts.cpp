#include "codegen/integer_broadcasts.h"

#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>

namespace tinyrt {

namespace {

// `shufflevector (insertelement _, (load float p), 0), _, zeroinitializer`
// of 16 floats: the load, else null.
llvm::LoadInst *splat_of_load(llvm::Instruction &i) {
  auto *sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(&i);
  if (!sv || !sv->isZeroEltSplat()) return nullptr;
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(sv->getType());
  if (!vty || vty->getNumElements() != 16 || !vty->getElementType()->isFloatTy()) return nullptr;
  auto *ie = llvm::dyn_cast<llvm::InsertElementInst>(sv->getOperand(0));
  if (!ie) return nullptr;
  auto *idx = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
  if (!idx || !idx->isZero()) return nullptr;
  auto *ld = llvm::dyn_cast<llvm::LoadInst>(ie->getOperand(1));
  if (!ld || !ld->isSimple() || !ld->getType()->isFloatTy()) return nullptr;
  return ld;
}

// Whether f widens vectors of half (vcvtph2ps: --weights fp16).
bool widens_half(llvm::Function &f) {
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &i : bb)
      if (auto *e = llvm::dyn_cast<llvm::FPExtInst>(&i))
        if (e->getSrcTy()->isVectorTy() && e->getSrcTy()->getScalarType()->isHalfTy()) return true;
  return false;
}

}  // namespace

int use_integer_broadcasts(llvm::Module &m, const Target &t) {
  if (!t.integer_broadcasts) return 0;
  llvm::LLVMContext &ctx = m.getContext();
  int n = 0;
  for (llvm::Function &f : m) {
    if (!widens_half(f)) continue;
    std::vector<std::pair<llvm::ShuffleVectorInst *, llvm::LoadInst *>> found;
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &i : bb)
        // (A splat with one use LLVM folds into that instruction as an
        // embedded broadcast, which takes no pipe of its own.)
        if (llvm::LoadInst *ld = i.hasNUsesOrMore(2) ? splat_of_load(i) : nullptr)
          found.push_back({llvm::cast<llvm::ShuffleVectorInst>(&i), ld});
    for (auto [sv, ld] : found) {
      llvm::Value *p = ld->getPointerOperand();
      auto *fty = llvm::FunctionType::get(sv->getType(), {p->getType()}, false);
      auto *bcast = llvm::InlineAsm::get(fty, "vpbroadcastd $1, $0", "=v,*m", /*hasSideEffects=*/false);
      // At the load: the same memory, read at the same point.
      llvm::IRBuilder<> b(ld->getNextNode());
      llvm::CallInst *c = b.CreateCall(fty, bcast, {p});
      c->addParamAttr(0, llvm::Attribute::get(ctx, llvm::Attribute::ElementType, ld->getType()));
      c->addFnAttr(llvm::Attribute::ReadOnly);
      c->addFnAttr(llvm::Attribute::NoUnwind);
      sv->replaceAllUsesWith(c);
      auto *ie = llvm::cast<llvm::Instruction>(sv->getOperand(0));
      sv->eraseFromParent();
      if (ie->use_empty()) ie->eraseFromParent();
      if (ld->use_empty()) ld->eraseFromParent();
      ++n;
    }
  }
  return n;
}

}  // namespace tinyrt
