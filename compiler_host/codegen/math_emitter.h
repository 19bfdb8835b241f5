// math_emitter.h — transcendental and rounding functions as straight-line
// IR (polynomials and bit manipulation), for scalars or vectors of float.
// Generated code never calls libm. Error bounds over all normal float32
// inputs, checked by tests/math/test_math_accuracy on every target (measured
// maxima in parentheses): exp 2 ulp (1.2), log 3 ulp (2.8), tanh 8 ulp (4.4),
// sigmoid 3 ulp (2.3), erf 8 ulp (5.4; absolute 3.2e-7), sin/cos/tan and
// atan as reported by that test. float64 inputs are computed through the
// float32 approximations.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace tinyrt {

struct Target;

class MathEmitter {
 public:
  MathEmitter(llvm::IRBuilder<> &b, const Target &t) : b_(b), t_(t) {}
  // x: float or <N x float>.
  llvm::Value *exp(llvm::Value *x);
  llvm::Value *log(llvm::Value *x);
  llvm::Value *tanh(llvm::Value *x);
  llvm::Value *sigmoid(llvm::Value *x);
  llvm::Value *erf(llvm::Value *x);
  // e^-max(a, 0), NaN passing (EOp::ExpNeg: softmax's e^(x - max)): about
  // half of exp()'s instructions (one clamp, no special cases, 2^n in one
  // step).
  llvm::Value *exp_neg_clamped(llvm::Value *a);
  // Trigonometry: Cody-Waite reduction by pi/2 (accurate for |x| < 1e5).
  llvm::Value *sin(llvm::Value *x);
  llvm::Value *cos(llvm::Value *x);
  llvm::Value *tan(llvm::Value *x);
  llvm::Value *atan(llvm::Value *x);
  // x^y with C pow's special cases (negative bases with integer exponents).
  llvm::Value *pow(llvm::Value *x, llvm::Value *y);
  // Rounding without libm on targets that lack the instructions (armv7).
  llvm::Value *floor(llvm::Value *x);
  llvm::Value *ceil(llvm::Value *x);
  llvm::Value *round_even(llvm::Value *x);
  llvm::Value *trunc(llvm::Value *x);
  llvm::Value *sqrt(llvm::Value *x);
  llvm::Value *abs(llvm::Value *x);
  // 1 / d for d >= 1 or +inf (inside the functions above): a reciprocal
  // estimate refined by Newton-Raphson steps where the vector ISA has one
  // and division is slow (x86: vdivps; ARMv7 NEON: no vector division),
  // else a division. `finite`: d is never +inf (skips that case).
  llvm::Value *recip(llvm::Value *d, bool finite = false);
  // n / d for finite d >= 1: n * recip(d) where recip has an estimate,
  // else a division.
  llvm::Value *quotient(llvm::Value *n, llvm::Value *d);

 private:
  llvm::Value *c(double v, llvm::Type *t);
  // min(x, lim) and max(x, lim), NaN passing: a compare and a select, or
  // on ARMv7's vectors one vmin/vmax (llvm.minimum/maximum: NaN in, NaN
  // out; a denormal x becomes 0, as NEON's arithmetic flushes it anyway),
  // where LLVM keeps vcgt + vbit for the select.
  llvm::Value *at_most(llvm::Value *x, double lim);
  llvm::Value *at_least(llvm::Value *x, double lim);
  // sin(r) and cos(r) for |r| <= pi/4 and the quadrant of x.
  void reduce_pi2(llvm::Value *x, llvm::Value **r, llvm::Value **quadrant);
  llvm::Value *sin_poly(llvm::Value *r);
  llvm::Value *cos_poly(llvm::Value *r);
  // e^-a for a >= 0 or NaN, results below FLT_MIN not kept (a > 87.3).
  llvm::Value *exp_neg(llvm::Value *a);
  llvm::Value *poly(llvm::Value *x, std::initializer_list<double> coef_high_to_low);
  llvm::Value *int_type_bits(llvm::Value *x);  // bitcast float -> i32 (vector)
  llvm::Type *int_type(llvm::Type *ft);
  bool native_rounding() const;
  bool has_recip_estimate(llvm::Type *ft) const;  // recip() refines an estimate (else divides)
  llvm::IRBuilder<> &b_;
  const Target &t_;
};

}  // namespace tinyrt
