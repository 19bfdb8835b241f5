// codegen/integer_broadcasts.cpp: on targets with integer_broadcasts, a
// 512-bit float splat of a loaded float with more than one use, in a
// function that widens half vectors, becomes one vpbroadcastd from the
// load's address; everything else stays as LLVM wrote it.
#include <gtest/gtest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>

#include "codegen/integer_broadcasts.h"

using namespace tinyrt;

namespace {

// @k: half weights widened, one input splat used by two FMAs (a 1x2 tile).
// USES = 1: one FMA only; HALF = 0: float weights.
std::string kernel_ir(bool two_uses, bool half) {
  const std::string w = half ? R"(
  %hp = bitcast float* %w to <16 x half>*
  %h = load <16 x half>, <16 x half>* %hp, align 32
  %w0 = fpext <16 x half> %h to <16 x float>)"
                             : R"(
  %wp = bitcast float* %w to <16 x float>*
  %w0 = load <16 x float>, <16 x float>* %wp, align 64)";
  return R"(
define void @k(float* %x, float* %w, <16 x float>* %o) {)" +
         w + R"(
  %s = load float, float* %x, align 4
  %i = insertelement <16 x float> poison, float %s, i32 0
  %v = shufflevector <16 x float> %i, <16 x float> poison, <16 x i32> zeroinitializer
  %a = call <16 x float> @llvm.fma.v16f32(<16 x float> %v, <16 x float> %w0, <16 x float> zeroinitializer)
  %b = call <16 x float> @llvm.fma.v16f32(<16 x float> )" +
         std::string(two_uses ? "%v" : "%w0") + R"(, <16 x float> %w0, <16 x float> %a)
  store <16 x float> %b, <16 x float>* %o, align 64
  ret void
}
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
)";
}

struct Rewritten {
  int count = 0;
  int shuffles = 0, loads_of_float = 0;
  std::vector<std::string> asms;  // each inline asm's text and constraints
};

Rewritten rewrite(const std::string &ir, bool flag) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(ir, err, ctx);
  EXPECT_TRUE(m) << err.getMessage().str();
  if (!m) return {};
  Target t;
  t.integer_broadcasts = flag;
  Rewritten r;
  r.count = use_integer_broadcasts(*m, t);
  std::string why;
  llvm::raw_string_ostream os(why);
  EXPECT_FALSE(llvm::verifyModule(*m, &os)) << os.str();
  for (llvm::Instruction &i : m->getFunction("k")->getEntryBlock()) {
    if (llvm::isa<llvm::ShuffleVectorInst>(&i)) ++r.shuffles;
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(&i))
      if (ld->getType()->isFloatTy()) ++r.loads_of_float;
    if (auto *c = llvm::dyn_cast<llvm::CallInst>(&i))
      if (auto *a = llvm::dyn_cast<llvm::InlineAsm>(c->getCalledOperand())) {
        r.asms.push_back(a->getAsmString() + " | " + a->getConstraintString());
        // It reads the scalar's address: the function's first argument.
        EXPECT_EQ(c->getArgOperand(0), m->getFunction("k")->getArg(0));
        EXPECT_EQ(c->getNumUses(), 2u);  // both FMAs take it
      }
  }
  return r;
}

TEST(IntegerBroadcasts, HalfKernelSplatBecomesVpbroadcastd) {
  Rewritten r = rewrite(kernel_ir(true, true), true);
  EXPECT_EQ(r.count, 1);
  EXPECT_EQ(r.shuffles, 0);
  EXPECT_EQ(r.loads_of_float, 0);  // the scalar load went into the asm
  ASSERT_EQ(r.asms.size(), 1u);
  EXPECT_EQ(r.asms[0], "vpbroadcastd $1, $0 | =v,*m");
}

TEST(IntegerBroadcasts, LeftAloneElsewhere) {
  for (auto [two, half, flag] : {std::tuple{true, true, false},     // target without the flag
                                 std::tuple{true, false, true},     // float weights
                                 std::tuple{false, true, true}}) {  // one use: LLVM folds it into the FMA
    Rewritten r = rewrite(kernel_ir(two, half), flag);
    EXPECT_EQ(r.count, 0) << two << half << flag;
    EXPECT_EQ(r.shuffles, 1) << two << half << flag;
    EXPECT_TRUE(r.asms.empty()) << two << half << flag;
  }
}

TEST(IntegerBroadcasts, OnTheAvx512TargetsOnly) {
  for (const std::string &name : target_names()) {
    if (name == "host") continue;
    const Target t = resolve_target(name);
    EXPECT_EQ(t.integer_broadcasts, t.vector_bytes == 64 && name.rfind("x86", 0) == 0) << name;
  }
}

}  // namespace
