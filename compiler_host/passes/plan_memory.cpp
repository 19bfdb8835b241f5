// plan_memory.cpp — one arena for graph inputs, outputs and intermediates.
// Each buffer is live from the step that writes it to the last step that
// reads it (or a view of it; a guard's condition: the last step it
// guards); graph inputs from the start, outputs to the end. A kernel writes in place over an input that dies with it when it
// reads that input only at the output's own index (elementwise chains,
// residual adds in convolution epilogues). Buffers are placed greedily
// (64-byte aligned, overlapping no buffer live at the same time) in a few
// orders and by a few policies, and the smallest arena is kept. The lower
// bound reported beside it is the peak of simultaneously live bytes.
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

// Can kernel k (at step t) write its output over input slot s?
bool can_write_over(const Program &p, const Kernel &k, size_t s, const std::vector<int> &last_use,
                    const std::vector<bool> &viewed, int t) {
  const Graph &g = p.graph;
  int v = k.ins[s];
  const Value &in = g.v(v), &out = g.v(k.out);
  if (p.root(v) != v || viewed[v] || in.is_const() || last_use[v] != t || g.is_graph_output(v)) return false;
  for (int gi : g.inputs)
    if (gi == v) return false;  // the application's input stays intact
  if (in.shape != out.shape || dtype_bytes(in.dtype) != dtype_bytes(out.dtype) ||
      p.layout_strides(v) != p.layout_strides(k.out) || p.alias.count(k.out))
    return false;
  // A Winograd output transform reads its residual like a convolution's
  // epilogue; the other kinds without expression (recurrent: reads its
  // inputs at every step; a custom call; the input transform) never.
  bool epilogue = is_scheduled(k.kind) || k.kind == KernelKind::WinogradOut;
  if (!has_expr(k.kind) && !epilogue) return false;
  ExprP e = k.expr;
  if (epilogue) {
    if (s == 0 || k.ins[0] == v) return false;  // the convolution reads other pixels
    e = k.gemm.epilogue;
  }
  // v may sit in several slots (Gemm(y, y, y), ScatterElements(y, i, y)):
  // every read of it must be at the output's own index.
  if (epilogue)
    for (size_t o = 0; o < k.ins.size(); ++o)
      if (o != s && k.ins[o] == v) return false;
  bool identity = true;
  visit(e, [&](const Expr &x) {
    if (x.op == EOp::Load && k.ins[x.id] == v && !is_identity_load(x, x.id, in.shape)) identity = false;
  });
  return identity;
}

}  // namespace

void plan_memory(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  size_t nv = g.values.size();
  p.perm.resize(nv);
  p.storage.assign(nv, {});
  int end = (int)p.kernels.size() + 1;  // kernel i runs at step i + 1

  // Last step reading each value (through itself or a view).
  std::vector<int> last_use(nv, -1);
  std::vector<bool> viewed(nv, false);
  for (auto &kv : p.alias) viewed[p.root(kv.first)] = true;
  // A guarded kernel's step reads its guard's condition byte.
  auto guard_cond = [&](const Kernel &k) { return k.guard < 0 ? -1 : g.guards.at(k.guard).eff; };
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    for (int v : p.kernels[i].ins) last_use[p.root(v)] = std::max(last_use[p.root(v)], (int)i + 1);
    if (int e = guard_cond(p.kernels[i]); e >= 0) last_use[p.root(e)] = std::max(last_use[p.root(e)], (int)i + 1);
  }
  for (int o : g.outputs) last_use[p.root(o)] = end;

  // Buffer owner of each value: itself, its view's root, or the input a
  // kernel wrote over.
  std::vector<int> owner(nv);
  for (size_t v = 0; v < nv; ++v) owner[v] = p.root((int)v);
  int in_place = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    for (size_t s = 0; s < k.ins.size(); ++s)
      if (can_write_over(p, k, s, last_use, viewed, (int)i + 1)) {
        owner[k.out] = owner[k.ins[s]];
        ++in_place;
        break;
      }
  }
  for (size_t v = 0; v < nv; ++v) owner[v] = owner[p.root((int)v)];

  std::vector<int> first(nv, -1), last(nv, -1);
  auto touch = [&](int v, int t) {
    int o = owner[v];
    if (first[o] < 0 || t < first[o]) first[o] = t;
    last[o] = std::max(last[o], t);
  };
  for (int v : g.inputs) touch(v, 0);
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    int t = (int)i + 1;
    for (size_t s = 0; s < k.ins.size(); ++s) {
      if (is_scheduled(k.kind) && (int)s != 0 && k.ins[s] == k.gemm.weight) continue;
      if (!g.v(k.ins[s]).is_const()) touch(k.ins[s], t);
    }
    if (int e = guard_cond(k); e >= 0) touch(e, t);
    if (k.kind != KernelKind::Fail) touch(k.out, t);  // a branch error's placeholder takes no bytes
  }
  for (int o : g.outputs) touch(o, end);

  std::vector<Buffer> bufs;
  for (size_t v = 0; v < nv; ++v) {
    if (first[v] < 0 || owner[v] != (int)v || g.values[v].is_const()) continue;
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

  // Greedy placement: buffers in a given order, each placed by one of
  // three policies among the offsets where it overlaps no placed buffer
  // live at the same time: 0, first fit (the lowest offset); 1, best fit
  // (the smallest gap that fits, else above everything); 2, recent (where
  // it fits without growing the arena, the bytes freed most recently, so
  // that a chain of short-lived large buffers, X -> Winograd's V -> M -> Y,
  // alternates between two places instead of stacking in one and leaving
  // no room for the small value between them). Several orders and policies
  // are tried and the smallest arena kept.
  auto place_recent = [&](const std::vector<Buffer *> &order) {
    std::vector<Buffer *> placed;
    int64_t arena = 0;
    for (Buffer *b : order) {
      std::vector<int64_t> cands = {0};
      for (Buffer *q : placed) cands.push_back(q->offset + q->bytes);
      int64_t pick = -1, pick_recency = -1, lowest = -1;
      for (int64_t off : cands) {
        bool fits = true;
        int64_t recency = -1;
        for (Buffer *q : placed) {
          bool space = q->offset < off + b->bytes && off < q->offset + q->bytes;
          if (!space) continue;
          if (q->first <= b->last && b->first <= q->last) {
            fits = false;
            break;
          }
          if (q->last < b->first) recency = std::max<int64_t>(recency, q->last);
        }
        if (!fits) continue;
        if (lowest < 0 || off < lowest) lowest = off;
        if (off + b->bytes <= arena && recency > pick_recency) pick = off, pick_recency = recency;
      }
      b->offset = pick >= 0 ? pick : lowest;
      arena = std::max(arena, b->offset + b->bytes);
      placed.push_back(b);
    }
    return arena;
  };
  auto place = [&](const std::vector<Buffer *> &order, int policy) {
    if (policy == 2) return place_recent(order);
    bool best_fit = policy == 1;
    std::vector<Buffer *> placed;
    int64_t arena = 0;
    for (Buffer *b : order) {
      std::vector<Buffer *> overlap;
      for (Buffer *q : placed)
        if (q->first <= b->last && b->first <= q->last) overlap.push_back(q);
      std::sort(overlap.begin(), overlap.end(), [](Buffer *x, Buffer *y) { return x->offset < y->offset; });
      int64_t off = -1, gap = -1, end = 0;
      for (Buffer *q : overlap) {
        int64_t free = q->offset - end;
        if (free >= b->bytes && (off < 0 || (best_fit && free < gap))) {
          off = end;
          gap = free;
          if (!best_fit) break;
        }
        end = std::max(end, q->offset + q->bytes);
      }
      if (off < 0) off = end;
      b->offset = off;
      arena = std::max(arena, off + b->bytes);
      placed.push_back(b);
    }
    return arena;
  };
  using Less = bool (*)(const Buffer *, const Buffer *);
  const Less orders[] = {
      [](const Buffer *a, const Buffer *b) {  // largest first
        return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
      },
      [](const Buffer *a, const Buffer *b) {  // largest area (bytes x steps) first
        int64_t x = a->bytes * (a->last - a->first + 1), y = b->bytes * (b->last - b->first + 1);
        return x != y ? x > y : a->first < b->first;
      },
      [](const Buffer *a, const Buffer *b) {  // longest-lived first
        int da = a->last - a->first, db = b->last - b->first;
        return da != db ? da > db : a->bytes > b->bytes;
      },
      [](const Buffer *a, const Buffer *b) {  // in order of first use
        return a->first != b->first ? a->first < b->first : a->bytes > b->bytes;
      },
  };
  int64_t arena = -1;
  std::vector<int64_t> best_offsets;
  constexpr size_t kMaxTriedBuffers = 300;
  for (int policy : {0, 1, 2})
    for (Less less : orders) {
      // Large plans (long chains of unfused nodes) take the first order only:
      // each placement is quadratic in the buffers.
      if (arena == round_up(bound) || (arena >= 0 && bufs.size() > kMaxTriedBuffers)) break;
      std::vector<Buffer *> order;
      for (auto &b : bufs) order.push_back(&b);
      std::stable_sort(order.begin(), order.end(), less);
      int64_t a = place(order, policy);
      if (arena >= 0 && a >= arena) continue;
      arena = a;
      best_offsets.clear();
      for (auto &b : bufs) best_offsets.push_back(b.offset);
    }
  for (size_t i = 0; i < bufs.size(); ++i) bufs[i].offset = best_offsets[i];

  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].is_const()) {
      p.storage[v].where = Storage::Where::Const;
      p.storage[v].strides = p.layout_strides((int)v);
    }
  }
  std::vector<int64_t> offset_of(nv, -1);
  for (auto &b : bufs) offset_of[b.value] = b.offset;
  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].is_const() || p.alias.count((int)v) || offset_of[owner[v]] < 0) continue;
    Storage &s = p.storage[v];
    s.where = Storage::Where::Arena;
    s.offset = offset_of[owner[v]];
    s.strides = p.layout_strides((int)v);
  }
  for (auto &kv : p.alias) {
    int r = p.root(kv.first);
    Storage &s = p.storage[kv.first];
    s = p.storage[r];
    s.strides = row_major_strides(g.v(kv.first).shape);
  }
  // Custom-op calls store their status in one 64-byte slot at the end of
  // the arena (always live: it counts in the lower bound too).
  p.stats.call_status_offset = -1;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Call) {
      p.stats.call_status_offset = round_up(arena);
      arena = p.stats.call_status_offset + 64;
      bound += 64;
      break;
    }
  int64_t cap = g.limits.max_arena_bytes;
  if (c.target.ptr_bytes == 4) cap = std::min<int64_t>(cap, int64_t(1) << 31);  // addresses are 32-bit
  if (arena > cap)
    fail_unsupported("the memory plan needs an arena of " + std::to_string(arena) + " bytes, more than the limit of " +
                     std::to_string(cap) + " bytes" +
                     (c.target.ptr_bytes == 4 ? " on a 32-bit target" : " (raise it with --max-arena-bytes)"));
  p.stats.arena_bytes = arena;
  p.stats.lower_bound_bytes = bound;
  p.stats.buffers.clear();
  for (auto &b : bufs) p.stats.buffers.push_back({b.value, b.offset, b.bytes, b.first, b.last});
  if (c.log)
    *c.log << "  arena " << arena << " bytes, lower bound " << bound << " bytes, " << bufs.size() << " buffers, "
           << in_place << " written in place\n";
}

}  // namespace tinyrt
