// driver/plan_svg.cpp: the memory plan drawn with its lower bound and the
// arena budget the speed-for-memory choices kept within.
#include <gtest/gtest.h>

#include <random>

#include "driver/compiler.h"
#include "onnx_builder.h"

using namespace tinyrt;
using tinyrt::test::OnnxBuilder;

namespace {

TEST(PlanSvg, MarksTheLowerBoundAndTheArenaBudget) {
  OnnxBuilder b;
  b.input("x", {1, 16, 24, 24});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  std::vector<float> w(16 * 16 * 9);
  for (float &v : w) v = u(rng);
  b.init("w", {16, 16, 3, 3}, w);
  auto &conv = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"});
  b.output("y", {1, 16, 24, 24});
  CompileOptions o;
  o.target = "x86-64-avx2";
  Artifact a = compile_model(b.save(), o);
  const std::string svg = plan_svg(a);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("lower bound"), std::string::npos);
  EXPECT_NE(svg.find("arena budget (1.10x the peak without transforms)"), std::string::npos) << svg;
  EXPECT_NE(svg.find(", budget "), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
