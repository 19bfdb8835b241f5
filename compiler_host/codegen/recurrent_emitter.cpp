// recurrent_emitter.cpp — an RNN/GRU/LSTM layer as one loop over time
// (RecurrentSpec in ir/program.h).
//
// The input projection of every step (slot 0, gates' X W^T + biases) was
// computed by a GEMM before this kernel runs. Per direction (a task), per
// time step and batch entry, the kernel walks the hidden units in groups
// of vectors: for each group it accumulates the recurrent products
// H_{t-1} R^T of all gates at once (R packed [D][k][G][Hp], so step k
// loads one vector per gate and vector and broadcasts h[k]), adds the
// projection, applies the cell (activations from the op's table, clip
// included) and stores the new state to S[time, d, b, :]. The previous
// state is S at the previous time (or the initial state, or zeros), so the
// state never needs a copy. GRU without linear_before_reset needs r * h of
// every unit before its h gate: a first pass stores r * h and z in the
// state row's scratch part, a second pass computes h. Code size does not
// depend on T.
#include "codegen/kernel_emitters.h"

#include <llvm/IR/Intrinsics.h>

namespace tinyrt {

namespace {

using llvm::Value;

struct RecurrentEmitter {
  EmitEnv &env;
  const Kernel &k;
  const RecurrentSpec &r;
  const Target &T;
  llvm::IRBuilder<> b;
  int L, cv;
  int64_t H, G, Hp;
  std::vector<SlotRef> slots;
  SlotRef S;
  Value *rp = nullptr, *zeros = nullptr;
  llvm::Type *f32, *vf32;

  RecurrentEmitter(EmitEnv &e, const Kernel &kk)
      : env(e), k(kk), r(kk.rnn), T(e.target), b(e.module.getContext()) {
    L = T.f32_lanes();
    H = r.H;
    G = r.G;
    Hp = r.h_padded;
    // Vectors of hidden units per group: G * cv accumulators in flight.
    cv = (int)std::max<int64_t>(1, std::min<int64_t>(4, 8 / G));
    f32 = b.getFloatTy();
    vf32 = llvm::FixedVectorType::get(f32, L);
  }

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }
  Value *fptr(const SlotRef &s) { return b.CreateBitCast(s.base, f32->getPointerTo()); }
  Value *at(Value *p, Value *off) { return b.CreateGEP(f32, p, off); }
  // Element offset of index `idx` in a slot.
  Value *offset(const SlotRef &s, const std::vector<Value *> &idx) {
    Value *o = i32(0);
    for (size_t a = 0; a < idx.size(); ++a) o = b.CreateAdd(o, b.CreateMul(idx[a], i32(s.strides[a])));
    return o;
  }

  Value *load_vec(Value *p, int lanes) {
    return load_lanes(b, llvm::cast<llvm::FixedVectorType>(vf32), p, lanes);
  }
  void store_vec(Value *v, Value *p, int lanes) { store_lanes(b, v, p, lanes); }
  Value *splat(double v) { return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(L), llvm::ConstantFP::get(f32, v)); }

  // f(x) for an activation expression of Acc.
  Value *apply(const ExprP &act, Value *x) {
    ExprEmitter em(b, T, L);
    em.set_acc(em.vector(x));
    return em.vec(em.emit(act));
  }

  // acc[gi * nv + v] = sum_k h[k] * R[d][k][gates[gi]][j0 + v*L ...]
  Values products(int d, Value *h, Value *j0, const std::vector<int> &gates, int nv) {
    Values init(gates.size() * nv, llvm::Constant::getNullValue(vf32));
    return carried_loop(b, 0, H, 1, init, [&](Value *kk, const Values &a) {
      Values acc = a;
      Value *x = b.CreateVectorSplat(L, b.CreateAlignedLoad(f32, at(h, kk), llvm::Align(4)));
      Value *row = at(rp, b.CreateAdd(b.CreateMul(b.CreateAdd(i32((int64_t)d * H), kk), i32(G * Hp)), j0));
      for (size_t gi = 0; gi < gates.size(); ++gi)
        for (int v = 0; v < nv; ++v) {
          Value *w = b.CreateAlignedLoad(vf32, b.CreateBitCast(at(row, i32(gates[gi] * Hp + v * L)), vf32->getPointerTo()),
                                         llvm::Align(4));
          acc[gi * nv + v] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vf32}, {x, w, acc[gi * nv + v]});
        }
      return acc;
    }, "k");
  }

  // fn(j0, nv, lanes of the last vector) over groups of cv vectors of H.
  void groups(const std::function<void(Value *, int, int)> &fn) {
    int64_t full = H / L, grp = full / cv;
    emit_counted_loop(b, i32(0), i32(grp), [&](Value *gi) { fn(b.CreateMul(gi, i32(cv * L)), cv, L); }, "grp");
    for (int64_t v = grp * cv; v < full; ++v) fn(i32(v * L), 1, L);
    if (H % L) fn(i32(full * L), 1, (int)(H % L));
  }

  // One time step of direction d for batch entry bb.
  void step(int d, Value *time, Value *prev, Value *first, Value *bb) {
    const std::vector<ExprP> &act = r.act[d];
    Value *Sp = fptr(S);
    Value *row = at(Sp, offset(S, {time, i32(d), bb, i32(0)}));
    auto initial = [&](int slot) -> Value * {
      if (slot < 0) return zeros;
      const SlotRef &s = slots[slot];
      return at(fptr(s), r.layout1 ? offset(s, {bb, i32(d), i32(0)}) : offset(s, {i32(d), bb, i32(0)}));
    };
    Value *hprev = b.CreateSelect(first, initial(r.h0), at(Sp, offset(S, {prev, i32(d), bb, i32(0)})));
    Value *cprev = nullptr;
    if (r.cell == CellKind::LSTM)
      cprev = b.CreateSelect(first, initial(r.c0), at(Sp, offset(S, {prev, i32(d), bb, i32(H)})));
    const SlotRef &X = slots[0];
    Value *xrow = at(fptr(X), offset(X, {time, bb, i32((int64_t)d * G * H)}));
    auto xg = [&](int g, Value *j, int lanes) { return load_vec(at(xrow, b.CreateAdd(j, i32(g * H))), lanes); };
    auto param = [&](int slot, int64_t per_d, int64_t off, Value *j, int lanes) {
      return load_vec(at(fptr(slots[slot]), b.CreateAdd(j, i32(d * per_d + off))), lanes);
    };

    if (r.cell == CellKind::GRU && !r.linear_before_reset) {
      // Pass 1: z and r * h_{t-1} into the row's scratch part.
      groups([&](Value *j0, int nv, int last) {
        Values a = products(d, hprev, j0, {0, 1}, nv);
        for (int v = 0; v < nv; ++v) {
          int lanes = v == nv - 1 ? last : L;
          Value *j = b.CreateAdd(j0, i32(v * L));
          Value *z = apply(act[0], b.CreateFAdd(xg(0, j, lanes), a[v]));
          Value *rr = apply(act[0], b.CreateFAdd(xg(1, j, lanes), a[nv + v]));
          store_vec(b.CreateFMul(rr, load_vec(at(hprev, j), lanes)), at(row, b.CreateAdd(j, i32(H))), lanes);
          store_vec(z, at(row, b.CreateAdd(j, i32(2 * H))), lanes);
        }
      });
      // Pass 2: h = (1 - z) * g(x_h + (r * h) R_h^T) + z * h_{t-1}.
      Value *rh = at(row, i32(H));
      groups([&](Value *j0, int nv, int last) {
        Values a = products(d, rh, j0, {2}, nv);
        for (int v = 0; v < nv; ++v) {
          int lanes = v == nv - 1 ? last : L;
          Value *j = b.CreateAdd(j0, i32(v * L));
          Value *hh = apply(act[1], b.CreateFAdd(xg(2, j, lanes), a[v]));
          Value *z = load_vec(at(row, b.CreateAdd(j, i32(2 * H))), lanes);
          Value *hp = load_vec(at(hprev, j), lanes);
          Value *h = b.CreateFAdd(b.CreateFMul(b.CreateFSub(splat(1), z), hh), b.CreateFMul(z, hp));
          store_vec(h, at(row, j), lanes);
        }
      });
      return;
    }

    std::vector<int> gates;
    for (int g = 0; g < G; ++g) gates.push_back(g);
    groups([&](Value *j0, int nv, int last) {
      Values a = products(d, hprev, j0, gates, nv);
      for (int v = 0; v < nv; ++v) {
        int lanes = v == nv - 1 ? last : L;
        Value *j = b.CreateAdd(j0, i32(v * L));
        auto pre = [&](int g) { return b.CreateFAdd(xg(g, j, lanes), a[g * nv + v]); };
        if (r.cell == CellKind::RNN) {
          store_vec(apply(act[0], pre(0)), at(row, j), lanes);
        } else if (r.cell == CellKind::GRU) {
          // linear_before_reset: h~ = g(x_h + r * (h R_h^T + Rb_h)).
          Value *z = apply(act[0], pre(0));
          Value *rr = apply(act[0], pre(1));
          Value *hr = a[2 * nv + v];
          if (r.rbh >= 0) hr = b.CreateFAdd(hr, param(r.rbh, H, 0, j, lanes));
          Value *hh = apply(act[1], b.CreateFAdd(xg(2, j, lanes), b.CreateFMul(rr, hr)));
          Value *hp = load_vec(at(hprev, j), lanes);
          store_vec(b.CreateFAdd(b.CreateFMul(b.CreateFSub(splat(1), z), hh), b.CreateFMul(z, hp)), at(row, j), lanes);
        } else {
          // Gates i, o, f, c; peepholes P = [p_i, p_o, p_f].
          Value *cp = load_vec(at(cprev, j), lanes);
          auto peep = [&](Value *x, int which, Value *c) {
            return r.p < 0 ? x : b.CreateFAdd(x, b.CreateFMul(param(r.p, 3 * H, which * H, j, lanes), c));
          };
          Value *i = apply(act[0], peep(pre(0), 0, cp));
          Value *f = apply(act[0], peep(pre(2), 2, cp));
          Value *g = apply(act[1], pre(3));
          Value *c = b.CreateFAdd(b.CreateFMul(f, cp), b.CreateFMul(i, g));
          Value *o = apply(act[0], peep(pre(1), 1, c));
          store_vec(b.CreateFMul(o, apply(act[2], c)), at(row, j), lanes);
          store_vec(c, at(row, b.CreateAdd(j, i32(H))), lanes);
        }
      }
    });
  }

  void direction(int d) {
    bool rev = r.reverse || d == 1;
    emit_counted_loop(b, i32(0), i32(r.T), [&](Value *st) {
      Value *time = rev ? b.CreateSub(i32(r.T - 1), st) : st;
      Value *prev = rev ? b.CreateAdd(time, i32(1)) : b.CreateSub(time, i32(1));
      Value *first = b.CreateICmpEQ(st, i32(0));
      // At the first step `prev` is out of range; its pointer is computed
      // but never read (the select picks the initial state).
      emit_counted_loop(b, i32(0), i32(r.B), [&](Value *bb) { step(d, time, prev, first, bb); }, "batch");
    }, "time");
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    for (int v : k.ins) slots.push_back(slot_for(env, b, arena, v));
    S = slot_for(env, b, arena, k.out);
    rp = b.CreateBitCast(env.const_data(r.packed), f32->getPointerTo());
    zeros = zero_floats(env, b, Hp, name);
    emit_counted_loop(b, f->getArg(1), f->getArg(2), [&](Value *t) {
      if (r.D == 1) direction(0);
      else emit_branch(b, b.CreateICmpEQ(t, i32(0)), [&] { direction(0); }, [&] { direction(1); }, "dir");
    }, "task");
    b.CreateRetVoid();
    return {f, r.D};
  }
};

}  // namespace

EmittedKernel emit_recurrent_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  RecurrentEmitter e(env, k);
  return e.emit(name);
}

}  // namespace tinyrt
