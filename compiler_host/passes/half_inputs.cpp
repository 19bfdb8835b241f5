// half_inputs.cpp — --precision fp16 (targets with half arithmetic): the
// tensors that only half products read are stored as half, and depthwise
// convolutions over such a tensor multiply in half.
//
// A half GEMM (GemmSpec::half, pack_weights) rounds its float input to half
// as it loads it, 8 channels at a time (two loads, fcvtn, fcvtn2). Where
// the producer stores the tensor as half instead (its store narrows: one
// fcvtn per 4 channels), the GEMM loads 8 channels in one instruction, the
// values it multiplies are the same, and the tensor takes half the arena.
// A depthwise convolution uses each input vector for at most k taps, so
// rounding a float input as it loads it would cost about what the halved
// multiplies save; over a half input it loads 8 channels a vector and
// multiplies them by the half weights (fmla .8h): half the loads and
// multiplies of float. Its sums run in half over one window (k_h * k_w <=
// Target::half_chunk products), or over each window row of a longer
// window, each row's sum then added into float accumulators; the epilogue
// runs in float (codegen/depthwise_emitter.cpp).
//
// A tensor X is stored as half when it is an intermediate with fixed sizes
// that kernels write through stores that narrow to its type (a
// GEMM, a loop kernel, a depthwise convolution, a Winograd output
// transform; the input transform of F(2,3), whose V the grouped half GEMM
// reads; a convolution in bands of tile rows writes its V band after
// band), neither a
// view nor viewed, and every kernel that reads it reads it as its input
// (slot 0; its own epilogue may read it too, as half) and multiplies in
// half: a GEMM that pack_weights will make half (predicted here: the
// conditions of pack_weights' computes_in_half that do not depend on the
// tile, which under --precision fp16 is whole half vectors; pack_weights
// checks that it holds), or a float depthwise convolution (channels-last,
// weights within half's range, window rows of at most half_chunk taps),
// which this pass then marks half. Every store narrows to its value's type,
// so the producer's definition stays as it is.
#include <algorithm>
#include <map>

#include "passes/pass.h"

namespace tinyrt {

namespace {

// Whether constant float weight w packs as half (add_float_weights), once
// per weight (a Winograd layer's bands share theirs).
struct HalfWeights {
  const Graph &g;
  std::map<int, bool> known;
  bool operator()(int w) {
    if (w < 0) return false;  // (run-time weights)
    auto it = known.find(w);
    if (it != known.end()) return it->second;
    const Value &v = g.v(w);
    bool fits = v.is_const() && dtype_is_float(v.dtype);
    for (int64_t i = 0; fits && i < v.numel(); ++i) fits = in_half_range(v.data->get_f(i));
    return known[w] = fits;
  }
};

// Kernel k multiplies its input in half once X is stored as half.
bool half_reader(const Program &p, const Kernel &k, const Target &t, HalfWeights &half_weights) {
  const GemmSpec &s = k.gemm;
  if (k.kind == KernelKind::Gemm)  // pack_weights' computes_in_half, its tile aside
    return half_gemm_kind(p, k, t, Precision::F16) && t.tile_nv_step == 2 &&
           (s.nr == 0 || s.nr % t.half_lanes() == 0) && s.in_c / s.groups >= t.half_lanes() && half_weights(s.weight);
  if (k.kind != KernelKind::Depthwise || p.graph.v(k.ins[0]).is_dynamic() || p.graph.v(k.out).is_dynamic())
    return false;
  // Depthwise: channels-last and dense, as pack_weights keeps it.
  return s.k_w <= t.half_chunk && p.layout_strides(k.ins[0])[(size_t)s.in_axis[1]] == 1 &&
         p.layout_strides(k.out)[(size_t)s.out_axis[1]] == 1 && half_weights(s.weight);
}

// Kernel k's stores narrow to its output's type: an expression store, or
// a float Winograd input transform that does not read back what it stores
// (one pass: Target::winograd_two_pass).
bool narrows_its_stores(const Program &p, const Kernel &k, const Target &t) {
  if (k.kind == KernelKind::WinogradIn)
    return p.graph.v(k.ins[0]).dtype == DType::F32 && !t.winograd_two_pass(k.wino.m);
  return k.kind == KernelKind::Gemm || k.kind == KernelKind::Loop || k.kind == KernelKind::Depthwise ||
         k.kind == KernelKind::WinogradOut;
}

}  // namespace

void half_inputs(PassContext &c, const PackOptions &o) {
  Program &p = c.program;
  Graph &g = p.graph;
  if (o.precision != Precision::F16 || !c.target.half_arith) return;
  const size_t nv = g.values.size();
  std::vector<bool> viewed(nv, false);
  for (auto &kv : p.alias) viewed[(size_t)kv.first] = viewed[(size_t)p.root(kv.first)] = true;
  // Each value's writers and how it is read: by kernels that can take it
  // as half (their input, slot 0), or otherwise.
  std::vector<std::vector<size_t>> writers(nv), readers(nv);
  std::vector<bool> other(nv, false);
  HalfWeights half_weights{g, {}};
  for (int v : g.inputs) other[(size_t)v] = true;
  for (int v : g.outputs) other[(size_t)p.root(v)] = true;
  for (size_t j = 0; j < p.kernels.size(); ++j) {
    const Kernel &k = p.kernels[j];
    writers[(size_t)k.out].push_back(j);
    for (int o2 : k.call.outs) other[(size_t)o2] = true;
    if (k.guard >= 0) other[(size_t)g.guards.at(k.guard).eff] = true;
    const bool takes = !k.ins.empty() && half_reader(p, k, c.target, half_weights);
    for (size_t s = 0; s < k.ins.size(); ++s) {
      const size_t v = (size_t)k.ins[s];
      if (s == 0 && takes)
        readers[v].push_back(j);
      else if (!(takes && (int)v == k.ins[0]))  // (its epilogue reading its input)
        other[v] = true;
    }
  }
  int stored = 0, depthwise = 0;
  int64_t saved = 0;
  for (size_t v = 0; v < nv; ++v) {
    const Value &x = g.values[v];
    if (readers[v].empty() || other[v] || viewed[v] || x.is_const() || x.dtype != DType::F32 || x.is_dynamic() ||
        writers[v].empty() || !std::all_of(writers[v].begin(), writers[v].end(), [&](size_t w) {
          return narrows_its_stores(p, p.kernels[w], c.target);
        }))
      continue;
    g.values[v].dtype = DType::F16;
    ++stored;
    saved += x.numel() * 2;
    for (size_t r : readers[v]) {
      Kernel &k = p.kernels[r];
      // The definition reads X as half, widened.
      k.expr = rewrite(k.expr, [](const ExprP &e) -> ExprP {
        if (e->op != EOp::Load || e->id != 0 || e->type != DType::F32) return nullptr;
        return cast(load(0, DType::F16, e->a), DType::F32);
      });
      if (k.kind == KernelKind::Depthwise && !k.gemm.half) {
        k.gemm.half = true;
        ++depthwise;
      }
    }
  }
  if (c.log && stored)
    *c.log << "  precision fp16: " << stored << " tensors only half products read stored as half (" << saved
           << " bytes less), " << depthwise << " depthwise convolutions multiply in half\n";
}

}  // namespace tinyrt
