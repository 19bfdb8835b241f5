#include "codegen/expr_emitter.h"

#include <cmath>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>

#include "codegen/loops.h"
#include "target/target.h"
#include "tinyrt_artifact.h"
#include "ir/error.h"

namespace tinyrt {

using llvm::Type;
using llvm::Value;

ExprEmitter::ExprEmitter(llvm::IRBuilder<> &b, const Target &t, int lanes)
    : b_(b), t_(t), lanes_(lanes), math_(b, t), split_offsets_(t.vector_imm_offsets), cache_(1) {}

Type *ExprEmitter::elem_type(DType t) const {
  auto &C = b_.getContext();
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return Type::getFloatTy(C);
    case DType::F64: return Type::getDoubleTy(C);
    case DType::Bool: return Type::getInt1Ty(C);
    case DType::I8:
    case DType::U8: return Type::getInt8Ty(C);
    case DType::I16:
    case DType::U16: return Type::getInt16Ty(C);
    case DType::I32:
    case DType::U32: return Type::getInt32Ty(C);
    case DType::I64:
    case DType::U64: return Type::getInt64Ty(C);
    default: fail_unsupported(std::string("code generation for type ") + dtype_name(t));
  }
}

Type *ExprEmitter::mem_type(DType t) const {
  auto &C = b_.getContext();
  if (t == DType::Bool) return Type::getInt8Ty(C);
  if (t == DType::F16) return Type::getHalfTy(C);
  if (t == DType::BF16) return Type::getInt16Ty(C);
  return elem_type(t);
}

// Registers hold float16/bfloat16 as float; memory holds 16 bits.
Value *ExprEmitter::widen(Value *v, DType t) {
  if (t == DType::Bool) return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  Type *ft = vec_type_like(v, b_.getFloatTy());
  // ARMv7: 4 halves by one vcvt.f32.f16 (LLVM widens a vector of half lane
  // by lane there; Target::half_widen_neon).
  auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (t == DType::F16 && t_.half_widen_neon && vt && vt->getNumElements() == 4)
    return b_.CreateIntrinsic(llvm::Intrinsic::arm_neon_vcvthf2fp, {},
                              {b_.CreateBitCast(v, llvm::FixedVectorType::get(b_.getInt16Ty(), 4))});
  if (t == DType::F16) return b_.CreateFPExt(v, ft);
  if (t == DType::BF16) {
    Value *w = b_.CreateShl(b_.CreateZExt(v, vec_type_like(v, b_.getInt32Ty())), 16);
    return b_.CreateBitCast(w, ft);
  }
  return v;
}

Value *ExprEmitter::narrow(Value *v, DType t) {
  if (t == DType::Bool) return b_.CreateZExt(v, vec_type_like(v, b_.getInt8Ty()));
  if (t == DType::F16) return b_.CreateFPTrunc(v, vec_type_like(v, b_.getHalfTy()));
  if (t == DType::BF16) {
    // Truncation (ONNX's reference); NaN stays NaN.
    Type *it = vec_type_like(v, b_.getInt32Ty());
    Value *x = b_.CreateBitCast(v, it);
    x = b_.CreateSelect(b_.CreateFCmpUNO(v, v), b_.CreateOr(x, llvm::ConstantInt::get(it, 0x400000)), x);
    return b_.CreateTrunc(b_.CreateLShr(x, 16), vec_type_like(v, b_.getInt16Ty()));
  }
  return v;
}

Type *ExprEmitter::vec_type_like(Value *v, Type *elem) const {
  if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
    return llvm::FixedVectorType::get(elem, vt->getNumElements());
  return elem;
}

Type *ExprEmitter::vec_type(Type *elem) const { return lanes_ == 1 ? elem : llvm::FixedVectorType::get(elem, lanes_); }

Value *ExprEmitter::lane_iota() const {
  std::vector<llvm::Constant *> k;
  for (int i = 0; i < lanes_; ++i) k.push_back(b_.getInt32(i));
  return llvm::ConstantVector::get(k);
}

Value *ExprEmitter::vec(const VVal &v) {
  if (lanes_ == 1 || v.kind == VVal::Vector) return v.v;
  Value *s = b_.CreateVectorSplat(lanes_, v.v);
  if (v.kind == VVal::Uniform) return s;
  // Affine: base + lane * stride (index type).
  Value *steps = b_.CreateMul(lane_iota(), b_.CreateVectorSplat(lanes_, b_.getInt32((int32_t)v.stride)));
  return b_.CreateAdd(s, steps);
}

Value *ExprEmitter::const_of(DType t, double f, int64_t i, bool vector) {
  Type *et = elem_type(t);
  llvm::Constant *c =
      dtype_is_float(t) ? llvm::ConstantFP::get(et, f) : llvm::ConstantInt::get(et, (uint64_t)i, dtype_is_signed(t));
  if (vector && lanes_ > 1) return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes_), c);
  return c;
}

VVal ExprEmitter::add(const VVal &a, const VVal &b) {
  if (a.kind == VVal::Uniform && b.kind == VVal::Uniform) return uniform(b_.CreateAdd(a.v, b.v));
  if (a.kind != VVal::Vector && b.kind != VVal::Vector) {
    // Affine + Uniform or Affine + Affine stays affine.
    return affine(b_.CreateAdd(a.v, b.v), a.stride + b.stride);
  }
  return vector(b_.CreateAdd(vec(a), vec(b)));
}

VVal ExprEmitter::mul_const(const VVal &a, int64_t c) {
  Value *k = b_.getInt32((int32_t)c);
  if (c == 1) return a;
  if (a.kind == VVal::Uniform) return uniform(b_.CreateMul(a.v, k));
  if (a.kind == VVal::Affine) return affine(b_.CreateMul(a.v, k), a.stride * c);
  return vector(b_.CreateMul(a.v, b_.CreateVectorSplat(lanes_, k)));
}

Value *ExprEmitter::elem_ptr(const SlotRef &s, Value *offset) {
  Type *mt = mem_type(s.type);
  Value *p = b_.CreateBitCast(s.base, mt->getPointerTo());
  return b_.CreateGEP(mt, p, offset);
}

// ------------------------------------------------------------- analysis --

bool ExprEmitter::needs_guard(const ExprP &e) {
  auto it = guard_memo_.find(e.get());
  if (it != guard_memo_.end()) return it->second;
  bool g = e->op == EOp::Load || e->op == EOp::Reduce ||
           ((e->op == EOp::Div || e->op == EOp::Rem) && !dtype_is_float(e->type));
  for (auto &k : e->a) g = g || needs_guard(k);
  guard_memo_[e.get()] = g;
  return g;
}

bool ExprEmitter::varying(const ExprP &e) {
  if (lanes_ == 1) return false;
  switch (e->op) {
    case EOp::Var: {
      auto it = vars_.find(e->id);
      return it != vars_.end() && it->second.kind != VVal::Uniform;
    }
    case EOp::Acc: return acc_.kind != VVal::Uniform;
    case EOp::Load:
      if (mask_) return true;  // loads under a partial mask are per lane
      break;
    default: break;
  }
  for (auto &k : e->a)
    if (varying(k)) return true;
  return false;
}

// ----------------------------------------------------------------- emit --

VVal ExprEmitter::emit(const ExprP &e) {
  for (auto it = cache_.rbegin(); it != cache_.rend(); ++it) {
    auto f = it->find(e.get());
    if (f != it->end()) return f->second;
  }
  VVal v = emit_uncached(*e, e);
  cache_.back()[e.get()] = v;
  return v;
}

VVal ExprEmitter::emit_uncached(const Expr &e, const ExprP &ep) {
  switch (e.op) {
    case EOp::Const: return uniform(const_of(e.type, e.fval, e.ival, false));
    case EOp::Var: {
      auto it = vars_.find(e.id);
      if (it == vars_.end()) fail_internal("unbound index variable " + std::to_string(e.id));
      return it->second;
    }
    case EOp::Acc:
      if (!acc_.v) fail_internal("accumulator outside an epilogue");
      return acc_;
    case EOp::Dim:
      if (!dims_) fail_internal("a run-time extent in a kernel that does not load them");
      return uniform(dims_(e.id));
    case EOp::Load: return emit_load(e);
    case EOp::Cast: return emit_cast(e);
    case EOp::Select: return emit_select(e);
    case EOp::Reduce: return emit_reduce(e);
    default: break;
  }
  (void)ep;
  if (is_unary(e.op)) return emit_unary(e);
  VVal a = emit(e.a[0]);
  VVal b = emit(e.a[1]);
  return emit_binary(e.op, e.a[0]->type, a, b, e.a[1].get());
}

Value *concat_vectors(llvm::IRBuilder<> &b, std::vector<Value *> parts) {
  while (parts.size() & (parts.size() - 1)) parts.push_back(llvm::UndefValue::get(parts[0]->getType()));
  while (parts.size() > 1) {
    std::vector<Value *> next;
    for (size_t i = 0; i < parts.size(); i += 2) {
      int m = (int)llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
      std::vector<int> idx;
      for (int j = 0; j < 2 * m; ++j) idx.push_back(j);
      next.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], idx));
    }
    parts = std::move(next);
  }
  return parts[0];
}

// `f` applied to each part of w lanes of vector v (an instruction of w
// lanes: a conversion), the results concatenated.
static Value *per_part(llvm::IRBuilder<> &b, Value *v, int w, const std::function<Value *(Value *)> &f) {
  const int n = (int)llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  if (n == w) return f(v);
  std::vector<Value *> parts;
  for (int c = 0; c < n; c += w) {
    std::vector<int> idx;
    for (int l = 0; l < w; ++l) idx.push_back(c + l);
    parts.push_back(f(b.CreateShuffleVector(v, idx)));
  }
  return concat_vectors(b, parts);
}

ExprP byte_table_index(const Expr &load, bool *flip) {
  if (load.op != EOp::Load || load.a.size() != 1) return nullptr;
  const Expr *i = load.a[0].get();
  *flip = false;
  if (i->op == EOp::Add && i->a[1]->is_const_int(128)) {
    *flip = true;
    i = i->a[0].get();
  }
  if (i->op != EOp::Cast || i->type != kIndexType) return nullptr;
  const ExprP &x = i->a[0];
  if (x->type != (*flip ? DType::I8 : DType::U8)) return nullptr;
  return x;
}

// t[x] for 256 bytes t and a vector x of bytes, with byte shuffles: 16-byte
// shuffles (pshufb) of each 16-entry part, lanes outside the part zeroed by
// an index with bit 7 set (x86); four-register lookups, later ones keeping
// the lanes out of their range (tbl/tbx, vtbl/vtbx). nullptr: no such
// instructions for this vector.
Value *ExprEmitter::byte_table_lookup(Value *table, Value *x) {
  auto &C = b_.getContext();
  Type *i8 = b_.getInt8Ty();
  int n = (int)llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  auto part = [&](int offset, int bytes) -> Value * {  // table[offset .. offset+bytes)
    auto *vt = llvm::FixedVectorType::get(i8, bytes);
    Value *p = b_.CreateBitCast(b_.CreateConstGEP1_32(i8, table, offset), vt->getPointerTo());
    return b_.CreateAlignedLoad(vt, p, llvm::Align(1));
  };
  auto splat = [&](int v, int lanes) {
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), b_.getInt8((uint8_t)v));
  };
  // Chunks of `w` lanes of x, looked up by `f`, concatenated again.
  auto chunked = [&](int w, const std::function<Value *(Value *)> &f) -> Value * {
    std::vector<Value *> outs;
    for (int c = 0; c < n; c += w) {
      std::vector<int> idx;
      for (int i = 0; i < w; ++i) idx.push_back(c + i);
      outs.push_back(f(n == w ? x : b_.CreateShuffleVector(x, idx)));
    }
    return concat_vectors(b_, outs);
  };
  if (t_.arch == TINYRT_ARCH_X86_64) {
    int w = std::min(n, t_.vector_bytes);
    if (n % w != 0 || (w != 16 && w != 32 && w != 64)) return nullptr;
    auto id = w == 16   ? llvm::Intrinsic::x86_ssse3_pshuf_b_128
              : w == 32 ? llvm::Intrinsic::x86_avx2_pshuf_b
                        : llvm::Intrinsic::x86_avx512_pshuf_b_512;
    // Each 16-entry part shuffled by the low nibble (pshufb), then the
    // parts' results merged by the high nibble's bits, a tree of byte
    // blends (vpblendvb on each bit moved to the byte's sign: a 16-bit
    // shift, bytes do not mix there): 16 shuffles, 3 shifts and 15 blends
    // per vector where zeroing the lanes out of each part's range took 16
    // shuffles, 32 adds and 16 ors.
    auto *v16 = llvm::FixedVectorType::get(b_.getInt16Ty(), w / 2);
    return chunked(w, [&](Value *xc) {
      Value *lo = b_.CreateAnd(xc, splat(0x0f, w));
      std::vector<Value *> level;
      for (int k = 0; k < 16; ++k) {
        Value *t = part(16 * k, 16);
        if (w > 16) {
          std::vector<int> rep;
          for (int i = 0; i < w; ++i) rep.push_back(i % 16);
          t = b_.CreateShuffleVector(t, rep);
        }
        level.push_back(b_.CreateIntrinsic(id, {}, {t, lo}));
      }
      Value *zero = llvm::Constant::getNullValue(xc->getType());
      for (int bit = 4; bit < 8; ++bit) {
        Value *m = xc;
        if (bit < 7) m = b_.CreateBitCast(b_.CreateShl(b_.CreateBitCast(xc, v16), (uint64_t)(7 - bit)), xc->getType());
        Value *set = b_.CreateICmpSLT(m, zero);  // bit `bit` of each byte
        std::vector<Value *> next;
        for (size_t j = 0; j + 1 < level.size(); j += 2) next.push_back(b_.CreateSelect(set, level[j + 1], level[j]));
        level = std::move(next);
      }
      return level[0];
    });
  }
  if (t_.arch == TINYRT_ARCH_AARCH64 && n % 16 == 0) {
    Type *v16 = llvm::FixedVectorType::get(i8, 16);
    return chunked(16, [&](Value *xc) {
      Value *r = nullptr;
      for (int k = 0; k < 4; ++k) {
        std::vector<Value *> args;
        if (r) args.push_back(r);
        for (int j = 0; j < 4; ++j) args.push_back(part(64 * k + 16 * j, 16));
        args.push_back(k ? b_.CreateSub(xc, splat(64 * k, 16)) : xc);
        r = b_.CreateIntrinsic(k ? llvm::Intrinsic::aarch64_neon_tbx4 : llvm::Intrinsic::aarch64_neon_tbl4, {v16},
                               args);
      }
      return r;
    });
  }
  if (t_.arch == TINYRT_ARCH_ARMV7 && n % 8 == 0) {
    return chunked(8, [&](Value *xc) {
      Value *r = nullptr;
      for (int k = 0; k < 8; ++k) {
        std::vector<Value *> args;
        if (r) args.push_back(r);
        for (int j = 0; j < 4; ++j) args.push_back(part(32 * k + 8 * j, 8));
        args.push_back(k ? b_.CreateSub(xc, splat(32 * k, 8)) : xc);
        r = b_.CreateIntrinsic(k ? llvm::Intrinsic::arm_neon_vtbx4 : llvm::Intrinsic::arm_neon_vtbl4, {}, args);
      }
      return r;
    });
  }
  (void)C;
  return nullptr;
}

VVal ExprEmitter::emit_load(const Expr &e) {
  const SlotRef &s = slots_.at(e.id);
  // A table of 256 bytes read at a byte (tabulate_byte_functions' kernels,
  // Gather of such a table): shuffles instead of a gather.
  bool flip = false;
  if (ExprP x = lanes_ > 1 && s.numel == 256 && dtype_bytes(s.type) == 1 && s.type != DType::Bool
                    ? byte_table_index(e, &flip)
                    : nullptr) {
    VVal xv = emit(x);
    if (xv.kind == VVal::Vector) {
      Value *xb = xv.v;
      if (flip)
        xb = b_.CreateXor(xb, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes_), b_.getInt8(0x80)));
      if (Value *r = byte_table_lookup(s.base, xb)) return vector(r);
    }
  }
  std::vector<VVal> idx;
  for (size_t k = 0; k < e.a.size(); ++k) idx.push_back(s.strides[k] ? emit(e.a[k]) : uniform(b_.getInt32(0)));
  SplitOffset so = split_offset(s, idx);
  VVal off = so.all;
  bool clamped = false;
  // In the arm of a guarded select, prove_bounds proved the load inside
  // its tensor only under the guard; the offset is clamped into the tensor
  // (the identity there) so that the bounds proof of the generated code
  // (codegen/address_proof.h) bounds it too. Loads under a mask that
  // varies are not (their disabled lanes may lie outside).
  auto *cmask = llvm::dyn_cast_or_null<llvm::Constant>(mask_);
  if (guarded_ && s.span > 0 && (!mask_ || cmask) &&
      (off.kind == VVal::Uniform || (off.kind == VVal::Affine && off.stride >= 0))) {
    int64_t lanes = off.kind == VVal::Affine ? lanes_ : 1;
    if (cmask)  // a tail: up to its last enabled lane
      while (lanes > 1 && cmask->getAggregateElement((unsigned)(lanes - 1))->isNullValue()) --lanes;
    int64_t width = (lanes - 1) * (off.kind == VVal::Affine ? off.stride : 0) + 1;  // elements from lane 0's
    if (s.span >= width) {
      Value *lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, off.v, b_.getInt32(0));
      off.v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, lo, b_.getInt32((int32_t)(s.span - width)));
      clamped = true;
    }
  }
  Type *mt = mem_type(s.type);
  llvm::Align al(dtype_bytes(s.type));
  auto to_reg = [&](Value *v) -> Value * { return widen(v, s.type); };
  if (lanes_ == 1 || (off.kind == VVal::Uniform && !mask_))
    return uniform(to_reg(b_.CreateAlignedLoad(mt, elem_ptr(s, off.v), al)));
  Type *vt = llvm::FixedVectorType::get(mt, lanes_);
  if (off.kind == VVal::Affine && off.stride == 1) {
    Value *p = b_.CreateBitCast(clamped || !split_offsets_ ? elem_ptr(s, off.v) : split_ptr(s, so), vt->getPointerTo());
    if (!mask_) return vector(to_reg(b_.CreateAlignedLoad(vt, p, al)));
    return vector(to_reg(b_.CreateMaskedLoad(vt, p, al, mask_, llvm::Constant::getNullValue(vt))));
  }
  Value *ptrs = off.kind == VVal::Uniform ? b_.CreateVectorSplat(lanes_, elem_ptr(s, off.v)) : elem_ptr(s, vec(off));
  Value *m = mask_ ? mask_ : llvm::Constant::getAllOnesValue(llvm::FixedVectorType::get(b_.getInt1Ty(), lanes_));
  return vector(to_reg(b_.CreateMaskedGather(vt, ptrs, al, m, llvm::Constant::getNullValue(vt))));
}

ExprEmitter::SplitOffset ExprEmitter::split_offset(const SlotRef &s, const std::vector<VVal> &idx) {
  SplitOffset r{uniform(b_.getInt32(0)), uniform(b_.getInt32(0)), uniform(b_.getInt32(0))};
  for (size_t k = 0; k < idx.size(); ++k) {
    if (s.strides[k] == 0) continue;
    VVal term = mul_const(idx[k], s.strides[k]);
    if (term.kind == VVal::Uniform)
      r.fixed = add(r.fixed, term);
    else
      r.varying = add(r.varying, term);
  }
  r.all = add(r.fixed, r.varying);
  return r;
}

Value *ExprEmitter::split_ptr(const SlotRef &s, const SplitOffset &so) {
  Type *mt = mem_type(s.type);
  return b_.CreateGEP(mt, elem_ptr(s, so.fixed.v), so.varying.v);
}

void ExprEmitter::store(const SlotRef &out, const std::vector<VVal> &idx, const VVal &value, DType t) {
  SplitOffset so = split_offset(out, idx);
  VVal off = so.all;
  llvm::Align al(dtype_bytes(t));
  if (off.kind == VVal::Uniform && value.kind == VVal::Uniform && !mask_) {  // one element
    b_.CreateAlignedStore(narrow(value.v, t), elem_ptr(out, off.v), al);
    return;
  }
  Value *v = narrow(vec(value), t);
  if (lanes_ == 1) {
    b_.CreateAlignedStore(v, elem_ptr(out, off.v), al);
    return;
  }
  if (off.kind == VVal::Affine && off.stride == 1) {
    Value *p =
        b_.CreateBitCast(split_offsets_ ? split_ptr(out, so) : elem_ptr(out, off.v), v->getType()->getPointerTo());
    if (mask_)
      b_.CreateMaskedStore(v, p, al, mask_);
    else
      b_.CreateAlignedStore(v, p, al);
    return;
  }
  Value *ptrs = elem_ptr(out, vec(off));
  b_.CreateMaskedScatter(
      v, ptrs, al, mask_ ? mask_ : llvm::Constant::getAllOnesValue(llvm::FixedVectorType::get(b_.getInt1Ty(), lanes_)));
}

// x without a clamp to [lo, hi] that a saturating conversion to integer
// type `to` makes redundant (lo <= to's minimum, hi >= its maximum): the
// conversion saturates the same way and turns NaN into 0 either way.
static ExprP strip_saturated_clamp(const ExprP &x, DType to) {
  if (!dtype_is_float(x->type) || dtype_is_float(to) || to == DType::Bool || dtype_bytes(to) > 2) return x;
  double tmin = dtype_is_signed(to) ? -std::ldexp(1.0, dtype_bytes(to) * 8 - 1) : 0.0;
  double tmax =
      dtype_is_signed(to) ? std::ldexp(1.0, dtype_bytes(to) * 8 - 1) - 1 : std::ldexp(1.0, dtype_bytes(to) * 8) - 1;
  ExprP y = x;
  for (int k = 0; k < 2; ++k) {
    if (y->op != EOp::Max && y->op != EOp::Min) break;
    int ci = y->a[0]->is_const() ? 0 : y->a[1]->is_const() ? 1 : -1;
    if (ci < 0) break;
    double c = y->a[(size_t)ci]->fval;
    if (y->op == EOp::Max ? c > tmin : c < tmax) break;
    y = y->a[(size_t)(1 - ci)];
  }
  return y;
}

// z of round(y) + z when it is an integer of at most 16 bits held as a
// float (a zero point: a cast of an 8- or 16-bit integer, or an integral
// constant), so that it may be added after the conversion, exactly.
static bool small_integer(const ExprP &z, bool *may_be_negative) {
  if (z->type != DType::F32) return false;
  if (z->op == EOp::Cast) {
    DType s = z->a[0]->type;
    *may_be_negative = dtype_is_signed(s);
    return !dtype_is_float(s) && s != DType::Bool && dtype_bytes(s) <= 2;
  }
  *may_be_negative = z->fval < 0;
  return z->is_const() && z->fval == std::nearbyint(z->fval) && std::fabs(z->fval) <= 65536;
}

bool ExprEmitter::rounded_int_cast(const ExprP &x, DType to, VVal *out) {
  // x86 and ARMv7 (rounding casts; ARMv7's round_even took about 8
  // instructions before the conversion: int8 mobilenet_v2 0.84x,
  // mobilenet_v3_small 0.88x, efficientnet_b0 0.89x the instructions with
  // this path). Not AArch64: its fcvtzs/fcvtns already saturate and give 0
  // for NaN (emit_cast's own path; adding the zero point after fcvtns
  // would need the clamps and NaN select below: 2.5 % more instructions on
  // mobilenet_v3_small and efficientnet_b0 int8, counted under qemu).
  const bool armv7 = t_.arch == TINYRT_ARCH_ARMV7;
  if ((t_.arch != TINYRT_ARCH_X86_64 && !armv7) || lanes_ % 4 != 0 || x->type != DType::F32 || to == DType::Bool ||
      dtype_is_float(to) || dtype_bytes(to) > 2)
    return false;
  ExprP y, z;
  bool rounds = true, z_negative = false;
  if (x->op == EOp::Round) {
    y = x->a[0];
  } else if (x->op == EOp::Add && (x->a[0]->op == EOp::Round || x->a[1]->op == EOp::Round)) {
    int ri = x->a[0]->op == EOp::Round ? 0 : 1;
    y = x->a[(size_t)ri]->a[0];
    z = x->a[(size_t)(1 - ri)];
    if (!small_integer(z, &z_negative)) return false;
  } else {
    y = x;  // truncation
    rounds = false;
  }
  if (y->type != DType::F32 || (armv7 && !rounds)) return false;  // ARMv7 truncates in emit_cast
  VVal yv = emit(y);
  if (yv.kind == VVal::Uniform) return false;  // the float path (y stays cached)
  Value *f = vec(yv);
  Type *ft = f->getType();
  auto *i32 = b_.getInt32Ty();
  Type *it = llvm::FixedVectorType::get(i32, lanes_);
  // x86's conversions give INT_MIN for NaN and for anything out of int32's
  // range. Keep y within +-2^30 (NaN stays NaN: the compare is false) where
  // INT_MIN or the sum with z would come out wrong. NaN's result, 0, is
  // selected after the sum where it would not come out as 0 by itself
  // (INT_MIN + z saturates to an unsigned type's 0 when z >= 0).
  const double K = 1073741824.0;
  // (ARMv7 clamps tighter below, and always selects NaN's 0.)
  Value *nan = !armv7 && (dtype_is_signed(to) || z_negative) ? b_.CreateFCmpUNO(f, f) : nullptr;
  if (!armv7) {
    Value *k = llvm::ConstantFP::get(ft, K);
    f = b_.CreateSelect(b_.CreateFCmpOGT(f, k), k, f);
  }
  if (!armv7 && z && z_negative) {
    Value *k = llvm::ConstantFP::get(ft, -K);
    f = b_.CreateSelect(b_.CreateFCmpOLT(f, k), k, f);
  }
  Value *r;
  if (armv7) {
    // ARMv7 NEON converts only toward zero (vcvt.s32.f32). Rounding to
    // nearest even instead by the float adder, in NEON's fixed
    // round-to-nearest mode: y + 1.5 * 2^23 for |y| <= 2^22 holds
    // round(y) in its low mantissa bits, 0x4B400000 + round(y) as an
    // integer (y kept within +-2^22 by vmin/vmax, which pass NaN: every
    // result past that saturates below anyway, the type having at most 16
    // bits). NaN's 0 is selected below as on x86.
    const double M = 4194304.0;
    f = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, f, llvm::ConstantFP::get(ft, M));
    f = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, f, llvm::ConstantFP::get(ft, -M));
    Value *bits = b_.CreateBitCast(b_.CreateFAdd(f, llvm::ConstantFP::get(ft, 12582912.0)), it);
    r = b_.CreateSub(bits, llvm::ConstantInt::get(it, 0x4B400000));
    nan = b_.CreateFCmpUNO(f, f);
  } else {
    const int w = (t_.vector_bytes == 64 && lanes_ % 16 == 0) ? 16 : lanes_ % 8 == 0 ? 8 : 4;
    r = per_part(b_, f, w, [&](Value *fc) -> Value * {
      if (w == 16)
        return b_.CreateIntrinsic(
            rounds ? llvm::Intrinsic::x86_avx512_mask_cvtps2dq_512 : llvm::Intrinsic::x86_avx512_mask_cvttps2dq_512, {},
            {fc, llvm::UndefValue::get(llvm::FixedVectorType::get(i32, 16)), b_.getInt16(0xffff), b_.getInt32(4)});
      if (w == 8)
        return b_.CreateIntrinsic(
            rounds ? llvm::Intrinsic::x86_avx_cvt_ps2dq_256 : llvm::Intrinsic::x86_avx_cvtt_ps2dq_256, {}, {fc});
      return b_.CreateIntrinsic(rounds ? llvm::Intrinsic::x86_sse2_cvtps2dq : llvm::Intrinsic::x86_sse2_cvttps2dq, {},
                                {fc});
    });
  }
  if (z) {
    Value *zi;
    if (z->op == EOp::Cast) {
      VVal zv = emit(z->a[0]);
      zi = b_.CreateIntCast(vec(zv), it, dtype_is_signed(z->a[0]->type));
    } else {
      zi = llvm::ConstantInt::get(it, (uint64_t)(int64_t)z->fval);
    }
    r = b_.CreateAdd(r, zi);
  }
  if (nan) r = b_.CreateSelect(nan, llvm::Constant::getNullValue(it), r);
  int bits = dtype_bytes(to) * 8;
  bool sg = dtype_is_signed(to);
  int64_t lo = sg ? -(int64_t(1) << (bits - 1)) : 0,
          hi = sg ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, r, llvm::ConstantInt::get(it, (uint64_t)lo));
  r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, r, llvm::ConstantInt::get(it, (uint64_t)hi));
  *out = vector(b_.CreateTrunc(r, llvm::FixedVectorType::get(elem_type(to), lanes_)));
  return true;
}

VVal ExprEmitter::emit_cast(const Expr &e) {
  ExprP x = strip_saturated_clamp(e.a[0], e.type);
  if (VVal r; rounded_int_cast(x, e.type, &r)) return r;
  // AArch64 converts with rounding to nearest even in one instruction
  // (fcvtns), so round-then-convert need not round first.
  bool round_first = false;
  if (x->op == EOp::Round && x->type == DType::F32 && !dtype_is_float(e.type) && lanes_ % 4 == 0 &&
      t_.arch == TINYRT_ARCH_AARCH64 && e.type != DType::Bool && (dtype_bytes(e.type) < 4 || e.type == DType::I32)) {
    round_first = true;
    x = x->a[0];
  }
  VVal v = emit(x);
  DType from = x->type, to = e.type;
  bool vecd = v.kind == VVal::Vector || v.kind == VVal::Affine;
  Value *xv = vecd ? vec(v) : v.v;
  if (round_first && !vecd) xv = math_.round_even(xv);  // the fcvtns path below is for vectors
  Type *tt = elem_type(to);
  if (vecd && lanes_ > 1) tt = llvm::FixedVectorType::get(tt, lanes_);
  Value *r;
  if (from == to) {
    r = xv;
  } else if (to == DType::Bool) {
    r = dtype_is_float(from) ? b_.CreateFCmpUNE(xv, llvm::Constant::getNullValue(xv->getType()))
                             : b_.CreateICmpNE(xv, llvm::Constant::getNullValue(xv->getType()));
  } else if (dtype_is_float(from) && dtype_is_float(to)) {
    r = b_.CreateFPCast(xv, tt);
    if (dtype_is_half(to)) r = widen(narrow(r, to), to);  // round to 16 bits
  } else if (dtype_is_float(from)) {
    // Saturating conversions: out-of-range floats and NaN never produce poison.
    auto id = dtype_is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    int bits = dtype_bytes(to) * 8;
    bool sg = dtype_is_signed(to);
    if (vecd && lanes_ % 4 == 0 && (bits < 32 || (bits == 32 && sg)) && from == DType::F32 &&
        t_.arch == TINYRT_ARCH_AARCH64) {
      // AArch64's fcvtzs saturates and turns NaN into 0: exactly
      // fptosi.sat to int32; narrower types clamp in the integer domain.
      // One instruction per 4 lanes.
      Type *t32 = llvm::FixedVectorType::get(b_.getInt32Ty(), lanes_);
      auto *v4f = llvm::FixedVectorType::get(b_.getFloatTy(), 4);
      auto *v4i = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
      r = per_part(b_, xv, 4, [&](Value *xc) {
        return b_.CreateIntrinsic(
            round_first ? llvm::Intrinsic::aarch64_neon_fcvtns : llvm::Intrinsic::aarch64_neon_fcvtzs, {v4i, v4f},
            {xc});
      });
      if (bits < 32) {
        int64_t lo = sg ? -(int64_t(1) << (bits - 1)) : 0,
                hi = sg ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
        r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, r, llvm::ConstantInt::get(t32, (uint64_t)lo));
        r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, r, llvm::ConstantInt::get(t32, (uint64_t)hi));
        r = b_.CreateTrunc(r, tt);
      }
    } else if (vecd && lanes_ > 1 && to != DType::Bool && (bits < 32 || (bits == 32 && sg)) && from == DType::F32) {
      // LLVM 14 scalarizes vector fptosi/fptoui.sat: clamp in float (NaN
      // to 0) and convert in range instead. Same results.
      double lo = sg ? -std::ldexp(1.0, bits - 1) : 0.0;
      double hi = bits == 32 ? 2147483520.0 : (sg ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1);
      Type *ft = xv->getType();
      Value *c = b_.CreateSelect(b_.CreateFCmpUNO(xv, xv), llvm::Constant::getNullValue(ft), xv);
      Value *flo = llvm::ConstantFP::get(ft, lo), *fhi = llvm::ConstantFP::get(ft, hi);
      c = b_.CreateSelect(b_.CreateFCmpOLT(c, flo), flo, c);  // compares: armv7 has no vector maxnum
      c = b_.CreateSelect(b_.CreateFCmpOGT(c, fhi), fhi, c);
      Type *t32 = llvm::FixedVectorType::get(b_.getInt32Ty(), lanes_);
      r = b_.CreateFPToSI(c, t32);
      if (bits < 32)
        r = b_.CreateTrunc(r, tt);
      else
        r = b_.CreateSelect(b_.CreateFCmpOGE(xv, llvm::ConstantFP::get(ft, 2147483648.0)),
                            llvm::ConstantInt::get(t32, 2147483647), r);
    } else {
      r = b_.CreateIntrinsic(id, {tt, xv->getType()}, {xv});
    }
  } else if (dtype_is_float(to)) {
    r = (dtype_is_signed(from) && from != DType::Bool) ? b_.CreateSIToFP(xv, tt) : b_.CreateUIToFP(xv, tt);
    if (dtype_is_half(to)) r = widen(narrow(r, to), to);
  } else {
    r = b_.CreateIntCast(xv, tt, dtype_is_signed(from) && from != DType::Bool);
  }
  if (!vecd) return uniform(r);
  return vector(r);
}

Value *ExprEmitter::float_unary(EOp op, Value *x, DType t) {
  // The approximations are written for float32; float64 goes through them.
  bool dbl = t == DType::F64;
  auto f32 = [&](Value *v) {
    return dbl ? b_.CreateFPTrunc(v, lanes_ > 1 && v->getType()->isVectorTy()
                                         ? (Type *)llvm::FixedVectorType::get(b_.getFloatTy(), lanes_)
                                         : b_.getFloatTy())
               : v;
  };
  auto back = [&](Value *v) { return dbl ? b_.CreateFPExt(v, x->getType()) : v; };
  switch (op) {
    case EOp::Neg: return b_.CreateFNeg(x);
    case EOp::Abs: return math_.abs(x);
    case EOp::Sqrt: return math_.sqrt(x);
    case EOp::Recip: return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), x);
    case EOp::Exp: return back(math_.exp(f32(x)));
    case EOp::Log: return back(math_.log(f32(x)));
    case EOp::Tanh: return back(math_.tanh(f32(x)));
    case EOp::Sigmoid: return back(math_.sigmoid(f32(x)));
    case EOp::Erf: return back(math_.erf(f32(x)));
    case EOp::Floor: return back(math_.floor(f32(x)));
    case EOp::Ceil: return back(math_.ceil(f32(x)));
    case EOp::Round: return back(math_.round_even(f32(x)));
    case EOp::Sin: return back(math_.sin(f32(x)));
    case EOp::Cos: return back(math_.cos(f32(x)));
    case EOp::Tan: return back(math_.tan(f32(x)));
    case EOp::Atan: return back(math_.atan(f32(x)));
    case EOp::ExpNeg: return back(math_.exp_neg_clamped(f32(x)));
    default: fail_internal(std::string("float unary ") + eop_name(op));
  }
}

VVal ExprEmitter::emit_unary(const Expr &e) {
  VVal v = emit(e.a[0]);
  DType t = e.a[0]->type;
  bool vecd = v.kind != VVal::Uniform;
  Value *x = vecd ? vec(v) : v.v;
  Value *r;
  if (dtype_is_float(t)) {
    r = float_unary(e.op, x, t);
  } else if (e.op == EOp::Not) {
    r = b_.CreateNot(x);
  } else if (e.op == EOp::Neg) {
    r = b_.CreateNeg(x);
  } else if (e.op == EOp::Abs) {
    r = dtype_is_signed(t)
            ? b_.CreateSelect(b_.CreateICmpSLT(x, llvm::Constant::getNullValue(x->getType())), b_.CreateNeg(x), x)
            : x;
  } else {
    fail_unsupported(std::string("op ") + eop_name(e.op) + " on " + dtype_name(t));
  }
  return vecd ? vector(r) : uniform(r);
}

Value *ExprEmitter::safe_int_div(EOp op, DType t, Value *a, Value *b) {
  // Integer division by zero (and INT_MIN / -1) traps on x86: divide by 1
  // in those lanes instead and return 0 (division by zero is undefined in
  // ONNX; we only promise not to crash).
  Type *ty = b->getType();
  Value *zero = llvm::Constant::getNullValue(ty);
  Value *one = llvm::ConstantInt::get(ty, 1);
  Value *isz = b_.CreateICmpEQ(b, zero);
  bool s = dtype_is_signed(t);
  Value *bad = isz;
  if (s) bad = b_.CreateOr(bad, b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty)));
  if (mask_ && ty->isVectorTy()) bad = b_.CreateOr(bad, b_.CreateNot(mask_));
  Value *d = b_.CreateSelect(bad, one, b);
  Value *r = op == EOp::Div ? (s ? b_.CreateSDiv(a, d) : b_.CreateUDiv(a, d))
                            : (s ? b_.CreateSRem(a, d) : b_.CreateURem(a, d));
  if (s) {  // x / -1 = -x, x % -1 = 0
    Value *m1 = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty));
    r = b_.CreateSelect(m1, op == EOp::Div ? b_.CreateNeg(a) : zero, r);
  }
  return b_.CreateSelect(isz, zero, r);
}

// a^b modulo 2^w for w-bit integers (lanes or a scalar), as ir/interp.cpp
// computes it: repeated squaring over all w bits of b, straight-line (the
// lanes' exponents differ); a negative exponent of a signed type gives
// 1 / a^|b| truncated toward zero: 1 for a = 1, +-1 for a = -1, else 0.
Value *ExprEmitter::int_pow(Value *a, Value *b, bool is_signed) {
  Type *ty = a->getType();
  const unsigned w = ty->getScalarSizeInBits();
  Value *zero = llvm::Constant::getNullValue(ty), *one = llvm::ConstantInt::get(ty, 1);
  Value *r = one, *base = a, *e = b;
  for (unsigned k = 0; k < w; ++k) {
    Value *bit = b_.CreateICmpNE(b_.CreateAnd(e, one), zero);
    r = b_.CreateSelect(bit, b_.CreateMul(r, base), r);
    if (k + 1 < w) {
      base = b_.CreateMul(base, base);
      e = b_.CreateLShr(e, one);
    }
  }
  if (!is_signed) return r;
  Value *m1 = llvm::Constant::getAllOnesValue(ty);
  Value *odd = b_.CreateICmpNE(b_.CreateAnd(b, one), zero);
  Value *recip = b_.CreateSelect(b_.CreateICmpEQ(a, one), one,
                                 b_.CreateSelect(b_.CreateICmpEQ(a, m1), b_.CreateSelect(odd, m1, one), zero));
  return b_.CreateSelect(b_.CreateICmpSLT(b, zero), recip, r);
}

Value *ExprEmitter::scalar_or_vec_op(EOp op, DType t, Value *a, Value *b, const Expr *bexpr) {
  if (dtype_is_float(t)) {
    switch (op) {
      case EOp::Add: return b_.CreateFAdd(a, b);
      case EOp::Sub: return b_.CreateFSub(a, b);
      case EOp::Mul: return b_.CreateFMul(a, b);
      case EOp::Div: return b_.CreateFDiv(a, b);
      case EOp::Rem: {
        // x - trunc(x / y) * y, for float in double: exact (as C's fmod)
        // while the quotient is below 2^24, where it has room for the
        // product; in float it was off by an ulp once y had a long mantissa.
        Type *ty = a->getType();
        bool wide = ty->getScalarType()->isFloatTy();
        Type *dt = ty->isVectorTy() ? (Type *)llvm::VectorType::get(b_.getDoubleTy(), llvm::cast<llvm::VectorType>(ty))
                                    : b_.getDoubleTy();
        Value *aw = wide ? b_.CreateFPExt(a, dt) : a, *bw = wide ? b_.CreateFPExt(b, dt) : b;
        Value *tq = math_.trunc(b_.CreateFDiv(aw, bw));
        Value *diff = b_.CreateFSub(aw, b_.CreateFMul(tq, bw));
        if (wide) diff = b_.CreateFPTrunc(diff, ty);
        // The result has x's sign, zero included (fmod(-0, y) = -0).
        Value *r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, diff, a);
        // fmod(x, +-inf) = x for finite x (the product above is 0 * inf = NaN).
        auto is_inf = [&](Value *v) {
          return b_.CreateOr(b_.CreateFCmpOEQ(v, llvm::ConstantFP::getInfinity(v->getType(), false)),
                             b_.CreateFCmpOEQ(v, llvm::ConstantFP::getInfinity(v->getType(), true)));
        };
        return b_.CreateSelect(b_.CreateAnd(is_inf(b), b_.CreateNot(is_inf(a))), a, r);
      }
      case EOp::Max:
      case EOp::Min: {
        // NaN-propagating. With a constant (non-NaN) second operand one
        // unordered compare suffices.
        // (NEON: one fmax or vmax; Target::vector_minmax.)
        bool mx = op == EOp::Max;
        bool constant = bexpr && bexpr->op == EOp::Const && !std::isnan(bexpr->fval);
        if (a->getType()->isVectorTy() && t == DType::F32 &&  // (ARMv7 has no double vmax)
            (t_.vector_minmax == Target::MinMax::All || (t_.vector_minmax == Target::MinMax::Varying && !constant)))
          return b_.CreateBinaryIntrinsic(mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, b);
        if (constant) return b_.CreateSelect(mx ? b_.CreateFCmpUGT(a, b) : b_.CreateFCmpULT(a, b), a, b);
        Value *gt = mx ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b);
        return b_.CreateSelect(b_.CreateOr(gt, b_.CreateFCmpUNO(a, a)), a, b);
      }
      case EOp::Pow: {
        if (t == DType::F64) {
          Type *ft = a->getType()->isVectorTy() ? (Type *)llvm::FixedVectorType::get(b_.getFloatTy(), lanes_)
                                                : b_.getFloatTy();
          return b_.CreateFPExt(math_.pow(b_.CreateFPTrunc(a, ft), b_.CreateFPTrunc(b, ft)), a->getType());
        }
        return math_.pow(a, b);
      }
      case EOp::Eq: return b_.CreateFCmpOEQ(a, b);
      case EOp::Ne: return b_.CreateFCmpUNE(a, b);
      case EOp::Lt: return b_.CreateFCmpOLT(a, b);
      case EOp::Le: return b_.CreateFCmpOLE(a, b);
      case EOp::Gt: return b_.CreateFCmpOGT(a, b);
      case EOp::Ge: return b_.CreateFCmpOGE(a, b);
      default: break;
    }
    fail_internal(std::string("float binary ") + eop_name(op));
  }
  bool s = dtype_is_signed(t);
  switch (op) {
    case EOp::Add: return b_.CreateAdd(a, b);
    case EOp::Sub: return b_.CreateSub(a, b);
    case EOp::Mul: return b_.CreateMul(a, b);
    case EOp::Div:
    case EOp::Rem:
      if (bexpr && bexpr->op == EOp::Const && bexpr->ival > 0)
        return op == EOp::Div ? (s ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b))
                              : (s ? b_.CreateSRem(a, b) : b_.CreateURem(a, b));
      return safe_int_div(op, t, a, b);
    case EOp::Max: return b_.CreateSelect(s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
    case EOp::Min: return b_.CreateSelect(s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
    case EOp::Pow: return int_pow(a, b, s);
    case EOp::And: return b_.CreateAnd(a, b);
    case EOp::Or: return b_.CreateOr(a, b);
    case EOp::Xor: return b_.CreateXor(a, b);
    case EOp::Shl:
    case EOp::Shr: {
      // Shifts by the width or more give 0 (LLVM would make them poison).
      Type *ty = a->getType();
      unsigned bits = ty->getScalarSizeInBits();
      Value *big = b_.CreateICmpUGE(b, llvm::ConstantInt::get(ty, bits));
      Value *amt = b_.CreateSelect(big, llvm::Constant::getNullValue(ty), b);
      Value *r = op == EOp::Shl ? b_.CreateShl(a, amt) : (s ? b_.CreateAShr(a, amt) : b_.CreateLShr(a, amt));
      return b_.CreateSelect(big, llvm::Constant::getNullValue(ty), r);
    }
    case EOp::Eq: return b_.CreateICmpEQ(a, b);
    case EOp::Ne: return b_.CreateICmpNE(a, b);
    case EOp::Lt: return s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case EOp::Le: return s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case EOp::Gt: return s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case EOp::Ge: return s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    default: break;
  }
  fail_unsupported(std::string("op ") + eop_name(op) + " on " + dtype_name(t));
}

VVal ExprEmitter::emit_binary(EOp op, DType t, const VVal &a, const VVal &b, const Expr *bexpr) {
  if (a.kind == VVal::Uniform && b.kind == VVal::Uniform) return uniform(scalar_or_vec_op(op, t, a.v, b.v, bexpr));
  if (t == kIndexType && a.kind != VVal::Vector && b.kind != VVal::Vector) {
    if (op == EOp::Add) return add(a, b);
    if (op == EOp::Sub && b.kind == VVal::Uniform) return affine(b_.CreateSub(a.v, b.v), a.stride);
    if (op == EOp::Sub) return affine(b_.CreateSub(a.v, b.v), a.stride - b.stride);
    if (op == EOp::Mul && bexpr && bexpr->op == EOp::Const && a.kind == VVal::Affine) return mul_const(a, bexpr->ival);
  }
  return vector(scalar_or_vec_op(op, t, vec(a), vec(b), bexpr));
}

VVal ExprEmitter::emit_select(const Expr &e) {
  VVal c = emit(e.a[0]);
  bool guard = needs_guard(e.a[1]) || needs_guard(e.a[2]);
  if (!guard) {
    VVal a = emit(e.a[1]), b = emit(e.a[2]);
    if (c.kind == VVal::Uniform && a.kind == VVal::Uniform && b.kind == VVal::Uniform)
      return uniform(b_.CreateSelect(c.v, a.v, b.v));
    if (c.kind == VVal::Uniform) return vector(b_.CreateSelect(c.v, vec(a), vec(b)));
    return vector(b_.CreateSelect(vec(c), vec(a), vec(b)));
  }
  if (c.kind == VVal::Uniform) {
    // A real branch: the arm not taken never runs (its loads may be invalid).
    llvm::Function *f = b_.GetInsertBlock()->getParent();
    auto &C = b_.getContext();
    auto *then_bb = llvm::BasicBlock::Create(C, "sel.then", f);
    auto *else_bb = llvm::BasicBlock::Create(C, "sel.else", f);
    auto *merge_bb = llvm::BasicBlock::Create(C, "sel.merge", f);
    b_.CreateCondBr(c.v, then_bb, else_bb);
    bool vary = varying(e.a[1]) || varying(e.a[2]);
    auto arm = [&](llvm::BasicBlock *bb, const ExprP &x) {
      b_.SetInsertPoint(bb);
      push_scope();
      ++guarded_;
      VVal v = emit(x);
      --guarded_;
      Value *r = vary ? vec(v) : v.v;
      pop_scope();
      llvm::BasicBlock *end = b_.GetInsertBlock();
      b_.CreateBr(merge_bb);
      return std::make_pair(r, end);
    };
    auto ta = arm(then_bb, e.a[1]);
    auto ea = arm(else_bb, e.a[2]);
    b_.SetInsertPoint(merge_bb);
    llvm::PHINode *phi = b_.CreatePHI(ta.first->getType(), 2);
    phi->addIncoming(ta.first, ta.second);
    phi->addIncoming(ea.first, ea.second);
    return vary ? vector(phi) : uniform(phi);
  }
  // Lane-varying condition: evaluate both arms under complementary masks.
  Value *cv = vec(c);
  Value *saved = mask_;
  Value *m_then = saved ? b_.CreateAnd(saved, cv) : cv;
  Value *m_else = saved ? b_.CreateAnd(saved, b_.CreateNot(cv)) : b_.CreateNot(cv);
  mask_ = m_then;
  push_scope();
  Value *av = vec(emit(e.a[1]));
  pop_scope();
  mask_ = m_else;
  push_scope();
  Value *bv = vec(emit(e.a[2]));
  pop_scope();
  mask_ = saved;
  return vector(b_.CreateSelect(cv, av, bv));
}

VVal ExprEmitter::emit_reduce(const Expr &e) {
  DType t = e.type;
  double init = reduce_init(e.rk, t);
  for (auto &rv : e.rvars) bind(rv.id, uniform(b_.getInt32(0)));
  bool vary = varying(e.a[0]);
  Value *init_v = const_of(t, init, reduce_init_int(e.rk, t), vary);  // exact for INT64_MAX, UINT64_MAX
  for (auto &rv : e.rvars)
    if (rv.extent == 0) return vary ? vector(init_v) : uniform(init_v);
  // Run-time extents before the loops: an inner one emitted inside an
  // outer loop would be cached for code after it that it does not dominate.
  for (auto &rv : e.rvars)
    if (rv.n) emit(rv.n);
  // A reduction with the same value in every lane (the output computed one
  // element at a time) runs its innermost variable `lanes_` at a time.
  bool inner_vector = !vary && vector_reductions_ && lanes_ > 1 && t == DType::F32 && e.rvars.back().extent >= lanes_;
  // A float Max/Min of vectors where the target's max returns an operand
  // on NaN (x86 maxps/minps): the accumulator takes that one instruction
  // (a NaN term may be lost from it) and a flag collects the terms' NaNs
  // (an unordered compare and an or), applied once at the end, instead
  // of two compares, an or and a blend per term. The flag: bits in mask
  // registers (AVX-512), else compare results as 32-bit lanes, one
  // register at a time through the compare intrinsic (an i1 vector, or
  // sign-extended compares, LLVM narrows to packed bytes when the vector
  // spans two registers or more: audio_conv1d's pools 1.3x slower).
  bool nan_flag = vary && t == DType::F32 && lanes_ > 1 && t_.vector_minmax == Target::MinMax::Select &&
                  (t_.mask_registers || lanes_ % 8 == 0) && (e.rk == ReduceKind::Max || e.rk == ReduceKind::Min);
  Values st = {init_v};
  llvm::Type *flag_t = llvm::FixedVectorType::get(t_.mask_registers ? b_.getInt1Ty() : b_.getInt32Ty(), lanes_);
  if (nan_flag) st.push_back(llvm::Constant::getNullValue(flag_t));
  st = reduce_loops(e, 0, st, vary, inner_vector);
  Value *r = st[0];
  if (nan_flag && t_.mask_registers) {
    r = b_.CreateSelect(st[1], llvm::ConstantFP::getNaN(r->getType()), r);
  } else if (nan_flag) {  // all-ones lanes: or-ed into the result, a NaN
    llvm::Type *vi = llvm::FixedVectorType::get(b_.getInt32Ty(), lanes_);
    r = b_.CreateBitCast(b_.CreateOr(b_.CreateBitCast(r, vi), st[1]), r->getType());
  }
  for (auto &rv : e.rvars) vars_.erase(rv.id);
  return vary ? vector(r) : uniform(r);
}

// x's NaN lanes as type `flag_t` (emit_reduce's NaN flag): an i1 vector
// (mask registers), or all-ones 32-bit lanes from vcmpunordps per 8-lane
// register.
Value *ExprEmitter::nan_lanes(Value *x, llvm::Type *flag_t) {
  if (t_.mask_registers) return b_.CreateFCmpUNO(x, x);
  const int n = (int)llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  Values parts;
  for (int i = 0; i < n; i += 8) {
    std::vector<int> pick;
    for (int j = 0; j < 8; ++j) pick.push_back(i + j);
    Value *xi = n == 8 ? x : b_.CreateShuffleVector(x, pick);
    parts.push_back(b_.CreateIntrinsic(llvm::Intrinsic::x86_avx_cmp_ps_256, {}, {xi, xi, b_.getInt8(3)}));  // UNORD_Q
  }
  return b_.CreateBitCast(concat_vectors(b_, parts), flag_t);
}

// acc combined with the reduction's body at the current indices: a float
// sum of products as fused multiply-adds (one rounding per term instead of
// two, one instruction instead of two).
Values ExprEmitter::accumulate(const Expr &e, const Values &st, bool vary) {
  push_scope();
  Values r = st;
  Value *acc = st[0];
  const Expr &body = *e.a[0];
  if (e.rk == ReduceKind::Sum && dtype_is_float(e.type) && body.op == EOp::Mul && body.type == e.type) {
    VVal x = emit(body.a[0]), y = emit(body.a[1]);
    Value *xv = vary ? vec(x) : x.v, *yv = vary ? vec(y) : y.v;
    r[0] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {acc->getType()}, {xv, yv, acc});
  } else if (st.size() == 2) {  // NaN flag (emit_reduce): acc > x ? acc : x is one maxps
    Value *x = vec(emit(e.a[0]));
    Value *keep = e.rk == ReduceKind::Max ? b_.CreateFCmpOGT(acc, x) : b_.CreateFCmpOLT(acc, x);
    r[0] = b_.CreateSelect(keep, acc, x);
    r[1] = b_.CreateOr(st[1], nan_lanes(x, st[1]->getType()));
  } else {
    VVal v = emit(e.a[0]);
    r[0] = scalar_or_vec_op(reduce_combiner(e.rk), e.type, acc, vary ? vec(v) : v.v, nullptr);
  }
  pop_scope();
  return r;
}

// The loops over the reduction variables from `level` on, each a loop of
// its own. With `inner_vector` the innermost one runs as vectors of
// consecutive indices (loads contiguous along it are vector loads) in a
// vector accumulator, folded into acc at the end (pairwise adds, or a
// shuffle tree for the other kinds), then its leftover indices one at a
// time: the same operations in another order, so a float sum rounds
// differently from the sequential one (as any blocked reduction does).
Values ExprEmitter::reduce_loops(const Expr &e, size_t level, const Values &st, bool vary, bool inner_vector) {
  if (level == e.rvars.size()) return accumulate(e, st, vary);
  Value *acc = st[0];
  const RVar &rv = e.rvars[level];
  int64_t main = 0;
  Value *n = rv.n ? emit(rv.n).v : nullptr;  // a run-time extent
  Value *main_v = nullptr;
  if (inner_vector && level + 1 == e.rvars.size()) {
    main = rv.extent / lanes_ * lanes_;
    Value *vinit = b_.CreateVectorSplat(lanes_, const_of(e.type, reduce_init(e.rk, e.type), 0, false));
    auto body = [&](Value *k, const Values &a) -> Values {
      bind(rv.id, affine(b_.CreateMul(k, b_.getInt32(lanes_)), 1));
      return accumulate(e, {a[0]}, true);
    };
    Value *v;
    if (n) {
      Value *vectors = b_.CreateUDiv(n, b_.getInt32(lanes_));
      v = carried_loop(b_, b_.getInt32(0), vectors, {vinit}, body, "red.vec")[0];
      main_v = b_.CreateMul(vectors, b_.getInt32(lanes_));
    } else {
      v = carried_loop(b_, 0, main / lanes_, 1, {vinit}, body, "red.vec")[0];
    }
    EOp comb = reduce_combiner(e.rk);
    Value *folded;
    if (comb == EOp::Add) {  // any order (as above): pairwise adds (faddp), shuffles and adds
      llvm::FastMathFlags fm;
      fm.setAllowReassoc();
      llvm::CallInst *sum = b_.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(acc->getType()), v);
      sum->setFastMathFlags(fm);
      folded = sum;
    } else {
      for (int half = lanes_ / 2; half >= 1; half /= 2) {
        std::vector<int> m;
        for (int i = 0; i < lanes_; ++i) m.push_back(i + half < lanes_ ? i + half : i);
        v = scalar_or_vec_op(comb, e.type, v, b_.CreateShuffleVector(v, m), nullptr);
      }
      folded = b_.CreateExtractElement(v, (uint64_t)0);
    }
    acc = scalar_or_vec_op(comb, e.type, acc, folded, nullptr);
  }
  Values cur = st;
  cur[0] = acc;
  auto step = [&](Value *i, const Values &a) -> Values {
    bind(rv.id, uniform(i));
    return reduce_loops(e, level + 1, a, vary, inner_vector);
  };
  if (n) return carried_loop(b_, main_v ? main_v : b_.getInt32(0), n, cur, step, "red.dyn");
  return carried_loop(b_, main, rv.extent, 1, cur, step, "red.loop");
}

}  // namespace tinyrt
