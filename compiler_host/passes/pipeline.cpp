// pipeline.cpp — the whole compilation as one ordered list of passes.
#include "passes/pass.h"

namespace tinyrt {

namespace {

// A pass that reads no options.
template <void (*F)(PassContext &)>
void plain(PassContext &c, const PassOptions &) {
  F(c);
}

}  // namespace

const std::vector<Pass> &pipeline() {
  static const std::vector<Pass> passes = {
      {"infer_and_fold", "validate ops, infer shapes, fold constant subgraphs",
       [](PassContext &c, const PassOptions &o) { infer_and_fold(c, o.infer_and_fold); }},
      {"quantize_dynamic",
       "--quantize dynamic: float products and LSTMs as int8 weights, activations quantized at run time",
       [](PassContext &c, const PassOptions &o) { quantize_dynamic(c, o.quantize); }},
      {"quantize_static",
       "--quantize static: QuantizeLinear/DequantizeLinear from calibrated ranges around Conv, Gemm and MatMul",
       [](PassContext &c, const PassOptions &o) { quantize_static(c, o.quantize); }},
      {"fuse_qdq", "quantized (QDQ) convolutions and products as integer ops", plain<fuse_qdq>},
      {"fold_batchnorm", "fold BatchNormalization into the preceding Conv/Gemm", plain<fold_batchnorm>},
      {"lower_to_kernels", "lower each op to element expressions (one kernel each)", plain<lower_to_kernels>},
      {"bypass_views", "readers of a view with its value's shape (Identity) read the value", plain<bypass_views>},
      {"fuse_epilogues", "fuse bias, activations and residual adds into GEMM/conv kernels", plain<fuse_epilogues>},
      {"pad_conv_rows", "convolutions over few channels (int8; float on NEON) read padded channels-last rows",
       plain<pad_conv_rows>},
      {"fuse_elementwise", "inline elementwise producers into their consumer", plain<fuse_elementwise>},
      {"fuse_residuals", "a residual add (quantized or float) into the GEMM/conv that feeds it", plain<fuse_residuals>},
      {"fold_epilogue_constants", "requantize by multiply-add, per-channel constants as tables",
       plain<fold_epilogue_constants>},
      {"tabulate_byte_functions", "a function of one 8-bit input element as a 256-entry table",
       plain<tabulate_byte_functions>},
      {"choose_layouts", "channels-last for convolutions, physical order of constants", plain<choose_layouts>},
      {"span_rows", "convolution GEMM tiles run across output rows (no short tile at each row's end)",
       plain<span_rows>},
      {"winograd",
       "the weights budget's plan, one knapsack over every weight's options (Winograd form, GEMM tile, half or "
       "float storage); 3x3 stride-1 convolutions as Winograd transforms around a grouped GEMM where it chose",
       [](PassContext &c, const PassOptions &o) { winograd(c, o.winograd); }},
      {"widen_int8_inputs",
       "x86 without VNNI: int8 convolutions whose weights vpmaddubsw cannot take as bytes multiply int16 pairs "
       "over a widened copy of their input where the arena budget has room; narrow first layers exactly in float",
       plain<widen_int8_inputs>},
      {"half_inputs",
       "--precision fp16: tensors that only half products read stored as half; depthwise convolutions over them "
       "multiply in half",
       [](PassContext &c, const PassOptions &o) { half_inputs(c, o.pack); }},
      {"pack_weights", "choose register tiles and task splits, pack GEMM weights",
       [](PassContext &c, const PassOptions &o) { pack_weights(c, o.pack); }},
      {"widen_packed_weights",
       "the arena budget's room holds wider copies of packed weights (half as float; int8 of int16 pairs as int16), "
       "widened once per run",
       [](PassContext &c, const PassOptions &o) { widen_packed_weights(c, o.pack); }},
      {"split_recurrent", "large recurrent steps in parts of hidden units that threads share", plain<split_recurrent>},
      {"prove_bounds", "every load proved inside its tensor, scheduled kernels' geometry checked against their tensors",
       plain<prove_bounds>},
      {"plan_memory", "liveness intervals -> arena offsets", plain<plan_memory>},
  };
  return passes;
}

void run_pipeline(PassContext &c, const PassOptions &o, const std::string &last,
                  const std::function<void(const char *name, bool done)> &observe) {
  for (const Pass &pass : pipeline()) {
    if (observe) observe(pass.name, false);
    pass.run(c, o);
    verify_program(c.program, pass.name);
    if (observe) observe(pass.name, true);
    if (last == pass.name) return;
  }
  if (!last.empty()) fail_internal("run_pipeline: no pass named '" + last + "'");
}

void verify_program(const Program &p, const char *after) {
  if (p.kernels.empty() && p.graph.nodes.empty()) return;
  std::vector<bool> defined(p.graph.values.size(), false);
  for (int v : p.graph.inputs) defined[v] = true;
  for (size_t i = 0; i < p.graph.values.size(); ++i)
    if (p.graph.values[i].is_const()) defined[i] = true;
  auto is_def = [&](int v) { return defined[p.root(v)]; };
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    std::string where = std::string("after ") + after + ": kernel " + std::to_string(i) + " (" + k.label + ")";
    if (!k.expr && has_expr(k.kind)) fail_internal(where + " has no expression");
    if (k.kind == KernelKind::Call && (k.call.symbol.empty() || k.call.outs.empty() || k.call.outs[0] != k.out))
      fail_internal(where + " is a call without symbol or outputs");
    for (int v : k.ins)
      if (!is_def(v)) fail_internal(where + " reads '" + p.graph.v(v).name + "' before it is written");
    if (k.guard >= 0) {
      const Guard &gd = p.graph.guards.at(k.guard);
      if (!is_def(gd.eff) || p.graph.v(gd.eff).dtype != DType::Bool || p.graph.v(gd.eff).numel() != 1)
        fail_internal(where + " is guarded by a condition not computed before it, or not one bool");
    }
    if (k.kind == KernelKind::Fail && (k.guard < 0 || k.message.empty()))
      fail_internal(where + " is a branch error without guard or message");
    int slots = (int)k.ins.size();
    // Generated code indexes with 32 bits: no tensor may outgrow that.
    for (int v : k.ins) p.graph.check_size(p.graph.v(v).shape, where + ": input '" + p.graph.v(v).name + "'");
    p.graph.check_size(p.graph.v(k.out).shape, where + ": output '" + p.graph.v(k.out).name + "'");
    if (k.expr)
      visit(k.expr, [&](const Expr &e) {
        if (e.op == EOp::Load && (e.id < 0 || e.id >= slots)) fail_internal(where + " loads a missing slot");
        if (e.op == EOp::Load && (int)e.a.size() != p.graph.v(k.ins[e.id]).rank())
          fail_internal(where + " loads with the wrong rank");
      });
    defined[p.root(k.out)] = true;
    for (int o : k.call.outs) {
      p.graph.check_size(p.graph.v(o).shape, where + ": output '" + p.graph.v(o).name + "'");
      defined[p.root(o)] = true;
    }
  }
}

}  // namespace tinyrt
