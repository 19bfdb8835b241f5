// memory_planner.h — the arena planner behind plan_memory: buffers with a
// size and a live range of steps in, offsets in one arena out, with no two
// buffers live at the same step overlapping. It knows nothing of kernels or
// values, so that tests can hand it made-up buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyrt {

// A buffer of `bytes` live from step `first` to step `last` (inclusive).
struct BufferRequest {
  int64_t bytes;
  int first, last;
};

struct BufferPlan {
  std::vector<int64_t> offsets;  // per request, a multiple of the alignment
  std::vector<int64_t> bytes;    // per request, rounded up to the alignment
  int64_t arena = 0;             // bytes the offsets span
  int64_t lower_bound = 0;       // the most bytes live at one step: no plan needs less
};

// x rounded up to a multiple of `align`.
inline int64_t align_up(int64_t x, int64_t align) { return (x + align - 1) / align * align; }

// Greedy placement: the buffers (sizes rounded up to `align`) in a few
// orders (largest, largest area, longest-lived, first used), each placed by
// one of three policies among the offsets where it overlaps no placed
// buffer live at the same time — first fit, best fit, or where the bytes
// were freed most recently (which keeps a chain of short-lived large
// buffers, X -> Winograd's V -> M -> Y, alternating between two places) —
// and the smallest arena kept; up to 64 buffers, then 256 orders drawn at
// random (a fixed seed), first and best fit (the recurrent zoo models'
// arenas 1.167x their bound with the fixed orders, 1.000x with these). A
// plan that meets the lower bound ends the search; more than `max_tried`
// buffers try the first order only (each placement is quadratic in the
// buffers).
BufferPlan plan_buffers(const std::vector<BufferRequest> &requests, int64_t align = 64, size_t max_tried = 300);

}  // namespace tinyrt
