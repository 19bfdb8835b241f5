// gemm_emitter.cpp — convolutions and matrix products over packed weights.
//
// out(pixel, oc) = epilogue(sum over (kh, kw, ic) of X(pixel, kh, kw, ic) *
// W(kh, kw, ic, oc)). A register tile holds `mr` pixels x `nv` vectors of
// output channels; per (kh, kw) each pixel's input row is located once
// (rows in the padding point at a zero row, or are masked when channels are
// strided), and the ic loop does nv weight loads, mr broadcasts and mr*nv
// FMAs. Weights are packed at compile time as
// [group][oc tile][kh*kw][ic][nr] (nr = nv * lanes, zero padded), so the
// loop reads them sequentially. The epilogue (bias, activation, residual,
// ...) runs on the accumulators before the only store.
// Tasks are (group, oc tile, block of pixel tiles).
#include "codegen/kernel_emitters.h"

#include <llvm/IR/Intrinsics.h>

namespace tinyrt {

namespace {

using llvm::Value;
using Values = std::vector<Value *>;

// for (i = begin; i < end; i += step) vals = body(i, vals) with static
// bounds; returns the final values.
Values carried_loop(llvm::IRBuilder<> &b, int64_t begin, int64_t end, int64_t step, Values init,
                    const std::function<Values(Value *, const Values &)> &body, const char *name) {
  int64_t trips = end > begin ? (end - begin + step - 1) / step : 0;
  if (trips == 0) return init;
  if (trips == 1) return body(b.getInt32((int32_t)begin), init);
  auto &C = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(C, name, f);
  auto *exit = llvm::BasicBlock::Create(C, std::string(name) + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *iv = b.CreatePHI(b.getInt32Ty(), 2);
  iv->addIncoming(b.getInt32((int32_t)begin), pre);
  std::vector<llvm::PHINode *> phis;
  Values cur;
  for (Value *v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    cur.push_back(phis.back());
  }
  Values next = body(iv, cur);
  llvm::BasicBlock *latch = b.GetInsertBlock();
  Value *inext = b.CreateAdd(iv, b.getInt32((int32_t)step));
  iv->addIncoming(inext, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], latch);
  b.CreateCondBr(b.CreateICmpSLT(inext, b.getInt32((int32_t)(begin + trips * step))), header, exit);
  b.SetInsertPoint(exit);
  return next;
}

struct GemmEmitter {
  EmitEnv &env;
  const Kernel &k;
  const GemmSpec &s;
  const Target &T;
  llvm::IRBuilder<> b;
  int L, mr, nv, NR;
  int64_t G, ICg, OCg, OCt, P, KK;
  std::vector<SlotRef> slots;
  SlotRef X, out;
  int64_t xs[4], os[4];  // strides per role n, c, h, w
  Value *weights = nullptr;
  Value *zero_row = nullptr;
  llvm::Type *f32, *vf32;

  GemmEmitter(EmitEnv &e, const Kernel &kk)
      : env(e), k(kk), s(kk.gemm), T(e.target), b(e.module.getContext()) {
    L = T.f32_lanes();
    mr = s.mr;
    NR = s.nr;
    nv = NR / L;
    G = s.groups;
    ICg = s.in_c / G;
    OCg = s.out_c / G;
    OCt = (OCg + NR - 1) / NR;
    P = s.batch * s.out_h * s.out_w;
    KK = s.k_h * s.k_w;
    f32 = b.getFloatTy();
    vf32 = llvm::FixedVectorType::get(f32, L);
  }

  struct Pixel {
    Value *n, *oh, *ow, *ih0, *iw0, *xbase;
  };

  Pixel pixel(Value *p) {
    Pixel px;
    Value *ow = b.CreateURem(p, b.getInt32((int32_t)s.out_w));
    Value *t = b.CreateUDiv(p, b.getInt32((int32_t)s.out_w));
    px.ow = ow;
    px.oh = b.CreateURem(t, b.getInt32((int32_t)s.out_h));
    px.n = b.CreateUDiv(t, b.getInt32((int32_t)s.out_h));
    px.ih0 = b.CreateSub(b.CreateMul(px.oh, b.getInt32((int32_t)s.stride_h)), b.getInt32((int32_t)s.pad_t));
    px.iw0 = b.CreateSub(b.CreateMul(px.ow, b.getInt32((int32_t)s.stride_w)), b.getInt32((int32_t)s.pad_l));
    px.xbase = b.CreateMul(px.n, b.getInt32((int32_t)xs[0]));
    return px;
  }

  // One register tile: m pixels from p0, vectors [0, nvv) of the oc tile at
  // oc0 (absolute channel); the last vector keeps only `last_lanes` lanes.
  void tile(Value *p0, Value *g, Value *wtile, Value *oc0, int m, int nvv, int last_lanes) {
    std::vector<Pixel> px;
    for (int i = 0; i < m; ++i) px.push_back(pixel(b.CreateAdd(p0, b.getInt32(i))));
    Value *gbase = b.CreateMul(g, b.getInt32((int32_t)(ICg * xs[1])));
    Values acc(m * nvv, llvm::Constant::getNullValue(vf32));
    bool contiguous = xs[1] == 1;
    auto fma = [&](Value *x, Value *w, Value *a) {
      return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vf32}, {x, w, a});
    };
    acc = carried_loop(b, 0, s.k_h, 1, acc, [&](Value *kh, const Values &a0) {
      return carried_loop(b, 0, s.k_w, 1, a0, [&](Value *kw, const Values &a1) {
        // Locate each pixel's input row for this (kh, kw).
        Values row, valid;
        for (int i = 0; i < m; ++i) {
          Value *ih = b.CreateAdd(px[i].ih0, b.CreateMul(kh, b.getInt32((int32_t)s.dil_h)));
          Value *iw = b.CreateAdd(px[i].iw0, b.CreateMul(kw, b.getInt32((int32_t)s.dil_w)));
          Value *ok = b.CreateAnd(b.CreateICmpULT(ih, b.getInt32((int32_t)s.in_h)),
                                  b.CreateICmpULT(iw, b.getInt32((int32_t)s.in_w)));
          Value *off = b.CreateAdd(b.CreateAdd(px[i].xbase, gbase),
                                   b.CreateAdd(b.CreateMul(ih, b.getInt32((int32_t)xs[2])),
                                               b.CreateMul(iw, b.getInt32((int32_t)xs[3]))));
          Value *ptr = b.CreateGEP(f32, b.CreateBitCast(X.base, f32->getPointerTo()), off);
          if (contiguous) {
            ptr = b.CreateSelect(ok, ptr, zero_row);
          } else {
            ptr = b.CreateSelect(ok, ptr, b.CreateBitCast(X.base, f32->getPointerTo()));
            valid.push_back(ok);
          }
          row.push_back(ptr);
        }
        Value *kk = b.CreateAdd(b.CreateMul(kh, b.getInt32((int32_t)s.k_w)), kw);
        Value *wk = b.CreateGEP(f32, wtile, b.CreateMul(kk, b.getInt32((int32_t)(ICg * NR))));
        auto step = [&](Value *ic, Values a) {
          Values w;
          for (int j = 0; j < nvv; ++j) {
            Value *wp = b.CreateGEP(f32, wk, b.CreateAdd(b.CreateMul(ic, b.getInt32(NR)), b.getInt32(j * L)));
            w.push_back(b.CreateAlignedLoad(vf32, b.CreateBitCast(wp, vf32->getPointerTo()),
                                            llvm::Align(std::min(NR, L) * 4)));
          }
          for (int i = 0; i < m; ++i) {
            Value *xp = b.CreateGEP(f32, row[i], contiguous ? ic : b.CreateMul(ic, b.getInt32((int32_t)xs[1])));
            Value *x = b.CreateAlignedLoad(f32, xp, llvm::Align(4));
            if (!contiguous) x = b.CreateSelect(valid[i], x, llvm::ConstantFP::get(f32, 0.0));
            Value *xv = b.CreateVectorSplat(L, x);
            for (int j = 0; j < nvv; ++j) a[i * nvv + j] = fma(xv, w[j], a[i * nvv + j]);
          }
          return a;
        };
        // The ic loop, unrolled by U, then its remainder.
        const int U = 4;
        int64_t main_end = ICg / U * U;
        Values a2 = carried_loop(b, 0, main_end, U, a1, [&](Value *ic, const Values &av) {
          Values cur = av;
          for (int u = 0; u < U; ++u) cur = step(b.CreateAdd(ic, b.getInt32(u)), cur);
          return cur;
        }, "ic");
        return carried_loop(b, main_end, ICg, 1, a2, [&](Value *ic, const Values &av) { return step(ic, av); },
                            "ic.rem");
      }, "kw");
    }, "kh");

    // Epilogue and store.
    ExprEmitter em(b, T, L);
    em.set_slots(slots);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < nvv; ++j) {
        llvm::Value *mask = nullptr;
        if (j == nvv - 1 && last_lanes < L) {
          std::vector<llvm::Constant *> mk;
          for (int l = 0; l < L; ++l) mk.push_back(b.getInt1(l < last_lanes));
          mask = llvm::ConstantVector::get(mk);
        }
        em.clear_cache();
        em.set_mask(mask);
        std::vector<VVal> idx(out.strides.size());
        Value *role[4] = {px[i].n, nullptr, px[i].oh, px[i].ow};
        for (int rl = 0; rl < 4; ++rl) {
          int ax = s.out_axis[rl];
          if (ax < 0) continue;
          idx[ax] = rl == 1 ? em.affine(b.CreateAdd(oc0, b.getInt32(j * L)), 1) : em.uniform(role[rl]);
          em.bind(ax, idx[ax]);
        }
        em.set_acc(em.vector(acc[i * nvv + j]));
        em.store(out, idx, em.emit(s.epilogue), DType::F32);
      }
    }
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    // Slot 0 is the input rows; others are read only by the epilogue (the
    // raw weights stay in the reference expression, never in the object).
    std::vector<bool> used(k.ins.size(), false);
    used[0] = true;
    visit(s.epilogue, [&](const Expr &e) {
      if (e.op == EOp::Load) used[e.id] = true;
    });
    for (size_t i = 0; i < k.ins.size(); ++i) slots.push_back(used[i] ? slot_for(env, b, arena, k.ins[i]) : SlotRef{});
    X = slots.at(0);
    out = slot_for(env, b, arena, k.out);
    for (int rl = 0; rl < 4; ++rl) {
      xs[rl] = s.in_axis[rl] >= 0 ? X.strides[s.in_axis[rl]] : 0;
      os[rl] = s.out_axis[rl] >= 0 ? out.strides[s.out_axis[rl]] : 0;
    }
    TINYRT_CHECK(os[1] == 1, "GEMM output channels must be contiguous");
    weights = b.CreateBitCast(env.const_data(s.packed), f32->getPointerTo());
    if (xs[1] == 1) {
      auto *zt = llvm::ArrayType::get(f32, (uint64_t)std::max<int64_t>(ICg, 1));
      auto *z = new llvm::GlobalVariable(env.module, zt, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::Constant::getNullValue(zt), name + ".zero");
      z->setAlignment(llvm::Align(64));
      zero_row = b.CreateBitCast(z, f32->getPointerTo());
    }
    // Pixel blocks: enough tasks to share out, whole tiles per block.
    int64_t ptiles = (P + mr - 1) / mr;
    int64_t want = std::max<int64_t>(1, (64 + G * OCt - 1) / (G * OCt));
    int64_t tpb = (ptiles + std::min(ptiles, want) - 1) / std::min(ptiles, want);
    int64_t pblocks = (ptiles + tpb - 1) / tpb;
    int64_t tasks = G * OCt * pblocks;
    int last_cols = (int)(OCg - (OCt - 1) * NR);  // channels in the last oc tile

    emit_counted_loop(b, f->getArg(1), f->getArg(2), [&](Value *t) {
      Value *pb = b.CreateURem(t, b.getInt32((int32_t)pblocks));
      Value *rest = b.CreateUDiv(t, b.getInt32((int32_t)pblocks));
      Value *oct = b.CreateURem(rest, b.getInt32((int32_t)OCt));
      Value *g = b.CreateUDiv(rest, b.getInt32((int32_t)OCt));
      Value *wtile = b.CreateGEP(f32, weights,
                                 b.CreateMul(b.CreateAdd(b.CreateMul(g, b.getInt32((int32_t)OCt)), oct),
                                             b.getInt32((int32_t)(KK * ICg * NR))));
      Value *oc0 = b.CreateAdd(b.CreateMul(g, b.getInt32((int32_t)OCg)), b.CreateMul(oct, b.getInt32(NR)));
      Value *p_begin = b.CreateMul(pb, b.getInt32((int32_t)(tpb * mr)));
      Value *p_end = b.CreateAdd(p_begin, b.getInt32((int32_t)(tpb * mr)));
      p_end = b.CreateSelect(b.CreateICmpSLT(p_end, b.getInt32((int32_t)P)), p_end, b.getInt32((int32_t)P));
      auto columns = [&](int nvv, int lanes_last) {
        // Full tiles, then the one partial tile at the very end.
        Value *full = b.CreateUDiv(b.CreateSub(p_end, p_begin), b.getInt32(mr));
        emit_counted_loop(b, b.getInt32(0), full, [&](Value *it) {
          tile(b.CreateAdd(p_begin, b.CreateMul(it, b.getInt32(mr))), g, wtile, oc0, mr, nvv, lanes_last);
        }, "ptile");
        int rem = (int)(P % mr);
        if (rem == 0) return;
        Value *p_tail = b.CreateAdd(p_begin, b.CreateMul(full, b.getInt32(mr)));
        llvm::Function *fn = b.GetInsertBlock()->getParent();
        auto *tb = llvm::BasicBlock::Create(b.getContext(), "ptail", fn);
        auto *done = llvm::BasicBlock::Create(b.getContext(), "ptail.done", fn);
        b.CreateCondBr(b.CreateICmpSLT(p_tail, p_end), tb, done);
        b.SetInsertPoint(tb);
        tile(p_tail, g, wtile, oc0, rem, nvv, lanes_last);
        b.CreateBr(done);
        b.SetInsertPoint(done);
      };
      if (last_cols == NR) {
        columns(nv, L);
      } else {
        llvm::Function *fn = b.GetInsertBlock()->getParent();
        auto *full_bb = llvm::BasicBlock::Create(b.getContext(), "octile", fn);
        auto *last_bb = llvm::BasicBlock::Create(b.getContext(), "octile.last", fn);
        auto *done = llvm::BasicBlock::Create(b.getContext(), "octile.done", fn);
        b.CreateCondBr(b.CreateICmpEQ(oct, b.getInt32((int32_t)(OCt - 1))), last_bb, full_bb);
        b.SetInsertPoint(full_bb);
        columns(nv, L);
        b.CreateBr(done);
        b.SetInsertPoint(last_bb);
        int nvv = (last_cols + L - 1) / L;
        columns(nvv, last_cols - (nvv - 1) * L);
        b.CreateBr(done);
        b.SetInsertPoint(done);
      }
    }, "task");
    b.CreateRetVoid();
    return {f, tasks};
  }
};

}  // namespace

EmittedKernel emit_gemm_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  GemmEmitter g(env, k);
  return g.emit(name);
}

}  // namespace tinyrt
