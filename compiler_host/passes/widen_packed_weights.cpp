// widen_packed_weights.cpp — the arena budget's room holds wider copies of
// packed GEMM weights that the GEMM would otherwise widen as it loads
// them, once per register tile of pixels: a loop kernel just before the
// GEMM widens them once per run into an arena tensor of the same layout,
// which the GEMM then reads (GemmSpec::arena_packed, as Winograd's
// run-time weights). Two kinds:
//
// * Half weights (--weights fp16, float products) as float. A GEMM over
//   half weights widens each weight vector as it loads it
//   (weights_plan.cpp says what that costs by core: nothing
//   measurable on Zen 4, 1.2-1.4x a compute-bound layer's time on Intel's
//   AVX-512 cores, an instruction per float vector on NEON).
// * The int8 weights of a GEMM over int16 pairs (GemmSpec::w8: x86 without
//   VNNI, widen_int8_inputs.cpp) as int16: each weight vector's vpmovsxbw
//   takes the shuffle pipes that the pairs' input broadcasts already keep
//   busy (llvm-mca of mobilenet_v2's 1x1 loop: 0.82x the cycles on Zen 3,
//   0.78x on Skylake, unchanged on Zen 1-2 and Haswell, whose multiplies
//   bound it; measured on Zen 4 0.93-0.95x per layer; bench/RESULTS.md,
//   forty-first session). Only over Target::int16_weight_copy_min_tiles
//   tiles (AVX2; not AVX-512, where it measured no gain): the copy writes
//   twice the layer's int8 bytes every run.
//
// The copy lives from its kernel to the GEMM. Where the weights budget's
// room (the weights plan) kept no float weights, the arena budget's may:
// the layers whose weights serve the most pixel tiles first (conversions
// saved per arena byte: the tiles less the copy's own pass), each taken
// where its copy fits the arena budget beside what is live at its step;
// if the placed arena then exceeds the budget (its gaps), the copies that
// save least are dropped, as few as keep it within (by bisection). The
// flash keeps the narrow weights. Each copy is a memory trade
// ("float-copy", "int16-copy") in -v and the JSON.
#include <algorithm>

#include "passes/pass.h"
#include "passes/weights_plan.h"

namespace tinyrt {

namespace {

// Float GEMM kernel k whose packed weights are stored as half: its pixel
// tiles (each widens every weight vector once), or 0.
int64_t half_weight_tiles(const Program &p, const Kernel &k) {
  const GemmSpec &s = k.gemm;
  const Graph &g = p.graph;
  // (Not a Winograd layer's grouped GEMM: its bands share one packed
  // weight and one generated function.)
  if (k.kind != KernelKind::Gemm || k.wino.m != 0 || !k.code_key.empty() || s.arena_weights || s.arena_packed ||
      s.half || s.packed < 0 || s.mr <= 0 || s.nr <= 0 || g.v(s.packed).dtype != DType::F16 ||
      !g.v(s.packed).is_const())
    return 0;
  // The packed layout the GEMM addresses: [group][oc tile][kh*kw][ic][nr].
  const int64_t G = s.groups, OCt = (s.out_c / G + s.nr - 1) / s.nr;
  if (g.v(s.packed).numel() != G * OCt * s.k_h * s.k_w * (s.in_c / G) * s.nr) return 0;
  return (s.batch * s.out_h * s.out_w + s.mr - 1) / s.mr;
}

// Int8 GEMM kernel k over int16 pairs whose packed weights stay bytes
// (GemmSpec::w8, widened as they load): its pixel tiles, or 0. Not k_run
// (its kernel rows' K in pairs: another layout).
int64_t byte_pair_weight_tiles(const Program &p, const Kernel &k) {
  const GemmSpec &s = k.gemm;
  const Graph &g = p.graph;
  if (k.kind != KernelKind::QGemm || !s.i16 || !s.w8 || s.k_run || k.wino.m != 0 || !k.code_key.empty() ||
      s.arena_weights || s.arena_packed || s.packed < 0 || s.mr <= 0 || s.nr <= 0 || g.v(s.packed).dtype != DType::I8 ||
      !g.v(s.packed).is_const())
    return 0;
  // The packed layout the GEMM addresses: [group][oc tile][kh*kw][ic / 2][nr][2].
  const int64_t G = s.groups, OCt = (s.out_c / G + s.nr - 1) / s.nr, ICg = s.in_c / G;
  if (ICg % 2 || g.v(s.packed).numel() != G * OCt * s.k_h * s.k_w * ICg * s.nr) return 0;
  return (s.batch * s.out_h * s.out_w + s.mr - 1) / s.mr;
}

// Index of logical weight element `a` ([oc, ic, taps...] of a weight of
// shape `w`) in GEMM s's packed layout, as pack_weights writes it (and
// half_weight_tiles and byte_pair_weight_tiles check its size):
// [group][oc tile][kh*kw][ic][nr], or with `pairs` [...][ic / 2][nr][2].
ExprP packed_index(const GemmSpec &s, const Shape &w, const std::vector<ExprP> &a, bool pairs) {
  const int64_t G = s.groups, OCg = s.out_c / G, ICg = s.in_c / G, NR = s.nr, OCt = (OCg + NR - 1) / NR;
  ExprP tap = cidx(0);
  for (size_t r = 2; r < a.size(); ++r) tap = tap * cidx(w[r]) + a[r];
  ExprP group = bin(EOp::Div, a[0], cidx(OCg)), oc = bin(EOp::Rem, a[0], cidx(OCg));
  ExprP tile = bin(EOp::Div, oc, cidx(NR)), lane = bin(EOp::Rem, oc, cidx(NR));
  ExprP base = (group * OCt + tile) * (s.k_h * s.k_w) + tap;
  if (!pairs) return (base * ICg + a[1]) * NR + lane;
  ExprP pair = bin(EOp::Div, a[1], cidx(2)), half = bin(EOp::Rem, a[1], cidx(2));
  return ((base * (ICg / 2) + pair) * NR + lane) * cidx(2) + half;
}

}  // namespace

void widen_packed_weights(PassContext &c, const PackOptions &o) {
  Program &p = c.program;
  Graph &g = p.graph;
  const bool half = o.weights == WeightStorage::F16 && o.precision == Precision::F32;
  struct Candidate {
    size_t kernel;
    int64_t tiles, bytes;
    bool pairs;  // int8 weights of int16 pairs (else half weights)
  };
  std::vector<Candidate> cands;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    const int64_t numel = k.gemm.packed >= 0 ? g.v(k.gemm.packed).numel() : 0;
    int64_t tiles = half ? half_weight_tiles(p, k) : 0;
    if (tiles >= kMinCopyTiles) cands.push_back({i, tiles, sat_mul(numel, (int64_t)4), false});
    tiles = byte_pair_weight_tiles(p, k);
    if (c.target.int16_weight_copy_min_tiles > 0 && tiles >= c.target.int16_weight_copy_min_tiles)
      cands.push_back({i, tiles, sat_mul(numel, (int64_t)2), true});
  }
  if (cands.empty()) return;
  // Most tiles first: conversions saved per arena byte (tiles - 1 per
  // weight vector of 4 L bytes, whatever the layer).
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate &a, const Candidate &b) { return a.tiles > b.tiles; });
  const std::vector<int64_t> live = live_bytes(p);
  const int64_t peak = *std::max_element(live.begin(), live.end());
  if (p.budgets.base_arena == 0) p.budgets.base_arena = peak, p.budgets.arena = g.limits.arena_budget(peak);
  const int64_t budget = p.budgets.arena;
  std::vector<Candidate> fit;
  for (const Candidate &cd : cands)
    if (sat_add(live[cd.kernel], cd.bytes) <= budget) fit.push_back(cd);

  // The program with the first n copies of `fit`.
  auto with_copies = [&](size_t n) {
    Program q = p;
    Graph &qg = q.graph;
    std::vector<char> take(q.kernels.size(), 0);  // 1: a float copy, 2: an int16 one
    for (size_t j = 0; j < n; ++j) take[fit[j].kernel] = fit[j].pairs ? 2 : 1;
    std::vector<Kernel> out;
    out.reserve(q.kernels.size() + n);
    for (size_t i = 0; i < q.kernels.size(); ++i) {
      Kernel &k = q.kernels[i];
      if (take[i]) {
        GemmSpec &s = k.gemm;
        const bool pairs = take[i] == 2;
        const Value &packed = qg.v(s.packed);
        const DType to = pairs ? DType::I16 : DType::F32;
        const int copy = qg.add_value(qg.fresh_name(packed.name + (pairs ? "_int16" : "_float")), to, packed.shape);
        Kernel wk;
        wk.out = copy;
        wk.ins = {s.packed};
        wk.expr = cast(load(0, packed.dtype, {var(0)}), to);
        wk.label = pairs ? "WidenInt8Weights" : "WidenHalfWeights";
        wk.nodes = k.nodes;  // the layer it serves
        wk.guard = k.guard;
        out.push_back(std::move(wk));
        // Slot 1 becomes the copy: the definition reads it in the packed
        // layout (int16 pairs: the int8 values, now held as int16).
        const Shape wshape = qg.v(s.weight).shape;
        k.expr = replace_loads(k.expr, 1, [&](const Expr &e) {
          ExprP w = load(1, to, {packed_index(s, wshape, e.a, pairs)});
          return pairs ? cast(w, e.type) : w;
        });
        k.ins[1] = copy;
        s.arena_packed = true;
        s.group_pad_bytes = 0;
        s.w8 = false;  // its weights int16 now, as int8 Winograd's
      }
      out.push_back(std::move(k));
    }
    q.kernels = std::move(out);
    q.perm.resize(qg.values.size());
    return q;
  };
  // The most copies (those that save most) whose placed arena is within
  // the budget: all, or by bisection between none and all (a placement's
  // gaps may put the last few over it).
  size_t n = fit.size();
  Program q = with_copies(n);
  if (n > 0 && planned_arena(q) > budget) {
    size_t lo = 0, hi = n;  // hi: over the budget
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (planned_arena(with_copies(mid)) <= budget ? lo : hi) = mid;
    }
    n = lo;
    q = with_copies(n);
  }
  for (size_t j = 0; j < cands.size(); ++j) {
    const Candidate &cd = cands[j];
    const Kernel &k = p.kernels[cd.kernel];
    const bool taken = std::find_if(fit.begin(), fit.begin() + (long)n,
                                    [&](const Candidate &f) { return f.kernel == cd.kernel; }) != fit.begin() + (long)n;
    // Estimated widenings saved: (tiles - 1) per weight vector (a half
    // one of L floats; an int8 one of L int16 pairs, 2 L bytes).
    const double vectors = (double)g.v(k.gemm.packed).numel() / (c.target.f32_lanes() * (cd.pairs ? 2 : 1));
    const std::string form = cd.pairs ? "int16 copy" : "float copy";
    MemoryTrade t{cd.pairs ? "int16-copy" : "float-copy",
                  k.label,
                  k.nodes.empty() ? "" : k.nodes.front(),
                  form,
                  taken      ? form
                  : cd.pairs ? "int8"
                             : "half",
                  0,
                  0,
                  taken ? (double)(cd.tiles - 1) * vectors : 0,
                  (double)(cd.tiles - 1) * vectors,
                  1,
                  taken ? cd.bytes : 0};
    q.trades.push_back(t);
    const std::string what = cd.pairs ? "int8 weights" : "half weights";
    if (c.log)
      *c.log << "  " << k.label << (k.nodes.empty() ? "" : " (" + k.nodes.front() + ")") << ": "
             << (taken ? what + " widened once per run into " + std::to_string(cd.bytes) + " arena bytes, "
                       : what + " widened per tile: a" + (cd.pairs ? "n " : " ") + form + " of " +
                             std::to_string(cd.bytes) + " bytes is over the arena budget of " + std::to_string(budget) +
                             ", ")
             << cd.tiles << " pixel tiles\n";
  }
  if (c.log)
    *c.log << "widen_packed_weights: " << n << " of " << cands.size()
           << " GEMMs over half or int8 pair weights read a copy widened once per run (arena budget " << budget
           << " bytes)\n";
  p = std::move(q);
}

}  // namespace tinyrt
