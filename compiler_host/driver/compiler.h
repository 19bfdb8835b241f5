// compiler.h — the compiler as a library: ONNX file in, artifact out.
// tinyrt-compile, tinyrt-onnx-test and tinyrt-perf are thin wrappers.
#pragma once

#include <ostream>
#include <functional>
#include <string>
#include <vector>

#include "target/target.h"
#include "frontend/onnx_import.h"
#include "ir/program.h"
#include "passes/pass.h"

namespace tinyrt {

struct CompileOptions {
  std::string target = "host";
  std::string name;  // C identifier for symbols; default from the file name
  ImportOptions import;
  std::string dump_dir;                        // debug dumps (kernels, IR, assembly) when set
  std::ostream *log = nullptr;                 // progress, one line per pass
  bool prefer_function_bodies = false;         // see PassContext
  std::string gemm_tile;                       // "MR,NV[,UNROLL]": every GEMM uses this tile (experiments)
  std::string task_split;                      // "ORDER[,TASKS]": every GEMM's task split (ir/task_split.h)
  Quantize quantize = Quantize::None;          // --quantize dynamic|static
  int weight_bits = 8;                         // --weight-bits 8|7: the quantizers' int8 weights
  WinogradMode winograd = WinogradMode::Auto;  // --winograd auto|off|f2|f4|f2rt|f4rt
  int64_t winograd_bands = 0;                  // --winograd-bands N (0: the arena budget decides)
  WeightStorage weights = WeightStorage::F32;  // --weights fp32|fp16
  // --precision fp32|fp16: fp16 (targets with half arithmetic) computes the
  // float GEMMs in half, and stores GEMM and depthwise weights as half
  // (stored_weights); recurrent weights too only with --weights fp16.
  Precision precision = Precision::F32;
  std::string tuning;  // --tuning FILE (driver/tuning.h): tiles measured by tinyrt-tune
  // --check-addresses: generated code tests every access against its
  // kernel's tensors and traps outside them (codegen/address_checks.h).
  bool check_addresses = false;
  // --require-proof: refuse a model whose generated code has an access the
  // bounds proof cannot bound (codegen/address_proof.h) instead of testing
  // it at run time. Does not change the code of a model it accepts.
  bool require_proof = false;
  // --serial-step-ops: a model whose steps average fewer arithmetic
  // operations runs each on the calling thread alone (< 0: the target's).
  int64_t serial_step_ops = -1;
  CalibrationRanges calibration;  // --quantize static: measured ranges (calibrate() in the tools)
  // Progress of a compile that has taken more than a couple of seconds
  // (at most twice a second): "pass fuse_elementwise", "codegen: kernel
  // 40/117", ... with the elapsed time. With `log` set, codegen's stages
  // also go to the log.
  std::function<void(const std::string &)> progress;
  // --custom-op DOMAIN::OP=SYMBOL[:same] (ir/program.h, docs/ABI.md).
  std::vector<CustomOpDecl> custom_ops;
  // C files the tools' build_model compiles with the target's C compiler
  // and links into NAME.so (the custom ops' implementations).
  std::vector<std::string> link_sources;
};

// How the compile stores float weights: --weights, or half under
// --precision fp16.
inline WeightStorage stored_weights(const CompileOptions &o) {
  return o.precision == Precision::F16 ? WeightStorage::F16 : o.weights;
}

struct TensorInfo {
  std::string name;
  DType dtype;
  Shape shape;  // a run-time dimension's upper bound
  int64_t offset, bytes;
  // Run-time dimensions: per axis the lower bound and the extent's name
  // ("" for a fixed axis); empty when every dimension is fixed.
  Shape min;
  std::vector<std::string> dim_names;
  bool dynamic() const { return !min.empty(); }
  // Does a tensor of type t and shape s fit (its dims, or any within the
  // bounds of its run-time dims)? What it takes, for messages:
  // "float32[1,64,40] or less, down to [1,1,40]".
  bool accepts(DType t, const Shape &s) const {
    bool ok = t == dtype && s.size() == shape.size();
    for (size_t k = 0; ok && k < shape.size(); ++k) ok = s[k] <= shape[k] && s[k] >= (dynamic() ? min[k] : shape[k]);
    return ok;
  }
  std::string takes() const {
    return dtype_name(dtype) + shape_str(shape) + (dynamic() ? " or less, down to " + shape_str(min) : "");
  }
};

struct Artifact {
  std::string name;
  Target target;
  std::string object;  // relocatable ELF object
  std::string header;  // NAME.h
  std::string json;    // NAME.json
  PlanStats stats;
  int64_t code_bytes = 0, weights_bytes = 0;
  // Integrity, all FNV-1a 64 (docs/ABI.md): the ONNX file's bytes; the
  // compile options that shape the output, as text (options_text); the file
  // followed by that text (the model hash tinyrt-compile prints); the
  // weights in the descriptor's table order (tinyrt_session_verify).
  uint64_t source_checksum = 0, options_hash = 0, model_hash = 0, weights_checksum = 0;
  std::string options_text;
  double compile_seconds = 0;
  std::vector<TensorInfo> inputs, outputs;
  // Branches of runtime Ifs not compiled for the model's input shapes
  // (taking one stops the run with TINYRT_ERR_BRANCH), one line each.
  std::vector<std::string> warnings;
  // The bounds proof of the generated code: memory accesses, and those it
  // could not bound (codegen/address_proof.h); the accesses tested at run
  // time (the unproved ones, or all with --check-addresses), and the tests
  // the optimizer did not remove.
  int64_t accesses = 0, accesses_unproved = 0;
  int64_t address_checks = 0, address_checks_left = 0;
};

// The target a compile with these options uses: opt.target resolved, the
// --tuning file's choices applied (usage error if it does not fit the
// target, weights or precision), the half tiles of --precision fp16
// (usage error on a target without half arithmetic), and the --gemm-tile
// override (which replaces the tuned tiles).
Target compile_target(const CompileOptions &opt);

Artifact compile_model(const std::string &onnx_path, const CompileOptions &opt);

// Import (from the file's bytes, in memory) and every pass of the pipeline
// up to and including memory planning, without code generation: the planned
// Program, or the CompileError compile_model would throw for the same
// bytes. The fuzz_import target (tests/fuzz/) drives the compiler with it.
Program plan_model(const std::string &onnx_bytes, const CompileOptions &opt);

// The tensors whose ranges --quantize static needs, by name: the float
// activation inputs of the Conv, Gemm and MatMul nodes it quantizes (graph
// inputs among them), after import and constant folding.
std::vector<std::string> calibration_tensors(const std::string &onnx_path, const CompileOptions &opt);

// The model after the quantization passes (--quantize dynamic or static)
// as a serialized ONNX model: QuantizeLinear/DequantizeLinear around the
// int8 layers, or ONNX Runtime's DynamicQuantize* ops, which ONNX Runtime
// runs too (--emit-qdq FILE.onnx).
std::string quantized_onnx(const std::string &onnx_path, const CompileOptions &opt);

// Writes OUTDIR/NAME.{o,h,json} and, for Linux targets whose C compiler is
// installed, OUTDIR/NAME.so. Returns the paths written.
std::vector<std::string> write_artifact(const Artifact &a, const std::string &outdir, std::ostream *log);

// Links `object` into a shared object with the target's C compiler.
// Returns false (and the compiler's message) when that is not possible.
bool link_shared(const Target &t, const std::string &object_path, const std::string &so_path, std::string *message);

// The compile options that shape the artifact, one "key=value" line each in
// a fixed order (NAME.json "compile_options"; the options and model hashes
// are taken over it): compiler version, resolved target, GEMM tile override,
// model name, input shapes, bindings (by content), function bodies, the
// weights and arena budgets given (they steer the Winograd choices). Not the other limits
// (they refuse models, never change an artifact), dumps or logging.
std::string compile_options_text(const Target &target, const std::string &name, const CompileOptions &opt);
// "0x" and 16 hex digits.
std::string hex64(uint64_t v);

std::string sanitize_identifier(const std::string &s);
// Why an identifier may not name a model (docs/ABI.md, "Names"), or "":
// names beginning with "tinyrt" (any case: the runtime's headers and macro
// namespace), the C11/POSIX/compiler header names (NAME.h would shadow
// <NAME.h> under -I OUTDIR; any case, for case-insensitive file systems),
// and identifiers reserved to the C implementation (_X..., __...).
std::string reserved_name_reason(const std::string &name);
// A C string literal (quotes included) whose value is exactly `s`.
std::string c_string(const std::string &s);

// The memory plan as an SVG picture: buffers as rectangles (steps across,
// arena offset down) with the lower bound marked.
std::string plan_svg(const Artifact &a);

// Makes LLVM's fatal errors and allocation failures end the process with
// exit 1 and a message ("TOOL: error: ...") instead of abort(): a model
// that exhausts memory inside LLVM is refused, not a crash. Tools call it
// once at start; libraries and fuzz targets leave LLVM's own handlers.
void install_llvm_error_handlers(const char *tool);

}  // namespace tinyrt
