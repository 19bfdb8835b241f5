// MathEmitter on 16-register NEON (ARMv7, Target::hoist_math_constants):
// the constants a vector instruction cannot take as an immediate are set
// once per kernel, in its entry block, rather than loaded from the
// constant pool at each use in a loop; elsewhere they stay constants.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>

#include <set>

#include "codegen/loops.h"
#include "codegen/vector_function.h"
#include "codegen/math_emitter.h"
#include "target/target.h"

using namespace tinyrt;

namespace {

struct Fn : VectorFunction {
  // The inline asm calls of the entry block, and the vector float
  // constants the other blocks use.
  int entry_asms() {
    int n = 0;
    for (llvm::Instruction &i : f->getEntryBlock())
      if (auto *c = llvm::dyn_cast<llvm::CallInst>(&i))
        if (auto *a = llvm::dyn_cast<llvm::InlineAsm>(c->getCalledOperand())) {
          EXPECT_EQ(a->getConstraintString(), "=w,0");
          ++n;
        }
    return n;
  }
  std::set<float> loop_constants() {
    std::set<float> out;
    for (llvm::BasicBlock &bb : *f) {
      if (&bb == &f->getEntryBlock()) continue;
      for (llvm::Instruction &i : bb)
        for (llvm::Value *op : i.operands())
          if (auto *k = llvm::dyn_cast<llvm::Constant>(op))
            if (k->getType()->isVectorTy() && k->getType()->getScalarType()->isFloatTy())
              if (auto *s = llvm::dyn_cast_or_null<llvm::ConstantFP>(k->getSplatValue()))
                out.insert(s->getValueAPF().convertToFloat());
    }
    return out;
  }
};

// sigmoid of each of 8 vectors, twice, in a loop.
void sigmoid_loop(Fn &k, const Target &t) {
  MathEmitter me(k.b, t);
  carried_loop(
      k.b, 0, 8, 1, {},
      [&](llvm::Value *i, const Values &v) {
        llvm::Value *x = k.b.CreateLoad(k.v4, k.at(i));
        k.b.CreateStore(me.sigmoid(me.sigmoid(x)), k.at(i));
        return v;
      },
      "loop");
  k.b.CreateRetVoid();
}

TEST(MathEmitter, MathConstantsAreSetOnceInTheEntryBlock) {
  Fn k;
  sigmoid_loop(k, resolve_target("armv7-neon"));
  std::string why;
  llvm::raw_string_ostream os(why);
  ASSERT_FALSE(llvm::verifyModule(k.m, &os)) << os.str();
  // exp_neg's clamp, shifter, ln2 parts and 7 coefficients: one asm each,
  // shared by both sigmoids.
  EXPECT_GE(k.entry_asms(), 10);
  // What stays a constant in the loop is what vmov.f32 encodes (1.0) or
  // zero.
  for (float v : k.loop_constants()) EXPECT_TRUE(v == 1.0f || v == 0.0f) << v;
}

TEST(MathEmitter, ConstantsStayConstantsElsewhere) {
  for (const char *name : {"x86-64-avx2", "x86-64-avx512-vnni", "aarch64-neon"}) {
    Fn k;
    sigmoid_loop(k, resolve_target(name));
    EXPECT_EQ(k.entry_asms(), 0) << name;
    EXPECT_GT(k.loop_constants().size(), 5u) << name;
  }
}

}  // namespace
