// passes/memory_planner.cpp on made-up buffers: no two buffers live at one
// step overlap, offsets are aligned, the arena covers every buffer, and the
// plans the greedy orders should find are found.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "passes/memory_planner.h"

using namespace tinyrt;

namespace {

// The invariants of any plan, whatever the buffers.
void expect_valid(const std::vector<BufferRequest> &req, const BufferPlan &plan, int64_t align) {
  ASSERT_EQ(plan.offsets.size(), req.size());
  ASSERT_EQ(plan.bytes.size(), req.size());
  int64_t peak = 0;
  int hi = 0;
  for (auto &r : req) hi = std::max(hi, r.last);
  for (int t = 0; t <= hi; ++t) {
    int64_t live = 0;
    for (size_t i = 0; i < req.size(); ++i)
      if (req[i].first <= t && t <= req[i].last) live += plan.bytes[i];
    peak = std::max(peak, live);
  }
  EXPECT_EQ(plan.lower_bound, peak);
  EXPECT_GE(plan.arena, plan.lower_bound);
  for (size_t i = 0; i < req.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % align, 0) << "buffer " << i;
    EXPECT_GE(plan.bytes[i], req[i].bytes);
    EXPECT_LT(plan.bytes[i], req[i].bytes + align);
    EXPECT_GE(plan.offsets[i], 0);
    EXPECT_LE(plan.offsets[i] + plan.bytes[i], plan.arena) << "buffer " << i;
    for (size_t j = 0; j < i; ++j) {
      bool together = req[i].first <= req[j].last && req[j].first <= req[i].last;
      bool disjoint =
          plan.offsets[i] + plan.bytes[i] <= plan.offsets[j] || plan.offsets[j] + plan.bytes[j] <= plan.offsets[i];
      EXPECT_TRUE(!together || disjoint) << "buffers " << j << " and " << i << " live together and overlap";
    }
  }
}

TEST(MemoryPlanner, NoBuffersNeedNoArena) {
  BufferPlan plan = plan_buffers({});
  EXPECT_EQ(plan.arena, 0);
  EXPECT_EQ(plan.lower_bound, 0);
}

TEST(MemoryPlanner, SizesRoundUpToTheAlignment) {
  std::vector<BufferRequest> req = {{1, 0, 1}, {65, 0, 1}, {64, 0, 1}};
  BufferPlan plan = plan_buffers(req, 64);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.bytes, (std::vector<int64_t>{64, 128, 64}));
  EXPECT_EQ(plan.arena, 256);
}

TEST(MemoryPlanner, AChainReusesTwoPlaces) {
  // x -> a -> b -> c -> d, each read only by the next step: two buffers
  // live at a time, so two places suffice.
  std::vector<BufferRequest> req;
  for (int i = 0; i < 5; ++i) req.push_back({1024, i, i + 1});
  BufferPlan plan = plan_buffers(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.lower_bound, 2048);
  EXPECT_EQ(plan.arena, 2048);
}

TEST(MemoryPlanner, ASmallValueBetweenLargeOnesFitsBeside) {
  // Winograd's chain X -> V -> M -> Y with a small value S live across V
  // and M: the large ones alternate between two places and S fits beside.
  std::vector<BufferRequest> req = {{4096, 0, 1}, {8192, 1, 2}, {8192, 2, 3}, {4096, 3, 4}, {64, 1, 3}};
  BufferPlan plan = plan_buffers(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.arena, plan.lower_bound);
}

TEST(MemoryPlanner, BuffersLiveTogetherStack) {
  std::vector<BufferRequest> req = {{100, 0, 5}, {200, 2, 3}, {300, 3, 4}};
  BufferPlan plan = plan_buffers(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.arena, 128 + 256 + 320);
}

TEST(MemoryPlanner, RandomBuffersMakeValidPlansNearTheBound) {
  std::mt19937 rng(7);
  double worst = 1;
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + (int)(rng() % 40), steps = 1 + (int)(rng() % 30);
    std::vector<BufferRequest> req;
    for (int i = 0; i < n; ++i) {
      int a = (int)(rng() % steps), b = (int)(rng() % steps);
      req.push_back({1 + (int64_t)(rng() % 100000), std::min(a, b), std::max(a, b)});
    }
    int64_t align = trial % 2 ? 64 : 16;
    BufferPlan plan = plan_buffers(req, align);
    expect_valid(req, plan, align);
    worst = std::max(worst, (double)plan.arena / (double)plan.lower_bound);
  }
  // Greedy placement is not optimal, but on random intervals it stays
  // within a factor of the bound (the planner's search keeps the best of
  // twelve orders and policies).
  EXPECT_LT(worst, 1.6);
}

// lstm2's buffers (aarch64-neon): the fixed orders place them in 179200
// bytes; orders drawn at random meet the bound.
TEST(MemoryPlanner, RandomOrdersMeetTheBoundWhereTheFixedOnesMiss) {
  std::vector<BufferRequest> req = {{8000, 0, 1},  {25600, 4, 7},  {512, 5, 5},    {512, 6, 6},  {25600, 10, 13},
                                    {512, 11, 11}, {512, 12, 12},  {512, 13, 14},  {48, 14, 15}, {102400, 1, 3},
                                    {51200, 3, 6}, {102400, 7, 9}, {51200, 9, 12}, {192, 2, 3},  {192, 8, 9}};
  BufferPlan plan = plan_buffers(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.arena, plan.lower_bound);
  EXPECT_EQ(plan.lower_bound, 153792);
}

TEST(MemoryPlanner, ManyBuffersTakeTheFirstOrderOnly) {
  // Above max_tried the search stops after the first order, still valid.
  std::vector<BufferRequest> req;
  for (int i = 0; i < 50; ++i) req.push_back({64 * (1 + i % 7), i, i + 3});
  BufferPlan few = plan_buffers(req, 64, 10), all = plan_buffers(req, 64);
  expect_valid(req, few, 64);
  expect_valid(req, all, 64);
  EXPECT_LE(all.arena, few.arena);
}

}  // namespace
