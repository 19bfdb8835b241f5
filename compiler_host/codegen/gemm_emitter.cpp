// gemm_emitter.cpp — convolutions and matrix products over packed weights.
//
// out(pixel, oc) = epilogue(sum over (kh, kw, ic) of X(pixel, kh, kw, ic) *
// W(kh, kw, ic, oc)). A register tile holds `mr` pixels x `nv` vectors of
// output channels; the ic loop does nv weight loads, mr broadcasts and
// mr*nv FMAs. Weights are packed at compile time as
// [group][oc tile][kh*kw][ic][nr] (nr = nv * lanes, zero padded), so the
// loop reads them sequentially. The epilogue (bias, activation, residual,
// ...) runs on the accumulators before the only store.
//
// How a tile finds its input pixels decides register pressure, so there
// are three addressing modes:
//  * linear  (1x1, stride 1, no padding, dense input): pixel i of a tile is
//    base + i * pixel_stride — any run of pixels, even across rows;
//  * row     (a run of pixels in one output row whose windows lie inside
//    the input): one base pointer per (kh, kw), constant offsets per pixel;
//  * general (border tiles): per-pixel pointers; pixels in the padding read
//    a zero row (or are masked when channels are strided).
// Without the linear mode, tiles follow output rows (a row's tail tile has
// the static width OW % mr) and each tile picks row or general at run time.
// Tasks are (group, oc tile, block of pixel tiles or of rows).
#include "codegen/kernel_emitters.h"

#include <llvm/IR/Intrinsics.h>

namespace tinyrt {

namespace {

using llvm::Value;

enum class Mode { Linear, Row, General };

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
  Value *xbase = nullptr, *weights = nullptr, *zero_row = nullptr;
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

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }
  Value *xptr(Value *elem_offset) { return b.CreateGEP(f32, xbase, elem_offset); }

  // The pixels of one tile: where the epilogue writes them and where the
  // ic loop reads their inputs.
  struct TileSpec {
    Mode mode;
    int m;             // pixels
    Value *n, *oh;     // Row/General: the output row
    Value *ow0;        // Row/General: first pixel's column
    Value *p0;         // Linear: first pixel's linear index
  };

  // Output coordinates of pixel i (for the epilogue's index variables).
  void coords(const TileSpec &t, int i, Value **n, Value **oh, Value **ow) {
    if (t.mode != Mode::Linear) {
      *n = t.n;
      *oh = t.oh;
      *ow = b.CreateAdd(t.ow0, i32(i));
      return;
    }
    Value *p = b.CreateAdd(t.p0, i32(i));
    *ow = b.CreateURem(p, i32(s.out_w));
    Value *r = b.CreateUDiv(p, i32(s.out_w));
    *oh = b.CreateURem(r, i32(s.out_h));
    *n = b.CreateUDiv(r, i32(s.out_h));
  }

  void tile(const TileSpec &t, Value *g, Value *wtile, Value *oc0, int nvv, int last_lanes) {
    int m = t.m;
    Value *gbase = b.CreateMul(g, i32(ICg * xs[1]));
    Values acc(m * nvv, llvm::Constant::getNullValue(vf32));
    bool contiguous = xs[1] == 1;
    // Row/General: element offset of the window origin of pixel 0.
    Value *ih0 = nullptr, *iw0 = nullptr, *origin = nullptr;
    if (t.mode == Mode::Linear) {
      origin = b.CreateAdd(b.CreateMul(t.p0, i32(xs[3])), gbase);
    } else {
      ih0 = b.CreateSub(b.CreateMul(t.oh, i32(s.stride_h)), i32(s.pad_t));
      iw0 = b.CreateSub(b.CreateMul(t.ow0, i32(s.stride_w)), i32(s.pad_l));
      origin = b.CreateAdd(b.CreateMul(t.n, i32(xs[0])), gbase);
    }
    acc = carried_loop(b, 0, s.k_h, 1, acc, [&](Value *kh, const Values &a0) {
      return carried_loop(b, 0, s.k_w, 1, a0, [&](Value *kw, const Values &a1) {
        // x(i, ic): pointer to pixel i's channel 0 and, in General mode
        // with strided channels, whether it is inside the input.
        Values row, valid;
        if (t.mode == Mode::Linear) {
          Value *base = xptr(origin);
          for (int i = 0; i < m; ++i) row.push_back(b.CreateGEP(f32, base, i32(i * xs[3])));
        } else {
          Value *ih = b.CreateAdd(ih0, b.CreateMul(kh, i32(s.dil_h)));
          Value *iwk = b.CreateAdd(iw0, b.CreateMul(kw, i32(s.dil_w)));
          Value *roff = b.CreateAdd(origin, b.CreateAdd(b.CreateMul(ih, i32(xs[2])), b.CreateMul(iwk, i32(xs[3]))));
          Value *base = xptr(roff);
          if (t.mode == Mode::Row) {
            for (int i = 0; i < m; ++i) row.push_back(b.CreateGEP(f32, base, i32(i * s.stride_w * xs[3])));
          } else {
            Value *row_ok = b.CreateICmpULT(ih, i32(s.in_h));
            for (int i = 0; i < m; ++i) {
              Value *iw = b.CreateAdd(iwk, i32(i * s.stride_w));
              Value *ok = b.CreateAnd(row_ok, b.CreateICmpULT(iw, i32(s.in_w)));
              Value *ptr = b.CreateGEP(f32, base, i32(i * s.stride_w * xs[3]));
              if (contiguous) {
                ptr = b.CreateSelect(ok, ptr, zero_row);
              } else {
                ptr = b.CreateSelect(ok, ptr, xbase);
                valid.push_back(ok);
              }
              row.push_back(ptr);
            }
          }
        }
        Value *kk = b.CreateAdd(b.CreateMul(kh, i32(s.k_w)), kw);
        Value *wk = b.CreateGEP(f32, wtile, b.CreateMul(kk, i32(ICg * NR)));
        auto step = [&](Value *ic, Values a) {
          Values w;
          for (int j = 0; j < nvv; ++j) {
            Value *wp = b.CreateGEP(f32, wk, b.CreateAdd(b.CreateMul(ic, i32(NR)), i32(j * L)));
            w.push_back(b.CreateAlignedLoad(vf32, b.CreateBitCast(wp, vf32->getPointerTo()), llvm::Align(L * 4)));
          }
          Value *icoff = contiguous ? ic : b.CreateMul(ic, i32(xs[1]));
          for (int i = 0; i < m; ++i) {
            Value *x = b.CreateAlignedLoad(f32, b.CreateGEP(f32, row[i], icoff), llvm::Align(4));
            if (!valid.empty()) x = b.CreateSelect(valid[i], x, llvm::ConstantFP::get(f32, 0.0));
            Value *xv = b.CreateVectorSplat(L, x);
            for (int j = 0; j < nvv; ++j)
              a[i * nvv + j] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vf32}, {xv, w[j], a[i * nvv + j]});
          }
          return a;
        };
        // The ic loop, unrolled by U, then its remainder.
        const int U = std::max(1, s.unroll);
        int64_t main_end = ICg / U * U;
        Values a2 = carried_loop(b, 0, main_end, U, a1, [&](Value *ic, const Values &av) {
          Values cur = av;
          for (int u = 0; u < U; ++u) cur = step(b.CreateAdd(ic, i32(u)), cur);
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
      Value *n, *oh, *ow;
      coords(t, i, &n, &oh, &ow);
      for (int j = 0; j < nvv; ++j)
        store_epilogue(em, s, out, n, oh, ow, b.CreateAdd(oc0, i32(j * L)), acc[i * nvv + j],
                       j == nvv - 1 ? last_lanes : L);
    }
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    slots = scheduled_slots(env, b, arena, k);
    X = slots.at(0);
    out = slot_for(env, b, arena, k.out);
    for (int rl = 0; rl < 4; ++rl) {
      xs[rl] = s.in_axis[rl] >= 0 ? X.strides[s.in_axis[rl]] : 0;
      os[rl] = s.out_axis[rl] >= 0 ? out.strides[s.out_axis[rl]] : 0;
    }
    TINYRT_CHECK(os[1] == 1, "GEMM output channels must be contiguous");
    if (ICg == 1) xs[1] = 1;  // one input channel: its stride never matters
    xbase = b.CreateBitCast(X.base, f32->getPointerTo());
    weights = b.CreateBitCast(env.const_data(s.packed), f32->getPointerTo());
    if (xs[1] == 1) zero_row = zero_floats(env, b, ICg, name);
    // Linear addressing: consecutive pixels are consecutive input pixels.
    bool linear = s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_t == 0 &&
                  s.pad_l == 0 && s.in_h == s.out_h && s.in_w == s.out_w && xs[2] == s.in_w * xs[3] &&
                  (s.batch == 1 || xs[0] == s.in_h * xs[2]);
    int last_cols = (int)(OCg - (OCt - 1) * NR);  // channels in the last oc tile
    int64_t units = linear ? (P + mr - 1) / mr : s.batch * s.out_h;  // pixel tiles, or output rows
    int64_t want = std::max<int64_t>(1, (64 + G * OCt - 1) / (G * OCt));
    int64_t per_block = (units + std::min(units, want) - 1) / std::min(units, want);
    int64_t blocks = (units + per_block - 1) / per_block;
    int64_t tasks = G * OCt * blocks;

    emit_counted_loop(b, f->getArg(1), f->getArg(2), [&](Value *t) {
      Value *blk = b.CreateURem(t, i32(blocks));
      Value *rest = b.CreateUDiv(t, i32(blocks));
      Value *oct = b.CreateURem(rest, i32(OCt));
      Value *g = b.CreateUDiv(rest, i32(OCt));
      Value *wtile = b.CreateGEP(f32, weights, b.CreateMul(b.CreateAdd(b.CreateMul(g, i32(OCt)), oct), i32(KK * ICg * NR)));
      Value *oc0 = b.CreateAdd(b.CreateMul(g, i32(OCg)), b.CreateMul(oct, i32(NR)));
      Value *u_begin = b.CreateMul(blk, i32(per_block));
      Value *u_end = b.CreateAdd(u_begin, i32(per_block));
      u_end = b.CreateSelect(b.CreateICmpSLT(u_end, i32(units)), u_end, i32(units));
      auto columns = [&](int nvv, int lanes_last) {
        if (linear) {
          // Tiles of mr pixels; only the very last one may be shorter.
          int rem = (int)(P % mr);
          Value *full_end = rem ? b.CreateSelect(b.CreateICmpEQ(u_end, i32(units)), i32(units - 1), u_end) : u_end;
          emit_counted_loop(b, u_begin, full_end, [&](Value *it) {
            tile({Mode::Linear, mr, nullptr, nullptr, nullptr, b.CreateMul(it, i32(mr))}, g, wtile, oc0, nvv, lanes_last);
          }, "ptile");
          if (rem) {
            emit_branch(b, b.CreateICmpEQ(u_end, i32(units)), [&] {
              tile({Mode::Linear, rem, nullptr, nullptr, nullptr, i32((units - 1) * mr)}, g, wtile, oc0, nvv, lanes_last);
            }, [] {}, "ptail");
          }
          return;
        }
        emit_counted_loop(b, u_begin, u_end, [&](Value *r) {
          Value *n = b.CreateUDiv(r, i32(s.out_h));
          Value *oh = b.CreateURem(r, i32(s.out_h));
          auto run = [&](Value *ow0, int m) {
            emit_branch(b, window_interior(b, s, oh, ow0, m),
                   [&] { tile({Mode::Row, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last); },
                   [&] { tile({Mode::General, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last); }, "tile");
          };
          emit_counted_loop(b, i32(0), i32(s.out_w / mr), [&](Value *it) { run(b.CreateMul(it, i32(mr)), mr); }, "owtile");
          if (s.out_w % mr) run(i32(s.out_w / mr * mr), (int)(s.out_w % mr));
        }, "row");
      };
      if (last_cols == NR) {
        columns(nv, L);
      } else {
        int nvv = (last_cols + L - 1) / L;
        emit_branch(b, b.CreateICmpEQ(oct, i32(OCt - 1)), [&] { columns(nvv, last_cols - (nvv - 1) * L); },
               [&] { columns(nv, L); }, "octile");
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
