// passes/split_recurrent.cpp: large recurrent steps in parts of hidden
// units that threads share.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

std::string lstm(int hidden) {
  std::string H = std::to_string(hidden), G = std::to_string(4 * hidden);
  return "graph opset 17\n"
         "input x: f32[6,1,16]\n"
         "const w: f32[1," +
         G +
         ",16] = random(1)\n"
         "const r: f32[1," +
         G + "," + H +
         "] = random(2)\n"
         "y, h, c = LSTM(x, w, r) {hidden_size=" +
         H +
         "}\n"
         "output y\n";
}

const Kernel &recurrent(const Program &p) {
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Recurrent) return k;
  throw std::runtime_error("no recurrent kernel");
}

TEST(SplitRecurrent, LargeStepsSplitInTwoParts) {
  // 4 gates x 128 x 128 = 65536 multiply-adds a step.
  Program p = run_until(lstm(128), "split_recurrent");
  const Kernel &k = recurrent(p);
  EXPECT_EQ(k.rnn.parts, 2);
  ASSERT_GE(k.rnn.sync, 0);
  EXPECT_EQ(p.graph.v(k.ins[k.rnn.sync]).numel(), k.rnn.sync_words());
}

TEST(SplitRecurrent, SmallStepsStayWhole) {
  Program p = run_until(lstm(32), "split_recurrent");
  EXPECT_EQ(recurrent(p).rnn.parts, 1);
  EXPECT_EQ(recurrent(p).rnn.sync, -1);
}

}  // namespace
