// narrow_tiles.cpp — the weights budget's last resort: narrower GEMM
// tiles where the packed weights are still over it.
//
// pack_weights pads each float GEMM's output channels to its register
// tile's channel columns: under AVX-512's 16-lane tiles of up to 4 vectors
// a 16-channel layer packs as 32 or 64, so a model of few channels can be
// over the budget (1.1x its own weights by default) before any
// speed-for-memory transform. After winograd has chosen its forms within
// the budget, while the weights (as pack_weights will pack them: the
// budget's accounting, Program::budgets) are over it, this pass gives a
// GEMM weight a tile of fewer channel vectors, the best of them by
// Target::gemm_tile's rules
// (`max_nv`), choosing among all GEMM weights the narrowing that loses the
// fewest estimated instructions per byte it saves, until the weights fit
// or no narrowing saves bytes. The tile is set in the GemmSpec (mr, nr),
// which pack_weights keeps; every kernel over the weight (a Winograd
// layer's bands) takes it. Each narrowing is a memory trade ("tile") in
// `-v` and the JSON. A forced tile (--gemm-tile) is not narrowed.
#include <algorithm>
#include <map>

#include "passes/pass.h"

namespace tinyrt {

namespace {

// A float GEMM weight and the kernels that multiply by it.
struct Layer {
  std::vector<size_t> kernels;
  double macs = 0;  // multiply-adds of all of them
};

// The tile of layer `l` by its shape, with at most `max_nv` channel
// vectors (0: any), as its first kernel chooses it, and its score.
GemmTile tile_of(const Program &p, const Target &t, const Layer &l, int max_nv, double *score) {
  return gemm_table_tile(p.kernels[l.kernels.front()].gemm, t, Target::TileKind::Float, max_nv, score);
}

std::string tile_name(const GemmTile &g, int lanes) {
  return std::to_string(g.mr) + "x" + std::to_string(g.nv * lanes);
}

}  // namespace

void narrow_tiles(PassContext &c, const PackOptions &o) {
  Program &p = c.program;
  const Graph &g = p.graph;
  const Target &t = c.target;
  const int L = t.f32_lanes();
  int64_t weights = p.budgets.base_weights + p.budgets.traded_weights;
  if (t.tiles_forced || weights <= p.budgets.weights) return;
  std::map<int, Layer> layers;  // by weight value
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    const Kernel &k = p.kernels[ki];
    const GemmSpec &s = k.gemm;
    if (k.kind != KernelKind::Gemm || s.weight < 0 || s.arena_weights || s.arena_packed ||
        g.v(s.weight).dtype != DType::F32 || !g.v(s.weight).is_const())
      continue;
    Layer &l = layers[s.weight];
    l.kernels.push_back(ki);
    const int64_t flops = kernel_flops(k);
    l.macs += flops > 0 ? (double)flops / 2 : 0;
  }
  // The current tile of each layer and its cost (vector instructions).
  struct Current {
    GemmTile tile;
    double cost;
    int64_t bytes;
    GemmTile wanted;  // the target's own tile, and its cost and bytes
    double wanted_cost;
    int64_t wanted_bytes;
  };
  std::map<int, Current> cur;
  auto bytes_with = [&](const Layer &l, const GemmTile &tile) {
    const Kernel &k = p.kernels[l.kernels.front()];
    GemmSpec s = k.gemm;
    s.mr = tile.mr, s.nr = tile.nv * L;
    return packed_float_weight_bytes(s, t, gemm_storage(k, o.weights));
  };
  for (const auto &[w, l] : layers) {
    double score = 0;
    GemmTile tile = tile_of(p, t, l, 0, &score);
    const double cost = l.macs / L / std::max(score, 1e-9);
    const int64_t bytes = bytes_with(l, tile);
    cur[w] = {tile, cost, bytes, tile, cost, bytes};
  }
  const int64_t before = weights;
  int narrowed = 0;
  while (weights > p.budgets.weights) {
    // The narrowing with the least loss per byte saved.
    int best_w = -1;
    GemmTile best_tile{};
    double best_ratio = 0, best_cost = 0;
    int64_t best_bytes = 0;
    for (const auto &[w, l] : layers) {
      const Current &now = cur[w];
      for (int nv = now.tile.nv - 1; nv >= 1; --nv) {
        double score = 0;
        GemmTile tile = tile_of(p, t, l, nv, &score);
        const int64_t bytes = bytes_with(l, tile);
        if (tile.nv >= now.tile.nv || bytes >= now.bytes || score <= 0) continue;
        const double cost = l.macs / L / score;
        const double ratio = (cost - now.cost) / (double)(now.bytes - bytes);
        if (best_w < 0 || ratio < best_ratio)
          best_w = w, best_tile = tile, best_ratio = ratio, best_cost = cost, best_bytes = bytes;
      }
    }
    if (best_w < 0) break;
    Current &now = cur[best_w];
    weights -= now.bytes - best_bytes;
    now.tile = best_tile, now.cost = best_cost, now.bytes = best_bytes;
    for (size_t ki : layers[best_w].kernels) {
      p.kernels[ki].gemm.mr = best_tile.mr;
      p.kernels[ki].gemm.nr = best_tile.nv * L;
    }
    ++narrowed;
  }
  for (const auto &[w, now] : cur) {
    if (now.tile.nv == now.wanted.nv && now.tile.mr == now.wanted.mr) continue;
    const Kernel &k = p.kernels[layers[w].kernels.front()];
    const int64_t bytes = now.bytes - now.wanted_bytes;
    p.budgets.traded_weights += bytes;
    p.trades.push_back({"tile", k.label, k.nodes.empty() ? "" : k.nodes.front(), tile_name(now.wanted, L),
                        tile_name(now.tile, L), bytes, 0, now.wanted_cost - now.cost, 0, 1});
    if (c.log)
      *c.log << "  tile " << k.label << " " << (k.nodes.empty() ? "" : k.nodes.front()) << ": "
             << tile_name(now.wanted, L) << " -> " << tile_name(now.tile, L) << " (pixels x channels), " << bytes
             << " bytes; estimated vector instructions " << (int64_t)now.wanted_cost << " -> " << (int64_t)now.cost
             << "\n";
  }
  if (c.log)
    *c.log << "  weights " << before << " bytes as packed, over the budget of " << p.budgets.weights << ": " << narrowed
           << " tiles narrowed, " << weights << " bytes"
           << (weights > p.budgets.weights ? " (no narrower tile saves more)" : "") << "\n";
}

}  // namespace tinyrt
