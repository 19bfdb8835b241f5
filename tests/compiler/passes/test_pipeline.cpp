// passes/pipeline.cpp: the passes in their order, each with its unit tests,
// and the verifier that runs after each.
#include <filesystem>

#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

TEST(Pipeline, EveryPassHasItsTests) {
  for (const Pass &pass : pipeline()) {
    std::filesystem::path f =
        std::filesystem::path(TINYRT_UNIT_TEST_DIR) / "passes" / ("test_" + std::string(pass.name) + ".cpp");
    EXPECT_TRUE(std::filesystem::exists(f)) << pass.name << " has no " << f;
  }
}

TEST(Pipeline, NamesAreUniqueAndInferenceComesFirst) {
  std::set<std::string> names;
  for (const Pass &pass : pipeline()) EXPECT_TRUE(names.insert(pass.name).second) << pass.name;
  ASSERT_FALSE(pipeline().empty());
  EXPECT_STREQ(pipeline().front().name, "infer_and_fold");
  EXPECT_STREQ(pipeline().back().name, "plan_memory");
}

TEST(Pipeline, TheVerifierCatchesAReadBeforeItsWrite) {
  Program p = run_until("graph opset 17\ninput x: f32[4]\na = Neg(x)\ny = Abs(a)\noutput y\n", "lower_to_kernels");
  ASSERT_EQ(p.kernels.size(), 2u);
  std::swap(p.kernels[0], p.kernels[1]);
  std::string msg = error_of([&] { verify_program(p, "a test"); });
  EXPECT_NE(msg.find("after a test"), std::string::npos) << msg;
  EXPECT_NE(msg.find("before it is written"), std::string::npos) << msg;
}

}  // namespace
