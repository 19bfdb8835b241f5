// span_rows.cpp — register tiles across output rows.
//
// A convolution's GEMM tiles follow output rows by default: a row of 7 or
// 14 pixels under a tile of 6 ends in a tile of 1 or 2, whose few
// accumulators leave the FMA units waiting on their latency, and a row of
// 7 under 4x3 wastes one pixel in 8. On targets that ask for it
// (Target::span_min_ic) a float GEMM over windows takes its pixels in
// order across rows instead (GemmSpec::span): only the layer's very last
// tile is short, every pixel forms its own window pointers per tap (as a
// border tile does), and the tile is chosen as for one long row. Layers
// with few input channels per group keep row tiles, whose interior tiles
// share one pointer per tap: there the per-tap pointer arithmetic is not
// paid back by an inner loop of many channels.
//
// Before winograd and the weights budget's passes, so that every estimate
// of a direct GEMM and its packed bytes sees the tile it will have.
#include "passes/pass.h"

namespace tinyrt {

void span_rows(PassContext &c) {
  Program &p = c.program;
  const Graph &g = p.graph;
  const Target &t = c.target;
  if (t.span_min_ic <= 0 || t.tiles_forced) return;
  int spans = 0;
  for (Kernel &k : p.kernels) {
    GemmSpec &s = k.gemm;
    if (k.kind != KernelKind::Gemm || s.arena_weights || s.arena_packed || s.k_run || s.weight < 0) continue;
    if (g.v(k.out).is_dynamic() || g.v(k.ins.at(0)).is_dynamic()) continue;
    const GemmTileShape ts = gemm_tile_shape(s);
    if (ts.linear || ts.ic < t.span_min_ic || s.batch * s.out_h < 2) continue;
    s.span = true;
    ++spans;
  }
  if (c.log && spans) *c.log << "span_rows: " << spans << " GEMM layers tile their pixels across output rows\n";
}

}  // namespace tinyrt
