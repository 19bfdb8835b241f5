// passes/weights_plan.cpp: one knapsack over every weight's options
// (Winograd form, GEMM tile, half or float storage), by gain per byte.
#include "pass_test.h"
#include "passes/weights_plan.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

WeightOption option(int64_t bytes, double gain) {
  WeightOption o;
  o.bytes = bytes, o.gain = gain;
  return o;
}

WeightChoice choice(std::vector<WeightOption> options) {
  WeightChoice c;
  c.options = std::move(options);
  return c;
}

// The steps of all choices in order of gain per byte while they fit: a
// step of less gain per byte waits for those of more, whichever weight
// they belong to, and a choice's option that lies under its hull (less
// gain per byte than a larger step past it) is never a stop.
TEST(ChooseOptions, StepsOfAllChoicesByGainPerByte) {
  std::vector<WeightChoice> cs = {
      choice({option(0, 0), option(100, 1000)}),                 // 10 a byte
      choice({option(0, 0), option(40, 480), option(80, 520)}),  // 12, then 1
      choice({option(0, 0), option(10, 10), option(60, 600)}),   // (10, 10) under the hull: 10 a byte
  };
  auto taken = [&](int64_t room) {
    std::vector<WeightChoice> c = cs;
    choose_options(c, room);
    return std::vector<size_t>{c[0].taken, c[1].taken, c[2].taken};
  };
  EXPECT_EQ(taken(0), (std::vector<size_t>{0, 0, 0}));
  EXPECT_EQ(taken(40), (std::vector<size_t>{0, 1, 0}));
  EXPECT_EQ(taken(139),
            (std::vector<size_t>{0, 1, 2}));  // 10 a byte: the first (100 bytes) does not fit, the next does
  EXPECT_EQ(taken(140), (std::vector<size_t>{1, 1, 0}));
  EXPECT_EQ(taken(200), (std::vector<size_t>{1, 1, 2}));
  EXPECT_EQ(taken(240), (std::vector<size_t>{1, 2, 2}));
  EXPECT_EQ(taken(int64_t(1) << 40), (std::vector<size_t>{1, 2, 2}));
}

// Over the budget (room < 0), each choice starts at its fewest bytes (the
// most gain among them) and climbs only as far as the room it frees.
TEST(ChooseOptions, OverTheBudgetTheFewestBytesThenWhatFits) {
  std::vector<WeightChoice> cs = {
      choice({option(0, 0), option(-64, -50), option(-64, -80)}),  // a narrower tile frees 64 bytes
      choice({option(0, 0), option(-32, -5)}),                     // another frees 32 for less loss
  };
  std::vector<WeightChoice> c = cs;
  choose_options(c, -96);
  EXPECT_EQ(c[0].taken, 1u);
  EXPECT_EQ(c[1].taken, 1u);
  c = cs;
  choose_options(c, -32);  // one to narrow: the one that loses less per byte
  EXPECT_EQ(c[0].taken, 0u);
  EXPECT_EQ(c[1].taken, 1u);
  c = cs;
  choose_options(c, -1000);  // no plan fits: the fewest bytes
  EXPECT_EQ(c[0].taken, 1u);
  EXPECT_EQ(c[1].taken, 1u);
}

// A depthwise convolution over many pixels (16 channels, 3x3, at
// 128x128: each half weight vector widened 4096 times, and a depthwise
// layer has no float copy in the arena to fall back on) and a 3x3
// convolution over few (32 -> 32 at 16x16), which Winograd speeds up for
// some KB of transformed weights.
const std::string kDepthwiseAndWinograd = R"(
  graph opset 17
  input x: f32[1,16,128,128]
  input y: f32[1,32,16,16]
  const a: f32[16,1,3,3] = random(1)
  const b: f32[32,32,3,3] = random(2)
  p = Conv(x, a) {pads=[1,1,1,1], group=16}
  q = Conv(y, b) {pads=[1,1,1,1]}
  output p
  output q
)";

Program planned(const std::string &ir, int64_t budget, double arena_ratio = 0) {
  PassOptions o;
  o.winograd.weights = o.pack.weights = WeightStorage::F16;
  return run_until_limited(ir, "winograd", resolve_target("x86-64-avx2"), o, [&](Limits &l) {
    l.max_weights_bytes = budget;
    if (arena_ratio > 0)
      l.max_arena_ratio = arena_ratio;
    else
      l.arena_budget_given = true;  // room for any form's V and M: the weights decide
  });
}

const MemoryTrade *trade(const Program &p, const std::string &kind) {
  for (const MemoryTrade &t : p.trades)
    if (t.kind == kind) return &t;
  return nullptr;
}

double gain(const Program &p) {
  double g = 0;
  for (const MemoryTrade &t : p.trades) g += t.gain;
  return g;
}

// The Winograd forms and float storage spend one room: with room for the
// convolution's transformed weights alone, the depthwise layer's float
// weights, which save more per byte, take their part of it first
// (Winograd, chosen before the storage, used to take all of it), and the
// plan saves more in all than the form alone would.
TEST(WeightsPlan, WinogradFormsAndFloatStorageShareOneRoom) {
  const Program open = planned(kDepthwiseAndWinograd, int64_t(1) << 30);
  const MemoryTrade *storage = trade(open, "storage"), *form = trade(open, "winograd");
  ASSERT_TRUE(storage && form && form->taken != "direct") << "the test wants both trades with room for both";
  ASSERT_GT(storage->gain / (double)storage->bytes, form->gain / (double)form->bytes);
  ASSERT_GT(form->bytes, storage->bytes);
  const int64_t base = open.budgets.base_weights;
  const Program p = planned(kDepthwiseAndWinograd, base + form->bytes);
  ASSERT_NE(trade(p, "storage"), nullptr);
  EXPECT_EQ(trade(p, "storage")->bytes, storage->bytes);
  EXPECT_LE(p.budgets.traded_weights, form->bytes);
  EXPECT_GT(gain(p), form->gain);
  // Room for both: both.
  const Program q = planned(kDepthwiseAndWinograd, base + form->bytes + storage->bytes);
  ASSERT_NE(trade(q, "storage"), nullptr);
  ASSERT_NE(trade(q, "winograd"), nullptr);
  EXPECT_EQ(trade(q, "winograd")->taken, form->taken);
}

// A 1x1 product over many pixels (16 -> 16 channels at 128x128).
const std::string kProduct = R"(
  graph opset 17
  input x: f32[1,16,128,128]
  const a: f32[16,16,1,1] = random(1)
  p = Conv(x, a)
  output p
)";

// Where the arena budget has room for a float copy of a GEMM's half
// weights (widen_packed_weights widens them once per run), storing them
// float saves only the copy's pass, a widening per weight vector; where it
// has none (--max-arena-bytes 1x: the input and output fill it), every
// widening of every pixel tile.
TEST(WeightsPlan, AnArenaCopyLeavesFloatStorageOnlyItsPass) {
  const Program copy = planned(kProduct, int64_t(1) << 30);
  const Program none = planned(kProduct, int64_t(1) << 30, 1.0);
  const MemoryTrade *with = trade(copy, "storage"), *without = trade(none, "storage");
  ASSERT_TRUE(with && without);
  EXPECT_EQ(with->bytes, without->bytes);
  const int L = resolve_target("x86-64-avx2").f32_lanes();
  const double vectors = (double)(with->bytes * 2) / 4 / L;  // the float weights' vectors
  EXPECT_DOUBLE_EQ(with->gain, vectors);
  EXPECT_GE(without->gain, vectors * (double)kMinCopyTiles);
}

}  // namespace
