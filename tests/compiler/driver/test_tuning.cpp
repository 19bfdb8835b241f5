// driver/tuning.cpp: tuning files (tinyrt-tune) applied to a target; a
// layer of a tuned geometry takes the tuned tile, others the tables; a bad
// file is a usage error naming the file and the problem.
#include <gtest/gtest.h>

#include "driver/tuning.h"
#include "ir/error.h"

using namespace tinyrt;

namespace {

std::string file(const std::string &target, const std::string &tiles) {
  return R"({"tinyrt_tuning": 1, "target": ")" + target + R"(", "tiles": [)" + tiles + "]}";
}

const char *kTile = R"({"kind": "float", "oc": 96, "row": 49, "ic": 576, "linear": true, "mr": 5, "nv": 2})";

std::string usage_error(const std::string &text, const char *target = "x86-64-avx2") {
  Target t = resolve_target(target);
  try {
    apply_tuning(text, "tune.json", t);
  } catch (const CompileError &e) {
    EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

}  // namespace

TEST(Tuning, TunedGeometryTakesItsTileOthersTheTables) {
  Target t = resolve_target("x86-64-avx2");
  const GemmTile before = t.gemm_tile(96, 49, true, 576);
  const GemmTile other = t.gemm_tile(96, 50, true, 576);
  ASSERT_FALSE(before.mr == 5 && before.nv == 2);  // the file changes something
  apply_tuning(file("x86-64-avx2", kTile), "tune.json", t);
  GemmTile tuned = t.gemm_tile(96, 49, true, 576);
  EXPECT_EQ(tuned.mr, 5);
  EXPECT_EQ(tuned.nv, 2);
  GemmTile untouched = t.gemm_tile(96, 50, true, 576);  // another row width
  EXPECT_EQ(untouched.mr, other.mr);
  EXPECT_EQ(untouched.nv, other.nv);
  GemmTile int8 = t.gemm_tile(96, 49, true, 576, Target::TileKind::Int8);  // float tiles only
  EXPECT_FALSE(int8.mr == 5 && int8.nv == 2 && !(before.mr == 5));
}

TEST(Tuning, CandidatesFitTheRegisters) {
  for (const char *name : {"x86-64-avx2", "armv7-neon", "aarch64-neon"}) {
    Target t = resolve_target(name);
    auto c = t.tile_candidates();
    ASSERT_FALSE(c.empty()) << name;
    EXPECT_EQ(c.front(), t.gemm_tiles.front()) << name;  // the target's own first
    for (auto [mr, nv] : c) EXPECT_LE(mr * nv + nv + 1, t.vector_regs) << name << " " << mr << "x" << nv;
  }
}

TEST(Tuning, BadFilesAreUsageErrors) {
  EXPECT_NE(usage_error("{not json").find("tune.json: not a JSON object"), std::string::npos);
  EXPECT_NE(usage_error(R"({"target": "x86-64-avx2"})").find("not a tinyrt tuning file"), std::string::npos);
  EXPECT_NE(usage_error(file("aarch64-neon", kTile)).find("tuned for aarch64-neon, not for x86-64-avx2"),
            std::string::npos);
  EXPECT_NE(usage_error(file("x86-64-avx2", R"({"kind": "float", "oc": 8, "row": 8, "ic": 8, "linear": false})"))
                .find("tiles[0]: no integer \"mr\""),
            std::string::npos);
  EXPECT_NE(usage_error(file("x86-64-avx2",
                             R"({"kind": "float", "oc": 8, "row": 8, "ic": 8, "linear": false, "mr": 8, "nv": 4})"))
                .find("needs more than the 16 vector registers"),
            std::string::npos);
  EXPECT_NE(usage_error(file("x86-64-avx2",
                             R"({"kind": "float", "oc": -1, "row": 8, "ic": 8, "linear": false, "mr": 2, "nv": 2})"))
                .find("\"oc\" -1 outside"),
            std::string::npos);
}

TEST(Tuning, WinogradRatiosAndTheSerialThreshold) {
  Target t = resolve_target("x86-64-avx2");
  const int64_t builtin = t.serial_step_ops;
  apply_tuning(R"({"tinyrt_tuning": 1, "target": "x86-64-avx2", "tiles": [],
                   "winograd": [{"ic": 64, "oc": 64, "out_h": 56, "out_w": 56, "batch": 1, "f2": 0.61, "f4": 0.48},
                                {"ic": 3, "oc": 16, "out_h": 32, "out_w": 32, "batch": 1, "f4": 1.2}],
                   "serial_step_ops": 123456})",
               "tune.json", t);
  EXPECT_EQ(t.serial_step_ops, 123456);
  EXPECT_NE(builtin, 123456);
  const Target::TunedWinograd *w = t.tuned_winograd_of(64, 64, 56, 56, 1);
  ASSERT_NE(w, nullptr);
  EXPECT_DOUBLE_EQ(w->ratio[0], 0.61);
  EXPECT_DOUBLE_EQ(w->ratio[1], 0.48);
  const Target::TunedWinograd *only_f4 = t.tuned_winograd_of(3, 16, 32, 32, 1);
  ASSERT_NE(only_f4, nullptr);
  EXPECT_EQ(only_f4->ratio[0], 0);                             // not measured: the estimate stays
  EXPECT_EQ(t.tuned_winograd_of(64, 64, 56, 56, 2), nullptr);  // another batch
  // A file without them (an older tuner's) leaves the tables.
  Target u = resolve_target("x86-64-avx2");
  apply_tuning(file("x86-64-avx2", kTile), "tune.json", u);
  EXPECT_EQ(u.serial_step_ops, builtin);
  EXPECT_TRUE(u.tuned_winograd.empty());
}

TEST(Tuning, BadWinogradEntriesAndThresholdsAreUsageErrors) {
  auto with = [](const std::string &extra) {
    return R"({"tinyrt_tuning": 1, "target": "x86-64-avx2", "tiles": [], )" + extra + "}";
  };
  EXPECT_NE(usage_error(with(R"("winograd": {})")).find("\"winograd\" is not a list"), std::string::npos);
  EXPECT_NE(usage_error(with(R"("winograd": [{"ic": 8, "oc": 8, "out_h": 8, "out_w": 8}])"))
                .find("winograd[0]: \"batch\" is not an integer"),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("winograd": [{"ic": 8, "oc": 8, "out_h": 8, "out_w": 8, "batch": 1, "f2": -1}])"))
                .find("winograd[0]: \"f2\" is not a ratio"),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("winograd": [{"ic": 0, "oc": 8, "out_h": 8, "out_w": 8, "batch": 1}])"))
                .find("\"ic\" is not an integer in [1,"),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("serial_step_ops": -5)")).find("\"serial_step_ops\" is not an integer >= 0"),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("serial_step_ops": "many")")).find("\"serial_step_ops\""), std::string::npos);
}
