#include "codegen/module_emitter.h"

#include <cstring>
#include <mutex>
#include <set>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Object/SymbolSize.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "codegen/address_checks.h"
#include "codegen/address_proof.h"
#include "codegen/integer_broadcasts.h"
#include "codegen/kernel_emitters.h"
#include "tinyrt_artifact.h"

#ifndef TINYRT_VERSION
#define TINYRT_VERSION "0.1.0"
#endif

namespace tinyrt {

namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();  // inline assembly (codegen/integer_broadcasts.h)
  });
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target &t) {
  init_llvm();
  std::string err;
  const llvm::Target *lt = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!lt) fail_internal("LLVM has no target for " + t.triple + ": " + err);
  llvm::TargetOptions opt;
  if (t.hard_float) opt.FloatABIType = llvm::FloatABI::Hard;
  auto *tm = lt->createTargetMachine(t.triple, t.cpu, t.features, opt, llvm::Reloc::PIC_, llvm::None,
                                     llvm::CodeGenOpt::Aggressive);
  if (!tm) fail_internal("cannot create a target machine for " + t.triple);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

// A constant's bytes in its physical layout (strides from the storage).
std::string physical_bytes(const Value &v, const Storage &st) {
  const ConstData &c = *v.data;
  int eb = dtype_bytes(c.dtype);
  int64_t n = shape_numel(c.shape);
  std::string out((size_t)(n * eb), '\0');
  std::vector<int64_t> rm = row_major_strides(c.shape);
  if (st.strides == rm || n == 0) {
    if (!out.empty()) std::memcpy(&out[0], c.bytes.data(), out.size());  // an empty constant has no data()
    return out;
  }
  std::vector<int64_t> idx(c.shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t rem = lin, off = 0;
    for (size_t k = c.shape.size(); k-- > 0;) {
      idx[k] = rem % c.shape[k];
      rem /= c.shape[k];
      off += idx[k] * st.strides[k];
    }
    std::memcpy(&out[(size_t)(off * eb)], c.bytes.data() + lin * eb, eb);
  }
  return out;
}

struct DescriptorBuilder {
  llvm::Module &m;
  llvm::LLVMContext &C;
  const Program &p;
  llvm::StructType *tensor_ty, *step_ty, *range_ty, *model_ty;
  llvm::Type *i8p, *i32, *i64, *i16;
  llvm::PointerType *fn_ty;
  llvm::GlobalVariable *model_g = nullptr;

  DescriptorBuilder(llvm::Module &mod, const Program &prog) : m(mod), C(mod.getContext()), p(prog) {
    i8p = llvm::Type::getInt8PtrTy(C);
    i16 = llvm::Type::getInt16Ty(C);
    i32 = llvm::Type::getInt32Ty(C);
    i64 = llvm::Type::getInt64Ty(C);
    fn_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(C), {i8p, i32, i32}, false)->getPointerTo();
    // Field order and types mirror abi/tinyrt_artifact.h.
    // 1.4: dims_min, dim_ids, dims_offset
    tensor_ty = llvm::StructType::create(
        C, {i8p, i64->getPointerTo(), i32, i32, i64, i64, i64->getPointerTo(), i32->getPointerTo(), i64},
        "tinyrt_tensor_desc");
    // 1.2: call_node, status_offset; 1.3: cond_offset, cond_expect
    step_ty = llvm::StructType::create(C, {fn_ty, i32, i32, i8p, i64, i64, i32}, "tinyrt_step_desc");
    range_ty = llvm::StructType::create(C, {i8p, i64}, "tinyrt_weights_range");
    model_ty = llvm::StructType::create(
        C,
        {i32, i16, i16, i32, i32, i32, i32, i32, i32, i8p, i64, i64, i64, tensor_ty->getPointerTo(),
         tensor_ty->getPointerTo(), step_ty->getPointerTo(), i8p, i32, i32,
         // ABI 1.2: integrity
         i64, i64, i64, range_ty->getPointerTo(), i32, i32},
        "tinyrt_model");
  }

  llvm::Constant *str(const std::string &s, const std::string &name) {
    auto *init = llvm::ConstantDataArray::getString(C, s);
    auto *g = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, name);
    return llvm::ConstantExpr::getBitCast(g, i8p);
  }

  // An array constant of `v` (int64 or int32 elements).
  template <class T>
  llvm::Constant *array(const std::vector<T> &v, llvm::Type *elem, const std::string &name) {
    auto *da = llvm::ConstantDataArray::get(C, v);
    auto *dg = new llvm::GlobalVariable(m, da->getType(), true, llvm::GlobalValue::PrivateLinkage, da, name);
    return llvm::ConstantExpr::getBitCast(dg, elem->getPointerTo());
  }

  llvm::Constant *tensors(const std::vector<int> &vals, const std::vector<int64_t> &dims_offsets,
                          const std::string &tag) {
    if (vals.empty()) return llvm::ConstantPointerNull::get(tensor_ty->getPointerTo());
    std::vector<llvm::Constant *> elems;
    for (size_t i = 0; i < vals.size(); ++i) {
      const Value &v = p.graph.v(vals[i]);
      const Storage &st = p.storage.at(vals[i]);
      std::vector<uint64_t> dims(v.shape.begin(), v.shape.end());
      llvm::Constant *dptr = llvm::ConstantPointerNull::get(i64->getPointerTo());
      if (!dims.empty()) {
        auto *da = llvm::ConstantDataArray::get(C, dims);
        auto *dg = new llvm::GlobalVariable(m, da->getType(), true, llvm::GlobalValue::PrivateLinkage, da,
                                            tag + ".dims" + std::to_string(i));
        dptr = llvm::ConstantExpr::getBitCast(dg, i64->getPointerTo());
      }
      // Run-time dimensions: their lower bounds, which extent each is,
      // and where the actual ones are.
      llvm::Constant *mins = llvm::ConstantPointerNull::get(i64->getPointerTo());
      llvm::Constant *ids = llvm::ConstantPointerNull::get(i32->getPointerTo());
      const int64_t doff = i < dims_offsets.size() ? dims_offsets[i] : -1;
      if (doff >= 0) {
        std::vector<uint64_t> lo;
        std::vector<uint32_t> id;
        for (int a = 0; a < v.rank(); ++a) {
          int s = v.dim(a);
          lo.push_back(s >= 0 ? (uint64_t)p.graph.syms[(size_t)s].lo : (uint64_t)v.shape[(size_t)a]);
          id.push_back(s >= 0 ? (uint32_t)s : UINT32_MAX);
        }
        mins = array(lo, i64, tag + ".dims_min" + std::to_string(i));
        ids = array(id, i32, tag + ".dim_ids" + std::to_string(i));
      }
      elems.push_back(llvm::ConstantStruct::get(
          tensor_ty,
          {str(v.name, tag + ".name" + std::to_string(i)), dptr, llvm::ConstantInt::get(i32, (uint64_t)v.dtype),
           llvm::ConstantInt::get(i32, dims.size()), llvm::ConstantInt::get(i64, st.offset),
           llvm::ConstantInt::get(i64, v.numel() * dtype_bytes(v.dtype)), mins, ids,
           llvm::ConstantInt::get(i64, doff >= 0 ? (uint64_t)doff : 0)}));
    }
    auto *at = llvm::ArrayType::get(tensor_ty, elems.size());
    auto *g = new llvm::GlobalVariable(m, at, true, llvm::GlobalValue::PrivateLinkage,
                                       llvm::ConstantArray::get(at, elems), tag);
    return llvm::ConstantExpr::getBitCast(g, tensor_ty->getPointerTo());
  }

  // The bytes a constant array holds in the object (a view of the
  // LLVM constant's: no copy of the weights), or its size when all zero.
  llvm::StringRef initializer_bytes(const llvm::GlobalVariable &g, uint64_t *zeros) {
    const llvm::Constant *init = g.getInitializer();
    *zeros = 0;
    if (auto *cds = llvm::dyn_cast<llvm::ConstantDataSequential>(init)) return cds->getRawDataValues();
    if (llvm::isa<llvm::ConstantAggregateZero>(init)) {
      *zeros = m.getDataLayout().getTypeAllocSize(g.getValueType());
      return {};
    }
    fail_internal("weights array " + g.getName().str() + " has an unexpected initializer");
  }

  // After optimization, which drops the constant arrays whose every read it
  // folded into the code: the weights table lists the arrays `names` left,
  // in order, and the descriptor's weights_bytes and weights_checksum cover
  // exactly their bytes (returned too).
  void finish_weights(const std::string &name, const std::vector<std::string> &names, int64_t *bytes,
                      uint64_t *checksum) {
    std::vector<llvm::Constant *> elems;
    uint64_t h = kFnv1a64Offset, total = 0;
    for (const std::string &n : names) {
      llvm::GlobalVariable *g = m.getNamedGlobal(n);
      if (!g) continue;
      uint64_t zeros;
      llvm::StringRef b = initializer_bytes(*g, &zeros);
      h = fnv1a64_update(h, b.data(), b.size());
      static const char zero_block[4096] = {};
      for (uint64_t z = zeros; z > 0; z -= std::min<uint64_t>(z, sizeof zero_block))
        h = fnv1a64_update(h, zero_block, (size_t)std::min<uint64_t>(z, sizeof zero_block));
      const uint64_t size = b.size() + zeros;
      total += size;
      elems.push_back(llvm::ConstantStruct::get(
          range_ty, {llvm::ConstantExpr::getBitCast(g, i8p), llvm::ConstantInt::get(i64, size)}));
    }
    llvm::Constant *table = llvm::ConstantPointerNull::get(range_ty->getPointerTo());
    if (!elems.empty()) {
      auto *at = llvm::ArrayType::get(range_ty, elems.size());
      auto *g = new llvm::GlobalVariable(m, at, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(at, elems), name + ".weights");
      table = llvm::ConstantExpr::getBitCast(g, range_ty->getPointerTo());
    }
    std::vector<llvm::Constant *> f;
    for (unsigned i = 0; i < model_ty->getNumElements(); ++i)
      f.push_back(model_g->getInitializer()->getAggregateElement(i));
    f[11] = llvm::ConstantInt::get(i64, total);  // weights_bytes
    f[21] = llvm::ConstantInt::get(i64, h);      // weights_checksum
    f[22] = table;                               // weights
    f[23] = llvm::ConstantInt::get(i32, elems.size());
    model_g->setInitializer(llvm::ConstantStruct::get(model_ty, f));
    *bytes = (int64_t)total;
    *checksum = h;
  }

  // The descriptor; finish_weights() fills in the weights after optimization.
  void build(const std::string &name, const Target &t, const std::vector<EmittedKernel> &ks, const ModuleOptions &o) {
    std::vector<llvm::Constant *> steps;
    llvm::Constant *no_text = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(i8p));
    for (size_t i = 0; i < ks.size(); ++i) {
      // Custom-op calls (KernelKind::Call) are flagged with their node and
      // status slot, steps of a branch with their guard's condition byte,
      // branch errors with their message.
      static const Kernel plain;  // the output dims step, after the kernels
      const Kernel &k = i < p.kernels.size() ? p.kernels[i] : plain;
      uint32_t flags = 0;
      llvm::Constant *text = no_text;
      uint64_t status = 0, cond = 0, expect = 0;
      if (k.kind == KernelKind::Call) {
        flags |= TINYRT_STEP_CALL;
        text = str(k.nodes.empty() ? std::string() : k.nodes[0], name + ".call_node" + std::to_string(i));
        status = (uint64_t)p.stats.call_status_offset;
      }
      if (k.kind == KernelKind::Fail) {
        flags |= TINYRT_STEP_FAIL | (k.shape_error ? TINYRT_STEP_SHAPE_ERROR : 0u);
        text = str(k.message, name + ".branch_error" + std::to_string(i));
      }
      if (k.guard >= 0) {
        const Guard &gd = p.graph.guards.at(k.guard);
        const Storage &st = p.storage.at(gd.eff);
        TINYRT_CHECK(st.where == Storage::Where::Arena, "a guard's condition is not in the arena");
        flags |= TINYRT_STEP_GUARDED;
        cond = (uint64_t)st.offset;
        expect = gd.eff_expect;
      }
      llvm::Constant *fn = ks[i].fn ? llvm::cast<llvm::Constant>(ks[i].fn) : llvm::ConstantPointerNull::get(fn_ty);
      steps.push_back(llvm::ConstantStruct::get(
          step_ty, {fn, llvm::ConstantInt::get(i32, ks[i].tasks), llvm::ConstantInt::get(i32, flags), text,
                    llvm::ConstantInt::get(i64, status), llvm::ConstantInt::get(i64, cond),
                    llvm::ConstantInt::get(i32, expect)}));
    }
    llvm::Constant *steps_ptr = llvm::ConstantPointerNull::get(step_ty->getPointerTo());
    if (!steps.empty()) {
      auto *at = llvm::ArrayType::get(step_ty, steps.size());
      auto *g = new llvm::GlobalVariable(m, at, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(at, steps), name + ".steps");
      steps_ptr = llvm::ConstantExpr::getBitCast(g, step_ty->getPointerTo());
    }
    uint64_t desc_bytes = m.getDataLayout().getTypeAllocSize(model_ty);
    llvm::Constant *init = llvm::ConstantStruct::get(
        model_ty, {llvm::ConstantInt::get(i32, TINYRT_ARTIFACT_MAGIC),
                   llvm::ConstantInt::get(i16, TINYRT_ABI_MAJOR),
                   llvm::ConstantInt::get(i16, TINYRT_ABI_MINOR),
                   llvm::ConstantInt::get(i32, desc_bytes),
                   llvm::ConstantInt::get(i32, t.arch),
                   llvm::ConstantInt::get(i32, t.isa),
                   llvm::ConstantInt::get(i32, p.graph.inputs.size()),
                   llvm::ConstantInt::get(i32, p.graph.outputs.size()),
                   llvm::ConstantInt::get(i32, steps.size()),
                   str(name, name + ".model_name"),
                   llvm::ConstantInt::get(i64, p.stats.arena_bytes),
                   llvm::ConstantInt::get(i64, 0),
                   llvm::ConstantInt::get(i64, o.checksum),
                   tensors(p.graph.inputs, p.stats.input_dims, name + ".inputs"),
                   tensors(p.graph.outputs, p.stats.output_dims, name + ".outputs"),
                   steps_ptr,
                   str(TINYRT_VERSION, name + ".compiler_version"),
                   llvm::ConstantInt::get(i32, m.getDataLayout().getTypeAllocSize(tensor_ty)),
                   llvm::ConstantInt::get(i32, m.getDataLayout().getTypeAllocSize(step_ty)),
                   llvm::ConstantInt::get(i64, o.options_hash),
                   llvm::ConstantInt::get(i64, o.model_hash),
                   llvm::ConstantInt::get(i64, 0),
                   llvm::ConstantPointerNull::get(range_ty->getPointerTo()),
                   llvm::ConstantInt::get(i32, 0),
                   llvm::ConstantInt::get(i32, m.getDataLayout().getTypeAllocSize(range_ty))});
    model_g = new llvm::GlobalVariable(m, model_ty, true, llvm::GlobalValue::ExternalLinkage, init, name + "_model");
    model_g->setAlignment(llvm::Align(8));
  }
};

// The arena bytes kernel k may touch: the slices of the values it reads
// and writes (views address their viewed value's storage).
ArenaRanges arena_ranges(const Program &p, const Kernel &k) {
  std::vector<int> vals = k.ins;
  vals.push_back(k.out);
  ArenaRanges out;
  for (int v : vals)
    if (v >= 0 && p.storage.at(v).where == Storage::Where::Arena)
      out.push_back({p.storage[v].offset, p.storage[v].offset + p.span_bytes(v)});
  // The run-time extents every kernel may load (codegen/kernel_common.cpp, load_dims).
  for (int64_t off : p.stats.sym_offsets)
    if (off >= 0) out.push_back({off, off + 8});
  return out;
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

std::string codegen(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> buf;
  {
    // The pass manager owns the machine-code streamer, which holds a copy
    // of the weights until it is destroyed: before the copy below.
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, kind)) fail_internal("the target cannot emit this file type");
    pm.run(m);
  }
  return std::string(buf.begin(), buf.end());
}

}  // namespace

void optimize_for(llvm::Module &m, const Target &t) {
  std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(t);
  m.setDataLayout(tm->createDataLayout());
  m.setTargetTriple(t.triple);
  optimize(m, *tm);
}

uint64_t fnv1a64_update(uint64_t h, const void *data, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// The model's layers: its kernels, those that compute the same ONNX nodes
// counted once (the copies, transforms and parts a compile makes of one
// layer: an int8 convolution's widened input, a Winograd layer's bands and
// chunks, a product's packing of its run-time operand).
static size_t model_layers(const Program &p) {
  std::set<std::vector<std::string>> layers;
  size_t unnamed = 0;
  for (const Kernel &k : p.kernels) k.nodes.empty() ? (void)++unnamed : (void)layers.insert(k.nodes);
  return layers.size() + unnamed;
}

// Whether a model's steps run on the calling thread alone: when its layers
// do fewer arithmetic operations on average than Target::serial_step_ops
// (or the option's number when it is >= 0). Per layer, not per step, so
// that what a compile splits a layer into does not tip the choice: the
// threshold was measured on float models, where a step is mostly a layer,
// and the int8 compile of the same networks adds steps of little work
// (x86 without VNNI: shufflenet_v2_x0_5 int8's 37 widened copies took its
// mean from 0.86 M to 0.65 M operations, unet_small int8's 353 Winograd
// parts to 0.42 M, both then on one thread; shared at 2 threads they ran
// in 0.64x and 0.73-0.77x the time, AVX2 on Zen 4). Sharing a step saves
// about half its time and costs a hand-off (a wake-up, its data moved
// between the cores' caches), so it pays for big steps only. The choice is the
// model's, not each step's: a step run apart from its neighbours would
// move their data between caches both ways (bench/RESULTS.md: per-step
// choices made unet_small 1.5x slower at 2 threads); only a GEMM whose
// split a tuning file measured (or --task-split forces) as Serial runs
// alone among shared neighbours. A model with a
// recurrent kernel shares its steps: that kernel's time is T dependent
// time steps, not its operations, and its tasks (directions, batch rows)
// halve it on two threads whatever its size.
static bool model_runs_serially(const Program &p, const Target &t, int64_t serial_step_ops, int64_t layers,
                                std::vector<int64_t> *ops) {
  double total = 0;
  bool recurrent = false;
  for (const Kernel &k : p.kernels) {
    ops->push_back(kernel_ops(p, k));
    total += (double)ops->back();
    recurrent = recurrent || k.kind == KernelKind::Recurrent;
  }
  int64_t limit = serial_step_ops >= 0 ? serial_step_ops : t.serial_step_ops;
  return !recurrent && !p.kernels.empty() && total < (double)limit * (double)layers;
}

// A part's entry to the function its layer's parts share (Kernel::code_key):
// calls it with the part's row0 and c0.
static llvm::Function *part_entry(EmitEnv &env, llvm::Function *shared_fn, const Kernel &k, const std::string &name) {
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  b.CreateCall(shared_fn, {f->getArg(0), f->getArg(1), f->getArg(2), b.getInt32((int32_t)k.wino.row0),
                           b.getInt32((int32_t)k.wino.c0)});
  b.CreateRetVoid();
  return f;
}

// Kernel k's function and tasks, by its family's emitter.
static EmittedKernel emit_kernel(EmitEnv &env, const Kernel &k, const std::string &fname) {
  EmittedKernel ek;
  switch (k.kind) {
    case KernelKind::Gemm:
    case KernelKind::QGemm: ek = emit_gemm_kernel(env, k, fname); break;
    case KernelKind::Depthwise: ek = emit_depthwise_kernel(env, k, fname); break;
    case KernelKind::Recurrent: ek = emit_recurrent_kernel(env, k, fname); break;
    case KernelKind::Call: ek = emit_call_kernel(env, k, fname); break;
    case KernelKind::Compact: ek = emit_compact_kernel(env, k, fname); break;
    case KernelKind::Nms: ek = emit_nms_kernel(env, k, fname); break;
    case KernelKind::TopK: ek = emit_topk_kernel(env, k, fname); break;
    case KernelKind::WinogradIn:
    case KernelKind::WinogradOut: ek = emit_winograd_kernel(env, k, fname); break;
    case KernelKind::WinogradWeights: ek = emit_winograd_weights_kernel(env, k, fname); break;
    case KernelKind::Fail: return {nullptr, 1};  // no code: the runtime stops
    default: ek = emit_loop_kernel(env, k, fname);
  }
  // No task (an empty output): the runtime needs at least one per step, so
  // the step runs one task of a function that does nothing.
  if (ek.tasks == 0) {
    llvm::IRBuilder<> b(env.module.getContext());
    ek.fn = begin_kernel_function(env, b, fname + ".empty");
    b.CreateRetVoid();
    ek.tasks = 1;
  }
  return ek;
}

// Makes a step of a serial model one task that runs the kernel's own tasks
// in one call, as a one-thread pool would: the kernel is renamed NAME.tasks
// and inlined into NAME(arena, b, e) { if (b < e) NAME.tasks(arena, 0,
// tasks); }. The bounds proof and the address checks were made on the
// kernel for exactly that task range. Returns whether it did (not for a
// step of one task, custom-op calls included, or without code).
static bool run_serially(EmitEnv &env, EmittedKernel &ek, const std::string &name) {
  if (!ek.fn || ek.tasks <= 1) return false;
  llvm::Function *tasks_fn = ek.fn;
  tasks_fn->setName(name + ".tasks");
  tasks_fn->addFnAttr(llvm::Attribute::AlwaysInline);
  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::BasicBlock *run = llvm::BasicBlock::Create(f->getContext(), "run", f);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(f->getContext(), "done", f);
  b.CreateCondBr(b.CreateICmpSLT(f->getArg(1), f->getArg(2)), run, done);
  b.SetInsertPoint(run);
  b.CreateCall(tasks_fn, {f->getArg(0), b.getInt32(0), b.getInt32((int32_t)ek.tasks)});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  ek.fn = f;
  ek.tasks = 1;
  return true;
}

// The weights the kernels read, against Limits::weights_cap, before LLVM
// holds any (a budget given is checked on the weights as emitted, in the
// driver): LLVM keeps several copies of a constant while it emits the
// object (about 6 bytes of memory per byte of weights), and its allocation
// failure aborts the process.
void check_weights_bytes(const Program &p) {
  std::set<int> seen;
  int64_t total = 0, largest = 0;
  int largest_v = -1;
  const Kernel *reader = nullptr;
  for (const Kernel &k : p.kernels)
    for (int v : k.ins) {
      if (v < 0 || !p.graph.v(v).is_const() || !seen.insert(v).second) continue;
      const int64_t b = (int64_t)p.graph.v(v).data->bytes.size();
      total = sat_add(total, b);
      if (b > largest) {
        largest = b;
        largest_v = v;
        reader = &k;
      }
    }
  const Limits &lim = p.graph.limits;
  if (total <= lim.weights_cap()) return;
  fail_cap("the kernels read " + std::to_string(total) + " bytes of weights, more than the limit of " +
           std::to_string(lim.weights_cap()) + " (--max-weights-bytes); the largest, '" + p.graph.v(largest_v).name +
           "' (" + std::to_string(largest) + " bytes), is read by the kernel of " +
           (reader->label.empty() ? std::string("value '") + p.graph.v(reader->out).name + "'" : reader->label) +
           (reader->nodes.empty() ? std::string() : " (node '" + reader->nodes.front() + "')"));
}

ModuleResult emit_module(const Program &p, const Target &t, const ModuleOptions &o) {
  check_weights_bytes(p);
  auto tm = make_target_machine(t);
  llvm::LLVMContext ctx;
  llvm::Module m(o.model_name, ctx);
  m.setTargetTriple(t.triple);
  m.setDataLayout(tm->createDataLayout());
  ModuleResult res;

  std::map<int, llvm::Constant *> consts;
  std::vector<std::string> weight_names;  // the constant arrays, for the descriptor's table
  EmitEnv env{m, t, p, nullptr};
  env.const_data = [&](int v) -> llvm::Constant * {
    auto it = consts.find(v);
    if (it != consts.end()) return it->second;
    // Row-major constants go to LLVM straight from the graph's bytes.
    const Value &cv = p.graph.v(v);
    const bool row_major = p.storage.at(v).strides == row_major_strides(cv.shape);
    std::string permuted = row_major ? std::string() : physical_bytes(cv, p.storage.at(v));
    llvm::StringRef bytes = row_major ? llvm::StringRef((const char *)cv.data->bytes.data(), cv.data->bytes.size())
                                      : llvm::StringRef(permuted);
    res.weights_bytes += (int64_t)bytes.size();
    auto *init = llvm::ConstantDataArray::getRaw(bytes, bytes.size(), llvm::Type::getInt8Ty(ctx));
    auto *g = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                       o.model_name + ".c" + std::to_string(v));
    g->setAlignment(llvm::Align(64));
    llvm::Constant *ptr = llvm::ConstantExpr::getBitCast(g, llvm::Type::getInt8PtrTy(ctx));
    consts[v] = ptr;
    weight_names.push_back(g->getName().str());
    return ptr;
  };

  std::vector<EmittedKernel> ks;
  res.layers = (int64_t)model_layers(p);
  const bool serial = model_runs_serially(p, t, o.serial_step_ops, res.layers, &res.ops);
  auto progress = [&](const std::string &what) {
    if (o.progress) o.progress(what);
  };
  const size_t every = std::max<size_t>(1, p.kernels.size() / 10);  // progress about every 10%
  // Kernel::code_key -> the function its kernels share (emitted for the
  // first, with the part arguments) and its tasks.
  std::map<std::string, EmittedKernel> shared;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    if (i % every == 0) progress("codegen: kernel " + std::to_string(i + 1) + "/" + std::to_string(p.kernels.size()));
    const std::string fname = o.model_name + ".k" + std::to_string(i);
    // The parts of a layer (Kernel::code_key) share the first one's
    // function, proved (and tested where needed) with it; each calls it
    // through an entry of its own.
    const bool keyed = !k.code_key.empty() && k.kind != KernelKind::Fail;
    auto found = keyed ? shared.find(k.code_key) : shared.end();
    EmittedKernel ek;
    AddressProof pr;
    int tested = 0;
    if (found != shared.end()) {
      ek = found->second;
    } else {
      env.part_args = keyed;
      ek = emit_kernel(env, k, keyed ? fname + ".part" : fname);
      env.part_args = false;
      // The bounds proof, on the code as emitted (before the optimizer
      // drops the clamps the emitters put on padded coordinates); a test
      // before each access it cannot bound, or before every access with
      // --check-addresses.
      if (ek.fn && k.kind != KernelKind::Call) {
        ArenaRanges ranges = arena_ranges(p, k);
        pr = prove_addresses(*ek.fn, ranges, ek.tasks, o.want_ir || o.require_proof);
        for (const std::string &n : pr.notes) res.unproved_notes += n + "\n";
        if (o.require_proof && !pr.unproved.empty()) {
          std::string nodes;
          for (const std::string &n : k.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
          fail_unsupported("--require-proof: kernel " + std::to_string(i) + " (" + kernel_family(k.kind) + ", nodes " +
                           nodes + ") has " + std::to_string(pr.unproved.size()) +
                           " memory accesses the bounds proof cannot bound; the first: " + pr.notes.front());
        }
        if (o.check_addresses || !pr.unproved.empty())
          tested = insert_address_checks(*ek.fn, ranges, o.check_addresses ? nullptr : &pr.unproved);
      }
      if (keyed) {
        ek.fn->addFnAttr(llvm::Attribute::NoInline);
        shared[k.code_key] = ek;
      }
    }
    if (keyed) ek.fn = part_entry(env, ek.fn, k, fname);
    ks.push_back(ek);
    res.tasks.push_back(ek.tasks);
    res.accesses.push_back(pr.accesses);
    res.accesses_unproved.push_back((int)pr.unproved.size());
    res.address_checks.push_back(tested);
    // (A GEMM whose measured or forced split is Serial runs so alone.)
    const bool alone =
        (k.kind == KernelKind::Gemm || k.kind == KernelKind::QGemm) && k.gemm.split.order == TaskSplit::Order::Serial;
    res.serial.push_back((serial || alone) && run_serially(env, ks.back(), fname));
  }
  if (has_output_dims_step(p)) {  // the outputs' actual dimensions, last
    ks.push_back(emit_output_dims_kernel(env, o.model_name + ".output_dims"));
    res.tasks.push_back(1);
    res.ops.push_back(0);
    res.accesses.push_back(0);
    res.accesses_unproved.push_back(0);
    res.address_checks.push_back(0);
    res.serial.push_back(false);
  }
  DescriptorBuilder desc(m, p);
  desc.build(o.model_name, t, ks, o);

  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es)) fail_internal("generated IR does not verify: " + es.str());
  if (o.want_ir) {
    llvm::raw_string_ostream ir(res.ir_unoptimized);
    m.print(ir, nullptr);
  }
  progress("codegen: LLVM optimization");
  optimize(m, *tm);
  use_integer_broadcasts(m, t);
  desc.finish_weights(o.model_name, weight_names, &res.weights_bytes, &res.weights_checksum);
  for (size_t i = 0; i < ks.size(); ++i)
    res.address_checks_left.push_back(res.address_checks[i] ? count_address_checks(*ks[i].fn) : 0);
  if (o.want_ir) {
    llvm::raw_string_ostream ir(res.ir);
    m.print(ir, nullptr);
  }
  if (o.want_asm) {
    auto clone = llvm::CloneModule(m);
    res.assembly = codegen(*clone, *tm, llvm::CGFT_AssemblyFile);
  }
  progress("codegen: machine code");
  res.object = codegen(m, *tm, llvm::CGFT_ObjectFile);

  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(res.object, "model.o"));
  if (!obj) fail_internal("cannot read back the emitted object");
  for (const auto &sec : (*obj)->sections())
    if (sec.isText()) res.code_bytes += (int64_t)sec.getSize();
  // Each kernel's functions (MODEL.kI and MODEL.kI.*), for the code budget.
  res.kernel_code_bytes.assign(p.kernels.size(), 0);
  const std::string prefix = o.model_name + ".k";
  for (const auto &[sym, size] : llvm::object::computeSymbolSizes(**obj)) {
    auto type = sym.getType();
    auto name = sym.getName();
    if (!type || *type != llvm::object::SymbolRef::ST_Function || !name || !name->startswith(prefix)) continue;
    llvm::StringRef rest = name->drop_front(prefix.size());
    llvm::StringRef digits = rest.take_while([](char ch) { return ch >= '0' && ch <= '9'; });
    size_t i = 0;
    if (digits.empty() || digits.getAsInteger(10, i) || i >= p.kernels.size() ||
        !(rest.size() == digits.size() || rest[digits.size()] == '.'))
      continue;
    res.kernel_code_bytes[i] += (int64_t)size;
  }
  // Generated code calls nothing but the C compiler's own arithmetic helpers
  // (64-bit division and conversions on armv7, half floats without F16C)
  // and the C functions of declared custom ops (call kernels).
  std::set<std::string> declared_calls;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Call) declared_calls.insert(k.call.symbol);
  for (const auto &sym : (*obj)->symbols()) {
    auto flags = sym.getFlags();
    if (!flags || !(*flags & llvm::object::SymbolRef::SF_Undefined)) continue;
    auto name = sym.getName();
    if (!name || name->empty()) continue;
    llvm::StringRef n = *name;
    bool helper = n.startswith("__aeabi_") || n.startswith("__gnu_") || n == "__extendhfsf2" || n == "__truncsfhf2" ||
                  n == "__truncdfhf2" || n.startswith("__fix") || n.startswith("__float") || n == "__divdi3" ||
                  n == "__udivdi3" || n == "__moddi3" || n == "__umoddi3" || declared_calls.count(n.str());
    if (!helper) fail_internal("generated code for " + t.name + " calls '" + n.str() + "'");
  }
  return res;
}

}  // namespace tinyrt
