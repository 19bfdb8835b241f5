// depthwise_emitter.cpp — depthwise convolutions (one input channel per
// group, one output channel per input channel) over channels-last data.
//
// out(n, oh, ow, c) = epilogue(sum over (kh, kw) of X(n, ih, iw, c) * W(kh, kw, c))
//
// Each output pixel's channels are contiguous, and so are its input
// pixel's, so the kernel vectorizes over channels: a tile is `mr`
// consecutive pixels of one output row times one vector of channels, with
// one accumulator per pixel. A tap (kh, kw) loads one weight vector (the
// packed weights are [kh*kw][channels padded to whole vectors]; the loads
// are invariant in the pixel loops, so LLVM keeps small kernels' weights in
// registers) and one input vector per pixel. Tiles whose windows lie inside
// the input address pixels from one row pointer; border tiles select, per
// input column of a window row, the input or a zero vector (each column's
// offset and validity computed once per tile), loading each column once
// for all the taps that read it. A last partial channel vector
// loads and stores under a lane mask. The epilogue (bias, activation, ...)
// runs on the accumulators before the only store.
//
// Tasks are blocks of output rows (of runs of pixels when there are few
// rows: RowUnits); each walks all channel vectors of a pixel tile before
// the next tile, so it reads and writes whole pixels.
//
// int8 (a uint8/int8 input with int8 weights): each input vector is
// widened to float once per window row of a tile and kept in registers
// for every tap that reads it, and the weights are packed as floats. The sums start
// at -x_zero * (sum of the channel's weights) (pack_weights; for more taps
// than that allows exactly, the zero point is subtracted from each input
// instead), so they are sums of (x - x_zero) * w. Every product and sum is
// an integer below 2^24, so the float sums are the exact int32 results;
// padding reads the zero point. On NEON (Target::depthwise_int8_channels)
// columns are 8 channels instead: each input vector is widened to 16 bits
// once, the weights are int16, and the products are summed in int32
// (smlal/smlal2, vmlal.s16: one instruction per 4 channels and tap, where
// widening to float costs 2.5 per 4 channels and input vector). Each
// half's product is smull / vmull.s16 explicitly: LLVM's own match of the
// widened multiply widened the inputs to 32 bits and multiplied with
// mla / vmla (the int8 depthwise steps 1.34x / 2.34x the float ones'
// instructions on AArch64 / ARMv7; 1.10x / 1.56x with smlal, vmlal.s16).
//
// Half (GemmSpec::half, --precision fp16: passes/half_inputs.cpp): X
// is stored as half and the weights are half; columns are 8 channels
// (fmla .8h), the sums run in half over the window (over each window row
// when the window has more than Target::half_chunk taps, each row's sum
// then added into float accumulators), and the epilogue runs on the sums
// widened to float.
#include "codegen/address_proof.h"
#include "codegen/kernel_emitters.h"
#include "tinyrt_artifact.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>

namespace tinyrt {

namespace {

using llvm::Value;

struct DepthwiseEmitter {
  EmitEnv &env;
  const Kernel &k;
  const GemmSpec &s;
  const Target &T;
  llvm::IRBuilder<> b;
  int L, mr;
  int64_t C, Cp;  // channels, padded to whole vectors
  std::vector<SlotRef> slots;
  SlotRef X, out;
  int64_t xs[4];  // input strides per role n, c, h, w
  Value *xbase = nullptr, *weights = nullptr, *zeros = nullptr;
  Value *start = nullptr;     // int8: the sums' start per channel, or null
  llvm::Type *wel = nullptr;  // weight element: float, half (--weights fp16), or int16 (qi)
  llvm::Type *f32, *vf32, *vi32 = nullptr, *vi16 = nullptr;
  bool q = false;                       // int8 input
  bool h = false;                       // half input, weights and products
  bool row_sums = false;                // h: each window row's half sums added into float accumulators
  llvm::FixedVectorType *vh = nullptr;  // h: a column of half channels
  bool qi = false;                      // int8 summed in int32 (NEON), else in float
  // The input and output sizes of this run: constants, or run-time image
  // sizes (gemm_runtime_spatial: rt_ then points at them).
  RunSizes run_;
  const RunSizes *rt_ = nullptr;
  llvm::Type *xel = nullptr;  // element of X

  GemmSpec epi;  // s with the epilogue the accumulators get

  DepthwiseEmitter(EmitEnv &e, const Kernel &kk)
      : env(e), k(kk), s(kk.gemm), T(e.target), b(e.module.getContext()), epi(kk.gemm) {
    // int8: the float sums are exact integers (see above), so reading them
    // as int32 and back as float changes nothing: no conversions.
    epi.epilogue = rewrite(s.epilogue, [](const ExprP &x) -> ExprP {
      if (x->op == EOp::Cast && x->type == DType::F32 && x->a[0]->op == EOp::Cast && x->a[0]->type == DType::I32 &&
          x->a[0]->a[0]->op == EOp::Acc && x->a[0]->a[0]->type == DType::F32)
        return x->a[0]->a[0];
      return nullptr;
    });
    f32 = b.getFloatTy();
    L = T.f32_lanes();
    // NEON int8: vector columns of s.nr channels summed in int32
    // (pack_weights: int16 weights, int32 start).
    qi = s.packed_bias >= 0 && s.nr != L;
    if (qi) {
      L = s.nr;
      // The sums are int32 here: the epilogue reads them as they are.
      epi.epilogue = rewrite(s.epilogue, [](const ExprP &x) -> ExprP {
        if (x->op == EOp::Cast && x->type == DType::I32 && x->a[0]->op == EOp::Acc) return acc(DType::I32);
        return nullptr;
      });
    }
    h = s.half;
    if (h) {
      L = T.half_lanes();
      vh = llvm::FixedVectorType::get(b.getHalfTy(), L);
      row_sums = s.k_h * s.k_w > T.half_chunk;
    }
    mr = std::max(1, s.mr);
    C = s.out_c;
    Cp = (C + L - 1) / L * L;
    vf32 = llvm::FixedVectorType::get(f32, L);
    vi32 = llvm::FixedVectorType::get(b.getInt32Ty(), L);
    vi16 = llvm::FixedVectorType::get(b.getInt16Ty(), L);
  }

  Value *i32(int64_t v) { return b.getInt32((int32_t)v); }

  Value *load_vec(Value *p, int lanes) { return load_lanes(b, llvm::cast<llvm::FixedVectorType>(vf32), p, lanes); }
  // An input vector as floats (int8: minus the zero point), or for int32
  // sums as int16.
  Value *load_x(Value *p, int lanes) {
    if (h) return load_lanes(b, vh, p, lanes);
    if (!q) return load_vec(p, lanes);
    Value *v = load_lanes(b, llvm::FixedVectorType::get(b.getInt8Ty(), L), p, lanes);
    if (qi) return X.type == DType::I8 ? b.CreateSExt(v, vi16) : b.CreateZExt(v, vi16);
    v = X.type == DType::I8 ? b.CreateSIToFP(v, vf32) : b.CreateUIToFP(v, vf32);
    if (start) return v;
    return b.CreateFSub(v, llvm::ConstantFP::get(vf32, (double)s.x_zero));
  }

  // acc + x * w: a float FMA, or (qi) 16-bit x and w widened into int32
  // (smlal/smlal2, vmlal.s16).
  Value *mac(Value *acc, Value *x, Value *w) {
    if (h) return b.CreateIntrinsic(llvm::Intrinsic::fma, {vh}, {x, w, acc});
    if (!qi) return b.CreateIntrinsic(llvm::Intrinsic::fma, {vf32}, {x, w, acc});
    if (T.arch != TINYRT_ARCH_X86_64 && L % 4 == 0) {
      // NEON: the widening product of each half as smull (vmull.s16),
      // which instruction selection fuses with the sum (smlal/smlal2,
      // vmlal.s16); LLVM's own match of the widened multiply widens the
      // inputs and multiplies in 32 bits (ushll + mla, vmovl + vmla).
      auto *h32 = llvm::FixedVectorType::get(b.getInt32Ty(), 4);
      const llvm::Intrinsic::ID mull = T.arch == TINYRT_ARCH_ARMV7
                                           ? llvm::Intrinsic::ID(llvm::Intrinsic::arm_neon_vmulls)
                                           : llvm::Intrinsic::ID(llvm::Intrinsic::aarch64_neon_smull);
      std::vector<Value *> parts;
      for (int h = 0; h < L / 4; ++h) {
        std::vector<int> idx = {4 * h, 4 * h + 1, 4 * h + 2, 4 * h + 3};
        Value *p = b.CreateIntrinsic(mull, {h32}, {b.CreateShuffleVector(x, idx), b.CreateShuffleVector(w, idx)});
        parts.push_back(b.CreateAdd(b.CreateShuffleVector(acc, idx), p));
      }
      return concat_vectors(b, parts);
    }
    return b.CreateAdd(acc, b.CreateMul(b.CreateSExt(x, vi32), b.CreateSExt(w, vi32)));
  }
  // A tap's weights for `lanes` channels: the packed channels are whole
  // vectors, so half weights (--weights fp16) load a whole one (a masked
  // load of 16-bit lanes is scalarized on x86).
  Value *load_w(Value *p, int lanes) {
    if (qi) return load_lanes(b, llvm::cast<llvm::FixedVectorType>(vi16), p, lanes);
    if (h) return load_lanes(b, vh, p, L);
    return load_float_weights(b, T, wel, p, L, wel->isHalfTy() ? L : lanes);
  }

  // A border tile's pixel iw of input row `row` (an element offset from a
  // clamped ih): its channels [c0, ...) from a clamped column (clamp_i32),
  // or zeros when the pixel lies in the padding.
  Value *border_pixel(Value *row, Value *row_ok, Value *iw, Value *zero_c) {
    Value *p = b.CreateGEP(xel, xbase, b.CreateAdd(row, b.CreateMul(clamp_i32(b, iw, 0, s.in_w - 1), i32(xs[3]))));
    return b.CreateSelect(b.CreateAnd(row_ok, b.CreateICmpULT(iw, run_.in_w)), p, zero_c);
  }

  // A border tile's input columns: each one's clamped offset and whether
  // it lies inside the run's input, once per tile rather than per tap and
  // row (kernels up to kBorderColumns wide; a wider one computes each
  // pixel's in turn, border_pixel).
  static constexpr int64_t kBorderColumns = 7;
  struct BorderColumns {
    std::vector<Value *> offset, ok;
  };

  // One window row (kh) of m pixels, the taps unrolled: each input column
  // is loaded (int8: and widened) once and shared by the taps that read
  // it: pixel i, tap kw reads column i * stride + kw * dilation.
  Values window_row(const Values &a0, Value *row, Value *row_ok, Value *iw0, const BorderColumns &cols, Value *kh,
                    Value *zero_c, bool inside, int m, Value *c0, int lanes) {
    int64_t span = (int64_t)(m - 1) * s.stride_w + (s.k_w - 1) * s.dil_w + 1;
    std::vector<Value *> xv((size_t)span, nullptr);
    // One 32-bit offset per row; constant byte offsets from it fold into
    // the loads' addressing. Where vector loads take no immediate offset
    // (ARMv7) the row pointer is a base of its own (opaque_pointer), which
    // the loads walk by post-increment: otherwise LLVM's strength reduction
    // keeps a pointer per input column and tap, advanced with the channel
    // loop, and spills them (an ldr and an add before each load).
    Value *rowp = inside ? b.CreateGEP(xel, xbase, b.CreateAdd(row, b.CreateMul(iw0, i32(xs[3])))) : nullptr;
    if (rowp && !T.vector_imm_offsets) rowp = b.CreateBitCast(opaque_pointer(b, rowp), xel->getPointerTo());
    auto input = [&](int64_t j) {
      if (!xv[(size_t)j]) {
        Value *p;
        if (inside)
          p = b.CreateGEP(xel, rowp, b.getInt64(j * xs[3]));
        else if (!cols.offset.empty())
          p = b.CreateSelect(b.CreateAnd(row_ok, cols.ok[(size_t)j]),
                             b.CreateGEP(xel, xbase, b.CreateAdd(row, cols.offset[(size_t)j])), zero_c);
        else
          p = border_pixel(row, row_ok, b.CreateAdd(iw0, i32(j)), zero_c);
        xv[(size_t)j] = load_x(p, lanes);
      }
      return xv[(size_t)j];
    };
    Values a = a0;
    for (int64_t kw = 0; kw < s.k_w; ++kw) {
      Value *tap = b.CreateAdd(b.CreateMul(kh, i32(s.k_w)), i32(kw));
      Value *w = load_w(b.CreateGEP(wel, weights, b.CreateAdd(b.CreateMul(tap, i32(Cp)), c0)), lanes);
      for (int i = 0; i < m; ++i) a[(size_t)i] = mac(a[(size_t)i], input(i * s.stride_w + kw * s.dil_w), w);
    }
    return a;
  }

  // m pixels from (n, oh, ow0), channels [c0, c0 + lanes).
  void tile(bool inside, int m, Value *n, Value *oh, Value *ow0, Value *c0, int lanes) {
    Value *ih0 = b.CreateSub(b.CreateMul(oh, i32(s.stride_h)), i32(s.pad_t));
    Value *iw0 = b.CreateSub(b.CreateMul(ow0, i32(s.stride_w)), i32(s.pad_l));
    if (inside) {  // window_interior holds: pointers from clamped coordinates (clamp_i32)
      ih0 = clamp_i32(b, ih0, 0, s.in_h - 1 - (s.k_h - 1) * s.dil_h);
      iw0 = clamp_i32(b, iw0, 0, s.in_w - 1 - ((int64_t)(m - 1) * s.stride_w + (s.k_w - 1) * s.dil_w));
    }
    Value *origin = b.CreateAdd(b.CreateMul(n, i32(xs[0])), c0);
    Value *zero_c = b.CreateGEP(xel, zeros, c0);
    Value *init =
        h && !row_sums ? llvm::Constant::getNullValue(vh)
        : !start       ? llvm::Constant::getNullValue(vf32)
        : qi ? load_lanes(b, llvm::cast<llvm::FixedVectorType>(vi32), b.CreateGEP(b.getInt32Ty(), start, c0), lanes)
             : load_vec(b.CreateGEP(f32, start, c0), lanes);
    Values acc(m, init);
    BorderColumns cols;
    if (!inside && s.k_w <= kBorderColumns) {
      int64_t span = (int64_t)(m - 1) * s.stride_w + (s.k_w - 1) * s.dil_w + 1;
      for (int64_t j = 0; j < span; ++j) {
        Value *iw = b.CreateAdd(iw0, i32(j));
        cols.offset.push_back(b.CreateMul(clamp_i32(b, iw, 0, s.in_w - 1), i32(xs[3])));
        cols.ok.push_back(b.CreateICmpULT(iw, run_.in_w));
      }
    }
    acc = carried_loop(
        b, 0, s.k_h, 1, acc,
        [&](Value *kh, const Values &acc0) {
          // row_sums: this row's taps summed in half from zero, then added
          // into the float accumulators.
          const Values a0 = row_sums ? Values(m, llvm::Constant::getNullValue(vh)) : acc0;
          auto done = [&](Values a) {
            if (row_sums)
              for (int i = 0; i < m; ++i)
                a[(size_t)i] = b.CreateFAdd(acc0[(size_t)i], b.CreateFPExt(a[(size_t)i], vf32));
            return a;
          };
          Value *ih = b.CreateAdd(ih0, b.CreateMul(kh, i32(s.dil_h)));
          Value *row_ok = inside ? nullptr : b.CreateICmpULT(ih, run_.in_h);
          Value *row = b.CreateAdd(origin, b.CreateMul(inside ? ih : clamp_i32(b, ih, 0, s.in_h - 1), i32(xs[2])));
          if (q || !cols.offset.empty() || (inside && !T.vector_imm_offsets))
            return done(window_row(a0, row, row_ok, iw0, cols, kh, zero_c, inside, m, c0, lanes));
          return done(carried_loop(
              b, 0, s.k_w, 1, a0,
              [&](Value *kw, const Values &a1) {
                Value *tap = b.CreateAdd(b.CreateMul(kh, i32(s.k_w)), kw);
                Value *w = load_w(b.CreateGEP(wel, weights, b.CreateAdd(b.CreateMul(tap, i32(Cp)), c0)), lanes);
                Value *iwk = b.CreateAdd(iw0, b.CreateMul(kw, i32(s.dil_w)));
                Value *base =
                    inside ? b.CreateGEP(xel, xbase, b.CreateAdd(row, b.CreateMul(iwk, i32(xs[3])))) : nullptr;
                Values a = a1;
                for (int i = 0; i < m; ++i) {
                  Value *p = inside ? b.CreateGEP(xel, base, i32(i * s.stride_w * xs[3]))
                                    : border_pixel(row, row_ok, b.CreateAdd(iwk, i32(i * s.stride_w)), zero_c);
                  a[i] = mac(a[i], load_x(p, lanes), w);
                }
                return a;
              },
              "kw"));
        },
        "kh");
    if (h && !row_sums)
      for (Value *&a : acc) a = b.CreateFPExt(a, vf32);
    ExprEmitter em(b, T, L);
    em.set_slots(slots);
    if (loops_epilogue(T, epi, m)) {
      looped_epilogue(b, acc, m, [&](Value *i, const Values &a) {
        store_epilogue(em, epi, out, n, oh, b.CreateAdd(ow0, i), c0, a[0], lanes);
      });
      return;
    }
    for (int i = 0; i < m; ++i) store_epilogue(em, epi, out, n, oh, b.CreateAdd(ow0, i32(i)), c0, acc[i], lanes);
  }

  // All channel vectors of m pixels from (n, oh, ow0).
  void pixels(int m, Value *n, Value *oh, Value *ow0) {
    auto channels = [&](bool inside) {
      for_channel_vectors(b, C, L, [&](Value *c0, int lanes) { tile(inside, m, n, oh, ow0, c0, lanes); });
    };
    emit_branch(
        b, window_interior(b, s, oh, ow0, m, rt_), [&] { channels(true); }, [&] { channels(false); }, "tile");
  }

  EmittedKernel emit(const std::string &name) {
    llvm::Function *f = begin_kernel_function(env, b, name);
    Value *arena = f->getArg(0);
    slots = scheduled_slots(env, b, arena, k);
    X = slots.at(0);
    out = slot_for(env, b, arena, k.out);
    for (int rl = 0; rl < 4; ++rl) xs[rl] = s.in_axis[rl] >= 0 ? X.strides[s.in_axis[rl]] : 0;
    TINYRT_CHECK(xs[1] == 1 && out.strides[s.out_axis[1]] == 1, "depthwise channels must be contiguous");
    q = X.type == DType::U8 || X.type == DType::I8;
    TINYRT_CHECK(h == (X.type == DType::F16), "a depthwise convolution's half input and half products go together");
    xel = q ? (llvm::Type *)b.getInt8Ty() : h ? b.getHalfTy() : f32;
    xbase = b.CreateBitCast(X.base, xel->getPointerTo());
    wel = qi ? (llvm::Type *)b.getInt16Ty() : float_weight_type(b, env.program, s.packed);
    TINYRT_CHECK(!h || wel->isHalfTy(), "a depthwise convolution in half over float weights");
    weights = b.CreateBitCast(env.const_data(s.packed), wel->getPointerTo());
    if (q && s.packed_bias >= 0)
      start = b.CreateBitCast(env.const_data(s.packed_bias), (qi ? (llvm::Type *)b.getInt32Ty() : f32)->getPointerTo());
    zeros = q ? fill_bytes(env, b, Cp, (uint8_t)s.x_zero, name) : zero_floats(env, b, Cp, name);
    zeros = b.CreateBitCast(zeros, xel->getPointerTo());  // (h: Cp floats of zero bits hold Cp halves)

    // Run-time image sizes: whole rows, shared by the run's rows.
    run_ = {i32(s.in_h), i32(s.in_w), i32(s.out_h), i32(s.out_w)};
    const Graph &g = env.program.graph;
    if (g.v(k.out).is_dynamic() || g.v(k.ins.at(0)).is_dynamic()) {
      TINYRT_CHECK(gemm_runtime_spatial(s, g.v(k.out), g.v(k.ins.at(0))) > 0,
                   "a depthwise convolution with run-time "
                   "extents it cannot take");
      run_ = run_sizes(env, b, load_dims(env, b, arena), k);
      rt_ = &run_;
    }
    RowUnits units = row_units(s, mr, !rt_);
    auto run = [&](Value *n, Value *oh, Value *ow0, int m) { pixels(m, n, oh, ow0); };
    int64_t tasks = emit_row_block_tasks(b, f, units.count, [&](Value *u0, Value *u1) {
      if (rt_)
        for_run_rows(b, s, *rt_, u0, u1, mr, run);
      else
        for_unit_runs(b, s, units, u0, u1, mr, run);
    });
    b.CreateRetVoid();
    return {f, tasks};
  }
};

}  // namespace

EmittedKernel emit_depthwise_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  DepthwiseEmitter d(env, k);
  return d.emit(name);
}

}  // namespace tinyrt
