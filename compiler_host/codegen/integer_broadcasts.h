// integer_broadcasts.h — after LLVM's optimization, on targets with
// Target::integer_broadcasts: in the functions that widen half weights,
// every float vector splat of a loaded scalar at the full 512-bit width
// that has more than one use becomes one `vpbroadcastd` from memory.
//
// Why: the GEMM's inner loop broadcasts one input per pixel and channel
// and converts half weights (--weights fp16) with vcvtph2ps. Zen 4 runs
// `vbroadcastss zmm, m32` (what LLVM selects for a float splat of a load,
// whatever the IR's type) on a floating-point pipe that vcvtph2ps also
// needs, while `vpbroadcastd zmm, m32` takes a load port only (measured:
// 8 vbroadcastss + 8 vcvtph2ps 16 cycles, 8 vpbroadcastd + 8 vcvtph2ps
// 10.7, vcvtph2ps alone 10.6); Intel's AVX-512 cores run both as one load.
// The splat is written as inline assembly after the optimizer (and after
// the bounds proof, on the IR as emitted): the load it replaces read the
// same address at the same place, so the proof and the address checks
// hold for it.
#pragma once

#include <llvm/IR/Module.h>

#include "target/target.h"

namespace tinyrt {

// Rewrites those splats as vpbroadcastd (nothing unless
// t.integer_broadcasts); returns how many.
int use_integer_broadcasts(llvm::Module &m, const Target &t);

}  // namespace tinyrt
