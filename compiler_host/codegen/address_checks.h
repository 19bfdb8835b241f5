// address_checks.h — `--check-addresses`: every memory access of a kernel
// function tested, in the generated code, against the bytes the kernel may
// touch (its tensors' arena slices and the constant arrays it refers to); an
// access outside them traps. LLVM's optimizer then deletes every test it
// proves always true, so the tests left in the object are the accesses the
// compiler could not prove; the suites run with them to check the scheduled
// emitters' own address arithmetic on every shape they see (SECURITY.md).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <llvm/IR/Function.h>

namespace tinyrt {

// Byte ranges [begin, end) of the arena.
using ArenaRanges = std::vector<std::pair<int64_t, int64_t>>;

// Inserts the tests into f (a kernel: `void k(i8* arena, i32, i32)`); the
// number of accesses tested. Accesses to the function's own stack are not
// tested.
int insert_address_checks(llvm::Function &f, ArenaRanges allowed);

// The tests still in f (after optimization: the ones not proved).
int count_address_checks(const llvm::Function &f);

}  // namespace tinyrt
