// passes/winograd.cpp: 3x3 stride-1 float convolutions as Winograd
// transforms around a grouped GEMM, where asked or where it pays.
#include <map>
#include <set>

#include "pass_test.h"
#include "qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

const char *kConv3x3 = R"(
  graph opset 17
  input x: f32[1,32,16,16]
  const w: f32[32,32,3,3] = random(1)
  const b: f32[32] = random(2)
  c = Conv(x, w, b) {pads=[1,1,1,1]}
  y = Relu(c)
  output y
)";

PassOptions mode(WinogradMode m) {
  PassOptions o;
  o.winograd.mode = m;
  return o;
}

TEST(Winograd, F4MakesTransformsAroundAGroupedGemm) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::F4));
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradIn), 1);
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradOut), 1);
  for (const Kernel &k : p.kernels) {
    if (k.kind == KernelKind::Gemm) EXPECT_EQ(k.gemm.groups, 36);  // (4 + 2)^2 planes
    if (k.kind == KernelKind::WinogradOut) {
      EXPECT_EQ(k.wino.m, 4);
      EXPECT_EQ(count_ops(k.gemm.epilogue, EOp::Max), 1);  // the Relu stays in the epilogue
    }
  }
}

TEST(Winograd, F2TransformsWeightsToFourByFour) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::F2));
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm) {
      EXPECT_EQ(k.gemm.groups, 16);
      EXPECT_EQ(p.graph.v(k.gemm.weight).numel(), 16 * 32 * 32);
    }
}

TEST(Winograd, OffKeepsTheDirectConvolution) {
  Program p = run_until(kConv3x3, "winograd", "x86-64-avx2", mode(WinogradMode::Off));
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn), 0);
  EXPECT_EQ(count_kernels(p, KernelKind::Gemm), 1);
}

TEST(Winograd, StridedConvolutionsStayDirect) {
  std::string ir = kConv3x3;
  ir.replace(ir.find("pads=[1,1,1,1]"), 14, "pads=[1,1,1,1], strides=[2,2]");
  Program p = run_until(ir, "winograd", "x86-64-avx2", mode(WinogradMode::F4));
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn), 0);
}

// Under a weights budget (Limits::weights_budget) the forms are chosen
// together: what they add stays within the room the budget leaves, and
// the layer that gains more per byte gets it first.
const char *kTwoLayers = R"(
  graph opset 17
  input x: f32[1,32,32,32]
  const w1: f32[32,32,3,3] = random(1)
  const w2: f32[32,32,3,3] = random(2)
  a = Conv(x, w1) {pads=[1,1,1,1]}
  p = MaxPool(a) {kernel_shape=[3,3], strides=[3,3]}
  b = Conv(p, w2) {pads=[1,1,1,1]}
  output b
)";

// bytes 0: the default budget, over a model of `model_bytes` weights.
// (runtime_weights: the forms that transform weights at run time, which
// add no bytes, also allowed.)
Program with_budget(const std::string &ir, int64_t bytes, WeightStorage w = WeightStorage::F32, int64_t model_bytes = 0,
                    bool runtime_weights = false) {
  static const Target t = resolve_target("x86-64-avx2");
  PassOptions o = mode(WinogradMode::Auto);
  o.winograd.weights = w;
  o.winograd.runtime_weights = runtime_weights;
  return run_until_limited(ir, "winograd", t, o, [&](Limits &l) {
    l.max_weights_bytes = bytes;
    l.model_weights_bytes = model_bytes;
    l.arena_budget_given = true;  // room for any form's V and M: the weights decide
  });
}

int64_t traded(const Program &p) {
  int64_t n = 0;
  for (const MemoryTrade &t : p.trades) n += t.bytes;
  return n;
}

TEST(Winograd, BudgetWithoutRoomKeepsConvolutionsDirect) {
  Program open = with_budget(kTwoLayers, int64_t(1) << 30);
  ASSERT_EQ(open.trades.size(), 2u);
  ASSERT_GT(count_kernels(open, KernelKind::WinogradIn), 0);  // the cost model wants them
  const int64_t base = open.budgets.base_weights;
  Program none = with_budget(kTwoLayers, base);
  EXPECT_EQ(count_kernels(none, KernelKind::WinogradIn), 0);
  ASSERT_EQ(none.trades.size(), 2u);
  for (const MemoryTrade &t : none.trades) {
    EXPECT_EQ(t.taken, "direct");
    EXPECT_NE(t.wanted, "direct");
    EXPECT_EQ(t.bytes, 0);
  }
}

TEST(Winograd, BudgetGoesToTheLargerGainPerByte) {
  Program open = with_budget(kTwoLayers, int64_t(1) << 30);
  const int64_t base = open.budgets.base_weights;
  // Both layers' weights are the same size; the first runs over 16 times
  // the pixels. Room for one F(2,3) (the smallest form): the first gets it.
  const int64_t f2 = 7 * 32 * 32 * (int64_t)sizeof(float);  // (16 - 9) * OC * IC
  Program one = with_budget(kTwoLayers, base + f2);
  ASSERT_EQ(one.trades.size(), 2u);
  EXPECT_EQ(one.trades[0].taken, "F(2,3)");
  EXPECT_EQ(one.trades[1].taken, "direct");
  EXPECT_EQ(traded(one), f2);
  // Room for the first layer's wanted form: the first keeps the larger gain.
  Program more = with_budget(kTwoLayers, base + open.trades.at(0).wanted_bytes);
  EXPECT_NE(more.trades.at(0).taken, "direct");
  EXPECT_GE(more.trades.at(0).gain, more.trades.at(1).gain);
}

// Forms measured on the user's machine (tinyrt-tune: Target::
// tuned_winograd) replace the estimate's ratio for their geometry only.
std::string taken_with_tuning(const std::vector<Target::TunedWinograd> &tuned) {
  Target t = resolve_target("x86-64-avx2");
  t.tuned_winograd = tuned;
  Program p;
  p.graph = parse_graph(kConv3x3);
  p.graph.limits.max_weights_bytes = int64_t(1) << 30;
  p.graph.limits.arena_budget_given = true;
  PassContext c{p, t, nullptr};
  run_pipeline(c, mode(WinogradMode::Auto), "winograd");
  // (A layer that wants no form makes no trade.)
  EXPECT_LE(p.trades.size(), 1u);
  const std::string taken = p.trades.empty() ? "direct" : p.trades[0].taken;
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn) > 0, taken != "direct") << taken;
  return taken;
}

TEST(Winograd, TunedRatiosReplaceTheEstimate) {
  const std::string estimated = taken_with_tuning({});
  ASSERT_NE(estimated, "direct");  // the estimate wants a form for this layer
  // kConv3x3: 32 -> 32 channels, 16x16 output, batch 1.
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {1.5, 2.0, 1.6, 2.1}}}), "direct");    // measured slower
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {0.5, 0.49, 0.6, 0.59}}}), "F(2,3)");  // F(4,3) not 3 % better
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {0.9, 0.6, 0.95, 0.7}}}), "F(4,3)");
  // A form with its weights transformed at run time counts as no cheaper
  // than the stored form plus the transform, whatever its steps measured.
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {0.9, 0.6, 0.95, 0.5}}}), "F(4,3)");
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {1.5, 2.0, 0.8, 2.1}}}), "direct");
  EXPECT_EQ(taken_with_tuning({{32, 32, 16, 16, 1, {0.98, 0.99, 0.99, 1.2}}}),
            "direct");  // within the 3 % margin of direct
  // Another geometry's measurements leave this layer to the estimate.
  EXPECT_EQ(taken_with_tuning({{32, 32, 8, 8, 1, {2.0, 2.0}}, {32, 16, 16, 16, 1, {2.0, 2.0}}}), estimated);
}

// A layer whose transformed weights the budget leaves no room for takes
// its form with the weights transformed at run time (the 3x3 weights kept,
// no bytes added), a chunk of output channels at a time.
TEST(Winograd, WithoutRoomTheWeightsAreTransformedAtRunTime) {
  const int64_t base = with_budget(kTwoLayers, int64_t(1) << 30).budgets.base_weights;
  Program p = with_budget(kTwoLayers, base, WeightStorage::F32, 0, true);
  ASSERT_EQ(p.trades.size(), 2u);
  EXPECT_LE(traded(p), 0);
  int rt = 0;
  for (const MemoryTrade &t : p.trades) {
    EXPECT_LE(t.bytes, 0);
    if (t.taken.size() > 3 && t.taken.substr(t.taken.size() - 3) == "/rt") ++rt;
  }
  EXPECT_GT(rt, 0);
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradWeights), count_kernels(p, KernelKind::WinogradOut));
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Gemm && k.gemm.arena_packed) {
      // The chunk's transformed weights are the GEMM's slot 1, in its packed layout.
      // Its planes (groups) one after the other, each [oc tile][ic][nr]
      // floats, then 64 bytes where a plane is a multiple of 128 (the
      // transform's stores off one L1 set).
      const Value &u = p.graph.v(k.ins[1]);
      EXPECT_FALSE(u.is_const());
      ASSERT_EQ(u.rank(), 2);
      EXPECT_EQ(u.shape[0], k.gemm.groups);
      const int64_t plane_bytes = u.shape[1] * 4 - k.gemm.group_pad_bytes, nr = k.gemm.nr, G = k.gemm.groups;
      EXPECT_EQ(k.gemm.group_pad_bytes, plane_bytes % 128 == 0 ? 64 : 0);
      if (nr > 0) EXPECT_EQ(plane_bytes, (k.gemm.out_c / G + nr - 1) / nr * (k.gemm.in_c / G) * nr * 4);
    }
  // Room for every stored form: they are faster, and taken.
  Program open = with_budget(kTwoLayers, int64_t(1) << 30, WeightStorage::F32, 0, true);
  for (const MemoryTrade &t : open.trades) EXPECT_EQ(t.taken, t.wanted);
}

// The chunks of one size share their values (U_c, M_c) and so their
// kernels' code (Kernel::code_key); the smaller last chunk has its own.
TEST(Winograd, PartsOfOneSizeShareValuesAndCode) {
  std::string ir = kConv3x3;
  ir.replace(ir.find("f32[32,32,3,3]"), 14, "f32[40,32,3,3]");
  ir.replace(ir.find("f32[32] = random(2)"), 19, "f32[40] = random(2)");
  Program p = run_until(ir, "winograd", "aarch64-neon", mode(WinogradMode::F4Rt));
  std::map<std::string, std::set<int>> outs;  // code key -> the values its kernels write
  int weights = 0;
  for (const Kernel &k : p.kernels) {
    if (k.kind == KernelKind::WinogradWeights) ++weights;
    if (!k.code_key.empty()) outs[k.code_key].insert(k.out);
  }
  EXPECT_EQ(weights, 3);       // chunks of 16, 16 and 8 output channels
  EXPECT_EQ(outs.size(), 3u);  // the two full chunks' weights, GEMM and output transform
  for (const auto &[key, vals] : outs) EXPECT_EQ(vals.size(), 1u) << key;
}

TEST(Winograd, BudgetNeverExceeded) {
  Program open = with_budget(kTwoLayers, int64_t(1) << 30);
  const int64_t base = open.budgets.base_weights, all = traded(open);
  for (int64_t room : {int64_t(0), all / 7, all / 3, all / 2, all - 1, all}) {
    Program p = with_budget(kTwoLayers, base + room);
    EXPECT_LE(traded(p), room) << "room " << room;
    EXPECT_EQ(p.budgets.traded_weights, traded(p));
  }
  EXPECT_EQ(with_budget(kTwoLayers, base + all).budgets.traded_weights, all);
}

// --weights fp16: the budget counts the weights as stored, half the bytes
// (F(4,3)'s transformed weights stay float: packed_storage), and the
// default budget is 1.1x the float plan's weights as half.
TEST(Winograd, HalfWeightsCountHalfTheBytes) {
  // (The forms' trades: with this much room the half weights of F(2,3)
  // are also kept float, a "storage" trade of their own.)
  auto forms = [](const Program &p) {
    std::vector<MemoryTrade> w;
    for (const MemoryTrade &t : p.trades)
      if (t.kind == "winograd") w.push_back(t);
    return w;
  };
  const std::vector<MemoryTrade> f32 = forms(with_budget(kTwoLayers, int64_t(1) << 30));
  const Program h = with_budget(kTwoLayers, int64_t(1) << 30, WeightStorage::F16);
  const std::vector<MemoryTrade> f16 = forms(h);
  ASSERT_EQ(f16.size(), f32.size());
  const int64_t direct = 32 * 32 * 9 * 4;  // either layer's packed float weights
  bool f4 = false, f2 = false;
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_EQ(f16[i].taken, f32[i].taken);
    if (f32[i].taken == "F(4,3)") {  // float either way; the direct weights it replaces halve
      f4 = true;
      EXPECT_EQ(f16[i].bytes, f32[i].bytes + direct / 2);
    } else {
      f2 = f2 || f32[i].taken == "F(2,3)";
      EXPECT_EQ(2 * f16[i].bytes, f32[i].bytes);
    }
  }
  EXPECT_TRUE(f4 && f2) << "the test wants both forms taken";
  EXPECT_EQ(2 * h.budgets.base_weights, with_budget(kTwoLayers, int64_t(1) << 30).budgets.base_weights);
  // Default budgets: float 1.1x the model's weights; half 1.1x the float
  // plan's (its forms chosen within that) as half, so that its weights
  // stay within 0.55x of the float artifact's and the transforms, float
  // in F(4,3) either way, keep the room they have in float.
  // (A model three times the two layers' weights: room for transforms.)
  const int64_t model = 3 * 2 * 32 * 32 * 9 * 4;
  const Program d32 = with_budget(kTwoLayers, 0, WeightStorage::F32, model);
  const Program d16 = with_budget(kTwoLayers, 0, WeightStorage::F16, model);
  EXPECT_EQ(d32.budgets.weights, (int64_t)(1.1 * model));
  const int64_t plan32 = d32.budgets.base_weights + d32.budgets.traded_weights;
  EXPECT_GT(d32.budgets.traded_weights, 0) << "the test wants a float plan with transforms";
  EXPECT_EQ(d16.budgets.weights, (int64_t)(1.1 * 0.5 * (double)plan32));
  EXPECT_LE(d16.budgets.base_weights + d16.budgets.traded_weights, (int64_t)(0.55 * (double)plan32));
}

TEST(Winograd, DefaultArenaBudgetKeepsLargeTransformBuffersOut) {
  // 1.1x the bytes live without transforms: the first layer's V and M (1 MB
  // for F(2,3) at 32x32, 32 channels in and out) are several times what
  // is live around it (two 128 KB images: the peak); the second layer's
  // (about 100 KB at 10x10) fit under that peak.
  static const Target t = resolve_target("x86-64-avx2");
  Program p;
  p.graph = parse_graph(kTwoLayers);
  p.graph.limits.max_weights_bytes = int64_t(1) << 30;
  PassContext c{p, t, nullptr};
  run_pipeline(c, mode(WinogradMode::Auto), "winograd");
  ASSERT_EQ(p.trades.size(), 2u);
  EXPECT_EQ(p.trades[0].taken, "direct");
  EXPECT_NE(p.trades[0].wanted, "direct");
  EXPECT_NE(p.trades[1].taken, "direct");
  EXPECT_GT(p.budgets.base_arena, 0);
  EXPECT_EQ(p.budgets.arena, (int64_t)(1.1 * (double)p.budgets.base_arena));
}

// The second convolution's V and M (F(4,3): 12 x 12 tiles, 16 + 48
// channels, 1.3 MB) do not fit beside what is live at it under 1.1x the
// peak without transforms (the first layer's 96 x 96 images), a band of
// its tile rows does: it runs in bands, V and M one band's, and the plan's
// live bytes stay within the budget.
const char *kLateLayer = R"(
  graph opset 17
  input x: f32[1,8,96,96]
  const w0: f32[16,8,3,3] = random(1)
  const w1: f32[48,16,3,3] = random(2)
  a = Conv(x, w0) {pads=[1,1,1,1]}
  p = MaxPool(a) {kernel_shape=[2,2], strides=[2,2]}
  b = Conv(p, w1) {pads=[1,1,1,1]}
  y = Relu(b)
  output y
)";

TEST(Winograd, ArenaBudgetRunsALayerInBands) {
  static const Target t = resolve_target("aarch64-neon");
  Program p;
  p.graph = parse_graph(kLateLayer);
  p.graph.limits.max_weights_bytes = int64_t(1) << 30;
  PassContext c{p, t, nullptr};
  run_pipeline(c, mode(WinogradMode::Auto), "plan_memory");
  ASSERT_EQ(p.trades.size(), 2u);
  const MemoryTrade &late = p.trades[1];
  ASSERT_NE(late.taken, "direct");
  EXPECT_GT(late.bands, 1);
  int ins = 0, row = 0;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::WinogradIn && !k.nodes.empty() && k.nodes.front() == late.node) {
      EXPECT_EQ(k.wino.row0, row);  // the bands cover the tile rows in order
      row += (int)k.wino.rows;
      EXPECT_EQ(p.graph.v(k.out).shape[0], k.wino.rows * k.wino.tiles_w);  // V holds one band
      ++ins;
    }
  EXPECT_EQ(ins, late.bands);
  EXPECT_EQ(row, 48 / (late.taken == "F(4,3)" ? 4 : 2));
  EXPECT_LE(p.stats.lower_bound_bytes, p.budgets.arena);
  EXPECT_LE(p.stats.arena_bytes, p.budgets.arena);  // the placed arena, not only its peak
}

// --max-arena-bytes Rx: the budget is R times the plan's lower bound
// without transforms (measured under --winograd off too), the forms keep
// within it, and plan_memory refuses a placed arena above it, naming the
// ratio and the bytes it is a ratio of.
TEST(Winograd, ArenaBudgetAsARatioOfThePlanWithoutTransforms) {
  static const Target t = resolve_target("aarch64-neon");
  auto planned = [&](double ratio, WinogradMode m) {
    Program p;
    p.graph = parse_graph(kLateLayer);
    p.graph.limits.max_weights_bytes = int64_t(1) << 30;
    p.graph.limits.max_arena_ratio = ratio;
    p.graph.limits.arena_budget_given = true;
    PassContext c{p, t, nullptr};
    run_pipeline(c, mode(m), "plan_memory");
    return p;
  };
  for (double ratio : {1.05, 1.5, 3.0}) {
    Program p = planned(ratio, WinogradMode::Auto);
    ASSERT_GT(p.budgets.base_arena, 0);
    EXPECT_EQ(p.budgets.arena, (int64_t)(ratio * (double)p.budgets.base_arena)) << ratio;
    EXPECT_LE(p.stats.arena_bytes, p.budgets.arena) << ratio;
  }
  // Without transforms the placed arena is at least the lower bound: under
  // half of it is refused.
  Program off = planned(2.0, WinogradMode::Off);
  EXPECT_EQ(off.budgets.arena, 2 * off.budgets.base_arena);
  try {
    planned(0.5, WinogradMode::Off);
    ADD_FAILURE() << "an arena over 0.5x its lower bound was planned";
  } catch (const CompileError &e) {
    const std::string want = "(--max-arena-bytes 0.5x of the " + std::to_string(off.budgets.base_arena) +
                             " bytes live at the peak without transforms)";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

// The arena budget holds for the placed arena (its gaps included): with
// budgets from tight to open, whenever a Winograd form is taken the plan
// fits the budget, on each target.
TEST(Winograd, PlacedArenaWithinTheArenaBudget) {
  for (const char *target : {"x86-64-avx2", "aarch64-neon", "armv7-neon"})
    for (const char *ir : {kTwoLayers, kLateLayer, kConv3x3})
      for (double ratio : {1.02, 1.05, 1.1, 1.3}) {
        Target t = resolve_target(target);
        Program p;
        p.graph = parse_graph(ir);
        p.graph.limits.max_weights_bytes = int64_t(1) << 30;
        PassContext c{p, t, nullptr};
        run_pipeline(c, mode(WinogradMode::Off), "plan_memory");
        Program q;
        q.graph = parse_graph(ir);
        q.graph.limits.max_weights_bytes = int64_t(1) << 30;
        q.graph.limits.max_arena_bytes = (int64_t)(ratio * (double)p.stats.lower_bound_bytes);
        q.graph.limits.arena_budget_given = true;
        PassContext qc{q, t, nullptr};
        run_pipeline(qc, mode(WinogradMode::Auto), "plan_memory");
        EXPECT_LE(q.stats.arena_bytes, q.graph.limits.max_arena_bytes) << target << " " << ratio << "\n" << ir;
      }
}

// Under --precision fp16 the arena budget is the plan's as half_inputs
// will leave it without transforms (the tensors only half products read
// stored as half), and the forms keep the placed arena within a ratio of
// that plan, not of the larger float one.
TEST(Winograd, HalfPrecisionKeepsTheArenaOfItsHalfPlan) {
  const char *ir = R"(
  graph opset 17
  input x: f32[1,8,32,32]
  const w1: f32[32,8,3,3] = random(1)
  const w2: f32[32,32,3,3] = random(2)
  const w3: f32[8,32,3,3] = random(3)
  a = Conv(x, w1) {pads=[1,1,1,1]}
  b = Conv(a, w2) {pads=[1,1,1,1]}
  c = Conv(b, w3) {pads=[1,1,1,1]}
  output c
)";
  const Target t = half_target("aarch64-neon-fp16");
  auto compiled = [&](WinogradMode m, double ratio, Precision pr = Precision::F16) {
    PassOptions o = mode(m);
    o.winograd.precision = o.pack.precision = pr;
    o.winograd.weights = o.pack.weights = WeightStorage::F16;
    return run_until_limited(ir, "plan_memory", t, o, [&](Limits &l) {
      l.max_weights_bytes = int64_t(1) << 30;
      if (ratio > 0) l.max_arena_ratio = ratio;
    });
  };
  const Program off = compiled(WinogradMode::Off, 0);
  ASSERT_LT(off.stats.lower_bound_bytes, compiled(WinogradMode::Off, 0, Precision::F32).stats.lower_bound_bytes)
      << "the test wants half tensors";
  for (double ratio : {1.0, 1.1, 1.5}) {
    const Program p = compiled(WinogradMode::Auto, ratio);
    EXPECT_EQ(p.budgets.base_arena, off.stats.lower_bound_bytes) << ratio;
    EXPECT_LE(p.stats.arena_bytes, (int64_t)(ratio * (double)off.stats.lower_bound_bytes)) << ratio;
  }
  EXPECT_GT(count_kernels(compiled(WinogradMode::Auto, 1.5), KernelKind::WinogradIn), 0) << "the test wants forms";
}

TEST(Winograd, ForcedFormsPastTheWeightsCapAreRefused) {
  static const Target t = resolve_target("x86-64-avx2");
  Program p;
  p.graph = parse_graph(kTwoLayers);
  p.graph.limits.weights_safety_cap = 100000;  // F(4,3): 36 * 32 * 32 * 4 = 147456 bytes per layer
  PassContext c{p, t, nullptr};
  try {
    run_pipeline(c, mode(WinogradMode::F4), "winograd");
    FAIL() << "forced F(4,3) past the cap compiled";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("--max-weights-bytes"), std::string::npos) << e.what();
  }
}

// An int8 convolution (QGemm) as F(2,3) in integers: int16 V and
// weights, an int16 GEMM into int32 M; the weights 4 G g G^T exactly.
TEST(Winograd, Int8F2IsAnInt16Gemm) {
  Program p = run_until(qdq_conv(16, true), "winograd", "x86-64-avx2", mode(WinogradMode::F2));
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradIn), 1) << describe(p);
  ASSERT_EQ(count_kernels(p, KernelKind::QGemm), 1);
  const Kernel &in = *std::find_if(p.kernels.begin(), p.kernels.end(),
                                   [](const Kernel &k) { return k.kind == KernelKind::WinogradIn; });
  const Kernel &mm =
      *std::find_if(p.kernels.begin(), p.kernels.end(), [](const Kernel &k) { return k.kind == KernelKind::QGemm; });
  EXPECT_EQ(in.gemm.x_zero, 128);  // the input transform subtracts it
  EXPECT_EQ(p.graph.v(in.out).dtype, DType::I16);
  EXPECT_TRUE(mm.gemm.i16);
  EXPECT_EQ(mm.gemm.groups, 16);
  EXPECT_EQ(mm.gemm.x_zero, 0);
  EXPECT_EQ(p.graph.v(mm.out).dtype, DType::I32);
  const Value &u = p.graph.v(mm.gemm.weight);
  ASSERT_EQ(u.dtype, DType::I16);
  ASSERT_EQ(u.shape, (Shape{16 * 8, 16, 1, 1}));
  // U[q = x*4 + y][oc][ic] = sum (2G)[x][r] g[r][v] (2G)[y][v]
  Program direct = run_until(qdq_conv(16, true), "winograd", "x86-64-avx2", mode(WinogradMode::Off));
  const Kernel &conv = *std::find_if(direct.kernels.begin(), direct.kernels.end(),
                                     [](const Kernel &k) { return k.kind == KernelKind::QGemm; });
  const int8_t *g = direct.graph.v(conv.gemm.weight).data->as<int8_t>();
  const int16_t *uv = (const int16_t *)u.data->bytes.data();
  const int G2[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};
  for (int oc : {0, 7})
    for (int ic : {0, 15})
      for (int x = 0; x < 4; ++x)
        for (int y = 0; y < 4; ++y) {
          int want = 0;
          for (int r = 0; r < 3; ++r)
            for (int v = 0; v < 3; ++v) want += G2[x][r] * g[(oc * 16 + ic) * 9 + r * 3 + v] * G2[y][v];
          EXPECT_EQ(uv[((x * 4 + y) * 8 + oc) * 16 + ic], want) << oc << " " << ic << " " << x << " " << y;
        }
  // F(4,3) has no integer form: the layer stays direct.
  EXPECT_EQ(count_kernels(run_until(qdq_conv(16, true), "winograd", "x86-64-avx2", mode(WinogradMode::F4)),
                          KernelKind::WinogradIn),
            0);
}

// The cost model takes int8 F(2,3) where the target's int16 products pay
// (x86 without VNNI), not where the direct int8 GEMM has dot products.
TEST(Winograd, Int8WhereItsInt16ProductsPay) {
  std::string conv = qdq_conv(32, true);  // 32 -> 32 channels over 24x24
  for (const char *from : {"i8[8,", "f32[8]", "i8[8]"}) {
    std::string to = from;
    to.replace(to.rfind('8'), 1, "32");
    for (size_t at; (at = conv.find(from)) != std::string::npos;) conv.replace(at, std::string(from).size(), to);
  }
  conv.replace(conv.find(",12,12]"), 7, ",24,24]");
  auto winograd_layers = [&](const char *target) {
    Program p = run_until_limited(conv, "winograd", resolve_target(target), mode(WinogradMode::Auto), [](Limits &l) {
      l.max_weights_bytes = int64_t(1) << 30;
      l.arena_budget_given = true;
    });
    return count_kernels(p, KernelKind::WinogradIn);
  };
  EXPECT_EQ(winograd_layers("x86-64-avx2"), 1);
  EXPECT_EQ(winograd_layers("x86-64-avx512-vnni"), 0);
}

// With its weights transformed at run time, an int8 chunk's U is int16
// pairs of input channels in the GEMM's packed quads.
TEST(Winograd, Int8RuntimeWeightsArePackedInt16Pairs) {
  Program p = run_until(qdq_conv(15, true), "pack_weights", "x86-64-avx2", mode(WinogradMode::F2Rt));
  ASSERT_EQ(count_kernels(p, KernelKind::WinogradWeights), 1) << describe(p);
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::QGemm) {
      EXPECT_TRUE(k.gemm.i16 && k.gemm.arena_packed);
      const Value &u = p.graph.v(k.ins[1]);
      EXPECT_EQ(u.dtype, DType::I16);
      // 15 channels: 8 pairs; each plane [oc tile][pair][nr][2] then 64 bytes (a multiple of 128 bytes)
      const int64_t plane = (8 + k.gemm.nr - 1) / k.gemm.nr * 8 * k.gemm.nr * 2;
      ASSERT_EQ(plane * 2 % 128, 0);
      EXPECT_EQ(k.gemm.group_pad_bytes, 64);
      EXPECT_EQ(u.shape, (Shape{16, plane + 32}));
    }
}

TEST(Winograd, ForcedFormsAreNotBudgeted) {
  Program p = run_until(kTwoLayers, "winograd", "x86-64-avx2", mode(WinogradMode::F4));
  EXPECT_EQ(count_kernels(p, KernelKind::WinogradIn), 2);
  EXPECT_TRUE(p.trades.empty());
}

}  // namespace
