// address_proof.h — the bounds proof of generated code: after LLVM's
// optimization, every memory access of a kernel function is proved to lie
// inside the bytes that kernel may touch (the arena slices of its tensors,
// the constant arrays it refers to, its own stack arrays), by evaluating the
// access's address with scalar evolution over integer intervals: the task
// arguments range over the step's tasks, a loop's induction variable from
// its start to its value at the last iteration, a select or a merge over
// its alternatives, a loaded or converted integer over its whole type
// (so only the clamps the emitters put on data-dependent indices bound
// it). An access the proof cannot bound gets a test that traps
// (codegen/address_checks.h), so every access of every artifact is proved
// or tested, in release builds too (SECURITY.md).
#pragma once

#include <string>
#include <vector>

#include "codegen/address_checks.h"

#include <llvm/IR/IRBuilder.h>

namespace tinyrt {

struct AddressProof {
  int accesses = 0;                    // memory accesses of the function
  std::vector<MemoryAccess> unproved;  // the ones the proof could not bound
  // One line per unproved access (with want_notes): the access, its
  // address as scalar evolution sees it, and the bound found.
  std::vector<std::string> notes;
};

// Proves f's accesses (f: `void k(i8* arena, i32 task_begin, i32 task_end)`,
// run with 0 <= task_begin < task_end <= tasks) inside `arena` (byte ranges
// of the arena), the constant arrays f refers to or f's stack arrays.
AddressProof prove_addresses(llvm::Function &f, const ArenaRanges &arena, int64_t tasks, bool want_notes = false);

// Pointer p itself, through an empty inline asm ("=r,0"): a base of its own
// for scalar evolution, so that LLVM's loop strength reduction does not
// address a second stream from the arena (a GEMM's weights packed at run
// time: Winograd's, half-weight copies, a product of two activations) as
// the arena's base plus an offset, which on ARMv7 costs an add
// before every vld1 (no register offset there). The bounds proof
// sees through it.
llvm::Value *opaque_pointer(llvm::IRBuilder<> &b, llvm::Value *p);
bool is_opaque_pointer(const llvm::Value *v);

}  // namespace tinyrt
