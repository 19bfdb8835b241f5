// integer_broadcasts.h — after LLVM's optimization, on targets with
// Target::integer_broadcasts: in the functions that widen half weights,
// every float vector splat of a loaded scalar at the full 512-bit width
// that has more than one use becomes one `vpbroadcastd` from memory.
//
// Why: the GEMM's inner loop broadcasts one input per pixel and channel
// and converts half weights (--weights fp16) with vcvtph2ps. Zen 4 runs
// `vbroadcastss zmm, m32` (what LLVM selects for a float splat of a load,
// whatever the IR's type) on a floating-point pipe that vcvtph2ps also
// needs, while `vpbroadcastd zmm, m32` takes a load port only
// (bench/broadcast_pipes.c, TSC ticks: 8 vbroadcastss + 8 vcvtph2ps 11.2,
// 8 vpbroadcastd + 8 vcvtph2ps 8.8, the conversions alone 7.5; a 5x2 tile
// step with half weights 35.5 with vbroadcastss, 28.1 with vpbroadcastd,
// float weights 28.1 either way). Intel's AVX-512 cores run both as one
// load. Float-only functions keep LLVM's choice (rewritten too, fp32
// models did not gain: unet_small 1.04x, some of its small steps up to
// 1.2x), and so does a splat with one use, which LLVM folds into its FMA
// as an embedded broadcast.
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
