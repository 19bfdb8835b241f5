// winograd_emitter.cpp — the two transforms of a Winograd convolution
// F(m x m, 3 x 3) (passes/winograd.cpp; ir/program.h, WinogradSpec), over
// channels-last data, a vector of channels at a time.
//
// WinogradIn: for each a x a input tile (a = m + 2; tile (th, tw) starts at
// input pixel (th*m - pad_t, tw*m - pad_l)), V = B^T d B, stored as
// V[tile][xi*a + nu][IC]. Tiles whose window lies inside the input address
// pixels from one base pointer with constant offsets; border tiles select,
// per pixel, the input or a zero vector.
//
// WinogradOut: for each tile, Y = A^T M A from M[tile][xi*a + nu][OC] (the
// grouped GEMM's products), then the convolution's epilogue on each of the
// m x m output pixels that exist (the last tile row and column may be
// partial) and the store.
//
// A convolution in bands (WinogradSpec::row0, rows) has a transform pair
// per band of tile rows; V and M then hold the band's tiles, numbered from
// its first. With weights transformed at run time an output transform
// stores a chunk of the output channels, [c0, c0 + channels), from M's
// channels [0, channels).
//
// Both transforms are separable: rows first, then columns, each a linear
// combination with the matrices' constant coefficients (zeros skipped,
// +-1 as adds and subtractions, others as FMAs). Tasks are blocks of tile
// rows.
//
// int8 convolutions (QGemm, F(2,3) only): the input transform reads X's
// bytes, subtracts the zero point (padding reads it, so contributes 0) and
// transforms in 16-bit lanes, V int16 (|v| <= 4 * 255); the output
// transform reads M's int32 sums, transforms them in int32 (wrapping, as
// the GEMM's sums: the result, 4 * the direct sum, fits) and shifts right
// by 2 (the weights were transformed as (2G) g (2G)^T, integers), giving
// the direct convolution's sums of (x - x_zero) * w exactly, then its
// epilogue.
//
// Run-time image sizes: the run's tiles (ceil(out / m) per side, from the
// run's sizes) are the first ones of V and M, numbered densely; the tasks
// share the run's tile rows; the input's borders and the output's last
// partial tiles are the run's.
#include "codegen/address_proof.h"
#include "codegen/kernel_emitters.h"

#include <llvm/IR/Intrinsics.h>

namespace tinyrt {

namespace {

using llvm::Value;

struct WinogradEmitter {
  EmitEnv &env;
  const Kernel &k;
  const GemmSpec &s;
  const WinogradSpec &w;
  const WinogradMatrices &mx;
  const Target &T;
  llvm::IRBuilder<> b;
  int L, m, a;
  // The transforms go in two passes through the buffer
  // (Target::winograd_two_pass).
  bool frugal;
  int64_t C;  // channels of the transform
  llvm::Type *f32;
  llvm::FixedVectorType *vf32;
  // The transform's arithmetic: float, or (qi: an int8 convolution) int16
  // lanes in, int32 out; VL lanes a vector, el V's or M's element, vt the
  // vector the transforms combine, xel X's element.
  bool qi = false, x_signed = false;  // (qi: X int8, else uint8)
  int VL;
  llvm::Type *el, *xel;
  llvm::FixedVectorType *vt;
  std::vector<SlotRef> slots;
  SlotRef X, out;
  int64_t xs[4] = {0, 0, 0, 0};
  Value *xbase = nullptr, *zeros = nullptr, *buf = nullptr;  // buf: V (written) or M (read), float*
  // buf's element: el, or half for a V stored as half (--precision fp16:
  // passes/half_inputs.cpp; its half GEMM rounds V's values so anyway).
  llvm::Type *bel = nullptr;
  // This run's sizes: the input's (WinogradIn), the output's and the
  // tiles per side; constants when fixed.
  bool dyn = false;
  // A band of the tile rows (WinogradSpec::row0, rows): V and M hold its tiles only.
  bool banded = false;
  // The band's first tile row and the chunk's first output channel (a
  // shared function's arguments: part_arg); out_c0 null when 0.
  Value *band_row0 = nullptr, *out_c0 = nullptr;
  // Run-time sizes: the rows of the tile row being stored that exist (m in
  // a whole tile row, else the first; out_row branches on it).
  int dyn_rows = 1;
  Value *in_h = nullptr, *in_w = nullptr, *out_h = nullptr, *out_w = nullptr, *tiles_h = nullptr, *tiles_w = nullptr;

  WinogradEmitter(EmitEnv &e, const Kernel &kk)
      : env(e), k(kk), s(kk.gemm), w(kk.wino), mx(winograd_matrices(kk.wino.m)), T(e.target), b(e.module.getContext()) {
    L = T.f32_lanes();
    m = w.m;
    a = mx.a();
    frugal = T.winograd_two_pass(m);
    C = w.channels;
    f32 = b.getFloatTy();
    vf32 = llvm::FixedVectorType::get(f32, L);
    const DType x0 = e.program.graph.v(kk.ins.at(0)).dtype;
    const bool input = kk.kind == KernelKind::WinogradIn;
    qi = input ? x0 == DType::U8 || x0 == DType::I8 : x0 == DType::I32;
    x_signed = x0 == DType::I8;
    TINYRT_CHECK(!qi || m == 2, "an int8 Winograd convolution other than F(2,3)");
    VL = qi && input ? 2 * L : L;
    el = !qi ? f32 : input ? (llvm::Type *)b.getInt16Ty() : (llvm::Type *)b.getInt32Ty();
    xel = qi && input ? (llvm::Type *)b.getInt8Ty() : f32;
    vt = llvm::FixedVectorType::get(el, VL);
  }

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }

  // out[r] = sum_j M[r][j] * v[j] for r < rows (linear_transform: the
  // matrices' symmetric points share their work).
  std::vector<Value *> transform(const std::vector<double> &M, int rows, const std::vector<Value *> &v) {
    return linear_transform(b, vt, M, rows, v);
  }

  // Tile tw of the band's tile row `band_row` (image n's tile row th):
  // its index in V and M.
  Value *band_row = nullptr;
  Value *tile_index(Value *n, Value *th, Value *tw) {
    if (banded) return b.CreateAdd(b.CreateMul(band_row, tiles_w), tw);
    Value *t = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(n, tiles_h), th), tiles_w), tw);
    // (below the bounds' tiles when the run's are fewer: the clamp tells the bounds proof)
    return dyn ? clamp_i32(b, t, 0, s.batch * w.tiles_h * w.tiles_w - 1) : t;
  }

  // The a*a vectors of buf for tile t, channels [c0, c0 + lanes).
  Value *plane_ptr(Value *t, int q, Value *c0) {
    Value *off = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(t, i32((int64_t)a * a)), i32(q)), i32(C)), c0);
    return b.CreateGEP(bel, buf, off);
  }

  // An input pixel's channels [c0, c0 + lanes) at p: floats, or (qi) its
  // bytes widened to 16 bits less the zero point.
  Value *load_input(Value *p, int lanes) {
    if (!qi) return load_lanes(b, vf32, p, lanes);
    Value *x = load_lanes(b, llvm::FixedVectorType::get(b.getInt8Ty(), VL), p, lanes);
    x = x_signed ? b.CreateSExt(x, vt) : b.CreateZExt(x, vt);
    return b.CreateSub(x, llvm::ConstantInt::get(vt, (uint64_t)s.x_zero));
  }

  // ---- input transform ----

  // One tile, channels [c0, c0 + lanes). `inside`: the window lies inside
  // the input; else row_ok/col_ok say which pixels do.
  // Pointers are formed from clamped coordinates (clamp_i32), computed
  // once per tile row and tile: element offsets of the window's origin
  // (`origin`, inside) and of each pixel's row and column; at the border,
  // each pixel's pointer (`pixels`: the input's, or the zero vector where
  // the pixel lies outside), once per tile rather than per channel vector.
  struct TileOffsets {
    Value *origin;
    std::vector<Value *> rows, cols, pixels;
  };
  // Row i of the tile's input window: a vectors, channels [c0, c0 + lanes).
  std::vector<Value *> window_row(bool inside, int i, const TileOffsets &o, Value *c0, int lanes) {
    std::vector<Value *> d((size_t)a);
    for (int j = 0; j < a; ++j) {
      Value *p;
      if (inside) {
        p = b.CreateGEP(xel, xbase, b.CreateAdd(o.origin, c0));
        p = b.CreateGEP(xel, p, b.getInt64(i * xs[2] + j * xs[3]));
      } else {
        p = b.CreateGEP(xel, o.pixels[(size_t)(i * a + j)], c0);
      }
      d[(size_t)j] = load_input(p, lanes);
    }
    return d;
  }
  void border_pixels(TileOffsets &o, const std::vector<Value *> &row_ok, const std::vector<Value *> &col_ok) {
    o.pixels.clear();
    for (int i = 0; i < a; ++i)
      for (int j = 0; j < a; ++j)
        o.pixels.push_back(b.CreateSelect(b.CreateAnd(row_ok[(size_t)i], col_ok[(size_t)j]),
                                          b.CreateGEP(xel, xbase, b.CreateAdd(o.rows[(size_t)i], o.cols[(size_t)j])),
                                          zeros));
  }

  // The row results of a tile (rows[i][j]), or, when `frugal`, nothing:
  // they were stored into the tile's planes (i * a + j) and are read back.
  using Rows = std::vector<std::vector<Value *>>;
  Value *row_result(const Rows &rows, Value *t, int i, int j, Value *c0, int lanes) {
    return frugal ? load_lanes(b, vt, plane_ptr(t, i * a + j, c0), lanes) : rows[(size_t)i][(size_t)j];
  }

  // One tile, channels [c0, c0 + lanes): V = B^T d B. Whole (the a*a
  // intermediate vectors in registers), or, when they would not fit the
  // target's registers (`frugal`), its first half: d B stored into the
  // tile's planes of V; in_tile_columns, in a loop of its own, then
  // finishes B^T (d B) in place.
  void in_tile(bool inside, Value *t, const TileOffsets &o, Value *c0, int lanes) {
    Rows tmp((size_t)a);
    for (int i = 0; i < a; ++i) {
      tmp[(size_t)i] = transform(mx.bt, a, window_row(inside, i, o, c0, lanes));
      if (frugal)
        for (int nu = 0; nu < a; ++nu) store_lanes(b, tmp[(size_t)i][(size_t)nu], plane_ptr(t, i * a + nu, c0), lanes);
    }
    if (!frugal) in_tile_columns(tmp, t, c0, lanes);
  }
  void in_tile_columns(const Rows &tmp, Value *t, Value *c0, int lanes) {
    for (int nu = 0; nu < a; ++nu) {
      std::vector<Value *> col((size_t)a);
      for (int i = 0; i < a; ++i) col[(size_t)i] = row_result(tmp, t, i, nu, c0, lanes);
      std::vector<Value *> v = transform(mx.bt, a, col);
      for (int xi = 0; xi < a; ++xi)
        store_lanes(
            b,
            bel == el ? v[(size_t)xi] : b.CreateFPTrunc(v[(size_t)xi], llvm::FixedVectorType::get(bel, (unsigned)VL)),
            plane_ptr(t, xi * a + nu, c0), lanes);
    }
  }

  // Does a window of a pixels from `at` lie inside [0, size) (the run's
  // size, or the fixed one `fixed`)? Signed with a run-time size: the
  // run's input may be smaller than a tile.
  Value *within(Value *at, Value *size, int64_t fixed) {
    if (!dyn) return b.CreateICmpULE(at, i32(fixed - a));  // unsigned: also >= 0
    return b.CreateAnd(b.CreateICmpSGE(at, i32(0)), b.CreateICmpSLE(at, b.CreateSub(size, i32(a))));
  }

  void in_row(Value *n, Value *th) {
    Value *ih0 = b.CreateSub(b.CreateMul(th, i32(m)), i32(s.pad_t));
    std::vector<Value *> row_ok((size_t)a);
    for (int i = 0; i < a; ++i) row_ok[(size_t)i] = b.CreateICmpULT(b.CreateAdd(ih0, i32(i)), in_h);
    Value *rows_inside = s.in_h >= a ? within(ih0, in_h, s.in_h) : b.getFalse();
    Value *nx = b.CreateMul(n, i32(xs[0]));
    Value *row_in = b.CreateAdd(nx, b.CreateMul(clamp_i32(b, ih0, 0, s.in_h - a), i32(xs[2])));
    TileOffsets o;
    for (int i = 0; i < a; ++i)
      o.rows.push_back(b.CreateAdd(nx, b.CreateMul(clamp_i32(b, b.CreateAdd(ih0, i32(i)), 0, s.in_h - 1), i32(xs[2]))));
    emit_counted_loop(
        b, i32(0), tiles_w,
        [&](Value *tw) {
          Value *iw0 = b.CreateSub(b.CreateMul(tw, i32(m)), i32(s.pad_l));
          std::vector<Value *> col_ok((size_t)a);
          for (int j = 0; j < a; ++j) col_ok[(size_t)j] = b.CreateICmpULT(b.CreateAdd(iw0, i32(j)), in_w);
          Value *inside = s.in_w >= a ? b.CreateAnd(rows_inside, within(iw0, in_w, s.in_w)) : b.getFalse();
          Value *t = tile_index(n, th, tw);
          o.origin = b.CreateAdd(row_in, b.CreateMul(clamp_i32(b, iw0, 0, s.in_w - a), i32(xs[3])));
          o.cols.clear();
          for (int j = 0; j < a; ++j)
            o.cols.push_back(b.CreateMul(clamp_i32(b, b.CreateAdd(iw0, i32(j)), 0, s.in_w - 1), i32(xs[3])));
          auto channels = [&](bool in) {
            if (!in) border_pixels(o, row_ok, col_ok);
            for_channel_vectors(b, C, VL, [&](Value *c0, int lanes) { in_tile(in, t, o, c0, lanes); });
          };
          if (s.in_h >= a && s.in_w >= a)
            emit_branch(
                b, inside, [&] { channels(true); }, [&] { channels(false); }, "tile");
          else
            channels(false);
          // A separate loop, so that the optimizer does not forward the
          // stored rows back into registers.
          if (frugal) for_channel_vectors(b, C, VL, [&](Value *c0, int lanes) { in_tile_columns({}, t, c0, lanes); });
        },
        "tw");
  }

  // ---- output transform ----

  // One tile of `width` output columns (the row's last may be partial),
  // output channels [c0, c0 + lanes): Y = A^T M A, whole (the a*width
  // intermediate vectors in registers) or, when `frugal`, its first half:
  // M A stored back into the tile's first `width` planes of each row of M
  // (M is this kernel's alone), and out_tile_columns finishes it.
  void out_tile(Value *t, Value *n, Value *th, Value *ow0, int width, Value *c0, int lanes) {
    Rows tmp((size_t)a);
    for (int xi = 0; xi < a; ++xi) {
      std::vector<Value *> row((size_t)a);
      for (int nu = 0; nu < a; ++nu) row[(size_t)nu] = load_lanes(b, vt, plane_ptr(t, xi * a + nu, c0), lanes);
      tmp[(size_t)xi] = transform(mx.at, width, row);
      if (frugal)
        for (int j = 0; j < width; ++j) store_lanes(b, tmp[(size_t)xi][(size_t)j], plane_ptr(t, xi * a + j, c0), lanes);
    }
    if (!frugal) out_tile_columns(tmp, t, n, th, ow0, width, c0, lanes);
  }
  void out_tile_columns(const Rows &tmp, Value *t, Value *n, Value *th, Value *ow0, int width, Value *c0, int lanes) {
    ExprEmitter em(b, T, L);
    em.set_slots(slots);
    for (int j = 0; j < width; ++j) {
      std::vector<Value *> col((size_t)a);
      for (int xi = 0; xi < a; ++xi) col[(size_t)xi] = row_result(tmp, t, xi, j, c0, lanes);
      std::vector<Value *> y = transform(mx.at, m, col);
      if (qi)  // 4 * the sums, exactly: (2G) g (2G)^T
        for (Value *&v : y) v = b.CreateAShr(v, llvm::ConstantInt::get(vt, 2));
      store_column(em, n, th, b.CreateAdd(ow0, i32(j)), y, c0, lanes);
    }
  }
  // The m output pixels of column ow of tile row th that exist: the
  // epilogue and the store (rows past the output's end are skipped).
  void store_column(ExprEmitter &em, Value *n, Value *th, Value *ow, const std::vector<Value *> &y, Value *c0,
                    int lanes) {
    // Rows every tile row of the bounds has (what the bounds proof sees),
    // and the rows this one is known to have (with run-time sizes, all in
    // a whole tile row).
    const int64_t proved_rows = s.out_h % m ? s.out_h % m : m;
    const int64_t full_rows = dyn ? dyn_rows : proved_rows;
    for (int i = 0; i < m; ++i) {
      Value *oh = b.CreateAdd(b.CreateMul(th, i32(m)), i32(i));
      auto store_row = [&, oh]() mutable {
        if (i >= proved_rows) oh = clamp_i32(b, oh, 0, s.out_h - 1);  // under oh < out_h: clamp_i32
        // (a chunk of the output channels: M's channel c0 is the output's w.c0 + c0)
        store_epilogue(em, s, out, n, oh, ow, out_c0 ? b.CreateAdd(c0, out_c0) : c0, y[(size_t)i], lanes);
      };
      if (i < full_rows)
        store_row();
      else
        emit_branch(
            b, b.CreateICmpSLT(oh, out_h), store_row, [] {}, "orow");
    }
  }

  void out_row(Value *n, Value *th) {
    if (dyn) {  // a whole tile row (all but the run's last one) stores its rows untested
      Value *whole = b.CreateICmpSLE(b.CreateMul(b.CreateAdd(th, i32(1)), i32(m)), out_h);
      emit_branch(
          b, whole,
          [&] {
            dyn_rows = m;
            out_row_tiles(n, th);
          },
          [&] {
            dyn_rows = 1;
            out_row_tiles(n, th);
          },
          "whole");
      return;
    }
    out_row_tiles(n, th);
  }
  void out_row_tiles(Value *n, Value *th) {
    auto tile = [&](Value *tw, int width) {
      Value *t = tile_index(n, th, tw);
      Value *ow0 = b.CreateMul(tw, i32(m));
      for_channel_vectors(b, C, L, [&](Value *c0, int lanes) { out_tile(t, n, th, ow0, width, c0, lanes); });
      if (frugal)
        for_channel_vectors(b, C, L,
                            [&](Value *c0, int lanes) { out_tile_columns({}, t, n, th, ow0, width, c0, lanes); });
    };
    if (dyn) {  // the run's full tiles, then its partial one
      Value *full = b.CreateUDiv(out_w, i32(m)), *rest = b.CreateURem(out_w, i32(m));
      emit_counted_loop(
          b, i32(0), full, [&](Value *tw) { tile(clamp_i32(b, tw, 0, w.tiles_w - 1), m); }, "tw");
      for (int width = 1; width < m; ++width)
        emit_branch(
            b, b.CreateICmpEQ(rest, i32(width)), [&] { tile(clamp_i32(b, full, 0, w.tiles_w - 1), width); }, [] {},
            "twtail");
      return;
    }
    emit_counted_loop(
        b, i32(0), i32(s.out_w / m), [&](Value *tw) { tile(tw, m); }, "tw");
    if (s.out_w % m) tile(i32(s.out_w / m), (int)(s.out_w % m));
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    bool input = k.kind == KernelKind::WinogradIn;
    if (input) {
      X = slot_for(env, b, arena, k.ins[0]);
      for (int rl = 0; rl < 4; ++rl) xs[rl] = s.in_axis[rl] >= 0 ? X.strides[(size_t)s.in_axis[rl]] : 0;
      TINYRT_CHECK(xs[1] == 1, "Winograd input channels must be contiguous");
      // Each arena stream a base of its own (opaque_pointer): the input
      // and the transform buffer.
      xbase = b.CreateBitCast(opaque_pointer(b, X.base), xel->getPointerTo());
      zeros = qi ? fill_bytes(env, b, (C + VL - 1) / VL * VL, (uint8_t)s.x_zero, name)
                 : zero_floats(env, b, (C + L - 1) / L * L, name);
      const SlotRef v = slot_for(env, b, arena, k.out);
      bel = v.type == DType::F16 ? b.getHalfTy() : el;
      TINYRT_CHECK(bel == el || (!qi && !frugal), "a Winograd input transform storing half V that it reads back");
      buf = b.CreateBitCast(v.base, bel->getPointerTo());
      buf = opaque_pointer(b, buf);
    } else {
      bel = el;
      slots = scheduled_slots(env, b, arena, k);
      out = slot_for(env, b, arena, k.out);
      TINYRT_CHECK(out.strides[(size_t)s.out_axis[1]] == 1, "Winograd output channels must be contiguous");
      buf = b.CreateBitCast(slots.at(0).base, el->getPointerTo());
      buf = opaque_pointer(b, buf);  // the transform buffer a base of its own
    }
    in_h = i32(s.in_h), in_w = i32(s.in_w), out_h = i32(s.out_h), out_w = i32(s.out_w);
    tiles_h = i32(w.tiles_h), tiles_w = i32(w.tiles_w);
    const Graph &g = env.program.graph;
    dyn = g.v(k.ins[0]).is_dynamic() || g.v(k.out).is_dynamic();
    if (dyn) {
      std::map<int, Value *> dims = load_dims(env, b, arena);
      auto size = [&](int v, int axis, Value *fixed) {
        return axis >= 0 ? extent_value(env, b, dims, v, axis) : fixed;
      };
      if (input) {  // stride 1: out = in + (pads - 2), a constant difference
        in_h = size(k.ins[0], s.in_axis[2], in_h);
        in_w = size(k.ins[0], s.in_axis[3], in_w);
        out_h = b.CreateAdd(in_h, i32(s.out_h - s.in_h));
        out_w = b.CreateAdd(in_w, i32(s.out_w - s.in_w));
      } else {
        out_h = size(k.out, s.out_axis[2], out_h);
        out_w = size(k.out, s.out_axis[3], out_w);
      }
      tiles_h = b.CreateUDiv(b.CreateAdd(out_h, i32(m - 1)), i32(m));
      tiles_w = b.CreateUDiv(b.CreateAdd(out_w, i32(m - 1)), i32(m));
    }
    const int64_t all_rows = s.batch * w.tiles_h;
    banded = w.rows > 0 && !(w.row0 == 0 && w.rows == all_rows);
    TINYRT_CHECK(!banded || (!dyn && w.row0 >= 0 && w.row0 + w.rows <= all_rows),
                 "a Winograd band outside its tile rows, or over run-time sizes");
    const int64_t rows = banded ? w.rows : all_rows;
    if (banded) band_row0 = part_arg(env, b, 0, w.row0, 0, all_rows - w.rows);
    if (!input && (w.c0 || env.part_args)) out_c0 = part_arg(env, b, 1, w.c0, 0, s.out_c - C);
    int64_t tasks = emit_row_block_tasks(b, f, rows, [&](Value *r0, Value *r1) {
      if (dyn) {  // the tasks share the run's tile rows
        Value *actual = b.CreateMul(i32(s.batch), tiles_h);
        r0 = share_units(b, r0, actual, rows);
        r1 = share_units(b, r1, actual, rows);
      }
      emit_counted_loop(
          b, r0, r1,
          [&](Value *ri) {
            Value *r = clamp_i32(b, ri, 0, rows - 1);  // r0 <= ri < r1 <= the rows: clamp_i32
            band_row = r;
            if (banded) r = b.CreateAdd(r, band_row0);  // the band's row in the batch's tile rows
            Value *n = b.CreateUDiv(r, tiles_h), *th = b.CreateURem(r, tiles_h);
            if (dyn) {  // (below the bounds: the clamps tell the bounds proof)
              n = clamp_i32(b, n, 0, s.batch - 1);
              th = clamp_i32(b, th, 0, w.tiles_h - 1);
            }
            if (input)
              in_row(n, th);
            else
              out_row(n, th);
          },
          "trow");
    });
    b.CreateRetVoid();
    return {f, tasks};
  }
};

}  // namespace

EmittedKernel emit_winograd_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  WinogradEmitter e(env, k);
  return e.emit(name);
}

}  // namespace tinyrt
