// address_checks.h — `--check-addresses`: every memory access of a kernel
// function tested, in the generated code, against the bytes the kernel may
// touch (its tensors' arena slices and the constant arrays it refers to); an
// access outside them traps. LLVM's optimizer then deletes every test it
// proves always true, so the tests left in the object are the accesses the
// compiler could not prove; the suites run with them to check the scheduled
// emitters' own address arithmetic on every shape they see (SECURITY.md).
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>

namespace tinyrt {

// Byte ranges [begin, end) of the arena.
using ArenaRanges = std::vector<std::pair<int64_t, int64_t>>;

// One memory access of generated code: `bytes` at `ptr`, or, for the masked
// intrinsics, a lane of `elt` bytes per lane of `lanes` (at ptr + lane *
// elt, or at the lane's own pointer for a gather or scatter) where `mask`
// enables it.
struct MemoryAccess {
  llvm::Instruction *at;
  llvm::Value *ptr;
  uint64_t bytes = 0;
  llvm::Value *mask = nullptr;
  unsigned lanes = 0;
  uint64_t elt = 0;
  bool per_lane_ptrs = false;
};

// The first and last lanes a masked access may touch: the enabled lanes
// of a constant mask (first > last when none is), every lane of a mask
// that varies.
std::pair<int, int> enabled_lanes(const MemoryAccess &a);

// Every load, store, atomic and masked or gathered access of f, except
// those to its own stack (allocas: only call kernels have them).
std::vector<MemoryAccess> memory_accesses(llvm::Function &f);

// The constant arrays f refers to (through constant expressions too).
std::set<llvm::GlobalVariable *> constant_arrays_of(llvm::Function &f);

// The ranges sorted, empty ones dropped, overlapping ones joined.
ArenaRanges merged(ArenaRanges r);

// Inserts the tests into f (a kernel: `void k(i8* arena, i32, i32)`) before
// each access of `which` (all of memory_accesses(f) when null); the number
// of accesses tested.
int insert_address_checks(llvm::Function &f, ArenaRanges allowed, const std::vector<MemoryAccess> *which = nullptr);

// The tests still in f (after optimization: the ones not proved).
int count_address_checks(const llvm::Function &f);

}  // namespace tinyrt
