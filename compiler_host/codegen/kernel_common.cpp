// kernel_common.cpp — what every kernel family shares: the function
// prototype, value addressing, loops and branches, and the scheduled
// families' slots and epilogue.
#include "codegen/kernel_emitters.h"

#include <map>

#include <algorithm>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsARM.h>

namespace tinyrt {

llvm::Function *begin_kernel_function(EmitEnv &env, llvm::IRBuilder<> &b, const std::string &name) {
  auto &C = env.module.getContext();
  std::vector<llvm::Type *> params = {llvm::Type::getInt8PtrTy(C), llvm::Type::getInt32Ty(C),
                                      llvm::Type::getInt32Ty(C)};
  if (env.part_args) params.insert(params.end(), {llvm::Type::getInt32Ty(C), llvm::Type::getInt32Ty(C)});
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(C), params, false);
  auto *f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, env.module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  // Never turn loops into memset/memcpy calls: generated code calls nothing.
  f->addFnAttr("no-builtins");
  f->addFnAttr("target-cpu", env.target.cpu);
  f->addFnAttr("target-features", env.target.features);
  if (env.target.legal_vector_bits > 0)
    f->addFnAttr("min-legal-vector-width", std::to_string(env.target.legal_vector_bits));
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->getArg(0)->setName("arena");
  f->getArg(1)->setName("task_begin");
  f->getArg(2)->setName("task_end");
  b.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  return f;
}

llvm::Value *part_arg(EmitEnv &env, llvm::IRBuilder<> &b, int which, int64_t own, int64_t lo, int64_t hi) {
  if (!env.part_args) return b.getInt32((int32_t)own);
  llvm::Function *f = b.GetInsertBlock()->getParent();
  TINYRT_CHECK(f->arg_size() == 5, "a shared kernel's function without its part arguments");
  return clamp_i32(b, f->getArg((unsigned)(3 + which)), lo, hi);
}

SlotRef slot_for(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, int v) {
  const Program &p = env.program;
  const Storage &st = p.storage.at(v);
  SlotRef s;
  s.type = p.graph.v(v).dtype;
  s.strides = st.strides;
  s.numel = p.graph.v(v).numel();
  s.span = p.span_bytes(v) / dtype_bytes(s.type);
  switch (st.where) {
    case Storage::Where::Arena: s.base = b.CreateGEP(b.getInt8Ty(), arena, b.getInt64(st.offset)); break;
    case Storage::Where::Const: s.base = env.const_data(v); break;
    default: fail_internal("value '" + p.graph.v(v).name + "' has no storage");
  }
  return s;
}

void emit_counted_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end,
                       const std::function<void(llvm::Value *)> &body, const char *name) {
  auto &C = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(C, std::string(name) + ".body", f);
  auto *exit = llvm::BasicBlock::Create(C, std::string(name) + ".exit", f);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), header, exit);
  b.SetInsertPoint(header);
  llvm::PHINode *iv = b.CreatePHI(begin->getType(), 2, std::string(name) + ".i");
  iv->addIncoming(begin, pre);
  body(iv);
  // iv < end: iv + 1 never wraps (nsw lets scalar evolution count the trips).
  llvm::Value *next = b.CreateNSWAdd(iv, llvm::ConstantInt::get(begin->getType(), 1));
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, end), header, exit);
  b.SetInsertPoint(exit);
}

// Both carried loops: entered unconditionally, or only when `enter` holds
// (then the values after it are phis of init and the last iteration's);
// the counter steps by `step` while below `end`.
static Values carried(llvm::IRBuilder<> &b, llvm::Value *enter, llvm::Value *begin, int64_t step, llvm::Value *end,
                      const Values &init, const std::function<Values(llvm::Value *, const Values &)> &body,
                      const char *name) {
  auto &C = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(C, name, f);
  auto *exit = llvm::BasicBlock::Create(C, std::string(name) + ".exit", f);
  if (enter)
    b.CreateCondBr(enter, header, exit);
  else
    b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *iv = b.CreatePHI(b.getInt32Ty(), 2);
  iv->addIncoming(begin, pre);
  std::vector<llvm::PHINode *> phis;
  Values cur;
  for (llvm::Value *v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    cur.push_back(phis.back());
  }
  Values next = body(iv, cur);
  llvm::BasicBlock *latch = b.GetInsertBlock();
  llvm::Value *inext = b.CreateNSWAdd(iv, b.getInt32((int32_t)step));  // below end, a bound: never wraps
  iv->addIncoming(inext, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], latch);
  b.CreateCondBr(b.CreateICmpSLT(inext, end), header, exit);
  b.SetInsertPoint(exit);
  if (!enter) return next;
  Values out;
  for (size_t k = 0; k < init.size(); ++k) {
    llvm::PHINode *phi = b.CreatePHI(init[k]->getType(), 2);
    phi->addIncoming(init[k], pre);
    phi->addIncoming(next[k], latch);
    out.push_back(phi);
  }
  return out;
}

Values carried_loop(llvm::IRBuilder<> &b, int64_t begin, int64_t end, int64_t step, Values init,
                    const std::function<Values(llvm::Value *, const Values &)> &body, const char *name) {
  int64_t trips = end > begin ? (end - begin + step - 1) / step : 0;
  if (trips == 0) return init;
  if (trips == 1) return body(b.getInt32((int32_t)begin), init);
  return carried(b, nullptr, b.getInt32((int32_t)begin), step, b.getInt32((int32_t)(begin + trips * step)), init, body,
                 name);
}

void rolled_loop(llvm::IRBuilder<> &b, int64_t begin, int64_t end, const std::function<void(llvm::Value *)> &body,
                 const char *name) {
  if (end - begin <= 1) {
    if (end > begin) body(b.getInt32((int32_t)begin));
    return;
  }
  carried(
      b, nullptr, b.getInt32((int32_t)begin), 1, b.getInt32((int32_t)end), {},
      [&](llvm::Value *i, const Values &v) {
        body(i);
        return v;
      },
      name);
  // The latch: the exit block's only predecessor.
  llvm::BasicBlock *latch = b.GetInsertBlock()->getSinglePredecessor();
  auto &C = b.getContext();
  llvm::MDNode *off = llvm::MDNode::get(C, {llvm::MDString::get(C, "llvm.loop.unroll.disable")});
  llvm::TempMDTuple tmp = llvm::MDTuple::getTemporary(C, {});
  llvm::MDNode *loop = llvm::MDNode::getDistinct(C, {tmp.get(), off});
  loop->replaceOperandWith(0, loop);
  latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

Values carried_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end, Values init,
                    const std::function<Values(llvm::Value *, const Values &)> &body, const char *name) {
  return carried(b, b.CreateICmpSLT(begin, end), begin, 1, end, init, body, name);
}

void emit_branch(llvm::IRBuilder<> &b, llvm::Value *cond, const std::function<void()> &then_fn,
                 const std::function<void()> &else_fn, const char *name) {
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  auto &C = b.getContext();
  auto *tb = llvm::BasicBlock::Create(C, name, fn);
  auto *eb = llvm::BasicBlock::Create(C, std::string(name) + ".else", fn);
  auto *done = llvm::BasicBlock::Create(C, std::string(name) + ".done", fn);
  b.CreateCondBr(cond, tb, eb);
  b.SetInsertPoint(tb);
  then_fn();
  b.CreateBr(done);
  b.SetInsertPoint(eb);
  else_fn();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

llvm::Constant *lane_mask(llvm::IRBuilder<> &b, int L, int lanes) {
  std::vector<llvm::Constant *> m;
  for (int l = 0; l < L; ++l) m.push_back(b.getInt1(l < lanes));
  return llvm::ConstantVector::get(m);
}

llvm::Value *load_lanes(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty, llvm::Value *p, int lanes) {
  int L = (int)vty->getNumElements();
  llvm::Value *vp = b.CreateBitCast(p, vty->getPointerTo());
  llvm::Align align(vty->getElementType()->getScalarSizeInBits() / 8);
  if (lanes == L) return b.CreateAlignedLoad(vty, vp, align);
  return b.CreateMaskedLoad(vty, vp, align, lane_mask(b, L, lanes), llvm::Constant::getNullValue(vty));
}

llvm::Type *float_weight_type(llvm::IRBuilder<> &b, const Program &p, int v) {
  return p.graph.v(v).dtype == DType::F16 ? b.getHalfTy() : b.getFloatTy();
}

llvm::Value *load_float_weights(llvm::IRBuilder<> &b, const Target &t, llvm::Type *wel, llvm::Value *p, int L,
                                int lanes, bool aligned) {
  lanes = lanes > 0 ? lanes : L;
  auto *vf = llvm::FixedVectorType::get(b.getFloatTy(), (unsigned)L);
  if (t.half_widen_neon && wel->isHalfTy() && L == 4)  // vcvt.f32.f16 on 4 halves as 16-bit integers
    wel = b.getInt16Ty();
  auto *vty = llvm::FixedVectorType::get(wel, (unsigned)L);
  llvm::Value *v;
  if (aligned && lanes == L) {
    const unsigned bytes = (unsigned)L * wel->getPrimitiveSizeInBits() / 8;
    v = b.CreateAlignedLoad(vty, b.CreateBitCast(p, vty->getPointerTo()), llvm::Align(bytes));
  } else {
    v = load_lanes(b, vty, p, lanes);
  }
  if (wel->isFloatTy()) return v;
  if (wel->isIntegerTy(16)) return b.CreateIntrinsic(llvm::Intrinsic::arm_neon_vcvthf2fp, {}, {v});
  return b.CreateFPExt(v, vf);
}

// Integer vectors (int8 Winograd) take integer adds, and integral
// coefficients as multiplies.
static bool integer(llvm::Type *t) { return t->isIntOrIntVectorTy(); }
static llvm::Value *vadd(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y) {
  return integer(x->getType()) ? b.CreateAdd(x, y) : b.CreateFAdd(x, y);
}
static llvm::Value *vsub(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y) {
  return integer(x->getType()) ? b.CreateSub(x, y) : b.CreateFSub(x, y);
}

llvm::Value *linear_combination(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty, const std::vector<double> &c,
                                const std::vector<llvm::Value *> &v) {
  const bool ints = integer(vty);
  auto scaled = [&](double k, llvm::Value *x) -> llvm::Value * {
    if (!ints) return b.CreateFMul(llvm::ConstantFP::get(vty, k), x);
    TINYRT_CHECK(k == (double)(int64_t)k, "an integer transform with a fractional coefficient");
    return b.CreateMul(llvm::ConstantInt::get(vty, (uint64_t)(int64_t)k), x);
  };
  std::vector<size_t> order;
  for (size_t j = 0; j < v.size(); ++j)
    if (c[j] == 1) order.push_back(j);
  for (size_t j = 0; j < v.size(); ++j)
    if (c[j] != 0 && c[j] != 1) order.push_back(j);
  llvm::Value *acc = nullptr;
  for (size_t j : order) {
    const double cj = c[j];
    llvm::Value *x = v[j];
    if (!acc)
      acc = cj == 1 ? x : cj == -1 ? (ints ? b.CreateNeg(x) : b.CreateFNeg(x)) : scaled(cj, x);
    else if (cj == 1)
      acc = vadd(b, acc, x);
    else if (cj == -1)
      acc = vsub(b, acc, x);
    else if (ints)
      acc = b.CreateAdd(acc, scaled(cj, x));
    else
      acc = b.CreateIntrinsic(llvm::Intrinsic::fma, {vty}, {llvm::ConstantFP::get(vty, cj), x, acc});
  }
  return acc ? acc : llvm::Constant::getNullValue(vty);
}

// Operations linear_combination spends on the nonzero coefficients of c.
static int combination_cost(const std::vector<double> &c) {
  int terms = 0;
  bool unit = false;
  for (double x : c)
    if (x != 0) ++terms, unit |= x == 1 || x == -1;
  return terms == 0 ? 0 : terms - 1 + (unit ? 0 : 1);
}

// (kernel_emitters.h) Pairs of columns first, then pairs of rows.
std::vector<llvm::Value *> linear_transform(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty,
                                            const std::vector<double> &M, int rows,
                                            const std::vector<llvm::Value *> &v0) {
  std::vector<llvm::Value *> v = v0;
  const size_t cols = v0.size();
  std::vector<std::vector<double>> W((size_t)rows);
  for (int r = 0; r < rows; ++r)
    W[(size_t)r].assign(M.begin() + (long)r * (long)cols, M.begin() + (long)(r + 1) * (long)cols);
  for (size_t j = 0; j < cols; ++j)
    for (size_t k = j + 1; k < cols; ++k) {
      int same = 0, opposite = 0;
      bool pairs = true;
      for (auto &row : W) {
        if (row[j] == 0 && row[k] == 0) continue;
        if (row[j] == 0 || row[k] == 0)
          pairs = false;
        else if (row[j] == row[k])
          ++same;
        else if (row[j] == -row[k])
          ++opposite;
        else
          pairs = false;
      }
      if (!pairs || same + opposite <= (same > 0) + (opposite > 0)) continue;
      size_t s = v.size(), t = s + (same > 0);
      if (same) v.push_back(vadd(b, v[j], v[k]));
      if (opposite) v.push_back(vsub(b, v[j], v[k]));
      for (auto &row : W) {
        row.resize(v.size(), 0.0);
        if (row[j] != 0) row[row[j] == row[k] ? s : t] = row[j];
        row[j] = row[k] = 0;
      }
    }
  for (auto &row : W) row.resize(v.size(), 0.0);
  std::vector<llvm::Value *> out((size_t)rows, nullptr);
  for (int r = 0; r < rows; ++r)
    for (int q = r + 1; q < rows && !out[(size_t)r]; ++q) {
      if (out[(size_t)q]) continue;
      const auto &x = W[(size_t)r], &y = W[(size_t)q];
      std::vector<double> even(v.size(), 0.0), odd(v.size(), 0.0);
      bool split = true, has_even = false, has_odd = false;
      for (size_t j = 0; j < v.size() && split; ++j) {
        if (x[j] == 0 && y[j] == 0) continue;
        if (x[j] == y[j])
          even[j] = x[j], has_even = true;
        else if (x[j] == -y[j])
          odd[j] = x[j], has_odd = true;
        else
          split = false;
      }
      if (!split || !has_even || !has_odd ||
          combination_cost(even) + combination_cost(odd) + 2 >= combination_cost(x) + combination_cost(y))
        continue;
      llvm::Value *e = linear_combination(b, vty, even, v), *o = linear_combination(b, vty, odd, v);
      out[(size_t)r] = vadd(b, e, o);
      out[(size_t)q] = vsub(b, e, o);
    }
  for (int r = 0; r < rows; ++r)
    if (!out[(size_t)r]) out[(size_t)r] = linear_combination(b, vty, W[(size_t)r], v);
  return out;
}

void store_lanes(llvm::IRBuilder<> &b, llvm::Value *v, llvm::Value *p, int lanes) {
  auto *vty = llvm::cast<llvm::FixedVectorType>(v->getType());
  int L = (int)vty->getNumElements();
  llvm::Value *vp = b.CreateBitCast(p, vty->getPointerTo());
  llvm::Align align(vty->getElementType()->getScalarSizeInBits() / 8);
  if (lanes == L)
    b.CreateAlignedStore(v, vp, align);
  else
    b.CreateMaskedStore(v, vp, align, lane_mask(b, L, lanes));
}

llvm::Value *zero_floats(EmitEnv &env, llvm::IRBuilder<> &b, int64_t n, const std::string &name) {
  auto *zt = llvm::ArrayType::get(b.getFloatTy(), (uint64_t)std::max<int64_t>(n, 1));
  auto *z = new llvm::GlobalVariable(env.module, zt, true, llvm::GlobalValue::PrivateLinkage,
                                     llvm::Constant::getNullValue(zt), name + ".zero");
  z->setAlignment(llvm::Align(64));
  return b.CreateBitCast(z, b.getFloatTy()->getPointerTo());
}

llvm::Value *fill_bytes(EmitEnv &env, llvm::IRBuilder<> &b, int64_t n, uint8_t byte, const std::string &name) {
  auto *zt = llvm::ArrayType::get(b.getInt8Ty(), (uint64_t)std::max<int64_t>(n, 1));
  std::vector<uint8_t> data((size_t)std::max<int64_t>(n, 1), byte);
  auto *z = new llvm::GlobalVariable(env.module, zt, true, llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantDataArray::get(env.module.getContext(), data), name + ".pad");
  z->setAlignment(llvm::Align(64));
  return b.CreateBitCast(z, b.getInt8PtrTy());
}

llvm::Value *lane_mac(llvm::IRBuilder<> &b, const Target &t, llvm::Value *acc, llvm::Value *w, llvm::Value *x,
                      int lane) {
  llvm::Value *s = b.CreateShuffleVector(x, x, std::vector<int>(4, lane));
  if (t.gemm_lane_mac == Target::LaneMac::Fused)
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {w->getType()}, {s, w, acc});
  return b.CreateFAdd(acc, b.CreateFMul(w, s));
}

void for_channel_vectors(llvm::IRBuilder<> &b, int64_t channels, int L,
                         const std::function<void(llvm::Value *, int)> &fn) {
  emit_counted_loop(
      b, b.getInt32(0), b.getInt32((int32_t)(channels / L)),
      [&](llvm::Value *cv) { fn(b.CreateMul(cv, b.getInt32(L)), L); }, "cvec");
  if (channels % L) fn(b.getInt32((int32_t)(channels / L * L)), (int)(channels % L));
}

int64_t emit_row_block_tasks(llvm::IRBuilder<> &b, llvm::Function *f, int64_t rows,
                             const std::function<void(llvm::Value *, llvm::Value *)> &fn) {
  UnitBlocks blocks = split_units(rows, 64);
  emit_counted_loop(
      b, f->getArg(1), f->getArg(2),
      [&](llvm::Value *t) {
        auto r = block_range(b, t, blocks, rows);
        fn(r.first, r.second);
      },
      "task");
  return blocks.count;
}

UnitBlocks split_units(int64_t units, int64_t want) {
  int64_t n = std::max<int64_t>(1, std::min(units, want));
  int64_t per = std::max<int64_t>(1, (units + n - 1) / n);
  return {per, (units + per - 1) / per};
}

std::pair<llvm::Value *, llvm::Value *> block_range(llvm::IRBuilder<> &b, llvm::Value *blk, const UnitBlocks &u,
                                                    int64_t units) {
  llvm::Value *begin = b.CreateMul(blk, b.getInt32((int32_t)u.per_block));
  llvm::Value *end = b.CreateAdd(begin, b.getInt32((int32_t)u.per_block));
  end = b.CreateSelect(b.CreateICmpSLT(end, b.getInt32((int32_t)units)), end, b.getInt32((int32_t)units));
  return {begin, end};
}

RowUnits row_units(const GemmSpec &s, int mr, bool allow_runs) {
  int64_t rows = s.batch * s.out_h, per_row = (s.out_w + mr - 1) / mr;
  if (!allow_runs || rows >= kMinRowUnits || per_row == 1) return {false, rows};
  return {true, rows * per_row};
}

void for_unit_runs(llvm::IRBuilder<> &b, const GemmSpec &s, const RowUnits &u, llvm::Value *u0, llvm::Value *u1, int mr,
                   const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *, int)> &run) {
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };
  int64_t full = s.out_w / mr, rem = s.out_w % mr, per_row = u.runs ? full + (rem != 0) : 1, rows = s.batch * s.out_h;
  // The rows units [u0, u1) touch; a row of tile units runs from its
  // first to its last unit there.
  llvm::Value *row0 = u.runs ? b.CreateUDiv(u0, i32(per_row)) : u0;
  llvm::Value *row1 = u.runs ? b.CreateUDiv(b.CreateAdd(u1, i32(per_row - 1)), i32(per_row)) : u1;
  emit_counted_loop(
      b, row0, row1,
      [&](llvm::Value *ri) {
        llvm::Value *r = clamp_i32(b, ri, 0, rows - 1);  // u0 <= the units of rows [row0, row1) < u1 <= all units
        llvm::Value *n = b.CreateUDiv(r, i32(s.out_h));
        llvm::Value *oh = b.CreateURem(r, i32(s.out_h));
        llvm::Value *lo = i32(0), *hi = nullptr, *full_hi = i32(full);  // hi: the runs' end (units of runs only)
        if (u.runs) {
          llvm::Value *first = b.CreateMul(r, i32(per_row));
          lo = clamp_i32(b, b.CreateSub(u0, first), 0, per_row);
          hi = clamp_i32(b, b.CreateSub(u1, first), 0, per_row);
          full_hi = rem ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, hi, i32(full)) : hi;
        }
        emit_counted_loop(
            b, lo, full_hi,
            [&](llvm::Value *it) {
              // lo <= it < full_hi <= full: clamp_i32, for the bounds proof
              llvm::Value *itc = u.runs ? clamp_i32(b, it, 0, full - 1) : it;
              run(n, oh, b.CreateMul(itc, i32(mr)), mr);
            },
            "owtile");
        if (!rem) return;
        if (!u.runs) {
          run(n, oh, i32(full * mr), (int)rem);
          return;
        }
        emit_branch(
            b, b.CreateICmpEQ(hi, i32(per_row)), [&] { run(n, oh, i32(full * mr), (int)rem); }, [] {}, "owtail");
      },
      "row");
}

llvm::Value *clamp_i32(llvm::IRBuilder<> &b, llvm::Value *i, int64_t lo, int64_t hi) {
  llvm::Value *up = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, i, b.getInt32((int32_t)lo));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, up, b.getInt32((int32_t)std::max(lo, hi)));
}

std::map<int, llvm::Value *> load_dims(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena) {
  std::map<int, llvm::Value *> dims;
  const Graph &g = env.program.graph;
  for (size_t s = 0; s < g.syms.size(); ++s) {
    if (g.syms[s].def) continue;
    int64_t off = env.program.stats.sym_offsets.at(s);
    if (g.syms[s].produced && off < 0) continue;  // (its op was dropped)
    TINYRT_CHECK(off >= 0, "a run-time extent without its arena slot");
    llvm::Value *p =
        b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), arena, b.getInt64(off)), b.getInt64Ty()->getPointerTo());
    llvm::Value *v = b.CreateTrunc(b.CreateAlignedLoad(b.getInt64Ty(), p, llvm::Align(8)), b.getInt32Ty());
    // The runtime checked the extent against its bounds; the clamp makes
    // them known to the bounds proof (and keeps a corrupted arena inside).
    dims[(int)s] = clamp_i32(b, v, g.syms[s].lo, g.syms[s].hi);
  }
  return dims;
}

llvm::Value *extent_value(EmitEnv &env, llvm::IRBuilder<> &b, const std::map<int, llvm::Value *> &dims, int v,
                          int axis) {
  ExprP e = env.program.graph.extent(v, axis);
  if (e->is_const()) return b.getInt32((int32_t)e->ival);
  ExprEmitter em(b, env.target, 1);
  em.set_dims([&](int s) { return dims.at(s); });
  return em.emit(e).v;
}

llvm::Value *share_units(llvm::IRBuilder<> &b, llvm::Value *u, llvm::Value *actual, int64_t total) {
  llvm::Type *wide = total <= 46340 ? b.getInt32Ty() : b.getInt64Ty();
  llvm::Value *x = b.CreateMul(b.CreateZExtOrTrunc(u, wide), b.CreateZExtOrTrunc(actual, wide));
  return b.CreateZExtOrTrunc(b.CreateUDiv(x, llvm::ConstantInt::get(wide, total)), b.getInt32Ty());
}

RunSizes run_sizes(EmitEnv &env, llvm::IRBuilder<> &b, const std::map<int, llvm::Value *> &dims, const Kernel &k) {
  const GemmSpec &s = k.gemm;
  auto size = [&](int v, int axis, int64_t fixed) {
    return axis >= 0 ? extent_value(env, b, dims, v, axis) : b.getInt32((int32_t)fixed);
  };
  return {size(k.ins.at(0), s.in_axis[2], s.in_h), size(k.ins.at(0), s.in_axis[3], s.in_w),
          size(k.out, s.out_axis[2], s.out_h), size(k.out, s.out_axis[3], s.out_w)};
}

void for_run_rows(llvm::IRBuilder<> &b, const GemmSpec &s, const RunSizes &rt, llvm::Value *u0, llvm::Value *u1, int mr,
                  const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *, int)> &run) {
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };
  const int64_t rows = s.batch * s.out_h, full_bound = s.out_w / mr;
  llvm::Value *actual = b.CreateMul(i32(s.batch), rt.out_h);
  llvm::Value *full = b.CreateUDiv(rt.out_w, i32(mr)), *rem = b.CreateURem(rt.out_w, i32(mr));
  emit_counted_loop(
      b, share_units(b, u0, actual, rows), share_units(b, u1, actual, rows),
      [&](llvm::Value *ri) {
        llvm::Value *r = clamp_i32(b, ri, 0, rows - 1);
        llvm::Value *n = clamp_i32(b, b.CreateUDiv(r, rt.out_h), 0, s.batch - 1);
        llvm::Value *oh = clamp_i32(b, b.CreateURem(r, rt.out_h), 0, s.out_h - 1);
        // The row's first tile on its own: at column 0 its left-border
        // tests are constants (a padded convolution's first tile is a
        // border tile, the only one besides the last in narrow rows).
        if (full_bound > 0) {
          emit_branch(
              b, b.CreateICmpUGT(full, i32(0)), [&] { run(n, oh, i32(0), mr); }, [] {}, "owfirst");
          emit_counted_loop(
              b, i32(1), full,
              [&](llvm::Value *it) { run(n, oh, b.CreateMul(clamp_i32(b, it, 0, full_bound - 1), i32(mr)), mr); },
              "owtile");
        }
        for (int w = 1; w < mr && w <= s.out_w; ++w)
          emit_branch(
              b, b.CreateICmpEQ(rem, i32(w)),
              [&] { run(n, oh, clamp_i32(b, b.CreateMul(full, i32(mr)), 0, s.out_w - w), w); }, [] {}, "owtail");
      },
      "row");
}

llvm::Value *window_interior(llvm::IRBuilder<> &b, const GemmSpec &s, llvm::Value *oh, llvm::Value *ow0, int m,
                             const RunSizes *rt) {
  int64_t hspan = (s.k_h - 1) * s.dil_h, wspan = (int64_t)(m - 1) * s.stride_w + (s.k_w - 1) * s.dil_w;
  if (s.in_h - 1 - hspan < 0 || s.in_w - 1 - wspan < 0) return b.getFalse();
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };
  llvm::Value *ih0 = b.CreateSub(b.CreateMul(oh, i32(s.stride_h)), i32(s.pad_t));
  llvm::Value *iw0 = b.CreateSub(b.CreateMul(ow0, i32(s.stride_w)), i32(s.pad_l));
  if (rt) {  // signed: the run's input may be smaller than a window
    llvm::Value *h_ok =
        b.CreateAnd(b.CreateICmpSGE(ih0, i32(0)), b.CreateICmpSLT(b.CreateAdd(ih0, i32(hspan)), rt->in_h));
    llvm::Value *w_ok =
        b.CreateAnd(b.CreateICmpSGE(iw0, i32(0)), b.CreateICmpSLT(b.CreateAdd(iw0, i32(wspan)), rt->in_w));
    return b.CreateAnd(h_ok, w_ok);
  }
  llvm::Value *h_ok = b.CreateICmpULE(ih0, i32(s.in_h - 1 - hspan));  // unsigned: also >= 0
  llvm::Value *w_ok = b.CreateICmpULE(iw0, i32(s.in_w - 1 - wspan));
  return b.CreateAnd(h_ok, w_ok);
}

std::vector<SlotRef> scheduled_slots(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, const Kernel &k) {
  std::vector<bool> used(k.ins.size(), false);
  used[0] = true;
  if (k.gemm.arena_weights || k.gemm.arena_packed) used.at(1) = true;  // B, packed at run time
  visit(k.gemm.epilogue, [&](const Expr &e) {
    if (e.op == EOp::Load) used[e.id] = true;
  });
  std::vector<SlotRef> slots;
  for (size_t i = 0; i < k.ins.size(); ++i) slots.push_back(used[i] ? slot_for(env, b, arena, k.ins[i]) : SlotRef{});
  return slots;
}

void store_epilogue(ExprEmitter &em, const GemmSpec &s, const SlotRef &out, llvm::Value *n, llvm::Value *oh,
                    llvm::Value *ow, llvm::Value *oc, llvm::Value *acc, int lanes) {
  llvm::IRBuilder<> &b = em.builder();
  int L = em.lanes();
  em.clear_cache();
  em.set_mask(lanes < L ? lane_mask(b, L, lanes) : nullptr);
  std::vector<VVal> idx(out.strides.size());
  llvm::Value *role[4] = {n, nullptr, oh, ow};
  for (int rl = 0; rl < 4; ++rl) {
    int ax = s.out_axis[rl];
    if (ax < 0) continue;
    idx[ax] = rl == 1 ? em.affine(oc, 1) : em.uniform(role[rl]);
    em.bind(ax, idx[ax]);
  }
  em.set_acc(em.vector(acc));
  em.store(out, idx, em.emit(s.epilogue), out.type);
}

bool loops_epilogue(const Target &t, const GemmSpec &s, int count) {
  if (!t.loop_math_epilogues || count < 2 || !s.epilogue) return false;
  bool math = false;
  visit(s.epilogue, [&](const Expr &e) { math = math || is_math_function(e.op); });
  return math;
}

void looped_epilogue(llvm::IRBuilder<> &b, const std::vector<llvm::Value *> &accs, int groups,
                     const std::function<void(llvm::Value *, const std::vector<llvm::Value *> &)> &each) {
  const size_t per = accs.size() / (size_t)groups;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  std::vector<llvm::AllocaInst *> bufs;
  for (size_t j = 0; j < per; ++j) {
    llvm::Type *vt = accs[j]->getType();
    bufs.push_back(eb.CreateAlloca(vt, eb.getInt32((uint32_t)groups)));
    for (int i = 0; i < groups; ++i)
      b.CreateStore(accs[(size_t)i * per + j], b.CreateConstInBoundsGEP1_32(vt, bufs[j], (unsigned)i));
  }
  rolled_loop(
      b, 0, groups,
      [&](llvm::Value *i) {
        std::vector<llvm::Value *> g;
        // Volatile: GVN would otherwise move the next trip's loads into a
        // new latch block, which drops the loop's unroll.disable.
        for (size_t j = 0; j < per; ++j)
          g.push_back(b.CreateLoad(bufs[j]->getAllocatedType(),
                                   b.CreateInBoundsGEP(bufs[j]->getAllocatedType(), bufs[j], i),
                                   /*isVolatile=*/true));
        each(i, g);
      },
      "epilogue");
}

}  // namespace tinyrt
