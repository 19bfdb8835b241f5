// gemm_emitter.cpp — convolutions and matrix products over packed weights,
// in float (KernelKind::Gemm) and int8 (KernelKind::QGemm).
//
// out(pixel, oc) = epilogue(sum over (kh, kw, ic) of X(pixel, kh, kw, ic) *
// W(kh, kw, ic, oc)). A register tile holds `mr` pixels x `nv` vectors of
// output channels; the ic loop does nv weight loads, mr broadcasts and
// mr*nv FMAs. Weights are packed at compile time as
// [group][oc tile][kh*kw][ic][nr] (nr = nv * lanes, zero padded), so the
// loop reads them sequentially. The epilogue (bias, activation, residual,
// requantization, ...) runs on the accumulators before the only store.
//
// int8: the accumulators are int32 lanes and the ic loop steps over groups
// of 4 input channels: weights are packed [group][oc tile][kh*kw][ic/4]
// [nr][4] (int8), 4 input bytes are broadcast to every lane and each lane
// adds the 4-element dot product (target.dot_i8: vpdpbusd with AVX-512
// VNNI, sdot with Armv8.2 dot product, smull/vmull.s8 + sadalp/vpadal on
// other NEON CPUs, generic widening multiplies and pairwise adds
// elsewhere). Accumulators
// start at -x_zero * (sum of the channel's weights), so they hold
// sum (x - x_zero) * w; padding reads x_zero, i.e. contributes nothing.
//
// How a tile finds its input pixels decides register pressure, so there
// are three addressing modes:
//  * linear  (1x1, stride 1, no padding, dense input): pixel i of a tile is
//    base + i * pixel_stride — any run of pixels, even across rows;
//  * row     (a run of pixels in one output row whose windows lie inside
//    the input): one base pointer per (kh, kw), constant offsets per pixel;
//  * general (border tiles): per-pixel pointers; pixels in the padding read
//    a zero row (or are masked when channels are strided).
//  * span    (GemmSpec::span: windows, static sizes): tiles of mr pixels
//    in order across output rows, as in linear mode, each pixel with its
//    own window pointers as in general mode.
// Otherwise tiles follow output rows (a row's tail tile has the static
// width OW % mr) and each tile picks row or general at run time.
// Tasks are (group, oc tile, block of pixel tiles, rows or runs of a row),
// pixel blocks outermost when the input outweighs the weights (emit()).
//
// k_run: a kernel row's k_w * ICg inputs are contiguous in X and every
// window lies inside X, so every tile is a Row tile; the kw loop goes and a
// row is one K of k_w * ICg inputs. int8, few input channels
// (pad_conv_rows): X is a padded channels-last copy (3 RGB channels x 7
// taps: 21 bytes in 6 quads instead of 7 taps of one quad with a byte of
// padding each). float (pack_weights): an unpadded convolution over a
// dense channels-last X (an STFT's 400 taps of one channel: 100 lane
// quads on NEON instead of 400 one-channel steps).
#include <algorithm>
#include <map>
#include <tuple>

#include "codegen/address_proof.h"
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

enum class Mode { Linear, Row, General, Span };

struct GemmEmitter {
  EmitEnv &env;
  const Kernel &k;
  const GemmSpec &s;
  const Target &T;
  llvm::IRBuilder<> b;
  int L, mr, nv, NR;
  int64_t G, ICg, OCg, OCt, P, KK;
  bool q;       // int8 (QGemm)
  int64_t KW;   // kw taps the loops walk: k_w, or 1 when a kernel row is one K (k_run)
  int64_t ICp;  // inputs per packed tap: ICg, or k_w * ICg (k_run)
  int64_t ICk;  // ic steps of the inner loop: ICp, or groups of 4 (int8)
  std::vector<SlotRef> slots;
  SlotRef X, out;
  int64_t xs[4], os[4];  // strides per role n, c, h, w
  // Linear mode: the output's pixels are dense and the epilogue reads only
  // the channel index, so a pixel's linear index addresses it.
  bool flat_pixels = false;
  std::map<int, Value *> dimv_;  // run-time extents, loaded at the entry
  // Row mode with run-time extents (gemm_runtime_rows): the output row's
  // pixels, the output channels and the summed K, or null where fixed.
  Value *w_dyn_ = nullptr, *n_dyn_ = nullptr, *k_dyn_ = nullptr;
  // The ic loop prefetches the next output-channel tile's weights
  // (Target::prefetch_panel_layer_bytes; constant weights, several tiles).
  bool prefetch_next_ = false;
  // The input and output sizes of this run: constants, or run-time extents
  // (rows of run-time width w_dyn_, or run-time image sizes: rt_ then
  // points at them, gemm_runtime_spatial).
  RunSizes run_;
  const RunSizes *rt_ = nullptr;
  Value *xbase = nullptr, *weights = nullptr, *zero_row = nullptr, *qbias = nullptr;
  llvm::Type *f32, *vf32;
  llvm::Type *xel;   // element of X: float or i8
  llvm::Type *wel;   // element of the weights: float, half (--weights fp16) or i8
  llvm::Type *accv;  // accumulator vector: <L x float> or <L x i32>
  llvm::Type *wv;    // one weight vector: <L x float> or <4L x i8>

  GemmEmitter(EmitEnv &e, const Kernel &kk) : env(e), k(kk), s(kk.gemm), T(e.target), b(e.module.getContext()) {
    L = T.f32_lanes();
    mr = s.mr;
    NR = s.nr;
    nv = NR / L;
    G = s.groups;
    ICg = s.in_c / G;
    // int16 operands (GemmSpec::i16): X's bytes, two per channel.
    if (s.i16) ICg *= 2;
    OCg = s.out_c / G;
    OCt = (OCg + NR - 1) / NR;
    P = s.batch * s.out_h * s.out_w;
    f32 = b.getFloatTy();
    vf32 = llvm::FixedVectorType::get(f32, L);
    q = k.kind == KernelKind::QGemm;
    KW = s.k_run ? 1 : s.k_w;
    ICp = s.k_run ? s.k_w * ICg : ICg;
    KK = s.k_h * KW;
    ICk = q ? (ICp + 3) / 4 : ICp;
    // (--precision fp16: X stored as half, read by the half products only.)
    xel = q ? (llvm::Type *)b.getInt8Ty() : e.program.graph.v(kk.ins[0]).dtype == DType::F16 ? b.getHalfTy() : f32;
    wel = q || s.arena_weights || s.arena_packed ? xel : float_weight_type(b, e.program, s.packed);
    accv = q ? (llvm::Type *)llvm::FixedVectorType::get(b.getInt32Ty(), L) : vf32;
    wv = q ? (llvm::Type *)llvm::FixedVectorType::get(b.getInt8Ty(), 4 * L) : vf32;
  }

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }
  Value *xptr(Value *elem_offset) { return b.CreateGEP(xel, xbase, elem_offset); }
  // Weight elements per ic step and output channel: 1 float, 4 bytes, or
  // (int16 pairs over int8 weights, GemmSpec::w8) 2 bytes.
  int64_t wstep() const { return q ? (s.w8 ? 2 : 4) : 1; }
  // Bytes of one weight element.
  int64_t wel_bytes() const { return (int64_t)(wel->getPrimitiveSizeInBits() / 8); }

  // int8: the 4 input bytes of channels ic .. ic+3 at p (channel stride
  // xs[1]) as one i32; only `have` of them exist, the others read as 0 and
  // meet zero weights. Flipped to the dot product's signedness unless
  // `flip` is false.
  Value *x_quad(Value *p, int have, bool flip = true) {
    Value *v;
    if (have == 4 && xs[1] == 1) {
      v = b.CreateAlignedLoad(b.getInt32Ty(), b.CreateBitCast(p, b.getInt32Ty()->getPointerTo()), llvm::Align(1));
    } else {
      v = i32(0);
      for (int j = 0; j < have; ++j) {
        Value *byte =
            b.CreateZExt(b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), p, i32(j * xs[1]))), b.getInt32Ty());
        v = b.CreateOr(v, b.CreateShl(byte, (uint64_t)(8 * j)));
      }
    }
    return s.x_flip && flip ? b.CreateXor(v, i32(0x80808080u)) : v;
  }

  using Operand = DotOperand;
  Int8Dot dot() { return Int8Dot{b, T, L, s.pair16, X.type == DType::I8, s.madd, s.i16}; }

  // X's 4 bytes at p laid out for dot4 (Int8Dot::x_vec). `quad`: the bytes
  // already gathered and flipped (x_quad), or null to load them here.
  Operand x_vec(Value *p, int have, Value *quad) {
    if (quad) return dot().x_vec(quad);
    bool vflip = dot().flips_in_vector();
    return dot().x_vec(x_quad(p, have, !vflip), vflip && s.x_flip);
  }

  // acc + per lane the dot product of X's 4 bytes with the lane's 4
  // weight bytes (int8).
  Value *dot4(Value *acc, const Operand &xo, const Operand &w) { return dot().dot4(acc, xo, w); }

  // The pixels of one tile: where the epilogue writes them and where the
  // ic loop reads their inputs.
  struct TileSpec {
    Mode mode;
    int m;          // pixels
    Value *n, *oh;  // Row/General: the output row
    Value *ow0;     // Row/General: first pixel's column
    Value *p0;      // Linear/Span: first pixel's linear index
  };
  static bool by_index(Mode m) { return m == Mode::Linear || m == Mode::Span; }

  // Output coordinates of pixel i (for the epilogue's index variables).
  void coords(const TileSpec &t, int i, Value **n, Value **oh, Value **ow) {
    if (!by_index(t.mode)) {
      *n = t.n;
      *oh = t.oh;
      *ow = b.CreateAdd(t.ow0, i32(i));
      return;
    }
    Value *p = b.CreateAdd(t.p0, i32(i));
    if (flat_pixels) {  // pixel p is at p * os[3]: no divisions
      *n = *oh = i32(0);
      *ow = p;
      return;
    }
    pixel_coords(p, n, oh, ow);
  }
  // Output coordinates of the pixel with linear index p.
  void pixel_coords(Value *p, Value **n, Value **oh, Value **ow) {
    *ow = b.CreateURem(p, i32(s.out_w));
    Value *r = b.CreateUDiv(p, i32(s.out_w));
    *oh = b.CreateURem(r, i32(s.out_h));
    *n = b.CreateUDiv(r, i32(s.out_h));
  }

  void tile(const TileSpec &t, Value *g, Value *wtile, Value *oc0, int nvv, int last_lanes) {
    int m = t.m;
    // B packed per batch entry (n, oh): [batch][oc tile][K][nr]. Linear
    // mode only with one entry (gemm_tile_shape).
    if (s.arena_weights && t.mode != Mode::Linear)
      wtile = b.CreateGEP(wel, wtile,
                          b.CreateMul(b.CreateAdd(b.CreateMul(t.n, i32(s.out_h)), t.oh), i32(OCt * KK * ICk * NR)));
    Value *gbase = b.CreateMul(g, i32(ICg * xs[1]));
    Values acc(m * nvv, llvm::Constant::getNullValue(accv));
    // Half products (s.half): m * ceil(nvv / 2) half accumulators after the
    // float ones, added into them (flush_half) after at most half_chunk
    // products: once after the taps, after every few taps, or within a
    // tap, whichever is the widest that many products cover.
    const HalfFlush hflush = half_flush();
    if (s.half) acc.resize((size_t)(m * nvv + m * ((nvv + 1) / 2)), llvm::Constant::getNullValue(vhalf()));
    if (q && !s.i16)  // int8: start from -x_zero * (sum of the channel's weights); int16: x_zero is 0
      for (int j = 0; j < nvv; ++j) {
        // packed per oc tile: [group][OCt * NR]
        Value *at = b.CreateAdd(b.CreateAdd(b.CreateMul(g, i32(OCt * NR - OCg)), oc0), i32(j * L));
        Value *bj = dot().start(b.CreateAlignedLoad(
            accv, b.CreateBitCast(b.CreateGEP(b.getInt32Ty(), qbias, at), accv->getPointerTo()), llvm::Align(4)));
        for (int i = 0; i < m; ++i) acc[i * nvv + j] = bj;
      }
    bool contiguous = xs[1] == 1;
    // Row/General: element offset of the window origin of pixel 0.
    Value *ih0 = nullptr, *iw0 = nullptr, *origin = nullptr;
    // Span: each pixel's window origin (input row and column) and the
    // element offset of its batch entry.
    Values span_ih, span_iw, span_origin;
    if (t.mode == Mode::Linear) {
      origin = b.CreateAdd(b.CreateMul(t.p0, i32(xs[3])), gbase);
    } else if (t.mode == Mode::Span) {
      for (int i = 0; i < m; ++i) {
        Value *n, *oh, *ow;
        pixel_coords(b.CreateAdd(t.p0, i32(i)), &n, &oh, &ow);
        span_ih.push_back(b.CreateSub(b.CreateMul(oh, i32(s.stride_h)), i32(s.pad_t)));
        span_iw.push_back(b.CreateSub(b.CreateMul(ow, i32(s.stride_w)), i32(s.pad_l)));
        span_origin.push_back(b.CreateAdd(b.CreateMul(n, i32(xs[0])), gbase));
      }
    } else {
      ih0 = b.CreateSub(b.CreateMul(t.oh, i32(s.stride_h)), i32(s.pad_t));
      iw0 = b.CreateSub(b.CreateMul(t.ow0, i32(s.stride_w)), i32(s.pad_l));
      if (t.mode == Mode::Row) {  // every window inside X (window_interior, or k_run): see clamp_i32
        ih0 = clamp_i32(b, ih0, 0, s.in_h - 1 - (s.k_h - 1) * s.dil_h);
        iw0 = clamp_i32(b, iw0, 0, s.in_w - 1 - ((int64_t)(t.m - 1) * s.stride_w + (s.k_w - 1) * s.dil_w));
      }
      origin = b.CreateAdd(b.CreateMul(t.n, i32(xs[0])), gbase);
    }
    // One tap (kh, kw) of the kernel: every pixel's products with its
    // weights, added to the accumulators.
    auto tap = [&](Value *kh, Value *kw, const Values &a1) -> Values {
      // x(i, ic): pointer to pixel i's channel 0 and, in General mode
      // with strided channels, whether it is inside the input.
      Values row, valid;
      // Pixel i's pointer at input row ih, column iw of its batch entry's
      // `origin`; in the padding (or past the run's input size, with
      // run-time sizes) the zero row, or with strided channels any valid
      // pixel and `valid` false (see clamp_i32).
      // `bounded` (span mode): the coordinates capped unsigned instead of
      // clamped (negative ones, in the padding, take the last row or
      // column, which `ok` then masks): LLVM, knowing more of coordinates
      // divided out of a pixel index, would drop a clamp's lower half
      // where the address proof cannot follow (see clamp_i32).
      auto window = [&](Value *origin_i, Value *ih, Value *iw, bool bounded = false) {
        Value *ok = b.CreateAnd(b.CreateICmpULT(ih, run_.in_h), b.CreateICmpULT(iw, run_.in_w));
        auto cap = [&](Value *v, int64_t hi) {
          return bounded ? b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v, i32(hi)) : clamp_i32(b, v, 0, hi);
        };
        Value *at = b.CreateAdd(b.CreateAdd(origin_i, b.CreateMul(cap(ih, s.in_h - 1), i32(xs[2]))),
                                b.CreateMul(cap(iw, s.in_w - 1), i32(xs[3])));
        Value *ptr = xptr(at);
        if (contiguous) {
          row.push_back(b.CreateSelect(ok, ptr, zero_row));
        } else {
          row.push_back(b.CreateSelect(ok, ptr, xbase));
          valid.push_back(ok);
        }
      };
      if (t.mode == Mode::Linear) {
        Value *base = xptr(origin);
        for (int i = 0; i < m; ++i) row.push_back(b.CreateGEP(xel, base, i32(i * xs[3])));
      } else if (t.mode == Mode::Span) {
        Value *dh = b.CreateMul(kh, i32(s.dil_h)), *dw = b.CreateMul(kw, i32(s.dil_w));
        for (int i = 0; i < m; ++i)
          window(span_origin[(size_t)i], b.CreateAdd(span_ih[(size_t)i], dh), b.CreateAdd(span_iw[(size_t)i], dw),
                 true);
      } else {
        Value *ih = b.CreateAdd(ih0, b.CreateMul(kh, i32(s.dil_h)));
        Value *iwk = b.CreateAdd(iw0, b.CreateMul(kw, i32(s.dil_w)));
        if (t.mode == Mode::Row) {
          Value *base =
              xptr(b.CreateAdd(origin, b.CreateAdd(b.CreateMul(ih, i32(xs[2])), b.CreateMul(iwk, i32(xs[3])))));
          for (int i = 0; i < m; ++i) row.push_back(b.CreateGEP(xel, base, i32(i * s.stride_w * xs[3])));
        } else {
          // Pixels in the padding read a zero row: their pointers are
          // formed from clamped coordinates (see clamp_i32).
          // (Past the run's input size, with run-time sizes, is padding too.)
          for (int i = 0; i < m; ++i) window(origin, ih, b.CreateAdd(iwk, i32(i * s.stride_w)));
        }
      }
      Value *kk = b.CreateAdd(b.CreateMul(kh, i32(KW)), kw);
      Value *wk = b.CreateGEP(wel, wtile, b.CreateMul(kk, i32(ICk * NR * wstep())));
      if (q) return qsteps(row, valid, wk, nvv, a1);
      if (s.half) return half_tap(row, valid, wk, nvv, a1, hflush == HalfFlush::Chunk);
      // The nvv weight vectors of input channel ic.
      auto weights_of = [&](Value *ic) {
        Values w;
        for (int j = 0; j < nvv; ++j) {
          Value *wp = b.CreateGEP(wel, wk, b.CreateAdd(b.CreateMul(ic, i32(NR)), i32(j * L)));
          w.push_back(load_float_weights(b, T, wel, wp, L, L, true));
        }
        return w;
      };
      // The next output-channel tile's weights at this step's place in
      // its panel, into L2 (Target::prefetch_panel_layer_bytes): a line per
      // 64 bytes of this step's weights.
      auto prefetch_next_panel = [&](Value *ic) {
        if (!prefetch_next_) return;
        const int64_t panel = KK * ICk * NR * wstep() * wel_bytes(), bytes = NR * wstep() * wel_bytes();
        Value *here = b.CreatePointerCast(b.CreateGEP(wel, wk, b.CreateMul(ic, i32(NR))), b.getInt8PtrTy());
        for (int64_t off = 0; off < bytes; off += 64)
          b.CreateIntrinsic(llvm::Intrinsic::prefetch, {b.getInt8PtrTy()},
                            {b.CreateGEP(b.getInt8Ty(), here, i32(panel + off)), i32(0), i32(2), i32(1)});
      };
      auto step = [&](Value *ic, Values a) {
        Values w = weights_of(ic);
        prefetch_next_panel(ic);
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
      const bool quads = T.gemm_lane_mac != Target::LaneMac::None && contiguous && L == 4 && ICp >= 4;
      auto quad = [&](Value *ic, const Values &av) {
        Values a = av;
        Values xq;
        for (int i = 0; i < m; ++i)
          xq.push_back(b.CreateAlignedLoad(vf32, b.CreateBitCast(b.CreateGEP(f32, row[i], ic), vf32->getPointerTo()),
                                           llvm::Align(4)));
        for (int u = 0; u < 4; ++u) {
          Values w = weights_of(b.CreateAdd(ic, i32(u)));
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < nvv; ++j) a[i * nvv + j] = lane_mac(b, T, a[i * nvv + j], w[j], xq[i], u);
        }
        return a;
      };
      const int U = std::max(1, s.unroll);
      auto unrolled = [&](Value *ic, const Values &av) {
        Values cur = av;
        for (int u = 0; u < U; ++u) cur = step(b.CreateAdd(ic, i32(u)), cur);
        return cur;
      };
      if (k_dyn_) {  // a run-time K: the same loops with run-time trip counts
        Value *qe = i32(0);
        Values aq = a1;
        if (quads) {
          Value *nq = b.CreateUDiv(k_dyn_, i32(4));
          aq = carried_loop(
              b, i32(0), nq, aq, [&](Value *q, const Values &av) { return quad(b.CreateMul(q, i32(4)), av); }, "icq");
          qe = b.CreateMul(nq, i32(4));
        }
        Value *nu = b.CreateUDiv(b.CreateSub(k_dyn_, qe), i32(U));
        Values a2 = carried_loop(
            b, i32(0), nu, aq,
            [&](Value *j, const Values &av) { return unrolled(b.CreateAdd(qe, b.CreateMul(j, i32(U))), av); }, "ic");
        return carried_loop(
            b, b.CreateAdd(qe, b.CreateMul(nu, i32(U))), k_dyn_, a2,
            [&](Value *ic, const Values &av) { return step(ic, av); }, "ic.rem");
      }
      // NEON: 4 channels of each pixel per vector load, multiplied by
      // lane (Target::gemm_lane_mac).
      int64_t quad_end = 0;
      Values aq = a1;
      if (quads) {
        quad_end = ICp / 4 * 4;
        aq = carried_loop(b, 0, quad_end, 4, aq, quad, "icq");
      }
      // The ic loop (k_run: a kernel row's k_w * ICg inputs), unrolled by
      // U, then its remainder.
      int64_t main_end = quad_end + (ICp - quad_end) / U * U;
      Values a2 = carried_loop(b, quad_end, main_end, U, aq, unrolled, "ic");
      return carried_loop(
          b, main_end, ICp, 1, a2, [&](Value *ic, const Values &av) { return step(ic, av); }, "ic.rem");
    };
    if (s.half && hflush == HalfFlush::Taps) {
      // Half sums into float after every g taps (g * ICp <= half_chunk
      // products): the taps as one loop in groups of g, then the rest.
      const int64_t g = T.half_chunk / ICp, groups = KK / g;
      auto group = [&](Value *kk0, int64_t n, const Values &av) {
        return flush_half(m, nvv,
                          carried_loop(
                              b, 0, n, 1, av,
                              [&](Value *j, const Values &v) {
                                Value *kk = b.CreateAdd(kk0, j);
                                return tap(b.CreateUDiv(kk, i32(KW)), b.CreateURem(kk, i32(KW)), v);
                              },
                              "tap"));
      };
      acc = carried_loop(
          b, 0, groups, 1, acc, [&](Value *gi, const Values &v) { return group(b.CreateMul(gi, i32(g)), g, v); },
          "taps");
      if (KK % g) acc = group(i32(groups * g), KK % g, acc);
    } else {
      acc = carried_loop(
          b, 0, s.k_h, 1, acc,
          [&](Value *kh, const Values &a0) {
            return carried_loop(
                b, 0, KW, 1, a0, [&](Value *kw, const Values &a1) { return tap(kh, kw, a1); }, "kw");
          },
          "kh");
    }
    if (s.half) {
      if (hflush == HalfFlush::All) acc = flush_half(m, nvv, acc);
      acc.resize((size_t)(m * nvv));
    }

    // Epilogue and store.
    ExprEmitter em(b, T, L);
    em.set_slots(slots);
    if (!dimv_.empty()) em.set_dims([&](int sym) { return dimv_.at(sym); });
    for (int i = 0; i < m; ++i) {
      Value *n, *oh, *ow;
      coords(t, i, &n, &oh, &ow);
      for (int j = 0; j < nvv; ++j)
        store_epilogue(em, s, out, n, oh, ow, b.CreateAdd(oc0, i32(j * L)),
                       q ? dot().finish(acc[i * nvv + j]) : acc[i * nvv + j], j == nvv - 1 ? last_lanes : L);
    }
  }

  // --precision fp16 (s.half): where the half sums go into the float ones.
  // All: once after the taps (KK * ICp <= half_chunk); Taps: after every
  // half_chunk / ICp taps (at least 2); Chunk: within each tap, after every
  // half_chunk channels.
  enum class HalfFlush { All, Taps, Chunk };
  HalfFlush half_flush() const {
    const int64_t C = T.half_chunk;
    return KK * ICp <= C ? HalfFlush::All : 2 * ICp <= C ? HalfFlush::Taps : HalfFlush::Chunk;
  }
  llvm::FixedVectorType *vhalf() { return llvm::FixedVectorType::get(b.getHalfTy(), (unsigned)T.half_lanes()); }

  // The half accumulators (after the m * nvv float ones in a) added into
  // the float ones, and zero again: each half vector's 8 lanes are two
  // float vectors (fcvtl, fcvtl2).
  Values flush_half(int m, int nvv, Values a) {
    const int nvh = (nvv + 1) / 2;
    for (int i = 0; i < m; ++i)
      for (int jh = 0; jh < nvh; ++jh) {
        Value *&h = a[(size_t)(m * nvv + i * nvh + jh)];
        for (int p = 0; p < 2 && 2 * jh + p < nvv; ++p) {
          std::vector<int> lanes(L);
          for (int l = 0; l < L; ++l) lanes[l] = p * L + l;
          Value *part = b.CreateFPExt(b.CreateShuffleVector(h, lanes), vf32);
          Value *&f = a[(size_t)(i * nvv + 2 * jh + p)];
          f = b.CreateFAdd(f, part);
        }
        h = llvm::Constant::getNullValue(vhalf());
      }
    return a;
  }

  // One tap's products in half (s.half): X's channels [0, ICp) of every
  // pixel rounded to half, 8 at a time (two loads, fcvtn, fcvtn2) when they
  // are contiguous, each then multiplied by lane (fmla .8h by element)
  // with the 8-channel half weight vectors; `chunks`: summed into the
  // float accumulators after every half_chunk channels.
  Values half_tap(const Values &row, const Values &valid, Value *wk, int nvv, Values a, bool chunks) {
    const int m = (int)row.size(), nvh = (nvv + 1) / 2, HL = 2 * L;  // half lanes: two float vectors
    const size_t H = (size_t)(m * nvv);
    llvm::FixedVectorType *vh = vhalf();
    llvm::Type *half = b.getHalfTy();
    const bool octs = xs[1] == 1;     // contiguous channels (`valid` is only for strided ones)
    const bool xh = xel->isHalfTy();  // X stored as half (half_inputs): loaded as it is
    // The nvh weight vectors of channel ic + u: from the channel's row at
    // ic (one address), constant offsets after it (load immediates).
    auto weights_of = [&](Value *ic, int u) {
      Value *row0 = b.CreateGEP(half, wk, b.CreateMul(ic, i32(NR)));
      Values w;
      for (int jh = 0; jh < nvh; ++jh) {
        Value *wp = b.CreateGEP(half, row0, i32((int64_t)u * NR + jh * HL));
        w.push_back(b.CreateAlignedLoad(vh, b.CreateBitCast(wp, vh->getPointerTo()), llvm::Align(2)));
      }
      return w;
    };
    auto one = [&](Value *ic, const Values &av) {  // one channel
      Values r = av;
      Values w = weights_of(ic, 0);
      Value *icoff = xs[1] == 1 ? ic : b.CreateMul(ic, i32(xs[1]));
      for (int i = 0; i < m; ++i) {
        Value *x = b.CreateAlignedLoad(xel, b.CreateGEP(xel, row[(size_t)i], icoff), llvm::Align(xh ? 2 : 4));
        if (!valid.empty()) x = b.CreateSelect(valid[(size_t)i], x, llvm::ConstantFP::get(xel, 0.0));
        Value *xv = b.CreateVectorSplat(HL, xh ? x : b.CreateFPTrunc(x, half));
        for (int jh = 0; jh < nvh; ++jh) {
          Value *&h = r[H + (size_t)(i * nvh + jh)];
          h = b.CreateIntrinsic(llvm::Intrinsic::fma, {vh}, {xv, w[(size_t)jh], h});
        }
      }
      return r;
    };
    auto oct = [&](Value *ic, const Values &av) {  // HL contiguous channels
      Values r = av;
      auto *vx = llvm::FixedVectorType::get(xel, HL);
      Values xq;
      for (int i = 0; i < m; ++i) {
        Value *x = b.CreateAlignedLoad(vx, b.CreateBitCast(b.CreateGEP(xel, row[(size_t)i], ic), vx->getPointerTo()),
                                       llvm::Align(xh ? 2 : 4));
        xq.push_back(xh ? x : b.CreateFPTrunc(x, vh));
      }
      for (int u = 0; u < HL; ++u) {
        Values w = weights_of(ic, u);
        for (int i = 0; i < m; ++i) {
          Value *xu = b.CreateShuffleVector(xq[(size_t)i], std::vector<int>(HL, u));
          for (int jh = 0; jh < nvh; ++jh) {
            Value *&h = r[H + (size_t)(i * nvh + jh)];
            h = b.CreateIntrinsic(llvm::Intrinsic::fma, {vh}, {xu, w[(size_t)jh], h});
          }
        }
      }
      return r;
    };
    // Channels [base, base + n) (n static).
    auto span = [&](Value *base, int64_t n, const Values &av) {
      if (!octs)
        return carried_loop(
            b, 0, n, 1, av, [&](Value *c, const Values &v) { return one(b.CreateAdd(base, c), v); }, "ich");
      Values r = carried_loop(
          b, 0, n / HL * HL, HL, av, [&](Value *c, const Values &v) { return oct(b.CreateAdd(base, c), v); }, "ic8");
      for (int64_t c = n / HL * HL; c < n; ++c) r = one(b.CreateAdd(base, i32(c)), r);
      return r;
    };
    if (!chunks) return span(i32(0), ICp, a);
    const int64_t C = T.half_chunk, full = ICp / C;
    a = carried_loop(
        b, 0, full, 1, a,
        [&](Value *c, const Values &v) { return flush_half(m, nvv, span(b.CreateMul(c, i32(C)), C, v)); }, "ichunk");
    return ICp % C ? flush_half(m, nvv, span(i32(full * C), ICp % C, a)) : a;
  }

  // int8: the ic loop over groups of 4 channels (the last one partial
  // when ICg % 4), unrolled like the float one.
  // `valid` (strided channels in General mode): pixels inside the input;
  // the others read the zero point.
  Values qsteps(const Values &row, const Values &valid, Value *wk, int nvv, const Values &a0) {
    uint32_t zb = (uint8_t)s.x_zero ^ (s.x_flip ? 0x80u : 0u);
    Value *zero4 = i32(zb * 0x01010101u);
    auto step = [&](Value *icq, Values a, int have) {
      std::vector<Operand> w;
      bool halves = T.dot_i8 == DotI8::NeonPairs && !s.i16;
      auto *wt = halves || s.w8 ? llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L) : wv;
      auto wload = [&](Value *at) {
        Value *v = b.CreateAlignedLoad(wt, b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), wk, at), wt->getPointerTo()),
                                       llvm::Align(s.w8 ? 2 : 4));
        // w8: the pairs' bytes widened to int16 (vpmovsxbw), as the
        // int16 pairs' vector.
        if (s.w8) v = b.CreateBitCast(b.CreateSExt(v, llvm::FixedVectorType::get(b.getInt16Ty(), 2 * L)), wv);
        return v;
      };
      for (int j = 0; j < nvv; ++j) {
        Value *at = b.CreateMul(b.CreateAdd(b.CreateMul(icq, i32(NR)), i32(j * L)), i32(wstep()));
        if (halves)
          w.push_back({wload(at), wload(b.CreateAdd(at, i32(2 * L)))});
        else
          w.push_back({wload(at)});
      }
      Value *ic = b.CreateMul(icq, i32(4 * xs[1]));
      for (size_t i = 0; i < row.size(); ++i) {
        Value *xp = b.CreateGEP(b.getInt8Ty(), row[i], ic);
        Operand xv = valid.empty() ? x_vec(xp, have, nullptr)
                                   : x_vec(xp, have, b.CreateSelect(valid[i], x_quad(xp, have), zero4));
        for (int j = 0; j < nvv; ++j) a[i * nvv + j] = dot4(a[i * nvv + j], xv, w[j]);
      }
      return a;
    };
    int64_t full = ICp / 4;
    Values a = a0;
    int64_t done = 0;
    if ((T.dot_i8 == DotI8::NeonSdot || T.dot_i8 == DotI8::NeonPairs) && !s.i16 && valid.empty() && xs[1] == 1 &&
        full >= 4) {
      // 16 bytes of a pixel (4 quads) per load, flipped once; each quad
      // is taken from the register by sdot's by-element form, or (pair
      // products) by two 16-bit lane broadcasts.
      done = full / 4 * 4;
      a = carried_loop(
          b, 0, done, 4, a, [&](Value *icq, const Values &av) { return four_quads(row, wk, icq, nvv, av); }, "icq4");
    }
    const int U = std::max(1, s.unroll / 2);
    int64_t main_end = done + (full - done) / U * U;
    a = carried_loop(
        b, done, main_end, U, a,
        [&](Value *icq, const Values &av) {
          Values cur = av;
          for (int u = 0; u < U; ++u) cur = step(b.CreateAdd(icq, i32(u)), cur, 4);
          return cur;
        },
        "icq");
    a = carried_loop(
        b, main_end, full, 1, a, [&](Value *icq, const Values &av) { return step(icq, av, 4); }, "icq.rem");
    if (ICp % 4) a = step(i32(full), a, (int)(ICp % 4));
    return a;
  }

  // NEON, contiguous channels: quads icq .. icq+3 of every pixel.
  Values four_quads(const Values &row, Value *wk, Value *icq, int nvv, Values a) {
    auto *v16 = llvm::FixedVectorType::get(b.getInt8Ty(), 16);
    bool pairs = T.dot_i8 == DotI8::NeonPairs;
    // sdot reads a quad as a 32-bit lane; the pair products a pair as a
    // 16-bit lane.
    auto *v4 = pairs ? llvm::FixedVectorType::get(b.getInt16Ty(), 8) : llvm::FixedVectorType::get(b.getInt32Ty(), 4);
    Value *off = b.CreateMul(icq, i32(4));
    Values xq;
    for (Value *r : row) {
      Value *x = b.CreateAlignedLoad(v16, b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), r, off), v16->getPointerTo()),
                                     llvm::Align(1));
      if (s.x_flip)
        x = b.CreateXor(x, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(16), b.getInt8(0x80)));
      xq.push_back(b.CreateBitCast(x, v4));
    }
    for (int u = 0; u < 4; ++u) {
      std::vector<Operand> w;
      auto *wt = pairs ? llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L) : llvm::cast<llvm::FixedVectorType>(wv);
      auto wload = [&](Value *at) {
        return b.CreateAlignedLoad(wt, b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), wk, at), wt->getPointerTo()),
                                   llvm::Align(4));
      };
      for (int j = 0; j < nvv; ++j) {
        Value *at = b.CreateMul(b.CreateAdd(b.CreateMul(b.CreateAdd(icq, i32(u)), i32(NR)), i32(j * L)), i32(4));
        if (pairs)
          w.push_back({wload(at), wload(b.CreateAdd(at, i32(2 * L)))});
        else
          w.push_back({wload(at)});
      }
      for (size_t i = 0; i < row.size(); ++i) {
        if (pairs) {
          auto *half = llvm::FixedVectorType::get(b.getInt8Ty(), 2 * L);
          auto lane = [&](int l) {
            return b.CreateBitCast(b.CreateShuffleVector(xq[i], std::vector<int>(L, l)), half);
          };
          Operand xv{lane(2 * u), lane(2 * u + 1)};
          for (int j = 0; j < nvv; ++j) a[i * nvv + j] = dot4(a[i * nvv + j], xv, w[(size_t)j]);
          continue;
        }
        Value *xe = b.CreateBitCast(b.CreateShuffleVector(xq[i], std::vector<int>(4, u)), wv);
        for (int j = 0; j < nvv; ++j)
          a[i * nvv + j] =
              b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {accv, wv}, {a[i * nvv + j], w[(size_t)j].lo, xe});
      }
    }
    return a;
  }

  // Linear tiles over P (run-time) pixels, for the task's block [u_begin,
  // u_end) of the bounds' `units` tiles: the blocks share the actual tiles
  // evenly (tiles [u_begin * U / units, u_end * U / units) of the U =
  // ceil(P / mr) there are), the last of which has P % mr pixels: one
  // branch per possible width.
  void dynamic_tiles(Value *u_begin, Value *u_end, int64_t units, Value *p_dyn, Value *g, Value *wtile, Value *oc0,
                     int nvv, int lanes_last) {
    Value *full = b.CreateUDiv(p_dyn, i32(mr));
    Value *rem = b.CreateURem(p_dyn, i32(mr));
    Value *actual = b.CreateAdd(full, b.CreateZExt(b.CreateICmpNE(rem, i32(0)), b.getInt32Ty()));
    Value *ub = share_units(b, u_begin, actual, units), *ue = share_units(b, u_end, actual, units);
    const int64_t full_bound = s.batch * s.out_h * s.out_w / mr;
    Value *full_end = b.CreateSelect(b.CreateICmpULT(ue, full), ue, full);
    if (full_bound > 0)
      emit_counted_loop(
          b, ub, full_end,
          [&](Value *it) {
            Value *itc = clamp_i32(b, it, 0, full_bound - 1);
            tile({Mode::Linear, mr, nullptr, nullptr, nullptr, b.CreateMul(itc, i32(mr))}, g, wtile, oc0, nvv,
                 lanes_last);
          },
          "ptile");
    // The partial tile: in this block when the block ends past the full ones.
    Value *has_tail = b.CreateAnd(b.CreateICmpUGT(ue, full), b.CreateICmpNE(rem, i32(0)));
    for (int r = 1; r < mr; ++r)
      emit_branch(
          b, b.CreateAnd(has_tail, b.CreateICmpEQ(rem, i32(r))),
          [&] {
            Value *p0 = clamp_i32(b, b.CreateMul(full, i32(mr)), 0, s.batch * s.out_h * s.out_w - r);
            tile({Mode::Linear, r, nullptr, nullptr, nullptr, p0}, g, wtile, oc0, nvv, lanes_last);
          },
          [] {}, "ptail");
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    slots = scheduled_slots(env, b, arena, k);
    X = slots.at(0);
    out = slot_for(env, b, arena, k.out);
    run_ = {i32(s.in_h), i32(s.in_w), i32(s.out_h), i32(s.out_w)};
    for (int rl = 0; rl < 4; ++rl) {
      xs[rl] = s.in_axis[rl] >= 0 ? X.strides[s.in_axis[rl]] : 0;
      os[rl] = s.out_axis[rl] >= 0 ? out.strides[s.out_axis[rl]] : 0;
    }
    TINYRT_CHECK(os[1] == 1, "GEMM output channels must be contiguous");
    if (ICg == 1) xs[1] = 1;  // one input channel: its stride never matters
    if (s.i16) {              // X as bytes: a channel is 2 of them
      TINYRT_CHECK(xs[1] == 1 && X.type == DType::I16 && (!s.k_run || s.w8) && s.x_zero == 0,
                   "int16 GEMM over an input that is not dense int16 channels");
      for (int rl : {0, 2, 3}) xs[rl] *= 2;
    }
    // k_run reads a kernel row's k_w * ICg inputs from its first pixel:
    // channels-last, dense, and every window inside X (pad_conv_rows, or
    // a float convolution without padding).
    TINYRT_CHECK(!s.k_run || (G == 1 && xs[1] == 1 && xs[3] == ICg && s.pad_t == 0 && s.pad_l == 0 && s.dil_w == 1 &&
                              (s.out_w - 1) * s.stride_w + s.k_w <= s.in_w &&
                              (s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dil_h + 1 <= s.in_h),
                 "k_run GEMM without a dense padded input");
    TINYRT_CHECK(!xel->isHalfTy() || s.half, "a GEMM over a half input that does not compute in half");
    xbase = b.CreateBitCast(X.base, xel->getPointerTo());
    if (s.arena_weights) {
      const SlotRef &w = slots.at(1);
      // Dense and in logical order: the packing kernel's row-major layout.
      bool dense = w.numel == s.batch * s.out_h * OCt * ICk * NR && w.span == w.numel && w.strides.back() == 1 &&
                   std::is_sorted(w.strides.rbegin(), w.strides.rend());
      TINYRT_CHECK(!q && G == 1 && KK == 1 && dense, "GEMM over run-time weights that are not packed densely");
      weights = b.CreateBitCast(opaque_pointer(b, w.base), wel->getPointerTo());
    } else if (s.arena_packed) {
      // Packed at run time as the constant would be (WinogradWeights): the same addressing.
      const SlotRef &w = slots.at(1);
      // (int16 pairs: a quad's 4 bytes are 2 of its elements)
      TINYRT_CHECK(
          (!q || s.i16) && s.group_pad_bytes % wel_bytes() == 0 &&
              w.numel * dtype_bytes(w.type) == G * (OCt * KK * ICk * NR * wstep() * wel_bytes() + s.group_pad_bytes) &&
              w.span == w.numel,
          "GEMM over run-time packed weights of another layout");
      weights = b.CreateBitCast(opaque_pointer(b, w.base), wel->getPointerTo());
    } else {
      weights = b.CreateBitCast(env.const_data(s.packed), wel->getPointerTo());
    }
    if (q) {
      if (!s.i16) qbias = b.CreateBitCast(env.const_data(s.packed_bias), b.getInt32Ty()->getPointerTo());
      if (xs[1] == 1) zero_row = fill_bytes(env, b, ICk * 4, (uint8_t)s.x_zero, name);
    } else if (xs[1] == 1) {
      zero_row = b.CreateBitCast(zero_floats(env, b, ICg, name), xel->getPointerTo());  // (zero bits: halves too)
    }
    bool channel_only = true;
    visit(s.epilogue,
          [&](const Expr &e) { channel_only = channel_only && (e.op != EOp::Var || e.id == s.out_axis[1]); });
    // (One output row, as Winograd's grouped GEMM over its tiles or a
    // matrix's rows: the row's pitch is its width whatever the h stride.)
    const int64_t row_pitch = s.out_h == 1 ? s.out_w * os[3] : os[2];
    flat_pixels = channel_only && row_pitch == s.out_w * os[3] && (s.batch == 1 || os[0] == s.out_h * row_pitch);
    // Linear addressing (the geometry gemm_tile_shape chose the tile for,
    // over a dense input): consecutive pixels are consecutive input pixels.
    bool linear = gemm_tile_shape(s).linear && xs[2] == s.in_w * xs[3] && (s.batch == 1 || xs[0] == s.in_h * xs[2]);
    // Span: tiles over pixel indices as in linear mode (static sizes,
    // windows: span_rows).
    const bool span = gemm_tile_shape(s).span;
    // Run-time pixels (gemm_dynamic_role): the first P of the bounds'
    // layout, P = the role's extent times the pixels of the roles inside it.
    Value *p_dyn = nullptr;
    const tinyrt::Value &ov = env.program.graph.v(k.out);
    const tinyrt::Value &xv = env.program.graph.v(k.ins.at(0));
    if (ov.is_dynamic() || xv.is_dynamic()) {
      dimv_ = load_dims(env, b, arena);
      auto extent = [&](int v, int axis) -> Value * {
        return axis >= 0 && env.program.graph.v(v).dim(axis) >= 0 ? extent_value(env, b, dimv_, v, axis) : nullptr;
      };
      // Dense pixels, roles of one pixel ignored.
      bool dense = gemm_tile_shape(s).linear && (s.in_h == 1 || xs[2] == s.in_w * xs[3]) &&
                   (s.batch == 1 || xs[0] == s.in_h * s.in_w * xs[3]);
      const int role = gemm_dynamic_role(s, ov);
      // (The choice lower_to_kernels made: linear when X's extents are the
      // output's, else rows.)
      if (role >= 0 && dense && !s.arena_weights && xv.dims == ov.dims) {
        linear = true;
        p_dyn = extent(k.out, s.out_axis[role]);
        if (role == 0) p_dyn = b.CreateMul(p_dyn, i32(s.out_h * s.out_w));
        if (role == 2) p_dyn = b.CreateMul(p_dyn, i32(s.out_w));
      } else if (gemm_runtime_rows(s, ov, xv) > 0 && !q) {
        linear = false;
        w_dyn_ = extent(k.out, s.out_axis[3]);
        n_dyn_ = extent(k.out, s.out_axis[1]);
        k_dyn_ = extent(k.ins.at(0), s.in_axis[1]);
        run_.in_w = run_.out_w = w_dyn_;  // (1x1, unpadded: the input's rows are the output's)
      } else {
        TINYRT_CHECK(gemm_runtime_spatial(s, ov, xv) > 0 && !span, "a GEMM with run-time extents it cannot take");
        linear = false;
        run_ = run_sizes(env, b, dimv_, k);
        rt_ = &run_;
      }
    }
    int last_cols = (int)(OCg - (OCt - 1) * NR);  // channels in the last oc tile
    // Tasks are (pixel block, group, oc tile) triples: about 64, or 8
    // pixel blocks of every group and oc tile when pixel blocks go first.
    // Their order decides what a thread of the pool reads: it runs a
    // contiguous share of them, the same share in every step.
    // - Pixel blocks outermost when the input and the output together are
    //   at least twice the weights: a thread reads the pixels it wrote in
    //   the step before (the producer's rows, Winograd's tiles) instead of
    //   every pixel from both cores' caches, and writes the pixels it will
    //   read in the next (Winograd's int32 M, 8 times its int16 V: with the
    //   input alone counted, squeezenet1_1 int8's band GEMMs took as long
    //   at 2 threads as at 1); few rows are cut into runs of pixels for
    //   this. At least kPixelBlocks blocks, unless a task would then do
    //   fewer than the target's pixel_split_min_macs multiply-adds.
    // - Oc tiles outermost otherwise: each thread streams only its share of
    //   large weights over a small input.
    constexpr int64_t kPixelBlocks = 8;
    // Run-time pixels: decided for a run of a quarter of the bounds (the
    // blocks are fixed at the bounds' count, and a small run's share of
    // each is a tile or none: the tasks' own cost shows).
    const int64_t run_scale = p_dyn || rt_ || w_dyn_ ? 4 : 1;
    int64_t GO = G * OCt;
    int64_t x_bytes = s.batch * s.in_h * s.in_w * s.in_c * (q ? (s.i16 ? 2 : 1) : 4) / run_scale;
    int64_t y_bytes = P * s.out_c * dtype_bytes(ov.dtype) / run_scale;
    int64_t w_bytes = GO * KK * ICk * NR * wel_bytes() * wstep();
    int64_t macs = kernel_flops(k) / 2 / run_scale;
    bool pixels_outer = x_bytes + y_bytes >= 2 * w_bytes && macs / (GO * kPixelBlocks) >= T.pixel_split_min_macs;
    // A split measured or forced (GemmSpec::split): its order, and about
    // its number of tasks instead of the rule's (Serial: the module runs
    // the tasks in one call, module_emitter.cpp).
    const TaskSplit &split = s.split;
    if (split.order == TaskSplit::Order::Pixels || split.order == TaskSplit::Order::Channels)
      pixels_outer = split.order == TaskSplit::Order::Pixels;
    // (Not over one tile of pixels, which reads each panel once as the
    // hardware prefetcher already follows it: mobilenet_v3_small's
    // classifier 1.11x with it on AVX-512.)
    const Budgets &bud = env.program.budgets;
    prefetch_next_ = T.prefetch_panel_layer_bytes > 0 && !q && !s.half && !s.arena_weights && !s.arena_packed &&
                     GO > 1 && P > mr && w_bytes >= T.prefetch_panel_layer_bytes &&
                     bud.base_weights + bud.traded_weights >= T.prefetch_panel_model_bytes;
    RowUnits runs = row_units(s, mr, pixels_outer && !w_dyn_ && !rt_);
    const Mode by_index_mode = span ? Mode::Span : Mode::Linear;
    linear = linear || span;                                  // span's tiles and tasks are linear mode's
    int64_t units = linear ? (P + mr - 1) / mr : runs.count;  // pixel tiles, or rows or their runs
    const int64_t task_goal = split.tasks > 0 ? split.tasks : 64;
    int64_t want = std::max<int64_t>(1, (task_goal + GO - 1) / GO);
    UnitBlocks blocks = split_units(units, pixels_outer && split.tasks == 0 ? std::max(want, kPixelBlocks) : want);
    int64_t tasks = GO * blocks.count;

    emit_counted_loop(
        b, f->getArg(1), f->getArg(2),
        [&](Value *t) {
          Value *blk = pixels_outer ? b.CreateUDiv(t, i32(GO)) : b.CreateURem(t, i32(blocks.count));
          Value *rest = pixels_outer ? b.CreateURem(t, i32(GO)) : b.CreateUDiv(t, i32(blocks.count));
          Value *oct_t = b.CreateURem(rest, i32(OCt));
          Value *g = b.CreateUDiv(rest, i32(OCt));
          Value *u_begin, *u_end;
          std::tie(u_begin, u_end) = block_range(b, blk, blocks, units);
          // Output channel tiles [oct_lo, oct_hi] (the branch below tells the
          // last, narrower one apart: oct clamped to the branch's tiles, see
          // clamp_i32).
          auto columns = [&](int nvv, int lanes_last, int64_t oct_lo, int64_t oct_hi) {
            Value *oct = clamp_i32(b, oct_t, oct_lo, oct_hi);
            // (arena_packed: each group's weights group_pad_bytes after the last's;
            // unpadded, the one product, as before the pad: the same code)
            const int64_t tile_el = KK * ICk * NR * wstep(), gpad = s.group_pad_bytes / wel_bytes();
            Value *wtile = b.CreateGEP(
                wel, weights,
                gpad ? b.CreateAdd(b.CreateMul(g, i32(OCt * tile_el + gpad)), b.CreateMul(oct, i32(tile_el)))
                     : b.CreateMul(b.CreateAdd(b.CreateMul(g, i32(OCt)), oct), i32(tile_el)));
            Value *oc0 = b.CreateAdd(b.CreateMul(g, i32(OCg)), b.CreateMul(oct, i32(NR)));
            if (p_dyn) {
              dynamic_tiles(u_begin, u_end, units, p_dyn, g, wtile, oc0, nvv, lanes_last);
              return;
            }
            if (linear) {
              // Tiles of mr pixels; only the very last one may be shorter.
              int rem = (int)(P % mr);
              int64_t full = rem ? units - 1 : units;
              Value *full_end = rem ? b.CreateSelect(b.CreateICmpEQ(u_end, i32(units)), i32(units - 1), u_end) : u_end;
              emit_counted_loop(
                  b, u_begin, full_end,
                  [&](Value *it) {
                    Value *itc = clamp_i32(b, it, 0, full - 1);
                    tile({by_index_mode, mr, nullptr, nullptr, nullptr, b.CreateMul(itc, i32(mr))}, g, wtile, oc0, nvv,
                         lanes_last);
                  },
                  "ptile");
              if (rem) {
                emit_branch(
                    b, b.CreateICmpEQ(u_end, i32(units)),
                    [&] {
                      tile({by_index_mode, rem, nullptr, nullptr, nullptr, i32((units - 1) * mr)}, g, wtile, oc0, nvv,
                           lanes_last);
                    },
                    [] {}, "ptail");
              }
              return;
            }
            if (w_dyn_) {  // rows of run-time width (1x1: every window inside X, Row tiles)
              for_run_rows(b, s, run_, u_begin, u_end, mr, [&](Value *n, Value *oh, Value *ow0, int m) {
                tile({Mode::Row, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last);
              });
              return;
            }
            auto run = [&](Value *n, Value *oh, Value *ow0, int m) {
              if (s.k_run) {  // every window is inside X (checked above)
                tile({Mode::Row, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last);
                return;
              }
              emit_branch(
                  b, window_interior(b, s, oh, ow0, m, rt_),
                  [&] {
                    tile({Mode::Row, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last);
                  },
                  [&] {
                    tile({Mode::General, m, n, oh, ow0, nullptr}, g, wtile, oc0, nvv, lanes_last);
                  },
                  "tile");
            };
            if (rt_)  // rows and widths of the run's image
              for_run_rows(b, s, *rt_, u_begin, u_end, mr, run);
            else
              for_unit_runs(b, s, runs, u_begin, u_end, mr, run);
          };
          auto all_columns = [&] {
            if (last_cols == NR) {
              columns(nv, L, 0, OCt - 1);
              return;
            }
            int nvv = (last_cols + L - 1) / L;
            emit_branch(
                b, b.CreateICmpEQ(oct_t, i32(OCt - 1)),
                [&] { columns(nvv, last_cols - (nvv - 1) * L, OCt - 1, OCt - 1); }, [&] { columns(nv, L, 0, OCt - 2); },
                "octile");
          };
          if (n_dyn_) {  // run-time output channels: the tiles past them do nothing
            Value *tiles = b.CreateUDiv(b.CreateAdd(n_dyn_, i32(NR - 1)), i32(NR));
            emit_branch(
                b, b.CreateICmpULT(oct_t, tiles), all_columns, [] {}, "octiles");
            return;
          }
          if (last_cols == NR) {
            columns(nv, L, 0, OCt - 1);
          } else {
            int nvv = (last_cols + L - 1) / L;
            emit_branch(
                b, b.CreateICmpEQ(oct_t, i32(OCt - 1)),
                [&] { columns(nvv, last_cols - (nvv - 1) * L, OCt - 1, OCt - 1); }, [&] { columns(nv, L, 0, OCt - 2); },
                "octile");
          }
        },
        "task");
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
