#include "passes/memory_planner.h"

#include <algorithm>

namespace tinyrt {

namespace {

struct Buffer {
  int64_t bytes;
  int first, last;
  int64_t offset = -1;
};

bool live_together(const Buffer *a, const Buffer *b) { return a->first <= b->last && b->first <= a->last; }

// Policy 2: where the buffer fits without growing the arena, the place
// whose bytes were freed most recently; else the lowest place it fits.
int64_t place_recent(const std::vector<Buffer *> &order) {
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
        if (live_together(q, b)) {
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
}

// Policies 0 (first fit: the lowest gap) and 1 (best fit: the smallest gap
// that fits), else above everything live at the same time.
int64_t place_fit(const std::vector<Buffer *> &order, bool best_fit) {
  std::vector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *b : order) {
    std::vector<Buffer *> overlap;
    for (Buffer *q : placed)
      if (live_together(q, b)) overlap.push_back(q);
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
}

// Plans of at most this many buffers also try kRandomOrders random orders.
constexpr size_t kRandomOrdersMaxBuffers = 64;
constexpr int kRandomOrders = 256;

using Less = bool (*)(const Buffer *, const Buffer *);
const Less kOrders[] = {
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

}  // namespace

BufferPlan plan_buffers(const std::vector<BufferRequest> &requests, int64_t align, size_t max_tried) {
  auto round_up = [&](int64_t x) { return align_up(x, align); };
  std::vector<Buffer> bufs;
  int lo = 0, hi = -1;
  for (const BufferRequest &r : requests) {
    bufs.push_back({round_up(r.bytes), r.first, r.last});
    lo = std::min(lo, r.first);
    hi = std::max(hi, r.last);
  }
  BufferPlan plan;
  for (int t = lo; t <= hi; ++t) {
    int64_t live = 0;
    for (auto &b : bufs)
      if (b.first <= t && t <= b.last) live += b.bytes;
    plan.lower_bound = std::max(plan.lower_bound, live);
  }
  int64_t arena = -1;
  std::vector<int64_t> best_offsets;
  // The placement just made, if it is the smallest so far.
  auto keep = [&](int64_t a) {
    if (arena >= 0 && a >= arena) return;
    arena = a;
    best_offsets.clear();
    for (auto &b : bufs) best_offsets.push_back(b.offset);
  };
  for (int policy : {0, 1, 2})
    for (Less less : kOrders) {
      if (arena == round_up(plan.lower_bound) || (arena >= 0 && bufs.size() > max_tried)) break;
      std::vector<Buffer *> order;
      for (auto &b : bufs) order.push_back(&b);
      std::stable_sort(order.begin(), order.end(), less);
      keep(policy == 2 ? place_recent(order) : place_fit(order, policy == 1));
    }
  // Few buffers: orders drawn at random too (a fixed seed: the same plan
  // on every host), until one meets the lower bound.
  if (bufs.size() <= std::min(kRandomOrdersMaxBuffers, max_tried)) {
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    auto next = [&seed]() {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      return seed;
    };
    std::vector<Buffer *> order;
    for (auto &b : bufs) order.push_back(&b);
    for (int k = 0; k < kRandomOrders && arena != round_up(plan.lower_bound); ++k) {
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[next() % i]);
      for (bool best_fit : {false, true}) keep(place_fit(order, best_fit));
    }
  }
  plan.arena = std::max<int64_t>(arena, 0);
  plan.offsets = best_offsets;
  for (auto &b : bufs) plan.bytes.push_back(b.bytes);
  return plan;
}

}  // namespace tinyrt
