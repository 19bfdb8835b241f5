// pack_weights.cpp — for each GEMM/conv kernel: the register tile for the
// target (pixels x output-channel vectors) and the weights rearranged at
// compile time into the order the micro-kernel reads them:
// [group][oc tile][kh*kw][ic][nr], zero-padded to whole tiles (int8:
// [group][oc tile][kh*kw][ic/4][nr][4] plus an int32 accumulator start per
// output channel); for each depthwise kernel: the pixels per tile and the
// weights as [kh*kw][channels padded to whole vectors]. Float weights
// (GEMM, depthwise, recurrent) are stored as float, or as IEEE half with
// --weights fp16 (PackOptions): the kernels widen them as they load them.
#include "passes/pass.h"

#include <algorithm>
#include <map>
#include <cmath>

namespace tinyrt {

namespace {

bool fits_half(const std::vector<float> &w) { return std::all_of(w.begin(), w.end(), in_half_range); }

// Depthwise: [kh*kw][channels rounded up to whole vectors], so one vector
// load gives a tap's weights for `lanes` consecutive channels.
// int8 with integer sums (Target::depthwise_int8_channels != f32 lanes):
// the weights as int16 and the sums' start as int32.
void pack_depthwise(Graph &g, GemmSpec &s, int mr, int lanes, bool int_sums, WeightStorage st) {
  const Value &w = g.v(s.weight);
  int64_t C = s.out_c, KK = s.k_h * s.k_w, Cp = (C + lanes - 1) / lanes * lanes;
  s.mr = mr;
  s.nr = lanes;
  if (int_sums) {
    std::vector<int16_t> out((size_t)(KK * Cp), 0);
    std::vector<int32_t> start((size_t)Cp, 0);
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t kk = 0; kk < KK; ++kk) {
        int64_t v = w.data->get_i(ch * KK + kk);
        out[(size_t)(kk * Cp + ch)] = (int16_t)v;
        start[(size_t)ch] -= (int32_t)(s.x_zero * v);
      }
    Bytes wb((const uint8_t *)out.data(), (const uint8_t *)(out.data() + out.size()));
    s.packed =
        g.add_const(g.fresh_name(w.name + "_packed"), make_const(DType::I16, {(int64_t)out.size()}, std::move(wb)));
    Bytes bb((const uint8_t *)start.data(), (const uint8_t *)(start.data() + start.size()));
    s.packed_bias = g.add_const(g.fresh_name(w.name + "_start"), make_const(DType::I32, {Cp}, std::move(bb)));
    return;
  }
  std::vector<float> out((size_t)(KK * Cp), 0.f);
  for (int64_t kk = 0; kk < KK; ++kk)  // float, or int8 widened exactly
    for (int64_t ch = 0; ch < C; ++ch) out[(size_t)(kk * Cp + ch)] = (float)w.data->get_f(ch * KK + kk);
  // int8 weights widened to float stay float: they are no larger than
  // the model's, and exact either way.
  bool f32 = dtype_is_float(w.dtype);
  s.packed = add_float_weights(g, w.name + "_packed", out, f32 ? st : WeightStorage::F32);
  // int8: sums of x * w started at -x_zero * (sum of the channel's
  // weights) are sums of (x - x_zero) * w without a subtraction per tap.
  // Exact in float while every partial sum stays below 2^24: |x|, |x_zero|
  // <= 255 and |w| <= 128 over at most kMaxFoldTaps taps.
  constexpr int64_t kMaxFoldTaps = 257;
  if (dtype_is_float(g.v(s.weight).dtype) || s.x_zero == 0 || KK > kMaxFoldTaps) return;
  std::vector<float> start((size_t)Cp, 0.f);
  for (int64_t ch = 0; ch < C; ++ch) {
    int64_t sum = 0;
    for (int64_t kk = 0; kk < KK; ++kk) sum += w.data->get_i(ch * KK + kk);
    start[(size_t)ch] = (float)(-s.x_zero * sum);
  }
  s.packed_bias = g.add_const(g.fresh_name(w.name + "_start"), make_const_f32({Cp}, start));
}

// Recurrent: R [D, G*H, H] group-major (Hp = H padded to whole vectors;
// see below): step k of the recurrent product loads, for every gate, whole
// vectors of hidden units, each group's weights in sequence over k.
// Byte of (channel c of a packed int8 row of channels, input k of a quad)
// within the quad's bytes: [c][4], or for DotI8::NeonPairs each vector of
// L channels x 4 inputs as lane pairs [k / 2][c % L][2].
int64_t quad_byte(bool pairs, int L, int64_t c, int64_t k) {
  if (!pairs) return c * 4 + k;
  return (c / L) * 4 * L + (k / 2) * 2 * L + (c % L) * 2 + k % 2;
}

// Whether vpmaddubsw, which sums the products of two uint8 inputs x, x'
// with two weights w, w' in 16 bits with saturation, computes x*w + x'*w'
// exactly for all x, x' in [0, 255]: it stays within [-32768, 32767] when
// the positive weights of the pair sum to at most 128 and the negative
// ones to at least -128. Weights within [-64, 64] (7 bits: --weight-bits 7,
// ONNX Runtime's reduce_range) always pass; the full int8 range rarely
// does.
bool byte_pair_exact(int a, int b) {
  return std::max(a, 0) + std::max(b, 0) <= 128 && std::min(a, 0) + std::min(b, 0) >= -128;
}

// Whether the target multiplies weights without -128 as signed bytes:
// vpsignb exists up to AVX2 (AVX-512 without VNNI keeps the widened form).
static bool signed_bytes_form(const Target &t) { return t.dot_i8 == DotI8::X86Madd && t.vector_bytes <= 32; }

// Whether the int8 products take X's bytes as uint8 (+1), int8 (-1) or
// either (0): the target's dot product, on x86 without VNNI the layer's form.
static int madd_x_sign(DotI8 d, MaddForm form) {
  if (d != DotI8::X86Madd) return dot_i8_x_sign(d);
  return form == MaddForm::Bytes ? 1 : form == MaddForm::SignedBytes ? -1 : 0;
}

// Dynamic int8 recurrent: R [D, G*H, H] (int8) tile-major, as
// [D][tile of NB = vectors * lanes units][k/4][G][NB][4] (quad_byte order
// inside each gate's NB * 4 bytes), so that a group of units reads its
// weights sequentially; its row scales as [D][G][Hp] and, when the dot
// product takes uint8 (the state's bytes are flipped, x + 128), the int32
// start -128 * (sum of the row) as [D][G][Hp]. Hp: H padded to whole tiles.
void pack_recurrent_int8(Graph &g, RecurrentSpec &r, const Target &target) {
  const Value &w = g.v(r.r), &sc = g.v(r.r_scale);
  int L = target.f32_lanes();
  r.vectors = target.recurrent_vectors(r.G);
  int64_t NB = (int64_t)r.vectors * L;
  int64_t H = r.H, G = r.G, Hp = (H + NB - 1) / NB * NB, Kq = (H + 3) / 4;
  bool pairs = target.dot_i8 == DotI8::NeonPairs;
  std::vector<int8_t> out((size_t)(r.D * Kq * G * Hp * 4), 0);
  std::vector<float> scale((size_t)(r.D * G * Hp), 0.f);
  std::vector<int32_t> start((size_t)(r.D * G * Hp), 0);
  const int8_t *src = w.data->as<int8_t>();
  bool has_min = false;
  for (int64_t d = 0; d < r.D; ++d)
    for (int64_t gt = 0; gt < G; ++gt)
      for (int64_t j = 0; j < H; ++j) {
        int64_t row = (d * G + gt) * H + j, sum = 0;
        for (int64_t k = 0; k < H; ++k) {
          int8_t v = src[row * H + k];
          int64_t tile = d * (Hp / NB) + j / NB;
          out[(size_t)((((tile * Kq + k / 4) * G + gt) * NB) * 4 + quad_byte(pairs, L, j % NB, k % 4))] = v;
          sum += v;
          has_min |= v == -128;
        }
        scale[(size_t)((d * G + gt) * Hp + j)] = (float)sc.data->get_f(row);
        start[(size_t)((d * G + gt) * Hp + j)] = (int32_t)(-128 * sum);
      }
  r.pair16 = !has_min;
  // x86 without VNNI (MaddForm): bytes when every pair of R's weights
  // summed together (the packed quads' bytes 0-1 and 2-3 of one unit) keeps
  // vpmaddubsw exact, the state's bytes then flipped to uint8; else signed
  // bytes when no weight is -128 (the state is int8).
  if (target.dot_i8 == DotI8::X86Madd) {
    bool bytes = true;
    for (size_t i = 0; i + 1 < out.size() && bytes; i += 2) bytes = byte_pair_exact(out[i], out[i + 1]);
    r.madd = bytes                                   ? MaddForm::Bytes
             : !has_min && signed_bytes_form(target) ? MaddForm::SignedBytes
                                                     : MaddForm::Widened;
  }
  r.x_flip = madd_x_sign(target.dot_i8, r.madd) > 0;
  r.h_padded = Hp;
  Bytes wb((const uint8_t *)out.data(), (const uint8_t *)out.data() + out.size());
  r.packed = g.add_const(g.fresh_name(w.name + "_packed"), make_const(DType::I8, {(int64_t)out.size()}, std::move(wb)));
  r.packed_scale = g.add_const(g.fresh_name(w.name + "_scales"), make_const_f32({(int64_t)scale.size()}, scale));
  if (r.x_flip) {
    Bytes bb((const uint8_t *)start.data(), (const uint8_t *)start.data() + start.size() * 4);
    r.packed_start =
        g.add_const(g.fresh_name(w.name + "_start"), make_const(DType::I32, {(int64_t)start.size()}, std::move(bb)));
  }
}

void pack_recurrent(Graph &g, RecurrentSpec &r, const Target &target, WeightStorage st) {
  if (r.r_scale >= 0) return pack_recurrent_int8(g, r, target);
  int lanes = target.f32_lanes();
  const Value &w = g.v(r.r);
  int64_t H = r.H, G = r.G, Hp = (H + lanes - 1) / lanes * lanes;
  r.vectors = target.recurrent_vectors(r.G);
  // Group-major: the emitter walks the units in groups of `vectors`
  // vectors (NB units), then the rest one vector at a time; per direction,
  // each full group is a block [k][G][NB] and the rest one block
  // [k][G][Hp - full * NB], so a group reads its weights sequentially over
  // k (instead of a 4 KB stride per k) and a step's gate vectors are
  // adjacent.
  int64_t NB = (int64_t)r.vectors * lanes, tail0 = (H / lanes) / r.vectors * NB, width = Hp - tail0;
  std::vector<float> out((size_t)(r.D * H * G * Hp), 0.f);
  const float *src = w.data->as<float>();
  for (int64_t d = 0; d < r.D; ++d)
    for (int64_t k = 0; k < H; ++k)
      for (int64_t gt = 0; gt < G; ++gt)
        for (int64_t j = 0; j < H; ++j) {
          int64_t at = d * H * G * Hp + (j < tail0 ? (j / NB) * H * G * NB + (k * G + gt) * NB + j % NB
                                                   : tail0 * H * G + (k * G + gt) * width + (j - tail0));
          out[(size_t)at] = src[(d * G * H + gt * H + j) * H + k];
        }
  r.packed = add_float_weights(g, w.name + "_packed", out, st);
  r.h_padded = Hp;
}

// Whether a GEMM's weights keep the int8 products exact when multiplied as
// bytes (vpmaddubsw, byte_pair_exact) for every input: the pairs are inputs
// 2j, 2j+1 of each output channel in packed order (a quad's bytes 0-1 and
// 2-3; an odd K's last input pairs with the packing's zero).
static bool byte_pairs_exact(const GemmSpec &s, const int8_t *src) {
  int64_t ICg = s.in_c / s.groups, KK = s.k_h * s.k_w, ICp = s.k_run ? s.k_w * ICg : ICg;
  for (int64_t oc = 0; oc < s.out_c; ++oc)
    for (int64_t kp = 0; kp < (s.k_run ? s.k_h : KK); ++kp) {
      auto w = [&](int64_t ip) -> int {  // input ip of the packed K (0 past its end)
        if (ip >= ICp) return 0;
        int64_t kk = s.k_run ? kp * s.k_w + ip / ICg : kp, ic = s.k_run ? ip % ICg : ip;
        return src[(oc * ICg + ic) * KK + kk];
      };
      for (int64_t ip = 0; ip < ICp; ip += 2)
        if (!byte_pair_exact(w(ip), w(ip + 1))) return false;
    }
  return true;
}

// int16 pairs over int8 weights (GemmSpec::w8): [group][oc tile][kh*kw]
// [ic / 2][nr][2] bytes, a pair's two weights of one output channel side
// by side, so that a step's 2 * nr bytes widen into nr int32 lanes of
// int16 pairs; no starts (x_zero is 0).
void pack_qgemm_w8(Graph &g, GemmSpec &s, int NR) {
  const Value &w = g.v(s.weight);
  const int64_t G = s.groups, OCg = s.out_c / G, ICg = s.in_c / G, OCt = (OCg + NR - 1) / NR;
  const int64_t KK = s.k_h * s.k_w;
  // k_run: a kernel row's (kw, ic) as one K of k_w * ICg inputs, in pairs.
  const int64_t KKp = s.k_run ? s.k_h : KK, ICp = s.k_run ? s.k_w * ICg : ICg, ICk = (ICp + 1) / 2;
  TINYRT_CHECK(s.i16 && w.dtype == DType::I8 && s.x_zero == 0 && ICg % 2 == 0,
               "int16 pairs over int8 weights need int8 weights, whole pairs of channels and a zero-free input");
  std::vector<int8_t> out((size_t)(G * OCt * KKp * ICk * NR * 2), 0);
  const int8_t *src = w.data->as<int8_t>();
  for (int64_t gi = 0; gi < G; ++gi)
    for (int64_t ocg = 0; ocg < OCg; ++ocg)
      for (int64_t ic = 0; ic < ICg; ++ic)
        for (int64_t kk = 0; kk < KK; ++kk) {
          const int64_t kp = s.k_run ? kk / s.k_w : kk, ip = s.k_run ? kk % s.k_w * ICg + ic : ic;
          out[(size_t)(((((gi * OCt + ocg / NR) * KKp + kp) * ICk + ip / 2) * NR + ocg % NR) * 2 + ip % 2)] =
              src[((gi * OCg + ocg) * ICg + ic) * KK + kk];
        }
  Bytes wb((const uint8_t *)out.data(), (const uint8_t *)out.data() + out.size());
  s.packed = g.add_const(g.fresh_name(w.name + "_packed"), make_const(DType::I8, {(int64_t)out.size()}, std::move(wb)));
  s.packed_bias = -1;
}

// int8 GEMM: weights [group][oc tile][kh*kw][ic/4][nr][4] (int8, zero
// padded; k_run: [oc tile][kh][k_w*ic/4][nr][4]) and, per output channel, the accumulators' start
// -x_zero * sum of the channel's weights, so that the kernel's sums of
// x * w become sums of (x - x_zero) * w. When the target's dot product
// takes the other signedness than X (vpdpbusd: uint8, NEON: int8), X's
// bytes are flipped (xor 0x80: x +- 128), and its zero point with them.
// DotI8::NeonPairs packs each vector of 4 channels x 4 inputs as lane
// pairs, [input pair h][channel][2]: a widening multiply of one half with
// X's pairs and a pairwise add of 16-bit lanes give each channel's lane.
// int16 operands (GemmSpec::i16): the weight's int16 values as bytes, two
// inputs each, packed so as bytes (no flip, no lane pairs: the emitter
// multiplies a quad's two int16 by pmaddwd or widened on every target).
void pack_qgemm(Graph &g, GemmSpec &s, DType xt, const Target &target, int NR) {
  const Value &w = g.v(s.weight);
  if (s.w8) {
    pack_qgemm_w8(g, s, NR);
    return;
  }
  int64_t G = s.groups, OCg = s.out_c / G, ICg = s.in_c / G * (s.i16 ? 2 : 1), KK = s.k_h * s.k_w;
  TINYRT_CHECK(!s.i16 || (w.dtype == DType::I16 && KK == 1 && !s.k_run && s.x_zero == 0),
               "an int16 GEMM's weights must be int16 over 1x1 taps");
  // k_run: a kernel row's (kw, ic) as one K of k_w * ICg inputs.
  int64_t KKp = s.k_run ? s.k_h : KK, ICp = s.k_run ? s.k_w * ICg : ICg;
  int64_t OCt = (OCg + NR - 1) / NR, ICq = (ICp + 3) / 4;
  int sign = s.i16 ? 0 : madd_x_sign(target.dot_i8, s.madd);
  s.x_flip = (sign > 0 && xt == DType::I8) || (sign < 0 && xt == DType::U8);
  int64_t zero = s.x_zero + (s.x_flip ? (xt == DType::I8 ? 128 : -128) : 0);
  bool pairs = target.dot_i8 == DotI8::NeonPairs && !s.i16;
  int L = target.f32_lanes();
  // Byte of (channel r of the tile, input k of the quad) within the quad's
  // NR * 4 bytes.
  auto at = [&](int64_t r, int64_t k) { return quad_byte(pairs, L, r, k); };
  std::vector<int8_t> out((size_t)(G * OCt * KKp * ICq * NR * 4), 0);
  std::vector<int32_t> start((size_t)(G * OCt * NR), 0);
  const int8_t *src = (const int8_t *)w.data->bytes.data();
  for (int64_t gi = 0; gi < G; ++gi)
    for (int64_t ocg = 0; ocg < OCg; ++ocg) {
      int64_t ot = ocg / NR, r = ocg % NR, oc = gi * OCg + ocg, sum = 0;
      for (int64_t kk = 0; kk < KK; ++kk)
        for (int64_t ic = 0; ic < ICg; ++ic) {
          int8_t v = src[(oc * ICg + ic) * KK + kk];
          int64_t kp = s.k_run ? kk / s.k_w : kk, ip = s.k_run ? kk % s.k_w * ICg + ic : ic;
          out[(size_t)((((gi * OCt + ot) * KKp + kp) * ICq + ip / 4) * NR * 4 + at(r, ip % 4))] = v;
          sum += v;
        }
      start[(size_t)(gi * OCt * NR + ocg)] = (int32_t)(-zero * sum);
    }
  Bytes wb((const uint8_t *)out.data(), (const uint8_t *)out.data() + out.size());
  s.packed = g.add_const(g.fresh_name(w.name + "_packed"), make_const(DType::I8, {(int64_t)out.size()}, std::move(wb)));
  Bytes bb((const uint8_t *)start.data(), (const uint8_t *)start.data() + start.size() * 4);
  s.packed_bias =
      g.add_const(g.fresh_name(w.name + "_start"), make_const(DType::I32, {(int64_t)start.size()}, std::move(bb)));
}

// A product of two activations (GemmSpec::arena_weights, its tile chosen):
// returns the loop kernel, to be placed before the product, that packs B
// [batch..., K, N] as [batch..., oc tile][K][nr] (columns past N zero),
// the order the micro-kernel reads, and makes the product read that copy.
Kernel pack_at_run_time(Graph &g, Kernel &k) {
  const GemmSpec &s = k.gemm;
  const Value &b = g.v(k.ins[1]);  // Graph::values is a deque: add_value keeps it in place
  int r = b.rank();
  int64_t K = s.in_c, N = s.out_c, NR = s.nr, OCt = (N + NR - 1) / NR;
  Shape shape(b.shape.begin(), b.shape.end() - 2);
  shape.insert(shape.end(), {OCt, K, NR});
  check_tensor_size(shape, g.limits, "the packed B of '" + k.label + "'");
  Kernel pack;
  pack.out = g.add_value(g.fresh_name(b.name + "_packed"), b.dtype, shape);
  pack.ins = {k.ins[1]};
  std::vector<ExprP> idx;
  for (int i = 0; i < r - 2; ++i) idx.push_back(var(i));
  ExprP col = var(r - 2) * cidx(NR) + var(r);
  idx.push_back(var(r - 1));
  idx.push_back(col);
  pack.expr = select(in_range(col, N), load(0, b.dtype, idx), cst(b.dtype, 0));
  // Run-time extents of B (K, N over T frames in attention): the copy packs
  // the actual ones, K rows and ceil(N / nr) tiles, in the bounds' layout.
  if (b.is_dynamic()) {
    Value &pv = g.v(pack.out);
    pv.dims.assign((size_t)pv.rank(), -1);
    for (int i = 0; i < r - 2; ++i) pv.dims[(size_t)i] = b.dim(i);
    pv.dims[(size_t)r - 1] = b.dim(r - 2);  // [batch..., oc tile, K, nr]
    if (b.dim(r - 1) >= 0)
      pv.dims[(size_t)r - 2] =
          g.derived_sym((g.extent(k.ins[1], r - 1) + (NR - 1)) / cidx(NR), pv.name + "[" + std::to_string(r - 2) + "]");
  }
  pack.label = "PackB";
  pack.nodes = k.nodes;
  pack.guard = k.guard;
  k.ins[1] = pack.out;
  // The definition reads B through the copy:
  // B[batch..., k, n] = packed[batch..., n / nr, k, n % nr].
  k.expr = replace_loads(k.expr, 1, [&](const Expr &e) {
    std::vector<ExprP> at(e.a.begin(), e.a.end() - 2);
    ExprP kk = e.a[e.a.size() - 2], n = e.a.back();
    at.insert(at.end(), {bin(EOp::Div, n, cidx(NR)), kk, bin(EOp::Rem, n, cidx(NR))});
    return load(1, e.type, at);
  });
  return pack;
}

}  // namespace

// (pass.h) s.pair16: no weight is -128; on x86 without VNNI, s.madd:
// bytes when the weights allow it, else signed bytes unless a weight is
// -128, else widened.
void choose_int8_products(GemmSpec &s, const Graph &g, const Target &t) {
  const Value &w = g.v(s.weight);
  const int8_t *src = w.data->as<int8_t>();
  const int64_t n = shape_numel(w.shape);
  s.pair16 = std::find(src, src + n, int8_t(-128)) == src + n;
  if (t.dot_i8 != DotI8::X86Madd) return;
  s.madd = byte_pairs_exact(s, src)           ? MaddForm::Bytes
           : s.pair16 && signed_bytes_form(t) ? MaddForm::SignedBytes
                                              : MaddForm::Widened;
}

Target::TileClass gemm_tile_class(const GemmSpec &s, Target::TileKind kind) {
  GemmTileShape ts = gemm_tile_shape(s);
  return {kind, ts.oc, ts.row, ts.ic, ts.one_row() || s.arena_weights};
}

GemmTile gemm_table_tile(const GemmSpec &s, const Target &t, Target::TileKind kind, int max_nv, double *score) {
  const Target::TileClass c = gemm_tile_class(s, kind);
  return t.gemm_tile(c.oc, c.row, c.linear, c.ic, kind, score, max_nv);
}

// A GEMM's register tile: the one the weights plan chose (GemmSpec mr, nr),
// else the target's for the layer's shape.
static GemmTile gemm_tile_of(const GemmSpec &s, const Target &t, Target::TileKind kind) {
  // (set: the weights plan's float tiles; the int16 tile of an int8 Winograd
  // layer's run-time weights, which all its bands' GEMMs read)
  if ((kind == Target::TileKind::Float || s.i16) && s.mr > 0 && s.nr > 0)
    return {s.mr, s.nr / t.f32_lanes(), t.gemm_unroll};
  return gemm_table_tile(s, t, kind);
}

GemmTile float_gemm_tile(const GemmSpec &s, const Target &t) { return gemm_tile_of(s, t, Target::TileKind::Float); }

int64_t float_gemm_nr(const GemmSpec &s, const Target &t) { return (int64_t)float_gemm_tile(s, t).nv * t.f32_lanes(); }

int64_t packed_float_weight_bytes(const GemmSpec &s, const Target &t, WeightStorage w) {
  const int64_t NR = float_gemm_nr(s, t);
  const int64_t G = s.groups, OCg = s.out_c / G, ICg = s.in_c / G, KK = s.k_h * s.k_w;
  return G * ((OCg + NR - 1) / NR) * NR * KK * ICg * (w == WeightStorage::F16 ? 2 : 4);
}

int64_t packed_depthwise_weight_bytes(const GemmSpec &s, const Target &t, WeightStorage w) {
  const int64_t L = s.half ? t.half_lanes() : t.f32_lanes(), Cp = (s.out_c + L - 1) / L * L;
  return s.k_h * s.k_w * Cp * (w == WeightStorage::F16 ? 2 : 4);
}

int packed_weights_of(const Kernel &k) {
  return k.kind == KernelKind::Recurrent ? k.rnn.packed : is_scheduled(k.kind) ? k.gemm.packed : -1;
}

const char *weight_storage_name(WeightStorage w) { return w == WeightStorage::F16 ? "fp16" : "fp32"; }

bool in_half_range(double v) { return std::fabs(v) <= 65504.0; }

int add_float_weights(Graph &g, const std::string &name, const std::vector<float> &w, WeightStorage st, Shape shape) {
  if (shape.empty()) shape = {(int64_t)w.size()};
  if (st == WeightStorage::F32 || !fits_half(w)) return g.add_const(g.fresh_name(name), make_const_f32(shape, w));
  std::vector<uint16_t> h(w.size());
  for (size_t i = 0; i < w.size(); ++i) h[i] = float_to_half(w[i]);
  Bytes bytes((const uint8_t *)h.data(), (const uint8_t *)(h.data() + h.size()));
  return g.add_const(g.fresh_name(name), make_const(DType::F16, shape, std::move(bytes)));
}
const char *precision_name(Precision p) { return p == Precision::F16 ? "fp16" : "fp32"; }

bool half_gemm_kind(const Program &p, const Kernel &k, const Target &t, Precision pr) {
  const GemmSpec &s = k.gemm;
  return pr == Precision::F16 && t.half_arith && k.kind == KernelKind::Gemm && !s.arena_weights && !s.arena_packed &&
         k.wino.m != 4 && !p.graph.v(k.out).is_dynamic() && !p.graph.v(k.ins[0]).is_dynamic();
}

// --precision fp16: whether a packed float GEMM computes in half: of the
// kind (half_gemm_kind), its weights stored as half, its tile whole half
// vectors (8 channels), and at least one vector of 8 input channels per tap
// to convert at once.
static bool computes_in_half(const Program &p, const Kernel &k, const Target &t, const PackOptions &o) {
  const GemmSpec &s = k.gemm;
  if (!half_gemm_kind(p, k, t, o.precision) || s.packed < 0 || s.nr % t.half_lanes() != 0) return false;
  int64_t icp = s.k_run ? s.k_w * (s.in_c / s.groups) : s.in_c / s.groups;
  return p.graph.v(s.packed).dtype == DType::F16 && icp >= t.half_lanes();
}

void pack_weights(PassContext &c, const PackOptions &o) {
  Program &p = c.program;
  Graph &g = p.graph;
  int L = c.target.f32_lanes();
  int packed = 0, forms[3] = {0, 0, 0};  // QGemm layers per MaddForm (x86 without VNNI)
  std::map<int, size_t> packed_for;      // a float weight -> the kernel that packed it
  // Whether packed GEMM k computes in half; one over an input stored as half
  // (half_inputs predicted it) must.
  auto set_half = [&](Kernel &k) {
    k.gemm.half = computes_in_half(p, k, c.target, o);
    TINYRT_CHECK(k.gemm.half || g.v(k.ins[0]).dtype != DType::F16,
                 "a GEMM over an input stored as half (half_inputs) does not compute in half");
  };
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    Kernel &k = p.kernels[ki];
    if (k.kind == KernelKind::Recurrent) {
      pack_recurrent(g, k.rnn, c.target, o.float_recurrent ? WeightStorage::F32 : o.weights);
      ++packed;
      continue;
    }
    if (!is_scheduled(k.kind)) continue;
    GemmSpec &s = k.gemm;
    // Depthwise reads vectors of channels.
    bool dense_in = p.layout_strides(k.ins[0])[s.in_axis[1]] == 1;
    if (p.layout_strides(k.out)[s.out_axis[1]] != 1 || (k.kind == KernelKind::Depthwise && !dense_in)) {
      k.kind = KernelKind::Loop;  // channels not contiguous: the generic emitter handles it
      continue;
    }
    if (k.kind == KernelKind::Depthwise) {
      bool int8 = !dtype_is_float(g.v(s.weight).dtype);
      int lanes = int8 ? c.target.depthwise_int8_channels() : s.half ? c.target.half_lanes() : L;
      pack_depthwise(
          g, s, int8 ? c.target.depthwise_tile_int8(s.k_w, s.stride_w, s.out_w) : c.target.depthwise_tile(s.k_h, s.k_w),
          lanes, int8 && lanes != L, gemm_storage(k, o.weights));
      // the weights plan budgets float weights by this size.
      const Value &pw = g.v(s.packed);
      const WeightStorage stored = pw.dtype == DType::F16 ? WeightStorage::F16 : WeightStorage::F32;
      TINYRT_CHECK(int8 || (int64_t)pw.data->bytes.size() == packed_depthwise_weight_bytes(s, c.target, stored),
                   "packed depthwise weights differ from their estimate");
      ++packed;
      continue;
    }
    int64_t G = s.groups, OCg = s.out_c / G, ICg = s.in_c / G, KK = s.k_h * s.k_w;
    const std::vector<int64_t> xst = p.layout_strides(k.ins[0]);
    if (k.kind == KernelKind::Gemm) {
      // float: a kernel row as one K of k_w * ICg contiguous inputs (the
      // packed order [kh][kw][ic][nr] is already [kh][kw * ic][nr]) when X
      // is dense channels-last and no window reaches into padding.
      s.k_run = G == 1 && s.k_w > 1 && s.dil_w == 1 && s.pad_t == 0 && s.pad_l == 0 && s.in_axis[3] >= 0 &&
                (s.in_c == 1 || xst[(size_t)s.in_axis[1]] == 1) && xst[(size_t)s.in_axis[3]] == s.in_c &&
                (s.out_w - 1) * s.stride_w + s.k_w <= s.in_w &&
                (s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dil_h + 1 <= s.in_h;
    } else if (s.k_run && !(xst[(size_t)s.in_axis[1]] == 1 && xst[(size_t)s.in_axis[3]] == s.in_c)) {
      s.k_run = false;  // int8: a kernel row's bytes are contiguous only in a dense channels-last X
    }
    // The tile walks output rows, or all pixels at once (linear mode). A
    // product of two activations is a 1x1 convolution over each batch
    // entry's rows: the table's linear classes, though its tiles stay
    // inside a batch entry.
    bool q = k.kind == KernelKind::QGemm;
    // Kernels over one weight (a Winograd convolution's bands) share its
    // tile and its packed copy: the first one's.
    if (!q && !s.arena_weights && !s.arena_packed) {
      auto it = packed_for.find(s.weight);
      if (it != packed_for.end()) {
        const GemmSpec &f = p.kernels[it->second].gemm;
        TINYRT_CHECK(f.in_c == s.in_c && f.out_c == s.out_c && f.groups == s.groups && f.k_h == s.k_h &&
                         f.k_w == s.k_w && f.k_run == s.k_run,
                     "kernels sharing a weight with different geometries");
        s.mr = f.mr, s.nr = f.nr, s.unroll = f.unroll, s.packed = f.packed;
        set_half(k);
        continue;
      }
    }
    if (q && !s.i16) {
      choose_int8_products(s, g, c.target);
      if (c.target.dot_i8 == DotI8::X86Madd) ++forms[(int)s.madd];
    }
    GemmTile t = gemm_tile_of(s, c.target, gemm_tile_kind(k));
    int NR = t.nv * L;
    s.mr = t.mr;
    s.nr = NR;
    s.unroll = t.unroll;
    ++packed;
    if (s.arena_packed) {  // packed at run time (WinogradWeights) for this tile: the Winograd pass chose it so
      const Value &u = g.v(k.ins[1]);
      const int64_t ICg = s.in_c / s.groups, OCt = (s.out_c / s.groups + NR - 1) / NR;
      // float [group][oc tile][ic][nr]; int16 pairs [group][oc tile][ic / 2][nr][2]; each
      // group then group_pad_bytes
      const int64_t group_bytes = OCt * NR * (s.i16 ? (ICg + 1) / 2 * 4 : ICg * 4);
      const Shape want = {s.groups, (group_bytes + s.group_pad_bytes) / (s.i16 ? 2 : 4)};
      TINYRT_CHECK(u.shape == want, "run-time packed weights of another tile than their GEMM's");
      continue;
    }
    if (s.arena_weights) {
      p.kernels.insert(p.kernels.begin() + (long)ki, pack_at_run_time(g, k));
      ++ki;  // past the product
      continue;
    }
    if (k.kind == KernelKind::QGemm) {
      pack_qgemm(g, s, g.v(k.ins[0]).dtype, c.target, NR);
      continue;
    }
    const Value &w = g.v(s.weight);
    int64_t OCt = (OCg + NR - 1) / NR;
    std::vector<float> out((size_t)(G * OCt * KK * ICg * NR), 0.f);
    const float *src = w.data->as<float>();
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t ot = 0; ot < OCt; ++ot)
        for (int64_t kk = 0; kk < KK; ++kk)
          for (int64_t ic = 0; ic < ICg; ++ic)
            for (int r = 0; r < NR; ++r) {
              int64_t ocg = ot * NR + r;
              if (ocg >= OCg) continue;
              int64_t oc = gi * OCg + ocg;
              out[(size_t)((((gi * OCt + ot) * KK + kk) * ICg + ic) * NR + r)] = src[(oc * ICg + ic) * KK + kk];
            }
    s.packed = add_float_weights(g, w.name + "_packed", out, gemm_storage(k, o.weights));
    packed_for[s.weight] = ki;
    // The Winograd pass budgets weights by this size (packed_float_weight_bytes).
    const WeightStorage stored = g.v(s.packed).dtype == DType::F16 ? WeightStorage::F16 : WeightStorage::F32;
    TINYRT_CHECK((int64_t)g.v(s.packed).data->bytes.size() == packed_float_weight_bytes(s, c.target, stored),
                 "packed float weights differ from their estimate");
    set_half(k);
  }
  // Each GEMM's task split for its tile's geometry: measured (--tuning),
  // forced (--task-split) or the emitter's rule.
  int tuned_splits = 0;
  for (Kernel &k : p.kernels) {
    if (k.kind != KernelKind::Gemm && k.kind != KernelKind::QGemm) continue;
    k.gemm.split = c.target.task_split(gemm_tile_class(k));
    tuned_splits += k.gemm.split.order != TaskSplit::Order::Rule;
  }
  p.perm.resize(g.values.size());
  if (c.log) {
    *c.log << "  packed " << packed << " weight tensors\n";
    if (tuned_splits)
      *c.log << "  task splits: " << tuned_splits << " GEMMs take a " << (c.target.split_forced ? "forced" : "tuned")
             << " split\n";
    if (o.weights == WeightStorage::F16) {
      // Float weights stored as half, kept float by the weights plan
      // (GemmSpec::float_weights), or kept float for a value beyond half's
      // range; F(4,3)'s transformed weights are float by design.
      int half = 0, budgeted = 0, single = 0;
      for (const Kernel &k : p.kernels) {
        int v = packed_weights_of(k);
        if (v < 0 || !dtype_is_float(g.v(v).dtype) || k.wino.m == 4) continue;
        (g.v(v).dtype == DType::F16 ? half : is_scheduled(k.kind) && k.gemm.float_weights ? budgeted : single) += 1;
      }
      *c.log << "  weights fp16: " << half << " tensors as half";
      if (budgeted) *c.log << ", " << budgeted << " kept float in the weights budget's room";
      if (single) *c.log << ", " << single << " kept float (a weight beyond half's range, |w| > 65504)";
      *c.log << "\n";
    }
    if (o.precision == Precision::F16) {
      int half = 0, single = 0;  // float GEMMs computing in half, or in float
      for (const Kernel &k : p.kernels)
        if (k.kind == KernelKind::Gemm) (k.gemm.half ? half : single) += 1;
      *c.log << "  precision fp16: " << half << " GEMMs compute in half, " << single
             << " in float (fewer than 8 input channels, weights kept float, run-time weights or sizes)\n";
    }
    // x86 without VNNI: how the int8 GEMMs multiply (GemmSpec::madd).
    int int8_layers = forms[0] + forms[1] + forms[2], widened = forms[(int)MaddForm::Widened];
    if (int8_layers) {
      bool sb = signed_bytes_form(c.target);
      *c.log << "  int8 products: " << int8_layers << " layers: " << forms[(int)MaddForm::Bytes]
             << " as bytes (vpmaddubsw: every pair of weights exact), " << forms[(int)MaddForm::SignedBytes]
             << " as signed bytes (vpsignb + vpmaddubsw: no weight is -128), " << widened << " widened (vpmaddwd"
             << (sb ? ": a weight is -128" : "") << ")";
      if (widened)
        *c.log << ", which on x86 without VNNI run at about the speed of float FMAs ("
               << (sb ? "weights in [-127, 127] multiply as signed bytes, 7-bit weights (--weight-bits 7) as bytes"
                      : "7-bit weights (--weight-bits 7) multiply as bytes")
               << ": docs/QUANTIZATION.md)";
      *c.log << "\n";
    }
    // Int8 GEMMs in a product form this target runs slower than float
    // (Target::int8_over_float, measured).
    int q8 = 0, slower = 0;
    double worst = 0;
    for (const Kernel &k : p.kernels) {
      if (k.kind != KernelKind::QGemm || k.gemm.i16) continue;
      ++q8;
      const double r = c.target.int8_time_over_float(k.gemm.madd, k.gemm.pair16);
      if (r > 1) ++slower, worst = std::max(worst, r);
    }
    if (slower)
      *c.log << "  int8 slower than float: " << slower << " of " << q8 << " int8 GEMMs multiply in a form that "
             << c.target.name << " was measured to run at up to " << worst
             << "x the time of a float GEMM (docs/QUANTIZATION.md); the float model would run them faster\n";
    // Int8 depthwise convolutions, where this target runs them slower
    // than float ones (Target::depthwise_int8_over_float, measured).
    int dw = 0;
    for (const Kernel &k : p.kernels) dw += is_int8_depthwise(p, k);
    if (dw && c.target.depthwise_int8_over_float > 1)
      *c.log << "  int8 slower than float: " << dw << " int8 depthwise convolutions, which " << c.target.name
             << " was measured to run at about " << c.target.depthwise_int8_over_float
             << "x the time of float ones with epilogues as cheap (their inputs widened, their outputs requantized: "
                "docs/QUANTIZATION.md); the float model would run such layers faster\n";
  }
}

}  // namespace tinyrt
