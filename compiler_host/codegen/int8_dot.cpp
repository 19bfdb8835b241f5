// int8_dot.cpp — see int8_dot.h.
#include "codegen/int8_dot.h"

#include "tinyrt_artifact.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>

namespace tinyrt {

using llvm::Value;

llvm::FixedVectorType *Int8Dot::acc_type() const { return llvm::FixedVectorType::get(b.getInt32Ty(), L); }
llvm::FixedVectorType *Int8Dot::weight_type() const { return llvm::FixedVectorType::get(b.getInt8Ty(), 4 * L); }

bool Int8Dot::partials() const { return !i16 && T.dot_i8 == DotI8::X86Madd && madd == MaddForm::Widened; }

bool Int8Dot::flips_in_vector() const {
  return !i16 && (T.dot_i8 == DotI8::NeonPairs || (T.dot_i8 == DotI8::X86Madd && madd == MaddForm::SignedBytes));
}

Value *Int8Dot::start(Value *v) {
  if (!v) v = llvm::Constant::getNullValue(acc_type());
  if (!partials()) return v;
  std::vector<int> lanes;  // lane 2c: v[c], lane 2c + 1: 0
  for (int c = 0; c < L; ++c) lanes.push_back(c), lanes.push_back(L);
  return b.CreateShuffleVector(v, llvm::Constant::getNullValue(acc_type()), lanes);
}

Value *Int8Dot::finish(Value *acc) {
  if (!partials()) return acc;
  std::vector<int> ev, od;
  for (int c = 0; c < L; ++c) ev.push_back(2 * c), od.push_back(2 * c + 1);
  return b.CreateAdd(b.CreateShuffleVector(acc, ev), b.CreateShuffleVector(acc, od));
}

DotOperand Int8Dot::x_vec(Value *quad, bool flip) {
  if (i16) return {b.CreateVectorSplat(L, quad)};
  if (partials()) {  // the quad in every lane, widened to 16 bits once
    Value *xb = b.CreateBitCast(b.CreateVectorSplat(L, quad), llvm::FixedVectorType::get(b.getInt8Ty(), 4 * L));
    auto *v16 = llvm::FixedVectorType::get(b.getInt16Ty(), 4 * L);
    return {x_signed ? b.CreateSExt(xb, v16) : b.CreateZExt(xb, v16)};
  }
  if (T.dot_i8 == DotI8::X86Madd && madd == MaddForm::SignedBytes) {
    Value *x = b.CreateVectorSplat(L, quad);
    if (flip) x = b.CreateXor(x, llvm::ConstantInt::get(acc_type(), 0x80808080u));
    Value *mag = b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, b.CreateBitCast(x, weight_type()), b.getFalse());
    return {x, b.CreateBitCast(mag, acc_type())};  // |-128| = 128 as uint8
  }
  if (T.dot_i8 != DotI8::NeonPairs) return {b.CreateVectorSplat(L, quad)};
  // In a 64-bit vector (a legal type on both NEON targets).
  auto *v2 = llvm::FixedVectorType::get(b.getInt32Ty(), 2);
  Value *pairs = b.CreateInsertElement(llvm::UndefValue::get(v2), quad, (uint64_t)0);
  if (flip) pairs = b.CreateXor(pairs, llvm::ConstantInt::get(v2, 0x80808080u));
  pairs = b.CreateBitCast(pairs, llvm::FixedVectorType::get(b.getInt16Ty(), 4));
  auto *half = llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L);
  auto lane = [&](int i) { return b.CreateBitCast(b.CreateShuffleVector(pairs, std::vector<int>(L, i)), half); };
  return {lane(0), lane(1)};
}

DotOperand Int8Dot::load_w(Value *p) {
  bool halves = T.dot_i8 == DotI8::NeonPairs && !i16;
  auto *wt = halves ? llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L) : weight_type();
  auto at = [&](int64_t off) {
    return b.CreateAlignedLoad(wt, b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), p, b.getInt32(off)), wt->getPointerTo()),
                               llvm::Align(4));
  };
  if (halves) return {at(0), at(2 * L)};
  return {at(0)};
}

Value *Int8Dot::dot4(Value *acc, const DotOperand &xo, const DotOperand &w) {
  auto *accv = acc_type();
  auto *wv = weight_type();
  auto *v16 = llvm::FixedVectorType::get(b.getInt16Ty(), 4 * L);
  Value *xv = xo.lo;
  if (i16) return dot_pairs16(acc, xv, w.lo);
  switch (T.dot_i8) {
    case DotI8::X86Vnni: {
      llvm::Intrinsic::ID id = L == 16  ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                               : L == 8 ? llvm::Intrinsic::x86_avx512_vpdpbusd_256
                                        : llvm::Intrinsic::x86_avx512_vpdpbusd_128;
      return b.CreateIntrinsic(id, {}, {acc, xv, b.CreateBitCast(w.lo, accv)});
    }
    case DotI8::NeonSdot:
      return b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {accv, wv}, {acc, b.CreateBitCast(xv, wv), w.lo});
    case DotI8::NeonPairs: {
      // smull (vmull.s8) of each half, summed in 16 bits when no weight
      // is -128, then sadalp (vpadal.s16): lane i += pair 2i + pair 2i+1.
      auto *h16 = llvm::FixedVectorType::get(b.getInt16Ty(), 2 * L);
      auto prod = [&](Value *xh, Value *wh) -> Value * {
        if (T.arch == TINYRT_ARCH_ARMV7) return b.CreateIntrinsic(llvm::Intrinsic::arm_neon_vmulls, {h16}, {xh, wh});
        return b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_smull, {h16}, {xh, wh});
      };
      auto padal = [&](Value *a, Value *t) -> Value * {
        if (T.arch == TINYRT_ARCH_ARMV7)
          return b.CreateIntrinsic(llvm::Intrinsic::arm_neon_vpadals, {accv, h16}, {a, t});
        return b.CreateAdd(a, b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_saddlp, {accv, h16}, {t}));
      };
      Value *lo = prod(xo.lo, w.lo), *hi = prod(xo.hi, w.hi);
      if (pair16) return padal(acc, b.CreateAdd(lo, hi));
      return padal(padal(acc, lo), hi);
    }
    case DotI8::X86Madd: break;
  }
  int per = T.vector_bytes / 2;             // 16-bit lanes per register
  auto pmaddwd = [&](Value *x, Value *y) {  // <per x i16> x 2 -> <per / 2 x i32>
    llvm::Intrinsic::ID id = per == 32   ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                             : per == 16 ? llvm::Intrinsic::x86_avx2_pmadd_wd
                                         : llvm::Intrinsic::x86_sse2_pmadd_wd;
    return b.CreateIntrinsic(id, {}, {x, y});
  };
  if (madd != MaddForm::Widened) {
    // vpmaddubsw: uint8 x int8 products summed in pairs into 16 bits, then
    // vpmaddwd by 1: the pairs summed into int32. Bytes: uint8 X (exact:
    // byte_pair_exact). Signed bytes: |x| times w with its sign flipped
    // where x < 0 (vpsignb), both within 8 bits as no weight is -128, a
    // pair at most 2 * 128 * 127 = 32512.
    llvm::Intrinsic::ID id = per == 32   ? llvm::Intrinsic::x86_avx512_pmaddubs_w_512
                             : per == 16 ? llvm::Intrinsic::x86_avx2_pmadd_ub_sw
                                         : llvm::Intrinsic::x86_ssse3_pmadd_ub_sw_128;
    Value *xb = b.CreateBitCast(xv, wv), *wb = w.lo;
    if (madd == MaddForm::SignedBytes) {
      // (AVX2 and SSSE3 only: AVX-512 has no vpsignb, signed_bytes_form.)
      wb = b.CreateIntrinsic(per == 16 ? llvm::Intrinsic::x86_avx2_psign_b : llvm::Intrinsic::x86_ssse3_psign_b_128, {},
                             {wb, xb});
      xb = b.CreateBitCast(xo.hi, wv);
    }
    Value *pairs16 = b.CreateIntrinsic(id, {}, {xb, wb});
    Value *ones = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(2 * L), b.getInt16(1));
    return b.CreateAdd(acc, pmaddwd(pairs16, ones));
  }
  // vpmaddwd (pmaddwd): 16-bit products summed in pairs into 32-bit lanes,
  // one instruction for each of the two registers the 4L widened bytes
  // fill (4L = 2 * per), their 2L lanes the partial sums.
  Value *wide = b.CreateSExt(w.lo, v16);
  auto half = [&](Value *v, int h) {
    std::vector<int> idx;
    for (int i = 0; i < per; ++i) idx.push_back(h * per + i);
    return b.CreateShuffleVector(v, idx);
  };
  std::vector<int> both;
  for (int i = 0; i < 2 * L; ++i) both.push_back(i);
  Value *parts[2];
  for (int h = 0; h < 2; ++h) {
    Value *x = half(xv, h), *y = half(wide, h);  // in this order: the IR's order is the code's
    parts[h] = pmaddwd(x, y);
  }
  return b.CreateAdd(acc, b.CreateShuffleVector(parts[0], parts[1], both));
}

Value *Int8Dot::dot_pairs16(Value *acc, Value *x, Value *w) {
  auto *accv = acc_type();
  auto *v16 = llvm::FixedVectorType::get(b.getInt16Ty(), 2 * L);
  Value *x16 = b.CreateBitCast(x, v16), *w16 = b.CreateBitCast(w, v16);
  if (T.arch == TINYRT_ARCH_X86_64) {
    if (T.dot_i8 == DotI8::X86Vnni) {  // acc + pairs in one instruction
      llvm::Intrinsic::ID id = L == 16  ? llvm::Intrinsic::x86_avx512_vpdpwssd_512
                               : L == 8 ? llvm::Intrinsic::x86_avx512_vpdpwssd_256
                                        : llvm::Intrinsic::x86_avx512_vpdpwssd_128;
      return b.CreateIntrinsic(id, {}, {acc, b.CreateBitCast(x16, accv), b.CreateBitCast(w16, accv)});
    }
    llvm::Intrinsic::ID id = L == 16  ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                             : L == 8 ? llvm::Intrinsic::x86_avx2_pmadd_wd
                                      : llvm::Intrinsic::x86_sse2_pmadd_wd;
    return b.CreateAdd(acc, b.CreateIntrinsic(id, {}, {x16, w16}));
  }
  // 32-bit products of the widened lanes, even and odd ones summed (NEON:
  // smull/smull2 and a pairwise add).
  auto *v32 = llvm::FixedVectorType::get(b.getInt32Ty(), 2 * L);
  Value *p = b.CreateMul(b.CreateSExt(x16, v32), b.CreateSExt(w16, v32));
  std::vector<int> ev, od;
  for (int c = 0; c < L; ++c) ev.push_back(2 * c), od.push_back(2 * c + 1);
  return b.CreateAdd(acc, b.CreateAdd(b.CreateShuffleVector(p, ev), b.CreateShuffleVector(p, od)));
}

}  // namespace tinyrt
