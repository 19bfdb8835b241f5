// loops.h — loops and branches at an IRBuilder's position, for the
// emitters (codegen/kernel_common.cpp).
#pragma once

#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>

namespace tinyrt {

// Emits `for (i = begin; i < end; ++i) body(i)` at the builder's position.
void emit_counted_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end,
                       const std::function<void(llvm::Value *)> &body, const char *name = "loop");

using Values = std::vector<llvm::Value *>;
// for (i = begin; i < end; i += step) vals = body(i, vals) with static
// bounds (i32); returns the final values. One trip is emitted inline.
Values carried_loop(llvm::IRBuilder<> &b, int64_t begin, int64_t end, int64_t step, Values init,
                    const std::function<Values(llvm::Value *, const Values &)> &body, const char *name);
// The same over [begin, end) with run-time bounds (i32), step 1.
Values carried_loop(llvm::IRBuilder<> &b, llvm::Value *begin, llvm::Value *end, Values init,
                    const std::function<Values(llvm::Value *, const Values &)> &body, const char *name);
// for (i = begin; i < end; ++i) body(i) with static bounds, a loop LLVM
// keeps rolled (llvm.loop.unroll.disable): for bodies whose copies would
// compete for registers if unrolled and interleaved.
void rolled_loop(llvm::IRBuilder<> &b, int64_t begin, int64_t end, const std::function<void(llvm::Value *)> &body,
                 const char *name);
// if (cond) then_fn() else else_fn()
void emit_branch(llvm::IRBuilder<> &b, llvm::Value *cond, const std::function<void()> &then_fn,
                 const std::function<void()> &else_fn, const char *name);

}  // namespace tinyrt
