// recurrent_emitter.cpp — an RNN/GRU/LSTM layer as one loop over time
// (RecurrentSpec in ir/program.h).
//
// The input projection of every step (slot 0, gates' X W^T + biases) was
// computed by a GEMM before this kernel runs. Per direction (a task), per
// time step and batch entry, the kernel walks the hidden units in groups
// of vectors: for each group it accumulates the recurrent products
// H_{t-1} R^T of all gates at once (R packed group-major, each group of
// vectors of units [k][G][units], so step k loads one vector per gate and
// vector, the group's weights read sequentially over k, and broadcasts
// h[k]; on NEON 4 values of h per load, multiplied by lane), adds the
// projection, applies the cell (activations from the op's table, clip
// included) and stores the new state to S[time, d, b, :]. The previous
// state is S at the previous time (or the initial state, or zeros), so the
// state never needs a copy. GRU without linear_before_reset needs r * h of
// every unit before its h gate: a first pass stores r * h and z in the
// state row's scratch part, a second pass computes h. Code size does not
// depend on T. A layer split by split_recurrent has `parts` tasks per
// direction that share each step's units (split_direction).
//
// Dynamic int8 (RecurrentSpec::r_scale): at each step the state that
// multiplies R is quantized first, per batch entry, to int8 by its
// max |h| / 127 into the state row's byte scratch; the products are int8
// dot products over quads of hidden units (codegen/int8_dot.h) with R
// packed [D][k/4][G][Hp][4], accumulated in int32 and scaled back by the
// state's scale times R's row scale.
#include "codegen/int8_dot.h"
#include "codegen/kernel_emitters.h"
#include "tinyrt_artifact.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>

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
  llvm::Type *rel = nullptr;  // element of rp: float, or half (--weights fp16)
  Value *steps = nullptr;     // the time steps (i32): T, or a run-time extent
  llvm::Type *f32, *vf32;
  // int8: R's bytes, row scales [D][G][Hp], int32 starts (or null).
  bool q8;
  int64_t Kq = 0;  // quads of hidden units
  Value *rq = nullptr, *rscale = nullptr, *rstart = nullptr;
  // A quantized state: its bytes (i8*) and its scale (float).
  struct QState {
    Value *bytes = nullptr, *scale = nullptr;
  };

  RecurrentEmitter(EmitEnv &e, const Kernel &kk) : env(e), k(kk), r(kk.rnn), T(e.target), b(e.module.getContext()) {
    L = T.f32_lanes();
    H = r.H;
    G = r.G;
    Hp = r.h_padded;
    // Vectors of hidden units per group: G * cv accumulators in flight.
    cv = r.vectors;
    f32 = b.getFloatTy();
    vf32 = llvm::FixedVectorType::get(f32, L);
    q8 = r.r_scale >= 0;
    Kq = (H + 3) / 4;
  }

  Int8Dot dot() { return Int8Dot{b, T, L, r.pair16, true, r.madd}; }

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }
  Value *fptr(const SlotRef &s) { return b.CreateBitCast(s.base, f32->getPointerTo()); }
  Value *at(Value *p, Value *off) { return b.CreateGEP(f32, p, off); }
  // Element offset of index `idx` in a slot.
  Value *offset(const SlotRef &s, const std::vector<Value *> &idx) {
    Value *o = i32(0);
    for (size_t a = 0; a < idx.size(); ++a) o = b.CreateAdd(o, b.CreateMul(idx[a], i32(s.strides[a])));
    return o;
  }

  Value *load_vec(Value *p, int lanes) { return load_lanes(b, llvm::cast<llvm::FixedVectorType>(vf32), p, lanes); }
  void store_vec(Value *v, Value *p, int lanes) { store_lanes(b, v, p, lanes); }
  Value *splat(double v) {
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(L), llvm::ConstantFP::get(f32, v));
  }

  // f(x) for an activation expression of Acc.
  Value *apply(const ExprP &act, Value *x) {
    ExprEmitter em(b, T, L);
    em.set_acc(em.vector(x));
    return em.vec(em.emit(act));
  }

  // The H floats at h quantized to int8 (symmetric, scale max|h| / 127;
  // xor 0x80 when the dot product takes uint8) into the bytes at dst,
  // padded with zeros to whole quads. max|h| is taken on the float bits
  // as integers (the order of non-negative floats), NaN as the largest.
  QState quantize(Value *h, Value *dst) {
    auto *vi = llvm::FixedVectorType::get(b.getInt32Ty(), L);
    Value *absmask = llvm::ConstantInt::get(vi, 0x7fffffff);
    auto absbits = [&](Value *p, int lanes) { return b.CreateAnd(b.CreateBitCast(load_vec(p, lanes), vi), absmask); };
    int64_t full = H / L;
    Values m = carried_loop(
        b, 0, full, 1, {llvm::Constant::getNullValue(vi)},
        [&](Value *kv, const Values &a) {
          return Values{
              b.CreateIntrinsic(llvm::Intrinsic::smax, {vi}, {a[0], absbits(at(h, b.CreateMul(kv, i32(L))), L)})};
        },
        "qmax");
    Value *mx = m[0];
    if (H % L) mx = b.CreateIntrinsic(llvm::Intrinsic::smax, {vi}, {mx, absbits(at(h, i32(full * L)), (int)(H % L))});
    Value *amax = b.CreateBitCast(b.CreateIntrinsic(llvm::Intrinsic::vector_reduce_smax, {vi}, {mx}), f32);
    Value *big = b.CreateFCmpOGT(amax, llvm::ConstantFP::get(f32, 1e-30));
    Value *inv =
        b.CreateSelect(big, b.CreateFDiv(llvm::ConstantFP::get(f32, 127.0), amax), llvm::ConstantFP::get(f32, 0.0));
    Value *scale = b.CreateFMul(amax, llvm::ConstantFP::get(f32, 1.0 / 127));
    Value *vinv = b.CreateVectorSplat(L, inv);
    auto *vi8 = llvm::FixedVectorType::get(b.getInt8Ty(), L);
    ExprP round = un(EOp::Round, acc(DType::F32));
    auto chunk = [&](Value *k, int lanes) {
      Value *v = apply(round, b.CreateFMul(load_vec(at(h, k), lanes), vinv));
      // |v| <= 127 but for rounding and NaN (unordered: 127).
      v = b.CreateSelect(b.CreateFCmpUGT(v, splat(127)), splat(127), v);
      v = b.CreateSelect(b.CreateFCmpOLT(v, splat(-127)), splat(-127), v);
      Value *q = b.CreateTrunc(b.CreateFPToSI(v, vi), vi8);
      if (r.x_flip)
        q = b.CreateXor(q, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(L), b.getInt8(0x80)));
      store_lanes(b, q, b.CreateGEP(b.getInt8Ty(), dst, k), lanes);
    };
    emit_counted_loop(
        b, i32(0), i32(full), [&](Value *kv) { chunk(b.CreateMul(kv, i32(L)), L); }, "quant");
    if (H % L) chunk(i32(full * L), (int)(H % L));
    for (int64_t k = H; k < Kq * 4; ++k) b.CreateStore(b.getInt8(0), b.CreateGEP(b.getInt8Ty(), dst, i32(k)));
    return {dst, scale};
  }

  // The state row's byte scratch.
  Value *qbytes(Value *row) { return b.CreateBitCast(at(row, i32(r.q_offset)), b.getInt8PtrTy()); }

  // int8: acc[gi * nv + v] = sum over quads of the state's bytes dot
  // R's bytes, as floats scaled by the state's and the rows' scales.
  Values qproducts(int d, const QState &x, Value *j0, const std::vector<int> &gates, int nv) {
    Int8Dot dt = dot();
    auto *accv = dt.acc_type();
    auto vec_at = [&](Value *base, llvm::Type *vt, int gt, int v) {
      Value *off = b.CreateAdd(b.CreateAdd(i32(((int64_t)d * G + gt) * Hp), j0), i32(v * L));
      return b.CreateAlignedLoad(vt, b.CreateBitCast(b.CreateGEP(vt->getScalarType(), base, off), vt->getPointerTo()),
                                 llvm::Align(4));
    };
    Values init;
    for (int gt : gates)
      for (int v = 0; v < nv; ++v) init.push_back(dt.start(rstart ? (Value *)vec_at(rstart, accv, gt, v) : nullptr));
    // The group's tile: [k/4][G][NB][4] bytes, j0 % NB units in.
    int64_t NB = (int64_t)cv * L;
    Value *tile_index = b.CreateAdd(i32((int64_t)d * (Hp / NB)), b.CreateUDiv(j0, i32(NB)));
    Value *tile = b.CreateGEP(
        b.getInt8Ty(), rq,
        b.CreateAdd(b.CreateMul(tile_index, i32(Kq * G * NB * 4)), b.CreateMul(b.CreateURem(j0, i32(NB)), i32(4))));
    auto quad_step = [&](Value *kq, Values out) {
      Value *quad = b.CreateAlignedLoad(
          b.getInt32Ty(),
          b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), x.bytes, b.CreateMul(kq, i32(4))), b.getInt32Ty()->getPointerTo()),
          llvm::Align(1));
      DotOperand xv = dt.x_vec(quad);
      Value *wq = b.CreateGEP(b.getInt8Ty(), tile, b.CreateMul(kq, i32(G * NB * 4)));
      for (size_t gi = 0; gi < gates.size(); ++gi)
        for (int v = 0; v < nv; ++v) {
          DotOperand w = dt.load_w(b.CreateGEP(b.getInt8Ty(), wq, i32((gates[gi] * NB + v * L) * 4)));
          out[gi * nv + v] = dt.dot4(out[gi * nv + v], xv, w);
        }
      return out;
    };
    // NEON: 16 bytes of the state (4 quads) per load; each quad is taken
    // from the register (sdot by element; for the pair products two
    // 16-bit lane broadcasts), as the int8 GEMM does.
    int64_t done = 0;
    Values a = init;
    bool sdot = T.dot_i8 == DotI8::NeonSdot, pairs = T.dot_i8 == DotI8::NeonPairs;
    if ((sdot || pairs) && Kq >= 4) {
      done = Kq / 4 * 4;
      auto *v16 = llvm::FixedVectorType::get(b.getInt8Ty(), 16);
      auto *lanes =
          pairs ? llvm::FixedVectorType::get(b.getInt16Ty(), 8) : llvm::FixedVectorType::get(b.getInt32Ty(), 4);
      auto *half = llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L);
      a = carried_loop(
          b, 0, done, 4, a,
          [&](Value *kq, const Values &av) {
            Values out = av;
            Value *xq = b.CreateBitCast(
                b.CreateAlignedLoad(
                    v16,
                    b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), x.bytes, b.CreateMul(kq, i32(4))), v16->getPointerTo()),
                    llvm::Align(1)),
                lanes);
            for (int u = 0; u < 4; ++u) {
              Value *wq = b.CreateGEP(b.getInt8Ty(), tile, b.CreateMul(b.CreateAdd(kq, i32(u)), i32(G * NB * 4)));
              auto lane = [&](int l) {
                return b.CreateBitCast(b.CreateShuffleVector(xq, std::vector<int>(L, l)), half);
              };
              DotOperand xo = pairs ? DotOperand{lane(2 * u), lane(2 * u + 1)} : DotOperand{nullptr};
              Value *xe =
                  sdot ? b.CreateBitCast(b.CreateShuffleVector(xq, std::vector<int>(4, u)), dt.weight_type()) : nullptr;
              for (size_t gi = 0; gi < gates.size(); ++gi)
                for (int v = 0; v < nv; ++v) {
                  DotOperand w = dt.load_w(b.CreateGEP(b.getInt8Ty(), wq, i32((gates[gi] * NB + v * L) * 4)));
                  Value *&acc = out[gi * nv + v];
                  acc = sdot ? b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {accv, dt.weight_type()},
                                                 {acc, w.lo, xe})
                             : dt.dot4(acc, xo, w);
                }
            }
            return out;
          },
          "kq4");
    }
    // Two quads per iteration.
    int64_t even = done + (Kq - done) / 2 * 2;
    a = carried_loop(
        b, done, even, 2, a,
        [&](Value *kq, const Values &av) { return quad_step(b.CreateAdd(kq, i32(1)), quad_step(kq, av)); }, "kq");
    if ((Kq - done) % 2) a = quad_step(i32(even), a);
    Value *sx = b.CreateVectorSplat(L, x.scale);
    for (size_t gi = 0; gi < gates.size(); ++gi)
      for (int v = 0; v < nv; ++v) {
        Value *sc = b.CreateFMul(sx, vec_at(rscale, vf32, gates[gi], v));
        a[gi * nv + v] = b.CreateFMul(b.CreateSIToFP(dt.finish(a[gi * nv + v]), vf32), sc);
      }
    return a;
  }

  // acc[gi * nv + v] = sum_k h[k] * R[d][k][gates[gi]][j0 + v*L ...]
  // (int8: from the quantized state x).
  Values products(int d, Value *h, const QState &x, Value *j0, const std::vector<int> &gates, int nv) {
    if (q8) return qproducts(d, x, j0, gates, nv);
    Values init(gates.size() * nv, llvm::Constant::getNullValue(vf32));
    // R is group-major (pack_weights): each group of cv vectors of hidden
    // units reads its weights sequentially over k, [k][G][cv * L]; the
    // units after the last full group (a constant j0 here) form one block
    // [k][G][width] of their own.
    int64_t NB = (int64_t)cv * L, tail0 = (H / L) / cv * NB, width = Hp - tail0;
    auto *cj = llvm::dyn_cast<llvm::ConstantInt>(j0);
    bool tail = cj && cj->getSExtValue() >= tail0;
    Value *block =
        tail ? i32((int64_t)d * H * G * Hp + tail0 * H * G + cj->getSExtValue() - tail0)
             : b.CreateAdd(i32((int64_t)d * H * G * Hp), b.CreateMul(b.CreateUDiv(j0, i32(NB)), i32(H * G * NB)));
    int64_t row = tail ? G * width : G * NB, gate = tail ? width : NB;
    auto weights = [&](Value *kk, size_t gi, int v) {
      Value *off = b.CreateAdd(block, b.CreateAdd(b.CreateMul(kk, i32(row)), i32(gates[gi] * gate + v * L)));
      return load_float_weights(b, T, rel, b.CreateGEP(rel, rp, off), L);
    };
    // NEON (Target::gemm_lane_mac): 4 state values per load, multiplied by
    // lane, as the float GEMM does.
    int64_t quad_end = 0;
    if (T.gemm_lane_mac != Target::LaneMac::None && L == 4 && H >= 4) {
      quad_end = H / 4 * 4;
      init = carried_loop(
          b, 0, quad_end, 4, init,
          [&](Value *kk, const Values &a) {
            Values acc = a;
            Value *hq = b.CreateAlignedLoad(vf32, b.CreateBitCast(at(h, kk), vf32->getPointerTo()), llvm::Align(4));
            for (int u = 0; u < 4; ++u) {
              Value *ku = b.CreateAdd(kk, i32(u));
              for (size_t gi = 0; gi < gates.size(); ++gi)
                for (int v = 0; v < nv; ++v)
                  acc[gi * nv + v] = lane_mac(b, T, acc[gi * nv + v], weights(ku, gi, v), hq, u);
            }
            return acc;
          },
          "k4");
    }
    return carried_loop(
        b, quad_end, H, 1, init,
        [&](Value *kk, const Values &a) {
          Values acc = a;
          Value *x = b.CreateVectorSplat(L, b.CreateAlignedLoad(f32, at(h, kk), llvm::Align(4)));
          for (size_t gi = 0; gi < gates.size(); ++gi)
            for (int v = 0; v < nv; ++v) {
              Value *w = weights(kk, gi, v);
              acc[gi * nv + v] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vf32}, {x, w, acc[gi * nv + v]});
            }
          return acc;
        },
        "k");
  }

  // fn(j0, nv, lanes of the last vector) over groups of cv vectors of H:
  // all of them, or those of `part` (of r.parts: a range of the full
  // groups, the last part also the units after them).
  void groups(Value *part, const std::function<void(Value *, int, int)> &fn) {
    int64_t full = H / L, grp = full / cv;
    auto rest = [&] {
      for (int64_t v = grp * cv; v < full; ++v) fn(i32(v * L), 1, L);
      if (H % L) fn(i32(full * L), 1, (int)(H % L));
    };
    Value *g0 = i32(0), *g1 = i32(grp);
    if (part) {
      g0 = b.CreateUDiv(b.CreateMul(part, i32(grp)), i32(r.parts));
      g1 = b.CreateUDiv(b.CreateMul(b.CreateAdd(part, i32(1)), i32(grp)), i32(r.parts));
    }
    emit_counted_loop(
        b, g0, g1, [&](Value *gi) { fn(b.CreateMul(gi, i32(cv * L)), cv, L); }, "grp");
    if (!part)
      rest();
    else if (grp * cv < full || H % L)
      emit_branch(
          b, b.CreateICmpEQ(part, i32(r.parts - 1)), rest, [] {}, "rest");
  }

  // One time step of direction d for batch entry bb (the units of `part`,
  // or all). With sequence lengths, a step at or past the entry's length
  // holds its state (h, and LSTM's c): before its first step in the
  // reverse direction that is the initial state, as ONNX reverses each
  // sequence within its own length.
  void step(int d, Value *time, Value *prev, Value *first, Value *bb, Value *part) {
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
    if (r.lens < 0) return cell(d, time, bb, part, row, hprev, cprev);
    Value *lens = b.CreateBitCast(slots[(size_t)r.lens].base, b.getInt32Ty()->getPointerTo());
    Value *len = b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), lens, clamp_i32(b, bb, 0, r.B - 1)));
    emit_branch(
        b, b.CreateICmpSLT(time, len), [&] { cell(d, time, bb, part, row, hprev, cprev); },
        [&] {
          groups(part, [&](Value *j0, int nv, int last) {
            for (int v = 0; v < nv; ++v) {
              int lanes = v == nv - 1 ? last : L;
              Value *j = b.CreateAdd(j0, i32(v * L));
              store_vec(load_vec(at(hprev, j), lanes), at(row, j), lanes);
              if (cprev) store_vec(load_vec(at(cprev, j), lanes), at(row, b.CreateAdd(j, i32(H))), lanes);
            }
          });
        },
        "active");
  }

  // The cell at one step: the new state from the previous one into `row`.
  void cell(int d, Value *time, Value *bb, Value *part, Value *row, Value *hprev, Value *cprev) {
    const std::vector<ExprP> &act = r.act[d];
    const SlotRef &X = slots[0];
    Value *xrow = at(fptr(X), offset(X, {time, bb, i32((int64_t)d * G * H)}));
    auto xg = [&](int g, Value *j, int lanes) { return load_vec(at(xrow, b.CreateAdd(j, i32(g * H))), lanes); };
    auto param = [&](int slot, int64_t per_d, int64_t off, Value *j, int lanes) {
      return load_vec(at(fptr(slots[slot]), b.CreateAdd(j, i32(d * per_d + off))), lanes);
    };

    QState qprev = q8 ? quantize(hprev, qbytes(row)) : QState{};
    if (r.cell == CellKind::GRU && !r.linear_before_reset) {
      // Pass 1: z and r * h_{t-1} into the row's scratch part.
      groups(part, [&](Value *j0, int nv, int last) {
        Values a = products(d, hprev, qprev, j0, {0, 1}, nv);
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
      QState qrh = q8 ? quantize(rh, qbytes(row)) : QState{};
      groups(part, [&](Value *j0, int nv, int last) {
        Values a = products(d, rh, qrh, j0, {2}, nv);
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
    groups(part, [&](Value *j0, int nv, int last) {
      Values a = products(d, hprev, qprev, j0, gates, nv);
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

  // Step st (0 .. T-1 in the direction's order) of direction d, every
  // batch entry, the units of `part` (or all).
  void time_step(int d, Value *st, Value *part) {
    bool rev = r.reverse || d == 1;
    Value *time = rev ? b.CreateSub(b.CreateSub(steps, i32(1)), st) : st;
    // With a run-time T the proof cannot relate T - 1 - st to st < T: the
    // clamp (the identity) bounds it.
    if (rev && !llvm::isa<llvm::Constant>(steps)) time = clamp_i32(b, time, 0, r.T - 1);
    Value *prev = rev ? b.CreateAdd(time, i32(1)) : b.CreateSub(time, i32(1));
    Value *first = b.CreateICmpEQ(st, i32(0));
    // At the first step `prev` is out of range: the select picks the
    // initial state. The pointer is formed from prev clamped into the
    // steps (clamp_i32), so that the bounds proof bounds it.
    prev = clamp_i32(b, prev, 0, r.T - 1);
    emit_counted_loop(
        b, i32(0), i32(r.B), [&](Value *bb) { step(d, time, prev, first, bb, part); }, "batch");
  }

  void direction(int d) {
    emit_counted_loop(
        b, i32(0), steps, [&](Value *st) { time_step(d, st, nullptr); }, "time");
  }

  // A split layer (split_recurrent): every task of direction d walks the
  // steps; at step st it waits until all parts of step st - 1 are done
  // (the count of done parts reaches st * parts), then claims parts of
  // step st, its own part (task % parts) first, by moving that part's
  // claimed-step counter from st to st + 1, computes the parts it claimed
  // and counts them done. A thread keeps its own part from step to step
  // (its share of R stays in its cache) and takes the others' parts when
  // their threads are late or absent, so any number of threads (one
  // included) finishes: a thread waits only for parts of an earlier step,
  // all of which were claimed (it tried them) by threads that compute
  // without waiting. Each part is computed the same way whichever thread
  // takes it.
  void split_direction(int d, Value *home) {
    Value *words = b.CreateBitCast(slots[r.sync].base, b.getInt32Ty()->getPointerTo());
    auto word = [&](int64_t line) { return b.CreateGEP(b.getInt32Ty(), words, i32(r.sync_word(d, line))); };
    Value *done = word(r.parts);
    Value *claimed = word(0);
    llvm::Function *f = b.GetInsertBlock()->getParent();
    llvm::LLVMContext &cx = b.getContext();
    emit_counted_loop(
        b, i32(0), steps,
        [&](Value *st) {
          auto *wait = llvm::BasicBlock::Create(cx, "wait", f), *relax = llvm::BasicBlock::Create(cx, "relax", f),
               *ready = llvm::BasicBlock::Create(cx, "ready", f);
          Value *need = b.CreateMul(st, i32(r.parts));
          b.CreateBr(wait);
          b.SetInsertPoint(wait);
          auto *seen = b.CreateAlignedLoad(b.getInt32Ty(), done, llvm::Align(4));
          seen->setAtomic(llvm::AtomicOrdering::Acquire);
          b.CreateCondBr(b.CreateICmpUGE(seen, need), ready, relax);
          b.SetInsertPoint(relax);
          spin_hint();
          b.CreateBr(wait);
          b.SetInsertPoint(ready);
          emit_counted_loop(
              b, i32(0), i32(r.parts),
              [&](Value *i) {
                Value *q = b.CreateURem(b.CreateAdd(home, i), i32(r.parts));
                Value *counter = b.CreateGEP(b.getInt32Ty(), claimed, b.CreateMul(q, i32(RecurrentSpec::kSyncLine)));
                Value *won = b.CreateExtractValue(
                    b.CreateAtomicCmpXchg(counter, st, b.CreateAdd(st, i32(1)), llvm::MaybeAlign(4),
                                          llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic),
                    1);
                emit_branch(
                    b, won,
                    [&] {
                      time_step(d, st, q);
                      b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, done, i32(1), llvm::MaybeAlign(4),
                                        llvm::AtomicOrdering::Release);
                    },
                    [] {}, "claimed");
              },
              "claim");
        },
        "time");
  }

  // A hint that this thread is spinning (x86 pause, ARM yield).
  void spin_hint() {
    if (T.arch == TINYRT_ARCH_X86_64)
      b.CreateIntrinsic(llvm::Intrinsic::x86_sse2_pause, {}, {});
    else if (T.arch == TINYRT_ARCH_AARCH64)
      b.CreateIntrinsic(llvm::Intrinsic::aarch64_hint, {}, {i32(1)});
    else
      b.CreateIntrinsic(llvm::Intrinsic::arm_hint, {}, {i32(1)});
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    for (int v : k.ins) slots.push_back(slot_for(env, b, arena, v));
    S = slot_for(env, b, arena, k.out);
    // The time steps: T, or the run's sequence length (a run-time extent
    // of the state sequence's axis 0).
    steps = i32(r.T);
    if (env.program.graph.v(k.out).dim(0) >= 0) steps = extent_value(env, b, load_dims(env, b, arena), k.out, 0);
    if (q8) {
      rq = env.const_data(r.packed);
      rscale = b.CreateBitCast(env.const_data(r.packed_scale), f32->getPointerTo());
      if (r.packed_start >= 0) rstart = b.CreateBitCast(env.const_data(r.packed_start), b.getInt32Ty()->getPointerTo());
    } else {
      rel = float_weight_type(b, env.program, r.packed);
      rp = b.CreateBitCast(env.const_data(r.packed), rel->getPointerTo());
    }
    zeros = zero_floats(env, b, Hp, name);
    // Tasks: a direction each, or with parts, `parts` tasks per direction
    // that share its steps (split_direction).
    emit_counted_loop(
        b, f->getArg(1), f->getArg(2),
        [&](Value *t) {
          auto run = [&](int d) { r.parts > 1 ? split_direction(d, b.CreateURem(t, i32(r.parts))) : direction(d); };
          if (r.D == 1)
            run(0);
          else
            emit_branch(
                b, b.CreateICmpULT(t, i32(r.parts)), [&] { run(0); }, [&] { run(1); }, "dir");
        },
        "task");
    b.CreateRetVoid();
    return {f, (int64_t)r.D * r.parts};
  }
};

}  // namespace

EmittedKernel emit_recurrent_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  RecurrentEmitter e(env, k);
  return e.emit(name);
}

}  // namespace tinyrt
