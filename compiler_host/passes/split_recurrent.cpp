// split_recurrent.cpp — a float recurrent layer whose steps are large
// splits each step's hidden units into parts that threads share
// (RecurrentSpec::parts; codegen/recurrent_emitter.cpp): the time loop is
// sequential, but within a step the parts are independent, so a layer of
// 256 LSTM units runs on every thread of the pool instead of one.
//
// The parts of a direction share counters (per part the steps claimed, and
// the parts done; each on its own 64-byte line) in an int32 value that a
// loop kernel inserted just before the layer zeroes at every run; the
// layer reads it as its last slot and updates it atomically. Parts are
// whole groups of the kernel's vectors of units (the last part also takes
// the units after the last full group), at most kMaxParts, and only as
// many as keep kMinPartMacs multiply-adds per part per step, so the
// synchronization of each step (an atomic compare-exchange per part, a
// count, a wait) stays small against the work.
//
// Not split: int8 layers (every step first quantizes the whole state) and
// GRU without linear_before_reset (two passes per step over all units).
#include "passes/pass.h"

namespace tinyrt {

namespace {

// Measured on x86 (AVX-512, 2 threads): lstm256 (2 layers, 256 units) 2.1
// ms on one thread, 0.93-0.96 ms with 2 parts, 1.29-1.31 ms with 4 (each
// thread then alternates between parts); 2 parts of a 128-unit LSTM 0.232
// -> 0.219 ms, of a 128-unit GRU (49152 multiply-adds a step) 0.166 ->
// 0.181 ms, hence kMinPartMacs.
constexpr int64_t kMaxParts = 2;
constexpr int64_t kMinPartMacs = 32768;

int64_t choose_parts(const RecurrentSpec &r, int lanes) {
  if (r.r_scale >= 0 || (r.cell == CellKind::GRU && !r.linear_before_reset)) return 1;
  int64_t groups = (r.H / lanes) / r.vectors;
  int64_t macs = (int64_t)r.G * r.H * r.H * r.B;
  return std::max<int64_t>(1, std::min({kMaxParts, groups, macs / kMinPartMacs}));
}

}  // namespace

void split_recurrent(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  std::vector<Kernel> out;
  int split = 0;
  for (Kernel &k : p.kernels) {
    if (k.kind == KernelKind::Recurrent) {
      RecurrentSpec &r = k.rnn;
      r.parts = (int)choose_parts(r, c.target.f32_lanes());
      if (r.parts > 1) {
        int sync = g.add_value(g.fresh_name(g.v(k.out).name + "_sync"), DType::I32, {r.sync_words()});
        Kernel z;
        z.out = sync;
        z.expr = cst(DType::I32, 0);
        z.nodes = k.nodes;
        z.label = k.label + ".sync";
        z.guard = k.guard;
        out.push_back(std::move(z));
        r.sync = (int)k.ins.size();
        k.ins.push_back(sync);
        ++split;
        if (c.log)
          *c.log << "    " << k.label << " (" << g.v(k.out).name << "): each step in " << r.parts
                 << " parts of the hidden units\n";
      }
    }
    out.push_back(std::move(k));
  }
  p.kernels = std::move(out);
  p.perm.resize(g.values.size());
  if (c.log) *c.log << "  " << split << " recurrent layers split across threads\n";
}

}  // namespace tinyrt
