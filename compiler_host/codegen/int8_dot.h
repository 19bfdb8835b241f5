// int8_dot.h — the int8 dot-product step shared by the int8 GEMM
// (gemm_emitter.cpp) and the dynamically quantized recurrent kernel
// (recurrent_emitter.cpp): per int32 lane, acc += the dot product of 4
// input bytes (the same 4 in every lane) with the lane's 4 weight bytes,
// lowered per target (Target::dot_i8): vpdpbusd (AVX-512 VNNI, uint8
// inputs), sdot (Armv8.2 dot product), smull/vmull.s8 + sadalp/vpadal on
// other NEON CPUs (weights packed as lane pairs, see pack_weights.cpp),
// on x86 without VNNI by the layer's MaddForm: vpmaddubsw + vpmaddwd by 1
// on the bytes (uint8 X; or int8 X as |x| and the weights' signs flipped
// where x < 0, vpsignb), or vpmaddwd over widened operands (each int32
// lane of the accumulator then holds a partial sum, two per output lane,
// added once after the last step: start/finish). With int16 operands
// (i16) a quad is two int16 and the same step sums their two products.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "ir/madd_form.h"
#include "target/target.h"

namespace tinyrt {

// An operand: a vector, or for DotI8::NeonPairs two halves (lo, hi) of
// 2L bytes each.
struct DotOperand {
  llvm::Value *lo, *hi = nullptr;
};

struct Int8Dot {
  llvm::IRBuilder<> &b;
  const Target &T;
  int L;          // int32 lanes per accumulator
  bool pair16;    // NeonPairs: no weight is -128, two products sum in 16 bits
  bool x_signed;  // X86Madd, widened: the input bytes are int8 (else uint8)
  MaddForm madd;  // X86Madd: the products' form (bytes: X uint8; signed bytes: X int8)
  // The quads are pairs of int16 (GemmSpec::i16), on every target: per
  // lane x0 * w0 + x1 * w1 (pmaddwd; vpdpwssd with VNNI; elsewhere 32-bit
  // products of the widened halves, summed in pairs).
  bool i16 = false;

  llvm::FixedVectorType *acc_type() const;     // <L x i32>: a start or a finished sum
  llvm::FixedVectorType *weight_type() const;  // <4L x i8>
  // DotI8::X86Madd: the accumulator is <2L x i32>, lanes 2c and 2c+1 the
  // sums of lane c's inputs 0-1 and 2-3 of every quad (vpmaddwd's pairs),
  // so that a step is one multiply-add and one add per vector.
  bool partials() const;
  // The accumulator of a start value (<L x i32>, or null for 0), and the
  // finished sum (<L x i32>) of an accumulator.
  llvm::Value *start(llvm::Value *v);
  llvm::Value *finish(llvm::Value *acc);
  // The 4 input bytes `quad` (an i32, already in the dot product's
  // signedness) laid out for dot4. NeonPairs: x0 x1 x0 x1 ... (lo) and
  // x2 x3 x2 x3 ... (hi); with `flip`, xor 0x80 is applied there instead
  // (the bytes of `quad` are then unflipped). MaddForm::SignedBytes: the
  // quad in every lane (lo) and its bytes' magnitudes (hi).
  DotOperand x_vec(llvm::Value *quad, bool flip = false);
  // Whether x_vec flips the bytes itself (NeonPairs, signed bytes: in the
  // vector register), rather than the caller in the gathered quad.
  bool flips_in_vector() const;
  // One packed weight vector of 4L bytes at the i8 pointer p.
  DotOperand load_w(llvm::Value *p);
  llvm::Value *dot4(llvm::Value *acc, const DotOperand &x, const DotOperand &w);
  // i16: acc + per lane the two products of the int16 pairs x and w.
  llvm::Value *dot_pairs16(llvm::Value *acc, llvm::Value *x, llvm::Value *w);
};

}  // namespace tinyrt
