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

// Int8 GEMMs take their tiles from their own lists (Target::TileKind),
// and so from entries of their own kind.
TEST(Tuning, Int8TilesByTheirKind) {
  Target t = resolve_target("x86-64-avx2");
  const GemmTile f = t.gemm_tile(96, 49, true, 576);
  const GemmTile q = t.gemm_tile(96, 49, true, 576, Target::TileKind::Int8);
  const GemmTile qb = t.gemm_tile(96, 49, true, 576, Target::TileKind::Int8Bytes);
  ASSERT_FALSE(qb.mr == 3 && qb.nv == 3);  // the file changes something
  apply_tuning(file("x86-64-avx2", R"({"kind": "int8-bytes", "oc": 96, "row": 49, "ic": 576, "linear": true,
                                      "mr": 3, "nv": 3})"),
               "tune.json", t);
  const GemmTile tuned = t.gemm_tile(96, 49, true, 576, Target::TileKind::Int8Bytes);
  EXPECT_EQ(tuned.mr, 3);
  EXPECT_EQ(tuned.nv, 3);
  const GemmTile f2 = t.gemm_tile(96, 49, true, 576), q2 = t.gemm_tile(96, 49, true, 576, Target::TileKind::Int8);
  EXPECT_TRUE(f2.mr == f.mr && f2.nv == f.nv);  // the other kinds keep their tables
  EXPECT_TRUE(q2.mr == q.mr && q2.nv == q.nv);
  EXPECT_NE(usage_error(file("x86-64-avx2", R"({"kind": "int4", "oc": 8, "row": 8, "ic": 8, "linear": false,
                                                "mr": 2, "nv": 2})"))
                .find("tiles[0]: \"kind\" must be \"float\", \"int8\", \"int8-bytes\", \"int16\", "
                      "\"int8-signed-bytes\" or \"int16-bytes\""),
            std::string::npos);
  EXPECT_STREQ(Target::tile_kind_name(Target::TileKind::Int8Bytes), "int8-bytes");
  EXPECT_STREQ(Target::tile_kind_name(Target::TileKind::Int16), "int16");
  Target::TileKind k = Target::TileKind::Float;
  EXPECT_TRUE(Target::tile_kind_of("int16", &k));
  EXPECT_EQ(k, Target::TileKind::Int16);
}

// Signed bytes (x86 AVX2 without VNNI) take their own list, scored with a
// row's broadcast as dear as a product register: wide tiles where the
// channels fill them, narrower ones where they would mostly pad.
TEST(Tuning, SignedBytesTakeWideTiles) {
  Target t = resolve_target("x86-64-avx2");
  const GemmTile wide = t.gemm_tile(1000, 169, true, 512, Target::TileKind::Int8SignedBytes);
  EXPECT_EQ(wide.mr, 1);
  EXPECT_EQ(wide.nv, 8);
  const GemmTile bytes = t.gemm_tile(1000, 169, true, 512, Target::TileKind::Int8Bytes);
  EXPECT_EQ(bytes.mr, 4);  // the byte form keeps its tiles
  EXPECT_EQ(bytes.nv, 2);
  const GemmTile narrow = t.gemm_tile(24, 3136, true, 96, Target::TileKind::Int8SignedBytes);
  EXPECT_EQ(narrow.mr * narrow.nv * t.f32_lanes(), 64);  // 24 channels: one tile of 32, not 64 lanes of padding
  EXPECT_EQ(narrow.nv, 4);
  const GemmTile sixteen = t.gemm_tile(16, 3136, true, 96, Target::TileKind::Int8SignedBytes);
  EXPECT_EQ(sixteen.nv, 2);
  Target::TileKind k = Target::TileKind::Float;
  EXPECT_TRUE(Target::tile_kind_of("int8-signed-bytes", &k));
  EXPECT_EQ(k, Target::TileKind::Int8SignedBytes);
  // Targets without the list score the kind as bytes.
  Target v = resolve_target("x86-64-avx512-vnni");
  const GemmTile vs = v.gemm_tile(1000, 169, true, 512, Target::TileKind::Int8SignedBytes),
                 vb = v.gemm_tile(1000, 169, true, 512, Target::TileKind::Int8Bytes);
  EXPECT_TRUE(vs.mr == vb.mr && vs.nv == vb.nv);
}

// AVX2 float tiles: 24 channels (two vectors of 8 pad them to 32) take
// three vectors, a measured cell's tile included (the RGB first layers'
// 5x2, measured on 64 channels, keeps 16, 32 and 64); a matrix-vector
// product (one pixel) takes more independent sums than its two-vector
// tile has.
TEST(Tuning, AvxTwoTilesFitTheirChannels) {
  Target t = resolve_target("x86-64-avx2");
  const GemmTile first24 = t.gemm_tile(24, 112, false, 3), first32 = t.gemm_tile(32, 112, false, 3),
                 first64 = t.gemm_tile(64, 112, false, 3);
  EXPECT_EQ(first24.nv, 3);
  EXPECT_EQ(first32.mr, 5);
  EXPECT_EQ(first32.nv, 2);
  EXPECT_EQ(first64.mr, 5);
  const GemmTile pointwise24 = t.gemm_tile(24, 784, true, 96), pointwise48 = t.gemm_tile(48, 784, true, 96);
  EXPECT_EQ(pointwise24.nv, 3);
  EXPECT_EQ(pointwise48.mr, 6);  // 48 = 3 x 16: the default 6x2
  EXPECT_EQ(pointwise48.nv, 2);
  EXPECT_EQ(t.gemm_tile(1000, 1, true, 1024).nv, 3);
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

// Task splits (tinyrt-tune at more than one thread): a GEMM of a listed
// geometry and kind takes the measured split, others the emitter's rule;
// --task-split (split_forced) overrides both.
TEST(Tuning, TaskSplitsByGeometryAndKind) {
  Target t = resolve_target("x86-64-avx2");
  EXPECT_EQ(t.task_split({Target::TileKind::Float, 256, 14, 256, false}).order, TaskSplit::Order::Rule);
  apply_tuning(R"({"tinyrt_tuning": 1, "target": "x86-64-avx2", "tiles": [], "threads": 2,
                   "task_splits": [{"kind": "float", "oc": 256, "row": 14, "ic": 256, "linear": false,
                                    "split": "channels,16"},
                                   {"kind": "int16", "oc": 64, "row": 784, "ic": 64, "linear": true,
                                    "split": "serial"}]})",
               "tune.json", t);
  const TaskSplit f = t.task_split({Target::TileKind::Float, 256, 14, 256, false});
  EXPECT_EQ(f.order, TaskSplit::Order::Channels);
  EXPECT_EQ(f.tasks, 16);
  EXPECT_EQ(t.task_split({Target::TileKind::Int8, 256, 14, 256, false}).order, TaskSplit::Order::Rule);   // kind
  EXPECT_EQ(t.task_split({Target::TileKind::Float, 256, 14, 256, true}).order, TaskSplit::Order::Rule);   // linear
  EXPECT_EQ(t.task_split({Target::TileKind::Float, 256, 28, 256, false}).order, TaskSplit::Order::Rule);  // row
  EXPECT_EQ(t.task_split({Target::TileKind::Int16, 64, 784, 64, true}).order, TaskSplit::Order::Serial);
  t.split_forced = true;
  ASSERT_TRUE(parse_task_split("pixels,7", &t.forced_split));
  EXPECT_EQ(t.task_split({Target::TileKind::Float, 256, 14, 256, false}), (TaskSplit{TaskSplit::Order::Pixels, 7}));
  // The text form round-trips; what is not a split is refused.
  for (const char *text : {"rule", "serial", "pixels,1", "channels,4096", "pixels"}) {
    TaskSplit s;
    ASSERT_TRUE(parse_task_split(text, &s)) << text;
    EXPECT_EQ(task_split_text(s), text);
  }
  TaskSplit s;
  for (const char *text : {"", "serial,2", "rule,8", "pixels,0", "pixels,4097", "pixels,8x", "rows", "pixels,"})
    EXPECT_FALSE(parse_task_split(text, &s)) << text;
}

TEST(Tuning, BadTaskSplitsAreUsageErrors) {
  auto with = [](const std::string &extra) {
    return R"({"tinyrt_tuning": 1, "target": "x86-64-avx2", "tiles": [], )" + extra + "}";
  };
  EXPECT_NE(usage_error(with(R"("task_splits": {})")).find("\"task_splits\" is not a list"), std::string::npos);
  EXPECT_NE(usage_error(with(R"("task_splits": [{"kind": "float", "oc": 8, "row": 8, "ic": 8, "linear": false,
                                                 "split": "serial,4"}])"))
                .find("task_splits[0]: \"split\" is not ORDER[,TASKS]"),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("task_splits": [{"kind": "float", "oc": 8, "row": 8, "ic": 8, "linear": false}])"))
                .find("task_splits[0]: \"split\""),
            std::string::npos);
  EXPECT_NE(usage_error(with(R"("task_splits": [{"kind": "float", "oc": 0, "row": 8, "ic": 8, "linear": false,
                                                 "split": "serial"}])"))
                .find("task_splits[0]: \"oc\" 0 outside [1,"),
            std::string::npos);
  // An older file without splits leaves the rule.
  Target t = resolve_target("x86-64-avx2");
  apply_tuning(file("x86-64-avx2", kTile), "tune.json", t);
  EXPECT_TRUE(t.tuned_splits.empty());
}

TEST(Tuning, SerialThresholdSeparatesTheModelsThatRunFasterAlone) {
  // Small steps faster on one thread, big ones faster shared.
  std::vector<SerialPoint> pts = {{5e4, 1.2, 1.0}, {2e5, 1.1, 1.0}, {8e5, 1.0, 1.5}, {3e6, 1.0, 1.9}};
  double cost = 0, builtin_cost = 0;
  int64_t th = choose_serial_threshold(pts, 2000000, 0.02, &cost, &builtin_cost);
  EXPECT_EQ(th, 400000);                // the geometric mean of 2e5 and 8e5
  EXPECT_DOUBLE_EQ(cost, 4.0);          // every model its faster way
  EXPECT_DOUBLE_EQ(builtin_cost, 4.5);  // the tables ran the 8e5 one alone
  // A threshold the tables already have in the best interval stays.
  EXPECT_EQ(choose_serial_threshold(pts, 300000), 300000);
  // Every model faster shared: below the smallest.
  std::vector<SerialPoint> shared = {{5e4, 1.0, 1.2}, {2e5, 1.0, 1.1}};
  EXPECT_LE(choose_serial_threshold(shared, 750000), 50000);
  // Every model faster alone: above the largest.
  std::vector<SerialPoint> alone = {{5e4, 1.2, 1.0}, {2e5, 1.1, 1.0}};
  EXPECT_GT(choose_serial_threshold(alone, 1000), 200000);
}

TEST(Tuning, SerialThresholdSlowsNoModelAgainstTheTables) {
  // Measured at 2 threads (Zen 4): the smallest model runs faster shared,
  // the next faster alone, the third faster shared; the tables run all
  // three alone. All shared would cost least (the second 10 % slower):
  // not taken; the threshold between the second and the third is.
  std::vector<SerialPoint> pts = {{5.28e4, 0.0083, 0.0112}, {9.09e4, 0.0564, 0.0513}, {4.83e5, 0.0362, 0.0481}};
  int64_t th = choose_serial_threshold(pts, 750000);
  EXPECT_GT(th, 90900);
  EXPECT_LT(th, 483000);
  // With room for a 15 % loss the cheapest is taken.
  EXPECT_LT(choose_serial_threshold(pts, 750000, 0.15), 52800);
  // Two models faster each way the other way round: between them.
  std::vector<SerialPoint> mixed = {{1e5, 1.3, 1.0}, {1.2e5, 1.0, 1.05}, {1e7, 1.0, 2.0}};
  int64_t m = choose_serial_threshold(mixed, 0);
  EXPECT_GT(m, 100000);
  EXPECT_LT(m, 120000);
}

// A file measured with half weights or half products serves compiles with
// the same options only (other tiles and forms win there); an older file
// (neither field) was measured with float weights and products.
TEST(Tuning, WeightsAndPrecisionMustMatchTheMeasurement) {
  auto with = [](const std::string &extra) {
    return R"({"tinyrt_tuning": 1, "target": "x86-64-avx2", "tiles": [)" + std::string(kTile) + "], " + extra + "}";
  };
  auto applies = [](const std::string &text, WeightStorage w, Precision p, const char *target = "x86-64-avx2") {
    Target t = resolve_target(target);
    apply_tuning(text, "tune.json", t, w, p);
    return t.tuned_tiles.size();
  };
  EXPECT_EQ(applies(with(R"("weights": "fp16", "precision": "fp32")"), WeightStorage::F16, Precision::F32), 1u);
  EXPECT_EQ(applies(file("x86-64-avx2", kTile), WeightStorage::F32, Precision::F32), 1u);
  Target t = resolve_target("x86-64-avx2");
  auto refused = [&](const std::string &text, WeightStorage w, Precision p) {
    try {
      apply_tuning(text, "tune.json", t, w, p);
    } catch (const CompileError &e) {
      EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted: " << text;
    return std::string();
  };
  EXPECT_NE(refused(with(R"("weights": "fp16")"), WeightStorage::F32, Precision::F32)
                .find("tune.json: measured with --weights fp16, not for --weights fp32 (tinyrt-tune --weights fp32)"),
            std::string::npos);
  EXPECT_NE(refused(file("x86-64-avx2", kTile), WeightStorage::F16, Precision::F32)
                .find("measured with --weights fp32, not for --weights fp16"),
            std::string::npos);
  EXPECT_NE(refused(with(R"("precision": "fp16")"), WeightStorage::F32, Precision::F32)
                .find("measured with --precision fp16, not for --precision fp32"),
            std::string::npos);
  EXPECT_NE(refused(with(R"("weights": "bf16")"), WeightStorage::F32, Precision::F32)
                .find("\"weights\" is \"bf16\", not \"fp32\" or \"fp16\""),
            std::string::npos);
  EXPECT_NE(refused(with(R"("precision": 16)"), WeightStorage::F32, Precision::F32)
                .find("\"precision\" is not \"fp32\" or \"fp16\""),
            std::string::npos);
}
