#include "target/target.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include "ir/error.h"
#include "target/targets.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

GemmTile Target::gemm_tile(int64_t oc, int64_t row, bool linear, int64_t ic, TileKind kind, double *score_out,
                           int max_nv) const {
  bool int8 = kind != TileKind::Float;
  int lanes = f32_lanes();
  auto tiles = [](int64_t n, int64_t t) { return (n + t - 1) / t; };
  // What a row's broadcast and a weight vector's load cost against one
  // product register's instructions (signed bytes: qgemm_signed_costs).
  const bool signed_bytes = kind == TileKind::Int8SignedBytes && !qgemm_signed_tiles.empty();
  const double row_cost = signed_bytes ? qgemm_signed_costs.first : gemm_broadcast_cost;
  const double load_cost = signed_bytes ? qgemm_signed_costs.second : 1.0;
  auto score = [&](int mr, int nv) {
    int64_t nr = (int64_t)nv * lanes;
    double pix = (double)row / (double)(tiles(row, mr) * mr);
    double ch = (double)oc / (double)(tiles(oc, nr) * nr);
    // FMA latency 4 x 2 pipes: independent sums a step, fewer than mr * nv
    // where the row has fewer pixels than the tile (a matrix-vector product).
    double latency = std::min(1.0, (double)std::min<int64_t>(mr, row) * nv / 8.0);
    // Useful FMAs per instruction of the inner loop (mr broadcasts, nv
    // weight loads, mr * nv FMAs per input channel).
    return pix * ch * latency * (mr * nv) / (row_cost * mr + load_cost * nv + mr * nv);
  };
  // (--precision fp16: float tiles of whole half vectors only.)
  const int step = int8 ? 1 : tile_nv_step;
  auto within = [&](int nv) { return (max_nv <= 0 || nv <= std::max(max_nv, step)) && nv % step == 0; };
  for (const TunedTile &t : tuned_tiles)
    if (t.at == TileClass{kind, oc, row, ic, linear} && within(t.nv)) {
      if (score_out) *score_out = score(t.mr, t.nv);
      return {t.mr, t.nv, gemm_unroll};
    }
  // A measured cell's tile, unless it would pad the layer's channels by
  // more than an eighth (a cell of channel ranges cannot tell 24 channels,
  // which 2 vectors of 8 cover as 32, from 64): the score then decides.
  auto fills = [&](int nv) { return (double)oc / (double)(tiles(oc, (int64_t)nv * lanes) * nv * lanes) >= 0.875; };
  if (!int8)
    for (const TileRule &r : gemm_tile_table)
      if (r.ic_class == tile_ic_class(ic) && r.linear == linear && oc > r.min_oc && oc <= r.max_oc && row > r.min_row &&
          row <= r.max_row && within(r.nv) && fills(r.nv)) {
        if (score_out) *score_out = score(r.mr, r.nv);
        return {r.mr, r.nv, gemm_unroll};
      }
  GemmTile best{1, 1, gemm_unroll};
  double best_score = -1;
  const auto &tiles_of =
      kind == TileKind::Int16Bytes && !qgemm_w8_tiles.empty()                                 ? qgemm_w8_tiles
      : (kind == TileKind::Int16 || kind == TileKind::Int16Bytes) && !qgemm_i16_tiles.empty() ? qgemm_i16_tiles
      : kind == TileKind::Int8SignedBytes && !qgemm_signed_tiles.empty()                      ? qgemm_signed_tiles
      : kind != TileKind::Float && kind != TileKind::Int8 && !qgemm_byte_tiles.empty()        ? qgemm_byte_tiles
      : int8 && !qgemm_tiles.empty()                                                          ? qgemm_tiles
                                                                                              : gemm_tiles;
  auto pick = [&](const std::vector<std::pair<int, int>> &from) {
    for (auto [mr, nv] : from) {
      if (!within(nv)) continue;
      double s = score(mr, nv);
      // A later entry must win clearly: the first is the measured default.
      if (best_score < 0 ? true : s > best_score * 1.1) {
        best_score = s;
        best = {mr, nv, gemm_unroll};
      }
    }
  };
  pick(tiles_of);
  // Under a cap no listed tile meets: the float tiles the registers hold.
  if (best_score < 0 && !int8) pick(tile_candidates());
  if (score_out) *score_out = best_score;
  return best;
}

const char *Target::tile_kind_name(TileKind k) {
  switch (k) {
    case TileKind::Int8: return "int8";
    case TileKind::Int8Bytes: return "int8-bytes";
    case TileKind::Int16: return "int16";
    case TileKind::Int8SignedBytes: return "int8-signed-bytes";
    case TileKind::Int16Bytes: return "int16-bytes";
    case TileKind::Float: break;
  }
  return "float";
}

bool Target::tile_kind_of(const std::string &name, TileKind *k) {
  for (TileKind c : {TileKind::Float, TileKind::Int8, TileKind::Int8Bytes, TileKind::Int16, TileKind::Int8SignedBytes,
                     TileKind::Int16Bytes})
    if (name == tile_kind_name(c)) {
      *k = c;
      return true;
    }
  return false;
}

std::vector<std::pair<int, int>> Target::tile_candidates() const {
  std::vector<std::pair<int, int>> out = gemm_tiles;
  for (const TileRule &r : gemm_tile_table) out.push_back({r.mr, r.nv});
  // The rest by registers used, most first (the fuller tiles reuse each
  // load most), then by channel vectors.
  std::vector<std::pair<int, int>> rest;
  for (int nv = 1; nv <= 4; ++nv)
    for (int mr = 1; mr <= 16; ++mr)
      if (mr * nv >= 4 && tile_fits(mr, nv)) rest.push_back({mr, nv});
  auto regs = [](std::pair<int, int> t) { return tile_regs(t.first, t.second); };
  std::stable_sort(rest.begin(), rest.end(),
                   [&](auto a, auto b) { return regs(a) != regs(b) ? regs(a) > regs(b) : a.second > b.second; });
  out.insert(out.end(), rest.begin(), rest.end());
  std::vector<std::pair<int, int>> unique;
  for (auto c : out)
    if (c.second % tile_nv_step == 0 && std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  return unique;
}

int Target::recurrent_vectors(int gates) const {
  // 8 accumulators: measured on the int8 LSTM (hidden 256, AVX-512 VNNI),
  // 16 were slower (0.53 and, with the quad loop unrolled, 0.64 ms against
  // 0.50 ms).
  return std::max(1, std::min(4, 8 / std::max(1, gates)));
}

double Target::int8_time_over_float(MaddForm madd, bool pair16) const {
  switch (dot_i8) {
    case DotI8::X86Madd: return int8_over_float[(int)madd];
    case DotI8::NeonPairs: return int8_over_float[pair16 ? 0 : 1];
    case DotI8::X86Vnni:
    case DotI8::NeonSdot: break;
  }
  return int8_over_float[0];
}

int dot_i8_x_sign(DotI8 d) {
  switch (d) {
    case DotI8::X86Vnni: return 1;
    case DotI8::NeonPairs:
    case DotI8::NeonSdot: return -1;
    case DotI8::X86Madd: break;
  }
  return 0;
}

int Target::depthwise_tile(int64_t k_h, int64_t k_w) const {
  // One accumulator per pixel, the tap weights held in registers when they
  // fit, one register for the input vector.
  // Beyond that, the target's limit for windows whose weights do not stay
  // in registers.
  const int64_t taps = k_h * k_w;
  const bool weights_held = taps < vector_regs / 2;
  int64_t free_regs = vector_regs - 1 - (weights_held ? taps : 0);
  const int most = weights_held ? 8 : depthwise_mr_max[k_w > 3];
  return (int)std::max<int64_t>(2, std::min<int64_t>(most, free_regs));
}

int Target::depthwise_tile_int8(int64_t k_w, int64_t stride_w, int64_t out_w) const {
  const int most = depthwise_int8_mr[stride_w > 1];
  if (most > 0) {
    // The fewest tiles of at most `most` pixels over the row, of equal
    // sizes: a 7-pixel row at most 6 takes 4 + 3, not 6 + 1.
    const int64_t w = std::max<int64_t>(1, out_w), tiles = (w + most - 1) / most;
    return (int)((w + tiles - 1) / tiles);
  }
  // m accumulators + (m - 1) * stride + k_w widened inputs + a weight.
  int64_t m = (vector_regs - 1 - k_w + stride_w) / (1 + stride_w);
  return (int)std::max<int64_t>(1, std::min<int64_t>(8, m));
}

int Target::depthwise_int8_channels() const { return arch == TINYRT_ARCH_X86_64 ? f32_lanes() : 8; }

namespace {

// Every target by name ("host" is resolved from the CPU).
struct NamedTarget {
  const char *name;
  Target (*make)();
};
const NamedTarget kTargets[] = {
    {"x86-64-avx2", [] { return x86_64_target("x86-64-avx2", false, X86Vnni::None); }},
    {"x86-64-avx2-vnni", [] { return x86_64_target("x86-64-avx2-vnni", false, X86Vnni::Vex); }},
    {"x86-64-avx512-vnni-256", [] { return x86_64_target("x86-64-avx512-vnni-256", false, X86Vnni::Evex); }},
    {"x86-64-avx512", [] { return x86_64_target("x86-64-avx512", true, X86Vnni::None); }},
    {"x86-64-avx512-vnni", [] { return x86_64_target("x86-64-avx512-vnni", true, X86Vnni::Evex); }},
    {"armv7-neon", [] { return armv7_target("armv7-neon"); }},
    {"aarch64-neon", [] { return aarch64_target("aarch64-neon"); }},
    {"aarch64-neon-dot", [] { return aarch64_target("aarch64-neon-dot"); }},
    {"aarch64-neon-fp16", [] { return aarch64_target("aarch64-neon-fp16"); }},
};

}  // namespace

Target resolve_target(const std::string &name) {
  if (name == "host") {
#if defined(__x86_64__)
    // The host's features, asked once per process (cpuid is a VM exit on
    // virtual machines; the fuzzers resolve the target per input).
    static const char *const host = [] {
      llvm::StringMap<bool> f;
      llvm::sys::getHostCPUFeatures(f);
      bool avx512 = f.lookup("avx512f") && f.lookup("avx512bw") && f.lookup("avx512vl") && f.lookup("avx512dq");
      return avx512 && f.lookup("avx512vnni") ? "x86-64-avx512-vnni"
             : avx512                         ? "x86-64-avx512"
             : f.lookup("avxvnni")            ? "x86-64-avx2-vnni"
                                              : "x86-64-avx2";
    }();
    return resolve_target(host);
#else
    fail_usage("--target host is only implemented on x86-64 hosts; name the target");
#endif
  }
  for (const NamedTarget &t : kTargets)
    if (name == t.name) return t.make();
  std::string all;
  for (auto &n : target_names()) all += " " + n;
  fail_usage("unknown target '" + name + "'; known:" + all);
}

std::vector<std::string> target_names() {
  std::vector<std::string> r = {"host"};
  for (const NamedTarget &t : kTargets) r.push_back(t.name);
  return r;
}

}  // namespace tinyrt
