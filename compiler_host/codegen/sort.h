// sort.h — sorting and searching at an IRBuilder's position, for the
// emitters that order data at run time (codegen/sort.cpp).
#pragma once

#include <functional>

#include <llvm/IR/IRBuilder.h>

namespace tinyrt {

// Sorts the i32 elements at[0 .. n) in place by `less` (a strict weak order
// of two element values; ascending), with heap sort: O(n log n), no scratch.
// `at(i)` is the address of element i for every i32 i (the caller clamps it
// into its array: the bounds proof sees only what `at` proves).
void emit_heap_sort(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *n,
                    const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less);

// The two halves of it, for selections: make at[0 .. n) a heap whose root
// is its greatest element by `less`, and move the element at `root` down
// the heap at[0 .. end) to its place.
void emit_heapify(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *n,
                  const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less);
void emit_sift_down(llvm::IRBuilder<> &b, const std::function<llvm::Value *(llvm::Value *)> &at, llvm::Value *root,
                    llvm::Value *end, const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &less);

// The first i in [lo, hi) at which the monotone predicate `pred` (false, then
// true) holds, else hi: a binary search of ceil(log2(cap + 1)) branch-free
// steps for 0 <= hi - lo <= cap. pred(i) is asked for i in [lo, hi), or at
// lo when the range is empty (its answer then unused).
llvm::Value *emit_first_true(llvm::IRBuilder<> &b, llvm::Value *lo, llvm::Value *hi, int64_t cap,
                             const std::function<llvm::Value *(llvm::Value *)> &pred);

}  // namespace tinyrt
