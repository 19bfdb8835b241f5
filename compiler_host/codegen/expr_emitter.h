// expr_emitter.h — lowers an element expression to LLVM IR for `lanes`
// consecutive elements along one output axis at once.
//
// Values are tracked as uniform (one scalar for all lanes), affine
// (scalar base + lane * constant stride, for index arithmetic) or vector.
// A load whose flattened offset is affine with stride 1 becomes one vector
// load; uniform offsets become one scalar load; anything else a gather.
// Selects whose arms touch memory are emitted as branches when the
// condition is uniform and as masked evaluation when it varies by lane, so
// no lane ever reads outside its tensor. With lanes == 1 everything is
// scalar.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "codegen/math_emitter.h"
#include "ir/expr.h"

namespace tinyrt {

struct Target;

struct VVal {
  enum Kind { Uniform, Affine, Vector } kind = Uniform;
  llvm::Value *v = nullptr;  // scalar for Uniform/Affine, <lanes x T> for Vector
  int64_t stride = 0;        // Affine: lane i holds v + i * stride
};

// How a kernel input (or output) is addressed.
struct SlotRef {
  llvm::Value *base = nullptr;   // i8* to the element at logical index (0, ..., 0)
  std::vector<int64_t> strides;  // in elements, per logical axis
  DType type = DType::F32;
  int64_t numel = -1;  // elements of the tensor
  int64_t span = -1;   // elements from the first addressed one to the last, + 1 (strided views: > numel)
};

// The vectors (all of one type) one after the other; a count that is not
// a power of two is padded with undefined vectors at the end.
llvm::Value *concat_vectors(llvm::IRBuilder<> &b, std::vector<llvm::Value *> parts);

// The byte x when `load` reads a table at index int32(x) (x uint8) or
// int32(x) + 128 (x int8, *flip set); nullptr otherwise.
ExprP byte_table_index(const Expr &load, bool *flip);

class ExprEmitter {
 public:
  ExprEmitter(llvm::IRBuilder<> &b, const Target &t, int lanes);

  void set_slots(std::vector<SlotRef> slots) { slots_ = std::move(slots); }
  // With one lane every value is uniform (selects then branch, loads are scalar).
  void bind(int var_id, VVal v) {
    if (lanes_ == 1) v.kind = VVal::Uniform;
    vars_[var_id] = v;
  }
  void set_acc(VVal v) { acc_ = v; }
  // Where the run-time extents (Dim leaves) come from: extent `sym` as an
  // i32 (the kernel loads them from the arena once, at its entry).
  void set_dims(std::function<llvm::Value *(int sym)> f) { dims_ = std::move(f); }
  // Active lanes (<lanes x i1>) for a partial vector; nullptr = all lanes.
  void set_mask(llvm::Value *m) { mask_ = m; }
  void clear_cache() { cache_.assign(1, {}); }
  // Reductions whose value is the same in every lane (the output computed
  // one element at a time) run their innermost variable `lanes` at a time
  // (reduce_loops); the loop emitter asks for it where the
  // reduced tensors are contiguous along that variable but not along the
  // output's row.
  void set_vector_reductions(bool on) { vector_reductions_ = on; }

  VVal emit(const ExprP &e);
  // The value as a <lanes x T> vector (a scalar when lanes == 1).
  llvm::Value *vec(const VVal &v);
  // Stores `value` (of type t) to the element(s) at `idx` of `out`.
  void store(const SlotRef &out, const std::vector<VVal> &idx, const VVal &value, DType t);

  llvm::Type *elem_type(DType t) const;  // in registers (bool = i1)
  llvm::Type *mem_type(DType t) const;   // in memory (bool = i8)
  llvm::Type *vec_type(llvm::Type *elem) const;
  // Memory representation <-> registers (bool as i1, 16-bit floats as float).
  llvm::Value *widen(llvm::Value *v, DType t);
  llvm::Value *narrow(llvm::Value *v, DType t);
  llvm::Type *vec_type_like(llvm::Value *v, llvm::Type *elem) const;
  int lanes() const { return lanes_; }
  llvm::IRBuilder<> &builder() { return b_; }
  MathEmitter &math() { return math_; }

  // Helpers on VVal shared with the scheduled emitters.
  VVal uniform(llvm::Value *v) const { return {VVal::Uniform, v, 0}; }
  VVal affine(llvm::Value *base, int64_t stride) const { return {VVal::Affine, base, stride}; }
  VVal vector(llvm::Value *v) const { return {VVal::Vector, v, 0}; }
  VVal add(const VVal &a, const VVal &b);
  VVal mul_const(const VVal &a, int64_t c);
  // Pointer (typed) to element `offset` (elements) of a slot.
  llvm::Value *elem_ptr(const SlotRef &s, llvm::Value *offset);
  // An access's element offset, sum over its indices times the slot's
  // strides: `fixed`, the terms that are the same in every lane, and
  // `varying`, the others (the vectorized index; for a vector loop it is
  // the counter times the lanes, a constant once LLVM unrolls the loop).
  // The pointer of a contiguous access is formed as (base + fixed) +
  // varying, so that each unrolled copy's constant lands in the load's
  // or store's immediate offset instead of a fresh address computation
  // (a sum of 32-bit offsets that might wrap cannot be split after its
  // sign extension to a 64-bit address). On by default where vector
  // accesses take an immediate offset (Target::vector_imm_offsets), and in
  // the loop emitter everywhere (set_split_offsets). On ARMv7 the scheduled
  // families' epilogues keep the single sum: they store a tile's pixels at
  // constant strides from one base, which ARMv7 walks by post-increment
  // (measured under qemu on mobilenet_v2: split, its epilogues take 1.0 M
  // more instructions on ARMv7 and 2.2 M fewer on AArch64).
  struct SplitOffset {
    VVal all, fixed, varying;
  };
  SplitOffset split_offset(const SlotRef &s, const std::vector<VVal> &idx);
  void set_split_offsets(bool on) { split_offsets_ = on; }
  llvm::Value *split_ptr(const SlotRef &s, const SplitOffset &so);

 private:
  VVal emit_uncached(const Expr &e, const ExprP &ep);
  VVal emit_load(const Expr &e);
  llvm::Value *byte_table_lookup(llvm::Value *table, llvm::Value *x);
  VVal emit_cast(const Expr &e);
  // x86: a cast to an integer of at most 16 bits of round(y), round(y) + z
  // (z a zero point) or y, by cvtps2dq / cvttps2dq (round half to even as
  // Round, under the default MXCSR) and a saturating narrowing (packs);
  // false where the float path applies.
  bool rounded_int_cast(const ExprP &x, DType to, VVal *out);
  VVal emit_unary(const Expr &e);
  VVal emit_binary(EOp op, DType t, const VVal &a, const VVal &b, const Expr *bexpr);
  VVal emit_select(const Expr &e);
  VVal emit_reduce(const Expr &e);
  // The reduction's carried state: its accumulator and, for a float
  // Max/Min of vectors on x86 (nan_flag), whether a term was NaN.
  std::vector<llvm::Value *> reduce_loops(const Expr &e, size_t level, const std::vector<llvm::Value *> &st,
                                          bool varying, bool inner_vector);
  std::vector<llvm::Value *> accumulate(const Expr &e, const std::vector<llvm::Value *> &st, bool varying);
  llvm::Value *nan_lanes(llvm::Value *x, llvm::Type *flag_t);
  llvm::Value *scalar_or_vec_op(EOp op, DType t, llvm::Value *a, llvm::Value *b, const Expr *bexpr);
  llvm::Value *float_unary(EOp op, llvm::Value *x, DType t);
  llvm::Value *safe_int_div(EOp op, DType t, llvm::Value *a, llvm::Value *b);
  llvm::Value *int_pow(llvm::Value *a, llvm::Value *b, bool is_signed);
  llvm::Value *const_of(DType t, double f, int64_t i, bool vector);
  bool needs_guard(const ExprP &e);
  bool varying(const ExprP &e);
  llvm::Value *lane_iota() const;
  void push_scope() { cache_.emplace_back(); }
  void pop_scope() { cache_.pop_back(); }

  llvm::IRBuilder<> &b_;
  const Target &t_;
  int lanes_;
  MathEmitter math_;
  std::vector<SlotRef> slots_;
  std::map<int, VVal> vars_;
  VVal acc_;
  std::function<llvm::Value *(int)> dims_;
  bool vector_reductions_ = false;
  llvm::Value *mask_ = nullptr;
  bool split_offsets_;  // set_split_offsets
  int guarded_ = 0;     // inside the taken arm of a select's branch (its loads are valid only there)
  std::vector<std::unordered_map<const Expr *, VVal>> cache_;
  std::unordered_map<const Expr *, bool> guard_memo_;
};

}  // namespace tinyrt
