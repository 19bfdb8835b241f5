// call_emitter.cpp — a custom op node (--custom-op DOMAIN::OP=SYMBOL) as
// one call of an external C function: the only generated code that calls
// anything (module_emitter.cpp allows exactly the declared symbols).
//
// The kernel (one task; the runtime runs it on the calling thread) builds
// on its stack a tinyrt_custom_call (abi/tinyrt.h) whose tinyrt_tensor
// views point at the node's inputs and outputs — dense and row-major
// (choose_layouts), in the arena or, for constants, in the object's
// read-only data — calls `tinyrt_status SYMBOL(const tinyrt_custom_call *)`
// and stores the status at the arena's call-status slot, which the runtime
// checks after the step (TINYRT_STEP_CALL in the step's descriptor entry).
#include "codegen/kernel_emitters.h"

namespace tinyrt {

EmittedKernel emit_call_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  const Program &p = env.program;
  auto &C = env.module.getContext();
  const llvm::DataLayout &dl = env.module.getDataLayout();
  llvm::IRBuilder<> b(C);
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  TINYRT_CHECK(p.stats.call_status_offset >= 0, "a call kernel without a status slot");

  llvm::Type *i8p = b.getInt8PtrTy(), *i32 = b.getInt32Ty(), *i64 = b.getInt64Ty();
  llvm::Type *size_t_ty = dl.getIntPtrType(C);
  // Mirrors tinyrt_tensor and tinyrt_custom_call (abi/tinyrt.h); the C
  // layout rules of the target follow from the data layout.
  auto *tensor_ty = llvm::StructType::get(C, {i8p, i8p, i64->getPointerTo(), i32, i32, size_t_ty});
  auto *call_ty = llvm::StructType::get(C, {i8p, i8p, i32, i32, tensor_ty->getPointerTo(), tensor_ty->getPointerTo()});

  auto cstr = [&](const std::string &s, const std::string &tag) -> llvm::Constant * {
    auto *init = llvm::ConstantDataArray::getString(C, s);
    auto *g = new llvm::GlobalVariable(env.module, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                       name + "." + tag);
    return llvm::ConstantExpr::getBitCast(g, i8p);
  };
  auto views = [&](const std::vector<int> &vals, const std::string &tag) -> llvm::Value * {
    if (vals.empty()) return llvm::ConstantPointerNull::get(tensor_ty->getPointerTo());
    llvm::Value *arr = b.CreateAlloca(tensor_ty, b.getInt32((int32_t)vals.size()), tag);
    for (size_t i = 0; i < vals.size(); ++i) {
      const Value &v = p.graph.v(vals[i]);
      SlotRef s = slot_for(env, b, arena, vals[i]);
      TINYRT_CHECK(s.strides == row_major_strides(v.shape) || v.numel() <= 1,
                   "a custom op reads or writes a value that is not row-major");
      llvm::Value *dims = llvm::ConstantPointerNull::get(i64->getPointerTo());
      if (!v.shape.empty()) {
        std::vector<uint64_t> d(v.shape.begin(), v.shape.end());
        auto *da = llvm::ConstantDataArray::get(C, d);
        auto *dg = new llvm::GlobalVariable(env.module, da->getType(), true, llvm::GlobalValue::PrivateLinkage, da,
                                            name + "." + tag + ".dims" + std::to_string(i));
        dims = llvm::ConstantExpr::getBitCast(dg, i64->getPointerTo());
      }
      llvm::Value *e = b.CreateGEP(tensor_ty, arr, b.getInt32((int32_t)i));
      b.CreateStore(cstr(v.name, tag + ".name" + std::to_string(i)), b.CreateStructGEP(tensor_ty, e, 0));
      b.CreateStore(b.CreateBitCast(s.base, i8p), b.CreateStructGEP(tensor_ty, e, 1));
      b.CreateStore(dims, b.CreateStructGEP(tensor_ty, e, 2));
      b.CreateStore(b.getInt32((uint32_t)v.rank()), b.CreateStructGEP(tensor_ty, e, 3));
      b.CreateStore(b.getInt32((uint32_t)v.dtype), b.CreateStructGEP(tensor_ty, e, 4));
      b.CreateStore(llvm::ConstantInt::get(size_t_ty, (uint64_t)(v.numel() * dtype_bytes(v.dtype))),
                    b.CreateStructGEP(tensor_ty, e, 5));
    }
    return arr;
  };

  llvm::Value *ins = views(k.ins, "in");
  llvm::Value *outs = views(k.call.outs, "out");
  llvm::Value *call = b.CreateAlloca(call_ty, nullptr, "call");
  b.CreateStore(cstr(k.nodes.empty() ? std::string() : k.nodes[0], "node"), b.CreateStructGEP(call_ty, call, 0));
  b.CreateStore(cstr(k.call.op, "op"), b.CreateStructGEP(call_ty, call, 1));
  b.CreateStore(b.getInt32((uint32_t)k.ins.size()), b.CreateStructGEP(call_ty, call, 2));
  b.CreateStore(b.getInt32((uint32_t)k.call.outs.size()), b.CreateStructGEP(call_ty, call, 3));
  b.CreateStore(ins, b.CreateStructGEP(call_ty, call, 4));
  b.CreateStore(outs, b.CreateStructGEP(call_ty, call, 5));

  auto *fty = llvm::FunctionType::get(i32, {call_ty->getPointerTo()}, false);
  llvm::FunctionCallee callee = env.module.getOrInsertFunction(k.call.symbol, fty);
  if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value *st = b.CreateCall(callee, {call});
  llvm::Value *slot = b.CreateGEP(b.getInt8Ty(), arena, b.getInt64(p.stats.call_status_offset));
  b.CreateAlignedStore(st, b.CreateBitCast(slot, i32->getPointerTo()), llvm::Align(4));
  b.CreateRetVoid();
  return {f, 1};
}

}  // namespace tinyrt
