// module_emitter.h — the whole model as one LLVM module: constant data,
// one function per kernel, the tinyrt_model descriptor; optimized and
// emitted as a relocatable object for the target.
#pragma once

#include <string>
#include <vector>

#include "target/target.h"
#include "ir/program.h"

namespace tinyrt {

struct ModuleOptions {
  std::string model_name;  // C identifier; the descriptor is <name>_model
  uint64_t checksum = 0;
  bool want_ir = false;   // keep the optimized IR text
  bool want_asm = false;  // keep the assembly text
};

struct ModuleResult {
  std::string object;  // ELF relocatable object
  int64_t code_bytes = 0;
  int64_t weights_bytes = 0;
  std::vector<int64_t> tasks;  // per kernel
  std::string ir_unoptimized, ir, assembly;
};

ModuleResult emit_module(const Program &p, const Target &t, const ModuleOptions &o);

}  // namespace tinyrt
