// The bounds proof of generated code (codegen/address_proof.h): accesses
// whose every address lies inside the kernel's ranges are proved, for the
// task arguments, loops, clamps and pointer choices the emitters write;
// an access that can leave them is not.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/address_proof.h"
#include "codegen/kernel_emitters.h"
#include "codegen/loops.h"

using namespace tinyrt;

namespace {

const ArenaRanges kRanges = {{0, 32}, {64, 96}};  // 8 floats in, 8 floats out

struct Kernel {
  llvm::LLVMContext C;
  llvm::Module m{"m", C};
  llvm::IRBuilder<> b{C};
  llvm::Function *f;
  Kernel() {
    auto *fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt8PtrTy(), b.getInt32Ty(), b.getInt32Ty()}, false);
    f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "k", m);
    b.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  }
  // The float at element i (i32) from byte `base` of the arena.
  llvm::Value *at(int64_t base, llvm::Value *i) {
    llvm::Value *p = b.CreateGEP(b.getInt8Ty(), f->getArg(0), b.getInt64(base));
    return b.CreateGEP(b.getFloatTy(), b.CreateBitCast(p, b.getFloatTy()->getPointerTo()), i);
  }
  void copy(llvm::Value *from, llvm::Value *to) { b.CreateStore(b.CreateLoad(b.getFloatTy(), from), to); }
  // x[i] when `ok`, else a constant zero (a pixel in the padding reads a
  // zero row so).
  llvm::Value *at_or_zero(llvm::Value *ok, llvm::Value *i) {
    auto *ty = llvm::ArrayType::get(b.getFloatTy(), 1);
    auto *zeros =
        new llvm::GlobalVariable(m, ty, true, llvm::GlobalValue::PrivateLinkage, llvm::ConstantAggregateZero::get(ty));
    return b.CreateSelect(ok, at(0, i), b.CreateBitCast(zeros, b.getFloatTy()->getPointerTo()));
  }
  // Unproved accesses, with the step's task count.
  int unproved(int64_t tasks) {
    b.CreateRetVoid();
    return (int)prove_addresses(*f, kRanges, tasks).unproved.size();
  }
};

TEST(AddressProof, TaskIndexBoundsTheAccess) {
  for (int64_t tasks : {8, 9}) {
    Kernel k;
    emit_counted_loop(
        k.b, k.f->getArg(1), k.f->getArg(2), [&](llvm::Value *t) { k.copy(k.at(0, t), k.at(64, t)); }, "task");
    EXPECT_EQ(k.unproved(tasks), tasks == 8 ? 0 : 2) << tasks << " tasks";
  }
}

TEST(AddressProof, LoopBoundsTheAccess) {
  for (int end : {8, 9}) {
    Kernel k;
    emit_counted_loop(k.b, k.b.getInt32(0), k.b.getInt32(end),
                      [&](llvm::Value *i) { k.copy(k.at(0, i), k.at(64, i)); });
    EXPECT_EQ(k.unproved(1), end == 8 ? 0 : 2) << "end " << end;
  }
}

TEST(AddressProof, ALoopNeverEnteredRunsNothing) {
  Kernel k;
  emit_counted_loop(k.b, k.b.getInt32(0), k.b.getInt32(0),
                    [&](llvm::Value *i) { k.copy(k.at(0, k.b.CreateAdd(i, k.b.getInt32(100))), k.at(64, i)); });
  EXPECT_EQ(k.unproved(1), 0);
}

TEST(AddressProof, PaddedCoordinateNeedsItsClamp) {
  // x[t - 1] or a zero: the pointer formed for t = 0 lies before x unless
  // its coordinate is clamped (clamp_i32, as the emitters do).
  for (bool clamp : {false, true}) {
    Kernel k;
    emit_counted_loop(
        k.b, k.f->getArg(1), k.f->getArg(2),
        [&](llvm::Value *t) {
          llvm::Value *i = k.b.CreateSub(t, k.b.getInt32(1));
          llvm::Value *ok = k.b.CreateICmpULT(i, k.b.getInt32(8));
          k.copy(k.at_or_zero(ok, clamp ? clamp_i32(k.b, i, 0, 7) : i), k.at(64, t));
        },
        "task");
    EXPECT_EQ(k.unproved(8), clamp ? 0 : 1) << (clamp ? "clamped" : "not clamped");
  }
}

TEST(AddressProof, UnsignedCapBoundsACoordinateWithoutALowerBound) {
  // x[umin(t - 3, 7)] or a zero for t < 3 (the GEMM's span mode caps its
  // coordinates so): inside the 8 floats for any task count, as an
  // unsigned minimum is at most 7 whatever t - 3 is; x[t - 3] is not.
  for (bool cap : {false, true}) {
    Kernel k;
    emit_counted_loop(
        k.b, k.f->getArg(1), k.f->getArg(2),
        [&](llvm::Value *t) {
          llvm::Value *i = k.b.CreateSub(t, k.b.getInt32(3));
          llvm::Value *ok = k.b.CreateICmpULT(i, k.b.getInt32(8));
          if (cap) i = k.b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, i, k.b.getInt32(7));
          k.copy(k.at_or_zero(ok, i), k.at(64, clamp_i32(k.b, t, 0, 7)));
        },
        "task");
    EXPECT_EQ(k.unproved(100), cap ? 0 : 1) << (cap ? "capped" : "not capped");
  }
}

TEST(AddressProof, LowBitsOfAMultipleStayBelowItsPeriod) {
  // Task t reads x[(2 t) % 8 + 1]: the low bits of an even number are at
  // most 6, so the element is at most 7 (a span tile's second pixel,
  // (6 i) % 16 + 1, in its row); x[(2 t + 1) % 8 + 1] may be 8.
  for (bool even : {true, false}) {
    Kernel k;
    emit_counted_loop(
        k.b, k.f->getArg(1), k.f->getArg(2),
        [&](llvm::Value *t) {
          llvm::Value *v = k.b.CreateMul(t, k.b.getInt32(2));
          if (!even) v = k.b.CreateAdd(v, k.b.getInt32(1));
          llvm::Value *i = k.b.CreateAdd(k.b.CreateURem(v, k.b.getInt32(8)), k.b.getInt32(1));
          k.copy(k.at(0, i), k.at(64, clamp_i32(k.b, t, 0, 7)));
        },
        "task");
    EXPECT_EQ(k.unproved(100), even ? 0 : 1) << (even ? "even" : "odd");
  }
}

TEST(AddressProof, QuotientAndRemainderOfOneIndex) {
  // Task t = 4q + r reads element 2r + q... of 8: q < 2, r < 4 for t < 8.
  Kernel k;
  emit_counted_loop(
      k.b, k.f->getArg(1), k.f->getArg(2),
      [&](llvm::Value *t) {
        llvm::Value *q = k.b.CreateUDiv(t, k.b.getInt32(4)), *r = k.b.CreateURem(t, k.b.getInt32(4));
        llvm::Value *i = k.b.CreateAdd(k.b.CreateMul(r, k.b.getInt32(2)), q);
        k.copy(k.at(0, i), k.at(64, t));
      },
      "task");
  EXPECT_EQ(k.unproved(8), 0);
}

TEST(AddressProof, GatherLanesThroughVectorClampAndDivision) {
  // Lanes l = 0..3 of task t gather x[clamp((t + l) / 2 * 2 + (t + l) % 2 - 1, 0, 7)],
  // the clamp written as compare and select (as the loop emitter writes
  // vector clamps), signed division and remainder by constants: inside
  // the 8 floats with the clamp, not without it (t = 0, lane 0 reads x[-1]).
  for (bool clamp : {false, true}) {
    Kernel k;
    emit_counted_loop(
        k.b, k.f->getArg(1), k.f->getArg(2),
        [&](llvm::Value *t) {
          auto &b = k.b;
          auto splat = [&](int v) { return b.CreateVectorSplat(4, b.getInt32(v)); };
          llvm::Value *lane = llvm::ConstantVector::get({b.getInt32(0), b.getInt32(1), b.getInt32(2), b.getInt32(3)});
          llvm::Value *v = b.CreateAdd(b.CreateVectorSplat(4, t), lane);
          llvm::Value *i = b.CreateAdd(b.CreateMul(b.CreateSDiv(v, splat(2)), splat(2)), b.CreateSRem(v, splat(2)));
          i = b.CreateSub(i, splat(1));
          if (clamp) {
            i = b.CreateSelect(b.CreateICmpSLT(splat(7), i), splat(7), i);
            i = b.CreateSelect(b.CreateICmpSGT(splat(0), i), splat(0), i);
          }
          llvm::Value *base = b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), k.f->getArg(0), b.getInt64(0)),
                                              b.getFloatTy()->getPointerTo());
          llvm::Value *ptrs = b.CreateGEP(b.getFloatTy(), base, i);
          llvm::Value *all = llvm::Constant::getAllOnesValue(llvm::FixedVectorType::get(b.getInt1Ty(), 4));
          llvm::Value *g =
              b.CreateMaskedGather(llvm::FixedVectorType::get(b.getFloatTy(), 4), ptrs, llvm::Align(4), all);
          b.CreateStore(b.CreateExtractElement(g, (uint64_t)0), k.at(64, t));
        },
        "task");
    EXPECT_EQ(k.unproved(8), clamp ? 0 : 1) << (clamp ? "clamped" : "not clamped");
  }
}

TEST(AddressProof, NestedQuotientsOfTheTaskIndex) {
  // Task t < 140 = 7 * 5 * 4 reads element 360 * (t / 140) + 4 * ((t / 4) % 5) + t % 4
  // of a 20-float tensor (the first quotient signed, as the loop emitter
  // writes it): below 20 for every task. SCEV writes t % 4 as the low bits
  // of t, which must cancel against 4 * (t / 4) for the bound to be tight.
  Kernel k;
  emit_counted_loop(
      k.b, k.f->getArg(1), k.f->getArg(2),
      [&](llvm::Value *t) {
        auto &b = k.b;
        llvm::Value *w = b.CreateURem(t, b.getInt32(4)), *t4 = b.CreateUDiv(t, b.getInt32(4));
        llvm::Value *h = b.CreateURem(t4, b.getInt32(5)), *t20 = b.CreateUDiv(t4, b.getInt32(5));
        llvm::Value *n = b.CreateSDiv(t20, b.getInt32(7));
        llvm::Value *i = b.CreateAdd(b.CreateAdd(b.CreateMul(n, b.getInt32(360)), b.CreateMul(h, b.getInt32(4))), w);
        b.CreateStore(b.CreateLoad(b.getFloatTy(), k.at(0, i)), k.at(0, i));
      },
      "task");
  k.b.CreateRetVoid();
  EXPECT_EQ(prove_addresses(*k.f, {{0, 80}}, 140).unproved.size(), 0u);
}

TEST(AddressProof, WrappingArithmeticIsNotProved) {
  // Element t * 2^30 in int32 wraps: 0, 2^30, -2^31, -2^30, 0, ... for
  // t = 0..7, inside the 8 floats only for t = 0 and 4.
  Kernel k;
  emit_counted_loop(
      k.b, k.f->getArg(1), k.f->getArg(2),
      [&](llvm::Value *t) {
        llvm::Value *i = k.b.CreateMul(t, k.b.getInt32(1 << 30));
        k.copy(k.at(0, i), k.at(64, k.b.getInt32(0)));
      },
      "task");
  EXPECT_EQ(k.unproved(8), 1);
}

TEST(AddressProof, UnsignedDivisionOfANegativeIndexIsNotProved) {
  // (t - 4) /u 2: huge for t < 4.
  Kernel k;
  emit_counted_loop(
      k.b, k.f->getArg(1), k.f->getArg(2),
      [&](llvm::Value *t) {
        llvm::Value *i = k.b.CreateUDiv(k.b.CreateSub(t, k.b.getInt32(4)), k.b.getInt32(2));
        k.copy(k.at(0, i), k.at(64, t));
      },
      "task");
  EXPECT_EQ(k.unproved(8), 1);
}

TEST(AddressProof, AnotherTensorOfTheArenaIsNotProved) {
  // Bytes 32..63 lie between the kernel's two slices (another tensor).
  Kernel k;
  emit_counted_loop(
      k.b, k.f->getArg(1), k.f->getArg(2), [&](llvm::Value *t) { k.copy(k.at(32, t), k.at(64, t)); }, "task");
  EXPECT_EQ(k.unproved(8), 1);
}

// A pointer made a base of its own (opaque_pointer: an empty inline asm)
// is the pointer it copies: accesses off it are proved where they lie in
// the ranges and not where they leave them.
TEST(AddressProof, SeesThroughAnOpaquePointer) {
  for (int end : {8, 9}) {
    Kernel k;
    llvm::Value *out = opaque_pointer(k.b, k.b.CreateGEP(k.b.getInt8Ty(), k.f->getArg(0), k.b.getInt64(64)));
    ASSERT_TRUE(is_opaque_pointer(out));
    llvm::Value *fo = k.b.CreateBitCast(out, k.b.getFloatTy()->getPointerTo());
    emit_counted_loop(k.b, k.b.getInt32(0), k.b.getInt32(end),
                      [&](llvm::Value *i) { k.copy(k.at(0, i), k.b.CreateGEP(k.b.getFloatTy(), fo, i)); });
    EXPECT_EQ(k.unproved(1), end == 8 ? 0 : 2) << "end " << end;
  }
  Kernel k;
  EXPECT_FALSE(is_opaque_pointer(k.f->getArg(0)));
}

}  // namespace
