// passes/widen_int8_inputs.cpp: on x86 without VNNI, a 1x1 int8
// convolution whose weights are not byte pairs multiplies int16 pairs over
// a widened copy of its input, where the arena budget has room.
#include "pass_test.h"
#include "qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// Weights over the int8 range without -128: (i * 37) % 255 - 127, for
// weight element i.
std::string wide_weights(int n) {
  std::string r = "[";
  for (int i = 0; i < n; ++i) r += (i ? "," : "") + std::to_string((i * 37) % 255 - 127);
  return r + "]";
}

// A QDQ 1x1 convolution, stride `stride`, over `ic` channels of a 12 x 12
// image to `oc`, its weights `weights` (default wide_weights; fill(3) is
// byte pairs).
std::string pointwise(int ic, int oc, int stride, std::string weights = "") {
  if (weights.empty()) weights = wide_weights(ic * oc);
  const std::string s = std::to_string(stride);
  return qdq_conv_graph(ic, oc, ic, 1, weights, false, "strides=[" + s + "," + s + "]", true);
}

PassOptions mode_off() {
  PassOptions o;
  o.winograd.mode = WinogradMode::Off;
  return o;
}

TEST(WidenInt8Inputs, SignedBytesLayerMultipliesInt16PairsOverAWidenedCopy) {
  Program p = run_until(pointwise(15, 48, 2), "widen_int8_inputs");
  const Kernel *conv = only(p, KernelKind::QGemm);
  ASSERT_NE(conv, nullptr) << describe(p);
  const GemmSpec &s = conv->gemm;
  EXPECT_TRUE(s.i16);
  EXPECT_TRUE(s.w8);
  EXPECT_EQ(s.x_zero, 0);
  EXPECT_EQ(s.in_c, 16);  // 15 channels padded to whole pairs
  EXPECT_EQ(s.stride_h, 1);
  EXPECT_EQ(s.in_h, 6);
  // The copy: int16, the pixels the stride reads, channels-last.
  const Kernel *copy = nullptr;
  for (const Kernel &k : p.kernels)
    if (k.out == conv->ins[0]) copy = &k;
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->kind, KernelKind::Loop);
  EXPECT_EQ(copy->label, "WidenInt8Input");
  const Value &x16 = p.graph.v(copy->out);
  EXPECT_EQ(x16.dtype, DType::I16);
  EXPECT_EQ(x16.shape, (Shape{1, 6, 6, 16}));
  // The weights keep their int8 bytes, the padding channel zero.
  const Value &w = p.graph.v(s.weight);
  ASSERT_EQ(w.dtype, DType::I8);
  ASSERT_EQ(w.shape, (Shape{48, 16, 1, 1}));
  Program direct = run_until(pointwise(15, 48, 2), "winograd");
  const int8_t *was = direct.graph.v(only(direct, KernelKind::QGemm)->gemm.weight).data->as<int8_t>();
  const int8_t *now = w.data->as<int8_t>();
  for (int oc : {0, 47}) {
    for (int ic = 0; ic < 15; ++ic) EXPECT_EQ(now[oc * 16 + ic], was[oc * 15 + ic]);
    EXPECT_EQ(now[oc * 16 + 15], 0);
  }
  // A memory trade with the copy's bytes.
  ASSERT_EQ(p.trades.size(), 1u);
  EXPECT_EQ(p.trades[0].kind, "int16-input");
  EXPECT_EQ(p.trades[0].taken, "int16");
  EXPECT_EQ(p.trades[0].arena_bytes, 6 * 6 * 16 * 2);
  // The packing: pairs of bytes per output channel, no starts.
  Program packed = run_until(pointwise(15, 48, 2), "pack_weights");
  const Kernel *pk = only(packed, KernelKind::QGemm);
  ASSERT_NE(pk, nullptr);
  EXPECT_EQ(pk->gemm.packed_bias, -1);
  const int64_t NR = pk->gemm.nr, tiles = (48 + NR - 1) / NR;
  EXPECT_EQ((int64_t)packed.graph.v(pk->gemm.packed).data->bytes.size(), tiles * 8 * NR * 2);
  const int8_t *pw = packed.graph.v(pk->gemm.packed).data->as<int8_t>();
  EXPECT_EQ(pw[(3 * NR + 5) * 2 + 1], was[5 * 15 + 7]);  // channel 5, inputs 6 and 7: pair 3, second byte
}

TEST(WidenInt8Inputs, OtherLayersAndTargetsKeepTheirForm) {
  // Dot products (VNNI, NEON): no copy.
  for (const char *t : {"x86-64-avx512-vnni", "x86-64-avx2-vnni", "aarch64-neon", "armv7-neon"})
    EXPECT_EQ(count_kernels(run_until(pointwise(16, 48, 1), "widen_int8_inputs", t), KernelKind::Loop),
              count_kernels(run_until(pointwise(16, 48, 1), "winograd", t), KernelKind::Loop))
        << t;
  // Byte pairs (7-bit weights) multiply as bytes; few output channels
  // amortize no copy.
  for (const std::string &ir : {pointwise(16, 48, 1, "fill(3)"), pointwise(16, 8, 1)}) {
    Program p = run_until(ir, "widen_int8_inputs");
    ASSERT_NE(only(p, KernelKind::QGemm), nullptr);
    EXPECT_FALSE(only(p, KernelKind::QGemm)->gemm.i16);
    EXPECT_TRUE(p.trades.empty());
  }
  // AVX-512 without VNNI (widened products otherwise) takes it too.
  EXPECT_TRUE(only(run_until(pointwise(16, 48, 1), "widen_int8_inputs", "x86-64-avx512"), KernelKind::QGemm)->gemm.i16);
}

// A padded 3x3 convolution reads the whole input widened, its geometry
// kept, its padding reading the copy's zeros.
TEST(WidenInt8Inputs, PaddedConvolutionReadsTheWholeInputWidened) {
  std::string ir = pointwise(9, 24, 2, wide_weights(24 * 9 * 9));
  ir.replace(ir.find("i8[24,9,1,1]"), 12, "i8[24,9,3,3]");
  ir.replace(ir.find("{strides=[2,2]}"), 15, "{strides=[2,2], pads=[1,1,1,1]}");
  Program p = run_until(ir, "widen_int8_inputs", "x86-64-avx2", mode_off());
  const Kernel *conv = only(p, KernelKind::QGemm);
  ASSERT_NE(conv, nullptr) << describe(p);
  const GemmSpec &s = conv->gemm;
  ASSERT_TRUE(s.i16 && s.w8);
  EXPECT_EQ(p.graph.v(conv->ins[0]).shape, (Shape{1, 12, 12, 10}));
  EXPECT_EQ(s.stride_h, 2);
  EXPECT_EQ(s.pad_t, 1);
  EXPECT_EQ(s.in_h, 12);
  EXPECT_EQ(s.k_h, 3);
  const Value &w = p.graph.v(s.weight);
  ASSERT_EQ(w.shape, (Shape{24, 10, 3, 3}));
  const int8_t *now = w.data->as<int8_t>();
  EXPECT_EQ(now[(3 * 10 + 4) * 9 + 7], (3 * 81 + 4 * 9 + 7) * 37 % 255 - 127);
  EXPECT_EQ(now[(3 * 10 + 9) * 9 + 7], 0);
}

// A first layer over an RGB image (pad_conv_rows' padded copy, each kernel
// row one run of inputs).
std::string first_layer(int oc) {
  const std::string O = std::to_string(oc);
  std::string ir = pointwise(3, oc, 2, wide_weights(oc * 3 * 9));
  ir.replace(ir.find("i8[" + O + ",3,1,1]"), 10 + O.size(), "i8[" + O + ",3,3,3]");
  ir.replace(ir.find("{strides=[2,2]}"), 15, "{strides=[2,2], pads=[1,1,1,1]}");
  return ir;
}

// Of at least Target::int16_run_min_out_c channels, it has its copy made
// int16 in place, 4 channels.
TEST(WidenInt8Inputs, FirstLayerPaddedCopyBecomesInt16) {
  const std::string ir = first_layer(64);
  Program before = run_until(ir, "winograd", "x86-64-avx2", mode_off());
  Program p = run_until(ir, "widen_int8_inputs", "x86-64-avx2", mode_off());
  EXPECT_EQ(p.kernels.size(), before.kernels.size());  // no kernel added
  const Kernel *conv = only(p, KernelKind::QGemm);
  ASSERT_NE(conv, nullptr) << describe(p);
  const GemmSpec &s = conv->gemm;
  ASSERT_TRUE(s.k_run && s.i16 && s.w8);
  EXPECT_EQ(s.in_c, 4);
  const Value &x = p.graph.v(conv->ins[0]);
  EXPECT_EQ(x.dtype, DType::I16);
  EXPECT_EQ(x.shape, (Shape{1, 4, 13, 13}));  // 12 + 1 padded rows and columns the windows read
  Program packed = run_until(ir, "pack_weights", "x86-64-avx2", mode_off());
  const Kernel *pk = only(packed, KernelKind::QGemm);
  ASSERT_NE(pk, nullptr);
  const int64_t NR = pk->gemm.nr;
  // [oc tile][kh][kw * 4 channels / 2 pairs][nr][2]: channel 5's (kh 1, kw 2, ic 1) at pair 4, second byte.
  const int8_t *pw = packed.graph.v(pk->gemm.packed).data->as<int8_t>();
  EXPECT_EQ(pw[((1 * 6 + 4) * NR + 5) * 2 + 1], ((5 * 3 + 1) * 9 + 1 * 3 + 2) * 37 % 255 - 127);
  EXPECT_EQ(pw[((1 * 6 + 5) * NR + 5) * 2 + 1], 0);  // kw 2's padding channel
}

// Fewer output channels keep signed bytes: the added padding channel and
// the short sums cost more than the pairs save (x86_64.cpp's figures).
TEST(WidenInt8Inputs, NarrowFirstLayerKeepsSignedBytes) {
  Program p = run_until(first_layer(48), "widen_int8_inputs", "x86-64-avx2", mode_off());
  const Kernel *conv = only(p, KernelKind::QGemm);
  ASSERT_NE(conv, nullptr) << describe(p);
  EXPECT_TRUE(conv->gemm.k_run);
  EXPECT_FALSE(conv->gemm.i16);
  EXPECT_EQ(p.graph.v(conv->ins[0]).dtype, DType::U8);
}

// Up to Target::float_run_max_out_c channels it computes in float, exactly:
// the padded copy holds float(x - x_zero), the weights are its int8 values
// as floats, and the epilogue reads the float sum; where the arena budget
// has room for the float copy (this small graph's default has not).
TEST(WidenInt8Inputs, NarrowerFirstLayerIsExactInFloat) {
  const std::string ir = first_layer(32);
  const Target t = resolve_target("x86-64-avx2");
  auto room = [](Limits &l) {
    l.max_arena_bytes = 1 << 20;
    l.arena_budget_given = true;
  };
  Program before = run_until(ir, "winograd", "x86-64-avx2", mode_off());
  Program refused = run_until(ir, "widen_int8_inputs", "x86-64-avx2", mode_off());
  ASSERT_NE(only(refused, KernelKind::QGemm), nullptr);
  ASSERT_EQ(refused.trades.size(), 1u);
  EXPECT_EQ(refused.trades[0].wanted, "float");
  EXPECT_EQ(refused.trades[0].taken, "signed-bytes");
  Program p = run_until_limited(ir, "widen_int8_inputs", t, mode_off(), room);
  EXPECT_EQ(p.kernels.size(), before.kernels.size());
  EXPECT_EQ(count_kernels(p, KernelKind::QGemm), 0);
  const Kernel *conv = only(p, KernelKind::Gemm);
  ASSERT_NE(conv, nullptr) << describe(p);
  const GemmSpec &s = conv->gemm;
  EXPECT_TRUE(s.k_run);
  EXPECT_EQ(s.x_zero, 0);
  const Value &x = p.graph.v(conv->ins[0]);
  EXPECT_EQ(x.dtype, DType::F32);
  EXPECT_EQ(x.shape, (Shape{1, 3, 13, 13}));
  const Value &w = p.graph.v(s.weight);
  ASSERT_EQ(w.dtype, DType::F32);
  ASSERT_EQ(w.shape, (Shape{32, 3, 3, 3}));
  const int8_t *was = before.graph.v(only(before, KernelKind::QGemm)->gemm.weight).data->as<int8_t>();
  for (int i : {0, 5, 863}) EXPECT_EQ(w.data->as<float>()[i], (float)was[i]);
  bool int_acc = false;
  visit(s.epilogue, [&](const Expr &e) { int_acc = int_acc || (e.op == EOp::Acc && e.type != DType::F32); });
  EXPECT_FALSE(int_acc);
  // The copy: float(x - 128), 0 where it pads.
  const Kernel *copy = nullptr;
  for (const Kernel &k : p.kernels)
    if (k.out == conv->ins[0]) copy = &k;
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->expr->type, DType::F32);
  ASSERT_EQ(p.trades.size(), 1u);
  EXPECT_EQ(p.trades[0].kind, "float-input");
  EXPECT_EQ(p.trades[0].arena_bytes, 3 * 13 * 13 * 3);
  // With dot products (VNNI, NEON) it stays an int8 product.
  for (const char *name : {"x86-64-avx512-vnni", "x86-64-avx2-vnni", "aarch64-neon"})
    EXPECT_NE(
        only(run_until_limited(ir, "widen_int8_inputs", resolve_target(name), mode_off(), room), KernelKind::QGemm),
        nullptr)
        << name;
}

TEST(WidenInt8Inputs, TheArenaBudgetDecides) {
  // The bytes live at the convolution's step (its input and output, 9216)
  // and the copy's 4608 against a budget below their sum.
  Target t = resolve_target("x86-64-avx2");
  const std::vector<int64_t> live = live_bytes(run_until(pointwise(16, 48, 1), "winograd"));
  ASSERT_EQ(live.size(), 3u);
  ASSERT_EQ(live[1], 9216);
  Program fits = run_until_limited(pointwise(16, 48, 1), "widen_int8_inputs", t, {}, [](Limits &l) {
    l.max_arena_bytes = 9216 + 4608;
    l.arena_budget_given = true;
  });
  EXPECT_TRUE(only(fits, KernelKind::QGemm)->gemm.i16);
  Program p = run_until_limited(pointwise(16, 48, 1), "widen_int8_inputs", t, {}, [](Limits &l) {
    l.max_arena_bytes = 9216 + 4607;
    l.arena_budget_given = true;
  });
  const Kernel *conv = only(p, KernelKind::QGemm);
  ASSERT_NE(conv, nullptr);
  EXPECT_FALSE(conv->gemm.i16);
  ASSERT_EQ(p.trades.size(), 1u);
  EXPECT_EQ(p.trades[0].wanted, "int16");
  EXPECT_NE(p.trades[0].taken, "int16");
  EXPECT_EQ(p.trades[0].arena_bytes, 0);
}

// A first layer's float copy is its padded copy made wider in place, so it
// is live at the padding kernel's step too, beside that kernel's input
// (there the quantized image; in mobilenet_v3_small int8 the float image,
// whose arena the conv's step alone let grow to 1.6x its budget): the
// budget holds both steps. 8 output channels: the padding's step is the
// larger.
TEST(WidenInt8Inputs, AFirstLayersFloatCopyFitsThePaddingStepToo) {
  const std::string ir = first_layer(8);
  const Target t = resolve_target("x86-64-avx2");
  const Program before = run_until(ir, "winograd", "x86-64-avx2", mode_off());
  const std::vector<int64_t> live = live_bytes(before);
  size_t conv = 0, pad = 0;
  for (size_t i = 0; i < before.kernels.size(); ++i)
    if (before.kernels[i].kind == KernelKind::QGemm) conv = i;
  for (size_t i = 0; i < before.kernels.size(); ++i)
    if (before.kernels[i].out == before.kernels[conv].ins[0]) pad = i;
  ASSERT_LT(pad, conv);
  ASSERT_GT(live[pad], live[conv]);  // the float input is live there
  const int64_t copy = 3 * 3 * 13 * 13;
  auto at = [&](int64_t budget) {
    return run_until_limited(ir, "widen_int8_inputs", t, mode_off(), [&](Limits &l) {
      l.max_arena_bytes = budget;
      l.arena_budget_given = true;
    });
  };
  EXPECT_EQ(only(at(1 << 20), KernelKind::QGemm), nullptr);  // float
  // Whatever the budget, the placed arena keeps within it (or within the
  // plan without copies): a copy the steps' bytes allow can still be
  // refused for the placement's gaps.
  for (int64_t b : {live[pad] + copy, live[pad] + copy + 256, live[conv] + copy})
    EXPECT_LE(planned_arena(at(b)), std::max(b, planned_arena(before))) << b;
  const Program p = at(live[pad] + copy - 1);
  ASSERT_NE(only(p, KernelKind::QGemm), nullptr);
  ASSERT_EQ(p.trades.size(), 1u);
  EXPECT_EQ(p.trades[0].wanted, "float");
  EXPECT_EQ(p.trades[0].arena_bytes, 0);
}

}  // namespace
