// keep_float_weights.cpp — under --weights fp16, the weights budget's room
// keeps float the GEMM and depthwise weights whose widening costs the most
// per byte.
//
// A GEMM over half weights widens each weight vector as it loads it
// (vcvtph2ps, fcvtl), once per register tile of mr pixels: about one
// instruction per mr FMAs, whatever the layer. A depthwise convolution
// widens each tap's weight vector once per tile of mr pixels too, and its
// weights are few (a 3x3 layer of 64 channels adds 1152 bytes as float, a
// 1x1 GEMM layer of 64 x 64 8192). What that costs depends on
// the core: on Zen 4 nothing measurable (the conversions run beside the
// FMAs once the broadcasts are integer loads, integer_broadcasts), on
// Intel's AVX-512 cores 1.2-1.4x a compute-bound layer's time
// (`vcvtph2ps zmm` takes a port the FMAs need: bench/broadcast_pipes.c),
// on NEON an instruction per float vector. Per byte the cost is highest
// where few weights serve many pixels: an RGB first layer (squeezenet1_1:
// 1.40x its float time over 3.5 KB of half weights), the 1x1 layers over
// large images. The budget under --weights fp16 (1.1x the float plan's
// weights as half by default) leaves room once winograd has chosen its
// forms and narrow_tiles has fit the tiles: this pass spends it, the
// layers with the most conversions saved per byte first (a greedy
// knapsack: each layer's gain is proportional to its multiply-adds, its
// cost to its weights), taking a layer only where its float weights fit
// the room left. Weights stay within the budget by construction.
// Not under --precision fp16 (its GEMMs multiply the half weights
// themselves). Each layer kept float is a memory trade ("storage") in -v
// and the JSON.
#include <algorithm>
#include <map>

#include "passes/pass.h"

namespace tinyrt {

void keep_float_weights(PassContext &c, const PackOptions &o) {
  Program &p = c.program;
  const Graph &g = p.graph;
  const Target &t = c.target;
  if (o.weights != WeightStorage::F16 || o.precision != Precision::F32) return;
  int64_t room = p.budgets.weights - (p.budgets.base_weights + p.budgets.traded_weights);
  // The default budget is 1.1x the float plan as half, so that the half
  // weights stay within 0.55x the float compile's. Where the float plan
  // (winograd's; without Winograd, the weights as float) is over the float
  // default budget, its packing pads so much that the float compile
  // narrows its tiles to fit (narrow_tiles): its weights are less than the
  // plan's, and the room would take the half weights past 0.55x of them,
  // so none is spent (unet_small on x86-64-avx512-vnni).
  const Limits &lim = g.limits;
  const int64_t float_plan = lim.weights_budget_given() ? 0
                             : p.budgets.float_plan > 0 ? p.budgets.float_plan
                                                        : weights_read(p, t, WeightStorage::F32, o.float_recurrent);
  if (float_plan > lim.weights_budget()) {
    if (c.log)
      *c.log << "  weights fp16: the float plan's " << float_plan << " bytes are over the float default budget of "
             << lim.weights_budget() << " (the float compile narrows its tiles): no room spent on float weights\n";
    return;
  }
  // A float GEMM or depthwise weight stored as half, and the kernels that
  // multiply by it (a Winograd layer's bands share one).
  struct Layer {
    std::vector<size_t> kernels;
    double gain = 0;    // estimated widening instructions saved
    int64_t bytes = 0;  // bytes its float storage adds
  };
  std::map<int, Layer> layers;
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    const Kernel &k = p.kernels[ki];
    const GemmSpec &s = k.gemm;
    const bool dw = k.kind == KernelKind::Depthwise;
    if ((k.kind != KernelKind::Gemm && !dw) || s.weight < 0 || s.arena_weights || s.arena_packed ||
        g.v(s.weight).dtype != DType::F32 || !g.v(s.weight).is_const() ||
        gemm_storage(k, o.weights) != WeightStorage::F16)
      continue;
    auto packed = [&](WeightStorage st) {
      return dw ? packed_depthwise_weight_bytes(s, t, st) : packed_float_weight_bytes(s, t, st);
    };
    Layer &l = layers[s.weight];
    if (l.kernels.empty()) l.bytes = packed(WeightStorage::F32) - packed(WeightStorage::F16);
    l.kernels.push_back(ki);
    const int64_t flops = kernel_flops(k);
    // (pack_weights' tiles: depthwise_tile's pixels, or the GEMM's tile.)
    const int mr = std::max(1, dw ? t.depthwise_tile(s.k_h, s.k_w) : float_gemm_tile(s, t).mr);
    l.gain += flops > 0 ? (double)flops / 2 / t.f32_lanes() / mr : 0;
  }
  std::vector<std::pair<int, Layer *>> order;
  for (auto &[w, l] : layers)
    if (l.bytes > 0 && l.gain > 0) order.push_back({w, &l});
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return a.second->gain / (double)a.second->bytes > b.second->gain / (double)b.second->bytes;
  });
  int kept = 0;
  int64_t added = 0;
  for (const auto &[w, l] : order) {
    if (l->bytes > room) continue;
    room -= l->bytes;
    added += l->bytes;
    ++kept;
    for (size_t ki : l->kernels) p.kernels[ki].gemm.float_weights = true;
    const Kernel &k = p.kernels[l->kernels.front()];
    p.trades.push_back({"storage", k.label, k.nodes.empty() ? "" : k.nodes.front(), "fp32", "fp32", l->bytes, l->bytes,
                        l->gain, l->gain, 1});
    if (c.log)
      *c.log << "  float weights " << k.label << " " << (k.nodes.empty() ? "" : k.nodes.front()) << ": " << l->bytes
             << " bytes more than half, estimated " << (int64_t)l->gain << " widening instructions saved\n";
  }
  p.budgets.traded_weights += added;
  if (c.log && !layers.empty())
    *c.log << "  weights fp16: " << kept << " of " << layers.size()
           << " GEMM and depthwise weights kept float in the weights budget's room (" << added << " bytes; " << room
           << " bytes of room left)\n";
}

}  // namespace tinyrt
