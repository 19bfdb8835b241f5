// passes/plan_memory.cpp: liveness, buffers written in place, the arena
// (the placement itself: test_memory_planner.cpp).
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(PlanMemory, BuffersLiveTogetherNeverOverlap) {
  std::string ir = "graph opset 17\ninput x: f32[1,64]\n";
  std::string prev = "x";
  for (int i = 0; i < 5; ++i) {
    std::string k = std::to_string(i);
    ir += "const w" + k + ": f32[64,64] = random(" + k + ")\n";
    ir += "y" + k + " = MatMul(" + prev + ", w" + k + ")\n";
    ir += "r" + k + " = Add(y" + k + ", " + prev + ")\n";  // the residual keeps two buffers live
    prev = "r" + k;
  }
  ir += "output " + prev + "\n";
  Program p = run_until(ir, "plan_memory");
  const auto &bufs = p.stats.buffers;
  ASSERT_GE(bufs.size(), 2u);
  int64_t top = 0;
  for (size_t i = 0; i < bufs.size(); ++i) {
    top = std::max(top, bufs[i].offset + bufs[i].bytes);
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool live_together = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
      bool apart = bufs[i].offset + bufs[i].bytes <= bufs[j].offset || bufs[j].offset + bufs[j].bytes <= bufs[i].offset;
      EXPECT_TRUE(!live_together || apart) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_EQ(top, p.stats.arena_bytes);
}

TEST(PlanMemory, ChainReusesBuffersAndMeetsTheBound) {
  std::string ir = "graph opset 17\ninput x: f32[1,256]\n";
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    std::string k = std::to_string(i);
    ir += "const w" + k + ": f32[256,256] = random(" + k + ")\n";
    ir += "y" + k + " = MatMul(" + prev + ", w" + k + ")\n";
    prev = "y" + k;
  }
  ir += "output " + prev + "\n";
  Program p = run_until(ir, "plan_memory");
  // Two 1 KiB buffers alternate: input/output of each step.
  EXPECT_EQ(p.stats.lower_bound_bytes, 2048);
  EXPECT_EQ(p.stats.arena_bytes, 2048);
  int64_t o0 = p.storage[p.kernels[0].out].offset, o1 = p.storage[p.kernels[1].out].offset;
  EXPECT_NE(o0, o1);
  EXPECT_EQ(o0 % 64, 0);
}

TEST(PlanMemory, ElementwiseKernelsWriteOverDyingInputs) {
  // MatMul -> Softmax: exp(h - max) reads h at its own index and h dies
  // there, so it writes over h.
  Program p = run_until(R"(
    graph opset 17
    input x: f32[4,32]
    const w: f32[32,64] = random(1)
    h = MatMul(x, w)
    y = Softmax(h) {axis=1}
    output y
  )",
                        "plan_memory");
  int h = p.kernels[0].out, ex = -1;
  for (const Kernel &k : p.kernels)
    if (k.label == "Softmax" && k.ins.size() == 2 && k.ins[0] == h && p.graph.v(k.out).shape == Shape{4, 64})
      ex = k.out;
  ASSERT_GE(ex, 0);
  EXPECT_EQ(p.storage[ex].offset, p.storage[h].offset);
  EXPECT_LE(p.stats.arena_bytes, p.stats.lower_bound_bytes);
}

TEST(PlanMemory, GraphInputsAreNeverWrittenOver) {
  Program p = run_until(R"(
    graph opset 17
    input x: f32[64]
    y = Neg(x)
    output y
  )",
                        "plan_memory");
  EXPECT_NE(p.storage[p.graph.inputs[0]].offset, p.storage[p.graph.outputs[0]].offset);
}

TEST(PlanMemory, AnArenaOverTheCapIsRefused) {
  std::string msg = error_of([] {
    Program p;
    p.graph = parse_graph("graph opset 17\ninput x: f32[4096]\ny = Neg(x)\noutput y\n");
    p.graph.limits.max_arena_bytes = 1000;
    Target t = resolve_target("x86-64-avx2");
    PassContext c{p, t, nullptr};
    run_pipeline(c, {});
  });
  EXPECT_NE(msg.find("more than the limit of 1000 bytes"), std::string::npos) << msg;
}

}  // namespace
