// pass.h — a compiler pass: a named function over the Program. The
// pipeline (pipeline.cpp) is one ordered list of them.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "target/target.h"
#include "ir/program.h"

namespace tinyrt {

struct PassContext {
  Program &program;
  const Target &target;
  std::ostream *log = nullptr;  // verbose notes, or nullptr
  // Expand ops that have an ONNX function body into it even when tinyrt
  // implements them natively (tests the expansion; ops without a native
  // implementation are always expanded when they have a body).
  bool prefer_function_bodies = false;
  Quantize quantize = Quantize::None;
  const CalibrationRanges *ranges = nullptr;  // Quantize::Static
  WinogradMode winograd = WinogradMode::Auto;
};

struct Pass {
  const char *name;
  const char *summary;
  void (*run)(PassContext &);
};

// The passes, in the order they run.
const std::vector<Pass> &pipeline();

// Structural checks of the kernel-level IR (every kernel input is defined
// before use, slots are in range, ...). Throws an internal error.
void verify_program(const Program &p, const char *after_pass);

// Pass entry points (one per file in passes/).
void infer_and_fold(PassContext &c);
void quantize_dynamic(PassContext &c);
void quantize_static(PassContext &c);
// The tensors whose ranges quantize_static needs (value ids of graph g
// after infer_and_fold): the float activation input of every Conv, Gemm
// and MatMul with constant weights.
std::vector<int> static_quantization_tensors(const Graph &g);
void fuse_qdq(PassContext &c);
void fold_batchnorm(PassContext &c);
void lower_to_kernels(PassContext &c);
void bypass_views(PassContext &c);
void fuse_epilogues(PassContext &c);
void pad_conv_rows(PassContext &c);
void fuse_elementwise(PassContext &c);
void fuse_residuals(PassContext &c);
void fold_epilogue_constants(PassContext &c);
void tabulate_byte_functions(PassContext &c);
void choose_layouts(PassContext &c);
void winograd(PassContext &c);
void pack_weights(PassContext &c);
void split_recurrent(PassContext &c);
void prove_bounds(PassContext &c);
void plan_memory(PassContext &c);

}  // namespace tinyrt
