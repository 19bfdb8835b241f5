// address_checks.cpp — see address_checks.h.
//
// Each tested access gets its own fault function (`<kernel>.fault<N>`:
// cold, never inlined, a trap), so that the optimizer can neither merge two
// tests nor hide one: a test it proves always true takes its call away, and
// the function goes with it; the calls left are counted exactly, and a trap
// under a debugger names the kernel and the access.
#include "codegen/address_checks.h"

#include <algorithm>
#include <set>
#include <string>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "ir/error.h"

namespace tinyrt {
namespace {

MemoryAccess masked(const llvm::DataLayout &dl, llvm::Instruction *at, llvm::Type *vty, llvm::Value *ptr,
                    llvm::Value *mask, bool gather) {
  auto *vt = llvm::cast<llvm::FixedVectorType>(vty);
  MemoryAccess a{at, ptr};
  a.mask = mask;
  a.lanes = vt->getNumElements();
  a.elt = dl.getTypeStoreSize(vt->getElementType());
  a.per_lane_ptrs = gather;
  return a;
}

}  // namespace

std::pair<int, int> enabled_lanes(const MemoryAccess &a) {
  auto *cm = llvm::dyn_cast<llvm::Constant>(a.mask);
  if (!cm) return {0, (int)a.lanes - 1};
  int first = (int)a.lanes, last = -1;
  for (unsigned l = 0; l < a.lanes; ++l)
    if (!cm->getAggregateElement(l)->isNullValue()) {
      first = std::min(first, (int)l);
      last = (int)l;
    }
  return {first, last};
}

std::vector<MemoryAccess> memory_accesses(llvm::Function &f) {
  const llvm::DataLayout &dl = f.getParent()->getDataLayout();
  std::vector<MemoryAccess> out;
  auto whole = [&](llvm::Instruction *at, llvm::Value *ptr, llvm::Type *t) {
    MemoryAccess a{at, ptr};
    a.bytes = dl.getTypeStoreSize(t);
    out.push_back(a);
  };
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &i : bb) {
      if (auto *l = llvm::dyn_cast<llvm::LoadInst>(&i))
        whole(&i, l->getPointerOperand(), l->getType());
      else if (auto *s = llvm::dyn_cast<llvm::StoreInst>(&i))
        whole(&i, s->getPointerOperand(), s->getValueOperand()->getType());
      else if (auto *x = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i))
        whole(&i, x->getPointerOperand(), x->getCompareOperand()->getType());
      else if (auto *r = llvm::dyn_cast<llvm::AtomicRMWInst>(&i))
        whole(&i, r->getPointerOperand(), r->getValOperand()->getType());
      else if (auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(&i)) {
        switch (ii->getIntrinsicID()) {
          case llvm::Intrinsic::masked_load:
            out.push_back(masked(dl, &i, ii->getType(), ii->getArgOperand(0), ii->getArgOperand(2), false));
            break;
          case llvm::Intrinsic::masked_gather:
            out.push_back(masked(dl, &i, ii->getType(), ii->getArgOperand(0), ii->getArgOperand(2), true));
            break;
          case llvm::Intrinsic::masked_store:
            out.push_back(
                masked(dl, &i, ii->getArgOperand(0)->getType(), ii->getArgOperand(1), ii->getArgOperand(3), false));
            break;
          case llvm::Intrinsic::masked_scatter:
            out.push_back(
                masked(dl, &i, ii->getArgOperand(0)->getType(), ii->getArgOperand(1), ii->getArgOperand(3), true));
            break;
          default:
            if (ii->mayReadOrWriteMemory() && !ii->isAssumeLikeIntrinsic())
              // Every other intrinsic the emitters use is arithmetic or a
              // hint; one that touches memory must be added here.
              switch (ii->getIntrinsicID()) {
                case llvm::Intrinsic::x86_sse2_pause:
                case llvm::Intrinsic::aarch64_hint:
                case llvm::Intrinsic::arm_hint:
                case llvm::Intrinsic::prefetch:  // a hint: never faults (x86, ARM)
                case llvm::Intrinsic::trap: break;
                default:
                  fail_internal("address checks: unhandled memory intrinsic " +
                                ii->getCalledFunction()->getName().str());
              }
        }
      }
    }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const MemoryAccess &a) {
                             llvm::Value *p = a.ptr;
                             if (a.per_lane_ptrs) {
                               // A splat or a vector GEP of one base: the base decides.
                               if (auto *g = llvm::dyn_cast<llvm::GetElementPtrInst>(p)) p = g->getPointerOperand();
                               if (p->getType()->isVectorTy()) return false;
                             }
                             return llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(p, 0));
                           }),
            out.end());
  return out;
}

std::set<llvm::GlobalVariable *> constant_arrays_of(llvm::Function &f) {
  std::set<llvm::GlobalVariable *> out;
  std::set<llvm::Constant *> seen;
  std::vector<llvm::Constant *> work;
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &i : bb)
      for (llvm::Value *op : i.operands())
        if (auto *c = llvm::dyn_cast<llvm::Constant>(op)) work.push_back(c);
  while (!work.empty()) {
    llvm::Constant *c = work.back();
    work.pop_back();
    if (!seen.insert(c).second) continue;
    if (auto *g = llvm::dyn_cast<llvm::GlobalVariable>(c)) {
      out.insert(g);
      continue;
    }
    if (llvm::isa<llvm::GlobalValue>(c)) continue;
    for (llvm::Value *op : c->operands())
      if (auto *oc = llvm::dyn_cast<llvm::Constant>(op)) work.push_back(oc);
  }
  return out;
}

ArenaRanges merged(ArenaRanges r) {
  std::sort(r.begin(), r.end());
  ArenaRanges out;
  for (auto &x : r) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

namespace {
constexpr const char *kFaultPrefix = ".fault";
}  // namespace

int insert_address_checks(llvm::Function &f, ArenaRanges allowed, const std::vector<MemoryAccess> *which) {
  llvm::Module &m = *f.getParent();
  auto &C = m.getContext();
  const llvm::DataLayout &dl = m.getDataLayout();
  std::vector<MemoryAccess> acc = which ? *which : memory_accesses(f);
  if (acc.empty()) return 0;
  allowed = merged(std::move(allowed));
  // Each range as (base address, first byte, byte count).
  llvm::IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
  llvm::Type *i64 = b.getInt64Ty();
  struct Range {
    llvm::Value *base;
    int64_t begin, bytes;
  };
  std::vector<Range> ranges;
  llvm::Value *arena = b.CreatePtrToInt(f.getArg(0), i64, "arena.addr");
  for (auto &r : allowed) ranges.push_back({arena, r.first, r.second - r.first});
  for (llvm::GlobalVariable *g : constant_arrays_of(f))
    ranges.push_back({llvm::ConstantExpr::getPtrToInt(g, i64), 0, (int64_t)dl.getTypeAllocSize(g->getValueType())});

  auto *fault_ty = llvm::FunctionType::get(b.getVoidTy(), false);
  llvm::MDNode *unlikely = llvm::MDBuilder(C).createBranchWeights(1, 1u << 20);
  // Whether `bytes` at address `addr` lie inside one of the ranges.
  auto inside = [&](llvm::Value *addr, uint64_t bytes) -> llvm::Value * {
    llvm::Value *ok = b.getFalse();
    for (const Range &r : ranges) {
      if (r.bytes < (int64_t)bytes) continue;
      // begin <= addr - base && addr - base + bytes <= begin + size, as one
      // unsigned compare.
      llvm::Value *rel = b.CreateSub(b.CreateSub(addr, r.base), b.getInt64(r.begin));
      ok = b.CreateOr(ok, b.CreateICmpULE(rel, b.getInt64(r.bytes - (int64_t)bytes)));
    }
    return ok;
  };
  int n = 0;
  for (const MemoryAccess &a : acc) {
    b.SetInsertPoint(a.at);
    llvm::Value *ok = b.getTrue();
    auto *cmask = a.lanes ? llvm::dyn_cast<llvm::Constant>(a.mask) : nullptr;
    if (!a.lanes) {
      ok = inside(b.CreatePtrToInt(a.ptr, i64), a.bytes);
    } else if (cmask && !a.per_lane_ptrs) {
      // A constant mask (the emitters' are prefixes): its first to its last
      // enabled lane.
      auto [first, last] = enabled_lanes(a);
      if (first <= last)
        ok = inside(b.CreateAdd(b.CreatePtrToInt(a.ptr, i64), b.getInt64(first * a.elt)), (last - first + 1) * a.elt);
    } else {
      // Lane by lane: a disabled lane touches nothing.
      llvm::Value *base = a.per_lane_ptrs ? nullptr : b.CreatePtrToInt(a.ptr, i64);
      for (unsigned l = 0; l < a.lanes; ++l) {
        llvm::Constant *ml = cmask ? cmask->getAggregateElement(l) : nullptr;
        if (ml && ml->isNullValue()) continue;
        llvm::Value *addr = a.per_lane_ptrs ? b.CreatePtrToInt(b.CreateExtractElement(a.ptr, (uint64_t)l), i64)
                                            : b.CreateAdd(base, b.getInt64(l * a.elt));
        llvm::Value *lane_ok = inside(addr, a.elt);
        if (!ml) lane_ok = b.CreateOr(b.CreateNot(b.CreateExtractElement(a.mask, (uint64_t)l)), lane_ok);
        ok = b.CreateAnd(ok, lane_ok);
      }
    }
    if (llvm::isa<llvm::Constant>(ok) && llvm::cast<llvm::Constant>(ok)->isOneValue()) continue;
    auto *fault = llvm::Function::Create(fault_ty, llvm::Function::InternalLinkage,
                                         f.getName() + kFaultPrefix + std::to_string(n++), m);
    fault->addFnAttr(llvm::Attribute::NoInline);
    fault->addFnAttr(llvm::Attribute::Cold);
    fault->addFnAttr(llvm::Attribute::NoReturn);
    fault->addFnAttr(llvm::Attribute::NoUnwind);
    for (const char *attr : {"target-cpu", "target-features"})
      if (f.hasFnAttribute(attr)) fault->addFnAttr(attr, f.getFnAttribute(attr).getValueAsString());
    {
      llvm::IRBuilder<> fb(llvm::BasicBlock::Create(C, "entry", fault));
      fb.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
      fb.CreateUnreachable();
    }
    llvm::Instruction *then = llvm::SplitBlockAndInsertIfThen(b.CreateNot(ok), a.at, true, unlikely);
    llvm::IRBuilder<> tb(then);
    tb.CreateCall(fault)->setDoesNotReturn();
  }
  return n;
}

int count_address_checks(const llvm::Function &f) {
  // Distinct fault functions: a test the optimizer copied (unrolling,
  // unswitching) is still one test.
  std::string prefix = f.getName().str() + kFaultPrefix;
  std::set<const llvm::Function *> left;
  for (const llvm::BasicBlock &bb : f)
    for (const llvm::Instruction &i : bb)
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
        if (const llvm::Function *callee = call->getCalledFunction())
          if (callee->getName().startswith(prefix)) left.insert(callee);
  return (int)left.size();
}

}  // namespace tinyrt
