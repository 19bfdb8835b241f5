// codegen/module_emitter.cpp: the whole model as one module. Here: whether
// its steps run on the calling thread alone, decided per layer (steps of
// the same ONNX nodes counted once), not per step.
#include <set>

#include "codegen/module_emitter.h"
#include "passes/pass_test.h"
#include "passes/qdq_models.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// A QDQ 1x1 convolution of 16 channels to 48 on x86 without VNNI: its
// input widened to int16 by a copy of its own (widen_int8_inputs), a step
// computing the convolution's nodes as the convolution does.
Program widened_conv() {
  std::string w = "[";
  for (int i = 0; i < 16 * 48; ++i) w += (i ? "," : "") + std::to_string((i * 37) % 255 - 127);
  return run_until(qdq_conv_graph(16, 48, 16, 1, w + "]", false, "", true), "plan_memory", "x86-64-avx2");
}

bool all_serial(const ModuleResult &r) {
  for (bool s : r.serial)
    if (!s) return false;
  return !r.serial.empty();
}

TEST(ModuleEmitter, SerialStepsAreDecidedPerLayer) {
  const Program p = widened_conv();
  const Target t = resolve_target("x86-64-avx2");
  std::set<std::vector<std::string>> layers;
  for (const Kernel &k : p.kernels) layers.insert(k.nodes);
  ASSERT_LT(layers.size(), p.kernels.size()) << "no layer of several steps: the case does not test the rule";
  ModuleOptions o;
  o.model_name = "m";
  o.serial_step_ops = 0;
  const ModuleResult shared = emit_module(p, t, o);
  double total = 0;
  for (int64_t ops : shared.ops) total += (double)ops;
  const double per_step = total / (double)p.kernels.size(), per_layer = total / (double)layers.size();
  ASSERT_GT(per_layer, per_step + 2);
  // A threshold between the two means: the layers are above it, so the
  // steps are shared, though they average below it.
  o.serial_step_ops = (int64_t)((per_step + per_layer) / 2);
  EXPECT_FALSE(all_serial(emit_module(p, t, o)));
  // Above the layers' mean: every step on the calling thread.
  o.serial_step_ops = (int64_t)per_layer + 1;
  EXPECT_TRUE(all_serial(emit_module(p, t, o)));
}

}  // namespace
