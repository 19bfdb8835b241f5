// address_proof.cpp — see address_proof.h.
//
// Integers are bounded by intervals of exact (128-bit) integers. A SCEV
// expression is modular in its bit width, so an operation whose exact
// interval leaves the width's signed range could have wrapped: its bound is
// then the whole range of the type. Pointers are split by scalar evolution
// into a base (the arena argument, a constant array, a stack array, or a
// select or merge of such pointers, each alternative proved in turn) and an
// integer byte offset.
#include "codegen/address_proof.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Module.h>
#include <llvm/ADT/Triple.h>
#include <llvm/IR/Operator.h>
#include <llvm/Support/raw_ostream.h>

namespace tinyrt {
namespace {

using Int = __int128;

struct Interval {
  Int lo, hi;
};

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

// The signed range of an integer type of `bits` bits (pointers: 64).
Interval whole(unsigned bits) {
  bits = std::min(bits, 64u);
  return {-(Int(1) << (bits - 1)), (Int(1) << (bits - 1)) - 1};
}

// Both bounds hold.
Interval meet(Interval a, Interval b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

bool within(Interval x, Interval r) { return x.lo >= r.lo && x.hi <= r.hi; }

class Bounds {
 public:
  Bounds(llvm::ScalarEvolution &se, llvm::Function &f, int64_t tasks) : se_(se), f_(f), tasks_(tasks) {}

  // The values of integer expression s.
  Interval of(const llvm::SCEV *s) {
    auto it = memo_.find(s);
    if (it != memo_.end()) return it->second;
    Interval r = fits(s, compute(s));
    memo_[s] = r;
    return r;
  }

  // Lane by lane, the values of integer vector v (n lanes).
  std::vector<Interval> lanes_of(llvm::Value *v, unsigned n) {
    auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    Interval t = whole(vt && vt->getElementType()->isIntegerTy() ? vt->getElementType()->getIntegerBitWidth() : 64);
    std::vector<Interval> all(n, t);
    if (!vt || vt->getNumElements() != n || !vt->getElementType()->isIntegerTy() || !active_.insert(v).second)
      return all;
    std::vector<Interval> r = all;
    auto fit = [&](Interval x) { return within(x, t) ? x : t; };
    if (auto *c = llvm::dyn_cast<llvm::Constant>(v)) {
      for (unsigned l = 0; l < n; ++l)
        if (auto *ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(l)))
          if (ci->getBitWidth() <= 64) r[l] = {ci->getSExtValue(), ci->getSExtValue()};
    } else if (auto *ie = llvm::dyn_cast<llvm::InsertElementInst>(v)) {
      auto *idx = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
      r = lanes_of(ie->getOperand(0), n);
      if (idx && idx->getZExtValue() < n)
        r[idx->getZExtValue()] = of(se_.getSCEV(ie->getOperand(1)));
      else
        r = all;
    } else if (auto *sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(v)) {
      unsigned in_n = llvm::cast<llvm::FixedVectorType>(sv->getOperand(0)->getType())->getNumElements();
      std::vector<Interval> a = lanes_of(sv->getOperand(0), in_n), b = lanes_of(sv->getOperand(1), in_n);
      for (unsigned l = 0; l < n; ++l) {
        int m = sv->getMaskValue(l);
        r[l] = m < 0 ? t : m < (int)in_n ? a[m] : b[m - in_n];
      }
    } else if (auto *bo = llvm::dyn_cast<llvm::BinaryOperator>(v)) {
      std::vector<Interval> a = lanes_of(bo->getOperand(0), n), b = lanes_of(bo->getOperand(1), n);
      for (unsigned l = 0; l < n; ++l) {
        switch (bo->getOpcode()) {
          case llvm::Instruction::Add: r[l] = fit({a[l].lo + b[l].lo, a[l].hi + b[l].hi}); break;
          case llvm::Instruction::Sub: r[l] = fit({a[l].lo - b[l].hi, a[l].hi - b[l].lo}); break;
          case llvm::Instruction::Mul:
            if (small(a[l]) && small(b[l])) r[l] = fit(mul(a[l], b[l]));
            break;
          case llvm::Instruction::Shl:
            if (b[l].lo == b[l].hi && b[l].lo >= 0 && b[l].lo < 32 && small(a[l]))
              r[l] = fit(mul(a[l], {Int(1) << (int)b[l].lo, Int(1) << (int)b[l].lo}));
            break;
          // By a positive constant: division truncates toward zero, so the
          // quotient is monotonic in the dividend; a remainder of a
          // nonnegative dividend lies in [0, c - 1] (and is the dividend
          // when that is below c).
          case llvm::Instruction::SDiv:
          case llvm::Instruction::UDiv:
            if (b[l].lo == b[l].hi && b[l].lo > 0 && (bo->getOpcode() == llvm::Instruction::SDiv || nonneg(a[l])))
              r[l] = fit({a[l].lo / b[l].lo, a[l].hi / b[l].lo});
            break;
          case llvm::Instruction::SRem:
          case llvm::Instruction::URem:
            if (b[l].lo == b[l].hi && b[l].lo > 0 && nonneg(a[l]))
              r[l] = a[l].hi < b[l].lo ? a[l] : Interval{0, b[l].lo - 1};
            break;
          default: break;
        }
      }
    } else if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(v); sel && clamp_lanes(sel, n, &r)) {
      // a clamp written as compare and select
    } else if (auto *ca = llvm::dyn_cast<llvm::CastInst>(v)) {
      std::vector<Interval> a = lanes_of(ca->getOperand(0), n);
      unsigned from = ca->getSrcTy()->getScalarSizeInBits();
      for (unsigned l = 0; l < n; ++l) {
        if (ca->getOpcode() == llvm::Instruction::SExt)
          r[l] = a[l];
        else if (ca->getOpcode() == llvm::Instruction::ZExt)
          r[l] = nonneg(a[l]) ? a[l] : Interval{0, (Int(1) << from) - 1};
        else if (ca->getOpcode() == llvm::Instruction::Trunc)
          r[l] = fit(a[l]);
      }
    } else if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(v)) {
      std::vector<Interval> a = lanes_of(sel->getTrueValue(), n), b = lanes_of(sel->getFalseValue(), n);
      for (unsigned l = 0; l < n; ++l) r[l] = hull(a[l], b[l]);
    } else if (auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(v)) {
      auto id = ii->getIntrinsicID();
      if (id == llvm::Intrinsic::smax || id == llvm::Intrinsic::smin)
        r = min_max_lanes(id == llvm::Intrinsic::smin, ii->getArgOperand(0), ii->getArgOperand(1), n);
    }
    active_.erase(v);
    return r;
  }

  // select(p < q, p, q) and its variants (signed compares) as the minimum
  // or maximum of p and q, lane by lane: the vector clamps the loop
  // emitter writes.
  bool clamp_lanes(llvm::SelectInst *sel, unsigned n, std::vector<Interval> *r) {
    auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(sel->getCondition());
    if (!cmp || !cmp->isSigned()) return false;
    llvm::Value *p = cmp->getOperand(0), *q = cmp->getOperand(1);
    llvm::Value *t = sel->getTrueValue(), *f = sel->getFalseValue();
    bool picks_p = t == p && f == q, picks_q = t == q && f == p;
    if (!picks_p && !picks_q) return false;
    bool less = cmp->getPredicate() == llvm::CmpInst::ICMP_SLT || cmp->getPredicate() == llvm::CmpInst::ICMP_SLE;
    *r = min_max_lanes(less == picks_p, p, q, n);  // p < q ? p : q is the minimum
    return true;
  }
  // min(p, q) or max(p, q), lane by lane.
  std::vector<Interval> min_max_lanes(bool is_min, llvm::Value *p, llvm::Value *q, unsigned n) {
    std::vector<Interval> a = lanes_of(p, n), b = lanes_of(q, n), r(n);
    for (unsigned l = 0; l < n; ++l)
      r[l] = is_min ? Interval{std::min(a[l].lo, b[l].lo), std::min(a[l].hi, b[l].hi)}
                    : Interval{std::max(a[l].lo, b[l].lo), std::max(a[l].hi, b[l].hi)};
    return r;
  }

  // A gather's or scatter's lanes: a GEP of one base pointer by a vector
  // of indices (each lane `elt` bytes); only the enabled lanes of a
  // constant mask count.
  bool proves_lanes(const MemoryAccess &a, const ArenaRanges &arena) {
    if (llvm::Value *one = llvm::getSplatValue(a.ptr)) return proves(one, {0, 0}, a.elt, arena);  // every lane
    auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(a.ptr);
    if (!gep || gep->getNumIndices() != 1) return false;
    llvm::Value *base = gep->getPointerOperand();
    if (base->getType()->isVectorTy()) base = llvm::getSplatValue(base);
    if (!base) return false;
    llvm::Value *idx = gep->getOperand(1);
    uint64_t size = f_.getParent()->getDataLayout().getTypeAllocSize(gep->getSourceElementType());
    std::vector<Interval> lanes;
    if (idx->getType()->isVectorTy())
      lanes = lanes_of(idx, a.lanes);
    else
      lanes.assign(a.lanes, of(se_.getSCEV(idx)));
    auto *cm = llvm::dyn_cast<llvm::Constant>(a.mask);
    std::optional<Interval> off;
    for (unsigned l = 0; l < a.lanes; ++l) {
      if (cm && cm->getAggregateElement(l)->isNullValue()) continue;
      if (!small(lanes[l])) return false;
      Interval x = mul(lanes[l], {(Int)size, (Int)size});
      off = off ? hull(*off, x) : x;
    }
    return !off || proves(base, *off, a.elt, arena);
  }

  // "base + [lo, hi]": ptr as the proof bounds it (for the notes).
  std::string describe(llvm::Value *ptr) {
    std::string out;
    llvm::raw_string_ostream os(out);
    if (!ptr->getType()->isPointerTy()) {
      os << "per-lane pointers (a gather or scatter)";
      return os.str();
    }
    const llvm::SCEV *base, *off;
    split(ptr, &base, &off);
    os << *base << " + " << *off;
    if (!llvm::isa<llvm::SCEVCouldNotCompute>(off)) {
      Interval r = of(off);
      os << " in [" << (long long)r.lo << ", " << (long long)r.hi << "]";
    }
    return os.str();
  }

  // Whether `bytes` at every address `ptr` can take lie in one of `arena`'s
  // ranges, a constant array or a stack array (`extra`: an offset added to
  // ptr).
  bool proves(llvm::Value *ptr, Interval extra, uint64_t bytes, const ArenaRanges &arena) {
    if (!ptr->getType()->isPointerTy()) return false;
    const llvm::SCEV *base, *off_s;
    split(ptr, &base, &off_s);
    auto *u = llvm::dyn_cast<llvm::SCEVUnknown>(base);
    if (!u || llvm::isa<llvm::SCEVCouldNotCompute>(off_s)) return false;
    Interval off = of(off_s);
    off = {off.lo + extra.lo, off.hi + extra.hi};
    Interval touched{off.lo, off.hi + (Int)bytes};  // bytes [lo, hi + bytes)
    llvm::Value *b = u->getValue();
    if (b == f_.getArg(0)) {
      for (auto &r : arena)
        if (touched.lo >= r.first && touched.hi <= r.second) return true;
      return false;
    }
    llvm::Value *stripped = b->stripPointerCasts();
    const llvm::DataLayout &dl = f_.getParent()->getDataLayout();
    if (auto *g = llvm::dyn_cast<llvm::GlobalVariable>(stripped))
      return touched.lo >= 0 && touched.hi <= (Int)dl.getTypeAllocSize(g->getValueType());
    if (auto *a = llvm::dyn_cast<llvm::AllocaInst>(stripped)) {
      auto size = a->getAllocationSizeInBits(dl);
      return size && touched.lo >= 0 && touched.hi <= (Int)(*size / 8);
    }
    // The same pointer made a base of its own (opaque_pointer).
    if (is_opaque_pointer(b)) return proves(llvm::cast<llvm::CallInst>(b)->getArgOperand(0), off, bytes, arena);
    // A choice of pointers: each alternative, with the same offset.
    if (!active_.insert(b).second) return false;
    bool ok = false;
    if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(b)) {
      auto d = decide(sel->getCondition());
      ok = ((d && !*d) || proves(sel->getTrueValue(), off, bytes, arena)) &&
           ((d && *d) || proves(sel->getFalseValue(), off, bytes, arena));
    } else if (auto *phi = llvm::dyn_cast<llvm::PHINode>(b)) {
      ok = phi->getNumIncomingValues() > 0;
      for (llvm::Value *in : phi->incoming_values()) ok = ok && proves(in, off, bytes, arena);
    }
    active_.erase(b);
    return ok;
  }

  // The value of condition c when the intervals of its operands settle it.
  std::optional<bool> decide(llvm::Value *c) {
    if (auto *k = llvm::dyn_cast<llvm::ConstantInt>(c)) return k->isOne();
    if (auto *bo = llvm::dyn_cast<llvm::BinaryOperator>(c)) {
      if (bo->getOpcode() != llvm::Instruction::And && bo->getOpcode() != llvm::Instruction::Or) return std::nullopt;
      bool is_and = bo->getOpcode() == llvm::Instruction::And;
      auto x = decide(bo->getOperand(0)), y = decide(bo->getOperand(1));
      if ((x && *x != is_and) || (y && *y != is_and)) return !is_and;  // false && _, true || _
      if (x && y) return is_and;
      return std::nullopt;
    }
    auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(c);
    if (!cmp || !cmp->getOperand(0)->getType()->isIntegerTy()) return std::nullopt;
    Interval x = of(se_.getSCEV(cmp->getOperand(0))), y = of(se_.getSCEV(cmp->getOperand(1)));
    llvm::CmpInst::Predicate p = cmp->getPredicate();
    if (cmp->isUnsigned()) {  // unsigned order is the signed one for non-negative operands
      if (!nonneg(x) || !nonneg(y)) return std::nullopt;
      p = cmp->getSignedPredicate();
    }
    switch (p) {
      case llvm::CmpInst::ICMP_EQ:
        if (x.lo == x.hi && y.lo == y.hi && x.lo == y.lo) return true;
        if (x.hi < y.lo || y.hi < x.lo) return false;
        return std::nullopt;
      case llvm::CmpInst::ICMP_NE:
        if (x.lo == x.hi && y.lo == y.hi && x.lo == y.lo) return false;
        if (x.hi < y.lo || y.hi < x.lo) return true;
        return std::nullopt;
      case llvm::CmpInst::ICMP_SLT:
        if (x.hi < y.lo) return true;
        if (x.lo >= y.hi) return false;
        return std::nullopt;
      case llvm::CmpInst::ICMP_SLE:
        if (x.hi <= y.lo) return true;
        if (x.lo > y.hi) return false;
        return std::nullopt;
      case llvm::CmpInst::ICMP_SGT:
        if (x.lo > y.hi) return true;
        if (x.hi <= y.lo) return false;
        return std::nullopt;
      case llvm::CmpInst::ICMP_SGE:
        if (x.lo >= y.hi) return true;
        if (x.hi < y.lo) return false;
        return std::nullopt;
      default: return std::nullopt;
    }
  }

 private:
  // ptr = base + offset (bytes), as scalar evolution splits it.
  void split(llvm::Value *ptr, const llvm::SCEV **base, const llvm::SCEV **off) {
    const llvm::SCEV *s = se_.getSCEV(ptr);
    *base = se_.getPointerBase(s);
    *off = se_.removePointerBase(s);
  }

  Interval type_range(const llvm::SCEV *s) {
    llvm::Type *t = s->getType();
    return whole(t->isPointerTy() ? 64 : t->getIntegerBitWidth());
  }
  // r, or the whole type when r leaves it (the modular result could wrap).
  Interval fits(const llvm::SCEV *s, Interval r) {
    Interval t = type_range(s);
    return within(r, t) ? r : t;
  }
  static bool nonneg(Interval x) { return x.lo >= 0; }

  Interval mul(Interval a, Interval b) {
    Int c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  // Guard against products beyond 128 bits: no operand beyond 2^64.
  static bool small(Interval a) { return a.lo >= -(Int(1) << 64) && a.hi <= (Int(1) << 64); }

  Interval compute(const llvm::SCEV *s) {
    Interval t = type_range(s);
    switch (s->getSCEVType()) {
      case llvm::scConstant: {
        const llvm::APInt &v = llvm::cast<llvm::SCEVConstant>(s)->getAPInt();
        if (v.getBitWidth() > 64) return t;
        Int x = v.getSExtValue();
        return {x, x};
      }
      case llvm::scTruncate: return of(llvm::cast<llvm::SCEVCastExpr>(s)->getOperand());  // fits() bounds it
      case llvm::scSignExtend: return of(llvm::cast<llvm::SCEVCastExpr>(s)->getOperand());
      case llvm::scZeroExtend: {
        const llvm::SCEV *op = llvm::cast<llvm::SCEVCastExpr>(s)->getOperand();
        Interval x = of(op);
        if (!nonneg(x)) {
          unsigned bits = op->getType()->getIntegerBitWidth();
          x = {0, bits >= 64 ? t.hi : (Int(1) << bits) - 1};
        }
        // A multiple of 2^k (scalar evolution's trailing zeros) lies
        // between the multiples inside the interval: an index's low bits
        // of an even number, (6 i) mod 16, are at most 14, so that pixel
        // (6 i) mod 16 + 1 of a tile stays inside its row.
        const uint32_t tz = se_.GetMinTrailingZeros(s);
        if (tz > 0 && tz < 62) {
          const Int m = Int(1) << tz;
          x = {(x.lo + m - 1) / m * m, x.hi / m * m};
        }
        return x;
      }
      case llvm::scAddExpr: {
        Interval r{0, 0};
        for (const llvm::SCEV *op : llvm::cast<llvm::SCEVNAryExpr>(s)->operands()) {
          Interval x = of(op);
          r = {r.lo + x.lo, r.hi + x.hi};
        }
        // x - c * (x /u c), SCEV's x urem c, among them.
        if (auto qr = quotient_split(llvm::cast<llvm::SCEVAddExpr>(s))) r = meet(r, *qr);
        if (const llvm::SCEV *n = low_bits_as_remainders(llvm::cast<llvm::SCEVAddExpr>(s))) r = meet(r, of(n));
        return r;
      }
      case llvm::scMulExpr: {
        Interval r{1, 1};
        for (const llvm::SCEV *op : llvm::cast<llvm::SCEVNAryExpr>(s)->operands()) {
          Interval x = of(op);
          if (!small(r) || !small(x)) return t;
          r = mul(r, x);
        }
        return r;
      }
      case llvm::scUDivExpr: {
        auto *d = llvm::cast<llvm::SCEVUDivExpr>(s);
        Interval a = of(d->getLHS()), b = of(d->getRHS());
        if (!nonneg(a) || b.lo <= 0) return t;
        return {a.lo / b.hi, a.hi / b.lo};
      }
      case llvm::scAddRecExpr: return addrec(llvm::cast<llvm::SCEVAddRecExpr>(s));
      case llvm::scSMaxExpr:
      case llvm::scSMinExpr:
      case llvm::scUMaxExpr:
      case llvm::scUMinExpr:
      case llvm::scSequentialUMinExpr: {
        auto *mm = llvm::cast<llvm::SCEVNAryExpr>(s);
        bool is_max = s->getSCEVType() == llvm::scSMaxExpr || s->getSCEVType() == llvm::scUMaxExpr;
        bool is_unsigned = s->getSCEVType() != llvm::scSMaxExpr && s->getSCEVType() != llvm::scSMinExpr;
        if (is_unsigned && !is_max) {
          // An unsigned minimum is at most (unsigned) each operand: with
          // one of them in [0, h], it is in [0, h] whatever the others are
          // (an offset clamped by umin whose lower bound the intervals
          // cannot see).
          std::optional<Interval> r;
          for (const llvm::SCEV *op : mm->operands()) {
            Interval x = of(op);
            if (!nonneg(x)) continue;
            r = r ? Interval{std::min(r->lo, x.lo), std::min(r->hi, x.hi)} : x;
          }
          if (!r) return t;
          bool all = true;
          for (const llvm::SCEV *op : mm->operands()) all = all && nonneg(of(op));
          return all ? *r : Interval{0, r->hi};
        }
        std::optional<Interval> r;
        for (const llvm::SCEV *op : mm->operands()) {
          Interval x = of(op);
          if (is_unsigned && !nonneg(x)) return t;  // unsigned order differs
          if (!r)
            r = x;
          else if (is_max)
            r = Interval{std::max(r->lo, x.lo), std::max(r->hi, x.hi)};
          else
            r = Interval{std::min(r->lo, x.lo), std::min(r->hi, x.hi)};
        }
        return r ? *r : t;
      }
      case llvm::scUnknown: return unknown(llvm::cast<llvm::SCEVUnknown>(s)->getValue(), t);
      default: return t;  // ptrtoint, could-not-compute
    }
  }

  // A sum with a term a * (x /u c) and the rest k * x + d (an index split
  // into quotient and remainder, which SCEV writes back into x): with
  // x = c * q + r, it is (a + k * c) * q + k * r + d, q and r bounded
  // separately.
  // SCEV writes x urem 2^N as zext(trunc x to iN): the same sum with
  // each such term as x - 2^N * (x /u 2^N), so that it cancels against
  // the quotient terms of the same x (an index decomposed into t % 4,
  // (t / 4) % 5, t / 20 ... sums back to t plus quotients, which
  // quotient_split bounds). nullptr when there is no such term.
  const llvm::SCEV *low_bits_as_remainders(const llvm::SCEVAddExpr *e) {
    llvm::SmallVector<const llvm::SCEV *, 8> ops;
    bool changed = false;
    for (const llvm::SCEV *op : e->operands()) {
      auto *z = llvm::dyn_cast<llvm::SCEVZeroExtendExpr>(op);
      const llvm::SCEV *x = z ? wide_of_truncation(z->getOperand(), e->getType()) : nullptr;
      unsigned bits = z ? z->getOperand()->getType()->getIntegerBitWidth() : 0;
      if (!x || bits >= 62) {
        ops.push_back(op);
        continue;
      }
      const llvm::SCEV *p = se_.getConstant(e->getType(), uint64_t(1) << bits);
      ops.push_back(se_.getMinusSCEV(x, se_.getMulExpr(p, se_.getUDivExpr(x, p))));
      changed = true;
    }
    if (!changed) return nullptr;
    const llvm::SCEV *n = se_.getAddExpr(ops);
    return n == e ? nullptr : n;
  }

  // x of type `wide` with trunc(x) == y: y a truncation, or a recurrence
  // SCEV formed by truncating one ({trunc s, +, c} is trunc {s, +, c}).
  const llvm::SCEV *wide_of_truncation(const llvm::SCEV *y, llvm::Type *wide) {
    const llvm::SCEV *x = nullptr;
    if (auto *tr = llvm::dyn_cast<llvm::SCEVTruncateExpr>(y)) {
      x = tr->getOperand();
    } else if (auto *ar = llvm::dyn_cast<llvm::SCEVAddRecExpr>(y); ar && ar->isAffine()) {
      auto *st = llvm::dyn_cast<llvm::SCEVTruncateExpr>(ar->getStart());
      auto *step = llvm::dyn_cast<llvm::SCEVConstant>(ar->getStepRecurrence(se_));
      if (st && step && st->getOperand()->getType() == wide)
        x = se_.getAddRecExpr(st->getOperand(), se_.getConstant(wide, step->getAPInt().getZExtValue()), ar->getLoop(),
                              llvm::SCEV::FlagAnyWrap);
    }
    if (!x || x->getType() != wide || se_.getTruncateExpr(x, y->getType()) != y) return nullptr;
    return x;
  }

  std::optional<Interval> quotient_split(const llvm::SCEVAddExpr *e) {
    std::optional<Interval> best;  // every split is sound: the tightest
    for (const llvm::SCEV *term : e->operands()) {
      int64_t a = 1;
      const llvm::SCEV *u = term;
      if (auto *m = llvm::dyn_cast<llvm::SCEVMulExpr>(term))
        if (m->getNumOperands() == 2)
          if (auto *ac = llvm::dyn_cast<llvm::SCEVConstant>(m->getOperand(0)))
            if (ac->getAPInt().getMinSignedBits() <= 64) {
              a = ac->getAPInt().getSExtValue();
              u = m->getOperand(1);
            }
      auto *d = llvm::dyn_cast<llvm::SCEVUDivExpr>(u);
      auto *cc = d ? llvm::dyn_cast<llvm::SCEVConstant>(d->getRHS()) : nullptr;
      if (!cc || cc->getAPInt().getActiveBits() > 62) continue;
      int64_t c = (int64_t)cc->getAPInt().getZExtValue();
      const llvm::SCEV *x = d->getLHS();
      if (c <= 0 || x->getType() != e->getType()) continue;
      const llvm::SCEV *rest = se_.getMinusSCEV(e, term);
      std::optional<int64_t> k = coefficient(rest, x);
      if (!k) continue;
      Interval xi = of(x);
      if (!nonneg(xi)) continue;
      const llvm::SCEV *dd = se_.getMinusSCEV(rest, se_.getMulExpr(se_.getConstant(e->getType(), *k, true), x));
      Interval q = of(u), dr = of(dd);
      Interval part1 = mul(q, {(Int)a + (Int)*k * c, (Int)a + (Int)*k * c});
      Interval part2 = mul({0, c - 1}, {*k, *k});
      Interval r{part1.lo + part2.lo + dr.lo, part1.hi + part2.hi + dr.hi};
      best = best ? meet(*best, r) : r;
    }
    return best;
  }

  // k when `rest` holds k * x: a term x or k * x, or, x a recurrence, a
  // recurrence of its loop whose step is k times x's.
  std::optional<int64_t> coefficient(const llvm::SCEV *rest, const llvm::SCEV *x) {
    std::vector<const llvm::SCEV *> terms{rest};
    if (auto *ra = llvm::dyn_cast<llvm::SCEVAddExpr>(rest)) terms.assign(ra->op_begin(), ra->op_end());
    auto *xr = llvm::dyn_cast<llvm::SCEVAddRecExpr>(x);
    for (const llvm::SCEV *t : terms) {
      if (t == x) return 1;
      if (auto *m = llvm::dyn_cast<llvm::SCEVMulExpr>(t))
        if (m->getNumOperands() == 2 && m->getOperand(1) == x)
          if (auto *kc = llvm::dyn_cast<llvm::SCEVConstant>(m->getOperand(0)))
            if (kc->getAPInt().getMinSignedBits() <= 64) return kc->getAPInt().getSExtValue();
      auto *tr = llvm::dyn_cast<llvm::SCEVAddRecExpr>(t);
      if (!xr || !tr || tr->getLoop() != xr->getLoop() || !tr->isAffine() || !xr->isAffine()) continue;
      auto *xs = llvm::dyn_cast<llvm::SCEVConstant>(xr->getStepRecurrence(se_));
      auto *ts = llvm::dyn_cast<llvm::SCEVConstant>(tr->getStepRecurrence(se_));
      if (!xs || !ts || xs->getAPInt().getMinSignedBits() > 64 || ts->getAPInt().getMinSignedBits() > 64) continue;
      int64_t sx = xs->getAPInt().getSExtValue(), st = ts->getAPInt().getSExtValue();
      if (sx != 0 && st % sx == 0) return st / sx;
    }
    return std::nullopt;
  }

  // {start, +, step} over iterations 0 .. the last one.
  Interval addrec(const llvm::SCEVAddRecExpr *ar) {
    Interval t = type_range(ar);
    if (!ar->isAffine()) return t;
    Interval by_counter = t;
    if (auto r = multiple_of_counter(ar)) by_counter = *r;
    return meet(by_counter, addrec_sweep(ar));
  }

  // ar as a * sext(c) + d, c a counter of ar's loop (a header phi) and d
  // invariant in the loop: a recurrence scalar evolution widened (a
  // pointer's), bounded by the counter's own last value.
  std::optional<Interval> multiple_of_counter(const llvm::SCEVAddRecExpr *ar) {
    const llvm::Loop *l = ar->getLoop();
    if (!ar->getType()->isIntegerTy()) return std::nullopt;
    auto *as = llvm::dyn_cast<llvm::SCEVConstant>(ar->getStepRecurrence(se_));
    if (!as || as->getAPInt().getMinSignedBits() > 64 || !counters_.insert(ar).second) return std::nullopt;
    std::optional<Interval> out;
    for (llvm::PHINode &phi : l->getHeader()->phis()) {
      if (!phi.getType()->isIntegerTy() || phi.getType()->getIntegerBitWidth() > ar->getType()->getIntegerBitWidth())
        continue;
      auto *c = llvm::dyn_cast<llvm::SCEVAddRecExpr>(se_.getSCEV(&phi));
      if (!c || c == ar || c->getLoop() != l || !c->isAffine() || counters_.count(c)) continue;
      auto *cs = llvm::dyn_cast<llvm::SCEVConstant>(c->getStepRecurrence(se_));
      if (!cs || cs->getAPInt().getMinSignedBits() > 64 || cs->getAPInt().isZero()) continue;
      int64_t sa = as->getAPInt().getSExtValue(), sc = cs->getAPInt().getSExtValue();
      if (sa % sc) continue;
      const llvm::SCEV *wide = se_.getNoopOrSignExtend(c, ar->getType());
      const llvm::SCEV *d = se_.getMinusSCEV(ar, se_.getMulExpr(se_.getConstant(ar->getType(), sa / sc, true), wide));
      if (!se_.isLoopInvariant(d, l)) continue;
      Interval ci = of(c), di = of(d);
      if (!small(ci)) continue;
      Interval r = mul(ci, {sa / sc, sa / sc});
      out = Interval{r.lo + di.lo, r.hi + di.hi};
      break;
    }
    counters_.erase(ar);
    return out;
  }

  // start + step * [0, the last iteration].
  Interval addrec_sweep(const llvm::SCEVAddRecExpr *ar) {
    Interval t = type_range(ar);
    const llvm::Loop *l = ar->getLoop();
    Interval start = of(ar->getStart()), step = of(ar->getStepRecurrence(se_));
    // The most backedges taken: SCEV's constant bound, or the bound of the
    // exact count's expression (a task loop: task_end - task_begin - 1).
    std::optional<Int> max_btc;
    const llvm::SCEV *max_s = se_.getConstantMaxBackedgeTakenCount(l);
    if (auto *mc = llvm::dyn_cast<llvm::SCEVConstant>(max_s))
      if (mc->getAPInt().getActiveBits() < 64) max_btc = (Int)mc->getAPInt().getZExtValue();
    const llvm::SCEV *btc = se_.getBackedgeTakenCount(l);
    if (!llvm::isa<llvm::SCEVCouldNotCompute>(btc)) {
      Interval b = of(btc);
      if (b.hi < 0) b.hi = 0;
      if (b.hi < type_range(btc).hi && (!max_btc || b.hi < *max_btc)) max_btc = b.hi;
    }
    std::optional<Interval> exact;  // start + step * [0, max]: no wrap if within the type
    if (max_btc) {
      Interval iters{0, *max_btc};
      if (small(step) && small(iters)) {
        Interval sweep = mul(step, iters);
        Interval r{start.lo + sweep.lo, start.hi + sweep.hi};
        if (within(r, t)) exact = r;
      }
    }
    bool no_wrap = exact || ar->hasNoSignedWrap();
    // Tighter: the value at the exact last iteration, as an expression of
    // the loop's bounds (a task's range, a tile clipped to its tensor).
    if (no_wrap && (step.lo >= 0 || step.hi <= 0)) {
      if (!llvm::isa<llvm::SCEVCouldNotCompute>(btc)) {
        Interval last = of(ar->evaluateAtIteration(btc, se_));
        Interval r = hull(start, last);
        return exact ? meet(r, *exact) : r;
      }
    }
    return exact ? *exact : t;
  }

  Interval unknown(llvm::Value *v, Interval t) {
    if (v == f_.getArg(1)) return {0, (Int)tasks_ - 1};  // task_begin
    if (v == f_.getArg(2)) return {1, (Int)tasks_};      // task_end
    auto *i = llvm::dyn_cast<llvm::Instruction>(v);
    if (!i || !active_.insert(v).second) return t;
    Interval r = t;
    auto *c1 = i->getNumOperands() > 1 ? llvm::dyn_cast<llvm::ConstantInt>(i->getOperand(1)) : nullptr;
    int64_t c = c1 && c1->getBitWidth() <= 64 ? c1->getSExtValue() : 0;
    switch (i->getOpcode()) {
      case llvm::Instruction::Select: {
        auto d = decide(i->getOperand(0));
        Interval x = of(se_.getSCEV(i->getOperand(1))), y = of(se_.getSCEV(i->getOperand(2)));
        r = d ? (*d ? x : y) : hull(x, y);
        break;
      }
      case llvm::Instruction::PHI: {
        auto *phi = llvm::cast<llvm::PHINode>(i);
        std::optional<Interval> h;
        for (llvm::Value *in : phi->incoming_values()) {
          Interval x = of(se_.getSCEV(in));
          h = h ? hull(*h, x) : x;
        }
        if (h) r = *h;
        break;
      }
      case llvm::Instruction::And:
        if (c1 && c >= 0) r = {0, c};
        break;
      case llvm::Instruction::SRem:
        if (c1 && c > 0) {
          Interval x = of(se_.getSCEV(i->getOperand(0)));
          r = nonneg(x) ? (x.hi < c ? x : Interval{0, (Int)(c - 1)}) : Interval{-(Int)(c - 1), (Int)(c - 1)};
        }
        break;
      case llvm::Instruction::SDiv:  // truncates toward zero: monotonic in the dividend
        if (c1 && c > 0) {
          Interval x = of(se_.getSCEV(i->getOperand(0)));
          r = {x.lo / c, x.hi / c};
        }
        break;
      case llvm::Instruction::Or:
        // x | c lies in [x, x + c] for x, c >= 0.
        if (c1 && c >= 0) {
          Interval x = of(se_.getSCEV(i->getOperand(0)));
          if (nonneg(x)) r = {x.lo, x.hi + c};
        }
        break;
      case llvm::Instruction::LShr:
      case llvm::Instruction::AShr:
        if (c1 && c >= 0 && c < 64) {
          if (auto sx = narrow_product(i, (unsigned)c)) {
            r = *sx;
            break;
          }
          Interval x = of(se_.getSCEV(i->getOperand(0)));
          if (nonneg(x) || i->getOpcode() == llvm::Instruction::AShr) r = {x.lo >> c, x.hi >> c};
        }
        break;
      default: break;
    }
    active_.erase(v);
    return r;
  }

  // `ashr (mul x, c << s), s`, as the optimizer writes a product of
  // (64 - s)-bit integers sign-extended to 64 bits: x * c when that fits
  // the narrow type, else the narrow type's whole range.
  std::optional<Interval> narrow_product(llvm::Instruction *i, unsigned s) {
    if (i->getOpcode() != llvm::Instruction::AShr || s == 0 || !i->getType()->isIntegerTy(64)) return std::nullopt;
    auto *m = llvm::dyn_cast<llvm::BinaryOperator>(i->getOperand(0));
    if (!m) return std::nullopt;
    auto *k = llvm::dyn_cast<llvm::ConstantInt>(m->getOperand(1));
    if (!k || k->getBitWidth() != 64) return std::nullopt;
    uint64_t kv = k->getZExtValue();
    int64_t factor;
    if (m->getOpcode() == llvm::Instruction::Shl) {
      if (kv != s) return std::nullopt;
      factor = 1;
    } else if (m->getOpcode() == llvm::Instruction::Mul) {
      if (kv & ((uint64_t(1) << s) - 1)) return std::nullopt;
      factor = (int64_t)kv >> s;
    } else {
      return std::nullopt;
    }
    Interval narrow = whole(64 - s);
    Interval x = of(se_.getSCEV(m->getOperand(0)));
    if (!small(x)) return narrow;
    Interval y = mul(x, {factor, factor});
    return within(y, narrow) ? y : narrow;
  }

  llvm::ScalarEvolution &se_;
  llvm::Function &f_;
  int64_t tasks_;
  std::map<const llvm::SCEV *, Interval> memo_;
  std::set<const llvm::Value *> active_;   // choices being followed (cycles)
  std::set<const llvm::SCEV *> counters_;  // recurrences being rewritten by multiple_of_counter
};

}  // namespace

AddressProof prove_addresses(llvm::Function &f, const ArenaRanges &arena, int64_t tasks, bool want_notes) {
  AddressProof out;
  std::vector<MemoryAccess> acc = memory_accesses(f);
  out.accesses = (int)acc.size();
  if (acc.empty()) return out;
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(f.getParent()->getTargetTriple()));
  llvm::TargetLibraryInfo tli(tlii);
  llvm::AssumptionCache ac(f);
  llvm::DominatorTree dt(f);
  llvm::LoopInfo li(dt);
  llvm::ScalarEvolution se(f, tli, ac, dt, li);
  Bounds bounds(se, f, std::max<int64_t>(tasks, 1));
  // Blocks reachable from the entry over branches whose condition the
  // intervals do not settle against them (an emitter's branch on a constant
  // or on a task count of one; a loop whose entry test, as
  // emit_counted_loop writes it, is false: a tile loop with no full tile).
  std::set<llvm::BasicBlock *> live;
  std::vector<llvm::BasicBlock *> work{&f.getEntryBlock()};
  while (!work.empty()) {
    llvm::BasicBlock *bb = work.back();
    work.pop_back();
    if (!live.insert(bb).second) continue;
    auto *br = llvm::dyn_cast<llvm::BranchInst>(bb->getTerminator());
    std::optional<bool> d;
    if (br && br->isConditional()) d = bounds.decide(br->getCondition());
    if (d)
      work.push_back(br->getSuccessor(*d ? 0 : 1));
    else
      for (llvm::BasicBlock *succ : llvm::successors(bb)) work.push_back(succ);
  }
  ArenaRanges ranges = merged(arena);
  for (const MemoryAccess &a : acc) {
    if (!live.count(a.at->getParent())) continue;  // never runs
    bool ok = false;
    if (!a.lanes) {
      ok = bounds.proves(a.ptr, {0, 0}, a.bytes, ranges);
    } else if (!a.per_lane_ptrs) {
      auto [first, last] = enabled_lanes(a);
      ok = first > last || bounds.proves(a.ptr, {(Int)(first * a.elt), (Int)(first * a.elt)},
                                         (uint64_t)(last - first + 1) * a.elt, ranges);
    } else {
      ok = bounds.proves_lanes(a, ranges);
    }
    if (ok) continue;
    out.unproved.push_back(a);
    if (want_notes) {
      std::string line;
      llvm::raw_string_ostream os(line);
      os << f.getName() << ": " << *a.at << "\n    address " << bounds.describe(a.ptr) << ", "
         << (a.lanes ? a.lanes * a.elt : a.bytes) << " bytes; allowed:";
      for (auto &r : ranges) os << " arena [" << r.first << ", " << r.second << ")";
      os << " and its constant arrays";
      out.notes.push_back(os.str());
    }
  }
  return out;
}

llvm::Value *opaque_pointer(llvm::IRBuilder<> &b, llvm::Value *p) {
  auto *fty = llvm::FunctionType::get(p->getType(), {p->getType()}, false);
  llvm::CallInst *c = b.CreateCall(fty, llvm::InlineAsm::get(fty, "", "=r,0", /*hasSideEffects=*/false), {p});
  c->setDoesNotAccessMemory();
  return c;
}

bool is_opaque_pointer(const llvm::Value *v) {
  auto *c = llvm::dyn_cast<llvm::CallInst>(v);
  if (!c || c->arg_size() != 1) return false;
  auto *ia = llvm::dyn_cast<llvm::InlineAsm>(c->getCalledOperand());
  return ia && ia->getAsmString().empty() && ia->getConstraintString() == "=r,0";
}

}  // namespace tinyrt
