// output_dims_emitter.cpp — the last step of a model with run-time extents
// (ir/graph.h DimSym): writes each dynamic graph output's actual
// dimensions, an int64 per axis, where PlanStats::output_dims says; the
// runtime reports them (tinyrt_session_output) and packs the output's
// elements densely by them.
#include "codegen/kernel_emitters.h"

namespace tinyrt {

bool has_output_dims_step(const Program &p) {
  for (int64_t off : p.stats.output_dims)
    if (off >= 0) return true;
  return false;
}

EmittedKernel emit_output_dims_kernel(EmitEnv &env, const std::string &name) {
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  std::map<int, llvm::Value *> dims = load_dims(env, b, arena);
  const Program &p = env.program;
  for (size_t i = 0; i < p.graph.outputs.size(); ++i) {
    int64_t off = p.stats.output_dims.at(i);
    if (off < 0) continue;
    int o = p.graph.outputs[i];
    for (int a = 0; a < p.graph.v(o).rank(); ++a) {
      llvm::Value *d = b.CreateSExt(extent_value(env, b, dims, o, a), b.getInt64Ty());
      llvm::Value *ptr =
          b.CreateBitCast(b.CreateGEP(b.getInt8Ty(), arena, b.getInt64(off + 8 * a)), b.getInt64Ty()->getPointerTo());
      b.CreateAlignedStore(d, ptr, llvm::Align(8));
    }
  }
  b.CreateRetVoid();
  return {f, 1};
}

}  // namespace tinyrt
