// looped_epilogue (Target::loop_math_epilogues, ARMv7): a tile's
// epilogues that call math functions run one accumulator group at a time
// in a loop that stays rolled through LLVM's O3 pipeline.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>

#include "codegen/kernel_emitters.h"
#include "codegen/loops.h"
#include "codegen/vector_function.h"
#include "codegen/math_emitter.h"
#include "codegen/module_emitter.h"
#include "ir/expr.h"
#include "target/target.h"

using namespace tinyrt;

namespace {

using Fn = VectorFunction;

int stores(llvm::Function *f) {
  int n = 0;
  for (llvm::BasicBlock &bb : *f)
    for (llvm::Instruction &i : bb) n += llvm::isa<llvm::StoreInst>(&i);
  return n;
}

TEST(LoopedEpilogue, LoopedEpilogueStaysRolledThroughO3) {
  // Six accumulators (three groups of two), each group's epilogue a
  // sigmoid stored to the output: after O3, the buffer's six stores and
  // one loop of two, where unrolled code would store six times (and SROA
  // would drop the buffer).
  Fn k;
  const Target t = resolve_target("armv7-neon");
  MathEmitter me(k.b, t);
  Values acc;
  for (int i = 0; i < 6; ++i) acc.push_back(k.b.CreateLoad(k.v4, k.at(k.b.getInt32(8 + i))));
  looped_epilogue(k.b, acc, 3, [&](llvm::Value *g, const Values &a) {
    ASSERT_EQ(a.size(), 2u);
    for (int j = 0; j < 2; ++j)
      k.b.CreateStore(me.sigmoid(a[(size_t)j]),
                      k.at(k.b.CreateAdd(k.b.CreateMul(g, k.b.getInt32(2)), k.b.getInt32(j))));
  });
  k.b.CreateRetVoid();
  // The module emitter's pipeline with ARMv7's machine, whose cost model
  // is what made GVN move the next trip's loads into a new latch block
  // (dropping the loop's metadata) before the loads were volatile.
  optimize_for(k.m, t);
  EXPECT_EQ(stores(k.f), 6 + 2);
}

TEST(LoopedEpilogue, OnlyMathEpiloguesLoop) {
  const Target arm = resolve_target("armv7-neon"), x86 = resolve_target("x86-64-avx2");
  GemmSpec relu6, silu;
  relu6.epilogue = emin(emax(acc(DType::F32), cst(DType::F32, 0)), cst(DType::F32, 6));
  silu.epilogue = bin(EOp::Mul, acc(DType::F32), un(EOp::Sigmoid, acc(DType::F32)));
  EXPECT_TRUE(loops_epilogue(arm, silu, 4));
  EXPECT_FALSE(loops_epilogue(arm, silu, 1));  // one accumulator group: nothing to interleave
  EXPECT_FALSE(loops_epilogue(arm, relu6, 4));
  EXPECT_FALSE(loops_epilogue(x86, silu, 4));
}

}  // namespace
