#include "codegen/math_emitter.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>

#include "target/target.h"
#include "tinyrt_artifact.h"

#include <cmath>
#include <cstring>

namespace tinyrt {

using llvm::Type;
using llvm::Value;

namespace {

// Whether NEON's vmov.f32 encodes v as an immediate: +-(16 + m) / 16 *
// 2^e with m in [0, 15] and e in [-3, 4] (VFPExpandImm), or zero.
bool neon_immediate(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint32_t e = (bits >> 23) & 0xff;
  return (bits & 0x7fffffff) == 0 || ((bits & 0x7ffff) == 0 && e >= 124 && e <= 131);
}

bool is_hoisted_constant(const llvm::Instruction &i) {
  auto *call = llvm::dyn_cast<llvm::CallInst>(&i);
  if (!call || call->arg_size() != 1 || !llvm::isa<llvm::Constant>(call->getArgOperand(0))) return false;
  auto *a = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand());
  return a && a->getAsmString().empty() && a->getConstraintString() == "=w,0";
}

// Splat k defined once in the function's entry block, through an empty
// inline asm that LLVM cannot see into: a value it keeps in a register (or
// spills once, where a loop needs the registers) rather than a constant it
// rematerializes from the constant pool at each use
// (Target::hoist_math_constants). One per constant and function.
Value *hoisted_constant(llvm::Function &f, llvm::Constant *k) {
  llvm::BasicBlock &entry = f.getEntryBlock();
  for (llvm::Instruction &i : entry)
    if (is_hoisted_constant(i) && llvm::cast<llvm::CallInst>(&i)->getArgOperand(0) == k) return &i;
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  auto *fty = llvm::FunctionType::get(k->getType(), {k->getType()}, false);
  llvm::CallInst *c = eb.CreateCall(fty, llvm::InlineAsm::get(fty, "", "=w,0", /*hasSideEffects=*/false), {k});
  c->setDoesNotAccessMemory();
  return c;
}

}  // namespace

Value *MathEmitter::c(double v, Type *t) {
  llvm::Constant *k = llvm::ConstantFP::get(t, v);
  // One register's vector (a wider one would need a register pair, which
  // the asm's "w" cannot name).
  const unsigned bits = t->getPrimitiveSizeInBits().getFixedSize();
  if (!t_.hoist_math_constants || !t->isVectorTy() || !t->getScalarType()->isFloatTy() || (bits != 64 && bits != 128) ||
      neon_immediate((float)v) || !b_.GetInsertBlock())
    return k;
  return hoisted_constant(*b_.GetInsertBlock()->getParent(), k);
}

Value *MathEmitter::at_most(Value *x, double lim) {
  Type *ft = x->getType();
  if (t_.arch == TINYRT_ARCH_ARMV7 && ft->isVectorTy())
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, c(lim, ft));
  return b_.CreateSelect(b_.CreateFCmpOGT(x, c(lim, ft)), c(lim, ft), x);  // NaN: the compare is false
}

Value *MathEmitter::at_least(Value *x, double lim) {
  Type *ft = x->getType();
  if (t_.arch == TINYRT_ARCH_ARMV7 && ft->isVectorTy())
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, c(lim, ft));
  return b_.CreateSelect(b_.CreateFCmpOLT(x, c(lim, ft)), c(lim, ft), x);
}

Type *MathEmitter::int_type(Type *ft) {
  Type *i32 = b_.getInt32Ty();
  if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(ft))
    return llvm::FixedVectorType::get(i32, vt->getNumElements());
  return i32;
}

Value *MathEmitter::int_type_bits(Value *x) { return b_.CreateBitCast(x, int_type(x->getType())); }

Value *MathEmitter::poly(Value *x, std::initializer_list<double> coef) {
  Value *r = nullptr;
  // Horner's rule with fused multiply-adds (every target has them): one
  // instruction and one rounding per coefficient.
  for (double k : coef)
    r = r ? b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {r, x, c(k, x->getType())}) : c(k, x->getType());
  return r;
}

bool MathEmitter::native_rounding() const { return t_.arch != TINYRT_ARCH_ARMV7; }

Value *MathEmitter::abs(Value *x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }

Value *MathEmitter::sqrt(Value *x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); }

// Rounding for float and double: the instruction where the ISA has one;
// on ARMv7 NEON, adding and removing 2^23 (2^52) rounds to nearest-even in
// the default mode (values that large are integers already).
static double magic_for(Type *ft) { return ft->getScalarType()->isDoubleTy() ? 4503599627370496.0 : 8388608.0; }

Value *MathEmitter::round_even(Value *x) {
  if (native_rounding()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);  // frintn, vroundps $8
  Type *ft = x->getType();
  Value *a = abs(x);
  Value *m = c(magic_for(ft), ft);
  Value *r = b_.CreateFSub(b_.CreateFAdd(a, m), m);
  r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
  return b_.CreateSelect(b_.CreateFCmpUGE(a, m), x, r);
}

Value *MathEmitter::trunc(Value *x) {
  if (native_rounding()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
  Type *ft = x->getType();
  Value *a = abs(x);
  Value *r = round_even(a);  // |x| rounded; step back when it rounded up
  r = b_.CreateSelect(b_.CreateFCmpOGT(r, a), b_.CreateFSub(r, c(1, ft)), r);
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

Value *MathEmitter::floor(Value *x) {
  if (native_rounding()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
  Value *r = round_even(x);
  return b_.CreateSelect(b_.CreateFCmpOGT(r, x), b_.CreateFSub(r, c(1, x->getType())), r);
}

Value *MathEmitter::ceil(Value *x) {
  if (native_rounding()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
  Value *r = round_even(x);
  return b_.CreateSelect(b_.CreateFCmpOLT(r, x), b_.CreateFAdd(r, c(1, x->getType())), r);
}

Value *MathEmitter::exp(Value *x) {
  // e^x = 2^n * e^r, n = round(x / ln2), |r| <= ln2/2; 2^n is applied as two
  // normal-range factors so that results down to the denormals are right.
  Type *ft = x->getType();
  Type *it = int_type(ft);
  Value *isnan = b_.CreateFCmpUNO(x, x);
  Value *xc = b_.CreateSelect(isnan, c(0, ft), x);
  xc = at_least(at_most(xc, 89.0), -104.0);
  Value *t = b_.CreateFMul(xc, c(1.4426950408889634, ft));
  Value *nf = b_.CreateFSub(b_.CreateFAdd(t, c(12582912.0, ft)), c(12582912.0, ft));
  Value *r = b_.CreateFSub(xc, b_.CreateFMul(nf, c(0.693359375, ft)));
  r = b_.CreateFSub(r, b_.CreateFMul(nf, c(-2.12194440e-4, ft)));
  Value *p = poly(r, {1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0});
  Value *n = b_.CreateFPToSI(nf, it);
  Value *n1 = b_.CreateAShr(n, llvm::ConstantInt::get(it, 1));
  Value *n2 = b_.CreateSub(n, n1);
  auto pow2 = [&](Value *k) {
    Value *bits = b_.CreateShl(b_.CreateAdd(k, llvm::ConstantInt::get(it, 127)), llvm::ConstantInt::get(it, 23));
    return b_.CreateBitCast(bits, ft);
  };
  Value *res = b_.CreateFMul(b_.CreateFMul(p, pow2(n1)), pow2(n2));
  return b_.CreateSelect(isnan, x, res);
}

Value *MathEmitter::log(Value *x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
  // s = (m - 1) / (m + 1), |s| <= 0.1716, by its odd series.
  Type *ft = x->getType();
  Type *it = int_type(ft);
  auto ic = [&](int64_t v) { return llvm::ConstantInt::get(it, v); };
  Value *tiny = b_.CreateFCmpOLT(x, c(1.17549435e-38, ft));
  Value *xs = b_.CreateSelect(tiny, b_.CreateFMul(x, c(8388608.0, ft)), x);
  Value *bits = int_type_bits(xs);
  Value *e = b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, ic(23)), ic(255)), ic(127));
  e = b_.CreateSelect(tiny, b_.CreateSub(e, ic(23)), e);
  Value *m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, ic(0x007fffff)), ic(0x3f800000)), ft);
  Value *big = b_.CreateFCmpOGT(m, c(1.41421356, ft));
  m = b_.CreateSelect(big, b_.CreateFMul(m, c(0.5, ft)), m);
  e = b_.CreateSelect(big, b_.CreateAdd(e, ic(1)), e);
  Value *s = b_.CreateFDiv(b_.CreateFSub(m, c(1, ft)), b_.CreateFAdd(m, c(1, ft)));
  Value *s2 = b_.CreateFMul(s, s);
  Value *series = poly(s2, {2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3, 2.0});
  Value *lm = b_.CreateFMul(s, series);
  Value *ef = b_.CreateSIToFP(e, ft);
  Value *res =
      b_.CreateFAdd(b_.CreateFMul(ef, c(0.693359375, ft)), b_.CreateFAdd(lm, b_.CreateFMul(ef, c(-2.12194440e-4, ft))));
  // Special values: log(0) = -inf, log(<0) = NaN, log(inf) = inf, NaN -> NaN.
  res = b_.CreateSelect(b_.CreateFCmpOEQ(x, c(0, ft)), c(-INFINITY, ft), res);
  res = b_.CreateSelect(b_.CreateFCmpOLT(x, c(0, ft)), c(NAN, ft), res);
  res = b_.CreateSelect(b_.CreateFCmpOEQ(x, c(INFINITY, ft)), x, res);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, res);
}

Value *MathEmitter::tanh(Value *x) {
  // tanh x = x P(x^2) / Q(x^2) on |x| <= 9, beyond which float32's tanh is
  // +-1: a rational minimax fit of tanh(x)/x in relative error with
  // P(0) = Q(0) = 1, so that small x keep their relative accuracy
  // (tests/math/fit_rational.py tanh: 2.2e-8 in exact arithmetic, 4 ulp in
  // float32). One branch, no exp: two clamps, 9 multiply-adds and the
  // quotient, about 20 instructions per vector where e^-2|x| with a series
  // for small |x| took 35 (two per LSTM cell, one per GRU cell). The
  // result is clamped to [-1, 1] (at |x| = 9 the quotient can round an ulp
  // above 1). NaN passes the clamps (at_most, at_least) and every step
  // after them.
  auto clamp = [&](Value *v, double lim) { return at_least(at_most(v, lim), -lim); };
  Value *xc = clamp(x, 9.0);
  Value *x2 = b_.CreateFMul(xc, xc);
  Value *p = poly(x2, {1.3420899063682739e-08, 2.066203777746912e-05, 0.0034990430817290466, 0.13384019808977987, 1.0});
  Value *q = poly(x2, {7.805169611710029e-07, 0.0003291115320121104, 0.025890385079865155, 0.467173412981162, 1.0});
  return clamp(quotient(b_.CreateFMul(xc, p), q), 1.0);
}

Value *MathEmitter::recip(Value *d, bool finite) {
  Type *ft = d->getType();
  if (!has_recip_estimate(ft)) return b_.CreateFDiv(c(1, ft), d);
  int n = (int)llvm::cast<llvm::FixedVectorType>(ft)->getNumElements();
  Value *r = nullptr;
  int steps = 0;
  if (t_.arch == TINYRT_ARCH_X86_64 && n == 16 && t_.vector_bytes == 64) {
    r = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_rcp14_ps_512, {},
                           {d, llvm::Constant::getNullValue(ft), b_.getInt16(0xffff)});
    steps = 1;  // 2^-14 -> 2^-28
  } else if (t_.arch == TINYRT_ARCH_X86_64 && (n == 8 || n == 4)) {
    r = b_.CreateIntrinsic(n == 8 ? llvm::Intrinsic::x86_avx_rcp_ps_256 : llvm::Intrinsic::x86_sse_rcp_ps, {}, {d});
    steps = 2;  // 2^-12 -> 2^-24 -> below an ulp
  } else {
    // ARMv7, 4 lanes: NEON has no vector division (LLVM would divide lane
    // by lane). vrecpe (8 bits), two vrecps steps, then one fused step (VFPv4).
    r = b_.CreateIntrinsic(llvm::Intrinsic::arm_neon_vrecpe, {ft}, {d});
    for (int i = 0; i < 2; ++i)
      r = b_.CreateFMul(r, b_.CreateIntrinsic(llvm::Intrinsic::arm_neon_vrecps, {ft}, {d, r}));
    steps = 1;
  }
  // Newton-Raphson: r' = r + r (1 - d r), each step squaring the error.
  for (int i = 0; i < steps; ++i) {
    Value *e = b_.CreateIntrinsic(llvm::Intrinsic::fma, {ft}, {b_.CreateFNeg(d), r, c(1, ft)});
    r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {ft}, {r, e, r});
  }
  // 1/inf = 0 (the step would make inf * 0 = NaN).
  if (finite) return r;
  return b_.CreateSelect(b_.CreateFCmpOEQ(d, c(INFINITY, ft)), llvm::Constant::getNullValue(ft), r);
}

Value *MathEmitter::exp_neg(Value *a) {
  // e^-a for a = min(a, 88): n = round(-a / ln2) in [-127, 0] comes from
  // adding 1.5 * 2^23 + 127, which leaves n + 127 in the low bits, so 2^n
  // is those bits shifted into the exponent field (n = -127 gives 0: e^-88
  // and beyond round to 0 or a denormal anyway); r = -a - n ln2 in
  // [-ln2/2, ln2/2], e^r by a degree-6 minimax polynomial (relative error
  // 1.9e-9). 13 instructions where exp() takes 27: one clamp instead of
  // two, no denormal results, no NaN select (NaN passes the clamp and
  // every step after it).
  Type *ft = a->getType();
  Type *it = int_type(ft);
  a = at_most(a, 88.0);
  Value *magic = c(12582912.0 + 127.0, ft);
  auto fma = [&](Value *p, Value *q, Value *r) { return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ft}, {p, q, r}); };
  Value *v = fma(a, c(-1.4426950408889634, ft), magic);
  Value *nf = b_.CreateFSub(v, magic);  // n, exactly
  Value *r = fma(nf, c(-0.693359375, ft), b_.CreateFNeg(a));
  r = fma(nf, c(2.12194440e-4, ft), r);
  Value *p = poly(r, {0.0013836845827106684, 0.00837481580311894, 0.04166822557250733, 0.1666642016986576,
                      0.49999992079802474, 1.000000036323192, 1.0000000005541658});
  Value *scale = b_.CreateBitCast(b_.CreateShl(int_type_bits(v), llvm::ConstantInt::get(it, 23)), ft);
  return b_.CreateFMul(p, scale);
}

Value *MathEmitter::exp_neg_clamped(Value *a) {
  return exp_neg(at_least(a, 0));  // NaN passes
}

Value *MathEmitter::sigmoid(Value *x) {
  // z = e^-|x| in (0, 1], s = 1 / (1 + z): sigmoid(x) = s for x >= 0 and
  // z * s for x < 0. Nothing overflows and 1 + z is in [1, 2], so the
  // reciprocal needs no special cases. About 20 instructions: SiLU
  // (x * sigmoid(x)) is a common GEMM epilogue, where this cost is paid per
  // output.
  Type *ft = x->getType();
  Value *z = exp_neg(abs(x));
  Value *s = recip(b_.CreateFAdd(c(1, ft), z), /*finite=*/true);
  return b_.CreateSelect(b_.CreateFCmpOLT(x, c(0, ft)), b_.CreateFMul(z, s), s);
}

Value *MathEmitter::erf(Value *x) {
  // erf x = x P(x^2) / Q(x^2) for |x| <= 3.925, where float32's erf rounds
  // to +-1 (and the fit gives 1): a rational minimax fit of erf(x)/x with
  // P(0) = 2/sqrt(pi), so that small x keep their relative accuracy
  // (tests/math/fit_rational.py erf; error 5e-8 in exact arithmetic). One branch,
  // no exp: 11 multiply-adds, a clamp, a division and the saturation,
  // where the two-branch series and A&S 7.1.26 took about 45 instructions
  // per vector. NaN passes the clamp (its compares are false) and every
  // step after it.
  Type *ft = x->getType();
  Value *lim = c(3.925, ft), *nlim = c(-3.925, ft);
  Value *above = b_.CreateFCmpOGT(x, lim), *below = b_.CreateFCmpOLT(x, nlim);
  Value *xc = b_.CreateSelect(above, lim, b_.CreateSelect(below, nlim, x));
  Value *x2 = b_.CreateFMul(xc, xc);
  Value *p = poly(x2, {1.984160763962343e-08, -1.9681605170840095e-06, 0.00014474964373045447, 0.0038213450923805263,
                       0.05094926343347426, 0.20271263502399503, 1.1283791670955126});
  Value *q = poly(x2, {0.0009851669995447519, 0.014595212470565118, 0.11615692226001734, 0.5129807678519283, 1.0});
  // Exactly +-1 beyond the clamp (the quotient at +-3.925 may round an ulp
  // short when the division is a refined estimate).
  Value *r = quotient(b_.CreateFMul(xc, p), q);
  return b_.CreateSelect(above, c(1, ft), b_.CreateSelect(below, c(-1, ft), r));
}

Value *MathEmitter::quotient(Value *n, Value *d) {
  // Where recip() would divide, divide once.
  return has_recip_estimate(d->getType()) ? b_.CreateFMul(n, recip(d, /*finite=*/true)) : b_.CreateFDiv(n, d);
}

bool MathEmitter::has_recip_estimate(Type *ft) const {
  auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(ft);
  if (!vt || !vt->getElementType()->isFloatTy()) return false;
  int n = (int)vt->getNumElements();
  if (t_.arch == TINYRT_ARCH_X86_64) return (n == 16 && t_.vector_bytes == 64) || n == 8 || n == 4;
  return t_.arch == TINYRT_ARCH_ARMV7 && n == 4;
}

void MathEmitter::reduce_pi2(Value *x, Value **r, Value **quadrant) {
  // k = round(x * 2/pi); r = x - k * pi/2 with pi/2 split in three parts
  // whose products with k are exact for |k| < 2^12.
  Type *ft = x->getType();
  Value *kf = round_even(b_.CreateFMul(x, c(0.63661977236758134, ft)));
  Value *rr = b_.CreateFSub(x, b_.CreateFMul(kf, c(1.5703125, ft)));
  rr = b_.CreateFSub(rr, b_.CreateFMul(kf, c(4.837512969970703125e-4, ft)));
  rr = b_.CreateFSub(rr, b_.CreateFMul(kf, c(7.54978995489188216e-8, ft)));
  *r = rr;
  *quadrant = b_.CreateAnd(b_.CreateFPToSI(kf, int_type(ft)), llvm::ConstantInt::get(int_type(ft), 3));
}

Value *MathEmitter::sin_poly(Value *r) {
  Value *r2 = b_.CreateFMul(r, r);
  return b_.CreateFMul(r, poly(r2, {-1.0 / 39916800, 1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6, 1.0}));
}

Value *MathEmitter::cos_poly(Value *r) {
  Value *r2 = b_.CreateFMul(r, r);
  return poly(r2, {1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5, 1.0});
}

Value *MathEmitter::sin(Value *x) {
  Value *r, *q;
  reduce_pi2(x, &r, &q);
  Value *s = sin_poly(r), *co = cos_poly(r);
  auto qis = [&](int v) { return b_.CreateICmpEQ(q, llvm::ConstantInt::get(q->getType(), v)); };
  // q: 0 -> sin r, 1 -> cos r, 2 -> -sin r, 3 -> -cos r
  Value *res = b_.CreateSelect(
      qis(0), s, b_.CreateSelect(qis(1), co, b_.CreateSelect(qis(2), b_.CreateFNeg(s), b_.CreateFNeg(co))));
  Value *bad = b_.CreateFCmpUEQ(abs(x), c(INFINITY, x->getType()));  // inf or NaN
  return b_.CreateSelect(bad, c(NAN, x->getType()), res);
}

Value *MathEmitter::cos(Value *x) {
  Value *r, *q;
  reduce_pi2(x, &r, &q);
  Value *s = sin_poly(r), *co = cos_poly(r);
  auto qis = [&](int v) { return b_.CreateICmpEQ(q, llvm::ConstantInt::get(q->getType(), v)); };
  // q: 0 -> cos r, 1 -> -sin r, 2 -> -cos r, 3 -> sin r
  Value *res = b_.CreateSelect(
      qis(0), co, b_.CreateSelect(qis(1), b_.CreateFNeg(s), b_.CreateSelect(qis(2), b_.CreateFNeg(co), s)));
  Value *bad = b_.CreateFCmpUEQ(abs(x), c(INFINITY, x->getType()));
  return b_.CreateSelect(bad, c(NAN, x->getType()), res);
}

Value *MathEmitter::tan(Value *x) {
  Value *r, *q;
  reduce_pi2(x, &r, &q);
  Value *s = sin_poly(r), *co = cos_poly(r);
  Value *odd = b_.CreateICmpNE(b_.CreateAnd(q, llvm::ConstantInt::get(q->getType(), 1)),
                               llvm::ConstantInt::get(q->getType(), 0));
  Value *res = b_.CreateSelect(odd, b_.CreateFDiv(b_.CreateFNeg(co), s), b_.CreateFDiv(s, co));
  Value *bad = b_.CreateFCmpUEQ(abs(x), c(INFINITY, x->getType()));
  return b_.CreateSelect(bad, c(NAN, x->getType()), res);
}

Value *MathEmitter::atan(Value *x) {
  // atan|x| = pi/2 - atan(1/|x|) beyond 2.414, pi/4 + atan((|x|-1)/(|x|+1))
  // beyond 0.414; the reduced argument (|t| <= 0.415) takes an odd series.
  Type *ft = x->getType();
  Value *a = abs(x);
  Value *big = b_.CreateFCmpOGT(a, c(2.414213562373095, ft));
  Value *mid = b_.CreateFCmpOGT(a, c(0.41421356237309503, ft));
  Value *t =
      b_.CreateSelect(big, b_.CreateFDiv(c(-1, ft), a),
                      b_.CreateSelect(mid, b_.CreateFDiv(b_.CreateFSub(a, c(1, ft)), b_.CreateFAdd(a, c(1, ft))), a));
  Value *base =
      b_.CreateSelect(big, c(1.5707963267948966, ft), b_.CreateSelect(mid, c(0.7853981633974483, ft), c(0, ft)));
  Value *t2 = b_.CreateFMul(t, t);
  Value *p = b_.CreateFMul(
      t, poly(t2, {-1.0 / 19, 1.0 / 17, -1.0 / 15, 1.0 / 13, -1.0 / 11, 1.0 / 9, -1.0 / 7, 1.0 / 5, -1.0 / 3, 1.0}));
  Value *res = b_.CreateFAdd(base, p);
  res = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, res, x);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, res);
}

Value *MathEmitter::pow(Value *x, Value *y) {
  Type *ft = x->getType();
  Value *r = exp(b_.CreateFMul(y, log(abs(x))));
  Value *y_int = b_.CreateFCmpOEQ(floor(y), y);
  Value *half = b_.CreateFMul(y, c(0.5, ft));
  Value *y_odd = b_.CreateAnd(y_int, b_.CreateFCmpONE(floor(half), half));
  Value *neg = b_.CreateFCmpOLT(x, c(0, ft));
  Value *signed_r = b_.CreateSelect(y_odd, b_.CreateFNeg(r), r);
  r = b_.CreateSelect(neg, b_.CreateSelect(y_int, signed_r, c(NAN, ft)), r);
  // 0^y: 0 for y > 0, inf for y < 0 (sign kept for odd y), NaN for NaN
  // (as the general formula gives); x^0 = 1.
  Value *y_num = b_.CreateFCmpORD(y, y);
  Value *zero = b_.CreateAnd(b_.CreateFCmpOEQ(x, c(0, ft)), y_num);
  Value *zr = b_.CreateSelect(b_.CreateFCmpOGT(y, c(0, ft)), c(0, ft), c(INFINITY, ft));
  zr = b_.CreateSelect(y_odd, b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zr, x), zr);
  r = b_.CreateSelect(zero, zr, r);
  // C's pow (and numpy's) for the rest of the special cases: (-inf)^y is
  // +inf for y > 0 and +0 for y < 0 when y is no integer (only finite
  // negative bases give NaN); 1^y = 1 for any y, NaN too; (-1)^(+-inf) = 1.
  Value *ninf = b_.CreateAnd(b_.CreateFCmpOEQ(x, c(-INFINITY, ft)), y_num);
  Value *ninf_r = b_.CreateSelect(b_.CreateFCmpOGT(y, c(0, ft)), c(INFINITY, ft), c(0, ft));
  r = b_.CreateSelect(b_.CreateAnd(ninf, b_.CreateNot(y_int)), ninf_r, r);
  Value *one = b_.CreateOr(b_.CreateFCmpOEQ(x, c(1, ft)),
                           b_.CreateAnd(b_.CreateFCmpOEQ(x, c(-1, ft)), b_.CreateFCmpOEQ(abs(y), c(INFINITY, ft))));
  r = b_.CreateSelect(one, c(1, ft), r);
  return b_.CreateSelect(b_.CreateFCmpOEQ(y, c(0, ft)), c(1, ft), r);
}

}  // namespace tinyrt
