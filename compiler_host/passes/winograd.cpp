// winograd.cpp — 3x3 stride-1 convolutions as Winograd F(m x m, 3 x 3)
// where the cost model says it pays (or every one, --winograd f2|f4).
//
// One float GEMM/conv kernel becomes three (ir/program.h, WinogradSpec):
//   WinogradIn   X -> V [tiles, a*a*IC]: each a x a input tile (stride m,
//                padding read as zeros) transformed, B^T d B, per channel;
//   Gemm         V -> M [tiles, a*a*OC]: a grouped 1x1 convolution, one
//                group per of the a*a planes, over U = G g G^T (the
//                weights transformed here, in double, stored as float);
//   WinogradOut  M -> Y: A^T M A gives each tile's m x m output pixels,
//                then the convolution's epilogue (bias, activation,
//                residual) and the store.
// The multiplies per output pixel drop from 9 to a^2 / m^2 (4 for F(2,3),
// 2.25 for F(4,3)); the transformed weights are a^2 / 9 times larger, and
// V and M live in the arena between the three kernels.
//
// The cost model counts vector instructions of each form with the GEMM's
// own tile efficiency (Target::gemm_tile), plus the weight bytes each form
// streams: F(4,3) over few tiles reads 4x the weights for little reuse.
// The transformed weights are the memory this trade spends: the forms the
// cost model wants are then chosen under the weights budget
// (Limits::weights_budget: --max-weights-bytes, else 1.1x the model's own
// weights; with --weights fp16 1.1x the float plan's weights, the options
// the float default would take, as half) together with every other
// weight's options, narrower GEMM tiles and, under --weights fp16, float
// storage: one knapsack by estimated gain per added byte
// (weights_plan.h), F(2,3) standing in for F(4,3) where only it fits.
// V and M are the arena it spends: a form's V and M with what is live at
// the layer must fit the arena budget (--max-arena-bytes, else 1.1x the
// plan's peak without transforms). Where they do not, the layer runs in
// bands of tile rows, the fewest whose one band's V and M fit: the three
// kernels per band, one after the other, each band's GEMM streaming the
// transformed weights again (the cost model counts it).
// Where the weights budget leaves no room for a layer's transformed
// weights, the layer can still take its form with the weights transformed
// at run time (F(m,3)/rt, adding no bytes): the 3x3 weights stay (as
// [IC, 9, OC]; int8 [chunk][IC / 2][9][per][2], below), and per chunk
// of output channels a WinogradWeights kernel computes U_c = G g G^T
// into the arena, packed as the chunk's grouped GEMM reads it, then that
// GEMM and the output transform of those channels run; the input
// transform runs once. The cost model adds the transform's
// vector operations per weight and the extra arena traffic
// (runtime_weights_cost), which layers over many tiles repay; the arena
// holds V, one chunk's U_c and M_c (the largest chunk, a multiple of 16
// channels, that fits the arena budget).
// The parts of a layer (bands, chunks) of one size share their values and
// so their kernels' code (Kernel::code_key); at most kMaxParts a layer.
// A tuning file (tinyrt-tune, Target::tuned_winograd) gives, for the
// geometries it measured, each form's time over the direct form's on the
// user's machine: that ratio replaces the estimate's (an rt form's never
// below its stored form's plus the estimated transform), and a measured
// form must beat the best so far by 3 % instead of 10 %.
// `-v` prints each decision with its figures; the JSON's
// "memory_trades" lists them with their bytes and estimated gains.
//
// int8 convolutions (QGemm over uint8/int8 X and int8 weights) take
// F(2,3) (stored, in bands, or with run-time weights, whose chunks may run
// over bands of tile rows: rt_bands), in integers and exactly: V = B^T (d -
// x_zero) B in int16 (B's entries 0 and +-1: |v| <= 4 * 255), U = (2G) g
// (2G)^T = 4 G g G^T in int16 (|u| <= 9 * 128), the grouped GEMM over
// int16 pairs (GemmSpec::i16: pmaddwd) into int32 M, and Y = A^T M A = 4 *
// the direct sums, shifted right by 2. int32 sums wrap and the transforms
// are linear, so the result is exact whenever it fits: 4 * 9 * IC * 255 *
// 128 < 2^31, up to kInt8MaxChannels input channels. The cost model takes
// it where the target's int16 products (Target::i16_over_float) and the
// 2.25x fewer of them beat its direct int8 GEMM (Target::int8_over_float);
// its int16 weights are 3.6x the int8 ones, which the weights budget
// spends like the float forms' (layers with many tiles first).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "passes/pass.h"
#include "passes/weights_plan.h"

namespace tinyrt {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// int8 F(2,3) is exact up to this many input channels (see above).
constexpr int64_t kInt8MaxChannels = 1827;

// A form measured on this machine (--tuning) is wanted when it is this
// fraction faster than the best so far (the estimate's own hedge is 10 %).
constexpr double kTunedMargin = 0.03;

// Tiles of F(m, 3) over the whole batch.
int64_t tiles(const GemmSpec &s, int m) { return s.batch * ceil_div(s.out_h, m) * ceil_div(s.out_w, m); }

int64_t nonzeros(const std::vector<double> &v) {
  int64_t n = 0;
  for (double x : v) n += x != 0;
  return n;
}

// Memory traffic in bytes per vector instruction slot: weights streamed
// from outside L2, and the arena's V and M (written, then read once).
constexpr double kWeightBytesPerOp = 8, kArenaBytesPerOp = 32;
// A GEMM's accumulator vector is started and stored once per output vector
// whatever its K: a small K (an RGB layer's 3 channels as Winograd's K)
// makes this the larger part.
constexpr double kStoreOpsPerVector = 2;
// A layer in parts (bands of tile rows, chunks of output channels) runs
// three steps a part (its parts of one size share their kernels' code:
// Kernel::code_key): at most this many; an int8 layer with its weights
// transformed at run time at most kMaxRtParts (chunks times bands). Its
// V is int16, 8 times its input's bytes, and its M int32: at an early
// layer of many pixels the arena budget's room holds a chunk's U and M
// for a tile row or two only (googlenet's 64->192 at 56x56: 301 KB of
// room, 6 chunks of 32 channels in 14 bands each, 84 parts; the layer
// 2.4x as fast as direct on AVX2, at 2 threads too).
constexpr int64_t kMaxParts = 16;
constexpr int64_t kMaxRtParts = 128;

// The input transform's vector operations per tile and channel vector:
// a^2 loads and stores and 2a linear combinations of B^T's rows.
double input_transform_ops(const WinogradMatrices &w) {
  const double a = w.a();
  return 2.0 * a * a + 2.0 * a * (double)nonzeros(w.bt);
}

struct Estimate {
  double gemm = 0, transforms = 0, memory = 0;
  double total() const { return gemm + transforms + memory; }
};

Estimate direct_cost(const GemmSpec &s, const Target &t) {
  int L = t.f32_lanes();
  double score = 0;
  gemm_table_tile(s, t, Target::TileKind::Float, 0, &score);
  Estimate e;
  e.gemm = (double)s.batch * s.out_h * s.out_w * s.in_c * s.out_c * 9 / L / score +
           kStoreOpsPerVector * (double)s.batch * s.out_h * s.out_w * ceil_div(s.out_c, L);
  e.memory = 9.0 * s.in_c * s.out_c * 4 / kWeightBytesPerOp;
  return e;
}

// `run_h`, `run_w`: the output sides are run-time extents, whose tiles
// are counted as their average over the sizes near them (the last tile
// row or column is on average (m + 1) / 2m full) instead of at one size.
// `bands`: the tile rows in that many bands, each a grouped GEMM over its
// tiles that streams the transformed weights again.
Estimate winograd_cost(const GemmSpec &s, const Target &t, int m, bool run_h = false, bool run_w = false,
                       int64_t bands = 1) {
  const WinogradMatrices &w = winograd_matrices(m);
  int L = t.f32_lanes();
  int64_t a = w.a();
  auto side = [&](int64_t n, bool run) { return run ? (double)n / m + (m - 1) / (2.0 * m) : (double)ceil_div(n, m); };
  double T = (double)s.batch * side(s.out_h, run_h) * side(s.out_w, run_w);
  double score = 0;
  t.gemm_tile(s.out_c, ceil_div(tiles(s, m), bands), true, s.in_c, Target::TileKind::Float, &score);
  Estimate e;
  e.gemm =
      (double)a * a * T * s.in_c * s.out_c / L / score + kStoreOpsPerVector * (double)a * a * T * ceil_div(s.out_c, L);
  // Per tile and channel vector: the input transform (input_transform_ops);
  // a^2 loads, (a + m) combinations of A^T's rows and m^2 epilogues and
  // stores out.
  double in = input_transform_ops(w);
  double out = (double)a * a + (double)(a + m) * (double)nonzeros(w.at) + 3.0 * m * m;
  // Without cheap masked loads and stores (NEON), the channels past the
  // last whole vector are loaded lane by lane (a load and an insert) from
  // each of the a^2 input pixels and stored so into V.
  if (!t.masked_tail) in += 4.0 * a * a * (double)(s.in_c % L) / (double)ceil_div(s.in_c, L);
  e.transforms = (double)T * (ceil_div(s.in_c, L) * in + ceil_div(s.out_c, L) * out);
  e.memory = (double)bands * a * a * s.in_c * s.out_c * 4 / kWeightBytesPerOp +
             2.0 * a * a * T * (s.in_c + s.out_c) * 4 / kArenaBytesPerOp;
  return e;
}

// U = (s G) g (s G)^T for every (oc, ic) of the 3x3 weights g, in double,
// ordered as the grouped GEMM's weight [a*a*OC, IC, 1, 1]: plane p = xi *
// a + nu is group p.
template <typename W>
std::vector<double> transformed(const W *g, int64_t OC, int64_t IC, const WinogradMatrices &m, double s) {
  const int a = m.a();
  std::vector<double> u((size_t)(a * a * OC * IC));
  for (int64_t oc = 0; oc < OC; ++oc)
    for (int64_t ic = 0; ic < IC; ++ic) {
      const W *k = g + (oc * IC + ic) * 9;
      double gg[6][3];  // (s G) g
      for (int x = 0; x < a; ++x)
        for (int v = 0; v < 3; ++v) {
          double sum = 0;
          for (int r = 0; r < 3; ++r) sum += s * m.g[(size_t)(x * 3 + r)] * (double)k[r * 3 + v];
          gg[x][v] = sum;
        }
      for (int x = 0; x < a; ++x)
        for (int y = 0; y < a; ++y) {
          double sum = 0;
          for (int v = 0; v < 3; ++v) sum += gg[x][v] * (s * m.g[(size_t)(y * 3 + v)]);
          u[(size_t)((((int64_t)(x * a + y) * OC + oc) * IC) + ic)] = sum;
        }
    }
  return u;
}

// Float weights: U = G g G^T, stored as float.
ConstP transform_weights(const Value &w, int64_t OC, int64_t IC, const WinogradMatrices &m) {
  const std::vector<double> u = transformed(w.data->as<float>(), OC, IC, m, 1);
  return make_const_f32({m.a() * m.a() * OC, IC, 1, 1}, std::vector<float>(u.begin(), u.end()));
}

// int8 weights: U = (2G) g (2G)^T = 4 G g G^T, integers (F(2,3): 2G's
// entries are 0, +-1 and 2), as int16.
ConstP transform_weights_i16(const Value &w, int64_t OC, int64_t IC, const WinogradMatrices &m) {
  const std::vector<double> u = transformed(w.data->as<int8_t>(), OC, IC, m, 2);
  std::vector<int16_t> v(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    TINYRT_CHECK(u[i] == std::round(u[i]) && std::fabs(u[i]) < 32768, "int8 Winograd weights beyond int16");
    v[i] = (int16_t)u[i];
  }
  Bytes b((const uint8_t *)v.data(), (const uint8_t *)v.data() + v.size() * sizeof(int16_t));
  return make_const(DType::I16, {m.a() * m.a() * OC, IC, 1, 1}, std::move(b));
}

// Bytes of a QGemm's packed weights and accumulator starts (pack_qgemm)
// with the tile of `kind`'s table.
int64_t packed_qgemm_bytes(const GemmSpec &s, const Target &t, Target::TileKind kind) {
  const GemmTile tl = gemm_table_tile(s, t, kind);
  const int64_t NR = (int64_t)tl.nv * t.f32_lanes(), G = s.groups, OCt = ceil_div(s.out_c / G, NR);
  const int64_t ICb = s.in_c / G * (s.i16 ? 2 : 1);
  return G * OCt * (s.k_h * s.k_w * ceil_div(ICb, 4) + 1) * NR * 4;
}

// The grouped GEMM of form m over `n` of convolution s's tiles (0: all):
// a 1x1 convolution of a*a groups, V [n, a*a*IC] -> M [n, a*a*OC] (its
// weight set by the caller).
// (`i16`: an int8 convolution's, over int16 pairs into int32 sums.)
GemmSpec grouped_gemm(const GemmSpec &s, int m, int64_t n = 0, bool i16 = false) {
  const int64_t a = m + 2;
  GemmSpec gs;
  gs.batch = 1;
  gs.in_c = a * a * s.in_c;
  gs.out_c = a * a * s.out_c;
  gs.in_w = gs.out_w = n ? n : tiles(s, m);
  gs.groups = a * a;
  gs.in_axis[0] = gs.in_axis[2] = gs.out_axis[0] = gs.out_axis[2] = -1;
  gs.in_axis[1] = gs.out_axis[1] = 1;
  gs.in_axis[3] = gs.out_axis[3] = 0;
  gs.i16 = i16;
  gs.epilogue = acc(i16 ? DType::I32 : DType::F32);
  return gs;
}

// The forms: F(2,3) and F(4,3) with their weights transformed at compile
// time (stored: (m+2)^2 / 9 times the weights) or at run time (`rt`: the
// 3x3 weights stored, each chunk of output channels transformed into the
// arena before its grouped GEMM, U_c = G g G^T).
struct Form {
  int m;
  bool rt;
};
constexpr int kForms = 4;
constexpr Form kForm[kForms] = {{2, false}, {4, false}, {2, true}, {4, true}};

// One eligible convolution: its forms' estimated gains (vector
// instructions saved against direct at its bounds) and the weight bytes
// each adds; `allowed` those the cost model accepts.
struct Candidate {
  size_t kernel;
  int wanted = -1;  // the fastest form by the cost model alone (-1: direct)
  bool allowed[kForms] = {};
  bool arena_fits[kForms] = {true, true, true, true};  // its buffers with what is live, within the arena budget
  int64_t bands[kForms] = {1, 1, 1, 1};                // stored forms: bands of tile rows (1: V and M whole)
  int64_t chunk[kForms] = {};                          // rt forms: output channels per chunk
  int64_t rt_bands[kForms] = {1, 1, 1, 1};             // rt forms (int8): bands of tile rows per chunk
  bool dropped = false;                                // kept direct for the code budget
  double gain[kForms] = {};
  int64_t bytes[kForms] = {};
  // --weights fp16: what each form would add with float weights (the
  // default budget follows the float plan: choose_and_rewrite).
  int64_t bytes32[kForms] = {};
  int form = -1;  // the form taken
  std::string log;
};

}  // namespace

// Bytes of the constants the kernels read, float GEMM and depthwise
// weights as pack_weights will pack them (their padding counts against the
// budget), float recurrent weights at the storage's bytes a weight.
// Constants of equal bytes count once, as the object holds them once
// (LLVM merges equal constants: a model whose layers share weights through
// Identity reads them through copies of equal bytes).
int64_t weights_read(const Program &p, const Target &t, WeightStorage st, bool float_recurrent) {
  // The constants counted, by (size, packed columns): only those of one
  // size are compared, byte for byte.
  std::map<std::pair<size_t, int64_t>, std::vector<const ConstData *>> seen;
  int64_t total = 0;
  auto add = [&](int v, int64_t bytes, int64_t nr = 0) {
    if (v < 0 || !p.graph.v(v).is_const()) return;
    const ConstData *d = p.graph.v(v).data.get();
    std::vector<const ConstData *> &same_size = seen[{d->bytes.size(), nr}];
    for (const ConstData *e : same_size)
      if (e == d || e->bytes == d->bytes) return;
    same_size.push_back(d);
    total = sat_add(total, bytes);
  };
  auto stored = [&](int v) {  // a float weight's bytes as pack_weights stores them
    const Value &w = p.graph.v(v);
    int64_t n = (int64_t)w.data->bytes.size();
    return st == WeightStorage::F16 && w.dtype == DType::F32 ? n / 2 : n;
  };
  for (const Kernel &k : p.kernels) {
    const GemmSpec &s = k.gemm;
    // A GEMM reads its weight (slot 1, or a copy of it made for the
    // product: GemmSpec::weight) packed.
    const bool packed =
        k.kind == KernelKind::Gemm && s.weight >= 0 && !s.arena_weights && p.graph.v(s.weight).dtype == DType::F32;
    if (packed) add(s.weight, packed_float_weight_bytes(s, t, packed_storage(k.wino.m, st)), float_gemm_nr(s, t));
    if (k.kind == KernelKind::Depthwise && s.weight >= 0 && p.graph.v(s.weight).is_const())
      add(s.weight,
          p.graph.v(s.weight).dtype == DType::F32 ? packed_depthwise_weight_bytes(s, t, st) : stored(s.weight));
    if (k.kind == KernelKind::Recurrent && k.rnn.r >= 0 && k.rnn.r_scale < 0)
      add(k.rnn.r, float_recurrent ? (int64_t)p.graph.v(k.rnn.r).data->bytes.size() : stored(k.rnn.r));
    for (size_t i = 0; i < k.ins.size(); ++i)
      if (k.ins[i] >= 0 && !(packed && i == 1))
        add(k.ins[i], p.graph.v(k.ins[i]).is_const() ? (int64_t)p.graph.v(k.ins[i]).data->bytes.size() : 0);
  }
  return total;
}

namespace {

std::string form_name(int f) {
  if (f < 0) return "direct";
  return "F(" + std::to_string(kForm[f].m) + ",3)" + (kForm[f].rt ? "/rt" : "");
}

// The grouped GEMM of a chunk of `occ` output channels (rt forms); int8
// (`i16`): over int16 pairs.
GemmSpec chunk_gemm(const GemmSpec &s, int m, int64_t occ, bool i16 = false) {
  GemmSpec cs = s;
  cs.out_c = occ;
  return grouped_gemm(cs, m, 0, i16);
}

// The register tile of the GEMM gs (float: as pack_weights packs it).
GemmTile chunk_tile(const GemmSpec &gs, const Target &t) {
  return gs.i16 ? gemm_table_tile(gs, t, Target::TileKind::Int16) : float_gemm_tile(gs, t);
}

// A chunk of occ output channels' run-time weights U_c in the arena, as
// its grouped GEMM reads them (GemmSpec::arena_packed): a^2 planes, int8
// [oc tile][input channel pair][nr][2] int16 (the packing's quads,
// pack_qgemm over int16), float [oc tile][ic][nr]. A plane of a multiple
// of 128 bytes is followed by 64 where the target says
// (Target::winograd_plane_pad): the transform stores to all a^2 planes at
// once, and at a stride of a multiple of 4 KB they fall in one L1 set (8
// ways for 16 planes: resnet18 int8's layer2-3 transforms took 1.7x as
// long on Zen 4). The arena estimate and the rewrite both size U_c so.
struct RtPlanes {
  GemmTile tile;  // the chunk's GEMM's register tile, which the packing follows
  int64_t nr, plane_bytes, pad;
  int64_t bytes(int64_t a) const { return a * a * (plane_bytes + pad); }
};
RtPlanes rt_planes(const GemmSpec &s, int m, int64_t occ, bool q8, const Target &t) {
  const GemmTile tile = chunk_tile(chunk_gemm(s, m, occ, q8), t);
  const int64_t NR = (int64_t)tile.nv * t.f32_lanes(), OCt = ceil_div(occ, NR);
  const int64_t plane = q8 ? OCt * ceil_div(s.in_c, 2) * NR * 4 : OCt * s.in_c * NR * 4;
  return {tile, NR, plane, t.winograd_plane_pad && plane % 128 == 0 ? 64 : 0};
}

// What transforming the weights at run time adds to form m's cost, in
// chunks of `chunk` output channels: per vector of output channels and
// input channel 9 loads, G g (3 columns of G's nonzeros), (G g) G^T (a rows
// of them; fewer where G's row pairs share work) and a^2 stores; U_c
// written and read once more; V read once per chunk.
double runtime_weights_cost(const GemmSpec &s, const Target &t, int m, int64_t chunk) {
  const WinogradMatrices &w = winograd_matrices(m);
  const double nz = (double)nonzeros(w.g), a = w.a(), T = (double)tiles(s, m);
  const double chunks = (double)ceil_div(s.out_c, chunk);
  return (double)ceil_div(s.out_c, t.f32_lanes()) * (double)s.in_c * (9 + 3 * nz + a * nz + a * a) +
         2.0 * a * a * (double)s.out_c * s.in_c * 4 / kArenaBytesPerOp +
         (chunks - 1) * T * a * a * s.in_c * 4 / kArenaBytesPerOp;
}

}  // namespace

// A float 3x3 stride-1 convolution over channels-last input and output,
// or an int8 one (QGemm) of at most kInt8MaxChannels input channels.
bool winograd_eligible(const Program &p, const Kernel &k) {
  const GemmSpec &s = k.gemm;
  const Graph &g = p.graph;
  const bool q8 = k.kind == KernelKind::QGemm;
  if ((k.kind != KernelKind::Gemm && !q8) || s.k_h != 3 || s.k_w != 3 || s.stride_h != 1 || s.stride_w != 1 ||
      s.dil_h != 1 || s.dil_w != 1 || s.groups != 1 || s.out_axis[2] < 0 || s.in_axis[2] < 0)
    return false;
  if (q8) {
    const DType xt = g.v(k.ins[0]).dtype;
    if ((xt != DType::U8 && xt != DType::I8) || s.weight < 0 || g.v(s.weight).dtype != DType::I8 ||
        !g.v(s.weight).is_const() || s.k_run || s.i16 || s.in_c > kInt8MaxChannels)
      return false;
  } else if (g.v(k.ins[0]).dtype != DType::F32 || g.v(s.weight).dtype != DType::F32 || !g.v(s.weight).is_const() ||
             g.v(k.out).dtype != DType::F32) {
    return false;
  }
  // Run-time image sizes: the run's tiles are the first of V and M.
  if ((g.v(k.ins[0]).is_dynamic() || g.v(k.out).is_dynamic()) &&
      gemm_runtime_spatial(s, g.v(k.out), g.v(k.ins[0])) <= 0)
    return false;
  return p.layout_strides(k.ins[0])[(size_t)s.in_axis[1]] == 1 && p.layout_strides(k.out)[(size_t)s.out_axis[1]] == 1;
}

const char *winograd_mode_name(WinogradMode m) {
  static const char *const names[] = {"auto", "off", "f2", "f4", "f2rt", "f4rt"};
  return names[(int)m];
}

namespace {

// Program q as the arena will hold it: under --precision fp16 on a target
// with half arithmetic, with the tensors that only half products read
// stored as half (half_inputs, which runs after this pass and adds no
// kernels).
Program as_run(const Program &q, const Target &t, const WinogradOptions &o) {
  Program h = q;
  if (o.precision != Precision::F16 || !t.half_arith) return h;
  PassContext hc{h, t, nullptr};
  PackOptions po;
  po.weights = o.weights;
  po.precision = o.precision;
  po.float_recurrent = o.float_recurrent;
  half_inputs(hc, po);
  TINYRT_CHECK(h.kernels.size() == q.kernels.size(), "half_inputs changed the kernels");
  return h;
}

// The decisions and the rewrite, the arena room of every layer cut by
// `arena_cut` bytes (winograd: what an earlier choice's placed arena came
// out over the budget).
void choose_and_rewrite(PassContext &c, const WinogradOptions &o, int64_t arena_cut) {
  Program &p = c.program;
  Graph &g = p.graph;
  const Limits &lim = g.limits;
  const Target &t = c.target;
  // The model's weights as stored: half with --weights fp16, except the
  // recurrent weights kept float (o.float_recurrent).
  double stored_ratio = 1.0;
  if (o.weights == WeightStorage::F16) {
    int64_t recurrent = 0;
    if (o.float_recurrent)
      for (const Kernel &k : p.kernels)
        if (k.kind == KernelKind::Recurrent && k.rnn.r >= 0 && k.rnn.r_scale < 0 && g.v(k.rnn.r).is_const())
          recurrent += (int64_t)g.v(k.rnn.r).data->bytes.size();
    const int64_t model = std::max<int64_t>(1, lim.model_weights_bytes);
    stored_ratio = 0.5 + 0.5 * std::min(1.0, (double)recurrent / (double)model);
  }
  p.budgets.weights = lim.weights_budget(stored_ratio);
  p.budgets.base_weights = weights_read(p, t, o.weights, o.float_recurrent);
  // The arena budget the forms keep within, each on its own (the arena is
  // a peak, not a sum): the bytes live at the layer's step plus its
  // buffers within --max-arena-bytes if given (bytes, or a ratio of the
  // plan's lower bound without transforms), else within 1.1x that lower
  // bound (plan_memory's live bytes). (--max-arena-bytes Rx is a ratio of
  // the plan without transforms: measured here even when no form is
  // wanted, plan_memory holds the placed arena against it; and under
  // --weights fp16, where the weights plan weighs float storage against a
  // float copy in the arena.)
  const bool storage_choice = o.weights == WeightStorage::F16 && o.precision == Precision::F32;
  // Under --precision fp16 the plan without transforms stores as half the
  // tensors that only half products read (half_inputs, a later pass): its
  // live bytes are measured as it will run (as_run).
  std::vector<int64_t> live;
  std::vector<char> half_input;  // per kernel: its input stored as half (as_run)
  if (o.mode != WinogradMode::Off || lim.max_arena_ratio > 0 || storage_choice) {
    const Program run = as_run(p, t, o);
    live = live_bytes(run);
    half_input.resize(p.kernels.size());
    for (size_t ki = 0; ki < p.kernels.size(); ++ki)
      half_input[ki] = !run.kernels[ki].ins.empty() && run.graph.v(run.kernels[ki].ins[0]).dtype == DType::F16;
    const int64_t peak = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
    p.budgets.base_arena = peak;
    p.budgets.arena = lim.arena_budget(peak);
  }
  // A forced form (tests, experiments): its index in kForm.
  const int forced = o.mode == WinogradMode::F2     ? 0
                     : o.mode == WinogradMode::F4   ? 1
                     : o.mode == WinogradMode::F2Rt ? 2
                     : o.mode == WinogradMode::F4Rt ? 3
                                                    : -1;
  std::vector<Candidate> cands;
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    const Kernel &k = p.kernels[ki];
    if (o.mode == WinogradMode::Off || !winograd_eligible(p, k)) continue;
    const GemmSpec &s = k.gemm;
    Candidate cand;
    cand.kernel = ki;
    // int8 (QGemm): F(2,3) only (stored or /rt); its direct GEMM's time
    // over a float GEMM's (Target::int8_over_float, by the form
    // pack_weights will choose), 0 where not measured.
    const bool q8 = k.kind == KernelKind::QGemm;
    double int8_ratio = 0;
    Target::TileKind direct_kind = Target::TileKind::Int8;
    if (q8) {
      GemmSpec sq = s;
      choose_int8_products(sq, g, t);
      if (t.dot_i8 == DotI8::X86Madd) direct_kind = int8_tile_kind(sq.madd);
      int8_ratio = t.int8_time_over_float(sq.madd, sq.pair16);
    }
    const bool q8_pays = q8 && int8_ratio > 0 && t.i16_over_float > 0;
    // V and M are indexed with 32 bits like every tensor.
    auto fits = [&](int m) {
      return (double)tiles(s, m) * (m + 2) * (m + 2) * (double)std::max(s.in_c, s.out_c) < 2147483647.0;
    };
    // Over run-time image sizes the choice must pay over the range, from
    // a quarter of its bounds up (what a range-compiled model promises
    // against one compiled for the exact size): it is estimated with each
    // run-time side at a quarter, half and all of its bound, and a form
    // is taken when it wins at each (cost < direct) and on average (its
    // mean ratio 10 % below the best so far, as for one size).
    struct Point {
      GemmSpec s;
      bool run_h, run_w;
    };
    const bool run_h = s.out_axis[2] >= 0 && g.v(k.out).dim(s.out_axis[2]) >= 0;
    const bool run_w = s.out_axis[3] >= 0 && g.v(k.out).dim(s.out_axis[3]) >= 0;
    const bool fixed = !g.v(k.out).is_dynamic() && !g.v(k.ins[0]).is_dynamic();
    std::vector<Point> at = {{s, false, false}};
    for (int d : {2, 4}) {
      if (!run_h && !run_w) break;
      Point q{s, run_h, run_w};
      auto part = [&](bool run, int64_t *out_ext, int64_t *in_ext) {
        if (!run) return;
        int64_t e = std::max<int64_t>(1, ceil_div(*out_ext, d));
        *in_ext -= *out_ext - e;
        *out_ext = e;
      };
      part(run_h, &q.s.out_h, &q.s.in_h);
      part(run_w, &q.s.out_w, &q.s.in_w);
      at.push_back(q);
    }
    // The bytes form i adds to the convolution's weights stored as `st`,
    // as packed: the grouped GEMM's weights (or the 3x3 weights, [IC, 9,
    // OC] for the run-time transform; int8: IC rounded up to pairs)
    // replace the convolution's (< 0: packs smaller than direct, its
    // padding).
    auto added_bytes = [&](int i, WeightStorage st) {
      if (q8) {  // F(2,3)'s int16 weights (or, /rt, the 3x3 bytes) for the packed int8 ones
        if (kForm[i].m != 2) return (int64_t)0;
        const GemmSpec gs = grouped_gemm(s, 2, 0, true);
        const int64_t per = cand.chunk[i] > 0 ? cand.chunk[i] : s.out_c;  // (rt: whole chunks, zero padded)
        const int64_t stored = kForm[i].rt ? 9 * ceil_div(s.in_c, 2) * 2 * ceil_div(s.out_c, per) * per
                                           : packed_qgemm_bytes(gs, t, Target::TileKind::Int16);
        return stored - packed_qgemm_bytes(s, t, direct_kind);
      }
      const int64_t stored =
          kForm[i].rt ? 9 * s.in_c * s.out_c * (st == WeightStorage::F16 ? 2 : 4)
                      : packed_float_weight_bytes(grouped_gemm(s, kForm[i].m), t, packed_storage(kForm[i].m, st));
      return stored - packed_float_weight_bytes(s, t, st);
    };
    // (A convolution's input stored as half stays float for a Winograd
    // form: its input transform reads float.)
    const int64_t x_float = half_input[ki] ? 2 * g.v(k.ins[0]).numel() : 0;
    const int64_t room = p.budgets.arena - live[ki] - arena_cut - x_float;
    for (int i = 0; i < kForms; ++i) {
      const int m = kForm[i].m;
      const int64_t a = m + 2, T = tiles(s, m);
      if (!kForm[i].rt) {
        // Stored forms: V and M with what is live at the layer's step. A
        // form whose V and M do not fit runs over bands of tile rows
        // (fixed sizes only), the fewest whose one band fits; none fits
        // when even a tile row's do not.
        // Under --precision fp16, F(2,3)'s V is stored as half where its
        // grouped GEMM multiplies in half (half_inputs: fixed sizes, 8 or
        // more input channels, an input transform in one pass).
        const bool half_v = o.precision == Precision::F16 && t.half_arith && !q8 && m == 2 && fixed &&
                            s.in_c >= t.half_lanes() && !t.winograd_two_pass(m);
        const int64_t rows = s.batch * ceil_div(s.out_h, m);
        const int64_t row_bytes =
            sat_mul(sat_mul(ceil_div(s.out_w, m), a * a),
                    q8 ? 2 * s.in_c + 4 * s.out_c : sat_add(sat_mul(s.in_c, (int64_t)(half_v ? 2 : 4)), 4 * s.out_c));
        cand.arena_fits[i] = sat_mul(row_bytes, rows) <= room;
        if (!cand.arena_fits[i] && fixed && row_bytes <= room && ceil_div(rows, room / row_bytes) <= kMaxParts) {
          cand.bands[i] = ceil_div(rows, room / row_bytes);
          cand.arena_fits[i] = true;
        }
        continue;
      }
      // Run-time weights (fixed sizes): V whole, then per
      // chunk of output channels its transformed weights U_c (packed as
      // the chunk's GEMM reads them) and its products M_c; the largest
      // chunk (a multiple of 16 channels, or all) that fits.
      cand.arena_fits[i] = false;
      if (!fixed || !o.runtime_weights || (q8 && m != 2)) continue;
      // int8 (whose V, int16, is 8 times its input's bytes) may also run
      // each chunk over bands of tile rows, the input transformed again
      // per chunk: the fewest parts, then the fewest bands.
      const int64_t rows = s.batch * ceil_div(s.out_h, m), TW = ceil_div(s.out_w, m);
      const int64_t max_parts = q8 ? kMaxRtParts : kMaxParts;
      int64_t best_parts = max_parts + 1;
      for (int64_t nb = 1; nb <= (q8 ? std::min(rows, max_parts) : 1); ++nb) {
        // (bands: a full band's V and M and the last band's beside them,
        // as the placement may keep them apart)
        const int64_t Tb = nb > 1 ? ceil_div(rows, nb) * TW * (rows % nb ? 2 : 1) : T;
        const int64_t v_bytes = sat_mul(sat_mul(Tb, a * a), sat_mul(s.in_c, q8 ? (int64_t)2 : (int64_t)4));
        for (int64_t occ = s.out_c; occ > 0 && ceil_div(s.out_c, occ) * nb <= max_parts;
             occ = occ > 16 ? (occ - 1) / 16 * 16 : 0) {
          const int64_t need = sat_add(sat_add(v_bytes, rt_planes(s, m, occ, q8, t).bytes(a)),
                                       sat_mul(sat_mul(Tb, a * a), sat_mul(occ, (int64_t)sizeof(float))));
          if (need <= room) {
            if (ceil_div(s.out_c, occ) * nb < best_parts) {
              best_parts = ceil_div(s.out_c, occ) * nb;
              cand.chunk[i] = occ;
              cand.rt_bands[i] = nb;
              cand.arena_fits[i] = true;
            }
            break;
          }
        }
      }
    }
    // Forms measured on this machine (tinyrt-tune): their time over the
    // direct form's replaces the estimate's ratio (fixed sizes only).
    const Target::TunedWinograd *tuned =
        fixed && !q8 ? t.tuned_winograd_of(s.in_c, s.out_c, s.out_h, s.out_w, s.batch) : nullptr;
    auto tuned_ratio = [&](int i) { return tuned ? tuned->ratio[i] : 0.0; };
    // cost[i][j]: form i at point j (and direct), estimated once.
    std::vector<double> direct;
    std::vector<double> cost[kForms];
    for (const Point &e : at) {
      if (q8) {  // int8: direct, and F(2,3) over int16, stored or /rt (F(4,3): never)
        Estimate d = direct_cost(e.s, t);
        direct.push_back(d.gemm * int8_ratio + d.memory / 4);
        for (int i = 0; i < kForms; ++i) {
          if (kForm[i].m != 2 || !q8_pays) {
            cost[i].push_back(2 * direct.back());
            continue;
          }
          Estimate w2 = winograd_cost(e.s, t, 2, e.run_h, e.run_w, cand.bands[i]);
          double c_i = w2.gemm * t.i16_over_float + w2.transforms + w2.memory / 2;
          if (kForm[i].rt && cand.chunk[i] > 0) {
            c_i += runtime_weights_cost(e.s, t, 2, cand.chunk[i]) / 2;
            // in bands: the input transformed again for every chunk after the first
            if (cand.rt_bands[i] > 1)
              c_i += (double)(ceil_div(e.s.out_c, cand.chunk[i]) - 1) * (double)tiles(e.s, 2) *
                     (double)ceil_div(e.s.in_c, t.f32_lanes()) * input_transform_ops(winograd_matrices(2));
          }
          cost[i].push_back(c_i);
        }
        continue;
      }
      direct.push_back(direct_cost(e.s, t).total());
      for (int i = 0; i < kForms; ++i) {
        double c_i = winograd_cost(e.s, t, kForm[i].m, e.run_h, e.run_w, cand.bands[i]).total();
        const double rt_cost =
            kForm[i].rt && cand.chunk[i] > 0 ? runtime_weights_cost(e.s, t, kForm[i].m, cand.chunk[i]) : 0.0;
        c_i += rt_cost;
        // Measured: stored forms whole (one band: the estimate's cost of
        // bands on top); rt forms in chunks of 16 channels, never taken
        // as cheaper than their stored form plus the estimated transform
        // (a step's time misses what the transform's writes evict for the
        // steps after it: on googlenet, x86, rt forms measured as fast as
        // stored ones made the whole model 3 % slower; on resnet18,
        // aarch64, the estimated transform alone was half the measured).
        if (tuned_ratio(i) > 0 && !kForm[i].rt)
          c_i = direct.back() * tuned_ratio(i) * c_i / winograd_cost(e.s, t, kForm[i].m, false, false, 1).total();
        if (tuned_ratio(i) > 0 && kForm[i].rt)
          c_i = std::max(direct.back() * tuned_ratio(i),
                         tuned_ratio(i - 2) > 0 ? direct.back() * tuned_ratio(i - 2) + rt_cost : 0.0);
        cost[i].push_back(c_i);
      }
    }
    // A stored form must beat the best so far (direct, then F(2,3)) by
    // 10 % to be wanted (by kTunedMargin where measured); every form that
    // beats direct so remains one of the budgets' choices, F(4,3) only
    // where it beats F(2,3) so too.
    auto hedge = [&](int i) { return tuned_ratio(i) > 0 ? 1 - kTunedMargin : 0.9; };
    double best = 1.0, mean[kForms] = {};
    for (int i = 0; i < kForms; ++i) {
      double sum = 0, worst = 0;
      for (size_t j = 0; j < at.size(); ++j)
        sum += cost[i][j] / direct[j], worst = std::max(worst, cost[i][j] / direct[j]);
      mean[i] = sum / (double)at.size();
      // Half products (--precision fp16) lose too much in F(4,3), whose
      // transforms scale values by up to 5 and 8: its GEMM would stay float;
      // so would an rt form's (its weights are float in the arena), which
      // the cost model, counting float products, would compare with a
      // direct GEMM in half (resnet18 on the A76: 2.916e8 -> 2.996e8).
      const bool half_ok = o.precision != Precision::F16 || (kForm[i].m == 2 && !kForm[i].rt);
      const bool pays = o.mode == WinogradMode::Auto && fits(kForm[i].m) && worst < 1.0 && half_ok &&
                        (!q8 || (kForm[i].m == 2 && q8_pays));
      cand.allowed[i] = pays && mean[i] < hedge(i) && cand.arena_fits[i];
      if (pays && !kForm[i].rt && mean[i] < hedge(i) * best) best = mean[i], cand.wanted = i;
      cand.gain[i] = direct[0] - cost[i][0];
      cand.bytes[i] = added_bytes(i, o.weights);
      cand.bytes32[i] = added_bytes(i, WeightStorage::F32);
    }
    for (int i : {1, 3})
      if (mean[i] >= hedge(i) * mean[i - 1]) cand.allowed[i] = false;
    if (forced >= 0)
      cand.wanted =
          fits(kForm[forced].m) && (!kForm[forced].rt || fixed) && (!q8 || kForm[forced].m == 2) ? forced : -1;
    // The code budget dropped this layer (driver: compile_model).
    cand.dropped = !k.nodes.empty() && o.direct.count(k.nodes.front());
    if (cand.dropped)
      for (bool &al : cand.allowed) al = false;
    cand.form = cand.dropped ? -1 : cand.wanted;
    if (c.log) {
      std::ostringstream lg;
      lg << "  winograd " << k.label << " " << s.in_c << "->" << s.out_c;
      for (size_t j = 0; j < at.size(); ++j) {
        lg << (j ? "; " : " ") << at[j].s.out_h << "x" << at[j].s.out_w << ": direct " << (int64_t)direct[j];
        for (int i = 0; i < kForms; ++i) {
          if ((kForm[i].rt && !cand.chunk[i]) || (q8 && kForm[i].m != 2)) continue;
          lg << ", " << form_name(i) << " " << (int64_t)cost[i][j];
          if (cand.bands[i] > 1) lg << " in " << cand.bands[i] << " bands";
          if (cand.chunk[i] && cand.chunk[i] < s.out_c) lg << " in chunks of " << cand.chunk[i];
        }
      }
      if (tuned) {
        lg << " (tuned, of direct:";
        for (int i = 0; i < kForms; ++i)
          if (tuned->ratio[i] > 0) lg << " " << form_name(i) << " " << tuned->ratio[i];
        lg << ")";
      }
      cand.log = lg.str();
    }
    cands.push_back(std::move(cand));
  }

  // The weights budget (Limits::weights_budget): one plan over every
  // weight (weights_plan.h), the fastest set of options that fits: each
  // candidate's forms the cost model allows (forced forms and layers the
  // code budget dropped: the one form), each with its GEMM's tiles and,
  // under --weights fp16 with float products, its storage; the other GEMM
  // and depthwise weights' tiles and storage. A given budget still refuses
  // forced forms once the weights are emitted (driver,
  // check_weights_budget).
  const bool budgeted = o.mode == WinogradMode::Auto;
  auto plan = [&](WeightStorage st, bool choice) {
    std::set<int> skip;
    for (const Candidate &cd : cands) skip.insert(p.kernels[cd.kernel].gemm.weight);
    std::vector<WeightChoice> choices = weight_choices(
        p, t, st, choice, skip, [&](size_t ki, int64_t bytes) { return sat_add(live[ki], bytes) <= p.budgets.arena; });
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      const Candidate &cd = cands[ci];
      const Kernel &k = p.kernels[cd.kernel];
      const GemmSpec &s = k.gemm;
      WeightChoice wc;
      wc.kernels = {cd.kernel};
      wc.candidate = (int)ci;
      std::vector<int> forms = {budgeted ? -1 : cd.form};
      for (int i = 0; i < kForms && budgeted; ++i)
        if (cd.allowed[i] && cd.gain[i] > 0) forms.push_back(i);
      for (int f : forms) {
        WeightOption base;
        base.form = f;
        if (f >= 0)
          base.form_bytes = st == WeightStorage::F32 ? cd.bytes32[f] : cd.bytes[f], base.form_gain = cd.gain[f];
        // int8 layers and run-time weights: the form alone (neither packs
        // a float GEMM weight of its own).
        if (k.kind == KernelKind::QGemm || (f >= 0 && kForm[f].rt)) {
          wc.options.push_back(summed(base));
          continue;
        }
        const int m = f >= 0 ? kForm[f].m : 0;
        const double macs = m ? (double)tiles(s, m) * (m + 2) * (m + 2) * (double)s.in_c * (double)s.out_c
                              : (double)kernel_flops(k) / 2;
        add_gemm_options(wc, base, m ? grouped_gemm(s, m) : s, macs, t, packed_storage(m, st), choice);
      }
      choices.push_back(std::move(wc));
    }
    return choices;
  };
  // --weights fp16 without a budget: the float plan's weights (its options
  // chosen within the float default) as stored, by the same ratio.
  int64_t float_plan = 0;
  if (o.weights == WeightStorage::F16 && !lim.weights_budget_given() && lim.model_weights_bytes > 0) {
    std::vector<WeightChoice> as_float = plan(WeightStorage::F32, false);
    const int64_t base32 = weights_read(p, t, WeightStorage::F32, false);
    choose_options(as_float, lim.weights_budget() - base32);
    float_plan = base32;
    for (const WeightChoice &wc : as_float) float_plan = sat_add(float_plan, wc.chosen().bytes);
    p.budgets.weights = (int64_t)(Limits::kDefaultWeightsRatio * stored_ratio * (double)float_plan);
    p.budgets.float_plan = float_plan;
  }
  // (The room may be negative: the plan without transforms is over the
  // budget, its packing's padding; narrower tiles and forms that pack
  // smaller give bytes back.)
  std::vector<WeightChoice> choices = plan(o.weights, storage_choice);
  choose_options(choices, p.budgets.weights - p.budgets.base_weights);
  std::vector<const WeightOption *> planned(p.kernels.size(), nullptr);
  int narrowed = 0, kept_float = 0;
  for (const WeightChoice &wc : choices) {
    const WeightOption &ch = wc.chosen();
    p.budgets.traded_weights += ch.bytes;
    narrowed += ch.tile.nv > 0;
    kept_float += ch.keep_float;
    if (wc.candidate >= 0) {
      cands[(size_t)wc.candidate].form = ch.form;
      planned[wc.kernels.front()] = &ch;
      continue;
    }
    for (size_t ki : wc.kernels) apply_option(ch, t, p.kernels[ki].gemm);
    report_option(c, p.kernels[wc.kernels.front()], ch);
  }
  std::vector<int> form(p.kernels.size(), -1);
  std::vector<int64_t> bands(p.kernels.size(), 1), chunk(p.kernels.size(), 0), rt_bands(p.kernels.size(), 1);
  for (const Candidate &cd : cands) {
    const Kernel &k = p.kernels[cd.kernel];
    const GemmSpec &cs = k.gemm;
    const int f = cd.form, w = cd.wanted;
    form[cd.kernel] = f;
    if (f >= 0 && kForm[f].rt) {
      // (forced: chunks of 16 channels, so that the tests cross chunks)
      chunk[cd.kernel] = budgeted ? cd.chunk[f] : std::min<int64_t>(cs.out_c, 16);
      // int8: bands of tile rows per chunk (--winograd-bands with a forced rt form, tests)
      if (k.kind == KernelKind::QGemm)
        rt_bands[cd.kernel] = budgeted ? cd.rt_bands[f]
                              : o.bands > 0 && !g.v(k.out).is_dynamic() && !g.v(k.ins[0]).is_dynamic()
                                  ? std::min(o.bands, cs.batch * ceil_div(cs.out_h, kForm[f].m))
                                  : 1;
    } else if (f >= 0) {
      if (budgeted) bands[cd.kernel] = cd.bands[f];
      // --winograd-bands (tests): that many, at most a band a tile row, over fixed sizes.
      if (o.bands > 0 && !g.v(k.out).is_dynamic() && !g.v(k.ins[0]).is_dynamic())
        bands[cd.kernel] = std::min(o.bands, cs.batch * ceil_div(cs.out_h, kForm[f].m));
    }
    const int64_t bytes = planned[cd.kernel] ? planned[cd.kernel]->form_bytes : 0;
    std::string why = !budgeted               ? " (--winograd)"
                      : f == w                ? ""
                      : f >= 0 && kForm[f].rt ? " (" + form_name(w) + "'s transformed weights over the weights budget)"
                                              : " (" + form_name(w) + " over the " +
                                                    (cd.dropped || w < 0 ? "code"
                                                     : cd.arena_fits[w]  ? "weights"
                                                                         : "arena") +
                                                    " budget)";
    if (bands[cd.kernel] > 1)
      why += " in " + std::to_string(bands[cd.kernel]) + " bands of tile rows (" +
             (o.bands > 0 ? "--winograd-bands" : "the arena budget") + ")";
    if (chunk[cd.kernel] && chunk[cd.kernel] < cs.out_c)
      why += " in chunks of " + std::to_string(chunk[cd.kernel]) + " output channels (" +
             (budgeted ? "the arena budget" : "forced forms: 16") + ")";
    if (rt_bands[cd.kernel] > 1)
      why += ", each in " + std::to_string(rt_bands[cd.kernel]) + " bands of tile rows (" +
             (budgeted ? "the arena budget" : "--winograd-bands") + ")";
    if (c.log) *c.log << cd.log << " -> " << form_name(f) << why << "\n";
    // (A form taken where no stored form was wanted: an rt form measured
    // to pay where the stored ones do not, --tuning.)
    if (budgeted && (w >= 0 || f >= 0))
      p.trades.push_back({"winograd", k.label, k.nodes.empty() ? "" : k.nodes.front(), form_name(w), form_name(f),
                          bytes, w >= 0 ? cd.bytes[w] : 0, f >= 0 ? cd.gain[f] : 0, w >= 0 ? cd.gain[w] : 0,
                          (int)(f >= 0 && kForm[f].rt ? rt_bands[cd.kernel] : bands[cd.kernel]), 0,
                          chunk[cd.kernel] < cs.out_c ? chunk[cd.kernel] : 0});
    if (planned[cd.kernel]) report_option(c, k, *planned[cd.kernel]);
  }
  if (c.log && budgeted && !cands.empty())
    *c.log << "  arena budget " << p.budgets.arena << " bytes ("
           << (lim.max_arena_ratio > 0  ? "--max-arena-bytes " + ratio_text(lim.max_arena_ratio) + "x"
               : lim.arena_budget_given ? std::string("--max-arena-bytes")
                                        : std::string("default: 1.1x"))
           << "; " << p.budgets.base_arena << " bytes live at the peak without transforms)\n";
  if (c.log && !choices.empty()) {
    int forms = 0;
    for (const Candidate &cd : cands) forms += cd.form >= 0;
    *c.log << "  weights budget " << p.budgets.weights << " bytes ("
           << (lim.weights_budget_given() ? "--max-weights-bytes"
               : float_plan > 0 ? "default: 1.1x the float plan's " + std::to_string(float_plan) + " bytes as half"
               : o.weights == WeightStorage::F16 ? "default: 1.1x the model's weights as half"
                                                 : "default: 1.1x the model's weights")
           << "): " << p.budgets.base_weights << " before the trades; " << choices.size()
           << " weights' options chosen together (weights_plan): " << forms << " Winograd, " << narrowed
           << " tiles narrowed, " << kept_float << " kept float, adding " << p.budgets.traded_weights << " bytes"
           << (p.budgets.base_weights + p.budgets.traded_weights > p.budgets.weights ? " (over: no option saves more)"
                                                                                     : "")
           << "\n";
  }

  std::vector<Kernel> out;
  out.reserve(p.kernels.size());
  int rewritten = 0;
  int64_t transformed_bytes = 0;
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    Kernel &k = p.kernels[ki];
    const int f = form[ki];
    if (f < 0) {
      if (planned[ki]) apply_option(*planned[ki], t, k.gemm);
      out.push_back(std::move(k));
      continue;
    }
    const int m = kForm[f].m;
    const bool rt = kForm[f].rt;
    const GemmSpec s = k.gemm;
    const WinogradMatrices &w = winograd_matrices(m);
    int64_t a = w.a(), TH = ceil_div(s.out_h, m), TW = ceil_div(s.out_w, m), T = tiles(s, m);
    int64_t IC = s.in_c, OC = s.out_c;
    const bool q8 = k.kind == KernelKind::QGemm;  // int16 V and U, int32 M
    // Forced forms are not budgeted: the cap in force refuses them before
    // the transformed weights are made.
    transformed_bytes += (rt ? 9 : a * a) * OC * IC * (q8 ? 2 : 4);
    if (transformed_bytes > lim.weights_cap())
      fail_cap((k.nodes.empty() ? k.label : "node '" + k.nodes.front() + "' (" + k.label + ")") + ": its Winograd " +
               form_name(f) + " weights bring the transformed weights to " + std::to_string(transformed_bytes) +
               " bytes, more than the limit of " + std::to_string(lim.weights_cap()) +
               " (--max-weights-bytes; --winograd off keeps "
               "convolutions direct with their own weights)");
    const std::string base = g.v(k.out).name;
    Kernel conv = std::move(k);
    // Slot 0 of the output transform becomes M; an epilogue reading the
    // convolution's input (a residual Relu(Conv(x) + x)) reads it from a
    // slot of its own.
    bool reads_x = false;
    visit(conv.gemm.epilogue, [&](const Expr &e) { reads_x = reads_x || (e.op == EOp::Load && e.id == 0); });
    if (reads_x) {
      int xs = (int)conv.ins.size();
      conv.ins.push_back(conv.ins[0]);
      conv.gemm.epilogue = replace_loads(conv.gemm.epilogue, 0, [&](const Expr &e) { return load(xs, e.type, e.a); });
    }
    auto input_transform = [&](int V, const WinogradSpec &band, const std::string &tag) {
      Kernel in;
      in.kind = KernelKind::WinogradIn;
      in.out = V;
      in.ins = {conv.ins[0]};
      in.gemm = s;
      in.gemm.epilogue = nullptr;
      in.wino = band;
      in.wino.channels = IC;
      in.nodes = conv.nodes;
      in.label = conv.label + ".winograd_in" + tag;
      in.guard = conv.guard;
      return in;
    };
    auto output_transform = [&](int M, const WinogradSpec &part, const std::string &tag) {
      Kernel o = conv;
      o.kind = KernelKind::WinogradOut;
      o.ins[0] = M;
      o.expr = nullptr;
      o.wino = part;
      o.label += ".winograd_out" + tag;
      return o;
    };
    // The grouped GEMM over V into M: M[t, q*C + oc] = sum_ic V[t, q*IC + ic]
    // * weight(q, oc, ic), C the output channels it computes.
    const int r = kFirstReduceVar;
    auto product = [&](int V, int U, int M, const GemmSpec &gs, int64_t C, const std::string &tag,
                       const std::function<ExprP(ExprP col, ExprP plane, ExprP ic)> &weight) {
      Kernel mm;
      mm.kind = q8 ? KernelKind::QGemm : KernelKind::Gemm;
      mm.out = M;
      mm.ins = {V, U};
      mm.gemm = gs;
      ExprP plane = bin(EOp::Div, var(1), cidx(C));
      ExprP x = load(0, q8 ? DType::I16 : DType::F32, {var(0), plane * IC + var(r)}),
            wt = weight(var(1), plane, var(r));
      if (q8) x = cast(x, DType::I32), wt = cast(wt, DType::I32);
      mm.expr = reduce(ReduceKind::Sum, {{r, IC}}, x * wt);
      mm.nodes = conv.nodes;
      mm.label = conv.label + ".winograd_gemm" + tag;
      mm.wino.m = m;  // F(4,3)'s weights stay float (packed_storage), so do its products
      mm.guard = conv.guard;
      return mm;
    };
    if (rt) {
      // The 3x3 weights as [IC, 9, OC] (a vector of output channels per
      // tap), transformed a chunk at a time: in (whole), then per chunk
      // weights, product, out.
      const Value &wv = g.v(s.weight);
      int R;
      if (q8) {
        // int8: chunk-major, [chunk][IC / 2][9][per][2] (the last chunk's
        // channels past OC zero, and an odd IC's last pair's second
        // channel), so that a chunk's transform reads one contiguous
        // block — a deep layer's weights outgrow the caches, and a chunk's
        // slice of [IC][9][OC] touches a line per tap and input channel —
        // with the two input channels of a pair interleaved per output
        // channel, as the int16 GEMM's packed quads [pair][nr][2] are:
        // the transform is linear, so it runs on the interleaved lanes
        // and stores them as they are.
        const int8_t *src = wv.data->as<int8_t>();
        const int64_t per = chunk[ki], parts = ceil_div(OC, per), pairs = ceil_div(IC, 2);
        Bytes raw((size_t)(parts * pairs * 9 * per * 2), 0);
        for (int64_t oc = 0; oc < OC; ++oc)
          for (int64_t ic = 0; ic < IC; ++ic)
            for (int64_t tap = 0; tap < 9; ++tap)
              raw[(size_t)(((((oc / per) * pairs + ic / 2) * 9 + tap) * per + oc % per) * 2 + ic % 2)] =
                  (uint8_t)src[(oc * IC + ic) * 9 + tap];
        R = g.add_const(g.fresh_name(wv.name + "_3x3"),
                        make_const(DType::I8, {parts, pairs, 9, per, 2}, std::move(raw)));
      } else {
        const float *src = wv.data->as<float>();
        std::vector<float> raw((size_t)(IC * 9 * OC));
        for (int64_t oc = 0; oc < OC; ++oc)
          for (int64_t ic = 0; ic < IC; ++ic)
            for (int64_t tap = 0; tap < 9; ++tap)
              raw[(size_t)((ic * 9 + tap) * OC + oc)] = src[(oc * IC + ic) * 9 + tap];
        // (--weights fp16: as half, widened as the transform loads them; the
        // transformed weights it writes to the arena are float.)
        R = add_float_weights(g, wv.name + "_3x3", raw, o.weights, {IC, 9, OC});
      }
      // Bands (int8, rt_bands): each chunk runs its tile rows in bands,
      // the input transformed per band; else V whole, transformed once.
      const int64_t rows = s.batch * TH, nb = rt_bands[ki], rows_per = ceil_div(rows, nb);
      int V = -1;
      if (nb == 1) {
        V = g.add_value(g.fresh_name(base + "_winograd_v"), q8 ? DType::I16 : DType::F32, {T, a * a * IC});
        p.perm.resize(g.values.size());
        out.push_back(input_transform(V, {m, TH, TW, 0, 0, 0, 0}, ""));
      }
      const int64_t per = chunk[ki], parts = ceil_div(OC, per);
      int Uf = -1, Vf = -1, Vl = -1;  // the full chunks' U and the bands' V (full, last), which their kernels share
      std::map<std::pair<int64_t, int64_t>, int> Ms;  // M per (band tiles, chunk channels)
      for (int64_t oc0 = 0; oc0 < OC; oc0 += per) {
        const int64_t occ = std::min(per, OC - oc0);
        const std::string ctag = occ < OC ? "[c" + std::to_string(oc0) + "]" : "";
        const GemmSpec cg0 = chunk_gemm(s, m, occ, q8);
        const bool full = occ == per;
        // U_c's planes (rt_planes), [q][plane, then its pad]
        const RtPlanes planes = rt_planes(s, m, occ, q8, t);
        const GemmTile tile = planes.tile;
        const int64_t NR = planes.nr, plane_bytes = planes.plane_bytes, plane_pad = planes.pad;
        int U = full ? Uf : -1;
        if (U < 0) {
          U = g.add_value(g.fresh_name(base + "_winograd_u"), q8 ? DType::I16 : DType::F32,
                          {a * a, (plane_bytes + plane_pad) / (q8 ? 2 : 4)});
          p.perm.resize(g.values.size());
          if (full) Uf = U;
        }
        const std::string ckey = parts > 1 && full ? base + "/chunk" + std::to_string(occ) : "";

        Kernel wt;
        wt.kind = KernelKind::WinogradWeights;
        wt.out = U;
        wt.ins = {R};
        wt.gemm = s;
        wt.gemm.epilogue = nullptr;
        wt.gemm.nr = (int)NR;
        wt.gemm.group_pad_bytes = plane_pad;
        wt.wino = {m, TH, TW, occ, 0, 0, oc0};
        wt.nodes = conv.nodes;
        wt.label = conv.label + ".winograd_weights" + ctag;
        wt.guard = conv.guard;
        if (!ckey.empty()) wt.code_key = ckey + "/weights";
        out.push_back(std::move(wt));

        for (int64_t row0 = 0, band = 0; row0 < rows; row0 += rows_per, ++band) {
          const int64_t band_rows = std::min(rows_per, rows - row0), Tb = nb > 1 ? band_rows * TW : T;
          const bool full_band = band_rows == rows_per;
          const std::string tag = ctag + (nb > 1 ? "[" + std::to_string(band) + "]" : "");
          const WinogradSpec part = {m, TH, TW, occ, nb > 1 ? row0 : 0, nb > 1 ? band_rows : 0, oc0};
          // (the parts of one size: one key for the band's and the chunk's sizes)
          const std::string key =
              parts * nb > 1 && full && full_band
                  ? base + (nb > 1 ? "/band" + std::to_string(band_rows) : "") + "/chunk" + std::to_string(occ)
                  : "";
          if (nb > 1) {
            int &Vb = full_band ? Vf : Vl;
            if (Vb < 0) {
              Vb = g.add_value(g.fresh_name(base + "_winograd_v"), q8 ? DType::I16 : DType::F32, {Tb, a * a * IC});
              p.perm.resize(g.values.size());
            }
            V = Vb;
            Kernel in = input_transform(V, part, tag);
            in.wino.c0 = 0;
            if (!key.empty()) in.code_key = base + "/band" + std::to_string(band_rows) + "/in";
            out.push_back(std::move(in));
          }
          auto mi = Ms.find({Tb, occ});
          if (mi == Ms.end()) {
            mi = Ms.emplace(std::make_pair(Tb, occ), g.add_value(g.fresh_name(base + "_winograd_m"),
                                                                 q8 ? DType::I32 : DType::F32, {Tb, a * a * occ}))
                     .first;
            p.perm.resize(g.values.size());
          }
          const int M = mi->second;
          // U_c[q][oc / NR][ic][oc % NR], packed for this GEMM (arena_packed).
          GemmSpec cg = cg0;
          cg.arena_packed = true;
          cg.group_pad_bytes = plane_pad;
          cg.in_w = cg.out_w = Tb;
          if (q8) {  // every band's GEMM reads U_c with the tile it was packed for
            cg.mr = tile.mr;
            cg.nr = (int)NR;
          }
          // (U's planes flat: [q][plane elements, then the pad])
          const int64_t pairs = ceil_div(IC, 2);
          Kernel mm = product(V, U, M, cg, occ, tag, [&](ExprP col, ExprP plane, ExprP ic) {
            ExprP oc = bin(EOp::Rem, col, cidx(occ));
            ExprP tile = bin(EOp::Div, oc, cidx(NR)), lane = bin(EOp::Rem, oc, cidx(NR));
            ExprP at =
                q8 ? bin(EOp::Add,
                         bin(EOp::Mul, bin(EOp::Add, bin(EOp::Mul, tile, cidx(pairs)), bin(EOp::Div, ic, cidx(2))),
                             cidx(NR * 2)),
                         bin(EOp::Add, bin(EOp::Mul, lane, cidx(2)), bin(EOp::Rem, ic, cidx(2))))
                   : bin(EOp::Add, bin(EOp::Mul, bin(EOp::Add, bin(EOp::Mul, tile, cidx(IC)), ic), cidx(NR)), lane);
            return load(1, q8 ? DType::I16 : DType::F32, {plane, at});
          });
          Kernel ot = output_transform(M, part, tag);
          if (!key.empty()) mm.code_key = key + "/gemm", ot.code_key = key + "/out";
          out.push_back(std::move(mm));
          out.push_back(std::move(ot));
        }
      }
      ++rewritten;
      continue;
    }
    int U =
        g.add_const(g.fresh_name(g.v(s.weight).name + "_winograd"),
                    q8 ? transform_weights_i16(g.v(s.weight), OC, IC, w) : transform_weights(g.v(s.weight), OC, IC, w));
    // Bands of whole tile rows, as even as they go (one: the whole batch).
    const int64_t rows = s.batch * TH, nb = bands[ki], per = ceil_div(rows, nb);
    int Vf = -1, Mf = -1;  // the full bands' values, which their kernels share (Kernel::code_key)
    for (int64_t row0 = 0, band = 0; row0 < rows; row0 += per, ++band) {
      const int64_t band_rows = std::min(per, rows - row0), Tb = nb > 1 ? band_rows * TW : T;
      const std::string suffix = nb > 1 ? "_b" + std::to_string(band) : "";
      const std::string tag = nb > 1 ? "[" + std::to_string(band) + "]" : "";
      const bool full = band_rows == per;
      int V = full ? Vf : -1, M = full ? Mf : -1;
      const bool made = V < 0;
      if (made) {
        V = g.add_value(g.fresh_name(base + "_winograd_v" + suffix), q8 ? DType::I16 : DType::F32, {Tb, a * a * IC});
        M = g.add_value(g.fresh_name(base + "_winograd_m" + suffix), q8 ? DType::I32 : DType::F32, {Tb, a * a * OC});
        if (full) Vf = V, Mf = M;
      }
      const std::string key = nb > 1 && full ? base + "/band" + std::to_string(band_rows) : "";
      if (made && g.v(conv.out).is_dynamic()) {  // the run's tiles: batch * ceil(out_h / m) * ceil(out_w / m)
        auto per_side = [&](int role, int64_t fixed) {
          ExprP e = s.out_axis[role] >= 0 ? g.extent(conv.out, s.out_axis[role]) : cidx(fixed);
          return (e + (m - 1)) / cidx(m);
        };
        ExprP run_tiles = per_side(2, s.out_h) * per_side(3, s.out_w) * s.batch;
        int sym = g.derived_sym(run_tiles, g.v(V).name + "[0]");
        TINYRT_CHECK(sym < 0 || g.syms[(size_t)sym].hi <= T, "Winograd tiles past their bounds");
        g.values[(size_t)V].dims = g.values[(size_t)M].dims = {sym, -1};
      }
      p.perm.resize(g.values.size());
      const WinogradSpec band_of = {m, TH, TW, OC, row0, nb > 1 ? band_rows : 0, 0};
      Kernel in = input_transform(V, band_of, tag);

      // U[q*OC + oc, ic], transformed at compile time.
      GemmSpec gs = grouped_gemm(s, m, Tb, q8);
      if (planned[ki]) apply_option(*planned[ki], t, gs);
      gs.weight = U;
      Kernel mm = product(V, U, M, gs, OC, tag, [&](ExprP col, ExprP, ExprP ic) {
        return load(1, q8 ? DType::I16 : DType::F32, {col, ic, cidx(0), cidx(0)});
      });

      Kernel ot = output_transform(M, band_of, tag);
      if (!key.empty()) in.code_key = key + "/in", mm.code_key = key + "/gemm", ot.code_key = key + "/out";
      out.push_back(std::move(in));
      out.push_back(std::move(mm));
      out.push_back(std::move(ot));
    }
    ++rewritten;
  }
  p.kernels = std::move(out);
  if (c.log) *c.log << "  " << rewritten << " convolutions as Winograd\n";
}

}  // namespace

void winograd(PassContext &c, const WinogradOptions &o) {
  if (o.mode != WinogradMode::Auto) return choose_and_rewrite(c, o, 0);
  // The arena budget is held against the placed arena: the forms are
  // chosen with each layer's buffers beside what is live at its step, and
  // the placement may come out above that peak (its gaps).
  hold_placed_arena(
      c, "winograd", "forms",
      [&](PassContext &qc, int64_t cut) {
        choose_and_rewrite(qc, o, cut);
        const auto &ks = qc.program.kernels;
        return std::any_of(ks.begin(), ks.end(), [](const Kernel &k) { return is_winograd(k.kind); });
      },
      [&](const Program &q) { return planned_arena(as_run(q, c.target, o)); });
}

}  // namespace tinyrt
