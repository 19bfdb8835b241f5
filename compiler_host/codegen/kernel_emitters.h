// kernel_emitters.h — the kernel families. Each turns one Kernel into one
// function `void k(i8* arena, i32 task_begin, i32 task_end)`.
//   loop_emitter.cpp  any expression: a loop nest over the output in its
//                     physical order, vectorized along the innermost axis.
//   gemm_emitter.cpp  convolutions and matrix products over packed weights:
//                     register-tiled micro-kernels with a fused epilogue.
#pragma once

#include <functional>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/expr_emitter.h"
#include "target/target.h"
#include "ir/program.h"

namespace tinyrt {

struct EmitEnv {
  llvm::Module &module;
  const Target &target;
  const Program &program;
  // The i8* address of a constant value's data, laid out with its strides.
  std::function<llvm::Constant *(int value)> const_data;
};

struct EmittedKernel {
  llvm::Function *fn = nullptr;
  int64_t tasks = 1;
};

// The kernel function's prototype and entry block; sets the builder there.
llvm::Function *begin_kernel_function(EmitEnv &env, llvm::IRBuilder<> &b, const std::string &name);
// Addressing for value v inside a kernel whose arena pointer is `arena`.
SlotRef slot_for(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, int v);

EmittedKernel emit_loop_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
EmittedKernel emit_gemm_kernel(EmitEnv &env, const Kernel &k, const std::string &name);

// Emits `for (i = begin; i < end; ++i) body(i)` at the builder's position.
void emit_counted_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end,
                       const std::function<void(llvm::Value *)> &body, const char *name = "loop");

}  // namespace tinyrt
