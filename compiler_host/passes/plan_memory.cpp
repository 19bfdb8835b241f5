// plan_memory.cpp — one arena for graph inputs, outputs and intermediates.
// Each buffer is live from the step that writes it to the last step that
// reads it (or a view of it); graph inputs from the start, outputs to the
// end. Buffers are placed greedily, largest first, at the lowest 64-byte
// aligned offset not overlapping any buffer live at the same time. The
// lower bound reported beside it is the peak of simultaneously live bytes.
#include <algorithm>

#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr int64_t kAlign = 64;

struct Buffer {
  int value;
  int64_t bytes;
  int first, last;  // inclusive step range
  int64_t offset = -1;
};

int64_t round_up(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void plan_memory(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  size_t nv = g.values.size();
  p.perm.resize(nv);
  p.storage.assign(nv, {});
  int end = (int)p.kernels.size() + 1;  // kernel i runs at step i + 1

  std::vector<int> first(nv, -1), last(nv, -1);
  for (int v : g.inputs) first[v] = last[v] = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    int t = (int)i + 1;
    for (size_t s = 0; s < k.ins.size(); ++s) {
      if (k.kind == KernelKind::Gemm && (int)s != 0 && k.ins[s] == k.gemm.weight) continue;
      int r = p.root(k.ins[s]);
      last[r] = std::max(last[r], t);
    }
    int o = p.root(k.out);
    if (first[o] < 0) first[o] = t;
    last[o] = std::max(last[o], t);
  }
  for (int o : g.outputs) last[p.root(o)] = end;

  std::vector<Buffer> bufs;
  for (size_t v = 0; v < nv; ++v) {
    if (first[v] < 0 || g.values[v].is_const() || p.alias.count((int)v)) continue;
    bufs.push_back({(int)v, round_up(g.values[v].numel() * dtype_bytes(g.values[v].dtype)), first[v], last[v]});
  }

  // Lower bound: peak live bytes over the steps.
  int64_t bound = 0;
  for (int t = 0; t <= end; ++t) {
    int64_t live = 0;
    for (auto &b : bufs)
      if (b.first <= t && t <= b.last) live += b.bytes;
    bound = std::max(bound, live);
  }

  std::vector<Buffer *> order;
  for (auto &b : bufs) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const Buffer *a, const Buffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
  });
  std::vector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *b : order) {
    std::vector<Buffer *> overlap;
    for (Buffer *q : placed)
      if (q->first <= b->last && b->first <= q->last) overlap.push_back(q);
    std::sort(overlap.begin(), overlap.end(), [](Buffer *x, Buffer *y) { return x->offset < y->offset; });
    int64_t off = 0;
    for (Buffer *q : overlap) {
      if (q->offset >= off + b->bytes) break;
      off = std::max(off, q->offset + q->bytes);
    }
    b->offset = off;
    arena = std::max(arena, off + b->bytes);
    placed.push_back(b);
  }

  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].is_const()) {
      p.storage[v].where = Storage::Where::Const;
      p.storage[v].strides = p.layout_strides((int)v);
    }
  }
  for (auto &b : bufs) {
    Storage &s = p.storage[b.value];
    s.where = Storage::Where::Arena;
    s.offset = b.offset;
    s.strides = p.layout_strides(b.value);
  }
  for (auto &kv : p.alias) {
    int r = p.root(kv.first);
    Storage &s = p.storage[kv.first];
    s = p.storage[r];
    s.strides = row_major_strides(g.v(kv.first).shape);
  }
  p.stats.arena_bytes = arena;
  p.stats.lower_bound_bytes = bound;
  if (c.log)
    *c.log << "  arena " << arena << " bytes, lower bound " << bound << " bytes, " << bufs.size() << " buffers\n";
}

}  // namespace tinyrt
