// weights_plan.cpp — the weights budget's plan: the options of each
// weight, and the one knapsack over all of them (weights_plan.h).
//
// The estimates, in vector instructions of the weight's GEMM (`macs`
// multiply-adds over L float lanes):
//   * a tile: macs / L / score, where score is Target::gemm_tile's figure
//     of merit for the tile (its FMAs per instruction of the inner loop);
//     a narrower tile's loss is the difference from the target's own, at
//     least kMinTileLoss of it (the target's tile is measured, the score
//     is not);
//   * float storage: the widenings saved, one per weight vector per
//     register tile of mr pixels, macs / L / mr (a depthwise convolution:
//     per tap vector and tile of Target::depthwise_tile pixels); where the
//     arena budget has room for a float copy of a GEMM's weights, widened
//     once per run (widen_packed_weights), the copy saves those anyway and
//     float storage only the copy's pass (a widening per weight vector);
//   * a Winograd form: the caller's (winograd.cpp's cost model).
// What a widening costs depends on the core (nothing measurable on Zen 4,
// 1.2-1.4x a compute-bound layer on Intel's AVX-512 cores, an instruction
// per float vector on NEON): counted as one instruction, it is weighed
// against the others by gain per byte.
#include "passes/weights_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tinyrt {

void choose_options(std::vector<WeightChoice> &choices, int64_t room) {
  struct Step {
    size_t choice, option;
    int level;
    double gain;
    int64_t bytes;
  };
  std::vector<Step> steps;
  int64_t used = 0;  // the starting options' bytes (fewest of each choice)
  for (size_t ci = 0; ci < choices.size(); ++ci) {
    WeightChoice &c = choices[ci];
    if (c.options.empty()) continue;
    std::vector<size_t> order(c.options.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const WeightOption &a = c.options[x], &b = c.options[y];
      return a.bytes != b.bytes ? a.bytes < b.bytes : a.gain > b.gain;
    });
    c.taken = order[0];
    used = sat_add(used, c.options[c.taken].bytes);
    // The upper hull from the start: each kept option gains more than the
    // last, for less gain per added byte than the step before it.
    std::vector<size_t> hull = {c.taken};
    for (size_t i = 1; i < order.size(); ++i) {
      const WeightOption &o = c.options[order[i]];
      if (o.gain <= c.options[hull.back()].gain) continue;
      while (hull.size() > 1) {
        const WeightOption &a = c.options[hull[hull.size() - 2]], &b = c.options[hull.back()];
        if ((b.gain - a.gain) * (double)(o.bytes - b.bytes) > (o.gain - b.gain) * (double)(b.bytes - a.bytes)) break;
        hull.pop_back();
      }
      hull.push_back(order[i]);
    }
    for (size_t l = 1; l < hull.size(); ++l)
      steps.push_back({ci, hull[l], (int)l, c.options[hull[l]].gain - c.options[hull[l - 1]].gain,
                       c.options[hull[l]].bytes - c.options[hull[l - 1]].bytes});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step &x, const Step &y) {
    return x.gain * (double)std::max<int64_t>(1, y.bytes) > y.gain * (double)std::max<int64_t>(1, x.bytes);
  });
  std::vector<int> level(choices.size(), 0);
  for (const Step &st : steps) {
    if (level[st.choice] != st.level - 1 || st.bytes > room - used) continue;
    level[st.choice] = st.level;
    choices[st.choice].taken = st.option;
    used += st.bytes;
  }
  // The room left: where a choice's next hull step did not fit, an option
  // under its hull (fewer bytes for less gain per byte) may; the largest
  // gain that fits first, until none does.
  for (;;) {
    size_t best_c = 0, best_o = 0;
    double best = 0;
    for (size_t ci = 0; ci < choices.size(); ++ci) {
      const WeightChoice &c = choices[ci];
      if (c.options.empty()) continue;
      const WeightOption &now = c.chosen();
      for (size_t oi = 0; oi < c.options.size(); ++oi) {
        const WeightOption &o = c.options[oi];
        if (o.gain - now.gain > best && o.bytes - now.bytes <= room - used)
          best = o.gain - now.gain, best_c = ci, best_o = oi;
      }
    }
    if (best <= 0) break;
    used += choices[best_c].options[best_o].bytes - choices[best_c].chosen().bytes;
    choices[best_c].taken = best_o;
  }
}

WeightOption summed(WeightOption o) {
  o.bytes = o.form_bytes + o.tile_bytes + o.float_bytes;
  o.gain = o.form_gain + o.tile_gain + o.float_gain;
  return o;
}

namespace {

constexpr double kMinTileLoss = 0.05;

std::string tile_name(const GemmTile &g, int lanes) {
  return std::to_string(g.mr) + "x" + std::to_string(g.nv * lanes);
}

}  // namespace

void add_gemm_options(WeightChoice &c, const WeightOption &base, const GemmSpec &gs0, double macs, const Target &t,
                      WeightStorage st, bool storage_choice, int64_t copy_pixels) {
  const int L = t.f32_lanes();
  GemmSpec gs = gs0;
  gs.mr = gs.nr = 0;  // the target's tiles, whatever was set
  auto packed = [&](const GemmTile &tile, WeightStorage s) {
    GemmSpec q = gs;
    q.mr = tile.mr, q.nr = tile.nv * L;
    return packed_float_weight_bytes(q, t, s);
  };
  auto cost = [&](double score) { return macs / L / std::max(score, 1e-9); };
  // The target's own tile is measured (its tables), the score is not: a
  // narrower tile never counts as faster, and loses at least
  // kMinTileLoss of the GEMM's cost, so that it is taken only where its
  // bytes buy more elsewhere.
  auto loss = [&](double wide, double narrow) {
    return std::max(cost(narrow) - cost(wide), kMinTileLoss * cost(wide));
  };
  struct Tile {
    GemmTile tile;
    double score;
    int64_t bytes;
  };
  double score = 0;
  const GemmTile wide = gemm_table_tile(gs, t, Target::TileKind::Float, 0, &score);
  std::vector<Tile> tiles = {{wide, score, packed(wide, st)}};
  // Narrower tiles, each packing fewer bytes than the one before (a
  // forced tile stays: --gemm-tile, tinyrt-tune's experiments).
  for (int nv = wide.nv - 1; nv >= 1 && !t.tiles_forced; --nv) {
    double s = 0;
    const GemmTile tile = gemm_table_tile(gs, t, Target::TileKind::Float, nv, &s);
    const int64_t bytes = packed(tile, st);
    if (tile.nv >= tiles.back().tile.nv || s <= 0 || bytes >= tiles.back().bytes) continue;
    tiles.push_back({tile, s, bytes});
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    WeightOption o = base;
    o.wide = wide;
    o.tile = i > 0 ? tiles[i].tile : GemmTile{};
    o.tile_bytes = tiles[i].bytes - tiles[0].bytes;
    o.tile_gain = i > 0 ? -loss(tiles[0].score, tiles[i].score) : 0.0;
    o.keep_float = false;
    o.float_bytes = 0, o.float_gain = 0;
    c.options.push_back(summed(o));
    if (!storage_choice || st != WeightStorage::F16) continue;
    o.keep_float = true;
    const int64_t float_bytes = packed(tiles[i].tile, WeightStorage::F32);
    o.float_bytes = float_bytes - tiles[i].bytes;
    const int mr = std::max(1, tiles[i].tile.mr);
    // (An arena copy widens each weight vector once per run instead.)
    const bool copy = copy_pixels > 0 && (copy_pixels + mr - 1) / mr >= kMinCopyTiles;
    o.float_gain = copy ? (double)float_bytes / 4 / L : macs / L / mr;
    c.options.push_back(summed(o));
  }
}

std::vector<WeightChoice> weight_choices(const Program &p, const Target &t, WeightStorage st, bool storage_choice,
                                         const std::set<int> &skip,
                                         const std::function<bool(size_t, int64_t)> &copy_fits) {
  const Graph &g = p.graph;
  struct Layer {
    WeightChoice choice;
    double macs = 0;
    int64_t pixels = 0;
    bool mixed = false;  // read by GEMM and depthwise kernels both (kept as they are)
  };
  std::map<int, Layer> layers;  // by weight value
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    const Kernel &k = p.kernels[ki];
    const GemmSpec &s = k.gemm;
    const bool dw = k.kind == KernelKind::Depthwise;
    if ((k.kind != KernelKind::Gemm && !dw) || s.weight < 0 || s.arena_weights || s.arena_packed ||
        skip.count(s.weight) || g.v(s.weight).dtype != DType::F32 || !g.v(s.weight).is_const())
      continue;
    Layer &l = layers[s.weight];
    if (!l.choice.kernels.empty() && (p.kernels[l.choice.kernels.front()].kind == KernelKind::Depthwise) != dw)
      l.mixed = true;
    l.choice.kernels.push_back(ki);
    const int64_t flops = kernel_flops(k);
    l.macs += flops > 0 ? (double)flops / 2 : 0;
    l.pixels = sat_add(l.pixels, sat_mul(s.batch, sat_mul(s.out_h, s.out_w)));
  }
  std::vector<WeightChoice> out;
  for (auto &[w, l] : layers) {
    WeightChoice &c = l.choice;
    const Kernel &k = p.kernels[c.kernels.front()];
    const GemmSpec &s = k.gemm;
    const WeightStorage ks = packed_storage(k.wino.m, st);
    if (l.mixed) {
      c.options.push_back(WeightOption{});
    } else if (k.kind == KernelKind::Depthwise) {
      c.options.push_back(WeightOption{});
      if (storage_choice && ks == WeightStorage::F16) {
        WeightOption o;
        o.keep_float = true;
        o.float_bytes =
            packed_depthwise_weight_bytes(s, t, WeightStorage::F32) - packed_depthwise_weight_bytes(s, t, ks);
        o.float_gain = l.macs / t.f32_lanes() / std::max(1, t.depthwise_tile(s.k_h, s.k_w));
        c.options.push_back(summed(o));
      }
    } else {
      // A float copy in the arena (one kernel over the weight, as
      // widen_packed_weights makes them) where it fits at that step.
      const bool copy = storage_choice && ks == WeightStorage::F16 && copy_fits && c.kernels.size() == 1 &&
                        copy_fits(c.kernels.front(), packed_float_weight_bytes(s, t, WeightStorage::F32));
      add_gemm_options(c, WeightOption{}, s, l.macs, t, ks, storage_choice, copy ? l.pixels : 0);
    }
    out.push_back(std::move(c));
  }
  return out;
}

void apply_option(const WeightOption &o, const Target &t, GemmSpec &s) {
  if (o.tile.nv > 0) s.mr = o.tile.mr, s.nr = o.tile.nv * t.f32_lanes();
  if (o.keep_float) s.float_weights = true;
}

void report_option(PassContext &c, const Kernel &k, const WeightOption &o) {
  Program &p = c.program;
  const int L = c.target.f32_lanes();
  const std::string node = k.nodes.empty() ? "" : k.nodes.front();
  if (o.tile.nv > 0) {
    p.trades.push_back(
        {"tile", k.label, node, tile_name(o.wide, L), tile_name(o.tile, L), o.tile_bytes, 0, o.tile_gain, 0, 1});
    if (c.log)
      *c.log << "  tile " << k.label << " " << node << ": " << tile_name(o.wide, L) << " -> " << tile_name(o.tile, L)
             << " (pixels x channels), " << o.tile_bytes << " bytes; estimated " << (int64_t)-o.tile_gain
             << " vector instructions more\n";
  }
  if (o.keep_float) {
    p.trades.push_back(
        {"storage", k.label, node, "fp32", "fp32", o.float_bytes, o.float_bytes, o.float_gain, o.float_gain, 1});
    if (c.log)
      *c.log << "  float weights " << k.label << " " << node << ": " << o.float_bytes
             << " bytes more than half, estimated " << (int64_t)o.float_gain << " widening instructions saved\n";
  }
}

}  // namespace tinyrt
