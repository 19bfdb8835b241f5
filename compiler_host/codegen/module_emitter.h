// module_emitter.h — the whole model as one LLVM module: constant data,
// one function per kernel, the tinyrt_model descriptor; optimized and
// emitted as a relocatable object for the target.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "target/target.h"
#include "ir/program.h"

namespace llvm {
class Module;
}

namespace tinyrt {

struct ModuleOptions {
  std::string model_name;     // C identifier; the descriptor is <name>_model
  uint64_t checksum = 0;      // FNV-1a 64 of the ONNX file
  uint64_t options_hash = 0;  // FNV-1a 64 of the compile options text
  uint64_t model_hash = 0;    // FNV-1a 64 of the file followed by that text
  bool want_ir = false;       // keep the optimized IR text
  bool want_asm = false;      // keep the assembly text
  // The bounds proof (codegen/address_proof.h) runs on every kernel, and
  // the accesses it cannot bound are tested at run time; with
  // --check-addresses every access of generated code is tested against its
  // kernel's tensors, a trap outside them (codegen/address_checks.h).
  bool check_addresses = false;
  // --require-proof: refuse the model when the proof cannot bound an access
  // (instead of testing it at run time).
  bool require_proof = false;
  // A model whose layers average fewer arithmetic operations runs each
  // step on the calling thread alone (--serial-step-ops; < 0:
  // Target::serial_step_ops).
  int64_t serial_step_ops = -1;
  // Called as the work advances ("kernel 12/117", "LLVM optimization",
  // "machine code"), for progress output on long compiles.
  std::function<void(const std::string &)> progress;
};

struct ModuleResult {
  std::string object;  // ELF relocatable object
  int64_t code_bytes = 0;
  std::vector<int64_t> kernel_code_bytes;  // per kernel: its functions' machine code
  int64_t weights_bytes = 0;
  uint64_t weights_checksum = 0;  // FNV-1a 64 of the weights, in descriptor order
  std::vector<int64_t> tasks;     // per kernel
  // Per kernel: its tasks run in one call on the calling thread (the step
  // has one task; model_runs_serially in module_emitter.cpp).
  std::vector<bool> serial;
  std::vector<int64_t> ops;  // per kernel: kernel_ops
  // The model's layers (kernels of the same ONNX nodes counted once), over
  // which the serial-step choice averages the operations.
  int64_t layers = 0;
  // Per kernel: the memory accesses as emitted, and those the bounds proof
  // could not bound (codegen/address_proof.h); the accesses tested at run
  // time (those, or all with --check-addresses), and the tests left after
  // optimization.
  std::vector<int> accesses, accesses_unproved;
  std::string unproved_notes;  // with want_ir: each unproved access, a line or two
  std::vector<int> address_checks, address_checks_left;
  std::string ir_unoptimized, ir, assembly;
};

// FNV-1a 64 continued from `h` (start from kFnv1a64Offset) over n bytes:
// the hash of every integrity field of the descriptor.
constexpr uint64_t kFnv1a64Offset = 0xcbf29ce484222325ull;
uint64_t fnv1a64_update(uint64_t h, const void *data, size_t n);

ModuleResult emit_module(const Program &p, const Target &t, const ModuleOptions &o);

// m through the optimization pipeline emit_module runs, with t's machine
// (data layout and triple set to t's): for tests of what LLVM makes of
// emitted IR.
void optimize_for(llvm::Module &m, const Target &t);

}  // namespace tinyrt
