// winograd_weights_emitter.cpp — a Winograd convolution's weights
// transformed at run time (KernelKind::WinogradWeights, passes/winograd.cpp):
// for a chunk of output channels [c0, c0 + channels), U = G g G^T of every
// (oc, ic) in float, stored in the grouped GEMM's packed layout
// [a*a][oc tile][IC][nr] (nr: the GEMM's tile, gemm.nr), which the GEMM
// after it reads as it reads constant packed weights (GemmSpec::arena_packed).
//
// The 3x3 weights are a constant [IC][9][OC]: L output channels of one
// input channel and tap are one vector load, and the transform is a few
// linear combinations of vectors with G's constant coefficients (columns
// of the kernel, then rows; linear_transform shares G's row pairs). The
// last oc tile's channels past the chunk are stored as zeros (the GEMM's
// padding). Tasks are blocks of input channels.
//
// int8 (the 3x3 weights int8, U int16: passes/winograd.cpp): U = (2G) g
// (2G)^T in 16-bit lanes, exact integers, stored as the int16 GEMM's quads
// [a*a][oc tile][input channel pair][nr][2]. The 3x3 bytes come with the
// two input channels of a pair interleaved per output channel ([chunk]
// [pair][9][per][2], an odd last channel's partner zeros), so each vector
// holds half as many output channels' two input channels, transformed
// together (the transform is linear) and stored as loaded: no shuffles.
// Tasks are blocks of input channel pairs.
#include "codegen/kernel_emitters.h"

namespace tinyrt {

namespace {

// Tasks over blocks of `units` (input channels, or pairs of them): per
// unit, `fn` on each vector of L output channels of the chunk's full oc
// tiles, then of its last tile (lanes past the chunk 0: its zeros).
int64_t chunk_tasks(llvm::IRBuilder<> &b, llvm::Function *f, int64_t units, int64_t occ, int64_t NR, int L,
                    const std::function<void(llvm::Value *, llvm::Value *, int64_t, int)> &fn, const char *name) {
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };
  const int64_t full = occ / NR, rest = occ % NR;
  return emit_row_block_tasks(b, f, units, [&](llvm::Value *u0, llvm::Value *u1) {
    emit_counted_loop(
        b, u0, u1,
        [&](llvm::Value *ui) {
          llvm::Value *u = clamp_i32(b, ui, 0, units - 1);  // u0 <= ui < u1 <= units: clamp_i32
          if (full > 0)
            emit_counted_loop(
                b, i32(0), i32(full),
                [&](llvm::Value *oti) {
                  llvm::Value *ot = clamp_i32(b, oti, 0, full - 1);  // (the loop's bounds)
                  for (int64_t r0 = 0; r0 < NR; r0 += L) fn(u, ot, r0, L);
                },
                "ot");
          if (rest > 0)  // the last oc tile: its channels past the chunk are zeros
            for (int64_t r0 = 0; r0 < NR; r0 += L)
              fn(u, i32(full), r0, (int)std::max<int64_t>(0, std::min<int64_t>(L, rest - r0)));
        },
        name);
  });
}

// int8: see above.
EmittedKernel emit_int8(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Function *f, const Kernel &k, const SlotRef &R,
                        const SlotRef &U, int L, int64_t OCt, llvm::Value *c0, int64_t plane) {
  const GemmSpec &s = k.gemm;
  const WinogradMatrices &mx = winograd_matrices(k.wino.m);
  const int a = mx.a();
  const int64_t IC = s.in_c, OC = s.out_c, occ = k.wino.channels, NR = s.nr, pairs = (IC + 1) / 2;
  // [chunk][pairs][9][per][2]: this chunk's block (c0 a multiple of per).
  const Shape &rs = env.program.graph.v(k.ins[0]).shape;
  TINYRT_CHECK(rs.size() == 5 && rs[1] == pairs && rs[2] == 9 && rs[3] >= occ && rs[4] == 2 && rs[0] * rs[3] >= OC &&
                   R.strides == std::vector<int64_t>({pairs * 9 * rs[3] * 2, 9 * rs[3] * 2, rs[3] * 2, 2, 1}),
               "int8 Winograd 3x3 weights not laid out [chunk, IC / 2, 9, per, 2]");
  const int64_t per = rs[3];
  llvm::Value *block =
      b.CreateMul(b.CreateUDiv(c0, b.getInt32((int32_t)per)), b.getInt32((int32_t)(pairs * 9 * per * 2)));
  L = NR % (2 * L) == 0 ? 2 * L : L;  // 16-bit lanes: a whole register where the tile allows
  const int H = L / 2;                // output channels per vector (two input channels each)
  auto *v8 = llvm::FixedVectorType::get(b.getInt8Ty(), L);
  auto *v16 = llvm::FixedVectorType::get(b.getInt16Ty(), L);
  std::vector<double> g2 = mx.g;  // 2G: integers
  for (double &x : g2) x *= 2;
  llvm::Value *rbase = b.CreateBitCast(R.base, b.getInt8PtrTy());
  llvm::Value *ubase = b.CreateBitCast(U.base, b.getInt16Ty()->getPointerTo());
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };
  // (2G) g (2G)^T of pair pr, output channels [ot * NR + o0, + H) (`valid`
  // of them; zeros past them), both input channels interleaved.
  auto transform = [&](llvm::Value *pr, llvm::Value *ot, int64_t o0, int valid) {
    std::vector<llvm::Value *> u((size_t)(a * a), llvm::Constant::getNullValue(v16));
    if (valid <= 0) return u;
    llvm::Value *at = b.CreateAdd(b.CreateAdd(b.CreateMul(pr, i32(9 * per * 2)), b.CreateAdd(block, i32(o0 * 2))),
                                  b.CreateMul(ot, i32(NR * 2)));
    std::vector<llvm::Value *> g(9);
    for (int tap = 0; tap < 9; ++tap)
      g[(size_t)tap] = b.CreateSExt(
          load_lanes(b, v8, b.CreateGEP(b.getInt8Ty(), rbase, b.CreateAdd(at, i32(tap * per * 2))), 2 * valid), v16);
    std::vector<std::vector<llvm::Value *>> gg(3);
    for (int v = 0; v < 3; ++v) gg[(size_t)v] = linear_transform(b, v16, g2, a, {g[v], g[3 + v], g[6 + v]});
    for (int x = 0; x < a; ++x) {
      std::vector<llvm::Value *> row = linear_transform(b, v16, g2, a, {gg[0][x], gg[1][x], gg[2][x]});
      for (int y = 0; y < a; ++y) u[(size_t)(x * a + y)] = row[(size_t)y];
    }
    return u;
  };
  // Output channels [r0, r0 + 2H) of pair pr (`lanes` of them valid), as
  // two vectors of H channels.
  auto pair_of = [&](llvm::Value *pr, llvm::Value *ot, int64_t r0, int lanes) {
    for (int h = 0; h < 2; ++h) {
      const int64_t o0 = r0 + (int64_t)h * H;
      std::vector<llvm::Value *> u = transform(pr, ot, o0, std::max(0, std::min(H, lanes - h * H)));
      for (int q = 0; q < a * a; ++q) {
        llvm::Value *off = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(ot, i32(pairs)), pr), i32(NR * 2)),
                                       i32(q * plane + o0 * 2));
        b.CreateAlignedStore(u[(size_t)q],
                             b.CreateBitCast(b.CreateGEP(b.getInt16Ty(), ubase, off), v16->getPointerTo()),
                             llvm::Align(4));
      }
    }
  };
  int64_t tasks = chunk_tasks(b, f, pairs, occ, NR, L, pair_of, "pair");
  b.CreateRetVoid();
  return {f, tasks};
}

}  // namespace

EmittedKernel emit_winograd_weights_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  const Target &T = env.target;
  const GemmSpec &s = k.gemm;
  const WinogradSpec &w = k.wino;
  const WinogradMatrices &mx = winograd_matrices(w.m);
  const int L = T.f32_lanes(), a = mx.a();
  const int64_t IC = s.in_c, OC = s.out_c, occ = w.channels, NR = s.nr;
  TINYRT_CHECK(NR > 0 && NR % L == 0 && occ > 0 && w.c0 >= 0 && w.c0 + occ <= OC,
               "Winograd weights chunk out of range");
  // The chunk's first output channel (a shared function's argument).
  llvm::Value *c0 = part_arg(env, b, 1, w.c0, 0, OC - occ);
  const int64_t OCt = (occ + NR - 1) / NR;
  const SlotRef R = slot_for(env, b, arena, k.ins[0]), U = slot_for(env, b, arena, k.out);
  const bool q = R.type == DType::I8;
  TINYRT_CHECK(q || (R.strides == std::vector<int64_t>({9 * OC, OC, 1}) && R.numel == IC * 9 * OC),
               "Winograd 3x3 weights not laid out [IC, 9, OC]");
  const int64_t ICp = q ? (IC + 1) / 2 * 2 : IC;  // int8: whole pairs
  // A plane: OCt * ICp * NR elements, then s.group_pad_bytes.
  const int64_t pad = s.group_pad_bytes / (q ? 2 : 4), plane = OCt * ICp * NR + pad;
  TINYRT_CHECK(U.numel == a * a * plane && U.span == U.numel && s.group_pad_bytes % 4 == 0 &&
                   (!q || (w.m == 2 && U.type == DType::I16)),
               "Winograd run-time weights not packed as their GEMM reads them");
  if (q) return emit_int8(env, b, f, k, R, U, L, OCt, c0, plane);
  llvm::Type *f32 = b.getFloatTy();
  auto *vf32 = llvm::FixedVectorType::get(f32, L);
  // The 3x3 weights float, or half (--weights fp16: widened as loaded).
  llvm::Type *rel = env.program.graph.v(k.ins[0]).dtype == DType::F16 ? b.getHalfTy() : f32;
  llvm::Value *rbase = b.CreateBitCast(R.base, rel->getPointerTo());
  llvm::Value *ubase = b.CreateBitCast(U.base, f32->getPointerTo());
  auto i32 = [&](int64_t v) { return b.getInt32((int32_t)v); };

  // Output channels [ot * NR + r0, + lanes) of the chunk, input channel ic.
  auto vector_of = [&](llvm::Value *ic, llvm::Value *ot, int64_t r0, int lanes) {
    std::vector<llvm::Value *> u((size_t)(a * a), llvm::Constant::getNullValue(vf32));
    if (lanes > 0) {
      llvm::Value *at =
          b.CreateAdd(b.CreateAdd(b.CreateMul(ic, i32(9 * OC)), b.CreateAdd(c0, i32(r0))), b.CreateMul(ot, i32(NR)));
      std::vector<llvm::Value *> g(9);
      for (int tap = 0; tap < 9; ++tap)
        g[(size_t)tap] =
            load_float_weights(b, T, rel, b.CreateGEP(rel, rbase, b.CreateAdd(at, i32(tap * OC))), L, lanes);
      // G g, a column of the kernel at a time (gg[v][x] = (G g)[x][v]), then
      // (G g) G^T a row at a time: G's row pairs share their work
      // (linear_transform).
      std::vector<std::vector<llvm::Value *>> gg(3);
      for (int v = 0; v < 3; ++v) gg[(size_t)v] = linear_transform(b, vf32, mx.g, a, {g[v], g[3 + v], g[6 + v]});
      for (int x = 0; x < a; ++x) {
        std::vector<llvm::Value *> row = linear_transform(b, vf32, mx.g, a, {gg[0][x], gg[1][x], gg[2][x]});
        for (int y = 0; y < a; ++y) u[(size_t)(x * a + y)] = row[(size_t)y];
      }
    }
    for (int q = 0; q < a * a; ++q) {
      llvm::Value *off =
          b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(ot, i32(IC)), ic), i32(NR)), i32(q * plane + r0));
      b.CreateAlignedStore(u[(size_t)q], b.CreateBitCast(b.CreateGEP(f32, ubase, off), vf32->getPointerTo()),
                           llvm::Align((uint64_t)L * 4));
    }
  };
  int64_t tasks = chunk_tasks(b, f, IC, occ, NR, L, vector_of, "ic");
  b.CreateRetVoid();
  return {f, tasks};
}

}  // namespace tinyrt
