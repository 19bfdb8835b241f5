// --check-addresses (codegen/address_checks.h): an access outside the
// kernel's ranges traps, one inside runs, and the optimizer deletes exactly
// the tests it proves.
#include <gtest/gtest.h>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/address_checks.h"

using namespace tinyrt;

namespace {

// void k(i8 *arena, i32 t, i32): copies the float at byte 4t to byte
// 64 + 4t, or, `constant`, the float at byte 8 to byte 64.
llvm::Function *copy_kernel(llvm::Module &m, bool constant) {
  auto &C = m.getContext();
  llvm::IRBuilder<> b(C);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt8PtrTy(), b.getInt32Ty(), b.getInt32Ty()}, false);
  auto *f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "k", m);
  b.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  llvm::Value *off =
      constant ? (llvm::Value *)b.getInt64(8) : b.CreateMul(b.CreateSExt(f->getArg(1), b.getInt64Ty()), b.getInt64(4));
  auto at = [&](llvm::Value *bytes) {
    return b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), f->getArg(0), bytes), b.getFloatTy()->getPointerTo());
  };
  llvm::Value *x = b.CreateLoad(b.getFloatTy(), at(off));
  b.CreateStore(x, at(constant ? (llvm::Value *)b.getInt64(64) : b.CreateAdd(off, b.getInt64(64))));
  b.CreateRetVoid();
  return f;
}

void optimize(llvm::Module &m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

const ArenaRanges kRanges = {{0, 32}, {64, 96}};

TEST(AddressChecks, ProvedTestsAreRemovedOthersStay) {
  llvm::LLVMContext C;
  llvm::Module fixed("fixed", C), moving("moving", C);
  llvm::Function *f = copy_kernel(fixed, true), *g = copy_kernel(moving, false);
  EXPECT_EQ(insert_address_checks(*f, kRanges), 2);
  EXPECT_EQ(insert_address_checks(*g, kRanges), 2);
  EXPECT_EQ(count_address_checks(*f), 2);
  optimize(fixed);
  optimize(moving);
  EXPECT_EQ(count_address_checks(*f), 0);  // bytes 8 and 64: inside
  EXPECT_EQ(count_address_checks(*g), 2);  // 4t for any t: not provable
}

TEST(AddressChecks, AnAccessOutsideTraps) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("moving", *ctx);
  llvm::Function *f = copy_kernel(*m, false);
  ASSERT_EQ(insert_address_checks(*f, kRanges), 2);
  optimize(*m);
  auto jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
  llvm::cantFail(jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))));
  auto k = (void (*)(uint8_t *, int32_t, int32_t))llvm::cantFail(jit->lookup("k")).getAddress();
  alignas(16) float arena[32] = {};
  for (int t = 0; t < 8; ++t) {
    arena[t] = (float)t + 0.5f;
    k((uint8_t *)arena, t, t + 1);
    EXPECT_EQ(arena[16 + t], (float)t + 0.5f);
  }
  // t = 8 reads bytes 32..35 and t = -1 the 4 bytes before the arena (both
  // inside the buffer, outside the ranges): both trap.
  EXPECT_DEATH(k((uint8_t *)arena, 8, 9), "");
  EXPECT_DEATH(k((uint8_t *)arena + 4, -1, 0), "");
}

}  // namespace
